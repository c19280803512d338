//! The Insert Benchmark on real PostgreSQL and MariaDB (InnoDB and MyRocks) that dbperf starts
//! itself, an external server, and the ways a server can fail. Needs the Debian packages that
//! scripts/install-test-deps.sh installs; without them these tests are skipped locally and fail
//! in CI.

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::*;

/// Runs the quick preset on a managed target and checks every table's rows after every step
/// against the inserts and deletes the step files report.
fn quick_on(target: &str, name: &str, version: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = run(&[
        "run",
        "--target",
        target,
        "--count-rows",
        "--out",
        out.to_str().unwrap(),
        "--no-progress",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let (run, steps) = read_all(&target_dir(&out, name));
    check_cost_interval(&steps);
    assert_eq!(run.status, "ok");
    assert!(
        run.target.version.contains(version),
        "{}",
        run.target.version
    );
    let server = run.target.server.as_ref().expect("server record");
    assert!(
        server.managed && server.connection.starts_with("tcp 127.0.0.1:"),
        "{server:?}"
    );
    assert!(
        server
            .stopped
            .as_deref()
            .unwrap_or("")
            .starts_with("stopped"),
        "{server:?}"
    );
    assert!(
        !run.target.config_text.to_lowercase().contains("password ="),
        "no secrets in results"
    );
    if run.target.engine == "postgres" {
        // Checksums pinned off on every version (18 would turn them on), and shown.
        assert!(
            run.target.config_text.contains("data_checksums = off"),
            "{}",
            run.target.config_text
        );
        assert!(server.initdb.is_some(), "{server:?}");
    }
    assert_eq!(steps.len(), 10);
    let mut expected = 0i64;
    for s in &steps {
        assert_eq!(s.status, "ok", "{}: {:?}", s.step, s.error);
        for (kind, op) in &s.ops {
            assert!(op.count > 0, "{} {kind}", s.step);
            assert_eq!(op.errors, 0, "{} {kind}: {:?}", s.step, op.error_samples);
        }
        expected += net_rows(std::slice::from_ref(s));
        let rows = s.table_rows.as_ref().expect("--count-rows");
        assert_eq!(rows["pi1"] as i64, expected, "{}: rows in pi1", s.step);
    }
    assert_eq!(steps[0].ops["insert"].rows, 100_000);
    assert!(steps[3].cleanup.as_ref().unwrap().error.is_none());
    // Every step keeps the engine's own status reports beside its file, as the original does.
    let (report, words) = match target {
        "postgres" => ("pg_stat_user_tables", "\"relname\":\"pi1\""),
        "mariadb" => ("innodb_status", "BUFFER POOL AND MEMORY"),
        _ => ("rocksdb_status", "Compaction Stats"),
    };
    for s in &steps {
        let dir = target_dir(&out, name).join("steps");
        let file = format!("{}.{report}.txt", s.step);
        assert!(
            s.diagnostics.contains(&file),
            "{}: {:?}",
            s.step,
            s.diagnostics
        );
        let text = std::fs::read_to_string(dir.join(&file)).unwrap();
        assert!(
            text.contains(words),
            "{file}: {}",
            &text[..text.len().min(2000)]
        );
        if run.target.engine != "postgres" {
            let status = std::fs::read_to_string(dir.join(format!("{}.global_status.txt", s.step)));
            assert!(status.unwrap().contains("Com_insert\t"), "{}", s.step);
        }
    }
    // What the steps cost: the server's process tree did the work, dbperf much less of it.
    let (mut server_cpu, mut client_cpu) = (0.0, 0.0);
    for s in &steps {
        let h = s.hardware.as_ref().expect("hardware");
        let srv = h
            .server
            .as_ref()
            .expect("a managed server's CPU is measured");
        server_cpu += srv.user_s + srv.system_s;
        let cl = h.client.as_ref().unwrap();
        client_cpu += cl.user_s + cl.system_s;
        assert!(
            srv.rss_kb > 1024,
            "{}: server RSS {} KiB",
            s.step,
            srv.rss_kb
        );
        assert!(h.ibench_row.rss.unwrap() > 0.0);
        assert!(h.data_dir_bytes.unwrap() > 1 << 20, "{}", s.step);
    }
    assert!(server_cpu > 0.5, "server CPU over the run: {server_cpu} s");
    // The DBMS's own counters: the load wrote its log, and the size is known.
    let c = steps[0].dbms.as_ref().expect("dbms counters");
    assert!(c.error.is_none(), "{:?}", c.error);
    let log = c.write_amplification.log_bytes.expect("log bytes");
    assert!(log > 1e6, "{}: log bytes {log}", steps[0].step);
    assert!(
        steps[0]
            .hardware
            .as_ref()
            .unwrap()
            .ibench_row
            .dbgb1
            .unwrap()
            > 0.0
    );
    assert!(c.write_amplification.amplification.is_some());
    if target.starts_with("mariadb") {
        // InnoDB's pages are counted at the server's page size, which dbperf reads.
        assert_eq!(c.end.get("innodb_page_size"), Some(&16384.0));
        assert!(
            !c.write_amplification
                .notes
                .iter()
                .any(|n| n.contains("innodb_page_size unknown")),
            "{:?}",
            c.write_amplification.notes
        );
    }
    assert!(
        client_cpu < server_cpu,
        "client {client_cpu} s vs server {server_cpu} s"
    );
    let datadir = server.datadir.as_ref().unwrap();
    assert!(
        processes_using(Path::new(datadir)).is_empty(),
        "server left running"
    );
    assert!(!Path::new(datadir).exists(), "work directory removed");
}

#[test]
fn quick_on_managed_postgres() {
    if postgres() {
        quick_on("postgres", "postgres.default", "PostgreSQL 15");
    }
}

#[test]
fn quick_on_managed_mariadb_innodb() {
    if mariadb(false) {
        quick_on("mariadb", "mariadb.default", "10.11");
    }
}

#[test]
fn quick_on_managed_mariadb_myrocks() {
    if mariadb(true) {
        quick_on("mariadb+rocksdb", "mariadb+rocksdb.default", "10.11");
    }
}

/// The installed PostgreSQL with the published cx9a2: its settings as published but for the
/// memory, scaled to this host's RAM, and run.json says where they came from and how they
/// were scaled.
#[test]
fn a_published_config_runs_scaled_to_the_host_and_says_where_it_came_from() {
    if !postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = run(&[
        "run",
        "--target",
        "postgres:cx9a2",
        "--steps",
        "l.i0",
        "--rows-l-i0",
        "2k",
        "--out",
        out.to_str().unwrap(),
        "--no-progress",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let (run_file, steps) = read_all(&target_dir(&out, "postgres.cx9a2"));
    assert_eq!(run_file.status, "ok");
    assert_eq!(steps.len(), 1);
    let t = &run_file.target;
    let src = t
        .config_source
        .as_ref()
        .expect("a published config's source");
    assert_eq!(src.name, "cx9a2");
    assert!(
        src.source
            .starts_with("github.com/mdcallag/mytools bench/conf/")
            && src.source.ends_with("/conf.diff.cx9a2_c8r32"),
        "{src:?}"
    );
    assert!(
        t.version
            .contains(&format!("PostgreSQL {}", src.server_version)),
        "{} / {src:?}",
        t.version
    );
    assert_eq!(src.published_host, "c8r32 (8 cores, 32 GiB RAM)");
    // This host's RAM in whole GiB (MemTotal rounded up) over the published host's 32 GiB.
    let kb: u64 = std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    let gib = kb.div_ceil(1 << 20);
    assert_eq!((src.host_memory_gib, src.scale), (gib, gib as f64 / 32.0));
    let [sb] = src.scaled.as_slice() else {
        panic!("one scaled setting: {src:?}")
    };
    assert_eq!(
        (sb.setting.as_str(), sb.published.as_str()),
        ("shared_buffers", "23GB")
    );
    assert!(
        t.config_text
            .contains(&format!("\nshared_buffers = {}\n", sb.used)),
        "{}",
        t.config_text
    );
    // The server took it: pg_settings counts 8 kB pages.
    let mib: u64 = match sb.used.strip_suffix("GB") {
        Some(g) => g.parse::<u64>().unwrap() * 1024,
        None => sb.used.trim_end_matches("MB").parse().unwrap(),
    };
    assert!(
        t.config_text
            .contains(&format!("shared_buffers = {} 8kB", mib * 128)),
        "{}",
        t.config_text
    );
    // The published settings that are not memory are given as published.
    for line in [
        "synchronous_commit = off",
        "max_wal_size = 40GB",
        "autovacuum_max_workers = 4",
    ] {
        assert!(t.config_text.contains(&format!("\n{line}\n")), "{line}");
    }
}

/// Stops an instance started with `dbperf server start`, whatever the test's outcome.
#[test]
fn external_server_is_measured_without_being_managed() {
    if !postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pg");
    let o = run(&[
        "server",
        "start",
        "postgres",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let _instance = Instance {
        target: "postgres",
        dir: &dir,
    };
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("server.json")).unwrap()).unwrap();
    let port = state["port"].as_u64().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("psql -h 127.0.0.1 -p {port}")));
    let toml = tmp.path().join("dbperf.toml");
    std::fs::write(
        &toml,
        format!("[target.ext]\nengine = \"postgres\"\nhost = \"127.0.0.1\"\nport = {port}\nuser = \"dbperf\"\ndatabase = \"ib\"\npassword_env = \"DBPERF_TEST_SERVER_PASSWORD\"\n"),
    )
    .unwrap();
    let out = tmp.path().join("r");
    let o = dbperf()
        .env("DBPERF_TEST_SERVER_PASSWORD", instance_password(&dir))
        .args([
            "run",
            "--config-file",
            toml.to_str().unwrap(),
            "--target",
            "ext",
            "--steps",
            "l.i0,l.x,qp100",
            "--rows-l-i0",
            "10k",
            "--query-seconds",
            "2",
            "--count-rows",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .expect("dbperf runs");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let (run_file, steps) = read_all(&target_dir(&out, "ext"));
    let server = run_file.target.server.unwrap();
    assert!(!server.managed);
    assert_eq!(
        server.connection,
        format!("tcp 127.0.0.1:{port} user dbperf database ib")
    );
    assert!(run_file.target.version.contains("PostgreSQL"));
    assert_eq!(
        steps[2].table_rows.as_ref().unwrap()["pi1"] as i64,
        net_rows(&steps)
    );
    // An external server: no pid and no data directory here, and the step says so.
    let h = steps[0].hardware.as_ref().unwrap();
    assert!(h.server.is_none() && h.io.is_none());
    assert!(
        h.missing.iter().any(|m| m.contains("external")),
        "{:?}",
        h.missing
    );
    assert!(h.client.is_some() && h.host.is_some());
    // dbperf did not stop a server it does not manage.
    assert!(
        !processes_using(&dir.join("data")).is_empty(),
        "external server still running"
    );
}

#[test]
fn a_config_the_server_rejects_fails_with_the_servers_own_words() {
    let tmp = tempfile::tempdir().unwrap();
    let toml = tmp.path().join("dbperf.toml");
    std::fs::write(
        &toml,
        "[config.bad]\nengine = \"postgres\"\ntext = \"no_such_setting = 1\\n\"\n\n\
         [config.badmy]\nengine = \"mariadb\"\ntext = \"no_such_option = 1\\n\"\n",
    )
    .unwrap();
    for (target, words) in [
        (
            "postgres:bad",
            "unrecognized configuration parameter \"no_such_setting\"",
        ),
        ("mariadb:badmy", "unknown variable 'no_such_option=1'"),
    ] {
        let ok = if target.starts_with("postgres") {
            postgres()
        } else {
            mariadb(false)
        };
        if !ok {
            continue;
        }
        let out = tmp.path().join(target.replace(':', "-"));
        let o = run(&[
            "run",
            "--config-file",
            toml.to_str().unwrap(),
            "--target",
            target,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(words),
            "{target}: expected the server's message in:\n{err}"
        );
        let name = target.replace(':', ".");
        let run_file = dbperf::results::read_run(&target_dir(&out, &name)).unwrap();
        assert_eq!(run_file.status, "failed");
        assert!(run_file.error.unwrap().contains(words));
    }
}

#[test]
fn a_server_killed_mid_step_fails_the_step_and_leaves_nothing_behind() {
    if !postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let child = dbperf()
        .args([
            "run",
            "--target",
            "postgres",
            "--steps",
            "l.i0,l.x,qr100,qp100",
            "--rows-l-i0",
            "20k",
            "--query-seconds",
            "60",
            "--out",
            out.to_str().unwrap(),
            "--no-progress",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let dir = target_dir(&out, "postgres.default");
    let start = Instant::now();
    // qr100 under way: its series file exists once the step begins.
    while !dir.join("steps/.qr100.series.csv.tmp").exists() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "qr100 never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(2));
    let run_file = dbperf::results::read_run(&dir).unwrap();
    let server = run_file.target.server.unwrap();
    unsafe {
        libc::kill(server.pid.unwrap() as i32, libc::SIGKILL);
    }
    let killed = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        killed.elapsed() < Duration::from_secs(40),
        "the step did not wait out its 60 s"
    );
    let (run_file, steps) = read_all(&dir);
    assert_eq!(run_file.status, "failed");
    assert_eq!(run_file.failed_step.as_deref(), Some("qr100"));
    assert_eq!(steps.len(), 3, "qp100 never started");
    assert_eq!(
        (steps[0].status.as_str(), steps[1].status.as_str()),
        ("ok", "ok")
    );
    assert_eq!(steps[2].status, "failed");
    assert!(
        steps[2].ops["query"].count > 0,
        "what qr100 did before the crash is kept"
    );
    let stopped = run_file.target.server.unwrap().stopped.unwrap();
    assert!(stopped.starts_with("exited during the run"), "{stopped}");
    assert!(
        processes_using(&tmp.path().join("r")).is_empty(),
        "no process left behind"
    );
}

#[test]
fn myrocks_without_its_plugin_and_missing_binaries_are_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run(&[
        "run",
        "--target",
        "postgres@/nonexistent/pg",
        "--out",
        tmp.path().join("r").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("holds no PostgreSQL server"));
    let o = run(&[
        "run",
        "--target",
        "mysql",
        "--out",
        tmp.path().join("r2").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = run(&[
        "run",
        "--target",
        "postgres",
        "--steps",
        "qr100",
        "--out",
        tmp.path().join("r3").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("must begin with l.i0"));
}

/// What reaches the server with each `--statement-forms`: the statement logs of PostgreSQL
/// (log_statement = all: `statement:` for text, `execute <name>:` for prepared) and MariaDB
/// (the general log: `Query` for text, `Execute` for prepared).
#[test]
fn statement_forms_send_what_the_original_sends_or_prepare_everything() {
    if !(postgres() && mariadb(false)) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let toml = tmp.path().join("dbperf.toml");
    std::fs::write(
        &toml,
        // Both extend the built-in default and change one of its settings: the later wins.
        "[config.logall]\nengine = \"postgres\"\nextends = \"default\"\ntext = \"log_statement = 'all'\\nmax_connections = 50\\n\"\ninitdb = [\"--data-checksums\"]\n\
         [config.glog]\nengine = \"mariadb\"\nextends = \"default\"\ntext = \"general_log = 1\\ngeneral_log_file = general.log\\ninnodb_buffer_pool_size = 64M\\n\"\n",
    )
    .unwrap();
    for forms in ["original", "prepared"] {
        let out = tmp.path().join(forms);
        let o = run(&[
            "run",
            "--config-file",
            toml.to_str().unwrap(),
            "--target",
            "postgres:logall",
            "--target",
            "mariadb:glog",
            "--steps",
            "l.i0,l.x,l.i1,qr100",
            "--rows-l-i0",
            "1k",
            "--rows-l-i1",
            "200",
            "--query-seconds",
            "1",
            "--statement-forms",
            forms,
            "--keep-data",
            "--out",
            out.to_str().unwrap(),
            "--no-progress",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let (run, _) = read_all(&out.join("postgres.logall"));
        assert_eq!(run.parameters["statement_forms"], forms);
        // The config's initdb options were used and recorded.
        assert!(run.target.config_text.contains("data_checksums = on"));
        assert_eq!(
            run.target.server.as_ref().unwrap().initdb,
            Some(vec!["--data-checksums".to_string()])
        );
        // The extended default's settings are there, and the one changed is the config's.
        let effective = |text: &str, line: &str| text.lines().any(|l| l.starts_with(line));
        let pg_text = &run.target.config_text;
        assert!(
            effective(pg_text, "shared_buffers = 65536 8kB"),
            "{pg_text}"
        );
        assert!(effective(pg_text, "max_connections = 50 "), "{pg_text}");
        let (my_run, _) = read_all(&out.join("mariadb.glog"));
        let my_text = &my_run.target.config_text;
        assert!(
            effective(my_text, "innodb_buffer_pool_size = 67108864"),
            "{my_text}"
        );
        assert!(effective(my_text, "innodb_doublewrite = ON"), "{my_text}");
        let pg = std::fs::read_to_string(out.join("work/postgres.logall/server/run/server.log"))
            .unwrap();
        let my =
            std::fs::read_to_string(out.join("work/mariadb.glog/server/data/general.log")).unwrap();
        let has = |log: &str, pat: &str| log.lines().any(|l| l.contains(pat));
        let prepared = forms == "prepared";
        for stmt in ["INSERT", "DELETE"] {
            assert_eq!(
                has(&pg, &format!("statement: {stmt}")),
                !prepared,
                "{forms} {stmt}"
            );
            let executed = pg
                .lines()
                .any(|l| l.contains("LOG:  execute ") && l.contains(&format!(": {stmt}")));
            assert_eq!(executed, prepared, "{forms} {stmt}");
            assert_eq!(
                has(&my, &format!("Query\t{stmt}")),
                !prepared,
                "{forms} {stmt}"
            );
            assert_eq!(
                has(&my, &format!("Execute\t{stmt}")),
                prepared,
                "{forms} {stmt}"
            );
        }
        // Queries: always prepared on PostgreSQL (np.sh passes --use_prepared_query), text on
        // MariaDB unless everything is prepared.
        assert!(has(&pg, "execute dbperf0: SELECT productid"), "{forms}");
        assert!(!has(&pg, "statement: SELECT productid"), "{forms}");
        assert_eq!(has(&my, "Query\tSELECT productid"), !prepared, "{forms}");
        assert_eq!(has(&my, "Execute\tSELECT productid"), prepared, "{forms}");
    }
}

/// `ENGINE@PATH` names a build by its directory (here Debian's own PostgreSQL): the server is
/// started from that directory and the target is named by the version it reports.
#[test]
fn a_build_named_by_its_path_is_started_from_there() {
    if !postgres() {
        return;
    }
    let Some(build) = std::fs::read_dir("/usr/lib/postgresql")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("bin/postgres").exists())
    else {
        panic!("no PostgreSQL build under /usr/lib/postgresql");
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let target = format!("postgres@{}", build.display());
    let o = run(&[
        "run",
        "--target",
        &target,
        "--steps",
        "l.i0",
        "--rows-l-i0",
        "5k",
        "--out",
        out.to_str().unwrap(),
        "--no-progress",
        "--no-calibration",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let major = build.file_name().unwrap().to_string_lossy().to_string();
    let (run_file, steps) = read_all(&target_dir(&out, &format!("postgres@{major}.default")));
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].status, "ok");
    let binary = run_file
        .target
        .server
        .unwrap()
        .binary
        .expect("the binary started");
    assert_eq!(
        Path::new(&binary),
        build.join("bin/postgres"),
        "started from the named build"
    );
}
