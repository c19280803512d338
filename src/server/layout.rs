//! Where a server's binaries are: Debian packages (/usr/lib/postgresql/N/bin, /usr/sbin/mariadbd)
//! or an unpacked basedir (zonky / PyPI PostgreSQL, MariaDB bintar, Oracle MySQL generic tarball).

use std::path::{Path, PathBuf};

use super::ServerEngine;
use crate::engines::{Engine, MySqlInit};
use crate::error::bad_input;

/// PostgreSQL's server binary.
const PG_SERVER: &str = "postgres"; // a program's name, not an engine's

#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub basedir: PathBuf,
    /// postgres / mariadbd / mysqld
    pub server: PathBuf,
    /// initdb / mariadb-install-db / mysqld (--initialize-insecure)
    pub init: PathBuf,
    pub plugin_dir: Option<PathBuf>,
    /// Bintar install scripts expect to run from the basedir.
    pub working_dir: Option<PathBuf>,
    /// The error-message directory of a MySQL-family basedir: Debian's binaries unpacked
    /// elsewhere (dbperf fetch) would otherwise read the installed server's errmsg.sys.
    pub lc_messages_dir: Option<PathBuf>,
}

/// Where a Debian package of a server keeps it (paths relative to the unpacked build).
#[derive(Debug, Clone, PartialEq)]
pub struct DebianLayout {
    pub basedir: String,
    pub server: String,
    /// What the server's `--version` says of the version.
    pub version_text: String,
    /// What a person should know of such a build (build.json's notes).
    pub note: Option<&'static str>,
}

fn first_existing(cands: &[PathBuf]) -> Option<PathBuf> {
    cands.iter().find(|p| p.is_file()).cloned()
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

/// Debian's newest /usr/lib/postgresql/<N>/bin.
fn debian_postgres() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join(PG_SERVER).is_file().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, b)| b)
}

fn is_mariadb(server: &Path) -> bool {
    // Only system binaries are asked (root's own, under /usr/sbin or PATH): as the caller.
    super::probe::ask(server, &["--version"], None, super::probe::DEADLINE)
        .map(|a| a.text.contains("MariaDB"))
        .unwrap_or(false)
}

pub fn find(server: ServerEngine, path: Option<&Path>, rocksdb: bool) -> anyhow::Result<Layout> {
    // Servers run in their basedir or datadir, where a relative path would point elsewhere.
    let path = path
        .map(std::path::absolute)
        .transpose()
        .map_err(|e| anyhow::anyhow!("cannot resolve the binaries path: {e}"))?;
    let path = path.as_deref();
    let layout = server.flavor.find_layout(server.engine, path)?;
    if rocksdb {
        // Debian's compiled-in plugin directory applies to Debian's binaries only.
        let dir = layout.plugin_dir.clone().unwrap_or_else(|| {
            if layout.basedir == Path::new("/usr") {
                PathBuf::from("/usr/lib/mysql/plugin")
            } else {
                layout.basedir.join("lib/plugin")
            }
        });
        if !dir.join("ha_rocksdb.so").is_file() {
            return bad_input(format!(
                "MyRocks needs {}, which does not exist (on Debian: apt-get install mariadb-plugin-rocksdb)",
                dir.join("ha_rocksdb.so").display()
            ));
        }
    }
    Ok(layout)
}

pub fn find_postgres(path: Option<&Path>) -> anyhow::Result<Layout> {
    let bin =
        match path {
            Some(p) if p.join("bin/postgres").is_file() => p.join("bin"),
            Some(p) if p.join(PG_SERVER).is_file() => p.to_path_buf(),
            Some(p) => {
                return bad_input(format!(
                    "{} holds no PostgreSQL server: expected bin/postgres or postgres there",
                    p.display()
                ))
            }
            None => match debian_postgres()
                .or_else(|| on_path(PG_SERVER).and_then(|p| p.parent().map(Path::to_path_buf)))
            {
                Some(b) => b,
                None => return bad_input(
                    "no PostgreSQL found (looked in /usr/lib/postgresql/*/bin and PATH); install \
                     postgresql or name a build with --target postgres@/path/to/bin",
                ),
            },
        };
    let init = bin.join("initdb");
    if !init.is_file() {
        return bad_input(format!("{} has postgres but no initdb", bin.display()));
    }
    Ok(Layout {
        basedir: bin.parent().unwrap_or(&bin).to_path_buf(),
        server: bin.join(PG_SERVER),
        init,
        plugin_dir: None,
        working_dir: None,
        lc_messages_dir: None,
    })
}

/// A MySQL-family server's binaries. An engine made by `mysqld --initialize` needs a server of
/// the Oracle MySQL lineage: MariaDB's has no such option, and is refused.
pub fn find_mysql(engine: Engine, path: Option<&Path>) -> anyhow::Result<Layout> {
    let what = engine.name();
    // The registry's names, not spellings of today's two engines: a new engine of the family
    // is found under its own program name.
    let programs = engine.family_server_programs();
    let initialize = match engine.mysql().map(|m| m.init) {
        Some(MySqlInit::Initialize) => true,
        Some(MySqlInit::InstallScript) | None => false,
    };
    match path {
        None => {
            let sbin: Vec<PathBuf> = programs
                .iter()
                .map(|n| Path::new("/usr/sbin").join(n))
                .collect();
            let server = first_existing(&sbin).or_else(|| programs.iter().find_map(|n| on_path(n)));
            let Some(server) = server else {
                return bad_input(format!(
                    "no {what} server found (looked in /usr/sbin and PATH); install mariadb-server or \
                     name a basedir with --target {what}@/path/to/basedir"
                ));
            };
            let maria = is_mariadb(&server);
            if initialize && maria {
                return bad_input(format!(
                    "{} is MariaDB, not {}; name a MySQL basedir with --target {what}@/path",
                    server.display(),
                    engine.entry().product
                ));
            }
            let init = if initialize {
                server.clone()
            } else {
                match first_existing(&[
                    PathBuf::from("/usr/bin/mariadb-install-db"),
                    PathBuf::from("/usr/bin/mysql_install_db"),
                ])
                .or_else(|| on_path("mariadb-install-db"))
                {
                    Some(i) => i,
                    None => return bad_input("mariadb-install-db not found next to mariadbd"),
                }
            };
            Ok(Layout {
                basedir: PathBuf::from("/usr"),
                server,
                init,
                plugin_dir: None,
                working_dir: None,
                lc_messages_dir: None,
            })
        }
        Some(p) => {
            let within: Vec<PathBuf> = programs
                .iter()
                .flat_map(|n| [p.join("bin").join(n), p.join("sbin").join(n)])
                .collect();
            let Some(server) = first_existing(&within) else {
                let expected: Vec<String> = programs.iter().map(|n| format!("bin/{n}")).collect();
                return bad_input(format!(
                    "{} holds no {what} server: expected {} or sbin/ there",
                    p.display(),
                    expected.join(" or ")
                ));
            };
            let init = if initialize {
                server.clone()
            } else {
                match first_existing(&[
                    p.join("scripts/mariadb-install-db"),
                    p.join("bin/mariadb-install-db"),
                    p.join("scripts/mysql_install_db"),
                    p.join("bin/mysql_install_db"),
                ]) {
                    Some(i) => i,
                    None => return bad_input(format!("{} has no mariadb-install-db", p.display())),
                }
            };
            let plugin_dir = first_existing(&[
                p.join("lib/plugin/ha_rocksdb.so"),
                p.join("lib/mysql/plugin/ha_rocksdb.so"),
            ])
            .and_then(|f| f.parent().map(Path::to_path_buf))
            .or_else(|| {
                [p.join("lib/plugin"), p.join("lib/mysql/plugin")]
                    .into_iter()
                    .find(|d| d.is_dir())
            });
            let lc_messages_dir = ["share/mariadb", "share/mysql", "share"]
                .iter()
                .map(|d| p.join(d))
                .find(|d| d.join("english/errmsg.sys").is_file());
            Ok(Layout {
                basedir: p.to_path_buf(),
                server,
                init,
                plugin_dir,
                working_dir: Some(p.to_path_buf()),
                lc_messages_dir,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(engine: Engine, path: Option<&Path>, rocksdb: bool) -> anyhow::Result<Layout> {
        super::find(ServerEngine::of(engine).unwrap(), path, rocksdb)
    }

    fn touch(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"").unwrap();
    }

    #[test]
    fn postgres_basedir_or_bin_dir() {
        let d = tempfile::tempdir().unwrap();
        touch(&d.path().join("bin/postgres"));
        touch(&d.path().join("bin/initdb"));
        let l = find(Engine::Postgres, Some(d.path()), false).unwrap();
        assert_eq!(l.server, d.path().join("bin/postgres"));
        let l2 = find(Engine::Postgres, Some(&d.path().join("bin")), false).unwrap();
        assert_eq!(l, l2);
        let e = find(Engine::Postgres, Some(&d.path().join("nope")), false).unwrap_err();
        assert!(crate::error::is_bad_input(&e));
    }

    #[test]
    fn mariadb_bintar_layout() {
        let d = tempfile::tempdir().unwrap();
        touch(&d.path().join("bin/mariadbd"));
        touch(&d.path().join("scripts/mariadb-install-db"));
        touch(&d.path().join("lib/plugin/ha_rocksdb.so"));
        let l = find(Engine::MariaDb, Some(d.path()), true).unwrap();
        assert_eq!(l.lc_messages_dir, None);
        // An unpacked Debian usr/ reads its own error messages, not the installed server's.
        touch(&d.path().join("share/mariadb/english/errmsg.sys"));
        let l = find(Engine::MariaDb, Some(d.path()), true).unwrap();
        assert_eq!(l.lc_messages_dir, Some(d.path().join("share/mariadb")));
        assert_eq!(l.init, d.path().join("scripts/mariadb-install-db"));
        assert_eq!(l.plugin_dir, Some(d.path().join("lib/plugin")));
        assert_eq!(l.working_dir.as_deref(), Some(d.path()));
    }

    #[test]
    fn oracle_mysql_initialises_with_mysqld_itself() {
        let d = tempfile::tempdir().unwrap();
        touch(&d.path().join("bin/mysqld"));
        let l = find(Engine::MySql, Some(d.path()), false).unwrap();
        assert_eq!(l.init, l.server);
        let e = find(Engine::MySql, Some(d.path()), true).unwrap_err();
        assert!(e.to_string().contains("ha_rocksdb.so"), "{e}");
    }

    /// Every engine of the MySQL family is found in a basedir under its own registry program
    /// name alone, and its own name comes first: a new engine of the family needs no edit here.
    #[test]
    fn each_family_engine_is_found_by_its_registry_program() {
        let family = crate::engines::REGISTRY
            .iter()
            .filter_map(|e| e.mysql.as_ref().map(|m| (e.engine, m)));
        for (engine, facts) in family {
            let d = tempfile::tempdir().unwrap();
            touch(&d.path().join("sbin").join(facts.server_program));
            touch(&d.path().join("scripts/mariadb-install-db"));
            let l = find(engine, Some(d.path()), false).unwrap();
            assert_eq!(l.server, d.path().join("sbin").join(facts.server_program));
            assert_eq!(engine.family_server_programs()[0], facts.server_program);
        }
    }
}
