//! `dbperf.toml` (src/spec/): read, and every declared target and campaign resolved as
//! `dbperf run --target/--campaign` would. Arbitrary text, and files built from the real keys
//! with values of any type, then damaged.

use std::path::Path;

use dbperf::error::is_bad_input;
use dbperf::spec::config_file;
use proptest::prelude::*;

use super::{config, damage, Damage, Watch};

/// Values of every TOML type, plausible ones mostly.
fn value() -> impl Strategy<Value = String> {
    let text = prop_oneof![
        prop::sample::select(vec![
            "postgres",
            "mariadb",
            "mysql",
            "sqlite",
            "innodb",
            "rocksdb",
            "16.4",
            "13",
            "17-debian",
            "small",
            "wal-mmap",
            "127.0.0.1",
            "sock",
            "conf.txt",
            "missing.conf",
            "DBPERF_FUZZ_UNSET",
            "HOME",
            "ibench",
            "sysbench",
            "--data-checksums",
            "-D",
            "",
            "sqlite:wal-normal",
            "postgres@16.4:small",
            "1M",
        ])
        .prop_map(str::to_string),
        "[ -~]{0,12}",
        any::<String>().prop_map(|s| s.chars().take(8).collect()),
    ];
    let scalar = prop_oneof![
        6 => text.prop_map(|s| format!("{s:?}")),
        2 => any::<i64>().prop_map(|n| n.to_string()),
        1 => prop::sample::select(vec!["0", "-1", "65536", "4294967296", "1.5", "nan", "inf"]).prop_map(str::to_string),
        1 => any::<bool>().prop_map(|b| b.to_string()),
        1 => Just("1979-05-27T07:32:00Z".to_string()),
    ];
    prop_oneof![
        4 => scalar.clone(),
        1 => prop::collection::vec(scalar, 0..4).prop_map(|v| format!("[{}]", v.join(", "))),
    ]
}

const TABLES: &[&str] = &["config", "target", "campaign"];
const KEYS: &[&str] = &[
    "engine",
    "text",
    "file",
    "initdb",
    "storage",
    "bin",
    "version",
    "config",
    "host",
    "port",
    "socket",
    "user",
    "database",
    "password_env",
    "targets",
    "engines",
    "builds",
    "configs",
    "suites",
    "preset",
    "repeats",
    "pause_between",
    "base",
    "frobnicate",
];
const NAMES: &[&str] = &["a", "pg", "m.x", ".hidden", "b c", "", "sqlite", "x@y"];

/// One `[table.name]` section with a few keys.
fn section() -> impl Strategy<Value = String> {
    (
        prop::sample::select(TABLES),
        prop::sample::select(NAMES),
        prop::collection::vec((prop::sample::select(KEYS), value()), 0..6),
        prop::option::weighted(
            0.2,
            (
                prop::sample::select(vec!["ibench", "sysbench"]),
                prop::collection::vec(
                    (
                        prop::sample::select(vec!["rows_l_i0", "rates", "threads", "tests", "x"]),
                        value(),
                    ),
                    0..3,
                ),
            ),
        ),
    )
        .prop_map(|(table, name, keys, sub)| {
            let mut s = format!("[{table}.{name:?}]\n");
            for (k, v) in keys {
                s.push_str(&format!("{k} = {v}\n"));
            }
            if let Some((suite, kv)) = sub {
                s.push_str(&format!("[{table}.{name:?}.{suite}]\n"));
                for (k, v) in kv {
                    s.push_str(&format!("{k} = {v}\n"));
                }
            }
            s
        })
}

#[derive(Debug, Clone)]
pub enum Input {
    Text(Vec<u8>),
    Sections(Vec<String>, Damage),
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..128).prop_map(Input::Text),
        1 => "([\\[\\]a-z.\"= \n0-9{},]){0,64}".prop_map(|s| Input::Text(s.into_bytes())),
        6 => (prop::collection::vec(section(), 0..6), damage()).prop_map(|(s, d)| Input::Sections(s, d)),
    ]
}

impl Input {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Input::Text(b) => b.clone(),
            Input::Sections(s, d) => d.apply(s.concat().into_bytes()),
        }
    }
}

fn check<T>(r: anyhow::Result<T>) -> Result<Option<T>, TestCaseError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) => {
            let m = format!("{e:#}");
            prop_assert!(is_bad_input(&e), "not marked bad input: {m}");
            prop_assert!(!m.trim().is_empty(), "an empty error");
            Ok(None)
        }
    }
}

/// Reads `bytes` as dbperf.toml and resolves what it declares.
pub fn exercise(bytes: &[u8]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dbperf.toml");
    std::fs::write(&path, bytes).unwrap();
    std::fs::write(dir.path().join("conf.txt"), "shared_buffers = 1GB\n").unwrap();
    let watch = Watch::start();
    resolve_all(&path)?;
    watch.no_panic()?;
    watch.allocated_at_most(1 << 20)?;
    Ok(())
}

fn resolve_all(path: &Path) -> Result<(), TestCaseError> {
    let Some(f) = check(config_file::load(Some(path)))? else {
        return Ok(());
    };
    for name in f.target.keys() {
        check(f.resolve(name, &[]))?;
    }
    for name in f.campaign.keys() {
        if let Some(c) = check(f.campaign(name))? {
            for t in &c.targets {
                check(f.resolve(t, &[]))?;
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(3000))]

    #[test]
    fn config_files_are_read_or_refused_with_a_sentence(i in input()) {
        exercise(&i.bytes())?;
    }
}

/// The harness itself: a valid file resolves, so a case that ends in errors does so because of
/// what it contained.
#[test]
fn a_valid_file_resolves() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dbperf.toml");
    std::fs::write(dir.path().join("conf.txt"), "shared_buffers = 1GB\n").unwrap();
    std::fs::write(
        &path,
        "[config.small]\nengine = \"postgres\"\nfile = \"conf.txt\"\n\
         [target.pg]\nengine = \"postgres\"\nhost = \"127.0.0.1\"\nconfig = \"small\"\n\
         [campaign.c]\ntargets = [\"pg\", \"sqlite\"]\nsuites = [\"sysbench\"]\n\
         [campaign.c.sysbench]\nthreads = 4\n",
    )
    .unwrap();
    let f = config_file::load(Some(&path)).unwrap();
    let t = f.resolve("pg", &[]).unwrap();
    assert_eq!(t.config_text.as_deref(), Some("shared_buffers = 1GB\n"));
    let c = f.campaign("c").unwrap();
    for t in &c.targets {
        f.resolve(t, &[]).unwrap();
    }
}
