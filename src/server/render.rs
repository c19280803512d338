//! A published config (published.rs) written out for one server version and this host: the
//! settings that version has, memory scaled to the host (scale.rs), and a comment line for
//! every setting not given as published, so the text says itself what changed and why.

use super::published::{How, Published, Setting, REPOSITORY};
use super::scale::Scale;
use super::version::Version;
use super::ServerEngine;
use crate::error::bad_input;
use crate::results::{ConfigSource, ScaledSetting};

/// The text a server gets, and where it came from (for run.json).
#[derive(Debug, Clone)]
pub struct Rendered {
    pub text: String,
    pub source: ConfigSource,
}

/// `p` for a server of version `version` on a host with `memory_kb` of RAM (MemTotal).
pub fn render(
    p: &Published,
    version: Version,
    memory_kb: u64,
    cap: Option<u64>,
) -> anyhow::Result<Rendered> {
    if version < p.from || version >= p.before {
        return bad_input(format!(
            "the built-in config {} is for {} {}; this server is {version}",
            p.name,
            p.engine.name(),
            p.versions
        ));
    }
    let Some(server) = ServerEngine::of(p.engine) else {
        return bad_input(format!(
            "the built-in config {} is for {}, which dbperf starts no server of",
            p.name, p.engine
        ));
    };
    let scale = match cap {
        Some(bytes) => Scale::for_cap(bytes, p.host.memory_gib),
        None => Scale::for_host(memory_kb, p.host.memory_gib),
    };
    let source = p.source(version);
    let mut out = Out {
        server,
        text: header(p, source.path, version, &scale),
        scaled: Vec::new(),
        not_as_published: Vec::new(),
    };
    for s in p.settings() {
        out.setting(s, version, &scale);
    }
    Ok(Rendered {
        source: ConfigSource {
            name: p.name.to_string(),
            source: format!("{REPOSITORY} {}", source.path),
            server_version: version.to_string(),
            published_host: host_label(p),
            host_memory_gib: scale.host_gib,
            memory_cap_mib: scale.cap_mib,
            scale: scale.factor(),
            scaled: out.scaled,
            not_as_published: out.not_as_published,
            extended_by: None,
        },
        text: out.text,
    })
}

/// Comment lines naming the config, its file, the version and the scale.
fn header(p: &Published, path: &str, version: Version, scale: &Scale) -> String {
    let to = match scale.cap_mib {
        // A change of method, not the published setup: said where the config says its scale.
        Some(mib) => format!(
            "half the server's memory cap of {mib} MiB (--server-memory; the other half holds \
             its page cache)"
        ),
        None => format!("this host's {} GiB", scale.host_gib),
    };
    format!(
        "# {}: a published config of the Insert Benchmark and sysbench studies, from\n\
         # {REPOSITORY} {path}, for {} {version}.\n\
         # Published for {}; memory scaled to {to} (x {}).\n",
        p.name,
        p.engine.name(),
        host_label(p),
        factor_text(scale),
    )
}

fn host_label(p: &Published) -> String {
    format!(
        "{} ({} cores, {} GiB RAM)",
        p.host.name, p.host.cores, p.host.memory_gib
    )
}

/// `0.75`, `1`, `0.03125`: the factor without float noise.
fn factor_text(scale: &Scale) -> String {
    let f = format!("{:.5}", scale.factor());
    f.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The text being written and what the record says of it.
struct Out {
    /// Its engine, in whose family's config syntax the text is.
    server: ServerEngine,
    text: String,
    scaled: Vec<ScaledSetting>,
    not_as_published: Vec<String>,
}

impl Out {
    fn setting(&mut self, s: &Setting, version: Version, scale: &Scale) {
        match s.how {
            How::Kept => self.line(s.name, s.value),
            How::Memory => self.memory(s, scale),
            How::Versions { from, before, why } => {
                let given = from.is_none_or(|f| version >= f) && before.is_none_or(|b| version < b);
                if given {
                    self.line(s.name, s.value);
                } else {
                    self.note(s, &format!("not given on {version}: {why}"));
                }
            }
            How::Dropped(why) => self.note(s, &format!("not given: {why}")),
            How::Changed(value, why) => {
                self.note(s, &format!("given as {}: {why}", self.form(s.name, value)));
                self.line(s.name, value);
            }
            How::Added(why) => {
                let line = format!(
                    "{} is not in the published file: {why}",
                    self.form(s.name, s.value)
                );
                self.comment(&line);
                self.not_as_published.push(line);
                self.line(s.name, s.value);
            }
        }
    }

    fn memory(&mut self, s: &Setting, scale: &Scale) {
        let Some(used) = scale.apply(s.value) else {
            // Not a size after all: given as published rather than guessed at.
            self.line(s.name, s.value);
            return;
        };
        let of = match scale.cap_mib {
            Some(mib) => format!(
                "{} MiB (half the cap) / {} GiB of RAM",
                mib / 2,
                scale.published_gib
            ),
            None => format!("{}/{} GiB of RAM", scale.host_gib, scale.published_gib),
        };
        self.comment(&format!(
            "{} as published; x {of}, rounded down (docs/configs.md)",
            self.form(s.name, s.value),
        ));
        self.scaled.push(ScaledSetting {
            setting: s.name.to_string(),
            published: s.value.to_string(),
            used: used.clone(),
        });
        self.line(s.name, &used);
    }

    /// A setting not given as published: a comment line, also kept for the record.
    fn note(&mut self, s: &Setting, what: &str) {
        let line = format!("{} {what}", self.form(s.name, s.value));
        self.comment(&line);
        self.not_as_published.push(line);
    }

    fn comment(&mut self, line: &str) {
        self.text.push_str("# ");
        self.text.push_str(line);
        self.text.push('\n');
    }

    fn line(&mut self, name: &str, value: &str) {
        let l = self.form(name, value);
        self.text.push_str(&l);
        self.text.push('\n');
    }

    /// `name = value` in postgresql.conf, `name=value` (or a bare switch) in my.cnf.
    fn form(&self, name: &str, value: &str) -> String {
        self.server.flavor.setting_line(name, value)
    }
}

#[cfg(test)]
mod tests {
    use super::super::configs::mycnf_options;
    use super::super::configs::{published_all, published_find as find};
    use super::*;
    use crate::engines::Engine;

    /// This machine's MemTotal (24 GiB), a 32 GiB host's, and a 1 GiB one's.
    const AT24: u64 = 24_683_652;
    const AT32: u64 = 32_818_000;
    const TINY: u64 = 900_000;

    fn text(kind: Engine, rocksdb: bool, name: &str, v: Version) -> String {
        render(find(kind, rocksdb, name).unwrap(), v, AT24, None)
            .unwrap()
            .text
    }

    /// The settings the text gives (comments left out), as `name=value`.
    fn given(t: &str) -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| l.replace(" = ", "="))
            .collect()
    }

    fn gives(t: &str, setting: &str) -> bool {
        given(t).iter().any(|l| l == setting)
    }

    /// Every supported version worth telling apart, per engine.
    fn versions(kind: Engine) -> Vec<Version> {
        let v = Version::new;
        match kind {
            Engine::Postgres => (10..=18).map(|m| v(m, 0, 0)).collect(),
            Engine::MariaDb => vec![
                v(10, 5, 23),
                v(10, 6, 20),
                v(10, 11, 19),
                v(11, 0, 0),
                v(11, 4, 5),
                v(11, 6, 2),
                v(11, 8, 9),
            ],
            Engine::MySql => vec![
                v(8, 0, 11),
                v(8, 0, 17),
                v(8, 0, 18),
                v(8, 0, 29),
                v(8, 0, 30),
                v(8, 0, 36),
                v(8, 4, 0),
                v(8, 4, 6),
                v(9, 0, 0),
                v(9, 7, 4),
            ],
            Engine::Sqlite | Engine::Null => vec![],
        }
    }

    #[test]
    fn mysql_redo_log_settings_follow_the_version() {
        let old = text(Engine::MySql, false, "cz11a", Version::new(8, 0, 29));
        assert!(gives(&old, "innodb_log_files_in_group=15"), "{old}");
        assert!(gives(&old, "innodb_log_file_size=2G"), "{old}");
        assert!(!gives(&old, "innodb_redo_log_capacity=30G"), "{old}");
        assert!(
            old.contains(
                "# innodb_redo_log_capacity=30G not given on 8.0.29: MySQL has it from 8.0.30"
            ),
            "{old}"
        );
        let new = text(Engine::MySql, false, "cz11a", Version::new(8, 0, 30));
        assert!(gives(&new, "innodb_redo_log_capacity=30G"), "{new}");
        assert!(
            !given(&new).iter().any(|l| l.starts_with("innodb_log_file")),
            "{new}"
        );
        assert!(
            new.contains("# innodb_log_file_size=2G not given on 8.0.30: given as innodb_redo_log_capacity=30G from 8.0.30"),
            "{new}"
        );
        // The idle flush exists from 8.0.18.
        assert!(!gives(
            &text(Engine::MySql, false, "cz11a", Version::new(8, 0, 17)),
            "innodb_idle_flush_pct=1"
        ));
        assert!(gives(&new, "innodb_idle_flush_pct=1"));
    }

    #[test]
    fn mysql_authentication_and_tls_settings_follow_the_version() {
        let v80 = text(Engine::MySql, false, "cz11a", Version::new(8, 0, 36));
        assert!(gives(
            &v80,
            "default_authentication_plugin=mysql_native_password"
        ));
        assert!(gives(&v80, "ssl=0"));
        let v84 = text(Engine::MySql, false, "cz11a", Version::new(8, 4, 6));
        assert!(gives(&v84, "mysql_native_password=ON"), "{v84}");
        assert!(
            !gives(&v84, "ssl=0")
                && !gives(&v84, "default_authentication_plugin=mysql_native_password")
        );
        // Nothing MySQL 9.x refuses (checked with mysqld 9.7.4 --validate-config): removed
        // settings and the native password plugin are gone from the text.
        for name in ["cz10a", "cz11a", "cz12a", "cz13a"] {
            for v in [Version::new(9, 0, 0), Version::new(9, 7, 4)] {
                let t = text(Engine::MySql, false, name, v);
                for gone in [
                    "query_cache",
                    "innodb_log_files_in_group",
                    "innodb_log_file_size",
                    "default_authentication_plugin",
                    "mysql_native_password",
                    "ssl",
                    "innodb_file_format",
                    "expire_logs_days",
                ] {
                    assert!(
                        !given(&t).iter().any(|l| l.starts_with(gone)),
                        "{name} on {v} gives {gone}:\n{t}"
                    );
                }
            }
        }
    }

    #[test]
    fn postgres_settings_follow_the_version() {
        let v = |m| Version::new(m, 0, 0);
        let pg12 = text(Engine::Postgres, false, "cx9a2", v(12));
        assert!(
            !gives(&pg12, "autovacuum_vacuum_insert_scale_factor=0.05"),
            "{pg12}"
        );
        assert!(pg12.contains("# autovacuum_vacuum_insert_scale_factor = 0.05 not given on 12.0: PostgreSQL has it from 13"), "{pg12}");
        assert!(gives(
            &text(Engine::Postgres, false, "cx9a2", v(13)),
            "autovacuum_vacuum_insert_scale_factor=0.05"
        ));
        // io_method is PostgreSQL 18's.
        let cx10b_17 = text(Engine::Postgres, false, "cx10b", v(17));
        assert!(
            !cx10b_17.lines().any(|l| l.starts_with("io_method")),
            "{cx10b_17}"
        );
        assert!(
            cx10b_17.contains("# io_method = 'sync' not given on 17.0"),
            "{cx10b_17}"
        );
        assert!(gives(
            &text(Engine::Postgres, false, "cx10b", v(18)),
            "io_method='sync'"
        ));
        // vacuum_buffer_usage_limit: 16 and 17, as published.
        for (m, has) in [(15, false), (16, true), (17, true), (18, false)] {
            let t = text(Engine::Postgres, false, "cx10a", v(m));
            assert_eq!(
                gives(&t, "vacuum_buffer_usage_limit=256MB"),
                has,
                "{m}: {t}"
            );
        }
        // The source is the file of the version.
        let p = find(Engine::Postgres, false, "cx9a2").unwrap();
        assert!(render(p, v(12), AT24, None)
            .unwrap()
            .source
            .source
            .ends_with("pg1219_def/conf.diff.cx9a2_c8r32"));
        assert!(render(p, v(17), AT24, None)
            .unwrap()
            .source
            .source
            .ends_with("pg163_def/conf.diff.cx9a2_c8r32"));
    }

    #[test]
    fn mariadb_settings_follow_the_version() {
        let v = Version::new;
        let m1011 = text(Engine::MariaDb, false, "cz11a", v(10, 11, 19));
        assert!(gives(&m1011, "innodb_flush_method=O_DIRECT_NO_FSYNC"));
        assert!(gives(&m1011, "innodb_change_buffering=none"));
        assert!(!gives(&m1011, "innodb_log_file_buffering=1"));
        let m114 = text(Engine::MariaDb, false, "cz11a", v(11, 4, 5));
        assert!(
            !given(&m114)
                .iter()
                .any(|l| l.starts_with("innodb_flush_method")
                    || l.starts_with("innodb_change_buffering")),
            "{m114}"
        );
        assert!(
            gives(&m114, "innodb_log_file_buffering=1")
                && gives(&m114, "innodb_data_file_write_through=0")
        );
        assert!(!gives(&m114, "innodb_snapshot_isolation=OFF"));
        let m118 = text(Engine::MariaDb, false, "cz11a", v(11, 8, 9));
        assert!(gives(&m118, "innodb_snapshot_isolation=OFF"), "{m118}");
        // MariaDB ignores MySQL's authentication setting, and never had innodb_log_files_in_group
        // in these files; the buffer pool instances are gone from 10.6.
        for t in [&m1011, &m118] {
            for gone in [
                "default_authentication_plugin",
                "innodb_log_files_in_group",
                "innodb_buffer_pool_instances",
            ] {
                assert!(!given(t).iter().any(|l| l.starts_with(gone)), "{gone}: {t}");
            }
        }
        // MyRocks: MariaDB's has one setting for the background jobs.
        let rocks = text(Engine::MariaDb, true, "cza1", v(10, 11, 19));
        assert!(gives(&rocks, "rocksdb_max_background_jobs=4"), "{rocks}");
        assert!(!given(&rocks)
            .iter()
            .any(|l| l.starts_with("rocksdb_max_background_compactions")));
        assert!(rocks.contains("# rocksdb_max_background_jobs=4 is not in the published file"));
    }

    #[test]
    fn memory_scales_to_the_host_and_is_recorded() {
        let p = find(Engine::Postgres, false, "cx9a2").unwrap();
        let v = Version::new(16, 4, 0);
        let at24 = render(p, v, AT24, None).unwrap();
        assert!(gives(&at24.text, "shared_buffers=17GB"), "{}", at24.text);
        assert!(at24
            .text
            .contains("# shared_buffers = 23GB as published; x 24/32 GiB of RAM"));
        let s = &at24.source;
        assert_eq!((s.host_memory_gib, s.scale), (24, 0.75));
        assert_eq!(s.published_host, "c8r32 (8 cores, 32 GiB RAM)");
        assert_eq!(
            s.scaled,
            [ScaledSetting {
                setting: "shared_buffers".into(),
                published: "23GB".into(),
                used: "17GB".into()
            }]
        );
        assert!(s
            .source
            .starts_with("github.com/mdcallag/mytools bench/conf/"));
        assert!(gives(
            &render(p, v, AT32, None).unwrap().text,
            "shared_buffers=23GB"
        ));
        // A tiny host: scaled, never below the floor.
        let tiny = render(p, v, TINY, None).unwrap();
        assert!(gives(&tiny.text, "shared_buffers=640MB"), "{}", tiny.text);
        let inno = render(
            find(Engine::MySql, false, "cz12a").unwrap(),
            Version::new(9, 7, 4),
            TINY,
            None,
        )
        .unwrap();
        assert!(
            gives(&inno.text, "innodb_buffer_pool_size=640M"),
            "{}",
            inno.text
        );
        // Only memory is scaled: the redo log and WAL are disk budgets.
        assert!(gives(&inno.text, "innodb_redo_log_capacity=30G"));
        assert!(gives(&tiny.text, "max_wal_size=40GB"));
        let rocks = render(
            find(Engine::MariaDb, true, "cza1").unwrap(),
            Version::new(11, 8, 9),
            AT24,
            None,
        )
        .unwrap();
        assert!(
            gives(&rocks.text, "rocksdb_block_cache_size=15G"),
            "{}",
            rocks.text
        );
    }

    #[test]
    fn every_config_on_every_version_names_no_path_and_reads_as_options() {
        let place = |name: &str| {
            name.ends_with("_dir")
                || name.ends_with("_file")
                || ["datadir", "tmpdir", "basedir", "socket", "log_error"].contains(&name)
        };
        for p in published_all() {
            for v in versions(p.engine).into_iter().filter(|v| *v >= p.from) {
                let r = render(p, v, AT24, None).unwrap();
                assert_eq!(
                    super::super::configs::owned_setting(
                        ServerEngine::of(p.engine).unwrap(),
                        &r.text
                    ),
                    None,
                    "{} on {v} sets what a managed server's config may not",
                    p.name
                );
                for l in given(&r.text) {
                    let (name, value) = l.split_once('=').unwrap_or((&l, ""));
                    assert!(
                        !value.contains('/') && !place(name),
                        "{} on {v} gives a place: {l}",
                        p.name
                    );
                    assert!(!l.starts_with('['), "{} on {v}: a section in {l}", p.name);
                }
                // Every my.cnf line becomes one server option.
                if p.engine != Engine::Postgres {
                    assert_eq!(
                        mycnf_options(&r.text).len(),
                        given(&r.text).len(),
                        "{}",
                        r.text
                    );
                }
                // A published config gives what it names: one line per setting it has.
                assert!(r
                    .text
                    .starts_with(&format!("# {}: a published config", p.name)));
                assert!(given(&r.text).len() > 15, "{} on {v}", p.name);
                assert_eq!(r.source.server_version, v.to_string());
            }
        }
    }

    #[test]
    fn a_version_outside_the_configs_range_is_refused_in_one_sentence() {
        let p = find(Engine::Postgres, false, "cx10a").unwrap();
        let e = render(p, Version::new(11, 22, 0), AT24, None).unwrap_err();
        assert!(crate::error::is_bad_input(&e), "{e}");
        assert_eq!(
            e.to_string(),
            "the built-in config cx10a is for postgres 12 to 18; this server is 11.22"
        );
        let x = find(Engine::Postgres, false, "cx9a2").unwrap();
        let r = render(x, Version::new(10, 23, 0), AT24, None).unwrap();
        assert!(
            r.source
                .source
                .ends_with("bench/conf/arc/may24.pn53.pg17/conf.diff.cx9a2_c8r32.pg1023"),
            "{}",
            r.source.source
        );
        assert!(render(x, Version::new(9, 6, 24), AT24, None).is_err());
        let m = find(Engine::MariaDb, false, "cz11a").unwrap();
        assert!(render(m, Version::new(12, 0, 2), AT24, None).is_err());
        assert!(render(m, Version::new(11, 8, 9), AT24, None).is_ok());
    }
}
