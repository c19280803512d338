//! Running dbperf for a case and taking stock afterwards: steps lost, processes left, panics.

use super::*;

#[derive(Clone, Copy, PartialEq)]
pub enum Engine {
    Postgres,
    Mariadb,
}

impl Engine {
    pub fn target(self) -> &'static str {
        match self {
            Engine::Postgres => "postgres",
            Engine::Mariadb => "mariadb",
        }
    }

    pub fn cell(self) -> &'static str {
        match self {
            Engine::Postgres => "postgres.default",
            Engine::Mariadb => "mariadb.default",
        }
    }

    /// Whether the server is installed: skipped locally, a failure in CI.
    pub fn installed(self) -> bool {
        match self {
            Engine::Postgres => postgres(),
            Engine::Mariadb => mariadb(false),
        }
    }
}

/// A dbperf run of one case, its output in files (no pipe to fill up), cleaned up on drop:
/// whatever the case did, nothing it started is left running.
pub struct Launch {
    pub tmp: tempfile::TempDir,
    pub out: PathBuf,
    pub child: Option<Child>,
    /// Server processes to continue and kill on drop.
    pub server: Vec<i32>,
    /// More environment for dbperf (a managed instance's password for `password_env`).
    pub env: Vec<(String, String)>,
}

pub struct Ended {
    /// None: dbperf did not end within the bound and was killed.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub at: Instant,
}

impl Launch {
    pub fn new() -> Launch {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("r");
        Launch {
            tmp,
            out,
            child: None,
            server: Vec::new(),
            env: Vec::new(),
        }
    }

    pub fn start(&mut self, args: &[&str]) {
        let child = dbperf()
            .args(args)
            // The hostile servers' targets name it, so a login gets as far as a server allows.
            .env("DBPERF_FAKE_PASSWORD", "p")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::from(
                File::create(self.tmp.path().join("stdout")).unwrap(),
            ))
            .stderr(Stdio::from(
                File::create(self.tmp.path().join("stderr")).unwrap(),
            ))
            .spawn()
            .expect("dbperf starts");
        self.child = Some(child);
    }

    pub fn pid(&self) -> i32 {
        self.child.as_ref().unwrap().id() as i32
    }

    /// Waits up to `secs` for dbperf to end; kills it after that.
    pub fn end(&mut self, secs: u64) -> Ended {
        let mut child = self.child.take().unwrap();
        let start = Instant::now();
        let code = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s.code();
            }
            if start.elapsed() > Duration::from_secs(secs) {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            thread::sleep(Duration::from_millis(20));
        };
        let at = Instant::now();
        let read = |f: &str| std::fs::read_to_string(self.tmp.path().join(f)).unwrap_or_default();
        Ended {
            code,
            stdout: read("stdout"),
            stderr: read("stderr"),
            at,
        }
    }

    /// As `end`, and dbperf's peak resident memory in KiB: reaped with wait4, whose rusage has
    /// the kernel's own high-water mark of the process (its VmHWM at exit), so no sample can
    /// miss the peak.
    pub fn end_with_peak_rss(&mut self, secs: u64) -> (Ended, Option<u64>) {
        let child = self.child.take().unwrap();
        let pid = child.id() as i32;
        let start = Instant::now();
        let mut status = 0;
        // SAFETY: rusage is plain integers; all zeroes is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let reaped = loop {
            // SAFETY: wait4 only writes into `status` and `usage`, which outlive the call.
            let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
            if r == pid {
                break true;
            }
            if r < 0 {
                break false;
            }
            if start.elapsed() > Duration::from_secs(secs) {
                // SAFETY: kill has no memory-safety preconditions; the pid is our unreaped child.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                // SAFETY: as above.
                unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
                break false;
            }
            thread::sleep(Duration::from_millis(20));
        };
        // Reaped here: dropping the handle does not wait for it again.
        drop(child);
        let code = (reaped && libc::WIFEXITED(status)).then(|| libc::WEXITSTATUS(status));
        let at = Instant::now();
        let read = |f: &str| std::fs::read_to_string(self.tmp.path().join(f)).unwrap_or_default();
        let ended = Ended {
            code,
            stdout: read("stdout"),
            stderr: read("stderr"),
            at,
        };
        (ended, reaped.then_some(usage.ru_maxrss as u64))
    }

    pub fn step(&self, cell: &str, step: &str) -> PathBuf {
        self.out
            .join(cell)
            .join("steps")
            .join(format!("{step}.json"))
    }

    /// Waits for `cond` up to `secs`; when it happened.
    pub fn wait_for(
        &mut self,
        secs: u64,
        mut cond: impl FnMut(&Launch) -> bool,
    ) -> Option<Instant> {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(secs) {
            if cond(self) {
                return Some(Instant::now());
            }
            if let Some(c) = self.child.as_mut() {
                if c.try_wait().unwrap().is_some() && !cond(self) {
                    return None;
                }
            }
            thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// Starts a managed-server run whose l.i1 runs until something stops it, and waits until
    /// l.i1 is under way; returns the server's processes.
    pub fn server_run(&mut self, e: Engine, statement_timeout: u64) -> Result<Vec<i32>, String> {
        let out = self.out.to_str().unwrap().to_string();
        let timeout = statement_timeout.to_string();
        self.start(&[
            "run",
            "--target",
            e.target(),
            "--steps",
            "l.i0,l.x,l.i1",
            "--rows-l-i0",
            "5k",
            "--rows-l-i1",
            "50M",
            "--statement-timeout",
            &timeout,
            "--out",
            &out,
            "--no-progress",
        ]);
        if self
            .wait_for(120, |l| l.step(e.cell(), "l.x").exists())
            .is_none()
        {
            let ended = self.end(5);
            return Err(format!(
                "l.x did not end within 120 s: {}",
                ended.stderr.trim()
            ));
        }
        let pid = server_pid(&self.out.join(e.cell())).ok_or("run.json names no server pid")?;
        // l.i1 under way with both its connections (inserter, deleter) open: for PostgreSQL,
        // each has a backend process, and the fault must reach both; MariaDB's are two
        // established TCP connections of its one process (dbperf's counters connect, read and
        // close before the step). A fault before they are open would hit the login instead.
        let backends = |_: &Launch| {
            (e == Engine::Mariadb && established_tcp(pid) >= 2)
                || tree(pid)
                    .iter()
                    .filter(|&&p| {
                        std::fs::read(format!("/proc/{p}/cmdline"))
                            .is_ok_and(|c| String::from_utf8_lossy(&c).contains("dbperf ib"))
                    })
                    .count()
                    >= 2
        };
        if self.wait_for(60, backends).is_none() {
            let ended = self.end(5);
            return Err(format!(
                "l.i1's connections were not open within 60 s: {}",
                ended.stderr.trim()
            ));
        }
        thread::sleep(Duration::from_millis(300));
        let tree = tree(pid);
        self.server = tree.clone();
        Ok(tree)
    }
}

impl Drop for Launch {
    fn drop(&mut self) {
        signal_all(&self.server, libc::SIGCONT);
        signal_all(&self.server, libc::SIGKILL);
        if let Some(c) = self.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

pub fn server_pid(cell: &Path) -> Option<i32> {
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cell.join("run.json")).ok()?).ok()?;
    run["target"]["server"]["pid"].as_i64().map(|p| p as i32)
}

/// The process's TCP sockets in state ESTABLISHED (its fds' socket inodes, looked up in the
/// kernel's table of its network namespace).
pub fn established_tcp(pid: i32) -> usize {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|f| std::fs::read_link(f.path()).ok())
        .filter_map(|l| {
            let l = l.to_string_lossy().into_owned();
            l.strip_prefix("socket:[")?
                .strip_suffix(']')
                .map(str::to_string)
        })
        .collect();
    ["tcp", "tcp6"]
        .iter()
        .filter_map(|t| std::fs::read_to_string(format!("/proc/{pid}/net/{t}")).ok())
        .flat_map(|table| {
            table
                .lines()
                .skip(1)
                .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        })
        // Columns: sl local remote st ... inode (the tenth).
        .filter(|f| f.len() > 9 && f[3] == "01" && inodes.contains(&f[9]))
        .count()
}

/// A process and its children (PostgreSQL's backends start their own sessions, so a process
/// group does not find them).
pub fn tree(pid: i32) -> Vec<i32> {
    let mut out = vec![pid];
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if parent(child) == Some(pid) {
            out.push(child);
        }
    }
    out
}

pub fn stat(pid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()
}

/// The state and parent fields follow the command's closing parenthesis.
pub fn parent(pid: i32) -> Option<i32> {
    stat(pid)?
        .rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

pub fn alive(pid: i32) -> bool {
    stat(pid)
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| !r.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

pub fn signal_all(pids: &[i32], sig: i32) {
    for &p in pids {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(p, sig) };
    }
}

/// Processes still there after dbperf ended: the server's (by pid) and any whose command line
/// names the case's directory; given up to 10 s to go (a backend notices its postmaster's end).
pub fn processes_left(server: &[i32], dir: &Path) -> (usize, Vec<String>) {
    let start = Instant::now();
    loop {
        let mut left: Vec<String> = server
            .iter()
            .filter(|&&p| alive(p))
            .map(|p| format!("pid {p}"))
            .collect();
        left.extend(processes_using(dir));
        left.sort();
        left.dedup();
        if left.is_empty() || start.elapsed() > Duration::from_secs(10) {
            return (left.len(), left);
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// Steps that had ended `ok` before the fault but do not read back as `ok`, and every result
/// JSON under `out` that does not parse.
pub fn steps_lost(out: &Path, cell: &str, kept: &[&str]) -> (usize, Vec<String>) {
    let mut lost = Vec::new();
    for s in kept {
        match results::read_step(&out.join(cell), s) {
            Ok(f) if f.status == Status::Ok => {}
            Ok(f) => lost.push(format!("{s}: status {:?}", f.status)),
            Err(e) => lost.push(format!("{s}: {e:#}")),
        }
    }
    lost.extend(corrupt_files(out));
    (lost.len(), lost)
}

pub fn corrupt_files(dir: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return bad;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            bad.extend(corrupt_files(&p));
        } else if p.extension().is_some_and(|x| x == "json") {
            let ok = std::fs::read(&p)
                .ok()
                .is_some_and(|b| serde_json::from_slice::<serde_json::Value>(&b).is_ok());
            if !ok {
                bad.push(format!("{} does not parse", p.display()));
            }
        }
    }
    bad
}

pub fn panics(stderr: &str) -> usize {
    stderr.matches("panicked").count()
}

pub fn status_name(s: Option<Status>) -> &'static str {
    match s {
        Some(Status::Ok) => "ok",
        Some(Status::Failed) => "failed",
        Some(Status::Interrupted) => "interrupted",
        None => "missing",
    }
}

pub fn step_status(l: &Launch, cell: &str, step: &str) -> (Option<Status>, String) {
    match results::read_step(&l.out.join(cell), step) {
        Ok(f) => (Some(f.status), f.error.unwrap_or_default()),
        Err(_) => (None, String::new()),
    }
}

/// The start of a long message, on one line, for the table.
pub fn short(s: &str, n: usize) -> String {
    let one = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match one.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &one[..i]),
        None => one,
    }
}

/// Fills in the figures every managed-server case shares once dbperf has ended.
pub fn account(row: &mut Row, l: &Launch, e: Engine, ended: &Ended, kept: &[&str]) {
    let (n, what) = steps_lost(&l.out, e.cell(), kept);
    row.steps_lost = n;
    row.check(what.is_empty(), format!("lost: {what:?}"));
    let (n, what) = processes_left(&l.server, l.tmp.path());
    row.processes_left = n;
    row.check(what.is_empty(), format!("left: {what:?}"));
    row.panics = panics(&ended.stderr);
    row.check(
        ended.code.is_some(),
        format!("dbperf did not end: {}", short(&ended.stderr, 300)),
    );
}

pub fn exit(code: Option<i32>) -> String {
    code.map_or("no exit (killed by the test)".into(), |c| {
        format!("exit {c}")
    })
}
