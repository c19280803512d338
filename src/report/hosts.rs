//! Whether results from several hosts may share one report. Shards of a campaign run on many
//! hosts: that is only a comparison when the machines are alike, so results whose hardware
//! differs are refused unless the user says so, and then every row names its host.

use std::collections::BTreeMap;

use serde_json::Value;

use super::target::TargetResult;
use crate::error::BadInput;

/// What makes two machines different hardware; the hostname alone does not.
const HARDWARE: &[&str] = &["cpu_model", "cpus_online", "cores", "memory_kb"];

fn hardware(host: &Value) -> BTreeMap<&'static str, String> {
    HARDWARE
        .iter()
        .map(|k| {
            let v = match host.get(*k) {
                Some(Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
                None => "(absent)".into(),
            };
            (*k, v)
        })
        .collect()
}

fn hostname(host: &Value) -> String {
    host.get("hostname")
        .and_then(|h| h.as_str())
        .filter(|h| !h.is_empty())
        .unwrap_or("unknown host")
        .to_string()
}

/// How far apart the memory of two machines of one kind may be: nominally identical nodes
/// differ by what their firmware and kernel reserve (a few MiB to a few hundred).
const MEMORY_TOLERANCE: f64 = 0.02;

fn alike(a: &BTreeMap<&str, String>, b: &BTreeMap<&str, String>) -> bool {
    HARDWARE.iter().all(|k| same_value(k, &a[*k], &b[*k]))
}

fn same_value(key: &str, a: &str, b: &str) -> bool {
    if key != "memory_kb" {
        return a == b;
    }
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) if x > 0.0 && y > 0.0 => (x - y).abs() <= MEMORY_TOLERANCE * x.max(y),
        _ => a == b,
    }
}

/// Refuses results from different hardware unless `allow`; with `allow`, each target's name
/// gets ` @<hostname>` so rows from different hosts never merge or look alike.
pub fn check(all: &mut [TargetResult], allow: bool) -> anyhow::Result<()> {
    let mut kinds: Vec<(BTreeMap<&str, String>, String)> = Vec::new();
    for t in all.iter() {
        let hw = hardware(&t.run.host);
        if !kinds.iter().any(|(k, _)| alike(k, &hw)) {
            kinds.push((hw, hostname(&t.run.host)));
        }
    }
    if kinds.len() < 2 {
        return Ok(());
    }
    if !allow {
        let (a, ha) = &kinds[0];
        let (b, hb) = &kinds[1];
        let diff: Vec<String> = HARDWARE
            .iter()
            .filter(|k| !same_value(k, &a[*k], &b[*k]))
            .map(|k| format!("{k} {} ({ha}) vs {} ({hb})", a[k], b[k]))
            .collect();
        return Err(BadInput(format!(
            "these results come from different hardware ({}), so their differences may be the machines'; pass --allow-mixed-hosts to report them together with each row labelled by host",
            diff.join(", ")
        ))
        .into());
    }
    for t in all.iter_mut() {
        let h = hostname(&t.run.host);
        t.run.target.name = format!("{} @{h}", t.run.target.name);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_within_two_percent_is_one_kind_of_machine() {
        assert!(same_value("memory_kb", "24684084", "24684088"));
        assert!(same_value("memory_kb", "32000000", "31500000"));
        assert!(!same_value("memory_kb", "32000000", "24000000"));
        assert!(!same_value("cores", "8", "9"));
        assert!(!same_value("memory_kb", "(absent)", "1000"));
    }
}
