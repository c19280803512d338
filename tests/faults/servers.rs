//! Managed servers killed or stopped mid-step, and dbperf interrupted by Ctrl-C.

use super::*;

// ---- 1. server SIGKILLed ----

pub fn killed(name: &str, e: Engine) -> Row {
    let mut row = Row::new(
        name,
        "l.i1 failed with one sentence (lost connection), l.i0 and l.x kept, exit 1, server gone",
        15,
    );
    if !e.installed() {
        return row.skip("server not installed");
    }
    let mut l = Launch::new();
    let server = match l.server_run(e, 3) {
        Ok(s) => s,
        Err(why) => {
            row.check(false, why);
            return row;
        }
    };
    // Backends first, as a host-wide kill does: a backend that outlived its postmaster by a
    // moment would say so with a FATAL of its own instead.
    let backends_first: Vec<i32> = server.iter().rev().copied().collect();
    signal_all(&backends_first, libc::SIGKILL);
    let fault = Instant::now();
    let failed = l.wait_for(60, |l| l.step(e.cell(), "l.i1").exists());
    let ended = l.end(60);
    row.time_to_fail = failed.unwrap_or(ended.at).duration_since(fault);
    let (status, error) = step_status(&l, e.cell(), "l.i1");
    row.observed = format!(
        "{}; l.i1 {}: \"{}\"",
        exit(ended.code),
        status_name(status),
        short(&error, 90)
    );
    row.check(ended.code == Some(1), "exit 1");
    row.check(status == Some(Status::Failed), "l.i1 failed");
    row.check(
        error.contains("lost connection to the server") && !error.contains('\n'),
        "one sentence saying the connection was lost",
    );
    account(&mut row, &l, e, &ended, &["l.i0", "l.x"]);
    row
}

// ---- 2. server SIGSTOPped ----

pub fn stopped(name: &str, e: Engine) -> Row {
    let mut row = Row::new(
        name,
        "l.i1 failed after about one --statement-timeout (3 s) with \"did not answer\" and the \
         server's log during the step; exit 1 once the server is continued; server gone",
        25,
    );
    if !e.installed() {
        return row.skip("server not installed");
    }
    let mut l = Launch::new();
    let server = match l.server_run(e, 3) {
        Ok(s) => s,
        Err(why) => {
            row.check(false, why);
            return row;
        }
    };
    signal_all(&server, libc::SIGSTOP);
    let fault = Instant::now();
    let failed = l.wait_for(60, |l| l.step(e.cell(), "l.i1").exists());
    // dbperf's stop signal reaches a stopped server only once it continues.
    signal_all(&server, libc::SIGCONT);
    let ended = l.end(150);
    row.time_to_fail = failed.unwrap_or(ended.at).duration_since(fault);
    let (status, error) = step_status(&l, e.cell(), "l.i1");
    let sentence = error.split("; ").next().unwrap_or_default();
    row.observed = format!(
        "{}; l.i1 {}: \"{}\" + the step's log",
        exit(ended.code),
        status_name(status),
        short(sentence, 90)
    );
    row.check(ended.code == Some(1), "exit 1");
    row.check(status == Some(Status::Failed), "l.i1 failed");
    row.check(
        error.contains("the server did not answer within 3 s (--statement-timeout)")
            || error.contains("the server stopped answering"),
        "the no-answer sentence",
    );
    row.check(
        step_log(&error),
        "the server's log during the step, or that it wrote nothing",
    );
    account(&mut row, &l, e, &ended, &["l.i0", "l.x"]);
    row
}

// ---- 3. only the step's backends SIGSTOPped ----

/// The step's statement timeout: the case's bound is three of them.
const BACKENDS_TIMEOUT: u64 = 5;

/// The postmaster and the rest of the server keep running, so a new connection is answered by a
/// fresh backend: before statements had a deadline from their start, the liveness check said
/// "alive" every time and the step waited until someone pressed Ctrl-C.
pub fn backends_stopped(name: &str) -> Row {
    let e = Engine::Postgres;
    let mut row = Row::new(
        name,
        "l.i1 failed with \"did not answer within 5 s\" and the server's log during the step, though \
         the server answers new connections; l.i0 and l.x kept; exit 1; server stopped",
        3 * BACKENDS_TIMEOUT,
    );
    if !e.installed() {
        return row.skip("server not installed");
    }
    let mut l = Launch::new();
    let server = match l.server_run(e, BACKENDS_TIMEOUT) {
        Ok(s) => s,
        Err(why) => {
            row.check(false, why);
            return row;
        }
    };
    // The step's own backends (the postmaster's children serving database ib), not the
    // postmaster nor its background processes.
    let backends: Vec<i32> = server[1..]
        .iter()
        .copied()
        .filter(|&p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("dbperf ib"))
        })
        .collect();
    row.check(
        backends.len() >= 2,
        format!("the step's backends: {backends:?}"),
    );
    signal_all(&backends, libc::SIGSTOP);
    let fault = Instant::now();
    // What kept the old wait going: the server still answers a new connection.
    let answered = tcp_port(&l.out.join(e.cell())).is_some_and(answers_ssl_request);
    row.check(
        answered,
        "the server answered a new connection while the backends were stopped",
    );
    let failed = l.wait_for(60, |l| l.step(e.cell(), "l.i1").exists());
    let ended = l.end(60);
    row.time_to_fail = failed.unwrap_or(ended.at).duration_since(fault);
    let (status, error) = step_status(&l, e.cell(), "l.i1");
    let sentence = error.split("; ").next().unwrap_or_default();
    row.observed = format!(
        "{}; a new connection {}; l.i1 {}: \"{}\" + the step's log",
        exit(ended.code),
        if answered { "answered" } else { "not answered" },
        status_name(status),
        short(sentence, 90)
    );
    row.check(ended.code == Some(1), "exit 1");
    row.check(status == Some(Status::Failed), "l.i1 failed");
    row.check(
        error.contains("the server did not answer within 5 s (--statement-timeout)"),
        "the no-answer sentence",
    );
    row.check(
        step_log(&error),
        "the server's log during the step, or that it wrote nothing",
    );
    account(&mut row, &l, e, &ended, &["l.i0", "l.x"]);
    row
}

/// Whether a stalled step's error quotes the server's log as the step's part of it: its lines,
/// or that it wrote none (never the start-up lines of the whole log).
fn step_log(error: &str) -> bool {
    error.contains("; the server's log during the step (")
        || error.contains("; the server wrote nothing to its log during the step")
}

/// The TCP port in run.json's connection ("tcp 127.0.0.1:<port> user ...").
fn tcp_port(cell: &Path) -> Option<u16> {
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cell.join("run.json")).ok()?).ok()?;
    let c = run["target"]["server"]["connection"].as_str()?;
    c.strip_prefix("tcp ")?
        .split_whitespace()
        .next()?
        .rsplit_once(':')?
        .1
        .parse()
        .ok()
}

/// Whether PostgreSQL on 127.0.0.1:`port` answers an SSLRequest within 5 s.
fn answers_ssl_request(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let mut one = [0u8; 1];
    s.write_all(&[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]).is_ok() && s.read_exact(&mut one).is_ok()
}

// ---- 5. Ctrl-C ----

pub fn sigint(pid: i32) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(pid, libc::SIGINT) };
}

pub fn sigint_once(name: &str) -> Row {
    stop_once(name, libc::SIGINT, "")
}

/// The first Ctrl-C, or SIGTERM, which dbperf takes the same way: the step in progress is
/// stopped and written, finished steps kept, the server stopped, exit 130.
fn stop_once(name: &str, signal: i32, prefix: &str) -> Row {
    let e = Engine::Postgres;
    let mut row = Row::new(
        name,
        &format!(
            "{prefix}l.i1 stopped and written as interrupted, l.i0 and l.x kept, exit 130, \
             server stopped"
        ),
        20,
    );
    if !e.installed() {
        return row.skip("server not installed");
    }
    let mut l = Launch::new();
    if let Err(why) = l.server_run(e, 3) {
        row.check(false, why);
        return row;
    }
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(l.pid(), signal) };
    let fault = Instant::now();
    let ended = l.end(60);
    row.time_to_fail = ended.at.duration_since(fault);
    let (status, _) = step_status(&l, e.cell(), "l.i1");
    row.observed = format!("{}; l.i1 {}", exit(ended.code), status_name(status));
    row.check(ended.code == Some(130), "exit 130");
    row.check(status == Some(Status::Interrupted), "l.i1 interrupted");
    account(&mut row, &l, e, &ended, &["l.i0", "l.x"]);
    row
}

pub fn sigint_twice(name: &str) -> Row {
    let e = Engine::Postgres;
    let mut row = Row::new(
        name,
        "hard stop: exit 130 at once, the server killed, no result file corrupt, l.i0 and l.x kept",
        10,
    );
    if !e.installed() {
        return row.skip("server not installed");
    }
    let mut l = Launch::new();
    if let Err(why) = l.server_run(e, 3) {
        row.check(false, why);
        return row;
    }
    sigint(l.pid());
    let fault = Instant::now();
    thread::sleep(Duration::from_millis(100));
    sigint(l.pid());
    let ended = l.end(30);
    row.time_to_fail = ended.at.duration_since(fault);
    row.observed = format!(
        "{}; \"{}\"",
        exit(ended.code),
        short(
            ended
                .stderr
                .lines()
                .find(|l| l.contains("interrupted again"))
                .unwrap_or_default(),
            90
        )
    );
    row.check(ended.code == Some(130), "exit 130");
    account(&mut row, &l, e, &ended, &["l.i0", "l.x"]);
    row
}

pub fn sigint_stopped(name: &str) -> Row {
    let e = Engine::Postgres;
    let mut row = Row::new(
        name,
        "the blocked statement gives up at once (not at --statement-timeout, 30 s): l.i1 written \
         as interrupted; exit 130 once the server is continued",
        15,
    );
    if !e.installed() {
        return row.skip("server not installed");
    }
    let mut l = Launch::new();
    let server = match l.server_run(e, 30) {
        Ok(s) => s,
        Err(why) => {
            row.check(false, why);
            return row;
        }
    };
    signal_all(&server, libc::SIGSTOP);
    // Every connection is blocked on the stopped server by now.
    thread::sleep(Duration::from_millis(500));
    sigint(l.pid());
    let fault = Instant::now();
    let written = l.wait_for(60, |l| l.step(e.cell(), "l.i1").exists());
    // dbperf's stop signal reaches a stopped server only once it continues.
    signal_all(&server, libc::SIGCONT);
    let ended = l.end(60);
    row.time_to_fail = written.unwrap_or(ended.at).duration_since(fault);
    let (status, _) = step_status(&l, e.cell(), "l.i1");
    row.observed = format!(
        "{}; l.i1 {} {:.2} s after the SIGINT",
        exit(ended.code),
        status_name(status),
        row.time_to_fail.as_secs_f64()
    );
    row.check(ended.code == Some(130), "exit 130");
    row.check(status == Some(Status::Interrupted), "l.i1 interrupted");
    account(&mut row, &l, e, &ended, &["l.i0", "l.x"]);
    row
}

// ---- dbperf SIGTERMed and SIGKILLed ----

pub fn sigterm_once(name: &str) -> Row {
    stop_once(name, libc::SIGTERM, "as the first Ctrl-C: ")
}

/// SIGKILL cannot be caught: what dbperf wrote before stays, and its server goes with it (the
/// kernel's parent-death signal), so nothing is left for a user or the next run to clean up.
pub fn sigkill(name: &str) -> Row {
    let e = Engine::Postgres;
    let mut row = Row::new(
        name,
        "dbperf gone at once; its server dies with it (parent-death signal), l.i0 and l.x kept",
        15,
    );
    if !e.installed() {
        return row.skip("server not installed");
    }
    let mut l = Launch::new();
    if let Err(why) = l.server_run(e, 3) {
        row.check(false, why);
        return row;
    }
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(l.pid(), libc::SIGKILL) };
    let fault = Instant::now();
    let ended = l.end(10);
    let (n, left) = processes_left(&l.server, l.tmp.path());
    row.time_to_fail = fault.elapsed();
    row.processes_left = n;
    row.check(left.is_empty(), format!("left: {left:?}"));
    let (n, lost) = steps_lost(&l.out, e.cell(), &["l.i0", "l.x"]);
    row.steps_lost = n;
    row.check(lost.is_empty(), format!("lost: {lost:?}"));
    row.panics = panics(&ended.stderr);
    row.observed = format!(
        "{}; no server process left {:.2} s after the kill",
        if ended.code.is_none() {
            "killed, no exit code"
        } else {
            "exited?"
        },
        row.time_to_fail.as_secs_f64()
    );
    row.check(ended.code.is_none(), "killed by the signal");
    row
}
