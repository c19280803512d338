//! A memory cap for a managed server (`--server-memory`, docs/io-bound.md): one cgroup per
//! server, `dbperf-<target>-<port>` directly under the memory controller's root, holding the
//! server and everything it forks from before its first instruction (the child joins it before
//! exec), so its page cache, shared memory and private memory all count against the cap.
//! cgroup v2's `memory.max` where the memory controller is on the unified hierarchy, cgroup
//! v1's `memory.limit_in_bytes` where it is not.
//!
//! The cgroup is dbperf's by its record, not by its name: always made new, recorded in the
//! server registry before it is made, never one someone else made (cgroup_records.rs); removed
//! when the server stops, and by the registry's sweep of records when a dbperf was killed
//! (cgroup_sweep.rs); read back at the end of each step (cgroup_held.rs).
//!
//! Every path is under the sysfs root (`host::Roots::sys`), so the v2 branch is tested against
//! a fixture tree.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::cgroup_records::{make_fresh, remove_made, Made, Mkdir, Records, Removal};
use crate::error::bad_input;
use crate::host::sysfs;
use crate::safe_fs::{self, Also};

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

    pub(super) fn root(&self) -> &Path {
        match self {
            Controller::V2(p) | Controller::V1(p) => p,
        }
    }

    /// The file holding a cgroup's limit.
    pub(super) fn limit_file(&self) -> &'static str {
        match self {
            Controller::V2(_) => "memory.max",
            Controller::V1(_) => "memory.limit_in_bytes",
        }
    }
}

/// Before anything runs: a cap can be made here (a memory controller, root to make cgroups).
/// A cgroup is made and removed to check, recorded in `records` like every cgroup dbperf makes.
pub fn check(sys: &Path, records: &Records) -> anyhow::Result<Controller> {
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
    let cannot = |e: anyhow::Error| {
        anyhow::Error::new(crate::error::BadInput(format!(
            "--server-memory cannot make a cgroup under {}: {e:#}",
            c.root().display()
        )))
    };
    let root = safe_fs::open_dir(c.root(), Also::Nobody).map_err(cannot)?;
    let base = format!("probe-{}", std::process::id());
    let made = make_fresh(records, &root, &base, &|d, n| d.make_new_dir(n)).map_err(cannot)?;
    if remove_made(&root, &made.name, &made.record) != Removal::Held {
        records.forget(&made.at);
    }
    Ok(c)
}

/// The cgroups this dbperf made and has not removed: a second Ctrl-C kills the servers and
/// removes these before dbperf exits at once.
static LIVE: std::sync::Mutex<Vec<Cap>> = std::sync::Mutex::new(Vec::new());

/// Removes every cgroup this dbperf made, once its processes are gone (after the servers were
/// killed). Never blocks on the list: a thread holding it is left alone.
pub fn remove_live() {
    let caps = match LIVE.try_lock() {
        Ok(g) => g.clone(),
        Err(_) => return,
    };
    for c in caps {
        c.remove_in_time();
    }
}

/// A server's cgroup: made new, recorded, and capped.
#[derive(Debug, Clone)]
pub struct Cap {
    pub dir: PathBuf,
    pub bytes: u64,
    pub(super) controller: Controller,
    pub(super) made: Made,
    records: Records,
}

impl Cap {
    /// Makes a new cgroup `dbperf-<name>` under the controller's root (or `-2` to `-8` after it
    /// when that name is taken: a cgroup dbperf did not make is never used), recorded in
    /// `records` before it is made, and caps it at `bytes`.
    pub fn create(
        c: &Controller,
        name: &str,
        bytes: u64,
        records: &Records,
    ) -> anyhow::Result<Cap> {
        Cap::create_with(c, name, bytes, records, &|d, n| d.make_new_dir(n))
    }

    pub(super) fn create_with(
        c: &Controller,
        name: &str,
        bytes: u64,
        records: &Records,
        mkdir: Mkdir,
    ) -> anyhow::Result<Cap> {
        if !crate::untrusted::plain_name(name) {
            anyhow::bail!(
                "{} is not a plain name for a cgroup",
                crate::untrusted::shown(name)
            );
        }
        let root = safe_fs::open_dir(c.root(), Also::Nobody)?;
        let made = make_fresh(records, &root, name, mkdir)?;
        let cap = Cap {
            dir: c.root().join(&made.name),
            bytes,
            controller: c.clone(),
            made,
            records: records.clone(),
        };
        if let Err(e) = cap.set_limits() {
            cap.remove();
            return Err(e);
        }
        if let Ok(mut live) = LIVE.lock() {
            live.push(cap.clone());
        }
        Ok(cap)
    }

    /// The cap on the new cgroup, and no swap for it.
    fn set_limits(&self) -> anyhow::Result<()> {
        let set = |file: &str, value: &str| {
            sysfs::write(&self.dir.join(file), value)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", self.dir.join(file).display()))
        };
        if let Controller::V2(root) = &self.controller {
            // The root must hand the memory controller to its children (systemd does; a bare
            // hierarchy may not).
            let _ = sysfs::write(&root.join("cgroup.subtree_control"), "+memory");
        }
        set(self.controller.limit_file(), &self.bytes.to_string())?;
        // Swap would let the server hold more than the cap: none for it (a kernel without swap
        // accounting has no such file, and then nothing to limit). v1's memory+swap limit may
        // never be below the memory limit, so it is set after it.
        let _ = match self.controller {
            Controller::V2(_) => set("memory.swap.max", "0"),
            Controller::V1(_) => set("memory.memsw.limit_in_bytes", &self.bytes.to_string()),
        };
        Ok(())
    }

    /// What a child writes, between fork and exec, to join the cgroup: its `cgroup.procs`.
    pub fn procs_file(&self) -> io::Result<CString> {
        CString::new(self.dir.join("cgroup.procs").as_os_str().as_bytes())
            .map_err(|_| io::Error::other("a cgroup path with a NUL"))
    }

    /// How many times the kernel killed a process of this cgroup for going over the cap: v2's
    /// `memory.events` and v1's `memory.oom_control` (kernel 4.13+) count them as `oom_kill`.
    pub fn oom_kills(&self) -> u64 {
        oom_kills_in(&self.dir)
    }

    /// Removes the cgroup once the processes in it are gone (a server's last backends may take
    /// a moment to exit); a few seconds at most, then left for the sweep, which its record
    /// names it to.
    pub fn remove(&self) -> bool {
        let gone = self.remove_in_time();
        if let Ok(mut live) = LIVE.lock() {
            live.retain(|c| c.made.at != self.made.at);
        }
        gone
    }

    fn remove_in_time(&self) -> bool {
        let until = Instant::now() + Duration::from_secs(5);
        loop {
            if self.remove_now() {
                return true;
            }
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// One try: true when the cgroup is gone (or its name is another's now) and its record
    /// with it.
    fn remove_now(&self) -> bool {
        let Ok(root) = safe_fs::open_dir(self.controller.root(), Also::Nobody) else {
            return false;
        };
        if remove_made(&root, &self.made.name, &self.made.record) == Removal::Held {
            return false;
        }
        self.records.forget(&self.made.at);
        true
    }
}

fn oom_kills_in(dir: &Path) -> u64 {
    ["memory.events", "memory.oom_control"]
        .iter()
        .filter_map(|f| sysfs::read(&dir.join(f)))
        .find_map(|text| {
            text.lines().find_map(|l| {
                let (k, v) = l.split_once(' ')?;
                (k == "oom_kill").then(|| v.trim().parse().ok())?
            })
        })
        .unwrap_or(0)
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::safe_fs::Dir;

    /// A fixture of cgroup v2 (the kernel's files are plain files here).
    pub(in crate::server) fn v2_fixture() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let cg = t.path().join("fs/cgroup");
        std::fs::create_dir_all(&cg).unwrap();
        std::fs::write(cg.join("cgroup.controllers"), "cpuset cpu io memory pids\n").unwrap();
        std::fs::write(cg.join("cgroup.subtree_control"), "").unwrap();
        t
    }

    /// Makes a cgroup in a fixture as the kernel does: new, with its files.
    pub(in crate::server) fn fixture_mkdir(d: &Dir, name: &str) -> io::Result<()> {
        d.make_new_dir(name)?;
        for f in [
            "memory.max",
            "memory.swap.max",
            "cgroup.procs",
            "memory.peak",
        ] {
            std::fs::write(d.path().join(name).join(f), "")?;
        }
        Ok(())
    }

    /// The cgroup records of a fixture (beside its sysfs tree).
    pub(in crate::server) fn records(t: &tempfile::TempDir) -> Records {
        Records::open(&t.path().join("state/cgroups")).unwrap()
    }

    fn fixture_cap(t: &tempfile::TempDir, name: &str) -> anyhow::Result<Cap> {
        let c = Controller::find(t.path()).unwrap();
        Cap::create_with(&c, name, 256 << 20, &records(t), &fixture_mkdir)
    }

    fn read(p: PathBuf) -> String {
        std::fs::read_to_string(p).unwrap()
    }

    #[test]
    fn v2_is_preferred_and_its_files_are_written() {
        let t = v2_fixture();
        let c = Controller::find(t.path()).unwrap();
        assert_eq!(c, Controller::V2(t.path().join("fs/cgroup")));
        let cap = fixture_cap(&t, "pg-1").unwrap();
        assert_eq!(cap.dir, t.path().join("fs/cgroup/dbperf-pg-1"));
        assert_eq!(read(cap.dir.join("memory.max")), "268435456\n");
        assert_eq!(read(cap.dir.join("memory.swap.max")), "0\n");
        assert_eq!(
            read(t.path().join("fs/cgroup/cgroup.subtree_control")),
            "+memory\n"
        );
        // Recorded, with the very directory made.
        let listed = records(&t).list();
        let [(at, Ok(r))] = &listed[..] else {
            panic!("{listed:?}")
        };
        assert_eq!(*at, cap.made.at);
        assert_eq!(r.path, cap.dir.display().to_string());
        let st = std::fs::metadata(&cap.dir).unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_eq!(r.made.map(|m| m.ino), Some(st.ino()));
        assert!(Cap::create_with(&c, "../x", 1 << 30, &records(&t), &fixture_mkdir).is_err());
    }

    /// Issue 45, case 4: a cgroup of the next name someone else made (empty itself, with a
    /// child cgroup) is never used nor changed: the next name is.
    #[test]
    fn an_existing_cgroup_of_the_name_is_never_used() {
        let t = v2_fixture();
        let theirs = t.path().join("fs/cgroup/dbperf-pg-1");
        std::fs::create_dir_all(theirs.join("child")).unwrap();
        std::fs::write(theirs.join("memory.max"), "max\n").unwrap();
        std::fs::write(theirs.join("cgroup.procs"), "").unwrap();
        std::fs::write(theirs.join("child/cgroup.procs"), "4242\n").unwrap();
        let cap = fixture_cap(&t, "pg-1").unwrap();
        assert!(cap.dir.ends_with("dbperf-pg-1-2"), "{:?}", cap.dir);
        assert_eq!(read(theirs.join("memory.max")), "max\n");
        assert_eq!(read(theirs.join("child/cgroup.procs")), "4242\n");
        // The next one takes the name after.
        let next = fixture_cap(&t, "pg-1").unwrap();
        assert!(next.dir.ends_with("dbperf-pg-1-3"), "{:?}", next.dir);
    }

    /// A link at the name is not followed (mkdirat fails on it): the next name is used, and
    /// what the link points at is not written.
    #[test]
    fn a_link_at_the_name_is_passed_over_never_followed() {
        let t = v2_fixture();
        let elsewhere = t.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("memory.max"), "max\n").unwrap();
        let link = t.path().join("fs/cgroup/dbperf-pg-1");
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        let cap = fixture_cap(&t, "pg-1").unwrap();
        assert!(cap.dir.ends_with("dbperf-pg-1-2"), "{:?}", cap.dir);
        assert_eq!(read(elsewhere.join("memory.max")), "max\n");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        // A link planted between the look and the making is passed over the same way.
        let late = t.path().join("fs/cgroup/dbperf-pg-2");
        let plant = |d: &Dir, n: &str| {
            if n == "dbperf-pg-2" {
                std::os::unix::fs::symlink(&elsewhere, &late)?;
            }
            fixture_mkdir(d, n)
        };
        let c = Controller::find(t.path()).unwrap();
        let cap = Cap::create_with(&c, "pg-2", 1 << 30, &records(&t), &plant).unwrap();
        assert!(cap.dir.ends_with("dbperf-pg-2-2"), "{:?}", cap.dir);
        assert_eq!(read(elsewhere.join("memory.max")), "max\n");
    }

    #[test]
    fn every_name_taken_is_one_sentence_and_no_record() {
        let t = v2_fixture();
        for n in crate::server::cgroup_records::names("pg-1") {
            std::fs::create_dir(t.path().join("fs/cgroup").join(n)).unwrap();
        }
        let e = fixture_cap(&t, "pg-1").unwrap_err();
        assert!(crate::error::is_bad_input(&e), "{e:#}");
        let s = e.to_string();
        assert!(
            s.contains("dbperf-pg-1 to dbperf-pg-1-8") && s.contains("takes over no cgroup"),
            "{s}"
        );
        assert!(records(&t).list().is_empty());
    }

    /// The record is on disk before the cgroup is made, so a dbperf killed between the two
    /// leaves nothing unrecorded; a making that fails takes its record back.
    #[test]
    fn the_record_is_written_before_the_cgroup_is_made() {
        let t = v2_fixture();
        let seen = std::cell::RefCell::new(Vec::new());
        let failing = |d: &Dir, n: &str| {
            let listed = records(&t).list();
            let found = listed.iter().any(|(_, r)| {
                r.as_ref().is_ok_and(|r| {
                    r.path == d.path().join(n).display().to_string() && r.made.is_none()
                })
            });
            seen.borrow_mut().push((found, d.has(n)));
            Err(io::Error::other("no room for a cgroup"))
        };
        let c = Controller::find(t.path()).unwrap();
        let e = Cap::create_with(&c, "pg-1", 1 << 30, &records(&t), &failing).unwrap_err();
        assert!(e.to_string().contains("no room for a cgroup"), "{e:#}");
        assert_eq!(*seen.borrow(), [(true, false)], "recorded, not yet made");
        assert!(records(&t).list().is_empty(), "taken back");
    }

    #[test]
    fn oom_kills_are_read_from_either_version() {
        let t = tempfile::tempdir().unwrap();
        assert_eq!(oom_kills_in(t.path()), 0);
        std::fs::write(
            t.path().join("memory.oom_control"),
            "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
        )
        .unwrap();
        assert_eq!(oom_kills_in(t.path()), 2);
        std::fs::write(
            t.path().join("memory.events"),
            "low 0\nhigh 0\nmax 9\noom 1\noom_kill 1\n",
        )
        .unwrap();
        assert_eq!(oom_kills_in(t.path()), 1);
    }

    #[test]
    fn no_controller_is_bad_input() {
        let t = tempfile::tempdir().unwrap();
        assert_eq!(Controller::find(t.path()), None);
        let e = check(t.path(), &records(&t)).unwrap_err();
        assert!(crate::error::is_bad_input(&e), "{e:#}");
        // v1 when only it has memory.
        let v1 = t.path().join("fs/cgroup/memory");
        std::fs::create_dir_all(&v1).unwrap();
        std::fs::write(v1.join("memory.limit_in_bytes"), "9223372036854771712").unwrap();
        std::fs::create_dir_all(t.path().join("fs/cgroup/unified")).unwrap();
        std::fs::write(t.path().join("fs/cgroup/unified/cgroup.controllers"), "").unwrap();
        assert_eq!(Controller::find(t.path()), Some(Controller::V1(v1)));
    }
}
