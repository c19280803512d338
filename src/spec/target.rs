//! Inline target syntax: `ENGINE[+STORAGE][@PATH|@VERSION][:CONFIG]`, e.g. `sqlite`,
//! `sqlite:wal-full`, `postgres@/opt/pg/17.11`, `postgres@16.4` (a build from `dbperf fetch`).

use std::path::PathBuf;

use crate::engines::{Engine, Family};
use crate::error::bad_input;

#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// How reports and result directories name it: `<engine>[+storage].<config>`.
    pub name: String,
    pub engine: Engine,
    pub storage: Option<String>,
    pub path: Option<PathBuf>,
    /// A version from dbperf's build cache (`postgres@16.4`, `postgres@17-debian`); resolved
    /// to `path` and `build` by `fetch::resolve_target` before anything runs.
    pub version: Option<String>,
    /// The cached build's build.json, recorded in run.json (set with `version`).
    pub build: Option<serde_json::Value>,
    /// Named config (for SQLite: a built-in pragma set).
    pub config: String,
    /// Extra settings layered over the config (SQLite: `--pragma k=v`).
    pub settings: Vec<(String, String)>,
    /// Config text from dbperf.toml; None means a built-in config of that name.
    pub config_text: Option<String>,
    /// A built-in published config (`cx9a2`) that `config_text` extends: it is written for the
    /// server's version when the server is planned, so it is named here, not copied.
    pub config_base: Option<String>,
    /// PostgreSQL: initdb options of the named config (`initdb = [...]`); None = dbperf's.
    pub initdb: Option<Vec<String>>,
    /// Set for a server dbperf does not manage.
    pub external: Option<External>,
    /// Its value of a swept server setting (`setting.innodb_page_size` = `8k`): the setting is
    /// in its config; empty without a sweep.
    pub axes: std::collections::BTreeMap<String, String>,
    /// `--server-memory`: a cap in bytes on the managed server (a memory cgroup); None:
    /// uncapped.
    pub server_memory: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct External {
    pub endpoint: crate::dbms::Endpoint,
}

impl Target {
    pub fn is_server(&self) -> bool {
        self.engine.is_server()
    }

    /// What this target asks of the embedded engine's adapter.
    pub fn embedded_config(&self) -> crate::dbms::EmbeddedConfig<'_> {
        crate::dbms::EmbeddedConfig {
            engine: self.engine,
            config_name: &self.config,
            text: self.config_text.as_deref(),
            settings: &self.settings,
        }
    }

    /// What this target asks of the managed server dbperf starts for it.
    pub fn server_wanted(&self) -> crate::server::Wanted<'_> {
        crate::server::Wanted {
            target_name: &self.name,
            engine: self.engine,
            rocksdb: self.rocksdb(),
            binaries: self.path.as_deref(),
            config_name: &self.config,
            config_text: self.config_text.as_deref(),
            config_base: self.config_base.as_deref(),
            version: self.build_version(),
            initdb: self.initdb.as_deref(),
            memory: self.server_memory,
        }
    }

    /// The exact version of a fetched build, as its build.json says.
    fn build_version(&self) -> Option<&str> {
        self.build.as_ref()?.get("version")?.as_str()
    }

    /// MyRocks: the MySQL family's second storage engine.
    pub fn rocksdb(&self) -> bool {
        self.engine.family() == Family::MySql && self.storage.as_deref() == Some("rocksdb")
    }
}

/// Caps the managed server of `t` at `bytes` (`--server-memory`, or a target's or campaign's
/// `server_memory` key, named by `by`). SQLite runs inside dbperf and an external server is not
/// dbperf's to confine: both are refused, never run uncapped.
pub fn cap_memory(t: &mut Target, bytes: u64, by: &str) -> anyhow::Result<()> {
    if !t.is_server() {
        return bad_input(format!(
            "{by} caps a server dbperf starts, and {} runs inside dbperf: bound its cache with \
             --pragma cache_size=-KIB instead (docs/io-bound.md)",
            t.name
        ));
    }
    if t.external.is_some() {
        return bad_input(format!(
            "{by} caps a server dbperf starts, and target {} is a server it does not start",
            t.name
        ));
    }
    t.server_memory = Some(bytes);
    Ok(())
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

/// `16.4`, `13`, `10.11.18`, `17-debian`: digits and dots, optionally a family after '-'.
/// Anything else after '@' is a path (write `./15` for a directory named `15`).
pub fn is_version(s: &str) -> bool {
    let (v, family) = match s.split_once('-') {
        Some((v, f)) => (v, Some(f)),
        None => (s, None),
    };
    !v.is_empty()
        && v.starts_with(|c: char| c.is_ascii_digit())
        && v.chars().all(|c| c.is_ascii_digit() || c == '.')
        && !v.ends_with('.')
        && !v.contains("..")
        && family.is_none_or(|f| !f.is_empty() && f.chars().all(|c| c.is_ascii_lowercase()))
}

pub fn parse(s: &str, settings: &[(String, String)]) -> anyhow::Result<Target> {
    let (rest, config) = match s.split_once(':') {
        Some((r, c)) if !c.is_empty() => (r, Some(c.to_string())),
        Some(_) => return bad_input(format!("target '{s}' has an empty config name after ':'")),
        None => (s, None),
    };
    let (rest, path, version) = match rest.split_once('@') {
        Some((r, v)) if is_version(v) => (r, None, Some(v.to_string())),
        Some((r, p)) if !p.is_empty() => (r, Some(PathBuf::from(p)), None),
        Some(_) => return bad_input(format!("target '{s}' has an empty path after '@'")),
        None => (rest, None, None),
    };
    let (name, storage) = match rest.split_once('+') {
        Some((e, st)) => (e, Some(st.to_string())),
        None => (rest, None),
    };
    let Some(engine) = Engine::parse(name) else {
        return bad_input(format!(
            "unknown target engine '{name}' in '{s}'; engines are: {}",
            Engine::listed_names(|_| true)
        ));
    };
    check_parts(
        s,
        engine,
        storage.as_deref(),
        path.is_some() || version.is_some(),
    )?;
    if !settings.is_empty() && !engine.entry().pragmas {
        return bad_input(format!(
            "--pragma applies to {} targets only, not '{s}'",
            Engine::listed_names(|e| e.pragmas)
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
    let config = config.unwrap_or_else(|| engine.entry().default_config.to_string());
    let mut name = engine.name().to_string();
    let default_storage = engine.entry().storages.first().copied();
    if let Some(st) = storage.as_deref().filter(|st| Some(*st) != default_storage) {
        name.push('+');
        name.push_str(st);
    }
    if let Some(p) = &path {
        name.push('@');
        name.push_str(&path_label(p));
    }
    if let Some(v) = &version {
        name.push('@');
        name.push_str(v);
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
        version,
        build: None,
        config,
        settings: settings.to_vec(),
        config_text: None,
        config_base: None,
        initdb: None,
        external: None,
        axes: Default::default(),
        server_memory: None,
    })
}

/// A server setting swept over: `--vary innodb_page_size=4k,8k,16k`, a campaign's
/// `vary = { setting = "innodb_page_size", values = ["4k", "8k", "16k"] }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vary {
    pub setting: String,
    pub values: Vec<String>,
}

/// `name=v1,v2,...`: a setting's name (letters, digits, `_`, `-`, `.`) and at least two
/// values, none twice, at most 16, each without spaces, quotes or control characters.
pub fn parse_vary(s: &str) -> Result<Vary, String> {
    let (name, values) = s.split_once('=').ok_or_else(|| {
        format!("'{s}' is not SETTING=VALUE,VALUE (e.g. innodb_page_size=4k,8k,16k)")
    })?;
    let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
    vary(name.trim(), &values).map_err(|e| format!("'{s}': {e}"))
}

/// A sweep of one setting given as a list (a campaign's `vary`): each value checked as it is,
/// so a value holding the list's comma is refused, never split into more cells.
pub fn vary(name: &str, values: &[String]) -> Result<Vary, String> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c);
    if name.is_empty() || name.len() > 64 || !name.chars().all(plain) {
        return Err(format!(
            "{} is not a setting's name",
            crate::untrusted::shown(name)
        ));
    }
    let mut out: Vec<String> = Vec::new();
    for v in values {
        let ok = !v.is_empty()
            && v.len() <= 64
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.+:/".contains(c));
        if !ok {
            return Err(format!(
                "{} is not a value dbperf puts in a config (letters, digits and _-.+:/)",
                crate::untrusted::shown(v)
            ));
        }
        if out.contains(v) {
            return Err(format!("{v} is given twice"));
        }
        out.push(v.clone());
    }
    if out.len() < 2 || out.len() > crate::spec::MAX_LEVELS {
        return Err(format!(
            "give 2 to {} values to sweep over",
            crate::spec::MAX_LEVELS
        ));
    }
    Ok(Vary {
        setting: name.to_string(),
        values: out,
    })
}

impl Target {
    /// This target with `setting = value` in its config, and that as its axis. A managed
    /// server gets the line after its config's (an install-time option such as
    /// innodb_page_size reaches the install step as any of its config's does); SQLite gets it
    /// as a pragma. A server dbperf does not manage cannot be given a setting.
    pub fn with_setting(&self, setting: &str, value: &str) -> anyhow::Result<Target> {
        if self.external.is_some() {
            return crate::error::bad_input(format!(
                "target {} is a server dbperf does not manage: a sweep of {setting} cannot set \
                 it",
                self.name
            ));
        }
        let mut t = self.clone();
        if self.is_server() {
            let line = format!("{setting} = {value}\n");
            if let Some(kind) = crate::server::ServerEngine::of(self.engine) {
                if let Some(owned) = crate::server::configs::owned_setting(kind, &line) {
                    return crate::error::bad_input(format!(
                        "a sweep cannot set {owned}: a managed server's addresses, port, \
                         socket, logins and data directory are dbperf's own"
                    ));
                }
            }
            match &mut t.config_text {
                Some(text) => {
                    if !text.ends_with('\n') && !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&line);
                }
                None => {
                    t.config_base = Some(t.config.clone());
                    t.config_text = Some(line);
                }
            }
        } else {
            t.settings.push((setting.to_string(), value.to_string()));
        }
        t.axes
            .insert(format!("setting.{setting}"), value.to_string());
        Ok(t)
    }
}

/// Whether the engine takes the storage engine and binaries the target names.
fn check_parts(
    s: &str,
    engine: Engine,
    storage: Option<&str>,
    binaries: bool,
) -> anyhow::Result<()> {
    if engine == Engine::Null && (binaries || storage.is_some()) {
        return bad_input(format!(
            "target '{s}': {engine} takes only a script after ':'"
        ));
    }
    let storages = engine.entry().storages;
    match storage {
        Some(_) if storages.is_empty() => {
            return bad_input(format!(
                "target '{s}': {engine} has no storage engines (drop '+...')"
            ))
        }
        Some(st) if !storages.contains(&st) => {
            let offered: Vec<String> = storages.iter().map(|x| format!("+{x}")).collect();
            return bad_input(format!(
                "target '{s}': storage engine '{st}' is not supported; use {}",
                offered.join(" or ")
            ));
        }
        _ => {}
    }
    if binaries && !engine.is_server() {
        return bad_input(format!(
            "target '{s}': {engine} is embedded (bundled {}), it takes no binary path",
            rusqlite::version()
        ));
    }
    Ok(())
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
    fn each_engines_default_config_is_one_it_has() {
        for e in Engine::listed().chain([Engine::Null]) {
            let t = parse(e.name(), &[]).unwrap();
            assert_eq!(t.engine, e);
            assert_eq!(t.config, e.entry().default_config);
        }
        let sqlite = Engine::Sqlite.entry().default_config;
        assert!(crate::dbms::sqlite::CONFIGS
            .iter()
            .any(|c| c.name == sqlite));
    }

    #[test]
    fn storage_engines_come_from_the_registry() {
        assert_eq!(
            parse("mariadb+innodb", &[]).unwrap().name,
            "mariadb.default"
        );
        assert_eq!(
            parse("mariadb+rocksdb", &[]).unwrap().name,
            "mariadb+rocksdb.default"
        );
        let e = parse("mysql+rocksdb", &[]).unwrap_err().to_string();
        assert!(e.contains("use +innodb"), "{e}");
        let e = parse("mariadb+aria", &[]).unwrap_err().to_string();
        assert!(e.contains("use +innodb or +rocksdb"), "{e}");
        let e = parse("postgres+zheap", &[]).unwrap_err().to_string();
        assert!(e.contains("postgres has no storage engines"), "{e}");
        let e = parse("null+x", &[]).unwrap_err().to_string();
        assert!(e.contains("null takes only a script"), "{e}");
        let e = parse("oracle", &[]).unwrap_err().to_string();
        assert!(
            e.contains("engines are: sqlite, postgres, mariadb, mysql"),
            "{e}"
        );
    }

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
        let t = parse("postgres@16.4:cx1", &[]).unwrap();
        assert_eq!(
            (t.name.as_str(), t.version.as_deref(), t.path.as_deref()),
            ("postgres@16.4.cx1", Some("16.4"), None)
        );
        assert_eq!(
            parse("mariadb+rocksdb@10.5", &[])
                .unwrap()
                .version
                .as_deref(),
            Some("10.5")
        );
        assert_eq!(
            parse("postgres@17-debian", &[]).unwrap().version.as_deref(),
            Some("17-debian")
        );
        for p in ["./15", "15/bin", "16.x", "build"] {
            let t = parse(&format!("postgres@{p}"), &[]).unwrap();
            assert!(t.version.is_none() && t.path.is_some(), "{p}");
        }
        assert!(parse("sqlite@3.45", &[]).is_err());
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
