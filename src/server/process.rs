//! Starting server processes as an unprivileged user in their own process group, and stopping
//! them by pid: graceful signal, then forced after a timeout. Every started server is in a
//! registry so that even an emergency exit (a second Ctrl-C) kills what dbperf started.

use std::ffi::CString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

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

/// Creates `dir` (and parents) private to the server user: mode 0700, owned by it.
pub fn private_dir(dir: &Path, user: Option<&User>) -> anyhow::Result<()> {
    fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    if let Some(u) = user {
        std::os::unix::fs::chown(dir, Some(u.uid), Some(u.gid)).map_err(|e| {
            anyhow::anyhow!("cannot give {} to user {}: {e}", dir.display(), u.name)
        })?;
    }
    Ok(())
}

/// A command that runs as `user` (when given), in its own process group so a Ctrl-C in the
/// terminal reaches dbperf only and dbperf decides how the server stops.
pub fn command(program: &Path, user: Option<&User>) -> Command {
    let mut c = Command::new(program);
    c.stdin(Stdio::null()).process_group(0);
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

/// Runs a short command (initdb, install-db) to completion; the error carries its output.
pub fn run_to_end(mut c: Command, what: &str, timeout: Duration) -> anyhow::Result<String> {
    let log = tempfile_path();
    let f = fs::File::create(&log)?;
    c.stdout(f.try_clone()?).stderr(f);
    let mut child = c
        .spawn()
        .map_err(|e| anyhow::anyhow!("cannot run {what}: {e}"))?;
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            let out = fs::read_to_string(&log).unwrap_or_default();
            let _ = fs::remove_file(&log);
            anyhow::bail!(
                "{what} did not finish in {} s:\n{}",
                timeout.as_secs(),
                tail(&out, 20)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = fs::read_to_string(&log).unwrap_or_default();
    let _ = fs::remove_file(&log);
    if !status.success() {
        anyhow::bail!("{what} failed ({status}):\n{}", tail(&out, 20));
    }
    Ok(out)
}

fn tempfile_path() -> std::path::PathBuf {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("dbperf-cmd-{}-{n}.log", std::process::id()))
}

/// The last `n` lines of a log, for error messages.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(n);
    lines[start..].join("\n")
}

pub fn tail_file(path: &Path, n: usize) -> String {
    tail(&fs::read_to_string(path).unwrap_or_default(), n)
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

/// Stops a server started by `command`: `graceful` signal, wait up to `timeout`, then SIGKILL
/// to the whole group. Returns how it ended.
pub fn stop(child: &mut Child, graceful: i32, timeout: Duration) -> String {
    let pid = child.id();
    if let Ok(Some(status)) = child.try_wait() {
        signal_group(pid, libc::SIGKILL);
        unregister(pid);
        return format!("had already exited ({status})");
    }
    signal(pid, graceful);
    let start = Instant::now();
    let how = loop {
        match child.try_wait() {
            Ok(Some(_)) => break format!("stopped in {:.1} s", start.elapsed().as_secs_f64()),
            Ok(None) if start.elapsed() < timeout => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                signal_group(pid, libc::SIGKILL);
                let _ = child.wait();
                break format!("killed after {} s without stopping", timeout.as_secs());
            }
        }
    };
    // Children that outlived the main process (PostgreSQL backends of a killed postmaster).
    signal_group(pid, libc::SIGKILL);
    unregister(pid);
    how
}

/// A free TCP port on 127.0.0.1 (the kernel's choice; free at the time of asking).
pub fn free_port() -> anyhow::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}
