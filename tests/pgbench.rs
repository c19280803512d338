//! pgbench's suite on real SQLite and on a PostgreSQL 15 that dbperf starts itself: the init
//! makes pgbench's rows, each built-in sends as many statements per transaction as pgbench does
//! (7, 5 and 1), a script file's `\set random_zipfian`, `\gset` and `\if` do what pgbench's do
//! (checked in the database), and a script dbperf cannot run is refused before anything runs.

use crate::common;

use std::path::Path;

use common::*;
use dbperf::results::pgbench::PgbenchRun;
use dbperf::results::StepFile;

fn run_part(s: &StepFile) -> &PgbenchRun {
    s.pgbench()
        .and_then(|p| p.run.as_ref())
        .expect("a run step has its pgbench figures")
}

/// A scale-1 run on `target` with `extra` flags; its step files.
fn pgbench(target: &str, name: &str, out: &Path, extra: &[&str]) -> Vec<StepFile> {
    let mut args = vec![
        "run",
        "--suite",
        "pgbench",
        "--preset",
        "smoke",
        "--target",
        target,
        "--out",
        out.to_str().unwrap(),
        "--no-progress",
        "--count-rows",
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let (run, steps) = read_all(&target_dir(out, name));
    assert_eq!(run.status, "ok");
    assert_eq!(run.suite.name(), "pgbench");
    steps
}

/// pgbench -i's rows at scale 1, and its steps in order.
fn check_init(s: &StepFile) {
    assert_eq!(
        (s.step.as_str(), s.status.as_str()),
        ("init", "ok"),
        "{:?}",
        s.error
    );
    let rows = s.table_rows.as_ref().expect("--count-rows");
    let got: Vec<u64> = [
        "pgbench_branches",
        "pgbench_tellers",
        "pgbench_accounts",
        "pgbench_history",
    ]
    .iter()
    .map(|t| rows[*t])
    .collect();
    assert_eq!(got, [1, 10, 100_000, 0]);
    assert_eq!(s.ops["insert"].rows, 100_011);
    let init = s
        .pgbench()
        .and_then(|p| p.init.as_ref())
        .expect("the init's part");
    let letters: String = init.steps.iter().map(|x| x.letter.as_str()).collect();
    assert_eq!(letters, "dtgvp");
}

/// What pgbench sends per transaction of each built-in, BEGIN and END included; TPS is the
/// transactions over the measured time; history holds a row per transaction that writes one.
fn check_builtins(s: &StepFile) {
    assert_eq!(s.status, "ok", "{:?}", s.error);
    let r = run_part(s);
    let spt: Vec<(String, Option<f64>)> = r
        .scripts
        .iter()
        .map(|x| (x.name.clone(), x.statements_per_transaction))
        .collect();
    assert_eq!(
        spt,
        [
            ("tpcb-like".to_string(), Some(7.0)),
            ("simple-update".to_string(), Some(5.0)),
            ("select-only".to_string(), Some(1.0)),
        ]
    );
    let n: u64 = r.scripts.iter().map(|x| x.transactions).sum();
    assert_eq!(n, r.transactions);
    assert_eq!(s.headline.metric, "tps");
    let tps = n as f64 / r.measured_s;
    assert!(
        (r.tps - tps).abs() <= tps * 1e-3 + 0.01,
        "{} vs {tps}",
        r.tps
    );
    assert_eq!(s.headline.value, r.tps);
    let writes = r.scripts[0].transactions + r.scripts[1].transactions;
    assert_eq!(s.table_rows.as_ref().unwrap()["pgbench_history"], writes);
    // Each command ran once per transaction of its script.
    for sc in &r.scripts {
        assert!(
            sc.commands.iter().all(|c| c.count == sc.transactions),
            "{sc:?}"
        );
    }
}

const ALL_BUILTINS: [&str; 6] = [
    "--builtin",
    "tpcb-like@2",
    "--builtin",
    "simple-update@1",
    "--builtin",
    "select-only@1",
];

#[test]
fn init_and_builtins_on_sqlite() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let mut extra = vec!["--time", "2"];
    extra.extend(ALL_BUILTINS);
    let steps = pgbench("sqlite", "sqlite.wal-normal", &out, &extra);
    assert_eq!(steps.len(), 2);
    check_init(&steps[0]);
    check_builtins(&steps[1]);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("## pgbench") && md.contains("Latency per command"),
        "{md}"
    );
}

/// A script that reads an account into variables with `\gset`, and adds one to its balance
/// only when `\if` finds the account it drew by `random_zipfian`: after N transactions of one
/// client the balances sum to N, and each transaction sent exactly its two statements.
const GSET_IF: &str = "\\set n random_zipfian(1, 100000 * :scale, 1.5)
SELECT abalance AS bal, aid FROM pgbench_accounts WHERE aid = :n \\gset acct_
\\if :acct_aid = :n AND :acct_bal >= 0
UPDATE pgbench_accounts SET abalance = :acct_bal + 1 WHERE aid = :n;
\\else
SELECT 'never' AS x;
\\endif
";

#[test]
fn a_script_file_with_zipfian_gset_and_if_on_sqlite() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, work) = (tmp.path().join("r"), tmp.path().join("w"));
    let file = tmp.path().join("gset.sql");
    std::fs::write(&file, GSET_IF).unwrap();
    let spec = format!("{}@1", file.display());
    let steps = pgbench(
        "sqlite",
        "sqlite.wal-normal",
        &out,
        &[
            "--transactions",
            "200",
            "--file",
            &spec,
            "--work-dir",
            work.to_str().unwrap(),
        ],
    );
    let r = run_part(&steps[1]);
    assert_eq!(r.transactions, 200);
    assert_eq!(r.scripts[0].statements_per_transaction, Some(2.0));
    let db = rusqlite::Connection::open(work.join("sqlite.wal-normal").join("ib.sqlite")).unwrap();
    let (sum, touched): (i64, i64) = db
        .query_row(
            "SELECT sum(abalance), count(*) FROM pgbench_accounts WHERE abalance <> 0",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(sum, 200);
    // Zipfian draws crowd the first accounts: far fewer than 200 distinct ones.
    assert!(touched < 150, "{touched}");
}

#[test]
fn a_script_dbperf_cannot_run_is_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    for (script, says) in [
        (
            "SELECT 1;\n\\shell touch /tmp/x\n",
            "bad.sql:2: \\shell is refused",
        ),
        ("\\set x random(1)\n", "bad.sql:1: random takes 2"),
        (
            "\\if 1\nSELECT 1;\n",
            "bad.sql:1: \\if without a matching \\endif",
        ),
    ] {
        let file = tmp.path().join("bad.sql");
        std::fs::write(&file, script).unwrap();
        let o = run(&[
            "run",
            "--suite",
            "pgbench",
            "--file",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!out.exists(), "nothing ran");
    }
}

#[test]
fn init_and_builtins_on_managed_postgres_in_both_query_modes() {
    if !postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for mode in ["simple", "prepared"] {
        let out = tmp.path().join(mode);
        let mut extra = vec!["--time", "2", "--client", "2", "--query-mode", mode];
        extra.extend(ALL_BUILTINS);
        let steps = pgbench("postgres", "postgres.default", &out, &extra);
        check_init(&steps[0]);
        check_builtins(&steps[1]);
        assert_eq!(run_part(&steps[1]).query_mode, mode);
    }
}
