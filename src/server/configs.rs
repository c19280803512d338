//! Built-in server configs. Defaults differ between versions and builds (MySQL 8 has the binlog
//! on, MariaDB off; MyRocks' block cache is 512 MB), so every setting that decides durability,
//! logging or memory is written out here, and the report shows the text.

use super::published::Published;
use super::render;
use super::version::Version;
use super::ServerEngine;
use super::{published_mysql, published_postgres};
use crate::engines::Engine;
use crate::error::bad_input;
use crate::results::ConfigSource;

/// The names of an engine's built-in configs: `default`, then the published ones
/// (docs/configs.md).
pub fn builtin_names(server: ServerEngine, rocksdb: bool) -> Vec<&'static str> {
    let mut names = server.flavor.builtin_names().to_vec();
    names.extend(published_names(server.engine, rocksdb));
    names
}

/// The built-in published config `name` for the engine (`cx9a2`, `cz11a`), if it is one.
pub fn published(server: ServerEngine, rocksdb: bool, name: &str) -> Option<&'static Published> {
    published_find(server.engine, rocksdb, name)
}

/// A built-in published config, for listing (`dbperf run --list-presets`).
#[derive(Debug, Clone)]
pub struct Listed {
    pub name: &'static str,
    pub engine: Engine,
    pub rocksdb: bool,
    /// `12 to 18`.
    pub versions: &'static str,
    /// The mytools file of the newest version it is published for.
    pub source: &'static str,
}

/// Every built-in published config (docs/configs.md).
pub fn published_list() -> Vec<Listed> {
    published_all()
        .map(|p| Listed {
            name: p.name,
            engine: p.engine,
            rocksdb: p.rocksdb,
            versions: p.versions,
            source: p.sources.last().map_or("", |s| s.path),
        })
        .collect()
}

/// What a server target asks to run with.
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    pub server: ServerEngine,
    pub rocksdb: bool,
    /// The config's name.
    pub name: &'a str,
    /// Its text from dbperf.toml; None: the built-in config of that name.
    pub text: Option<&'a str>,
    /// A built-in published config that text extends (written before it).
    pub base: Option<&'a str>,
    /// `--server-memory` in bytes: the config is sized for the cap, not for the host.
    pub cap: Option<u64>,
}

/// The text a server starts with and, for a published config, where it came from.
#[derive(Debug, Clone)]
pub struct Chosen {
    pub text: String,
    pub source: Option<ConfigSource>,
}

/// The config a target runs with. A published one is written for the server's version and this
/// host's RAM, asked for only then (`version` may run the binary).
pub fn choose(
    a: &Asked,
    version: impl FnOnce() -> anyhow::Result<Version>,
    memory_kb: impl FnOnce() -> u64,
) -> anyhow::Result<Chosen> {
    let cap = a.cap;
    let own = a.text.unwrap_or_default();
    let (base, extended) = match a.text {
        Some(_) => (a.base, true),
        None => (Some(a.name), false),
    };
    if let Some(p) = base.and_then(|b| published(a.server, a.rocksdb, b)) {
        let mut chosen = written(p, own, version, memory_kb(), cap)?;
        if let (true, Some(source)) = (extended, chosen.source.as_mut()) {
            source.extended_by = Some(extension(a.name, own, source));
        }
        return Ok(chosen);
    }
    let text = match (base, extended) {
        (None, _) => Some(own.to_string()),
        (Some(b), true) => builtin_sized(a.server, a.rocksdb, b, cap).map(|t| t + own),
        (Some(b), false) => builtin_sized(a.server, a.rocksdb, b, cap),
    };
    match text {
        Some(text) => Ok(Chosen { text, source: None }),
        None => unknown(a, base.unwrap_or(a.name)),
    }
}

/// A published config written for the server's version and this host, then `own` lines.
fn written(
    p: &Published,
    own: &str,
    version: impl FnOnce() -> anyhow::Result<Version>,
    memory_kb: u64,
    cap: Option<u64>,
) -> anyhow::Result<Chosen> {
    if memory_kb == 0 && cap.is_none() {
        return bad_input(format!(
            "cannot read this host's RAM (MemTotal in /proc/meminfo), which the built-in config {} is scaled to",
            p.name
        ));
    }
    let r = render::render(p, version()?, memory_kb, cap)?;
    Ok(Chosen {
        text: r.text + own,
        source: Some(r.source),
    })
}

/// What the extending config `name` (its lines `own`) sets again of the published one: every
/// setting it names that the published text gives too, scaled ones among them.
fn extension(
    name: &str,
    own: &str,
    source: &crate::results::config_source::ConfigSource,
) -> crate::results::config_source::Extension {
    let overrides = source
        .scaled
        .iter()
        .map(|s| s.setting.as_str())
        .filter(|setting| mycnf_sets(own, &setting.replace('-', "_")))
        .map(str::to_string)
        .collect();
    crate::results::config_source::Extension {
        config: name.to_string(),
        overrides,
    }
}

fn unknown(a: &Asked, name: &str) -> anyhow::Result<Chosen> {
    bad_input(format!(
        "unknown {} config '{name}': declare it as [config.{name}] in dbperf.toml; the built-in ones are {}",
        a.server.engine.name(),
        builtin_names(a.server, a.rocksdb).join(", ")
    ))
}

/// A built-in config's text, its memory sizes fitted to a cap (`--server-memory`): PostgreSQL's
/// shared_buffers at most a quarter of it, InnoDB's buffer pool at most half (a quarter on
/// MySQL), RocksDB's block cache at most a quarter (the rest of the cap holds the page cache,
/// connections and the engine's other memory). The flavor names its settings.
fn builtin_sized(
    server: ServerEngine,
    rocksdb: bool,
    name: &str,
    cap: Option<u64>,
) -> Option<String> {
    let text = builtin(server, rocksdb, name)?;
    let Some(cap) = cap else {
        return Some(text);
    };
    let fit = Fit {
        cap,
        unit: server.flavor.size_unit(),
    };
    Some(server.flavor.fit_to_cap(server.engine, rocksdb, text, &fit))
}

/// Sets a built-in config's settings for a memory cap, each line it names replaced by a
/// commented one.
pub struct Fit {
    cap: u64,
    /// PostgreSQL's unit is MB (it refuses M); my.cnf's is M.
    unit: &'static str,
}

impl Fit {
    /// `setting` at most 1/`share` of the cap, `default` (its size in the text) otherwise.
    pub fn size(&self, text: String, setting: &str, default: u64, share: u64) -> String {
        let mib = super::scale::under_cap(default, self.cap, share) >> 20;
        fitted(text, setting, &format!("{mib}{}", self.unit))
    }

    /// `setting`, a count, set to `n`.
    pub fn count(&self, text: String, setting: &str, n: u32) -> String {
        fitted(text, setting, &n.to_string())
    }
}

fn fitted(text: String, setting: &str, value: &str) -> String {
    text.lines()
        .map(|l| match l.split_once('=') {
            Some((k, _)) if k.trim() == setting => {
                format!("# fitted to --server-memory\n{setting} = {value}")
            }
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// The text of a built-in config that is not a published one (`default`, the MySQL family's
/// `binlog`) for an engine.
pub fn builtin(server: ServerEngine, rocksdb: bool, name: &str) -> Option<String> {
    server.flavor.builtin(server.engine, rocksdb, name)
}

/// my.cnf lines as mysqld command-line options (every server runs with --no-defaults).
pub fn mycnf_options(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with('#') && !l.starts_with(';') && !l.starts_with('[')
        })
        .map(|l| match l.split_once('=') {
            Some((k, v)) => format!("--{}={}", k.trim(), v.trim()),
            None => format!("--{l}"),
        })
        .collect()
}

/// The config's options that fix how the data files are laid out when they are made: the
/// install step (mariadb-install-db, mysqld --initialize) must see them, or the server finds
/// its redo log, undo or system tablespace missing (or with another page size) at its start.
/// The redo log's size is left to the server, which resizes it at its start.
pub fn mycnf_init_options(text: &str) -> Vec<String> {
    const AT_INIT: &[&str] = &[
        "innodb_log_group_home_dir",
        "innodb_data_home_dir",
        "innodb_data_file_path",
        "innodb_undo_directory",
        "innodb_undo_tablespaces",
        "innodb_page_size",
        "innodb_checksum_algorithm",
        "lower_case_table_names",
    ];
    mycnf_options(text)
        .into_iter()
        .filter(|o| AT_INIT.contains(&option_name(o).as_str()))
        .collect()
}

/// An option's name as mysqld reads it: `--init-file=x` and `--init_file=x` are `init_file`.
fn option_name(option: &str) -> String {
    option
        .trim_start_matches("--")
        .split('=')
        .next()
        .unwrap_or_default()
        .replace('-', "_")
}

/// Settings that decide who can reach a managed server, or what it runs before anyone logs in:
/// dbperf sets them itself (loopback only, its own port and socket, a password on every login,
/// its own init file), so a config may not. MySQL-family names as `option_name` spells them.
const MYSQL_OWNED: &[&str] = &[
    "bind_address",
    "port",
    "socket",
    "skip_grant_tables",
    "init_file",
    "admin_address",
    "admin_port",
    "extra_port",
    "named_pipe",
    "shared_memory",
    "mysqlx",
    "mysqlx_bind_address",
    "mysqlx_port",
    "mysqlx_socket",
    "proxy_protocol_networks",
    // Where its data is and whether it listens at all are dbperf's too: another datadir
    // escapes the private one, and a server without networking never answers dbperf.
    "datadir",
    "skip_networking",
];

/// PostgreSQL's, and the directives that would bring settings dbperf never sees.
const POSTGRES_OWNED: &[&str] = &[
    "listen_addresses",
    "port",
    "unix_socket_directories",
    "unix_socket_group",
    "unix_socket_permissions",
    "hba_file",
    "ident_file",
    "data_directory",
    "config_file",
    "include",
    "include_dir",
    "include_if_exists",
];

/// The first setting of `text` that a config may not set (`MYSQL_OWNED`, `POSTGRES_OWNED`),
/// however it is spelt (`bind-address`, `loose_bind_address`, `Listen_Addresses`).
pub fn owned_setting(server: ServerEngine, text: &str) -> Option<String> {
    server.flavor.owned_setting(text)
}

/// `owned_setting` in postgresql.conf's syntax.
pub fn postgres_owned(text: &str) -> Option<String> {
    // A name is the identifier a line starts with: `hba_file'x'`, `port=1` and `include 'f'`
    // all name theirs.
    text.lines()
        .map(|l| l.trim_start())
        .map(|l| {
            let end = l.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'));
            l[..end.unwrap_or(l.len())].to_ascii_lowercase()
        })
        .find(|n| POSTGRES_OWNED.contains(&n.as_str()))
}

/// `owned_setting` in my.cnf's syntax.
pub fn mycnf_owned(text: &str) -> Option<String> {
    // mysqld takes any unambiguous prefix of an option's name (`bind` is bind-address,
    // `skip-grant` skip-grant-tables), after `loose-`, `enable-` and the like.
    mysql_names(text).into_iter().find_map(|n| {
        MYSQL_OWNED
            .iter()
            .find(|owned| !n.is_empty() && owned.starts_with(n.as_str()))
            .map(|owned| owned.to_string())
    })
}

/// The option names of a my.cnf text as mysqld resolves them: lower case, `_` for `-`, without
/// the `loose_`, `enable_`, `disable_` and `maximum_` prefixes it strips.
fn mysql_names(text: &str) -> Vec<String> {
    mycnf_options(text)
        .iter()
        .map(|o| {
            let mut n = option_name(o).to_ascii_lowercase();
            while let Some(rest) = ["loose_", "enable_", "disable_", "maximum_"]
                .iter()
                .find_map(|p| n.strip_prefix(p))
            {
                n = rest.to_string();
            }
            n
        })
        .collect()
}

/// The connections a server started with the config `text` takes: its `max_connections`
/// (the last one given), else the engine's default (PostgreSQL 100, MariaDB and MySQL 151).
pub fn max_connections(server: ServerEngine, text: &str) -> u64 {
    let mut v = server.flavor.default_max_connections();
    for line in text.lines() {
        let l = line.split('#').next().unwrap_or_default().trim();
        let Some((k, value)) = l.split_once('=') else {
            continue;
        };
        let k = k.trim().replace('-', "_").to_ascii_lowercase();
        let k = k.strip_prefix("loose_").unwrap_or(&k);
        if k == "max_connections" {
            if let Ok(n) = value.trim().trim_matches('\'').parse() {
                v = n;
            }
        }
    }
    v
}

/// Whether the my.cnf `text` sets the option `name` (written with underscores).
pub fn mycnf_sets(text: &str, name: &str) -> bool {
    mycnf_options(text).iter().any(|o| option_name(o) == name)
}

/// Every published config dbperf has built in, PostgreSQL's first.
pub fn published_all() -> impl Iterator<Item = &'static Published> {
    published_postgres::POSTGRES
        .iter()
        .chain(published_mysql::MYSQL_FAMILY)
}

/// The published config `name` for the engine: the studies' short name (`cx9a2`), also
/// written as the file's name (`cx9a2_c8r32`, `conf.diff.cx9a2_c8r32`, `my.cnf.cz11a_c8r32`).
pub fn published_find(engine: Engine, rocksdb: bool, name: &str) -> Option<&'static Published> {
    let short = name
        .strip_prefix("conf.diff.")
        .or_else(|| name.strip_prefix("my.cnf."))
        .unwrap_or(name);
    published_all().find(|p| {
        p.engine == engine
            && p.rocksdb == rocksdb
            && (short == p.name
                || short
                    .strip_suffix(p.host.name)
                    .and_then(|s| s.strip_suffix('_'))
                    == Some(p.name))
    })
}

/// The short names of the engine's published configs.
pub fn published_names(engine: Engine, rocksdb: bool) -> Vec<&'static str> {
    published_all()
        .filter(|p| p.engine == engine && p.rocksdb == rocksdb)
        .map(|p| p.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn se(e: Engine) -> ServerEngine {
        ServerEngine::of(e).unwrap()
    }

    #[test]
    fn the_install_step_gets_the_options_that_lay_out_the_files() {
        let o = mycnf_init_options(
            "innodb_buffer_pool_size = 1G\ninnodb-log-group-home-dir = /redo\ninnodb_page_size=4k\nskip_log_bin\n",
        );
        assert_eq!(
            o,
            ["--innodb-log-group-home-dir=/redo", "--innodb_page_size=4k"]
        );
    }

    #[test]
    fn an_option_is_found_whichever_way_it_is_spelt() {
        assert!(mycnf_sets("init-file = /x.sql\n", "init_file"));
        assert!(mycnf_sets("[mysqld]\ninit_file=/x.sql\n", "init_file"));
        assert!(!mycnf_sets(
            "# init_file = /x.sql\ninit_connect = x\n",
            "init_file"
        ));
    }

    #[test]
    fn settings_that_decide_who_reaches_the_server_are_dbperfs() {
        for (kind, text, owned) in [
            (
                se(Engine::MariaDb),
                "bind-address=0.0.0.0\n",
                Some("bind_address"),
            ),
            (
                se(Engine::MySql),
                "loose_bind_address = ::\n",
                Some("bind_address"),
            ),
            (
                se(Engine::MariaDb),
                "skip-grant-tables\n",
                Some("skip_grant_tables"),
            ),
            (
                se(Engine::MariaDb),
                "enable-skip-grant-tables\n",
                Some("skip_grant_tables"),
            ),
            (
                se(Engine::MySql),
                "init-file=/tmp/x.sql\n",
                Some("init_file"),
            ),
            (
                se(Engine::MariaDb),
                "skip_log_bin\nport=3307\n",
                Some("port"),
            ),
            (
                se(Engine::Postgres),
                "Listen_Addresses = '*'\n",
                Some("listen_addresses"),
            ),
            (
                se(Engine::Postgres),
                "hba_file '/tmp/trust'\n",
                Some("hba_file"),
            ),
            (
                se(Engine::Postgres),
                "include_dir 'conf.d'\n",
                Some("include_dir"),
            ),
            (
                se(Engine::MariaDb),
                "bind = 0.0.0.0\n",
                Some("bind_address"),
            ),
            (
                se(Engine::MariaDb),
                "loose-bind-addr=::\n",
                Some("bind_address"),
            ),
            (
                se(Engine::MariaDb),
                "skip-grant\n",
                Some("skip_grant_tables"),
            ),
            (
                se(Engine::MariaDb),
                "skip_grant_table\n",
                Some("skip_grant_tables"),
            ),
            (
                se(Engine::MariaDb),
                "enable-skip-grant\n",
                Some("skip_grant_tables"),
            ),
            (se(Engine::MariaDb), "init-fil=/x\n", Some("init_file")),
            (se(Engine::MariaDb), "sock=/x\n", Some("socket")),
            (se(Engine::MariaDb), "extra-por=13306\n", Some("extra_port")),
            (
                se(Engine::Postgres),
                "hba_file'/tmp/trust'\n",
                Some("hba_file"),
            ),
            (se(Engine::Postgres), "include'x'\n", Some("include")),
            (
                se(Engine::Postgres),
                "include_if_exists'x'\n",
                Some("include_if_exists"),
            ),
            (
                se(Engine::Postgres),
                "listen_addresses'*'\n",
                Some("listen_addresses"),
            ),
            (
                se(Engine::Postgres),
                "# port = 1\nshared_buffers = 1GB # port\n",
                None,
            ),
            (
                se(Engine::MariaDb),
                "skip_log_bin\ninnodb_buffer_pool_size = 1G\n",
                None,
            ),
        ] {
            assert_eq!(owned_setting(kind, text).as_deref(), owned, "{text}");
        }
        for kind in [se(Engine::Postgres), se(Engine::MariaDb), se(Engine::MySql)] {
            for rocksdb in [false, true] {
                for name in builtin_names(kind, rocksdb) {
                    if let Some(t) = builtin(kind, rocksdb, name) {
                        assert_eq!(owned_setting(kind, &t), None, "{name}");
                    }
                }
            }
        }
    }

    #[test]
    fn max_connections_is_the_configs_last_or_the_engines_default() {
        assert_eq!(max_connections(se(Engine::Postgres), ""), 100);
        assert_eq!(max_connections(se(Engine::MariaDb), "skip_log_bin\n"), 151);
        assert_eq!(
            max_connections(
                se(Engine::MariaDb),
                "max_connections = 500\nmax-connections=20\n"
            ),
            20
        );
        assert_eq!(
            max_connections(se(Engine::Postgres), "max_connections = '50' # x\n"),
            50
        );
    }

    #[test]
    fn mycnf_lines_become_options() {
        let o = mycnf_options("[mysqld]\n# c\ninnodb_buffer_pool_size = 1G\nskip_log_bin\n; x\n\n");
        assert_eq!(o, ["--innodb_buffer_pool_size=1G", "--skip_log_bin"]);
    }

    fn asked<'a>(server: ServerEngine, rocksdb: bool, name: &'a str) -> Asked<'a> {
        Asked {
            server,
            rocksdb,
            name,
            text: None,
            base: None,
            cap: None,
        }
    }

    fn never() -> anyhow::Result<Version> {
        panic!("a config that is not published needs no version")
    }

    #[test]
    fn an_extended_published_config_records_what_the_extension_sets_again() {
        let a = Asked {
            text: Some("# small\nshared_buffers = 1GB\n"),
            base: Some("cx9a2"),
            ..asked(se(Engine::Postgres), false, "small")
        };
        let c = choose(&a, || Ok(Version::new(16, 4, 0)), || 24 << 20).unwrap();
        let s = c.source.unwrap();
        assert_eq!(s.scaled[0].used, "17GB");
        let e = s.extended_by.unwrap();
        assert_eq!(e.config, "small");
        assert_eq!(e.overrides, ["shared_buffers"]);
        assert!(c.text.ends_with("shared_buffers = 1GB\n"), "{}", c.text);
        let plain = choose(
            &asked(se(Engine::Postgres), false, "cx9a2"),
            || Ok(Version::new(16, 4, 0)),
            || 24 << 20,
        )
        .unwrap();
        assert!(plain.source.unwrap().extended_by.is_none());
    }

    #[test]
    fn an_unknown_config_is_refused_with_the_built_in_names() {
        for (kind, rocksdb, list) in [
            (se(Engine::Postgres), false, "default, cx9a2, cx10a, cx10b"),
            (se(Engine::MariaDb), false, "default, binlog, cz11a, cz10a"),
            (se(Engine::MariaDb), true, "default, binlog, cza1"),
            (
                se(Engine::MySql),
                false,
                "default, binlog, cz11a, cz10a, cz12a, cz13a",
            ),
        ] {
            let e = choose(&asked(kind, rocksdb, "cx1"), never, || 1).unwrap_err();
            assert!(crate::error::is_bad_input(&e), "{e}");
            assert!(
                e.to_string()
                    .ends_with(&format!("'cx1': declare it as [config.cx1] in dbperf.toml; the built-in ones are {list}")),
                "{e}"
            );
        }
    }

    #[test]
    fn a_published_config_is_written_for_the_version_and_host_and_a_files_text_stays_its_own() {
        let c = choose(
            &asked(se(Engine::Postgres), false, "cx9a2_c8r32"),
            || Ok(Version::new(16, 4, 0)),
            || 24_683_652,
        )
        .unwrap();
        assert!(c.text.contains("\nshared_buffers = 17GB\n"), "{}", c.text);
        assert_eq!(c.source.unwrap().name, "cx9a2");
        // A dbperf.toml config extending it comes after it.
        let own = "# mine\nshared_buffers = 1GB\n";
        let c = choose(
            &Asked {
                text: Some(own),
                base: Some("cx9a2"),
                ..asked(se(Engine::Postgres), false, "mine")
            },
            || Ok(Version::new(13, 23, 0)),
            || 24_683_652,
        )
        .unwrap();
        assert!(
            c.text.ends_with(own) && c.text.starts_with("# cx9a2: "),
            "{}",
            c.text
        );
        // A file's config of the same name as a published one is the file's.
        let c = choose(
            &Asked {
                text: Some("x = 1\n"),
                ..asked(se(Engine::Postgres), false, "cx9a2")
            },
            never,
            || 1,
        )
        .unwrap();
        assert_eq!((c.text.as_str(), c.source), ("x = 1\n", None));
        let d = choose(&asked(se(Engine::MariaDb), true, "default"), never, || 1).unwrap();
        assert!(d.text.starts_with("rocksdb_block_cache_size = 1G"));
        // The version decides, and it cannot always be known.
        let e = choose(
            &asked(se(Engine::MySql), false, "cz11a"),
            || crate::error::bad_input("cannot tell the version"),
            || 24_683_652,
        )
        .unwrap_err();
        assert!(crate::error::is_bad_input(&e));
        let e = choose(
            &asked(se(Engine::MySql), false, "cz11a"),
            || Ok(Version::new(9, 7, 4)),
            || 0,
        )
        .unwrap_err();
        assert!(e.to_string().contains("cannot read this host's RAM"), "{e}");
    }

    /// Found running it (issue 34): PostgreSQL refuses `64M`, so a capped default config
    /// did not start.
    #[test]
    fn default_configs_fit_a_cap_in_each_servers_units() {
        let pg = builtin_sized(se(Engine::Postgres), false, "default", Some(256 << 20)).unwrap();
        assert!(pg.contains("\nshared_buffers = 64MB\n"), "{pg}");
        assert!(!pg.contains("512MB"), "{pg}");
        let my = builtin_sized(se(Engine::MySql), false, "default", Some(256 << 20)).unwrap();
        assert!(my.contains("\ninnodb_buffer_pool_size = 64M\n"), "{my}");
        assert!(my.contains("\nmax_connections = 100\n"), "{my}");
        let maria = builtin_sized(se(Engine::MariaDb), false, "default", Some(256 << 20)).unwrap();
        assert!(
            maria.contains("\ninnodb_buffer_pool_size = 128M\n"),
            "{maria}"
        );
        let rocks = builtin_sized(se(Engine::MariaDb), true, "default", Some(256 << 20)).unwrap();
        assert!(
            rocks.contains("rocksdb_block_cache_size = 64M\n"),
            "{rocks}"
        );
        // A cap above the default leaves it as it is.
        let big = builtin_sized(se(Engine::Postgres), false, "default", Some(8 << 30)).unwrap();
        assert!(big.contains("shared_buffers = 512MB"), "{big}");
    }

    #[test]
    fn durability_and_binlog_are_explicit() {
        for (k, r) in [
            (se(Engine::MariaDb), false),
            (se(Engine::MySql), false),
            (se(Engine::MariaDb), true),
        ] {
            let t = builtin(k, r, "default").unwrap();
            assert!(
                t.contains("skip_log_bin") && t.contains("flush_log_at_trx_commit = 1"),
                "{t}"
            );
            let redo = if k.engine == Engine::MySql {
                "innodb_redo_log_capacity = 512M"
            } else {
                "innodb_log_file_size = 512M"
            };
            assert!(r || t.contains(redo), "{t}");
        }
        assert!(builtin(se(Engine::Postgres), false, "default")
            .unwrap()
            .contains("synchronous_commit = on"));
        assert!(builtin(se(Engine::Postgres), false, "cx1").is_none());
        assert!(builtin(se(Engine::Postgres), false, "binlog").is_none());
        for (k, r) in [(se(Engine::MySql), false), (se(Engine::MariaDb), true)] {
            let t = builtin(k, r, "binlog").unwrap();
            assert!(
                !t.contains("skip_log_bin") && t.contains("log_bin\nsync_binlog = 1"),
                "{t}"
            );
        }
    }
}
