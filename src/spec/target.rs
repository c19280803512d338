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
    /// Config text from dbperf.toml; None means a built-in config of that name.
    pub config_text: Option<String>,
    /// Set for a server dbperf does not manage.
    pub external: Option<External>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct External {
    pub endpoint: crate::dbms::Endpoint,
}

const ENGINES: &[&str] = &["sqlite", "postgres", "mariadb", "mysql"];

impl Target {
    pub fn is_server(&self) -> bool {
        self.engine != "sqlite"
    }

    pub fn rocksdb(&self) -> bool {
        self.storage.as_deref() == Some("rocksdb")
    }
}

/// A short name for a binaries path: the version-looking directory (`/usr/lib/postgresql/15/bin`
/// gives `15`, `/opt/mariadb-11.4.5` gives `mariadb-11.4.5`).
fn path_label(p: &std::path::Path) -> String {
    let mut comps: Vec<String> = p
        .components()
        .filter_map(|c| c.as_os_str().to_str().map(str::to_string))
        .filter(|c| c != "/")
        .collect();
    while matches!(
        comps.last().map(String::as_str),
        Some("bin" | "sbin" | "usr")
    ) {
        comps.pop();
    }
    comps.pop().unwrap_or_else(|| "root".into())
}

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
            "unknown target engine '{engine}' in '{s}'; engines are: {}",
            ENGINES.join(", ")
        ));
    }
    match (engine.as_str(), storage.as_deref()) {
        ("sqlite", Some(_)) => {
            return bad_input(format!(
                "target '{s}': sqlite has no storage engines (drop '+...')"
            ))
        }
        ("postgres", Some(_)) => {
            return bad_input(format!(
                "target '{s}': postgres has no storage engines (drop '+...')"
            ))
        }
        ("mariadb" | "mysql", Some(st)) if st != "innodb" && st != "rocksdb" => {
            return bad_input(format!(
                "target '{s}': storage engine '{st}' is not supported; use +innodb or +rocksdb"
            ))
        }
        _ => {}
    }
    if engine == "sqlite" && path.is_some() {
        return bad_input(format!(
            "target '{s}': sqlite is embedded (bundled {}), it takes no binary path",
            rusqlite::version()
        ));
    }
    if !settings.is_empty() && engine != "sqlite" {
        return bad_input(format!(
            "--pragma applies to sqlite targets only, not '{s}'"
        ));
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
    let config = config.unwrap_or_else(|| {
        if engine == "sqlite" {
            crate::dbms::sqlite::DEFAULT_CONFIG.to_string()
        } else {
            "default".to_string()
        }
    });
    let mut name = engine.clone();
    if let Some(st) = storage.as_deref().filter(|st| *st != "innodb") {
        name.push('+');
        name.push_str(st);
    }
    if let Some(p) = &path {
        name.push('@');
        name.push_str(&path_label(p));
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
        config_text: None,
        external: None,
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
    fn server_targets() {
        let t = parse("postgres", &[]).unwrap();
        assert_eq!((t.name.as_str(), t.is_server()), ("postgres.default", true));
        let t = parse("mariadb+rocksdb:cz1", &[]).unwrap();
        assert_eq!(
            (t.name.as_str(), t.rocksdb()),
            ("mariadb+rocksdb.cz1", true)
        );
        assert_eq!(
            parse("mariadb+innodb", &[]).unwrap().name,
            "mariadb.default"
        );
        let t = parse("postgres@/usr/lib/postgresql/15/bin", &[]).unwrap();
        assert_eq!(t.name, "postgres@15.default");
        assert_eq!(
            parse("mysql@/opt/mysql-8.0.31", &[]).unwrap().name,
            "mysql@mysql-8.0.31.default"
        );
        let e = parse("postgres", &[("a".into(), "b".into())]).unwrap_err();
        assert!(e.to_string().contains("sqlite targets only"), "{e}");
    }

    #[test]
    fn settings_need_an_equals_sign() {
        assert_eq!(parse_setting("a=1").unwrap(), ("a".into(), "1".into()));
        assert!(parse_setting("a").is_err());
        assert!(parse_setting("=1").is_err());
    }
}
