//! The sysbench suite end to end on embedded SQLite, through the real binary: the whole current
//! run order on small tables, the 2024 order's one-pass scan, what the writes do to the rows,
//! prepared statements off, several threads and tables, and bad input.

use crate::common;

use std::path::Path;

use common::*;
use dbperf::results::StepFile;

fn sb(args: &[&str]) -> std::process::Output {
    let mut a = vec!["run", "--suite", "sysbench", "--no-progress"];
    a.extend_from_slice(args);
    run(&a)
}

fn step<'a>(steps: &'a [StepFile], label: &str) -> &'a StepFile {
    steps
        .iter()
        .find(|s| s.step == label)
        .unwrap_or_else(|| panic!("no step {label}"))
}

fn sqlite(work: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(work.join("sqlite.wal-normal").join("ib.sqlite")).unwrap()
}

fn query_i64(c: &rusqlite::Connection, sql: &str) -> i64 {
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// The quick preset runs the load and the whole current order; every step file says what ran,
/// in sysbench's terms, and the row counts follow what the writes report.
#[test]
fn quick_runs_the_current_order_with_sysbench_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = sb(&["--out", out.to_str().unwrap(), "--count-rows"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let (run, steps) = read_all(&target_dir(&out, "sqlite.wal-normal"));
    check_cost_interval(&steps);
    assert_eq!(run.status, "ok");
    assert_eq!(run.suite.name(), "sysbench");
    assert_eq!(run.parameters["run_order"], "current");
    assert_eq!(run.parameters["rows"], 10_000);
    assert_eq!(run.steps_planned.len(), 39, "load + 38 runs");
    assert_eq!(steps.len(), 39);
    let labels: Vec<&str> = steps.iter().map(|s| s.step.as_str()).collect();
    assert_eq!(
        labels[..4],
        [
            "load",
            "point-query.warm_range=100",
            "scan.warmpre_range=100",
            "point-query.pre_range=100"
        ]
    );
    assert_eq!(labels.last(), Some(&"insert_range=100"));

    let load = &steps[0];
    assert_eq!(load.ops["insert"].rows, 10_000);
    assert_eq!(load.ops["index"].count, 1);
    assert!(load.sysbench().is_none());
    assert_eq!(load.table_rows.as_ref().unwrap()["sbtest1"], 10_000);

    let reported: Vec<&StepFile> = steps[1..]
        .iter()
        .filter(|s| s.sysbench().unwrap().reported)
        .collect();
    assert_eq!(reported.len(), 34);
    assert_eq!(
        reported
            .iter()
            .filter(|s| !s.step.contains(".pre_"))
            .count(),
        32
    );
    for s in &steps[1..] {
        assert_eq!(s.status, "ok", "{}: {:?}", s.step, s.error);
        let x = s.sysbench().unwrap();
        assert_eq!(x.label, s.step);
        assert!(x.events > 0, "{}", s.step);
        assert_eq!(x.errors, 0, "{}", s.step);
        assert_eq!(s.ops["event"].count, x.events, "{}", s.step);
        assert_eq!(x.queries, x.events * x.statements_per_event, "{}", s.step);
        assert_eq!(x.reads + x.writes + x.other, x.queries, "{}", s.step);
        let qps = x.queries as f64 / s.duration_s;
        assert!((x.queries_per_s / qps - 1.0).abs() < 0.01, "{}", s.step);
        if x.test == "scan" {
            assert_eq!(s.headline.metric, "scan_rows_per_s");
            let mean_s = s.ops["event"].latency_us.mean / 1e6;
            let expect = 10_000.0 / mean_s;
            assert!((s.headline.value / expect - 1.0).abs() < 0.01, "{}", s.step);
        } else {
            assert_eq!(s.headline.metric, "queries_per_s", "{}", s.step);
            assert_eq!(s.headline.value, x.queries_per_s, "{}", s.step);
        }
        let series = std::fs::read_to_string(
            target_dir(&out, "sqlite.wal-normal")
                .join("steps")
                .join(s.series_file.as_ref().unwrap()),
        )
        .unwrap();
        assert!(
            series.lines().next().unwrap().ends_with(",queries_per_s"),
            "{}",
            s.step
        );
        assert!(series.lines().count() >= 2, "{}", s.step);
    }

    let ro = step(&steps, "read-only_range=100")
        .sysbench()
        .cloned()
        .unwrap();
    assert_eq!(
        (ro.group.as_str(), ro.statements_per_event, ro.transaction),
        ("range_agg", 16, true)
    );
    assert_eq!(ro.statements[0].sql, "BEGIN");
    assert_eq!(ro.statements[1].sql, "SELECT c FROM sbtest1 WHERE id=?");
    assert_eq!(ro.statements[1].per_event, 10);
    assert_eq!(
        ro.statements[2].sql,
        "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?"
    );
    let pq = step(&steps, "point-query_range=100")
        .sysbench()
        .cloned()
        .unwrap();
    assert_eq!((pq.group.as_str(), pq.statements_per_event), ("point", 1));
    let warm = step(&steps, "point-query.warm_range=100");
    assert!(!warm.sysbench().unwrap().reported);
    let c = warm.cleanup.as_ref().expect("postwrite after the load");
    assert!(c.actions.contains(&"ANALYZE".to_string()), "{c:?}");
    assert!(step(&steps, "read-write_range=100").cleanup.is_some());
    assert!(step(&steps, "read-write_range=10").cleanup.is_none());
    let ins = step(&steps, "insert_range=100")
        .sysbench()
        .cloned()
        .unwrap();
    assert_eq!(
        ins.statements[0].sql,
        "INSERT INTO sbtest1 (k, c, pad) VALUES (?, ?, ?)"
    );
    assert!(!ins.statements[0].prepared, "oltp_insert uses con:query()");
    assert_eq!(
        step(&steps, "update-zipf_range=100")
            .sysbench()
            .unwrap()
            .keys,
        "zipfian"
    );
    assert_eq!(
        step(&steps, "scan_range=100").sysbench().unwrap().group,
        "range"
    );
    assert_eq!(
        step(&steps, "update-one_range=100")
            .sysbench()
            .unwrap()
            .group_2024,
        "write"
    );

    // Rows: writes before `delete` delete and re-insert the same ids; delete removes what it
    // reports; insert adds one row per event.
    let rows = |label: &str| step(&steps, label).table_rows.as_ref().unwrap()["sbtest1"];
    for l in [
        "write-only_range=10000",
        "read-write_range=100",
        "range-notcovered-si_range=100",
    ] {
        assert_eq!(rows(l), 10_000, "{l}");
    }
    let deleted = step(&steps, "delete_range=100").ops["event"].rows;
    assert!(deleted > 0);
    assert_eq!(rows("delete_range=100"), 10_000 - deleted);
    let inserted = step(&steps, "insert_range=100").sysbench().unwrap().events;
    assert_eq!(rows("insert_range=100"), 10_000 - deleted + inserted);
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(summary.contains("read-only_range=10000"), "{summary}");
    for s in &steps {
        let hw = s.hardware.as_ref().expect("hardware cost");
        assert!(hw.op_count > 0.0, "{}", s.step);
    }
    let ro = step(&steps, "read-only_range=100");
    let hw = ro.hardware.as_ref().unwrap();
    assert_eq!(hw.op, "query");
    assert_eq!(hw.op_count, ro.sysbench().unwrap().queries as f64);
    // 1 s per test: the per-second QPS percentiles need 10 seconds.
    assert_eq!(ro.interval_rate_percentiles.len(), 5);
    assert!(ro.interval_rate_percentiles.values().all(|v| v.is_none()));
    let scan = step(&steps, "scan_range=100");
    assert!(
        scan.interval_rate_percentiles.is_empty(),
        "scans are not a rate of events"
    );

    // The report reads the groups the step files state and leaves out the load and the
    // warm-ups, as the original's reports do.
    let rep = tmp.path().join("rep");
    let o = common::run(&[
        "report",
        target_dir(&out, "sqlite.wal-normal").to_str().unwrap(),
        "--out",
        rep.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(rep.join("report.json")).unwrap()).unwrap();
    let keys = |id: &str| -> Vec<String> {
        let t = j["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .unwrap_or_else(|| panic!("no table {id}"));
        t["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["key"].as_str().unwrap().to_string())
            .collect()
    };
    let point = keys("sysbench-point-qps");
    assert!(
        point.contains(&"point-query_range=100".to_string()),
        "{point:?}"
    );
    // The current run order's report leaves the .pre runs out, as the original's does.
    assert!(!point.iter().any(|k| k.contains(".pre_")), "{point:?}");
    assert!(!point.iter().any(|k| k.contains(".warm")), "{point:?}");
    let range = keys("sysbench-range-qps");
    assert!(range.contains(&"scan_range=100".to_string()), "{range:?}");
    assert!(!range.iter().any(|k| k.contains("warm")), "{range:?}");
    let text = j.to_string();
    assert!(
        !text.contains("do not name the group"),
        "groups come from the results"
    );
    assert!(
        !text.contains("\"load\""),
        "the load is not a microbenchmark"
    );
}

/// The load is the same for the same seed; update-index adds one to k once per event; the
/// hot rows of hot-points are the middle 100; --skip-load continues on kept tables.
#[test]
fn writes_do_what_they_report_on_kept_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("w");
    let w = work.to_str().unwrap();
    let o = sb(&[
        "--out",
        tmp.path().join("r1").to_str().unwrap(),
        "--work-dir",
        w,
        "--tests",
        "hot-points",
        "--k-values",
        "special",
        "--rows",
        "2000",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let (_, steps) = read_all(&target_dir(&tmp.path().join("r1"), "sqlite.wal-normal"));
    let hot = step(&steps, "hot-points_range=100");
    // Ids 1001..1100 all exist: 100 rows per event.
    assert_eq!(hot.ops["event"].rows, hot.ops["event"].count * 100);
    let (sum_k, max_k) = {
        let c = sqlite(&work);
        let k = query_i64(&c, "SELECT sum(k) FROM sbtest1");
        let max = query_i64(&c, "SELECT max(k) FROM sbtest1");
        assert_eq!(query_i64(&c, "SELECT count(*) FROM sbtest1"), 2000);
        assert_eq!(query_i64(&c, "SELECT min(length(c)) FROM sbtest1"), 119);
        assert_eq!(query_i64(&c, "SELECT max(length(pad)) FROM sbtest1"), 59);
        assert_eq!(
            query_i64(&c, "SELECT count(*) FROM sqlite_master WHERE name = 'k_1'"),
            1
        );
        // sysbench 1.0's "special" k: three quarters within 1% around the middle.
        let middle = query_i64(
            &c,
            "SELECT count(*) FROM sbtest1 WHERE k BETWEEN 990 AND 1011",
        );
        assert!(middle > 1400, "{middle}");
        (k, max)
    };
    assert!(max_k <= 2000);

    let o = sb(&[
        "--out",
        tmp.path().join("r2").to_str().unwrap(),
        "--work-dir",
        w,
        "--skip-load",
        "--tests",
        "update-index",
        "--rows",
        "2000",
        "--warmup-seconds",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let (run, steps) = read_all(&target_dir(&tmp.path().join("r2"), "sqlite.wal-normal"));
    assert_eq!(run.steps_planned, ["update-index_range=100"]);
    let events = steps[0].sysbench().unwrap().events as i64;
    assert_eq!(
        steps[0].ops["event"].rows as i64, events,
        "one row per update"
    );
    let c = sqlite(&work);
    assert_eq!(query_i64(&c, "SELECT sum(k) FROM sbtest1"), sum_k + events);
    drop(c);

    // Same seed, same load.
    let work2 = tmp.path().join("w2");
    let o = sb(&[
        "--out",
        tmp.path().join("r3").to_str().unwrap(),
        "--work-dir",
        work2.to_str().unwrap(),
        "--tests",
        "hot-points",
        "--k-values",
        "special",
        "--rows",
        "2000",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        query_i64(&sqlite(&work2), "SELECT sum(k) FROM sbtest1"),
        sum_k
    );
}

/// The 2024 order's scan is one pass per table, one thread each; several threads share tables
/// in the other tests; with prepared statements off everything goes as SQL text.
#[test]
fn the_2024_scan_threads_tables_and_text_statements() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = sb(&[
        "--out",
        out.to_str().unwrap(),
        "--run-order",
        "2024",
        "--tables",
        "2",
        "--threads",
        "3",
        "--rows",
        "3000",
        "--prepared",
        "off",
        "--tests",
        "scan,read-only.pre_range=10,update-nonindex,read-write_range=10,random-points.pre_range=25",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let (run, steps) = read_all(&target_dir(&out, "sqlite.wal-normal"));
    assert_eq!(run.status, "ok");
    assert_eq!(run.parameters["run_order"], "2024");
    assert_eq!(
        run.steps_planned,
        [
            "load",
            "random-points.pre_range=25",
            "read-only.pre_range=10",
            "update-nonindex_range=100",
            "read-write_range=10",
            "scan_range=100",
        ]
    );
    assert_eq!(steps[0].ops["insert"].rows, 6000);
    assert_eq!(steps[0].ops["index"].count, 2);
    let rp = steps[1].sysbench().unwrap();
    assert!(rp.custom_range && rp.range == 25);
    assert_eq!(
        rp.statements[0].sql,
        format!(
            "SELECT c FROM sbtest1 WHERE id IN ({})",
            vec!["?"; 25].join(", ")
        )
    );
    for s in &steps[1..] {
        assert_eq!(s.status, "ok", "{}: {:?}", s.step, s.error);
        let x = s.sysbench().unwrap();
        assert!(!x.prepared);
        assert!(x.statements.iter().all(|st| !st.prepared), "{}", s.step);
    }
    assert_eq!(steps[2].sysbench().unwrap().threads, 3);
    let scan = step(&steps, "scan_range=100");
    let x = scan.sysbench().unwrap();
    assert_eq!((x.threads, x.events, x.planned_s), (2, 2, None));
    // rows of both tables / the step's time, which is rounded to the millisecond.
    let v = scan.headline.value;
    assert!(
        (v * scan.duration_s - 6000.0).abs() <= 0.0005 * v + 1.0,
        "{v} rows/s over {} s",
        scan.duration_s
    );
}

#[test]
fn bad_input_is_one_sentence_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o_ = out.to_str().unwrap();
    for (args, words) in [
        (
            vec!["--tests", "no-such-test"],
            "unknown microbenchmark 'no-such-test'",
        ),
        (
            vec!["--tests", "point-query_range=50"],
            "point-query takes no range",
        ),
        (
            vec!["--tests", "read-only_range=0"],
            "positive whole number",
        ),
        (
            vec!["--tests", "read-only_range=99999"],
            "wider than the 10000 rows",
        ),
        (
            vec!["--rows", "5", "--threads", "8"],
            "more threads than the 5 rows",
        ),
        (vec!["--skip-load"], "--skip-load needs table sbtest1"),
        (vec!["--preset", "cached-small"], "unknown sysbench preset"),
        (vec!["--usepk", "0"], "--usepk 0 needs a server target"),
        (vec!["--rows-l-i0", "10"], "Insert Benchmark flag"),
        // Given, though it is the default: the flag was typed with the wrong suite.
        (
            vec!["--delete-form", "current"],
            "--delete-form is an Insert Benchmark flag",
        ),
    ] {
        let mut a = vec!["--out", o_];
        a.extend(args.iter());
        let o = sb(&a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(words), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!out.exists(), "{args:?} left {}", out.display());
    }
    let o = run(&["run", "--tables", "2", "--out", o_]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("add --suite sysbench"));
    let o = sb(&["--list", "--run-order", "2024"]);
    assert_eq!(o.status.code(), Some(0));
    let list = String::from_utf8_lossy(&o.stdout);
    assert!(list.contains("point-query.warm_range=100 (not reported) + postwrite"));
    assert!(list.contains("42 reported"), "{list}");
}

/// With a warm-up, the step's cost covers the measured time only (its interval starts at the
/// warm-up's end, and a figure per statement is the interval's rate over the measured QPS), and
/// the per-second QPS percentiles leave the warm-up's seconds out.
#[test]
fn cost_and_interval_rates_leave_the_warmup_out() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = sb(&[
        "--out",
        out.to_str().unwrap(),
        "--tests",
        "point-query",
        "--rows",
        "2000",
        "--warmup-seconds",
        "2",
        "--read-seconds",
        "10",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let (_, steps) = read_all(&target_dir(&out, "sqlite.wal-normal"));
    let s = step(&steps, "point-query_range=100");
    let x = s.sysbench().unwrap();
    assert!(x.warmup_events > 0);
    let hw = s.hardware.as_ref().unwrap();
    // Measured time is 10 s; the interval starts up to 0.25 s (plus a query, plus however late
    // a busy host runs the sampler) after the warm-up.
    assert!(
        hw.interval_s > s.duration_s - 1.5 && hw.interval_s <= s.duration_s + 0.5,
        "interval {} s, measured {} s",
        hw.interval_s,
        s.duration_s
    );
    // The operations counted over the interval, against the step's mean rate over it: equal
    // where the rate is even, within what the interval's edges can hold of an uneven one.
    let want = x.queries as f64 * hw.interval_s / s.duration_s;
    assert!(
        (hw.op_count - want).abs() <= want * 0.05,
        "{} vs {want}",
        hw.op_count
    );
    let o_s = hw.sysbench_row.o_s;
    assert!(
        (o_s - x.queries_per_s).abs() <= x.queries_per_s * 0.05,
        "{o_s} vs {}",
        x.queries_per_s
    );

    let p = &s.interval_rate_percentiles;
    let names: Vec<&str> = p.keys().map(|k| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "qps_p50_interval",
            "qps_p75_interval",
            "qps_p90_interval",
            "qps_p95_interval",
            "qps_p99_interval"
        ]
    );
    let p50 = p["qps_p50_interval"].expect("10 measured seconds");
    let p99 = p["qps_p99_interval"].unwrap();
    // Descending order: p99 is a low second; no warm-up second (0 events) among them.
    assert!(p99 > 0.0 && p99 <= p50, "{p99} {p50}");
    assert!(
        p50 > x.queries_per_s * 0.25 && p50 < x.queries_per_s * 4.0,
        "{p50} vs {}",
        x.queries_per_s
    );
}

/// The original needs sysbench 1.1, whose default distribution (which its `prepare` uses for
/// k) is uniform: so is dbperf's.
#[test]
fn k_values_are_uniform_by_default_as_sysbench_1_1_loads_them() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("w");
    let out = tmp.path().join("r");
    let o = sb(&[
        "--out",
        out.to_str().unwrap(),
        "--work-dir",
        work.to_str().unwrap(),
        "--tests",
        "point-query",
        "--rows",
        "2000",
        "--read-seconds",
        "1",
        "--warmup-seconds",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let (run, _) = read_all(&target_dir(&out, "sqlite.wal-normal"));
    assert_eq!(run.parameters["k_values"], "uniform");
    let c = sqlite(&work);
    // Uniform over [1, 2000]: about 1% of the rows in the middle 1%, not three quarters.
    let middle = query_i64(
        &c,
        "SELECT count(*) FROM sbtest1 WHERE k BETWEEN 990 AND 1011",
    );
    assert!(middle < 100, "{middle}");
    let high = query_i64(&c, "SELECT count(*) FROM sbtest1 WHERE k > 1500");
    assert!((350..650).contains(&high), "{high}");
}
