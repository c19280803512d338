//! The counters `dbperf writeamp` reads: SHOW GLOBAL STATUS text as the mysql/mariadb client
//! prints it (boxed, -B, \G), parsed in-process, and hand-written JSON counters, given to the real
//! binary (exit 0 with figures, or exit 2 with one sentence: never a panic).

use std::process::Command;

use dbperf::metrics::writeamp::parse_status_text;
use proptest::prelude::*;

use super::{config, config_per_process, damage, Damage, Watch};

const NAMES: &[&str] = &[
    "Innodb_os_log_written",
    "Innodb_os_log_fsyncs",
    "Innodb_pages_written",
    "Innodb_dblwr_pages_written",
    "Innodb_page_size",
    "Binlog_bytes_written",
    "Binlog_group_commits",
    "rocksdb_wal_bytes",
    "Uptime",
    "Variable_name",
];

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0u64..1 << 40).prop_map(|n| n.to_string()),
        1 => prop::sample::select(vec![
            "NaN", "inf", "-inf", "1e400", "-5", "0x10", "1_000", "", "ON", "1.5e3", "-0",
        ])
        .prop_map(str::to_string),
        1 => any::<f64>().prop_map(|f| f.to_string()),
    ]
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(NAMES).prop_map(str::to_string),
        1 => "[ -~]{0,10}",
    ]
}

/// One line of the client's output in one of its formats (or a line of none).
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        (name(), number()).prop_map(|(n, v)| format!("| {n} | {v} |")),
        (name(), number()).prop_map(|(n, v)| format!("{n}\t{v}")),
        (name(), number()).prop_map(|(n, v)| format!("Variable_name: {n}\n        Value: {v}")),
        name().prop_map(|n| format!("Variable_name: {n}")),
        number().prop_map(|v| format!("Value: {v}")),
        Just("+----------------+-------+".to_string()),
        Just("*************************** 1. row ***************************".to_string()),
        "[ -~\t|]{0,24}",
    ]
}

#[derive(Debug, Clone)]
pub struct Text(Vec<String>, Damage);

fn text() -> impl Strategy<Value = Text> {
    (prop::collection::vec(line(), 0..12), damage()).prop_map(|(l, d)| Text(l, d))
}

impl Text {
    fn bytes(&self) -> Vec<u8> {
        self.1.apply(self.0.join("\n").into_bytes())
    }
}

/// Hand-written counters: the documented shape with values and keys varied.
fn counters_json() -> impl Strategy<Value = Vec<u8>> {
    let map = prop::collection::vec((name(), number()), 0..5).prop_map(|kv| {
        let body: Vec<String> = kv
            .iter()
            .map(|(k, v)| {
                // Numbers as JSON numbers where they are some, else as strings.
                let v = if v.parse::<f64>().is_ok_and(f64::is_finite)
                    && !v.is_empty()
                    && !v.starts_with('+')
                {
                    v.clone()
                } else {
                    format!("{v:?}")
                };
                format!("{k:?}: {v}")
            })
            .collect();
        format!("{{{}}}", body.join(", "))
    });
    let key = prop::sample::select(vec![
        "delta",
        "start",
        "end",
        "device_write_bytes",
        "innodb_page_size",
        "engine",
        "step",
        "schema",
        "x",
    ]);
    (
        prop::sample::select(vec![
            "\"mysql\"",
            "\"mariadb\"",
            "\"postgres\"",
            "\"sqlite\"",
            "1",
            "null",
        ]),
        prop::collection::vec(
            (
                key,
                prop_oneof![
                    map,
                    number().prop_map(|n| format!("{n:?}")),
                    Just("1e3".to_string())
                ],
            ),
            0..4,
        ),
        damage(),
    )
        .prop_map(|(engine, fields, damage)| {
            let mut s = format!("{{\"engine\": {engine}");
            for (k, v) in fields {
                s.push_str(&format!(", {k:?}: {v}"));
            }
            s.push('}');
            damage.apply(s.into_bytes())
        })
}

/// Runs `dbperf writeamp` with `args` and checks the contract: figures (exit 0) or one
/// sentence (exit 2), no panic.
fn run_binary(args: &[&std::path::Path], flags: &[&str]) -> Result<(), TestCaseError> {
    let o = Command::new(env!("CARGO_BIN_EXE_dbperf"))
        .env("NO_COLOR", "1")
        .arg("writeamp")
        .args(flags)
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    prop_assert!(!err.contains("panicked"), "{err}");
    match o.status.code() {
        Some(0) => prop_assert!(!o.stdout.is_empty()),
        Some(2) => {
            prop_assert!(err.starts_with("error:"), "{err}");
            prop_assert_eq!(err.trim().lines().count(), 1, "{}", err);
        }
        c => prop_assert!(false, "exit {c:?}: {err}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(5000))]

    #[test]
    fn status_text_is_parsed_or_refused(t in text()) {
        let text = String::from_utf8_lossy(&t.bytes()).into_owned();
        let watch = Watch::start();
        match parse_status_text(&text) {
            Ok(c) => {
                prop_assert!(!c.is_empty());
                for (k, v) in &c {
                    prop_assert!(v.is_finite(), "{k} = {v}");
                }
            }
            Err(e) => prop_assert!(!e.is_empty()),
        }
        watch.no_panic()?;
        watch.allocated_at_most(1 << 20)?;
    }
}

proptest! {
    // A process per case: fewer of them.
    #![proptest_config(config_per_process(150))]

    #[test]
    fn writeamp_counters_end_in_figures_or_one_sentence(
        json in counters_json(),
        a in text(),
        b in text(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let j = dir.path().join("c.json");
        std::fs::write(&j, json).unwrap();
        run_binary(&[&j], &[])?;
        let (pa, pb) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
        std::fs::write(&pa, a.bytes()).unwrap();
        std::fs::write(&pb, b.bytes()).unwrap();
        run_binary(
            &[],
            &["--engine", "mariadb", "--start", pa.to_str().unwrap(), "--end", pb.to_str().unwrap()],
        )?;
    }
}
