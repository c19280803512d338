//! Which adapter an engine gets: the one place that turns an `Engine` into a `Dbms`, so a
//! session, `dbperf server start` and a server dbperf does not manage all open it alike.

use std::path::Path;
use std::sync::Arc;

use super::mysql::{Mysql, Storage};
use super::postgres::Postgres;
use super::{null, sqlite, Dbms, Endpoint, Timeouts};
use crate::engines::{Engine, Family};

/// The config of an embedded target (`spec::target::Target::embedded_config`): the adapters
/// read no target themselves, so spec, which checks targets, uses them without a circle.
#[derive(Debug)]
pub struct EmbeddedConfig<'a> {
    pub engine: Engine,
    /// A built-in config's name, or the name of the one `text` holds.
    pub config_name: &'a str,
    /// From dbperf.toml; None: the built-in config of that name.
    pub text: Option<&'a str>,
    /// Settings layered over the config (SQLite's `--pragma k=v`).
    pub settings: &'a [(String, String)],
}

/// Opens an embedded engine's adapter; `work_dir` is where its data lives. Server adapters are
/// made from an `Endpoint` once the server runs (`ServerAdapter`). `timeouts` bound the null
/// target's scripted stalls as they bound a server's.
pub fn open_embedded(
    config: &EmbeddedConfig,
    work_dir: &Path,
    timeouts: Timeouts,
) -> anyhow::Result<Arc<dyn Dbms>> {
    match config.engine {
        Engine::Sqlite => Ok(Arc::new(sqlite::Sqlite::open(config, work_dir)?)),
        Engine::Null => Ok(Arc::new(
            null::Null::open(config.config_name)?.with_timeouts(timeouts),
        )),
        other @ (Engine::Postgres | Engine::MariaDb | Engine::MySql) => {
            anyhow::bail!("{other} is a server engine, not an embedded one")
        }
    }
}

/// What a server engine's adapter is made of, besides where the server listens.
pub struct ServerAdapter<'a> {
    pub engine: Engine,
    /// MyRocks rather than InnoDB (the MySQL family).
    pub rocksdb: bool,
    pub config_name: &'a str,
    /// The config text the server was started with; empty for a server dbperf does not manage
    /// (its effective settings are still read from the server).
    pub config_text: &'a str,
    pub timeouts: Timeouts,
}

impl ServerAdapter<'_> {
    /// The adapter of the server at `ep`: its family's (an engine of the MySQL family is told
    /// apart by its registry entry, which the adapter reads).
    pub fn open(&self, ep: &Endpoint) -> anyhow::Result<Arc<dyn Dbms>> {
        let (name, text, t) = (self.config_name, self.config_text, self.timeouts.clone());
        match self.engine.family() {
            Family::Postgres => Ok(Arc::new(
                Postgres::new(ep.clone(), self.engine, name, text).with_timeouts(t),
            )),
            Family::MySql => Ok(Arc::new(
                Mysql::new(ep.clone(), self.engine, self.storage(), name, text).with_timeouts(t),
            )),
            Family::Embedded => {
                anyhow::bail!("{} is embedded, not a server engine", self.engine)
            }
        }
    }

    fn storage(&self) -> Storage {
        if self.rocksdb {
            Storage::RocksDb
        } else {
            Storage::InnoDb
        }
    }
}

/// Creates database `name` on the server of `engine` unless it exists, logged in at `admin`
/// (the engine's `admin_database`, which always exists).
pub fn create_database(
    engine: Engine,
    admin: &Endpoint,
    name: &str,
    timeouts: Timeouts,
) -> anyhow::Result<()> {
    let made = match engine.family() {
        Family::Postgres => {
            super::postgres::ensure_database(admin, name).map_err(anyhow::Error::from)
        }
        // The storage engine plays no part in CREATE DATABASE.
        Family::MySql => Mysql::new(admin.clone(), engine, Storage::InnoDb, "", "")
            .with_timeouts(timeouts)
            .connect()
            .and_then(|mut c| {
                Ok(c.execute_batch(&format!("CREATE DATABASE IF NOT EXISTS {name}"))?)
            }),
        Family::Embedded => {
            anyhow::bail!("{engine} is embedded, not a server engine")
        }
    };
    made.map_err(|e| anyhow::anyhow!("creating database {name}: {e:#}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each server engine's adapter records the engine it was opened for, not its family's
    /// first: a second engine of a family is recorded as itself.
    #[test]
    fn an_adapter_is_the_engine_it_was_opened_for() {
        let ep = Endpoint {
            transport: super::super::Transport::Tcp {
                host: "127.0.0.1".into(),
                port: 1,
            },
            user: "u".into(),
            password: None,
            database: "d".into(),
        };
        for e in crate::engines::REGISTRY
            .iter()
            .filter(|e| e.server.is_some())
        {
            let adapter = ServerAdapter {
                engine: e.engine,
                rocksdb: false,
                config_name: "default",
                config_text: "",
                timeouts: Timeouts::default(),
            };
            assert_eq!(adapter.open(&ep).unwrap().engine(), e.engine, "{}", e.name);
        }
    }
}
