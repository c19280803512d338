//! The sysbench suite on real PostgreSQL 15 and MariaDB 10.11 (InnoDB and MyRocks) that dbperf
//! starts itself, and its fidelity to the real sysbench 1.0.20: for every microbenchmark with a
//! stock sysbench script, the statements dbperf sends per event are the ones sysbench sends, as
//! the servers themselves count them (pg_stat_statements and pg_stat_database on PostgreSQL, the
//! general log on MariaDB). Needs the Debian packages scripts/install-test-deps.sh installs
//! (sysbench among them); without them these tests are skipped locally and fail in CI.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use dbperf::results::StepFile;

fn step<'a>(steps: &'a [StepFile], label: &str) -> &'a StepFile {
    steps
        .iter()
        .find(|s| s.step == label)
        .unwrap_or_else(|| panic!("no step {label}"))
}

/// The current order, quick preset, on a managed server: every step ok without errors, row
/// counts that follow the writes, and the engine's own "postwrite" maintenance.
fn quick_on(target: &str, name: &str, version: &str, maintenance: &str) {
    quick_with(target, name, version, maintenance, &[]);
}

fn quick_with(target: &str, name: &str, version: &str, maintenance: &str, extra: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let mut args = vec![
        "run",
        "--suite",
        "sysbench",
        "--target",
        target,
        "--count-rows",
        "--out",
        out.to_str().unwrap(),
        "--no-progress",
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let (run, steps) = read_all(&target_dir(&out, name));
    check_cost_interval(&steps);
    assert_eq!(run.status, "ok");
    assert_eq!(run.suite.name(), "sysbench");
    assert!(
        run.target.version.contains(version),
        "{}",
        run.target.version
    );
    assert_eq!(steps.len(), 39);
    assert_eq!(steps[0].ops["insert"].rows, 10_000);
    for s in &steps[1..] {
        assert_eq!(s.status, "ok", "{}: {:?}", s.step, s.error);
        let x = s.sysbench().unwrap();
        assert!(x.events > 0, "{}", s.step);
        assert_eq!(
            x.errors, 0,
            "{}: {:?}",
            s.step, s.ops["event"].error_samples
        );
        assert_eq!(x.queries, x.events * x.statements_per_event, "{}", s.step);
        // What the statements cost the managed server, per statement.
        let hw = s.hardware.as_ref().unwrap();
        assert_eq!(hw.op, "query", "{}", s.step);
        assert!(
            hw.server.is_some() && hw.per_op.server_cpu_us.is_some(),
            "{}: {:?}",
            s.step,
            hw.missing
        );
    }
    let rows = |label: &str| step(&steps, label).table_rows.as_ref().unwrap()["sbtest1"];
    assert_eq!(rows("read-write_range=100"), 10_000);
    let deleted = step(&steps, "delete_range=100").ops["event"].rows;
    assert!(deleted > 0);
    assert_eq!(rows("delete_range=100"), 10_000 - deleted);
    let inserted = step(&steps, "insert_range=100").sysbench().unwrap().events;
    assert_eq!(rows("insert_range=100"), 10_000 - deleted + inserted);
    let c = step(&steps, "read-write_range=100")
        .cleanup
        .as_ref()
        .unwrap();
    assert!(c.error.is_none(), "{c:?}");
    assert!(
        c.actions.iter().any(|a| a.contains(maintenance)),
        "{:?}",
        c.actions
    );
    let hot = step(&steps, "hot-points_range=100");
    assert_eq!(hot.ops["event"].rows, hot.ops["event"].count * 100);
}

#[test]
fn current_order_on_managed_postgres() {
    if postgres() {
        quick_on("postgres", "postgres.default", "PostgreSQL 15", "VACUUM");
    }
}

#[test]
fn current_order_on_managed_mariadb() {
    if mariadb(false) {
        quick_on(
            "mariadb",
            "mariadb.default",
            "10.11",
            "ANALYZE TABLE sbtest1",
        );
    }
}

#[test]
fn current_order_on_oracle_mysql_9_from_debian_sid() {
    if mysql_9() {
        let cache = fetch_cache();
        quick_with(
            "mysql@9",
            "mysql@9.default",
            "9.",
            "ANALYZE TABLE sbtest1",
            &["--cache-dir", cache.to_str().unwrap()],
        );
    }
}

/// Several threads and tables, writes included: concurrent delete + insert of one id collide
/// now and then (a unique violation on PostgreSQL, deadlocks or snapshot conflicts elsewhere);
/// as in sysbench those are counted and the event restarted, never fatal.
fn threads_on(target: &str, name: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = run(&[
        "run",
        "--suite",
        "sysbench",
        "--target",
        target,
        "--threads",
        "4",
        "--tables",
        "2",
        "--rows",
        "2000",
        "--read-seconds",
        "2",
        "--write-seconds",
        "2",
        "--tests",
        "point-query.warm,update-zipf,write-only,read-write_range=10,scan,points-covered-si",
        "--out",
        out.to_str().unwrap(),
        "--no-progress",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let (run, steps) = read_all(&target_dir(&out, name));
    assert_eq!(run.status, "ok");
    assert_eq!(steps[0].ops["index"].count, 2);
    assert_eq!(
        steps[1].sysbench().unwrap().threads,
        2,
        "point-query.warm runs one thread per table"
    );
    for s in &steps[1..] {
        assert_eq!(s.status, "ok", "{}: {:?}", s.step, s.error);
        let x = s.sysbench().unwrap();
        assert!(x.events > 0, "{}", s.step);
        if s.step != "point-query.warm_range=100" {
            assert_eq!(x.threads, 4, "{}", s.step);
        }
        // Counted statements: every statement of every completed event, plus those of events
        // that failed part way.
        assert!(x.queries >= x.events * x.statements_per_event, "{}", s.step);
    }
}

#[test]
fn threads_and_tables_on_managed_postgres() {
    if postgres() {
        threads_on("postgres", "postgres.default");
    }
}

#[test]
fn threads_and_tables_on_managed_myrocks() {
    if mariadb(true) {
        threads_on("mariadb+rocksdb", "mariadb+rocksdb.default");
    }
}

// ---------------------------------------------------------------------------------------------
// Fidelity against sysbench 1.0.20

fn sysbench_installed() -> bool {
    available("sysbench", "/usr/bin/sysbench")
}

/// (stock script, its extra flags, dbperf's microbenchmark)
const CASES: &[(&str, &str, &str)] = &[
    ("oltp_point_select", "", "point-query"),
    ("oltp_read_only", "--range-size=100", "read-only_range=100"),
    ("oltp_read_write", "--range-size=10", "read-write_range=10"),
    ("oltp_update_index", "", "update-index"),
    ("oltp_update_non_index", "", "update-nonindex"),
    ("oltp_delete", "", "delete"),
    ("oltp_insert", "", "insert"),
    ("oltp_write_only", "", "write-only"),
];

/// Events sysbench runs per case.
const SB_EVENTS: u64 = 300;
const ROWS: u64 = 10_000;

/// SQL as the server logged it, with literals and whitespace normalised: `'...'` and numbers
/// (not digits inside names such as sbtest1) become `?`.
fn normalise(sql: &str) -> String {
    let mut out = String::new();
    let mut chars = sql.chars().peekable();
    let mut prev_word = false;
    let mut space = false;
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            space = !out.is_empty();
            prev_word = false;
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        if c == '\'' {
            for d in chars.by_ref() {
                if d == '\'' {
                    break;
                }
            }
            out.push('?');
            prev_word = false;
        } else if c.is_ascii_digit() && !prev_word {
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
            }
            out.push('?');
        } else if c == '$' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
            }
            out.push('?');
        } else {
            prev_word = c.is_alphanumeric() || c == '_';
            out.push(c);
        }
    }
    out
}

/// Statements run at least once per two events, with calls per event.
fn per_event(counts: &BTreeMap<String, u64>, events: u64) -> BTreeMap<String, f64> {
    counts
        .iter()
        .map(|(k, &n)| (k.clone(), n as f64 / events as f64))
        .filter(|(_, r)| *r >= 0.5)
        .collect()
}

fn shell(cmd: &mut Command) -> String {
    let o = cmd.output().expect("command runs");
    assert!(o.status.success(), "{cmd:?}: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

trait Server {
    /// Forgets what was counted so far.
    fn reset(&self);
    /// Statement -> calls since the reset, and the transactions committed (when the server
    /// counts them).
    fn counts(&self) -> (BTreeMap<String, u64>, Option<u64>);
    fn sysbench_args(&self) -> Vec<String>;
    /// The `dbperf server start` instance's directory (its password files).
    fn instance(&self) -> &Path;
    /// Whether every execution of a prepared BEGIN or COMMIT is counted. pg_stat_statements
    /// counts a prepared utility statement once, however often it is executed (the same for
    /// sysbench and dbperf); the transactions then show in pg_stat_database's commits.
    fn counts_every_begin(&self) -> bool;
}

struct Pg {
    port: u16,
    /// The instance's directory: psql and sysbench (libpq) read its password from `pgpass`.
    dir: PathBuf,
}

impl Pg {
    fn psql(&self, sql: &str) -> String {
        self.psql_in("ib", sql)
    }

    /// `sql` in `database`: the test's own watching from `postgres` is no transaction of
    /// `ib`, whose commits the test counts.
    fn psql_in(&self, database: &str, sql: &str) -> String {
        shell(
            Command::new("psql")
                .env("PGPASSFILE", self.dir.join("pgpass"))
                .args([
                    "-w",
                    "-h",
                    "127.0.0.1",
                    "-p",
                    &self.port.to_string(),
                    "-U",
                    "dbperf",
                    "-At",
                    "-F",
                    "\t",
                    "-c",
                    sql,
                    database,
                ]),
        )
    }
}

impl Server for Pg {
    fn reset(&self) {
        self.psql("SELECT pg_stat_statements_reset(), pg_stat_reset()");
    }

    fn counts(&self) -> (BTreeMap<String, u64>, Option<u64>) {
        // The clients' backends flush their counters when they exit: wait until they have,
        // asking from another database so the waiting adds no commit to ib's (however long a
        // loaded machine makes it).
        for _ in 0..100 {
            let others = self.psql_in(
                "postgres",
                "SELECT count(*) FROM pg_stat_activity WHERE datname = 'ib'",
            );
            if others.trim() == "0" {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
        let mut m = BTreeMap::new();
        for line in self
            // ib's statements only: the waiting above and psql's own run elsewhere.
            .psql(
                "SELECT calls, regexp_replace(query, '\\s+', ' ', 'g') FROM pg_stat_statements \
                 WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'ib')",
            )
            .lines()
        {
            let (n, q) = line.split_once('\t').unwrap();
            *m.entry(normalise(q)).or_insert(0) += n.parse::<u64>().unwrap();
        }
        let commits = self
            .psql_in(
                "postgres",
                "SELECT xact_commit FROM pg_stat_database WHERE datname = 'ib'",
            )
            .trim()
            .parse()
            .unwrap();
        (m, Some(commits))
    }

    fn counts_every_begin(&self) -> bool {
        false
    }

    fn sysbench_args(&self) -> Vec<String> {
        vec![
            "--db-driver=pgsql".into(),
            "--pgsql-host=127.0.0.1".into(),
            format!("--pgsql-port={}", self.port),
            "--pgsql-user=dbperf".into(),
            "--pgsql-db=ib".into(),
        ]
    }

    fn instance(&self) -> &Path {
        &self.dir
    }
}

struct Maria {
    port: u16,
    /// The instance's directory: the client reads its user and password from `client.cnf`.
    dir: PathBuf,
}

impl Maria {
    fn mysql(&self, sql: &str) -> String {
        let cnf = format!("--defaults-file={}", self.dir.join("client.cnf").display());
        shell(Command::new("mysql").args([
            cnf.as_str(),
            "-h",
            "127.0.0.1",
            "-P",
            &self.port.to_string(),
            "-u",
            "root",
            "-N",
            "-B",
            "-e",
            sql,
            "ib",
        ]))
    }
}

impl Server for Maria {
    fn reset(&self) {
        self.mysql(
            "SET GLOBAL log_output = 'TABLE'; SET GLOBAL general_log = ON; \
             TRUNCATE mysql.general_log",
        );
    }

    fn counts(&self) -> (BTreeMap<String, u64>, Option<u64>) {
        let rows = self.mysql(
            "SET GLOBAL general_log = OFF; SELECT command_type, \
             REPLACE(REPLACE(REPLACE(argument, '\\n', ' '), '\\r', ' '), '\\t', ' ') \
             FROM mysql.general_log",
        );
        let mut m = BTreeMap::new();
        for line in rows.lines() {
            let (cmd, arg) = line.split_once('\t').unwrap_or((line, ""));
            *m.entry(format!("{cmd}: {}", normalise(arg))).or_insert(0) += 1;
        }
        (m, None)
    }

    fn counts_every_begin(&self) -> bool {
        true
    }

    fn sysbench_args(&self) -> Vec<String> {
        vec![
            "--db-driver=mysql".into(),
            "--mysql-host=127.0.0.1".into(),
            format!("--mysql-port={}", self.port),
            "--mysql-user=root".into(),
            // sysbench's MySQL driver reads no option file: the password goes on its command
            // line here, in a test only.
            format!("--mysql-password={}", instance_password(&self.dir)),
            "--mysql-db=ib".into(),
        ]
    }

    fn instance(&self) -> &Path {
        &self.dir
    }
}

fn sysbench(s: &dyn Server, script: &str, extra: &str, command: &str) -> String {
    let mut c = Command::new("sysbench");
    c.env("PGPASSFILE", s.instance().join("pgpass"))
        .args(s.sysbench_args())
        .arg("--tables=1")
        .arg(format!("--table-size={ROWS}"))
        .arg("--rand-type=uniform")
        .arg(format!("--events={SB_EVENTS}"))
        .arg("--time=0")
        .arg("--threads=1")
        .args(extra.split_whitespace())
        .arg(format!("/usr/share/sysbench/{script}.lua"))
        .arg(command);
    shell(&mut c)
}

/// Runs every case with sysbench and with dbperf on the same table and compares what the
/// server counted per event.
fn fidelity(s: &dyn Server, toml: &Path, tmp: &Path) -> Vec<String> {
    sysbench(s, "oltp_read_only", "", "prepare");
    let mut report = Vec::new();
    for (i, &(script, extra, test)) in CASES.iter().enumerate() {
        s.reset();
        sysbench(s, script, extra, "run");
        let (sb_counts, sb_commits) = s.counts();
        let sb = per_event(&sb_counts, SB_EVENTS);

        s.reset();
        let out = tmp.join(format!("r{i}"));
        let o = run_reaching(
            s.instance(),
            &[
                "run",
                "--suite",
                "sysbench",
                "--config-file",
                toml.to_str().unwrap(),
                "--target",
                "ext",
                "--skip-load",
                "--rows",
                &ROWS.to_string(),
                "--tests",
                test,
                "--warmup-seconds",
                "0",
                "--read-seconds",
                "1",
                "--write-seconds",
                "1",
                "--out",
                out.to_str().unwrap(),
                "--no-progress",
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let (db_counts, db_commits) = s.counts();
        let (_, steps) = read_all(&target_dir(&out, "ext"));
        let x = steps[0].sysbench().unwrap();
        assert_eq!(x.errors, 0, "{test}");
        let db = per_event(&db_counts, x.events);
        assert!(
            x.events as f64 > SB_EVENTS as f64 / 10.0,
            "{test}: {} events",
            x.events
        );
        assert_eq!(
            sb.keys().collect::<Vec<_>>(),
            db.keys().collect::<Vec<_>>(),
            "{test} vs {script}: statements per event differ\nsysbench: {sb:#?}\ndbperf: {db:#?}"
        );
        for (k, r) in &sb {
            assert!(
                (db[k] - r).abs() < 1e-9,
                "{test} vs {script}: {k}: {} vs {r}",
                db[k]
            );
        }
        // The server saw every statement of an event, as often as the step file lists it.
        let listed: u64 = x.statements.iter().map(|st| st.per_event).sum();
        assert_eq!(listed, x.statements_per_event, "{test}");
        let seen: f64 = db.values().sum();
        let expected = if x.transaction && !s.counts_every_begin() {
            x.statements_per_event - 2
        } else {
            x.statements_per_event
        };
        assert!(
            (seen - expected as f64).abs() < 1e-9,
            "{test}: {seen} statements per event seen, {expected} expected: {db:#?}"
        );
        if let (Some(a), Some(b)) = (sb_commits, db_commits) {
            // Transactions per event: 1 for BEGIN ... COMMIT and for a single autocommit
            // statement. The statements that are no part of an event (the clients' setup,
            // dbperf's counter and diagnostics queries, its liveness checks, which a loaded
            // machine makes more of) each commit on their own: they are counted and taken off
            // rather than allowed for by a fixed number. A prepared BEGIN or COMMIT, counted
            // once however often it runs, is the few left.
            let rare = |counts: &BTreeMap<String, u64>, events: u64| -> u64 {
                let common = per_event(counts, events);
                counts
                    .iter()
                    .filter(|(k, _)| !common.contains_key(*k))
                    .map(|(_, n)| n)
                    .sum()
            };
            let ra = a.saturating_sub(rare(&sb_counts, SB_EVENTS)) as f64 / SB_EVENTS as f64;
            let rb = b.saturating_sub(rare(&db_counts, x.events)) as f64 / x.events as f64;
            assert!(
                (ra - rb).abs() < 0.15 + 5.0 / x.events as f64,
                "{test}: commits/event {rb} vs sysbench {ra} ({} events)",
                x.events
            );
        }
        report.push(format!("{test} = {script} {extra}: {db:?}"));
    }
    report
}

/// dbperf.toml with the pg_stat_statements config and, once the server's port is known, the
/// external target `ext` that reaches it.
fn toml_for(tmp: &Path, target: Option<(&str, u16, &str)>) -> std::path::PathBuf {
    let toml = tmp.join("dbperf.toml");
    let mut text = String::from(
        "[config.pgss]\nengine = \"postgres\"\ntext = \"shared_preload_libraries = \
         'pg_stat_statements'\\npg_stat_statements.track_utility = on\\n\"\n",
    );
    if let Some((engine, port, user)) = target {
        text.push_str(&format!(
            "\n[target.ext]\nengine = \"{engine}\"\nhost = \"127.0.0.1\"\nport = {port}\n\
             user = \"{user}\"\ndatabase = \"ib\"\npassword_env = \"{PASSWORD_ENV}\"\n"
        ));
    }
    std::fs::write(&toml, text).unwrap();
    toml
}

fn start(target: &str, dir: &Path, toml: Option<&Path>) -> u16 {
    let mut args = vec!["server", "start", target, "--dir", dir.to_str().unwrap()];
    if let Some(t) = toml {
        args.extend(["--config-file", t.to_str().unwrap()]);
    }
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("server.json")).unwrap()).unwrap();
    state["port"].as_u64().unwrap() as u16
}

#[test]
fn statements_per_event_match_sysbench_on_postgres() {
    if !(postgres() && sysbench_installed()) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pg");
    let cfg = toml_for(tmp.path(), None);
    let port = start("postgres:pgss", &dir, Some(&cfg));
    let _instance = Instance {
        target: "postgres:pgss",
        dir: &dir,
    };
    let toml = toml_for(tmp.path(), Some(("postgres", port, "dbperf")));
    let pg = Pg {
        port,
        dir: dir.clone(),
    };
    pg.psql("CREATE EXTENSION pg_stat_statements");
    let report = fidelity(&pg, &toml, tmp.path());
    assert_eq!(report.len(), CASES.len());
    eprintln!("{}", report.join("\n"));
}

#[test]
fn statements_per_event_match_sysbench_on_mariadb() {
    if !(mariadb(false) && sysbench_installed()) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ma");
    let port = start("mariadb", &dir, None);
    let _instance = Instance {
        target: "mariadb",
        dir: &dir,
    };
    let toml = toml_for(tmp.path(), Some(("mariadb", port, "root")));
    let report = fidelity(
        &Maria {
            port,
            dir: dir.clone(),
        },
        &toml,
        tmp.path(),
    );
    assert_eq!(report.len(), CASES.len());
    eprintln!("{}", report.join("\n"));
}

#[test]
fn literals_normalise_but_names_keep_their_digits() {
    assert_eq!(
        normalise("UPDATE sbtest1 SET c='1-2' WHERE id=42"),
        "UPDATE sbtest1 SET c=? WHERE id=?"
    );
    assert_eq!(
        normalise("SELECT k FROM sbtest1 WHERE k BETWEEN 12 AND 34"),
        "SELECT k FROM sbtest1 WHERE k BETWEEN ? AND ?"
    );
    assert_eq!(
        normalise("SELECT c FROM sbtest12\n  WHERE id BETWEEN $1 AND $2"),
        "SELECT c FROM sbtest12 WHERE id BETWEEN ? AND ?"
    );
}

// ---------------------------------------------------------------------------------------------
// usepk=0: id only in a secondary index

/// Runs reads and writes that find rows by id on tables loaded with `--usepk 0`, on an external
/// target reaching a managed server; returns the steps.
fn usepk0_run(tmp: &Path, engine: &str, port: u16, user: &str) -> Vec<StepFile> {
    let toml = toml_for(tmp, Some((engine, port, user)));
    let out = tmp.join("r");
    let instance = tmp.join(if engine == "postgres" { "pg" } else { "ma" });
    let o = run_reaching(
        &instance,
        &[
            "run",
            "--suite",
            "sysbench",
            "--config-file",
            toml.to_str().unwrap(),
            "--target",
            "ext",
            "--usepk",
            "0",
            "--rows",
            "2000",
            "--tests",
            "point-query,update-index,delete,insert",
            "--read-seconds",
            "1",
            "--write-seconds",
            "1",
            "--warmup-seconds",
            "0",
            "--out",
            out.to_str().unwrap(),
            "--no-progress",
            "--no-calibration",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let (run, steps) = read_all(&target_dir(&out, "ext"));
    assert_eq!(run.parameters["usepk"], 0);
    for s in &steps[1..] {
        assert_eq!(s.status, "ok", "{}: {:?}", s.step, s.error);
        assert!(s.sysbench().unwrap().events > 0, "{}", s.step);
    }
    steps
}

#[test]
fn usepk_0_keeps_id_in_a_secondary_index_on_postgres() {
    if !postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pg");
    let port = start("postgres", &dir, None);
    let _instance = Instance {
        target: "postgres",
        dir: &dir,
    };
    usepk0_run(tmp.path(), "postgres", port, "dbperf");
    let pg = Pg {
        port,
        dir: dir.clone(),
    };
    let pk =
        "SELECT count(*) FROM pg_constraint WHERE conrelid = 'sbtest1'::regclass AND contype = 'p'";
    assert_eq!(pg.psql(pk).trim(), "0");
    let indexes = "SELECT indexname || ' ' || indexdef FROM pg_indexes WHERE tablename = 'sbtest1' ORDER BY 1";
    let got = pg.psql(indexes);
    assert!(
        got.contains("xid1 CREATE INDEX xid1 ON public.sbtest1 USING btree (id)"),
        "{got}"
    );
    assert!(got.contains("k_1 "), "{got}");
}

#[test]
fn usepk_0_keeps_id_in_a_secondary_index_on_mariadb() {
    if !mariadb(false) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ma");
    let port = start("mariadb", &dir, None);
    let _instance = Instance {
        target: "mariadb",
        dir: &dir,
    };
    usepk0_run(tmp.path(), "mariadb", port, "root");
    let got = Maria {
        port,
        dir: dir.clone(),
    }
    .mysql(
        "SELECT index_name, column_name, non_unique FROM information_schema.statistics \
         WHERE table_schema = 'ib' AND table_name = 'sbtest1' ORDER BY 1",
    );
    assert_eq!(
        got.trim(),
        "id\tid\t1\nk_1\tk\t1",
        "no PRIMARY, id in a secondary KEY"
    );
}
