//! Managed servers are reachable by their owner only (issue 23): another local user
//! (`dbperf-attacker`, made here when absent) cannot log in to a PostgreSQL or MariaDB that
//! dbperf started, over TCP or over the unix socket, while the owner can with the password file
//! `server start` names; the password never shows in results, logs, reports or the process
//! list. Also: Ctrl-C while the data directory is made records the cell `interrupted` (a
//! resume runs it again), and a kept work directory (`--work-dir`) serves a managed server more
//! than once, replacing the earlier data without following a link.

use crate::common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;

const ATTACKER: &str = "dbperf-attacker";

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The second local user, made when absent; None (with a note) when the tests do not run as
/// root and cannot act as another user.
fn attacker() -> Option<&'static str> {
    if !is_root() {
        eprintln!("skipping: acting as a second local user needs root");
        return None;
    }
    let known = Command::new("id").arg(ATTACKER).output().unwrap();
    if !known.status.success() {
        // Two tests may race to make it: the loser's useradd fails, and the user exists.
        let _ = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
            ])
            .arg(ATTACKER)
            .output();
        let again = Command::new("id").arg(ATTACKER).output().unwrap();
        assert!(again.status.success(), "cannot create {ATTACKER}");
    }
    Some(ATTACKER)
}

/// A test directory every user can traverse, so what keeps the attacker out is dbperf's doing,
/// not the test's private temp directory.
fn open_tempdir() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    tmp
}

fn as_attacker(user: &str, program: &str, args: &[&str]) -> Output {
    Command::new("runuser")
        .args(["-u", user, "--", program])
        .args(args)
        .current_dir("/")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn state(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("server.json")).unwrap()).unwrap()
}

/// `server start` into `dir`; its output must not hold the password.
fn server_start(target: &str, dir: &Path) -> serde_json::Value {
    let o = run(&["server", "start", target, "--dir", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let pw = instance_password(dir);
    assert_eq!(pw.len(), 32, "a 128-bit password");
    assert!(
        !text(&o).contains(&pw),
        "the password was printed: {}",
        text(&o)
    );
    let st = state(dir);
    assert!(
        !st.to_string().contains(&pw),
        "server.json holds the password"
    );
    st
}

/// The owner's files: 0600, owned by whoever ran dbperf, unreadable to the attacker.
fn check_owner_files(user: &str, files: &[PathBuf]) {
    for f in files {
        let m = std::fs::symlink_metadata(f).unwrap();
        assert!(m.is_file(), "{}", f.display());
        assert_eq!(m.mode() & 0o777, 0o600, "{}", f.display());
        assert_eq!(m.uid(), 0, "{}", f.display());
        let o = as_attacker(user, "cat", &[f.to_str().unwrap()]);
        assert!(!o.status.success(), "{user} read {}", f.display());
    }
}

fn refused(o: &Output, what: &str) {
    assert!(!o.status.success(), "{what} got in: {}", text(o));
}

fn let_in(o: &Output, what: &str) {
    assert!(o.status.success(), "{what} was refused: {}", text(o));
}

#[test]
fn a_managed_postgresql_lets_in_its_owner_only() {
    let Some(user) = attacker() else { return };
    if !postgres() {
        return;
    }
    let tmp = open_tempdir();
    let dir = tmp.path().join("pg");
    let st = server_start("postgres", &dir);
    let _instance = Instance {
        target: "postgres",
        dir: &dir,
    };
    let port = st["port"].as_u64().unwrap().to_string();
    let socket = PathBuf::from(st["socket"].as_str().unwrap());
    let sockdir = socket.parent().unwrap().to_str().unwrap().to_string();
    let pgpass = dir.join("pgpass");
    check_owner_files(user, &[dir.join("password"), pgpass.clone()]);
    assert!(
        st["connect"]
            .as_str()
            .unwrap()
            .starts_with(&format!("PGPASSFILE={} psql ", pgpass.display())),
        "{st}"
    );

    let psql = |host: &str, extra: &[&str]| {
        let mut a = vec!["-w", "-h", host, "-p", &port, "-U", "dbperf", "-d", "ib"];
        a.extend(extra);
        a.extend(["-c", "SELECT 1"]);
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    for host in ["127.0.0.1", sockdir.as_str()] {
        let args = psql(host, &[]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        // The attacker: no password, a wrong one; TCP and the socket.
        refused(
            &as_attacker(user, "psql", &args),
            &format!("{user} at {host}"),
        );
        let wrong = Command::new("runuser")
            .args(["-u", user, "--", "env", "PGPASSWORD=wrong", "psql"])
            .args(&args)
            .current_dir("/")
            .output()
            .unwrap();
        refused(&wrong, &format!("{user} with a wrong password at {host}"));
        // The owner without the password: the socket needs it too, whoever reaches it.
        refused(
            &Command::new("psql")
                .env_remove("PGPASSWORD")
                .env("PGPASSFILE", "/nonexistent")
                .args(&args)
                .output()
                .unwrap(),
            &format!("root without the password at {host}"),
        );
        // The owner with the file `server start` named.
        let_in(
            &Command::new("psql")
                .env("PGPASSFILE", &pgpass)
                .args(&args)
                .output()
                .unwrap(),
            &format!("the owner at {host}"),
        );
    }
}

#[test]
fn a_managed_mariadb_lets_in_its_owner_only() {
    let Some(user) = attacker() else { return };
    if !mariadb(false) {
        return;
    }
    let tmp = open_tempdir();
    let dir = tmp.path().join("ma");
    let st = server_start("mariadb", &dir);
    let _instance = Instance {
        target: "mariadb",
        dir: &dir,
    };
    let port = st["port"].as_u64().unwrap().to_string();
    let socket = st["socket"].as_str().unwrap().to_string();
    let cnf = dir.join("client.cnf");
    check_owner_files(user, &[dir.join("password"), cnf.clone()]);
    assert_eq!(
        st["connect"].as_str().unwrap(),
        format!("mariadb --defaults-file={} ib", cnf.display())
    );
    let tcp = vec!["-h", "127.0.0.1", "-P", port.as_str(), "--protocol=tcp"];
    let sock = vec!["-S", socket.as_str(), "--protocol=socket"];
    for (how, addr) in [("tcp", tcp), ("socket", sock)] {
        let mut args = vec!["--no-defaults"];
        args.extend(&addr);
        args.extend(["-u", "root", "-e", "SELECT 1"]);
        refused(
            &as_attacker(user, "mariadb", &args),
            &format!("{user} over {how}"),
        );
        let mut wrong = args.clone();
        wrong.insert(1, "-pwrong");
        refused(
            &as_attacker(user, "mariadb", &wrong),
            &format!("{user} with a wrong password over {how}"),
        );
        refused(
            &Command::new("mariadb").args(&args).output().unwrap(),
            &format!("root without the password over {how}"),
        );
        // The owner with the option file `server start` named (it must come first).
        let mut own = vec![format!("--defaults-file={}", cnf.display())];
        own.extend(addr.iter().map(|s| s.to_string()));
        own.extend(["-e".to_string(), "SELECT 1".to_string(), "ib".to_string()]);
        let_in(
            &Command::new("mariadb").args(&own).output().unwrap(),
            &format!("the owner over {how}"),
        );
    }
}

/// Every file under `dir`, but the instance's own password files.
fn files_under(dir: &Path, found: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let t = e.file_type().unwrap();
        if t.is_dir() {
            files_under(&p, found);
        } else if t.is_file() {
            let name = e.file_name().to_string_lossy().to_string();
            if !["password", "pgpass", "client.cnf"].contains(&name.as_str()) {
                found.push(p);
            }
        }
    }
}

/// Processes whose command line holds `needle`.
fn argv_holding(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) {
                found.push(cmd);
            }
        }
    }
    found
}

/// A run on a managed server, watched: the password (read from the instance's file as soon as
/// it is there) is never in any process's command line, and afterwards not in a result file,
/// the server's log, dbperf's output or a report.
fn the_password_stays_private(target: &str, cell: &str) {
    let tmp = open_tempdir();
    let out = tmp.path().join("r");
    let child: Child = dbperf()
        .args([
            "run",
            "--target",
            target,
            "--steps",
            "l.i0,l.x,qp100",
            "--rows-l-i0",
            "5k",
            "--query-seconds",
            "2",
            "--keep-data",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pwfile = out.join("work").join(cell).join("server").join("password");
    let start = Instant::now();
    let mut pw = None;
    let mut watched = 0;
    let output = std::thread::scope(|s| {
        let waiter = s.spawn(|| child.wait_with_output().unwrap());
        while !waiter.is_finished() {
            if pw.is_none() {
                pw = std::fs::read_to_string(&pwfile)
                    .ok()
                    .map(|t| t.trim().to_string())
                    .filter(|t| t.len() == 32);
            }
            if let Some(p) = &pw {
                let seen = argv_holding(p);
                assert!(
                    seen.is_empty(),
                    "the password is in a command line: {seen:?}"
                );
                watched += 1;
            }
            assert!(
                start.elapsed() < Duration::from_secs(50),
                "the run took too long"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        waiter.join().unwrap()
    });
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let pw = pw.expect("the instance's password file appeared during the run");
    assert!(
        watched > 10,
        "the process list was looked at {watched} times only"
    );
    assert!(!text(&output).contains(&pw), "dbperf printed the password");
    let report = tmp.path().join("report");
    let o = run(&[
        "report",
        out.to_str().unwrap(),
        "--out",
        report.to_str().unwrap(),
        "--format",
        "html,md,json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let mut files = Vec::new();
    files_under(&out, &mut files);
    files_under(&report, &mut files);
    assert!(
        files.iter().any(|f| f.ends_with("server.log")),
        "the server's log is among the files looked at: {files:?}"
    );
    assert!(files.iter().any(|f| f.ends_with("run.json")), "{files:?}");
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        assert!(
            !bytes.windows(pw.len()).any(|w| w == pw.as_bytes()),
            "the password is in {}",
            f.display()
        );
    }
}

#[test]
fn the_postgresql_password_stays_out_of_results_logs_reports_and_argv() {
    if !postgres() {
        return;
    }
    the_password_stays_private("postgres", "postgres.default");
}

#[test]
fn the_mariadb_password_stays_out_of_results_logs_reports_and_argv() {
    if !mariadb(false) {
        return;
    }
    the_password_stays_private("mariadb", "mariadb.default");
}

fn journal(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("campaign.json")).unwrap()).unwrap()
}

/// The pid of a process whose command line holds every one of `words`.
fn process_with(words: &[&str]) -> Option<i32> {
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd);
            if words.iter().all(|w| cmd.contains(w)) {
                return Some(pid);
            }
        }
    }
    None
}

#[test]
fn ctrl_c_during_initdb_records_the_cell_interrupted_and_resume_runs_it() {
    if !postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = out.to_str().unwrap();
    let mut child = dbperf()
        .args(["run", "--target", "postgres", "--steps", "l.i0"])
        .args(["--rows-l-i0", "1k", "--out", o])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let initdb = loop {
        if let Some(pid) = process_with(&["initdb", o]) {
            break pid;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "dbperf ended before initdb was seen"
        );
        assert!(start.elapsed() < Duration::from_secs(30), "no initdb seen");
        std::thread::sleep(Duration::from_millis(5));
    };
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        assert!(
            start.elapsed() < Duration::from_secs(40),
            "dbperf did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(code, Some(130));
    let j = journal(&out);
    assert_eq!(j["cells"][0]["state"], "interrupted", "{j}");
    let run_file: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("postgres.default/run.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(run_file["status"], "interrupted", "{run_file}");
    let why = run_file["error"].as_str().unwrap_or_default();
    assert!(why.contains("interrupted"), "{why}");
    eprintln!("initdb pid {initdb} interrupted: {why}");
    assert!(
        process_with(&["initdb", o]).is_none(),
        "initdb outlived the interrupt"
    );
    // `--no-retry` holds back failed cells only: the interrupted one runs again.
    let r = run(&["run", "--resume", o, "--no-retry"]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r));
    let j = journal(&out);
    assert_eq!(j["cells"][0]["state"], "done", "{j}");
    let (run_file, steps) = read_all(&out.join("postgres.default"));
    assert_eq!(run_file.status, "ok");
    assert_eq!(steps[0].ops["insert"].rows, 1000);
}

/// Two cells of one managed target in one kept work directory: the second server starts on
/// fresh data where the first one's was.
#[test]
fn a_kept_work_directory_serves_a_managed_postgresql_twice() {
    if !postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("w");
    let out = tmp.path().join("r");
    let o = run(&[
        "run",
        "--target",
        "postgres",
        "--steps",
        "l.i0",
        "--rows-l-i0",
        "1k",
        "--count-rows",
        "--repeats",
        "2",
        "--work-dir",
        work.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let j = journal(&out);
    let cells = j["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2, "{j}");
    for c in cells {
        assert_eq!(c["state"], "done", "{j}");
        let (run_file, steps) = read_all(&out.join(c["id"].as_str().unwrap()));
        assert_eq!(run_file.status, "ok");
        assert_eq!(
            steps[0].table_rows.as_ref().unwrap()["pi1"] as i64,
            1000,
            "fresh data in {}",
            c["id"]
        );
    }
    // The kept data is the last server's, in the place the first one had.
    assert!(work
        .join("postgres.default/server/data/PG_VERSION")
        .is_file());
}

/// An earlier data directory replaced by a link: the next run unlinks it and removes nothing
/// where it points; a data directory a process names is left alone and the cell fails.
#[test]
fn a_kept_data_directory_is_replaced_without_following_a_link_and_never_in_use() {
    if !postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("w");
    let server = work.join("postgres.default/server");
    std::fs::create_dir_all(&server).unwrap();
    let victim = tmp.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("precious"), "keep").unwrap();
    std::os::unix::fs::symlink(&victim, server.join("data")).unwrap();
    let args = |out: &Path| {
        vec![
            "run".to_string(),
            "--target".into(),
            "postgres".into(),
            "--steps".into(),
            "l.i0".into(),
            "--rows-l-i0".into(),
            "1k".into(),
            "--work-dir".into(),
            work.to_str().unwrap().into(),
            "--out".into(),
            out.to_str().unwrap().into(),
        ]
    };
    let a = args(&tmp.path().join("r1"));
    let o = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(victim.join("precious")).unwrap(),
        "keep"
    );
    let data = server.join("data");
    assert!(std::fs::symlink_metadata(&data).unwrap().is_dir());

    // A process that names the data directory (as a server's command line does).
    let mut holder = Command::new("sh")
        .args(["-c", "sleep 30", data.to_str().unwrap()])
        .spawn()
        .unwrap();
    let a = args(&tmp.path().join("r2"));
    let o = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("is in use"), "{}", text(&o));
    assert!(
        data.join("PG_VERSION").is_file(),
        "the data in use was kept"
    );
}

/// A config that would open the server to everyone is refused before anything starts:
/// PostgreSQL's `hba_file` pointing at a trust file, a MariaDB config's own `init_file` (which
/// would replace the one that sets the password) and its `bind-address=0.0.0.0` (which once
/// overrode dbperf's loopback bind, coming after it on the command line).
#[test]
fn a_config_that_opens_the_server_is_refused() {
    if !postgres() || !mariadb(false) {
        return;
    }
    let tmp = open_tempdir();
    let hba = tmp.path().join("trust_hba.conf");
    std::fs::write(
        &hba,
        "local all all trust\nhost all all 127.0.0.1/32 trust\n",
    )
    .unwrap();
    std::fs::set_permissions(&hba, std::fs::Permissions::from_mode(0o644)).unwrap();
    let toml = tmp.path().join("dbperf.toml");
    std::fs::write(
        &toml,
        format!(
            "[config.open]\nengine = \"postgres\"\nextends = \"default\"\n\
             text = \"hba_file = '{}'\\n\"\n\n\
             [config.own_init]\nengine = \"mariadb\"\nextends = \"default\"\n\
             text = \"init-file = /tmp/x.sql\\n\"\n\n\
             [config.everywhere]\nengine = \"mariadb\"\nextends = \"default\"\n\
             text = \"bind-address=0.0.0.0\\n\"\n",
            hba.display()
        ),
    )
    .unwrap();
    let run_on = |target: &str, out: &str| {
        run(&[
            "run",
            "--config-file",
            toml.to_str().unwrap(),
            "--target",
            target,
            "--steps",
            "l.i0",
            "--rows-l-i0",
            "1k",
            "--out",
            tmp.path().join(out).to_str().unwrap(),
        ])
    };
    for (target, out, says) in [
        ("postgres:open", "r1", "sets hba_file"),
        ("mariadb:own_init", "r2", "sets init_file"),
        ("mariadb:everywhere", "r3", "sets bind_address"),
    ] {
        let o = run_on(target, out);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(says), "{}", text(&o));
        assert!(
            processes_using(tmp.path()).is_empty(),
            "nothing started: {:?}",
            processes_using(tmp.path())
        );
    }
}
