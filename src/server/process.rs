//! Starting server processes as an unprivileged user in their own process group, and stopping
//! them: graceful signal, then forced after a timeout. Every process dbperf starts dies with it
//! (the kernel's parent-death signal, so even SIGKILL of dbperf takes them along) unless it was
//! started to outlive dbperf (`dbperf server start`); every started server is also in an
//! in-memory list so that an emergency exit (a second Ctrl-C) kills what dbperf started.

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::identity::Identity;

/// An OS account to run servers as (dbperf never runs a server as root).
#[derive(Debug, Clone, PartialEq)]
pub struct User {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

pub fn lookup_user(name: &str) -> Option<User> {
    let c = CString::new(name).ok()?;
    // SAFETY: getpwnam returns a pointer into static storage or null; fields are copied at once.
    unsafe {
        let pw = libc::getpwnam(c.as_ptr());
        if pw.is_null() {
            return None;
        }
        Some(User {
            name: name.to_string(),
            uid: (*pw).pw_uid,
            gid: (*pw).pw_gid,
        })
    }
}

pub fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The user servers run as: none needed when dbperf is not root; as root the named user, created
/// as a system account without a home or shell when it does not exist.
pub fn server_user(requested: Option<&str>) -> anyhow::Result<Option<User>> {
    if !running_as_root() {
        if let Some(r) = requested {
            anyhow::bail!("--server-user {r} needs dbperf to run as root; as another user servers run as that user");
        }
        return Ok(None);
    }
    let name = requested.unwrap_or("dbperf");
    if let Some(u) = lookup_user(name) {
        if u.uid == 0 {
            return crate::error::bad_input(format!(
                "--server-user {name} is root; servers never run as root"
            ));
        }
        return Ok(Some(u));
    }
    let out = Command::new("useradd")
        .args([
            "--system",
            "--no-create-home",
            "--shell",
            "/usr/sbin/nologin",
            name,
        ])
        .output()
        .map_err(|e| anyhow::anyhow!("cannot run useradd to create the server user {name}: {e}"))?;
    if !out.status.success() {
        anyhow::bail!(
            "useradd {name} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    lookup_user(name)
        .map(Some)
        .ok_or_else(|| anyhow::anyhow!("user {name} was created but cannot be found"))
}

/// Gives the directory `d` (opened without following a link) to the server user, private:
/// mode 0700, owned by it. Changed through the handle, so nothing planted at its path since
/// is touched.
pub fn give_dir(d: &crate::safe_fs::Dir, user: Option<&User>) -> anyhow::Result<()> {
    if let Some(u) = user {
        d.set_owner(u.uid, u.gid).map_err(|e| {
            anyhow::anyhow!("cannot give {} to user {}: {e}", d.path().display(), u.name)
        })?;
    }
    d.set_mode(0o700)
        .map_err(|e| anyhow::anyhow!("cannot make {} private: {e}", d.path().display()))
}

/// A command that runs as `user` (when given), in its own process group so a Ctrl-C in the
/// terminal reaches dbperf only and dbperf decides how the server stops.
pub fn command(program: &Path, user: Option<&User>) -> Command {
    command_in(program, user, None)
}

/// `command`, and the child joins the cgroup whose `cgroup.procs` is `cgroup` before anything
/// else (still as root: the file is root's), so the program and all it forks are in it from
/// their first instruction (a memory cap, cgroup.rs).
pub fn command_in(
    program: &Path,
    user: Option<&User>,
    cgroup: Option<std::ffi::CString>,
) -> Command {
    let mut c = Command::new(program);
    if let Some(procs) = cgroup {
        // SAFETY: only async-signal-safe calls between fork and exec (cgroup::join_in_child).
        unsafe {
            c.pre_exec(move || super::cgroup::join_in_child(&procs));
        }
    }
    c.stdin(Stdio::null()).process_group(0);
    // DBMS code gets none of dbperf's environment (PGPASSWORD, a cloud key of the operator's):
    // a search path, the C locale, and below, as another user, who it runs as.
    c.env_clear()
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .env("LC_ALL", "C");
    if let Some(u) = user.cloned() {
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            c.pre_exec(move || {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(u.gid) != 0
                    || libc::setuid(u.uid) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        c.env("HOME", "/tmp")
            .env("USER", &u.name)
            .env("LOGNAME", &u.name);
    }
    c
}

/// What a started process does when dbperf dies, whatever way it dies (SIGKILL included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifetime {
    /// The kernel sends it `signal` the moment dbperf is gone.
    DiesWithDbperf { signal: i32 },
    /// Left running on purpose (`dbperf server start`); found later through the registry.
    MayOutlive,
}

/// Starts `c`. A process that dies with dbperf gets the parent-death signal (PR_SET_PDEATHSIG)
/// set after it changed user (a change of credentials clears it). The kernel sends that signal
/// when the *thread* that forked it ends, so such processes are forked by one thread that lives
/// as long as dbperf, whichever thread asks.
pub fn spawn(mut c: Command, lifetime: Lifetime) -> io::Result<Child> {
    let Lifetime::DiesWithDbperf { signal } = lifetime else {
        return c.spawn();
    };
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: prctl and getppid are async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        c.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            // dbperf died between fork and prctl: nobody would send the signal now.
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
    type Job = (Command, mpsc::Sender<io::Result<Child>>);
    static SPAWNER: OnceLock<Option<Mutex<mpsc::Sender<Job>>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("dbperf-spawner".into())
            .spawn(move || {
                // The sender lives in a static, so this loop (and the thread) never ends.
                for (mut c, reply) in rx {
                    let _ = reply.send(c.spawn());
                }
            })
            .ok()
            .map(|_| Mutex::new(tx))
    });
    let Some(spawner) = spawner else {
        return Err(io::Error::other("cannot start dbperf's spawner thread"));
    };
    let (reply, answer) = mpsc::channel();
    spawner
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send((c, reply))
        .map_err(|_| io::Error::other("dbperf's spawner thread is gone"))?;
    answer
        .recv()
        .map_err(|_| io::Error::other("dbperf's spawner thread is gone"))?
}

/// The user asked to stop (Ctrl-C) while a command ran; it was killed.
#[derive(Debug)]
pub struct Interrupted(pub String);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} interrupted", self.0)
    }
}

impl std::error::Error for Interrupted {}

pub fn is_interrupted(e: &anyhow::Error) -> bool {
    e.downcast_ref::<Interrupted>().is_some()
}

/// A short command (initdb, install-db) to run to its end.
pub struct ShortRun<'a> {
    pub what: &'a str,
    pub timeout: Duration,
    /// A private directory for its output (never a shared one such as /tmp).
    pub log_dir: &'a Path,
    pub interrupt: Option<&'a AtomicBool>,
}

/// Runs a short command to completion, killed with dbperf, on Ctrl-C or after its timeout
/// (with everything it forked: its process group); the error carries its output.
pub fn run_to_end(mut c: Command, r: &ShortRun) -> anyhow::Result<String> {
    let (log, f) = private_file(r.log_dir, &format!("{}.log", r.what))?;
    // Read back through this handle, not by name: the directory may be the server user's, who
    // could put a link to another file there in the meantime.
    let mut own = f.try_clone()?;
    c.stdout(f.try_clone()?).stderr(f);
    let mut child = spawn(
        c,
        Lifetime::DiesWithDbperf {
            signal: libc::SIGKILL,
        },
    )
    .map_err(|e| anyhow::anyhow!("cannot run {}: {e}", r.what))?;
    let pid = child.id();
    register(pid);
    let start = Instant::now();
    let ended = loop {
        if has_ended(&child) {
            break Ok(());
        }
        if r.interrupt.is_some_and(|f| f.load(Ordering::SeqCst)) {
            break Err(None);
        }
        if start.elapsed() > r.timeout {
            break Err(Some(r.timeout));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Not reaped yet, so its process group cannot be anyone else's: whatever it forked (a
    // bootstrap server fed by a pipe) goes too.
    signal_group(pid, libc::SIGKILL);
    let status = child.wait();
    unregister(pid);
    let out = crate::safe_fs::read_end(&mut own, LOG_READ_MAX);
    let _ = fs::remove_file(&log);
    match (ended, status) {
        (Ok(()), Ok(status)) if status.success() => Ok(out),
        (Ok(()), Ok(status)) => {
            anyhow::bail!("{} failed ({status}):\n{}", r.what, failure_excerpt(&out))
        }
        (Ok(()), Err(e)) => anyhow::bail!("{}: {e}", r.what),
        (Err(None), _) => Err(Interrupted(r.what.to_string()).into()),
        (Err(Some(t)), _) => anyhow::bail!(
            "{} did not finish in {} s:\n{}",
            r.what,
            t.as_secs(),
            tail(&out, 20)
        ),
    }
}

/// Creates a new file in `dir` for dbperf to write: never an existing file, never through a
/// symbolic link (O_EXCL | O_NOFOLLOW), readable by its owner only. A name already taken gets
/// a number added.
pub fn private_file(dir: &Path, name: &str) -> anyhow::Result<(PathBuf, fs::File)> {
    for n in 0..1000 {
        let path = if n == 0 {
            dir.join(name)
        } else {
            dir.join(format!("{n}.{name}"))
        };
        match crate::safe_fs::create_new(&path, 0o600) {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => anyhow::bail!("cannot create {}: {e}", path.display()),
        }
    }
    anyhow::bail!("cannot create a new {name} in {}", dir.display())
}

/// A new directory under the system's temp directory with a name nobody can guess, mode 0700.
pub fn private_temp_dir(prefix: &str) -> anyhow::Result<PathBuf> {
    let d = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(|e| anyhow::anyhow!("cannot create a private directory for the server: {e}"))?;
    Ok(d.keep())
}

/// The last `n` lines of a log, for error messages.
/// What a failed tool printed, for its error: the lines that name an error (a tool such as
/// mariadb-install-db prints its usage after the error, which pushes the cause out of a plain
/// tail), then the last lines.
pub fn failure_excerpt(out: &str) -> String {
    let last = tail(out, 20);
    let kept: std::collections::HashSet<&str> = last.lines().collect();
    let errors: Vec<&str> = out
        .lines()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("error") || l.contains("fatal") || l.contains("abort")
        })
        .filter(|l| !kept.contains(l))
        .take(20)
        .collect();
    if errors.is_empty() {
        last
    } else {
        format!("{}\n...\n{last}", errors.join("\n"))
    }
}

pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(n);
    lines[start..].join("\n")
}

/// How much of the end of a log dbperf reads for an error message: far more than the lines
/// it quotes, and a bound whatever wrote the log.
pub const LOG_READ_MAX: u64 = 1 << 20;

/// The last `n` lines of a log in a directory the server user may write to: never read
/// through a link or a second name (see safe_fs::open_regular), at most [`LOG_READ_MAX`] bytes.
pub fn tail_file(path: &Path, n: usize) -> String {
    tail(&crate::safe_fs::read_log_end(path, LOG_READ_MAX), n)
}

/// A part of a server's log: what it wrote over some time (a step).
#[derive(Debug, Clone, PartialEq)]
pub struct LogPart {
    /// Its text, the last [`LOG_READ_MAX`] bytes when it is longer.
    pub text: String,
    /// How many bytes the server wrote then.
    pub bytes: u64,
}

static REGISTRY: Mutex<Vec<u32>> = Mutex::new(Vec::new());

pub fn register(pid: u32) {
    REGISTRY.lock().unwrap().push(pid);
}

pub fn unregister(pid: u32) {
    REGISTRY.lock().unwrap().retain(|&p| p != pid);
}

/// Last resort (second Ctrl-C, fatal exit): SIGKILL every registered server's process group.
pub fn kill_all_registered() {
    let pids = match REGISTRY.try_lock() {
        Ok(g) => g.clone(),
        Err(_) => return,
    };
    for pid in pids {
        signal_group(pid, libc::SIGKILL);
    }
}

pub fn signal(pid: u32, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

/// Signals the whole process group (the server and anything it forked).
pub fn signal_group(pid: u32, sig: i32) {
    // SAFETY: as above; a negative pid addresses the process group.
    unsafe {
        libc::kill(-(pid as i32), sig);
    }
}

/// Whether `child` has ended, without reaping it: until it is reaped its pid, and so its process
/// group id, cannot be taken by another process, so the group can still be signalled safely.
pub fn has_ended(child: &Child) -> bool {
    // SAFETY: waitid writes into the zeroed siginfo_t it is given; WNOWAIT leaves the child
    // to be reaped by Child::wait.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::waitid(
            libc::P_PID,
            child.id() as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        // An error (ECHILD: already reaped) also means there is nothing left to wait for.
        r != 0 || info.si_pid() != 0
    }
}

/// `pid` and its descendants. PostgreSQL's backends each lead their own session, so a signal
/// to the server's process group does not reach them.
fn tree(pid: u32) -> Vec<u32> {
    crate::metrics::proc::tree(std::path::Path::new("/proc"), pid)
        .per_pid
        .into_keys()
        .collect()
}

/// SIGKILL to the server's group and to every process of its tree, listed before the leader
/// dies (its children then become init's and can no longer be told from others).
fn kill_tree(pid: u32) {
    let pids = tree(pid);
    signal_group(pid, libc::SIGKILL);
    for p in pids {
        signal(p, libc::SIGKILL);
    }
}

/// Stops a server started by `command`: `graceful` signal, wait up to `timeout`, then SIGKILL
/// to the whole group. Returns how it ended.
pub fn stop(child: &mut Child, graceful: i32, timeout: Duration) -> String {
    let pid = child.id();
    let how = if has_ended(child) {
        "had already exited".to_string()
    } else {
        signal(pid, graceful);
        // A server stopped with SIGSTOP (or in a debugger) acts on its signal only once it runs:
        // continued, it shuts down now instead of being killed when the timeout runs out. Every
        // process of its tree, not its group: PostgreSQL's backends each lead their own session.
        signal_group(pid, libc::SIGCONT);
        for p in tree(pid) {
            signal(p, libc::SIGCONT);
        }
        let start = Instant::now();
        loop {
            if has_ended(child) {
                break format!("stopped in {:.1} s", start.elapsed().as_secs_f64());
            }
            if start.elapsed() >= timeout {
                kill_tree(pid);
                break format!("killed after {} s without stopping", timeout.as_secs());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    // Children that outlived the main process (PostgreSQL backends of a killed postmaster),
    // while the unreaped leader still holds the group id.
    signal_group(pid, libc::SIGKILL);
    let status = child.wait();
    unregister(pid);
    match status {
        Ok(s) if how.starts_with("had") => format!("had already exited ({s})"),
        _ => how,
    }
}

/// A free TCP port on 127.0.0.1, free at the time of asking. It is taken at random below the
/// kernel's ephemeral range: a port the kernel hands out (`bind :0`) is one it also gives to
/// outgoing connections, and on a busy host one of those took it before the server bound it.
pub fn free_port() -> anyhow::Result<u16> {
    let below = ephemeral_start().clamp(LOWEST_PORT + 1, u16::MAX);
    for _ in 0..64 {
        let mut b = [0u8; 2];
        if getrandom::fill(&mut b).is_err() {
            break;
        }
        let port = LOWEST_PORT + u16::from_le_bytes(b) % (below - LOWEST_PORT);
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

/// Below it are the registered ports of common services (MySQL's 3306, PostgreSQL's 5432).
const LOWEST_PORT: u16 = 10_000;

/// The first port of the kernel's ephemeral range (32768 unless configured otherwise).
fn ephemeral_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

/// The identity of a child once it runs `program`: a process just forked shows dbperf's command
/// line until its exec, and an empty one for a moment during it. A fetched build's `program` is
/// a shell wrapper that sets up libraries and then execs the server (or the build's own loader
/// with it): the shell running the wrapper is passed over too, and the identity is the process
/// that stays. None when it ended first.
pub fn identity_after_exec(child: &Child, program: &Path) -> anyhow::Result<Option<Identity>> {
    let argv0 = program.to_string_lossy();
    let own = Identity::this_process().map(|i| i.cmdline);
    let start = Instant::now();
    loop {
        if has_ended(child) {
            return Ok(None);
        }
        if let Some(id) = Identity::of(child.id()) {
            let forked_only = own.as_ref() == Some(&id.cmdline);
            let wrapper_shell = id.cmdline.get(1).is_some_and(|a| *a == argv0)
                && Path::new(&id.cmdline[0])
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().ends_with("sh"));
            if id.cmdline.first().is_some_and(|a| *a == argv0) || (!forked_only && !wrapper_shell) {
                return Ok(Some(id));
            }
        }
        if start.elapsed() > Duration::from_secs(10) {
            anyhow::bail!(
                "{} (pid {}) did not start within 10 s",
                program.display(),
                child.id()
            );
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[cfg(test)]
mod tests {
    use super::{ephemeral_start, failure_excerpt, free_port, LOWEST_PORT};

    #[test]
    fn a_free_port_is_below_the_ephemeral_range_and_free() {
        for _ in 0..20 {
            let p = free_port().unwrap();
            assert!(p >= LOWEST_PORT, "{p}");
            assert!(
                p < ephemeral_start() || ephemeral_start() <= LOWEST_PORT,
                "{p}"
            );
            assert!(std::net::TcpListener::bind(("127.0.0.1", p)).is_ok(), "{p}");
        }
    }

    #[test]
    fn a_failed_tools_error_line_survives_its_usage_text() {
        let mut out = String::from(
            "Installing MariaDB system tables\n[ERROR] InnoDB: cannot lock ./ibdata1\n",
        );
        for i in 0..40 {
            out.push_str(&format!("  --option-{i}  what it does\n"));
        }
        let e = failure_excerpt(&out);
        assert!(e.starts_with("[ERROR] InnoDB: cannot lock"), "{e}");
        assert!(e.ends_with("--option-39  what it does"), "{e}");
        assert!(!e.contains("--option-19 "), "{e}");
        // Nothing that names an error: the tail alone.
        assert_eq!(failure_excerpt("a\nb"), "a\nb");
    }
}
