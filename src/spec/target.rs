//! Inline target syntax: `ENGINE[+STORAGE][@PATH][:CONFIG]`, e.g. `sqlite`, `sqlite:wal-full`.

use std::path::PathBuf;

use crate::error::bad_input;

#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// How reports and result directories name it: `<engine>[+storage].<config>`.
    pub name: String,
    pub engine: String,
    pub storage: Option<String>,
    pub path: Option<PathBuf>,
    /// Named config (for SQLite: a built-in pragma set).
    pub config: String,
    /// Extra settings layered over the config (SQLite: `--pragma k=v`).
    pub settings: Vec<(String, String)>,
}

const ENGINES: &[&str] = &["sqlite"];

pub fn parse(s: &str, settings: &[(String, String)]) -> anyhow::Result<Target> {
    let (rest, config) = match s.split_once(':') {
        Some((r, c)) if !c.is_empty() => (r, Some(c.to_string())),
        Some(_) => return bad_input(format!("target '{s}' has an empty config name after ':'")),
        None => (s, None),
    };
    let (rest, path) = match rest.split_once('@') {
        Some((r, p)) if !p.is_empty() => (r, Some(PathBuf::from(p))),
        Some(_) => return bad_input(format!("target '{s}' has an empty path after '@'")),
        None => (rest, None),
    };
    let (engine, storage) = match rest.split_once('+') {
        Some((e, st)) => (e.to_string(), Some(st.to_string())),
        None => (rest.to_string(), None),
    };
    if !ENGINES.contains(&engine.as_str()) {
        return bad_input(format!(
            "unknown target engine '{engine}' in '{s}'; this build runs: {}",
            ENGINES.join(", ")
        ));
    }
    if engine == "sqlite" {
        if storage.is_some() {
            return bad_input(format!(
                "target '{s}': sqlite has no storage engines (drop '+...')"
            ));
        }
        if path.is_some() {
            return bad_input(format!(
                "target '{s}': sqlite is embedded (bundled {}), it takes no binary path",
                rusqlite::version()
            ));
        }
    }
    if let Some(c) = &config {
        if !c
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || "-_.".contains(ch))
        {
            return bad_input(format!(
                "config name '{c}' may only use letters, digits, '-', '_' and '.'"
            ));
        }
    }
    let config = config.unwrap_or_else(|| crate::dbms::sqlite::DEFAULT_CONFIG.to_string());
    let mut name = engine.clone();
    if let Some(st) = &storage {
        name.push('+');
        name.push_str(st);
    }
    name.push('.');
    name.push_str(&config);
    if !settings.is_empty() {
        name.push_str("+custom");
    }
    Ok(Target {
        name,
        engine,
        storage,
        path,
        config,
        settings: settings.to_vec(),
    })
}

/// Parses `KEY=VALUE`.
pub fn parse_setting(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!("expected KEY=VALUE, got '{s}'")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_configured_sqlite() {
        let t = parse("sqlite", &[]).unwrap();
        assert_eq!(t.name, "sqlite.wal-normal");
        let t = parse("sqlite:delete-full", &[]).unwrap();
        assert_eq!(
            (t.name.as_str(), t.config.as_str()),
            ("sqlite.delete-full", "delete-full")
        );
        let t = parse("sqlite", &[("cache_size".into(), "-1000".into())]).unwrap();
        assert_eq!(t.name, "sqlite.wal-normal+custom");
    }

    #[test]
    fn bad_targets_are_bad_input() {
        for s in [
            "oracle",
            "sqlite:",
            "sqlite@/x",
            "sqlite+rocksdb",
            "sqlite:a/b",
        ] {
            let e = parse(s, &[]).unwrap_err();
            assert!(crate::error::is_bad_input(&e), "{s}: {e}");
        }
    }

    #[test]
    fn settings_need_an_equals_sign() {
        assert_eq!(parse_setting("a=1").unwrap(), ("a".into(), "1".into()));
        assert!(parse_setting("a").is_err());
        assert!(parse_setting("=1").is_err());
    }
}
