//! What tune and undo did, for people: one line per file and value, policies folded into ranges.

use std::collections::BTreeMap;

use super::Entry;
use crate::host::sysfs;

/// Groups changes for the report: "set policy0-3 scaling_governor: schedutil -> performance".
/// Each change is (entry's `what`, from, to).
pub(super) fn summarize(changes: &[(String, String, String)], verb: &str) -> Vec<String> {
    let mut groups: BTreeMap<(String, String, String), Vec<String>> = BTreeMap::new();
    let mut order = Vec::new();
    for (what, from, to) in changes {
        let (who, file) = what.rsplit_once(' ').unwrap_or(("", what.as_str()));
        let k = (file.to_string(), from.clone(), to.clone());
        if !groups.contains_key(&k) {
            order.push(k.clone());
        }
        groups.entry(k).or_default().push(who.to_string());
    }
    order
        .into_iter()
        .map(|k| {
            let names = fold_names(&groups[&k]);
            format!(
                "{verb} {}{}: {} -> {}",
                if names.is_empty() {
                    String::new()
                } else {
                    format!("{names} ")
                },
                k.0,
                if k.1.is_empty() { "(empty)" } else { &k.1 },
                k.2
            )
        })
        .collect()
}

/// The writes of a plan as changes: (what, old value, new value).
pub(super) fn as_set(entries: &[&Entry]) -> Vec<(String, String, String)> {
    entries
        .iter()
        .map(|e| {
            (
                e.what.clone(),
                e.old.clone(),
                e.new.clone().unwrap_or_default(),
            )
        })
        .collect()
}

/// `policy0 policy1 policy2` -> `policy0-2`.
fn fold_names(names: &[String]) -> String {
    let nums: Option<Vec<u32>> = names
        .iter()
        .map(|n| n.strip_prefix("policy").and_then(|x| x.parse().ok()))
        .collect();
    match nums {
        Some(v) if v.len() > 1 => format!("policy{}", sysfs::cpu_ranges(&v)),
        _ => names.join(", "),
    }
}
