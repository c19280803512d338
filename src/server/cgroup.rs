//! A memory cap for a managed server (`--server-memory`, docs/targets.md): one cgroup per
//! server, `dbperf-<instance>` directly under the memory controller's root, holding the server
//! and everything it forks from before its first instruction (the child joins it before exec),
//! so its page cache, shared memory and private memory all count against the cap. cgroup v2's
//! `memory.max` where the memory controller is on the unified hierarchy, cgroup v1's
//! `memory.limit_in_bytes` where it is not. Removed when the server stops, and by the registry's
//! sweep when a dbperf was killed.
//!
//! Every path is under the sysfs root (`host::Roots::sys`), so the v2 branch is tested against
//! a fixture tree.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::bad_input;
use crate::host::sysfs;

/// Where the memory controller is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Controller {
    /// cgroup v2: the unified hierarchy's root, whose `cgroup.controllers` lists `memory`.
    V2(PathBuf),
    /// cgroup v1: the memory hierarchy's root.
    V1(PathBuf),
}

impl Controller {
    /// The memory controller under `sys` (`/sys`): on the unified hierarchy first (mounted at
    /// fs/cgroup, or at fs/cgroup/unified beside v1's), else v1's fs/cgroup/memory.
    pub fn find(sys: &Path) -> Option<Controller> {
        let cg = sys.join("fs/cgroup");
        for unified in [cg.clone(), cg.join("unified")] {
            let listed = sysfs::read(&unified.join("cgroup.controllers"))
                .is_some_and(|c| c.split_whitespace().any(|x| x == "memory"));
            if listed {
                return Some(Controller::V2(unified));
            }
        }
        let v1 = cg.join("memory");
        v1.join("memory.limit_in_bytes")
            .exists()
            .then_some(Controller::V1(v1))
    }

    /// How run.json names what enforced a cap.
    pub fn describe(&self) -> String {
        match self {
            Controller::V2(_) => "cgroup v2 memory.max".into(),
            Controller::V1(_) => "cgroup v1 memory.limit_in_bytes".into(),
        }
    }

    fn root(&self) -> &Path {
        match self {
            Controller::V2(p) | Controller::V1(p) => p,
        }
    }

    /// The file holding a cgroup's limit.
    fn limit_file(&self) -> &'static str {
        match self {
            Controller::V2(_) => "memory.max",
            Controller::V1(_) => "memory.limit_in_bytes",
        }
    }
}

/// Before anything runs: a cap can be made here (a memory controller, root to make cgroups).
pub fn check(sys: &Path) -> anyhow::Result<Controller> {
    let Some(c) = Controller::find(sys) else {
        return bad_input(format!(
            "--server-memory needs the kernel's memory controller (cgroup v2 with memory in \
             {0}/fs/cgroup/cgroup.controllers, or cgroup v1 at {0}/fs/cgroup/memory), and this \
             host has neither",
            sys.display()
        ));
    };
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 && sys == Path::new("/sys") {
        return bad_input(
            "--server-memory makes a cgroup for each server, which needs root: run dbperf as \
             root (or drop --server-memory)",
        );
    }
    // Root in a container often sees the controller read-only: a cgroup made and removed now
    // says so before anything runs, not at each server's start.
    let probe = c
        .root()
        .join(format!("dbperf-probe-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir(&probe) {
        return bad_input(format!(
            "--server-memory cannot make a cgroup under {}: {e}",
            c.root().display()
        ));
    }
    let _ = std::fs::remove_dir(&probe);
    Ok(c)
}

/// The cgroups this dbperf made and has not removed: a second Ctrl-C kills the servers and
/// removes these before dbperf exits at once.
static LIVE: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Removes every cgroup this dbperf made, once its processes are gone (after the servers were
/// killed). Never blocks on the list: a thread holding it is left alone.
pub fn remove_live() {
    let dirs = match LIVE.try_lock() {
        Ok(g) => g.clone(),
        Err(_) => return,
    };
    for d in dirs {
        remove_dir(&d);
    }
}

/// A server's cgroup, made and capped.
#[derive(Debug, Clone)]
pub struct Cap {
    pub dir: PathBuf,
    pub bytes: u64,
}

impl Cap {
    /// Makes `dbperf-<name>` under the controller's root, capped at `bytes`. An empty one of
    /// that name left by a killed dbperf is taken over.
    pub fn create(c: &Controller, name: &str, bytes: u64) -> anyhow::Result<Cap> {
        if !crate::untrusted::plain_name(name) {
            anyhow::bail!(
                "{} is not a plain name for a cgroup",
                crate::untrusted::shown(name)
            );
        }
        let dir = c.root().join(format!("dbperf-{name}"));
        match std::fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && tasks(&dir).is_empty() => {}
            Err(e) => anyhow::bail!("cannot make the cgroup {}: {e}", dir.display()),
        }
        let cap = Cap { dir, bytes };
        let set = |file: &str, value: &str| {
            sysfs::write(&cap.dir.join(file), value)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", cap.dir.join(file).display()))
        };
        if let Controller::V2(root) = c {
            // The root must hand the memory controller to its children (systemd does; a bare
            // hierarchy may not).
            let _ = sysfs::write(&root.join("cgroup.subtree_control"), "+memory");
        }
        // v1's memory+swap limit may never be below the memory limit: when a leftover taken
        // over had a smaller one, it is raised first (failing, harmlessly, when it is lowered),
        // and set again after the limit.
        let memsw = "memory.memsw.limit_in_bytes";
        let v1_swap = matches!(c, Controller::V1(_)) && cap.dir.join(memsw).exists();
        if v1_swap {
            let _ = set(memsw, &bytes.to_string());
        }
        if let Err(e) = set(c.limit_file(), &bytes.to_string()) {
            cap.remove();
            return Err(e);
        }
        // Swap would let the server hold more than the cap: none for it (a kernel without swap
        // accounting has no such file, and then nothing to limit).
        match c {
            Controller::V2(_) => {
                let _ = set("memory.swap.max", "0");
            }
            Controller::V1(_) if v1_swap => {
                let _ = set(memsw, &bytes.to_string());
            }
            Controller::V1(_) => {}
        }
        if let Ok(mut live) = LIVE.lock() {
            live.push(cap.dir.clone());
        }
        Ok(cap)
    }

    /// What a child writes, between fork and exec, to join the cgroup: its `cgroup.procs`.
    pub fn procs_file(&self) -> io::Result<CString> {
        CString::new(self.dir.join("cgroup.procs").as_os_str().as_bytes())
            .map_err(|_| io::Error::other("a cgroup path with a NUL"))
    }

    /// How many times the kernel killed a process of this cgroup for going over the cap: v2's
    /// `memory.events` and v1's `memory.oom_control` (kernel 4.13+) count them as `oom_kill`.
    pub fn oom_kills(&self) -> u64 {
        ["memory.events", "memory.oom_control"]
            .iter()
            .filter_map(|f| sysfs::read(&self.dir.join(f)))
            .find_map(|text| {
                text.lines().find_map(|l| {
                    let (k, v) = l.split_once(' ')?;
                    (k == "oom_kill").then(|| v.trim().parse().ok())?
                })
            })
            .unwrap_or(0)
    }

    /// Removes the cgroup once the processes in it are gone (a server's last backends may take
    /// a moment to exit); a few seconds at most, then left for the sweep.
    pub fn remove(&self) -> bool {
        let gone = remove_dir(&self.dir);
        if let Ok(mut live) = LIVE.lock() {
            live.retain(|d| d != &self.dir);
        }
        gone
    }
}

/// The pids in a cgroup (none when it cannot be read).
fn tasks(dir: &Path) -> Vec<u32> {
    sysfs::read(&dir.join("cgroup.procs"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

fn remove_dir(dir: &Path) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        match std::fs::remove_dir(dir) {
            Ok(()) => return true,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return true,
            Err(_) if Instant::now() < until => std::thread::sleep(Duration::from_millis(50)),
            Err(_) => return false,
        }
    }
}

/// Joins the cgroup whose `cgroup.procs` is `procs`, from a child between fork and exec: only
/// async-signal-safe calls (open, write, close). Writing 0 moves the writer itself.
pub fn join_in_child(procs: &CString) -> io::Result<()> {
    // SAFETY: a valid C string; open, write and close are async-signal-safe.
    unsafe {
        let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, b"0".as_ptr().cast(), 1);
        let err = io::Error::last_os_error();
        libc::close(fd);
        if n != 1 {
            return Err(err);
        }
    }
    Ok(())
}

/// Removes the cgroup a registry entry recorded for a server that has stopped or is gone. The
/// entry is a file, so its path is checked first: a `dbperf-<plain name>` directly under this
/// host's memory controller, nothing else. A directory that still holds a process stays.
pub fn remove_recorded(sys: &Path, recorded: &str) -> bool {
    let Some(c) = Controller::find(sys) else {
        return false;
    };
    let path = Path::new(recorded);
    let ours = path.parent() == Some(c.root())
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("dbperf-"))
            .is_some_and(crate::untrusted::plain_name);
    // One that still holds a process stays, without waiting: its server outlived the entry.
    ours && tasks(path).is_empty() && remove_dir(path)
}

/// How long an empty `dbperf-*` cgroup is left to the dbperf that made it: it is empty from
/// when it is made until its server joins it, a moment later.
const SWEEP_AGE: Duration = Duration::from_secs(60);

/// Removes `dbperf-*` cgroups under the controller that hold no process and were made over a
/// minute ago: those of servers a killed dbperf started, once those servers are gone (a
/// SIGKILL between making a cgroup and recording its server leaves one no entry names).
/// Returns how many went.
pub fn sweep(c: &Controller) -> usize {
    let Ok(rd) = std::fs::read_dir(c.root()) else {
        return 0;
    };
    let old = |e: &std::fs::DirEntry| {
        e.metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|a| a >= SWEEP_AGE))
    };
    rd.flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("dbperf-"))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(old)
        .filter(|e| tasks(&e.path()).is_empty())
        .filter(|e| std::fs::remove_dir(e.path()).is_ok())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixture of cgroup v2 (the kernel's files are plain files here).
    fn v2_fixture() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let cg = t.path().join("fs/cgroup");
        std::fs::create_dir_all(&cg).unwrap();
        std::fs::write(cg.join("cgroup.controllers"), "cpuset cpu io memory pids\n").unwrap();
        std::fs::write(cg.join("cgroup.subtree_control"), "").unwrap();
        t
    }

    #[test]
    fn v2_is_preferred_and_its_files_are_written() {
        let t = v2_fixture();
        let c = Controller::find(t.path()).unwrap();
        assert_eq!(c, Controller::V2(t.path().join("fs/cgroup")));
        // A plain directory stands for the cgroup, its files made as the kernel would; one
        // left empty by a killed dbperf is taken over.
        let dir = t.path().join("fs/cgroup/dbperf-pg-1");
        std::fs::create_dir(&dir).unwrap();
        for f in ["memory.max", "memory.swap.max", "cgroup.procs"] {
            std::fs::write(dir.join(f), "").unwrap();
        }
        let cap = Cap::create(&c, "pg-1", 256 << 20).unwrap();
        let read = |p: PathBuf| std::fs::read_to_string(p).unwrap();
        assert_eq!(read(cap.dir.join("memory.max")), "268435456\n");
        assert_eq!(read(cap.dir.join("memory.swap.max")), "0\n");
        assert_eq!(
            read(t.path().join("fs/cgroup/cgroup.subtree_control")),
            "+memory\n"
        );
        // A cgroup that still holds a process is not taken over.
        std::fs::write(dir.join("cgroup.procs"), "4242\n").unwrap();
        assert!(Cap::create(&c, "pg-1", 256 << 20).is_err());
        assert!(cap.dir.ends_with("dbperf-pg-1"));
        assert!(Cap::create(&c, "../x", 1 << 30).is_err());
    }

    #[test]
    fn only_a_recorded_cgroup_of_dbperf_under_the_controller_is_removed() {
        let t = v2_fixture();
        let root = t.path().join("fs/cgroup");
        let elsewhere = t.path().join("elsewhere");
        for d in [
            root.join("dbperf-pg-1"),
            root.join("system"),
            elsewhere.clone(),
        ] {
            std::fs::create_dir_all(&d).unwrap();
        }
        let recorded = |p: PathBuf| remove_recorded(t.path(), p.to_str().unwrap());
        assert!(!recorded(root.join("system")));
        assert!(!recorded(elsewhere.clone()));
        assert!(!recorded(root.join("dbperf-pg-1/../system")));
        assert!(root.join("system").is_dir() && elsewhere.is_dir());
        assert!(recorded(root.join("dbperf-pg-1")));
        assert!(!root.join("dbperf-pg-1").exists());
    }

    #[test]
    fn oom_kills_are_read_from_either_version() {
        let t = tempfile::tempdir().unwrap();
        let cap = Cap {
            dir: t.path().to_path_buf(),
            bytes: 1,
        };
        assert_eq!(cap.oom_kills(), 0);
        std::fs::write(
            t.path().join("memory.oom_control"),
            "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
        )
        .unwrap();
        assert_eq!(cap.oom_kills(), 2);
        std::fs::write(
            t.path().join("memory.events"),
            "low 0\nhigh 0\nmax 9\noom 1\noom_kill 1\n",
        )
        .unwrap();
        assert_eq!(cap.oom_kills(), 1);
    }

    #[test]
    fn the_sweep_leaves_a_cgroup_just_made() {
        let t = v2_fixture();
        let c = Controller::find(t.path()).unwrap();
        std::fs::create_dir(t.path().join("fs/cgroup/dbperf-new")).unwrap();
        assert_eq!(sweep(&c), 0);
        assert!(t.path().join("fs/cgroup/dbperf-new").is_dir());
    }

    #[test]
    fn no_controller_is_bad_input() {
        let t = tempfile::tempdir().unwrap();
        assert_eq!(Controller::find(t.path()), None);
        let e = check(t.path()).unwrap_err();
        assert!(crate::error::is_bad_input(&e), "{e}");
        // v1 when only it has memory.
        let v1 = t.path().join("fs/cgroup/memory");
        std::fs::create_dir_all(&v1).unwrap();
        std::fs::write(v1.join("memory.limit_in_bytes"), "9223372036854771712").unwrap();
        std::fs::create_dir_all(t.path().join("fs/cgroup/unified")).unwrap();
        std::fs::write(t.path().join("fs/cgroup/unified/cgroup.controllers"), "").unwrap();
        assert_eq!(Controller::find(t.path()), Some(Controller::V1(v1)));
    }
}
