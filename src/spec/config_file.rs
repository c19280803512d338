//! `dbperf.toml`: named configs (postgresql.conf / my.cnf / SQLite pragma text) and named targets,
//! so a comparison of versions and configs is written down once and named on the command line.
//! Documented with examples in docs/targets.md.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::target::{self, External, Target};
use crate::dbms::{Endpoint, Transport};
use crate::engines::Engine;
use crate::error::bad_input;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(default)]
    pub config: BTreeMap<String, NamedConfig>,
    #[serde(default)]
    pub target: BTreeMap<String, TargetDecl>,
    #[serde(default)]
    pub campaign: BTreeMap<String, super::campaign::CampaignDecl>,
    /// Where the file was read from (relative `file =` paths are relative to it).
    #[serde(skip)]
    pub dir: PathBuf,
    /// The file read; None when there was none (no ./dbperf.toml and no --config-file).
    #[serde(skip)]
    pub read_from: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedConfig {
    /// sqlite, postgres, mariadb or mysql.
    pub engine: Engine,
    /// The config text itself...
    pub text: Option<String>,
    /// ... or a file holding it.
    pub file: Option<PathBuf>,
    /// PostgreSQL: options for initdb (e.g. `["--data-checksums"]`), part of the config so
    /// versions compared with it are initialised alike.
    pub initdb: Option<Vec<String>>,
    /// A config this one adds to: a built-in one (`default`, a published one such as `cx9a2`,
    /// a SQLite config such as `wal-normal`) or another `[config.*]` of this file (`base` is
    /// another name for it). Its text comes first, so this
    /// config's settings win; a config that differs from the default by one setting is written
    /// as that setting.
    #[serde(alias = "base")]
    pub extends: Option<String>,
}

/// Configs that extend each other: deeper than this is a mistake, not a design.
const MAX_EXTENDS: usize = 8;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetDecl {
    pub engine: String,
    /// innodb (default) or rocksdb, for mariadb and mysql.
    pub storage: Option<String>,
    /// Binaries: a PostgreSQL bin directory or a MySQL/MariaDB basedir (default: installed ones).
    pub bin: Option<PathBuf>,
    /// ... or a version from dbperf's build cache (`dbperf fetch`, docs/fetch.md): "16.4".
    pub version: Option<String>,
    /// A config name from [config.*] or a built-in one.
    pub config: Option<String>,
    /// External mode: a server dbperf does not start. Host (TCP) or socket.
    pub host: Option<String>,
    pub port: Option<u16>,
    pub socket: Option<PathBuf>,
    pub user: Option<String>,
    pub database: Option<String>,
    /// Name of the environment variable holding the password (never the password itself).
    pub password_env: Option<String>,
    /// A memory cap on the server dbperf starts for it: "512M" (`--server-memory`).
    pub server_memory: Option<String>,
}

pub const DEFAULT_PATH: &str = "dbperf.toml";

/// The most of dbperf.toml, or of a config file it names, dbperf reads (the published configs
/// are a few KiB). Both are read through `untrusted`: regular files only (a FIFO would hang the
/// read, /dev/zero never end it).
pub const CONFIG_MAX: u64 = 1 << 20;

const TOML_FILE: crate::untrusted::Limit = crate::untrusted::Limit {
    max: CONFIG_MAX,
    what: "a dbperf config file",
    links: crate::untrusted::Links::Follow,
};

const SERVER_CONFIG: crate::untrusted::Limit = crate::untrusted::Limit {
    max: CONFIG_MAX,
    what: "a server config file",
    links: crate::untrusted::Links::Follow,
};

/// Whether a line of a config file named by `file =` reads as a setting: empty, a comment
/// (`#`, `;`), a `[section]`, or `name` / `name = value` with a plain name. A file with any
/// other line is not a config (`/etc/shadow`, a key file) and is refused by line number, its
/// content never quoted: dbperf may run as root, and an error sentence is no way to read a
/// file.
fn setting_line(line: &str) -> bool {
    // A NUL or another control character (a tab aside) is in no config: /proc/self/environ is
    // one line of NUL-separated NAME=value pairs.
    if line
        .chars()
        .any(|c| c.is_control() && c != '\t' && c != '\r')
    {
        return false;
    }
    let l = line.trim();
    let name = |n: &str| {
        let n = n.trim();
        !n.is_empty()
            && n.len() <= 128
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
    };
    if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
        return true;
    }
    if let Some(section) = l.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        return name(section);
    }
    match l.split_once('=') {
        Some((k, _)) => name(k),
        None => name(l),
    }
}

/// A TOML error's message without the values it quotes in double quotes (serde's "invalid
/// type: string \"...\""): the file may not be a config at all.
fn without_quoted_values(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut inside = false;
    for c in msg.chars() {
        if c == '"' {
            if !inside {
                out.push_str("\"...\"");
            }
            inside = !inside;
        } else if !inside && c != '\n' {
            out.push(c);
        } else if c == '\n' {
            out.push(' ');
        }
    }
    out
}

/// The text of a built-in config for the target's engine (and storage engine: MyRocks' default
/// differs from InnoDB's), as a `[config.*]` text would hold it.
fn builtin_text(t: &Target, name: &str) -> Option<String> {
    use crate::server::{configs, ServerEngine};
    match ServerEngine::of(t.engine) {
        Some(kind) => configs::builtin(kind, t.rocksdb(), name),
        None => {
            let c = embedded_configs(t.engine).iter().find(|c| c.name == name)?;
            Some(
                c.pragmas
                    .iter()
                    .map(|(k, v)| format!("{k} = {v}\n"))
                    .collect(),
            )
        }
    }
}

/// The built-in configs of an embedded engine (the null target's are scripts, not configs).
fn embedded_configs(engine: Engine) -> &'static [crate::dbms::sqlite::Config] {
    match engine {
        Engine::Sqlite => crate::dbms::sqlite::CONFIGS,
        Engine::Postgres | Engine::MariaDb | Engine::MySql | Engine::Null => &[],
    }
}

/// The built-in configs a target of `t`'s engine (and storage engine) can name.
fn builtin_names(t: &Target) -> Vec<&'static str> {
    match crate::server::ServerEngine::of(t.engine) {
        Some(kind) => crate::server::configs::builtin_names(kind, t.rocksdb()),
        None => embedded_configs(t.engine).iter().map(|c| c.name).collect(),
    }
}

/// Whether `name` is a built-in published config of `t`'s engine (`cx9a2`): its text depends
/// on the server's version, so it is written when the server is planned, not here.
fn is_published(t: &Target, name: &str) -> bool {
    crate::server::ServerEngine::of(t.engine)
        .is_some_and(|k| crate::server::configs::published(k, t.rocksdb(), name).is_some())
}

/// A config with whatever it extends: its text, its initdb options, and the published config
/// it starts from, if any (written before the text when the server is planned).
struct Extended {
    text: String,
    initdb: Option<Vec<String>>,
    published_base: Option<String>,
}

/// The initdb options a config may give, by their full long name (`--name` or `--name=value`,
/// one argument each), and `-k`. An allowlist, not a list of what is refused: initdb takes
/// abbreviated long options (`--auth-h`) and clustered short ones (`-kAtrust`), and what dbperf
/// sets itself (data directory, superuser, authentication, encoding, group access) must not be
/// overridden however it is spelt.
const INITDB_ALLOWED: &[&str] = &[
    "--data-checksums",
    "--no-data-checksums",
    "--wal-segsize",
    // WAL on another device (docs/targets.md): a place the operator chose.
    "--waldir",
    "--text-search-config",
    "--locale",
    "--lc-collate",
    "--lc-ctype",
    "--lc-messages",
    "--lc-monetary",
    "--lc-numeric",
    "--lc-time",
    "--locale-provider",
    "--icu-locale",
    "--icu-rules",
    "--builtin-locale",
    "--no-sync",
    "--no-instructions",
    "--sync-method",
    "--set",
];

fn check_initdb(config: &str, engine: Engine, opts: &[String]) -> anyhow::Result<()> {
    let Some(server) =
        crate::server::ServerEngine::of(engine).filter(|s| s.flavor.takes_init_options())
    else {
        return bad_input(format!(
            "config '{config}': initdb options are for postgres configs, this one is for {engine}"
        ));
    };
    for o in opts {
        let (flag, value) = match o.split_once('=') {
            Some((f, v)) => (f, Some(v)),
            None => (o.as_str(), None),
        };
        let allowed = o == "-k" || INITDB_ALLOWED.contains(&flag);
        if !allowed {
            return bad_input(format!(
                "config '{config}': initdb option {} is not one dbperf passes on: give the full \
                 name of one of -k, {} (as \"--name\" or \"--name=value\"); dbperf sets the data \
                 directory, user, authentication and encoding itself",
                crate::untrusted::shown(o),
                INITDB_ALLOWED.join(", ")
            ));
        }
        // --set name=value writes a setting: the same settings are dbperf's as in a config.
        if let (true, Some(v)) = (flag == "--set", value) {
            let setting = v.replacen('=', " = ", 1);
            if let Some(name) = crate::server::configs::owned_setting(server, &setting) {
                return bad_input(format!(
                    "config '{config}': initdb --set {name} is not allowed: a managed server's \
                     addresses, port, socket and logins are dbperf's own"
                ));
            }
        }
    }
    Ok(())
}

/// Reads the config file: an explicit path must exist; the default `./dbperf.toml` is optional.
pub fn load(explicit: Option<&Path>) -> anyhow::Result<ConfigFile> {
    let (path, required) = match explicit {
        Some(p) => (p.to_path_buf(), true),
        None => (PathBuf::from(DEFAULT_PATH), false),
    };
    if !required && std::fs::symlink_metadata(&path).is_err() {
        return Ok(ConfigFile::default());
    }
    let text = crate::untrusted::read_text(&path, TOML_FILE)?;
    let mut f: ConfigFile = match toml::from_str(&text) {
        Ok(f) => f,
        Err(e) => {
            let msg = without_quoted_values(e.message());
            let line = e
                .span()
                .map(|s| format!(" (line {})", text[..s.start].matches('\n').count() + 1))
                .unwrap_or_default();
            return bad_input(format!(
                "{} is not a valid dbperf config file{line}: {msg}",
                path.display()
            ));
        }
    };
    for (name, c) in &f.campaign {
        c.check_keys(name).map_err(|e| {
            crate::error::BadInput(format!(
                "{} is not a valid dbperf config file: {e}",
                path.display()
            ))
        })?;
    }
    f.dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    f.read_from = Some(path);
    Ok(f)
}

impl ConfigFile {
    /// A `[campaign.<name>]`, resolved; the sentence lists the declared ones when it is unknown.
    pub fn campaign(&self, name: &str) -> anyhow::Result<super::campaign::Campaign> {
        match self.campaign.get(name) {
            Some(c) => c.resolve(name),
            // A job started in another directory (a Slurm task) finds no dbperf.toml: say so.
            None if self.read_from.is_none() => bad_input(format!(
                "no campaign {name}: there is no {DEFAULT_PATH} in {} (the working directory) \
                 and no --config-file was given; declare it as [campaign.{name}] there \
                 (docs/campaigns.md)",
                std::env::current_dir()
                    .map(|d| d.display().to_string())
                    .unwrap_or_else(|_| "the working directory".into())
            )),
            None if self.campaign.is_empty() => bad_input(format!(
                "no campaign {name}: declare it as [campaign.{name}] in dbperf.toml (docs/campaigns.md)"
            )),
            None => bad_input(format!(
                "no campaign {name} in dbperf.toml; it declares {}",
                self.campaign.keys().cloned().collect::<Vec<_>>().join(", ")
            )),
        }
    }

    /// Resolves a `--target` argument: a name declared in the file, else the inline syntax.
    pub fn resolve(&self, spec: &str, pragmas: &[(String, String)]) -> anyhow::Result<Target> {
        let mut t = match self.target.get(spec) {
            Some(d) => self.declared(spec, d, pragmas)?,
            None => target::parse(spec, pragmas)?,
        };
        if let Some(c) = self.config.get(&t.config) {
            if c.engine != t.engine {
                return bad_input(format!(
                    "config '{}' is for {}, but target {} is {}",
                    t.config, c.engine, t.name, t.engine
                ));
            }
            let e = self.extended(&t.config, c, &t, &mut Vec::new())?;
            t.config_text = Some(e.text);
            t.config_base = e.published_base;
            if let Some(opts) = e.initdb {
                check_initdb(&t.config, c.engine, &opts)?;
                t.initdb = Some(opts);
            }
        }
        Ok(t)
    }

    /// A config's text after the text of whatever it extends, and its initdb options (its own,
    /// else the nearest extended config's). `seen`: the configs on the way here.
    fn extended(
        &self,
        name: &str,
        c: &NamedConfig,
        t: &Target,
        seen: &mut Vec<String>,
    ) -> anyhow::Result<Extended> {
        let Some(base) = &c.extends else {
            return Ok(Extended {
                text: self.config_text(name, c)?,
                initdb: c.initdb.clone(),
                published_base: None,
            });
        };
        // Extending, a config may add nothing but its initdb options.
        let own = match (&c.text, &c.file) {
            (None, None) => String::new(),
            _ => self.config_text(name, c)?,
        };
        seen.push(name.to_string());
        if seen.contains(base) {
            return bad_input(format!(
                "config '{name}' extends '{base}', which extends it in turn ({} -> {base})",
                seen.join(" -> ")
            ));
        }
        if seen.len() > MAX_EXTENDS {
            return bad_input(format!(
                "config '{name}': more than {MAX_EXTENDS} configs extend one another ({})",
                seen.join(" -> ")
            ));
        }
        let under = match self.config.get(base) {
            Some(b) if b.engine != c.engine => {
                return bad_input(format!(
                    "config '{name}' is for {} but extends '{base}', which is for {}",
                    c.engine, b.engine
                ))
            }
            Some(b) => self.extended(base, b, t, seen)?,
            None => match builtin_text(t, base) {
                Some(text) => Extended {
                    text,
                    initdb: None,
                    published_base: None,
                },
                None if is_published(t, base) => Extended {
                    text: String::new(),
                    initdb: None,
                    published_base: Some(base.clone()),
                },
                None => {
                    return bad_input(format!(
                        "config '{name}' extends '{base}', which is neither a [config.{base}] of this file nor a built-in {} config ({})",
                        c.engine,
                        builtin_names(t).join(", ")
                    ))
                }
            },
        };
        let mut text = under.text;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!("# {name}\n"));
        text.push_str(&own);
        Ok(Extended {
            text,
            initdb: c.initdb.clone().or(under.initdb),
            published_base: under.published_base,
        })
    }

    fn config_text(&self, name: &str, c: &NamedConfig) -> anyhow::Result<String> {
        match (&c.text, &c.file) {
            (Some(t), None) if t.chars().any(|c| c.is_control() && !"\t\n\r".contains(c)) => {
                bad_input(format!(
                    "config '{name}': its text holds a control character, which no server \
                     setting has"
                ))
            }
            (Some(t), None) => Ok(t.clone()),
            (None, Some(f)) => {
                let p = if f.is_absolute() {
                    f.clone()
                } else {
                    self.dir.join(f)
                };
                let text = crate::untrusted::read_text(&p, SERVER_CONFIG)
                    .map_err(|e| crate::error::BadInput(format!("config '{name}': {e}")))?;
                match text.lines().position(|l| !setting_line(l)) {
                    None => Ok(text),
                    Some(i) => bad_input(format!(
                        "config '{name}': line {} of {} is not a setting (name = value), so the \
                         file is not a server config; nothing of it is used or shown",
                        i + 1,
                        p.display()
                    )),
                }
            }
            _ => bad_input(format!(
                "config '{name}' needs exactly one of text = \"...\" or file = \"...\""
            )),
        }
    }

    fn declared(
        &self,
        name: &str,
        d: &TargetDecl,
        pragmas: &[(String, String)],
    ) -> anyhow::Result<Target> {
        // Target names become result directory names.
        if name.is_empty()
            || name.starts_with('.')
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._+@-".contains(c))
        {
            return bad_input(format!(
                "target name '{name}' may only use letters, digits and . _ + @ - (and not start with '.')"
            ));
        }
        // Build through the inline parser so both ways check the same things.
        let mut inline = d.engine.clone();
        if let Some(st) = &d.storage {
            inline.push('+');
            inline.push_str(st);
        }
        match (&d.bin, &d.version) {
            (Some(_), Some(_)) => {
                return bad_input(format!(
                    "target {name}: give bin (a directory) or version (a cached build), not both"
                ))
            }
            (Some(b), None) => {
                inline.push('@');
                inline.push_str(&b.display().to_string());
            }
            (None, Some(v)) if target::is_version(v) => {
                inline.push('@');
                inline.push_str(v);
            }
            (None, Some(v)) => {
                return bad_input(format!(
                    "target {name}: version \"{v}\" is not a version like \"16.4\", \"13\" or \"17-debian\""
                ))
            }
            (None, None) => {}
        }
        if let Some(c) = &d.config {
            inline.push(':');
            inline.push_str(c);
        }
        let mut t = target::parse(&inline, pragmas)
            .map_err(|e| anyhow::anyhow!(crate::error::BadInput(format!("target {name}: {e}"))))?;
        t.name = name.to_string();
        if d.host.is_some() || d.socket.is_some() {
            if d.bin.is_some() || d.version.is_some() {
                return bad_input(format!("target {name}: give bin (dbperf starts the server) or host/socket (it does not), not both"));
            }
            let Some(server) = t.engine.server() else {
                return bad_input(format!(
                    "target {name}: {} is embedded; it has no host or socket",
                    t.engine
                ));
            };
            let transport = match (&d.host, &d.socket) {
                (Some(h), None) => Transport::Tcp {
                    host: h.clone(),
                    port: d.port.unwrap_or(server.default_port),
                },
                (None, Some(s)) => Transport::Socket { path: s.clone() },
                _ => return bad_input(format!("target {name}: give host or socket, not both")),
            };
            let password = match &d.password_env {
                Some(var) => match std::env::var(var) {
                    Ok(p) => Some(p),
                    Err(_) => {
                        return bad_input(format!(
                            "target {name}: environment variable {var} (password_env) is not set"
                        ))
                    }
                },
                None => None,
            };
            t.external = Some(External {
                endpoint: Endpoint {
                    transport,
                    user: d.user.clone().unwrap_or_else(|| server.default_user.into()),
                    password,
                    database: d
                        .database
                        .clone()
                        .unwrap_or_else(|| crate::server::DATABASE.into()),
                },
            });
        } else if d.port.is_some()
            || d.user.is_some()
            || d.database.is_some()
            || d.password_env.is_some()
        {
            return bad_input(format!(
                "target {name}: port, user, database and password_env are for external servers (with host or socket)"
            ));
        }
        if let Some(v) = &d.server_memory {
            let bytes = super::parse_server_memory(v)
                .or_else(|e| bad_input(format!("target {name}: server_memory: {e}")))?;
            target::cap_memory(&mut t, bytes, &format!("target {name}: server_memory"))?;
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> ConfigFile {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("dbperf.toml");
        std::fs::write(&p, text).unwrap();
        load(Some(&p)).unwrap()
    }

    #[test]
    fn named_targets_and_configs() {
        let f = file(
            r#"
[config.cx1]
engine = "postgres"
text = "shared_buffers = 1GB\n"

[target."pg15.cx1"]
engine = "postgres"
bin = "/usr/lib/postgresql/15/bin"
config = "cx1"

[target.pg164]
engine = "postgres"
version = "16.4"

[target.ext]
engine = "mariadb"
host = "127.0.0.1"
port = 3307
user = "bench"
"#,
        );
        let t = f.resolve("pg15.cx1", &[]).unwrap();
        assert_eq!(t.name, "pg15.cx1");
        assert_eq!(t.config_text.as_deref(), Some("shared_buffers = 1GB\n"));
        assert_eq!(
            t.path.as_deref(),
            Some(Path::new("/usr/lib/postgresql/15/bin"))
        );
        let v = f.resolve("pg164", &[]).unwrap();
        assert_eq!(
            (v.version.as_deref(), v.path.as_deref()),
            (Some("16.4"), None)
        );
        let e = f.resolve("ext", &[]).unwrap();
        let ep = &e.external.unwrap().endpoint;
        assert_eq!(
            ep.transport,
            Transport::Tcp {
                host: "127.0.0.1".into(),
                port: 3307
            }
        );
        assert_eq!((ep.user.as_str(), ep.database.as_str()), ("bench", "ib"));
        // Inline targets can use the file's configs too; the engine must match.
        assert!(f
            .resolve("postgres:cx1", &[])
            .unwrap()
            .config_text
            .is_some());
        let err = f.resolve("mariadb:cx1", &[]).unwrap_err().to_string();
        assert!(err.contains("is for postgres"), "{err}");
    }

    #[test]
    fn a_config_extends_a_built_in_or_declared_one() {
        let f = file(
            r#"
[config.delay]
engine = "postgres"
extends = "default"
text = "commit_delay = 10000\n"
initdb = ["--data-checksums"]

[config.delay2]
engine = "postgres"
extends = "delay"
text = "commit_siblings = 0"

[config.small]
engine = "mariadb"
extends = "default"
text = "innodb_buffer_pool_size = 8M\n"

[config.mmap]
engine = "sqlite"
extends = "wal-normal"
text = "mmap_size = 1073741824\n"
"#,
        );
        let t = f.resolve("postgres:delay2", &[]).unwrap();
        let text = t.config_text.unwrap();
        assert!(
            text.starts_with("shared_buffers = 512MB\n")
                && text.ends_with("# delay\ncommit_delay = 10000\n# delay2\ncommit_siblings = 0"),
            "{text}"
        );
        assert_eq!(
            t.initdb,
            Some(vec!["--data-checksums".to_string()]),
            "inherited"
        );
        // Extending, a config may be initdb options alone.
        let f2 = file("[config.ck]\nengine = \"postgres\"\nextends = \"default\"\ninitdb = [\"--no-data-checksums\"]\n");
        let t = f2.resolve("postgres:ck", &[]).unwrap();
        assert!(t.config_text.unwrap().ends_with("autovacuum = on\n# ck\n"));
        assert_eq!(t.initdb, Some(vec!["--no-data-checksums".to_string()]));
        // MyRocks' default is not InnoDB's: the storage engine picks the built-in text.
        let inno = f
            .resolve("mariadb:small", &[])
            .unwrap()
            .config_text
            .unwrap();
        let rocks = f
            .resolve("mariadb+rocksdb:small", &[])
            .unwrap()
            .config_text
            .unwrap();
        assert!(inno.starts_with("innodb_buffer_pool_size = 1G\n"), "{inno}");
        assert!(
            rocks.starts_with("rocksdb_block_cache_size = 1G\n"),
            "{rocks}"
        );
        assert!(inno.ends_with("innodb_buffer_pool_size = 8M\n"), "{inno}");
        let s = f.resolve("sqlite:mmap", &[]).unwrap().config_text.unwrap();
        assert!(
            s.starts_with("journal_mode = wal\nsynchronous = normal\n")
                && s.ends_with("mmap_size = 1073741824\n"),
            "{s}"
        );
    }

    #[test]
    fn a_config_builds_on_a_published_one_written_when_the_server_is_known() {
        let f = file(
            r#"
[config.cx9a2_wal]
engine = "postgres"
base = "cx9a2"
text = "wal_compression = lz4\n"

[config.more]
engine = "postgres"
extends = "cx9a2_wal"
initdb = ["--data-checksums"]

[config.rocks]
engine = "mariadb"
extends = "cza1"
text = "rocksdb_block_size = 16384\n"
"#,
        );
        let t = f.resolve("postgres@16:more", &[]).unwrap();
        // The published text depends on the server's version: named, not copied.
        assert_eq!(t.config_base.as_deref(), Some("cx9a2"));
        assert_eq!(
            t.config_text.as_deref(),
            Some("# cx9a2_wal\nwal_compression = lz4\n# more\n")
        );
        assert_eq!(t.initdb, Some(vec!["--data-checksums".to_string()]));
        let r = f.resolve("mariadb+rocksdb:rocks", &[]).unwrap();
        assert_eq!(r.config_base.as_deref(), Some("cza1"));
        // MyRocks' published config is not InnoDB's: the list says which ones there are.
        let e = f.resolve("mariadb:rocks", &[]).unwrap_err();
        assert!(crate::error::is_bad_input(&e), "{e}");
        assert!(
            e.to_string()
                .contains("built-in mariadb config (default, binlog, cz11a, cz10a)"),
            "{e}"
        );
        // A config of the file that extends the built-in default is still copied whole.
        let d = file("[config.d]\nengine = \"postgres\"\nextends = \"default\"\n");
        assert_eq!(d.resolve("postgres:d", &[]).unwrap().config_base, None);
    }

    #[test]
    fn extends_mistakes_are_one_sentence() {
        for (toml, want) in [
            (
                "[config.a]\nengine = \"postgres\"\nextends = \"b\"\ntext = \"\"\n[config.b]\nengine = \"postgres\"\nextends = \"a\"\ntext = \"\"\n",
                "extends it in turn (a -> b -> a)",
            ),
            (
                "[config.a]\nengine = \"postgres\"\nextends = \"a\"\ntext = \"\"\n",
                "extends it in turn",
            ),
            (
                "[config.a]\nengine = \"postgres\"\nextends = \"b\"\ntext = \"\"\n[config.b]\nengine = \"mariadb\"\ntext = \"\"\n",
                "is for postgres but extends 'b', which is for mariadb",
            ),
            (
                "[config.a]\nengine = \"postgres\"\nextends = \"fast\"\ntext = \"\"\n",
                "neither a [config.fast] of this file nor a built-in postgres config (default, cx9a2, cx10a, cx10b)",
            ),
        ] {
            let f = file(toml);
            let e = f.resolve("postgres:a", &[]).unwrap_err();
            assert!(crate::error::is_bad_input(&e), "{e}");
            assert!(e.to_string().contains(want), "{e}");
        }
    }

    #[test]
    fn mistakes_are_one_sentence() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.toml");
        std::fs::write(&p, "[target.a]\nengine = \"postgres\"\nhots = \"x\"\n").unwrap();
        let e = load(Some(&p)).unwrap_err();
        assert!(
            crate::error::is_bad_input(&e) && e.to_string().contains("line 3"),
            "{e}"
        );
        assert!(crate::error::is_bad_input(
            &load(Some(&d.path().join("none.toml"))).unwrap_err()
        ));
        let f = file("[target.\"../x\"]\nengine = \"sqlite\"\n");
        assert!(f
            .resolve("../x", &[])
            .unwrap_err()
            .to_string()
            .contains("may only use"));
        let f = file("[target.a]\nengine = \"postgres\"\nhost = \"h\"\npassword_env = \"DBPERF_TEST_UNSET_VAR\"\n");
        let e = f.resolve("a", &[]).unwrap_err().to_string();
        assert!(e.contains("DBPERF_TEST_UNSET_VAR"), "{e}");
        // initdb options: postgres only, never the ones dbperf sets itself.
        let f = file(
            "[config.c]\nengine = \"postgres\"\ntext = \"\"\ninitdb = [\"--data-checksums\"]\n",
        );
        let t = f.resolve("postgres:c", &[]).unwrap();
        assert_eq!(t.initdb, Some(vec!["--data-checksums".to_string()]));
        for (toml, want) in [
            (
                "engine = \"postgres\"\ninitdb = [\"-U\", \"x\"]",
                "not one dbperf passes on",
            ),
            (
                "engine = \"postgres\"\ninitdb = [\"--auth=md5\"]",
                "not one dbperf passes on",
            ),
            // Clustered short options and abbreviated long ones, as initdb reads them.
            (
                "engine = \"postgres\"\ninitdb = [\"-kAtrust\"]",
                "not one dbperf passes on",
            ),
            (
                "engine = \"postgres\"\ninitdb = [\"--auth-h=trust\"]",
                "not one dbperf passes on",
            ),
            (
                "engine = \"postgres\"\ninitdb = [\"--set=listen_addresses=*\"]",
                "listen_addresses is not allowed",
            ),
            (
                "engine = \"mariadb\"\ninitdb = [\"--x\"]",
                "are for postgres",
            ),
        ] {
            let f = file(&format!("[config.c]\ntext = \"\"\n{toml}\n"));
            let target = if toml.contains("mariadb") {
                "mariadb:c"
            } else {
                "postgres:c"
            };
            let e = f.resolve(target, &[]).unwrap_err();
            assert!(crate::error::is_bad_input(&e), "{e}");
            assert!(e.to_string().contains(want), "{e}");
        }
    }
}
