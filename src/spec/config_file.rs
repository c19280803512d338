//! `dbperf.toml`: named configs (postgresql.conf / my.cnf / SQLite pragma text) and named targets,
//! so a comparison of versions and configs is written down once and named on the command line.
//! Documented with examples in docs/targets.md.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::target::{self, External, Target};
use crate::dbms::{Endpoint, Transport};
use crate::error::bad_input;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(default)]
    pub config: BTreeMap<String, NamedConfig>,
    #[serde(default)]
    pub target: BTreeMap<String, TargetDecl>,
    /// Where the file was read from (relative `file =` paths are relative to it).
    #[serde(skip)]
    pub dir: PathBuf,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedConfig {
    /// sqlite, postgres, mariadb or mysql.
    pub engine: String,
    /// The config text itself...
    pub text: Option<String>,
    /// ... or a file holding it.
    pub file: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetDecl {
    pub engine: String,
    /// innodb (default) or rocksdb, for mariadb and mysql.
    pub storage: Option<String>,
    /// Binaries: a PostgreSQL bin directory or a MySQL/MariaDB basedir (default: installed ones).
    pub bin: Option<PathBuf>,
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
}

pub const DEFAULT_PATH: &str = "dbperf.toml";

/// Reads the config file: an explicit path must exist; the default `./dbperf.toml` is optional.
pub fn load(explicit: Option<&Path>) -> anyhow::Result<ConfigFile> {
    let (path, required) = match explicit {
        Some(p) => (p.to_path_buf(), true),
        None => (PathBuf::from(DEFAULT_PATH), false),
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(_) if !required => return Ok(ConfigFile::default()),
        Err(e) => return bad_input(format!("cannot read config file {}: {e}", path.display())),
    };
    let mut f: ConfigFile = match toml::from_str(&text) {
        Ok(f) => f,
        Err(e) => {
            let msg = e.message().to_string();
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
    f.dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    Ok(f)
}

impl ConfigFile {
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
            t.config_text = Some(self.config_text(&t.config, c)?);
        }
        Ok(t)
    }

    fn config_text(&self, name: &str, c: &NamedConfig) -> anyhow::Result<String> {
        match (&c.text, &c.file) {
            (Some(t), None) => Ok(t.clone()),
            (None, Some(f)) => {
                let p = if f.is_absolute() {
                    f.clone()
                } else {
                    self.dir.join(f)
                };
                std::fs::read_to_string(&p).or_else(|e| {
                    bad_input(format!("config '{name}': cannot read {}: {e}", p.display()))
                })
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
        if let Some(b) = &d.bin {
            inline.push('@');
            inline.push_str(&b.display().to_string());
        }
        if let Some(c) = &d.config {
            inline.push(':');
            inline.push_str(c);
        }
        let mut t = target::parse(&inline, pragmas)
            .map_err(|e| anyhow::anyhow!(crate::error::BadInput(format!("target {name}: {e}"))))?;
        t.name = name.to_string();
        if d.host.is_some() || d.socket.is_some() {
            if d.bin.is_some() {
                return bad_input(format!("target {name}: give bin (dbperf starts the server) or host/socket (it does not), not both"));
            }
            if t.engine == "sqlite" {
                return bad_input(format!(
                    "target {name}: sqlite is embedded; it has no host or socket"
                ));
            }
            let transport = match (&d.host, &d.socket) {
                (Some(h), None) => Transport::Tcp {
                    host: h.clone(),
                    port: d
                        .port
                        .unwrap_or(if t.engine == "postgres" { 5432 } else { 3306 }),
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
            let default_user = if t.engine == "postgres" {
                "postgres"
            } else {
                "root"
            };
            t.external = Some(External {
                endpoint: Endpoint {
                    transport,
                    user: d.user.clone().unwrap_or_else(|| default_user.into()),
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
    }
}
