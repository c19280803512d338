//! What a cell runs, written down when it is planned, so that `--resume` (which reads
//! dbperf.toml and the flags again) can tell that a cell's definition changed under a run and
//! refuse to mix the two in one result directory.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use super::Suite;
use crate::spec::target::Target;

/// Values longer than this are kept as their sha256: the journal stays small and a config
/// file's text is not copied into it.
const LONG: usize = 64;

/// The cell's definition: `<suite>.<parameter>` for every suite parameter (nested ones
/// flattened with dots) and `target.<field>` for the target's.
pub fn of(target: &Target, suite: &dyn Suite) -> anyhow::Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    out.insert(
        format!("{}.preset", suite.suite()),
        suite.preset().to_string(),
    );
    // Arrays stay whole, as journals written before the shared flatten have them.
    let whole = crate::json::Flatten {
        skip: &[],
        element_names: None,
    };
    crate::json::flatten(
        &suite.parameters()?,
        &whole,
        suite.suite().to_string(),
        &mut out,
    );
    let t = |k: &str| format!("target.{k}");
    out.insert(t("engine"), target.engine.name().to_string());
    out.insert(t("config"), target.config.clone());
    let optional = [
        ("storage", target.storage.clone()),
        (
            "path",
            target.path.as_ref().map(|p| p.display().to_string()),
        ),
        ("version", target.version.clone()),
        ("config_text", target.config_text.clone()),
        ("initdb", target.initdb.as_ref().map(|v| v.join(" "))),
        // Where an external server is, never its password.
        (
            "external",
            target.external.as_ref().map(|e| e.endpoint.describe()),
        ),
    ];
    for (k, v) in optional {
        if let Some(v) = v {
            out.insert(t(k), v);
        }
    }
    for (k, v) in &target.settings {
        out.insert(t(&format!("setting.{k}")), v.clone());
    }
    for v in out.values_mut() {
        if v.len() > LONG {
            let digest = Sha256::digest(v.as_bytes());
            *v = format!(
                "sha256:{}",
                digest
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>()
            );
        }
    }
    Ok(out)
}

/// What differs between two definitions of a cell, in words (the first few keys), or None.
pub fn difference(
    then: &BTreeMap<String, String>,
    now: &BTreeMap<String, String>,
) -> Option<String> {
    let absent = "(not set)".to_string();
    let mut keys: Vec<&String> = then.keys().chain(now.keys()).collect();
    keys.sort();
    keys.dedup();
    let changed: Vec<String> = keys
        .into_iter()
        .filter(|k| then.get(*k) != now.get(*k))
        .map(|k| {
            format!(
                "{k} was {}, now {}",
                then.get(k).unwrap_or(&absent),
                now.get(k).unwrap_or(&absent)
            )
        })
        .collect();
    match changed.len() {
        0 => None,
        1..=3 => Some(changed.join("; ")),
        n => Some(format!("{} and {} more", changed[..3].join("; "), n - 3)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_are_named_key_by_key() {
        let m = |kv: &[(&str, &str)]| -> BTreeMap<String, String> {
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let a = m(&[("ibench.rows_l_i0", "1000"), ("target.config", "default")]);
        assert_eq!(difference(&a, &a), None);
        let b = m(&[("ibench.rows_l_i0", "2000"), ("target.config", "default")]);
        assert_eq!(
            difference(&a, &b).unwrap(),
            "ibench.rows_l_i0 was 1000, now 2000"
        );
        let c = m(&[("ibench.rows_l_i0", "1000")]);
        assert_eq!(
            difference(&a, &c).unwrap(),
            "target.config was default, now (not set)"
        );
    }
}
