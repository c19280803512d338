//! The engines dbperf benchmarks, with one registry entry each. What the rest of the crate
//! knows about an engine (its name, whether dbperf starts it as a server, its storage engines,
//! the port and user of a server it does not manage, how a managed one is stopped, where its
//! builds come from) is read from its entry or decided by a `match` on `Engine`, never by
//! comparing names: a new engine then fails to compile wherever it needs a decision, instead of
//! silently taking another engine's branch.
//!
//! Adding an engine is its adapter (src/dbms/, and src/server/ if dbperf starts it) plus one
//! entry in `REGISTRY`. This room imports nothing of the crate, so every room may use it.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Engine {
    Sqlite,
    Postgres,
    MariaDb,
    MySql,
    /// The hidden run-loop test target (src/dbms/null.rs): never listed, never a benchmark
    /// result.
    Null,
}

/// The protocol and SQL an engine speaks: what server management, counters and write
/// amplification differ by. MariaDB and MySQL share one adapter and differ in a few places,
/// which match on `Engine` itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Runs inside dbperf's process (SQLite, the null target).
    Embedded,
    Postgres,
    MySql,
}

/// Where `dbperf fetch` gets builds without compiling (docs/fetch.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildSource {
    /// The embedded-postgres binaries on npm.
    Npm,
    /// Debian's packages, through a private apt configuration.
    Debian,
}

impl BuildSource {
    pub const ALL: [BuildSource; 2] = [BuildSource::Npm, BuildSource::Debian];

    pub fn name(self) -> &'static str {
        match self {
            BuildSource::Npm => "npm",
            BuildSource::Debian => "debian",
        }
    }

    pub fn parse(s: &str) -> Option<BuildSource> {
        BuildSource::ALL.into_iter().find(|b| b.name() == s)
    }
}

/// What a server engine needs beyond its adapter.
#[derive(Debug)]
pub struct ServerFacts {
    /// The TCP port of a server dbperf does not manage, when the target gives none.
    pub default_port: u16,
    /// The login to a server dbperf does not manage, when the target gives none.
    pub default_user: &'static str,
    /// The superuser dbperf creates in (or is given by) an instance it manages.
    pub admin_user: &'static str,
    /// The database a login goes to before the benchmark's exists.
    pub admin_database: &'static str,
    /// A graceful stop (PostgreSQL's fast shutdown, mysqld's shutdown).
    pub stop_signal: i32,
    /// A stop that must not wait: PostgreSQL's immediate shutdown (SIGQUIT lets the postmaster
    /// stop its children; SIGKILL would leave them), mysqld has none but SIGKILL.
    pub kill_signal: i32,
    /// The command-line client its builds ship, for a person to connect by hand.
    pub client_program: &'static str,
    /// The smallest memory cap (`--server-memory`, bytes) its server runs under: PostgreSQL
    /// started and went IO-bound at 64 MiB; MariaDB, whose InnoDB takes about 33 MiB beside its
    /// buffer pool and the dirty pages of its redo log, was killed by the kernel at 64, 96 and
    /// 128 MiB and ran at 256; MySQL 9.7 held 770 MiB with a 256 MiB pool (its performance
    /// schema and other buffers) and was killed at 384 and 512 MiB.
    pub least_memory_cap: u64,
    /// A version `dbperf fetch` shows in its examples.
    pub example_version: &'static str,
}

/// What sets an engine of the MySQL family apart from its siblings: the family's adapter and
/// server flavor (src/dbms/mysql.rs, src/server/mysql_family.rs) read these, so a new engine of
/// the family is one registry entry.
#[derive(Debug)]
pub struct MySqlFacts {
    /// How the adapter's messages name the server ("cannot connect to MySQL at ...").
    pub brand: &'static str,
    /// How a data directory is made.
    pub init: MySqlInit,
    /// The server program, in a Debian package's `usr/sbin`.
    pub server_program: &'static str,
    /// How `--version` states a Debian build's version: the text with `{}` for the version.
    pub version_text: &'static str,
    /// Options every server starts with, beside the family's own.
    pub server_options: &'static [&'static str],
    /// The setting that sizes the redo log in the built-in configs (512 MB of it).
    pub redo_setting: &'static str,
    /// Under a memory cap (InnoDB): the buffer pool's share (1/N of the cap), and the
    /// connection limit, when the engine's memory grows with it.
    pub pool_share_under_cap: u64,
    pub max_connections_under_cap: Option<u32>,
}

/// How a MySQL-family server's data directory is made.
#[derive(Debug, Clone, Copy)]
pub enum MySqlInit {
    /// MariaDB's install script (mariadb-install-db): it may not set a password on every
    /// version, so the first start's init file does; it now and then fails under load, and is
    /// tried once more.
    InstallScript,
    /// `mysqld --initialize-insecure` with an init file that sets the password (Oracle MySQL
    /// lineage; MariaDB's server has no such option, so a MariaDB binary is refused).
    Initialize,
}

#[derive(Debug)]
pub struct Entry {
    pub engine: Engine,
    /// How targets, result files and reports name it.
    pub name: &'static str,
    /// What people call it, for sentences.
    pub product: &'static str,
    pub family: Family,
    /// Offered to users (in messages listing the engines).
    pub listed: bool,
    /// Its storage engines (`mariadb+rocksdb`); the first is the default, which a target's
    /// name leaves out. Empty: the engine has none.
    pub storages: &'static [&'static str],
    /// The config a target without `:CONFIG` uses.
    pub default_config: &'static str,
    /// Whether `--pragma KEY=VALUE` settings apply (SQLite's pragmas).
    pub pragmas: bool,
    /// Whether it numbers rows of a column that is not the primary key (sysbench's `--usepk 0`:
    /// SQLite assigns ids only to an INTEGER PRIMARY KEY).
    pub ids_without_primary_key: bool,
    /// Set for an engine dbperf runs as a server; None for an embedded one.
    pub server: Option<ServerFacts>,
    /// Set for an engine of the MySQL family (`Family::MySql`), and only for one.
    pub mysql: Option<MySqlFacts>,
    /// Where its builds can be fetched; the first is the default source.
    pub builds: &'static [BuildSource],
}

/// One entry per engine; `Engine::entry` finds an engine's.
pub const REGISTRY: &[Entry] = &[
    Entry {
        engine: Engine::Sqlite,
        name: "sqlite",
        product: "SQLite",
        family: Family::Embedded,
        listed: true,
        storages: &[],
        default_config: "wal-normal",
        pragmas: true,
        ids_without_primary_key: false,
        server: None,
        mysql: None,
        builds: &[],
    },
    Entry {
        engine: Engine::Postgres,
        name: "postgres",
        product: "PostgreSQL",
        family: Family::Postgres,
        listed: true,
        storages: &[],
        default_config: "default",
        pragmas: false,
        ids_without_primary_key: true,
        server: Some(ServerFacts {
            default_port: 5432,
            default_user: "postgres",
            admin_user: "dbperf",
            admin_database: "postgres",
            stop_signal: libc::SIGINT,
            kill_signal: libc::SIGQUIT,
            client_program: "psql",
            least_memory_cap: 64 << 20,
            example_version: "16.4",
        }),
        mysql: None,
        builds: &[BuildSource::Npm, BuildSource::Debian],
    },
    Entry {
        engine: Engine::MariaDb,
        name: "mariadb",
        product: "MariaDB",
        family: Family::MySql,
        listed: true,
        storages: &["innodb", "rocksdb"],
        default_config: "default",
        pragmas: false,
        ids_without_primary_key: true,
        server: Some(ServerFacts {
            client_program: "mariadb",
            least_memory_cap: 256 << 20,
            example_version: "10.11",
            ..MYSQL_SERVER
        }),
        mysql: Some(MySqlFacts {
            brand: "MariaDB",
            init: MySqlInit::InstallScript,
            server_program: "mariadbd",
            version_text: "{}-MariaDB",
            // 11.4's bintars spend ~10 s generating a TLS certificate otherwise.
            server_options: &["--skip-ssl"],
            redo_setting: "innodb_log_file_size",
            pool_share_under_cap: 2,
            max_connections_under_cap: None,
        }),
        builds: &[BuildSource::Debian],
    },
    Entry {
        engine: Engine::MySql,
        name: "mysql",
        product: "Oracle MySQL",
        family: Family::MySql,
        listed: true,
        // Oracle's builds have no MyRocks (Percona's and Facebook's forks do).
        storages: &["innodb"],
        default_config: "default",
        pragmas: false,
        ids_without_primary_key: true,
        server: Some(ServerFacts {
            client_program: "mysql",
            least_memory_cap: 1 << 30,
            example_version: "9.7",
            ..MYSQL_SERVER
        }),
        mysql: Some(MySqlFacts {
            brand: "MySQL",
            init: MySqlInit::Initialize,
            server_program: "mysqld",
            // `mysqld  Ver 9.7.4-2 for Linux on x86_64 ((Debian))`
            version_text: "Ver {}",
            // MySQL 8's X plugin opens a second port (33060) shared by every instance. Its
            // compiled-in import directory (/var/lib/mysql-files) must exist or the start
            // aborts; no benchmark reads or writes server-side files, so none is allowed.
            server_options: &["--mysqlx=OFF", "--secure-file-priv=NULL"],
            // innodb_log_file_size is gone in MySQL 9 (8.0.30 replaced it).
            redo_setting: "innodb_redo_log_capacity",
            // MySQL sizes its performance schema by max_connections: with 500 a 200k-row load
            // under 512 MiB held 521 MiB of private memory and was killed. A quarter for the
            // pool, and 100 connections (a sweep past them is refused before it runs).
            pool_share_under_cap: 4,
            max_connections_under_cap: Some(100),
        }),
        // Debian sid packages Oracle MySQL (9.7 LTS); no stable release does.
        builds: &[BuildSource::Debian],
    },
    Entry {
        engine: Engine::Null,
        name: "null",
        product: "the null target",
        family: Family::Embedded,
        listed: false,
        storages: &[],
        default_config: "instant",
        pragmas: false,
        ids_without_primary_key: true,
        server: None,
        mysql: None,
        builds: &[],
    },
];

/// What the MySQL family's servers share; each entry gives its client, its least cap and its
/// example version (the registry's test refuses one left empty).
const MYSQL_SERVER: ServerFacts = ServerFacts {
    default_port: 3306,
    default_user: "root",
    admin_user: "root",
    admin_database: "mysql",
    stop_signal: libc::SIGTERM,
    kill_signal: libc::SIGKILL,
    client_program: "",
    least_memory_cap: 0,
    example_version: "",
};

impl Engine {
    /// The target of a run that names none: embedded, so it needs nothing installed.
    pub const DEFAULT: Engine = Engine::Sqlite;

    pub fn entry(self) -> &'static Entry {
        REGISTRY
            .iter()
            .find(|e| e.engine == self)
            .expect("every engine has a registry entry (tested)")
    }

    pub fn name(self) -> &'static str {
        self.entry().name
    }

    pub fn family(self) -> Family {
        self.entry().family
    }

    /// The engine a target or a result file names; None for a name no entry has.
    pub fn parse(name: &str) -> Option<Engine> {
        REGISTRY.iter().find(|e| e.name == name).map(|e| e.engine)
    }

    /// Whether dbperf runs it as a server (managed or not) rather than in its own process.
    pub fn is_server(self) -> bool {
        self.entry().server.is_some()
    }

    /// The server facts of a server engine; None for an embedded one.
    pub fn server(self) -> Option<&'static ServerFacts> {
        self.entry().server.as_ref()
    }

    /// What sets a MySQL-family engine apart from its siblings; None for another engine.
    pub fn mysql(self) -> Option<&'static MySqlFacts> {
        self.entry().mysql.as_ref()
    }

    /// The server programs a MySQL-family engine's binaries may be named by, its own first,
    /// then its siblings' in the registry's order: a basedir or PATH may hold a server of the
    /// family under a sibling's name (MariaDB's packages ship `mysqld` as a link to
    /// `mariadbd`), and which server it really is is then asked of the binary itself.
    pub fn family_server_programs(self) -> Vec<&'static str> {
        let own = self.mysql().map(|m| m.server_program);
        let siblings = REGISTRY
            .iter()
            .filter(|e| e.family == self.family())
            .filter_map(|e| e.mysql.as_ref().map(|m| m.server_program));
        let mut names: Vec<&'static str> = Vec::new();
        for n in own.into_iter().chain(siblings) {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        names
    }

    /// The engines offered to users, in the registry's order.
    pub fn listed() -> impl Iterator<Item = Engine> {
        REGISTRY.iter().filter(|e| e.listed).map(|e| e.engine)
    }

    /// The listed engines' names joined by ", ", for a message that offers them.
    pub fn listed_names(filter: impl Fn(&Entry) -> bool) -> String {
        Engine::names(Engine::listed().filter(|e| filter(e.entry())), ", ")
    }

    /// `engines`' names joined by `sep`.
    pub fn names(engines: impl Iterator<Item = Engine>, sep: &str) -> String {
        engines.map(Engine::name).collect::<Vec<_>>().join(sep)
    }
}

/// Result files and dbperf.toml name an engine by its name.
impl serde::Serialize for Engine {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Engine {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Engine, D::Error> {
        let name = String::deserialize(d)?;
        Engine::parse(&name).ok_or_else(|| {
            // Escaped: the name comes from a file, and the sentence must stay one line.
            serde::de::Error::custom(format!(
                "unknown engine '{}'; engines are: {}",
                name.escape_debug(),
                Engine::listed_names(|_| true)
            ))
        })
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Engine; 5] = [
        Engine::Sqlite,
        Engine::Postgres,
        Engine::MariaDb,
        Engine::MySql,
        Engine::Null,
    ];

    #[test]
    fn every_engine_has_exactly_one_entry_and_its_name_reads_back() {
        for e in ALL {
            assert_eq!(
                REGISTRY.iter().filter(|x| x.engine == e).count(),
                1,
                "{e:?}"
            );
            assert_eq!(Engine::parse(e.name()), Some(e));
        }
        assert_eq!(REGISTRY.len(), ALL.len());
        assert_eq!(Engine::parse("oracle"), None);
        assert_eq!(Engine::parse("Postgres"), None);
    }

    #[test]
    fn the_hidden_target_is_not_offered_and_servers_have_their_facts() {
        assert!(!Engine::listed().any(|e| e == Engine::Null));
        assert_eq!(
            Engine::listed_names(|_| true),
            "sqlite, postgres, mariadb, mysql"
        );
        assert_eq!(
            Engine::listed_names(|e| !e.builds.is_empty()),
            "postgres, mariadb, mysql"
        );
        for e in ALL {
            assert_eq!(e.is_server(), e.family() != Family::Embedded, "{e}");
            assert_eq!(e.mysql().is_some(), e.family() == Family::MySql, "{e}");
            if let Some(s) = e.server() {
                assert!(
                    !s.client_program.is_empty() && s.least_memory_cap > 0,
                    "{e}"
                );
                assert!(!s.example_version.is_empty(), "{e}");
            }
        }
        assert_eq!(Engine::Postgres.server().unwrap().default_port, 5432);
        assert_eq!(Engine::MySql.server().unwrap().default_port, 3306);
    }

    #[test]
    fn build_sources_read_back() {
        for b in BuildSource::ALL {
            assert_eq!(BuildSource::parse(b.name()), Some(b));
        }
        assert_eq!(BuildSource::parse("apt"), None);
    }

    #[test]
    fn a_name_from_a_file_stays_one_line_in_the_error() {
        let e = serde_json::from_str::<Engine>("\"my\\nsql\"").unwrap_err();
        assert!(!e.to_string().contains('\n'), "{e}");
        assert_eq!(
            serde_json::from_str::<Engine>("\"mariadb\"").unwrap(),
            Engine::MariaDb
        );
        assert_eq!(serde_json::to_string(&Engine::MySql).unwrap(), "\"mysql\"");
    }
}
