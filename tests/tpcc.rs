//! TPC-C on real SQLite and on a PostgreSQL 15 that dbperf starts itself: one warehouse, a few
//! seconds, every consistency condition of the specification held after the run, every New-Order
//! counted as committed in the database, and the figures computed from what was counted. The
//! checks themselves are shown to fail on a database broken on purpose.

use crate::common;

use std::path::Path;

use common::*;
use dbperf::results::StepFile;

/// A one-warehouse run of `connections` on `target`; its run steps.
fn smoke(target: &str, name: &str, connections: &str, out: &Path, extra: &[&str]) -> Vec<StepFile> {
    let mut args = vec![
        "run",
        "--suite",
        "tpcc",
        "--preset",
        "smoke",
        "--run-seconds",
        "3",
        "--connections",
        connections,
        "--target",
        target,
        "--out",
        out.to_str().unwrap(),
        "--no-progress",
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let (run, steps) = read_all(&target_dir(out, name));
    assert_eq!(run.status, "ok");
    assert_eq!(run.suite.name(), "tpcc");
    assert_eq!(steps[0].step, "load");
    // One warehouse: 100k items and stock rows, 30k customers, history rows and orders, 9k
    // new orders and 300k order lines (10 an order on average).
    let loaded = steps[0].ops["insert"].rows;
    assert!((570_000..=630_000).contains(&loaded), "{loaded}");
    check_cost_interval(&steps);
    steps.into_iter().skip(1).collect()
}

/// What every run step must show, whatever the engine.
fn check_step(s: &StepFile) {
    assert_eq!(s.status, "ok", "{}: {:?}", s.step, s.error);
    let t = s.tpcc().expect("a run step has its TPC-C figures");
    let held: Vec<(u8, bool)> = t
        .consistency
        .iter()
        .map(|c| (c.condition, c.held))
        .collect();
    assert_eq!(held.len(), 11, "{held:?}");
    assert!(held.iter().all(|(_, h)| *h), "{:#?}", t.consistency);
    assert_eq!(t.new_orders_in_database, Some(t.new_orders_step), "{t:#?}");
    assert!(t.new_orders > 0);
    // The headline is New-Orders committed per minute of measured time.
    assert_eq!(s.headline.metric, "nopm");
    let nopm = t.new_orders as f64 * 60.0 / t.measured_s;
    assert!(
        (t.nopm - nopm).abs() <= nopm * 1e-3 + 0.01,
        "{} vs {nopm}",
        t.nopm
    );
    assert_eq!(s.headline.value, t.nopm);
    let tx = &t.transactions;
    assert_eq!(tx.len(), 5);
    let ended: u64 = tx.values().map(|x| x.count).sum();
    // measured_s is rounded to the millisecond: the rates agree to a part in a thousand.
    let tpm = ended as f64 * 60.0 / t.measured_s;
    assert!((t.tpm - tpm).abs() <= tpm * 1e-3, "{} vs {tpm}", t.tpm);
    assert_eq!(tx["new_order"].count, t.new_orders + t.rolled_back);
    // Statements per transaction, BEGIN and COMMIT included: Stock-Level always 4; Delivery 2 +
    // 7 per district while every district has undelivered orders (900 each after the load).
    let spt = |k: &str| tx[k].statements_per_transaction.unwrap();
    assert_eq!(spt("stock_level"), 4.0);
    assert_eq!(spt("delivery"), 72.0);
    // New-Order: 7 + 4 per line, 5 to 15 lines; Order-Status 5 or 6; Payment 9 to 12.
    assert!(
        (27.0..=67.0).contains(&spt("new_order")),
        "{}",
        spt("new_order")
    );
    assert!((5.0..=6.0).contains(&spt("order_status")));
    assert!((9.0..=12.0).contains(&spt("payment")));
    for k in [
        "new_order",
        "payment",
        "order_status",
        "delivery",
        "stock_level",
    ] {
        assert!(s.ops[k].count > 0 || k == "delivery", "{k}");
    }
}

#[test]
fn one_warehouse_on_sqlite_passes_every_consistency_check() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let work = tmp.path().join("w");
    let steps = smoke(
        "sqlite",
        "sqlite.wal-normal",
        "1",
        &out,
        &["--work-dir", work.to_str().unwrap()],
    );
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].step, "run");
    check_step(&steps[0]);
    let t = steps[0].tpcc().unwrap();
    assert_eq!(
        (t.mix.as_str(), t.warehouses, t.connections),
        ("standard", 1, 1)
    );
    // The standard mix: about 45% New-Order, 43% Payment.
    let share = t.transactions["new_order"].share;
    assert!((0.38..=0.52).contains(&share), "{share}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("## TPC-C") && md.contains("all 11 held"),
        "{md}"
    );

    // The checks fail where the data breaks them: a warehouse's YTD off by a cent breaks
    // conditions 1 and 8; an order line removed breaks 4 and 6.
    let db = rusqlite::Connection::open(work.join("sqlite.wal-normal").join("ib.sqlite")).unwrap();
    db.execute_batch(
        "UPDATE warehouse SET w_ytd = w_ytd + 0.01; \
         DELETE FROM order_line WHERE ol_o_id = 1 AND ol_d_id = 1 AND ol_number = 1;",
    )
    .unwrap();
    drop(db);
    let dbms = dbperf::dbms::open_embedded(
        &dbperf::dbms::EmbeddedConfig {
            engine: dbperf::engines::Engine::Sqlite,
            config_name: "wal-normal",
            text: None,
            settings: &[],
        },
        &work.join("sqlite.wal-normal"),
        dbperf::dbms::Timeouts::default(),
    )
    .unwrap();
    let checks = dbperf::workload::tpcc::check::run(&dbms).unwrap();
    let broken: Vec<u8> = checks
        .iter()
        .filter(|c| !c.held)
        .map(|c| c.condition)
        .collect();
    assert_eq!(broken, [1, 4, 6, 8], "{checks:#?}");
    assert!(checks.iter().all(|c| c.error.is_none()));
}

#[test]
fn one_warehouse_on_managed_postgres_passes_every_consistency_check() {
    if !postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    // Two levels: a sweep, and two connections on one warehouse collide (serialization
    // failures under REPEATABLE READ), which are retried, never fatal.
    let steps = smoke(
        "postgres",
        "postgres.default",
        "1,2",
        &out,
        &["--mix", "sysbench"],
    );
    assert_eq!(
        steps.iter().map(|s| s.step.as_str()).collect::<Vec<_>>(),
        ["run_connections=1", "run_connections=2"]
    );
    for s in &steps {
        check_step(s);
        assert_eq!(s.tpcc().unwrap().mix, "sysbench");
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("Scaling: TPC-C by connections"), "{md}");
}
