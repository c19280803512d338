//! The leftover sweep of memory caps' cgroups (`--server-memory`): the cgroups this user's
//! registry records (cgroup_records.rs) whose dbperf is gone and whose server is gone (no
//! process in the cgroup) are removed with rmdir, and their records with them. Nothing is
//! removed for its name: a `dbperf-*` cgroup no record names (someone's own, a cgroup of an
//! older dbperf) is never touched, nor a directory of a recorded name that is not the one its
//! dbperf made, nor anything a record of another user's names.

use std::path::{Path, PathBuf};

use super::cgroup::Controller;
use super::cgroup_records::{remove_made, Record, Records, Removal, Unread};
use super::identity::Identity;
use crate::safe_fs::{self, Also, Dir};

/// A record the sweep did not act on, for a warning.
#[derive(Debug, Clone, PartialEq)]
pub enum Ignored {
    /// Not a record dbperf wrote whole: cut short, not JSON, naming another user.
    Damaged { path: PathBuf, why: String },
    /// Another user's, or one others can change.
    NotOwn { path: PathBuf, why: String },
}

/// What became of one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// Its dbperf still runs: the cgroup is its own (its server may not have joined it yet).
    OwnerRuns,
    /// The cgroup holds a process or a child cgroup: kept, and its record.
    Held,
    /// The cgroup was removed, or was not there to remove, or its name is another's now, or the
    /// record is of another boot or names nothing dbperf makes: the record is gone.
    Forgotten(Removal),
}

/// Sweeps `records` against the memory controller under `sys` (`/sys`). Without a controller
/// nothing is done: the records stay for a sweep that can look.
pub fn sweep(records: &Records, sys: &Path) -> Vec<Ignored> {
    let Some(c) = Controller::find(sys) else {
        return Vec::new();
    };
    let Ok(root) = safe_fs::open_dir(c.root(), Also::Nobody) else {
        return Vec::new();
    };
    let boot = Identity::this_process().map(|i| i.boot_id);
    let mut ignored = Vec::new();
    for (path, read) in records.list() {
        match read {
            Ok(r) => {
                settle(records, &root, &path, &r, boot.as_deref());
            }
            Err(Unread::Damaged(why)) => ignored.push(Ignored::Damaged { path, why }),
            Err(Unread::NotOwn(why)) => ignored.push(Ignored::NotOwn { path, why }),
        }
    }
    ignored
}

/// Settles the record `r` (its file `at`) under the controller's root `root`, on the boot
/// `boot`.
pub fn settle(records: &Records, root: &Dir, at: &Path, r: &Record, boot: Option<&str>) -> Settled {
    if r.owner.is_alive_same() {
        return Settled::OwnerRuns;
    }
    // A cgroup lives in the kernel: none outlives a reboot, so nothing a record of another boot
    // names can be the one it made.
    let this_boot = boot.is_some_and(|b| b == r.owner.boot_id);
    let removal = match r.name_under(root.path()) {
        Some(name) if this_boot => remove_made(root, name, r),
        _ => Removal::Gone,
    };
    if removal == Removal::Held {
        return Settled::Held;
    }
    records.forget(at);
    Settled::Forgotten(removal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::cgroup::tests::{records, v2_fixture};
    use crate::server::cgroup_records::{DirId, Record};
    use std::os::unix::fs::MetadataExt;
    use std::time::{Duration, SystemTime};

    /// The identity of a process that has ended.
    fn gone() -> Identity {
        let mut c = std::process::Command::new("sleep")
            .arg("1000")
            .spawn()
            .unwrap();
        let id = crate::server::identity::tests::exec_done(c.id(), "sleep");
        c.kill().unwrap();
        c.wait().unwrap();
        id
    }

    fn now_s() -> i64 {
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64
    }

    /// A record of `dir` by `owner`, of the directory there now when `made`.
    fn record(dir: &Path, owner: &Identity, made: bool) -> Record {
        let m = std::fs::metadata(dir).ok();
        Record {
            schema: 1,
            path: dir.display().to_string(),
            // SAFETY: geteuid has no preconditions.
            uid: unsafe { libc::geteuid() },
            owner: owner.clone(),
            recorded_unix_s: now_s(),
            made: m.filter(|_| made).map(|m| DirId {
                dev: m.dev(),
                ino: m.ino(),
            }),
        }
    }

    /// Sets a directory's times back, as if it had been made `secs` ago.
    fn age(dir: &Path, secs: u64) {
        let t = SystemTime::now() - Duration::from_secs(secs);
        let f = std::fs::File::open(dir).unwrap();
        f.set_times(std::fs::FileTimes::new().set_modified(t).set_accessed(t))
            .unwrap();
    }

    /// Issue 45, case 5: the sweep removes what its records name and whose dbperf and server
    /// are gone, and nothing else: not a hand-made `dbperf-admin-keep` (empty, over a minute
    /// old), not a recorded cgroup whose dbperf still runs or that holds a process, not a
    /// directory of a recorded name made later by someone else.
    #[test]
    fn the_sweep_removes_only_recorded_cgroups_of_gone_servers() {
        let t = v2_fixture();
        let root = t.path().join("fs/cgroup");
        let rs = records(&t);
        let dead = gone();
        let me = Identity::this_process().unwrap();
        let mk = |n: &str| {
            let d = root.join(n);
            std::fs::create_dir(&d).unwrap();
            d
        };
        let keep = mk("dbperf-admin-keep");
        age(&keep, 120);
        let left = mk("dbperf-pg-1");
        rs.add(&record(&left, &dead, true)).unwrap();
        let busy = mk("dbperf-pg-2");
        rs.add(&record(&busy, &me, true)).unwrap();
        let held = mk("dbperf-pg-3");
        std::fs::write(held.join("cgroup.procs"), "4242\n").unwrap();
        rs.add(&record(&held, &dead, true)).unwrap();
        // Recorded, removed, and made again by someone else: another directory.
        let again = mk("dbperf-pg-4");
        let old = record(&again, &dead, true);
        // Made while the first is there: a fixture's filesystem may give a removed directory's
        // inode to the next one, which cgroupfs never does (its inodes carry a generation).
        let other = mk("dbperf-other");
        std::fs::remove_dir(&again).unwrap();
        std::fs::rename(&other, &again).unwrap();
        rs.add(&old).unwrap();
        // Recorded but never made (killed between the two).
        rs.add(&record(&root.join("dbperf-pg-5"), &dead, false))
            .unwrap();

        assert!(sweep(&rs, t.path()).is_empty());
        assert!(!left.exists(), "a recorded cgroup of a gone server stays");
        for d in [&keep, &busy, &held, &again] {
            assert!(d.is_dir(), "{d:?} was removed");
        }
        let kept: Vec<String> = rs
            .list()
            .into_iter()
            .map(|(_, r)| r.unwrap().path)
            .collect();
        let want = [&busy, &held].map(|d| d.display().to_string());
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert!(want.iter().all(|w| kept.contains(w)), "{kept:?}");
    }

    /// A dbperf killed between making its cgroup and recording which directory it made: the
    /// record written first names it, and the sweep removes it once that dbperf is gone. A
    /// directory of that name made long before the record (the record of a name found taken
    /// at the making) is not it.
    #[test]
    fn a_cgroup_made_but_not_yet_said_so_is_swept_by_its_record() {
        let t = v2_fixture();
        let root = t.path().join("fs/cgroup");
        let rs = records(&t);
        let dead = gone();
        let fresh = root.join("dbperf-pg-1");
        let r = record(&fresh, &dead, false);
        rs.add(&r).unwrap();
        std::fs::create_dir(&fresh).unwrap();
        let older = root.join("dbperf-pg-2");
        std::fs::create_dir(&older).unwrap();
        age(&older, 120);
        rs.add(&record(&older, &dead, false)).unwrap();
        sweep(&rs, t.path());
        assert!(!fresh.exists());
        assert!(older.is_dir());
        assert!(rs.list().is_empty());
    }

    /// Records of another user's, or naming something else than a `dbperf-*` cgroup directly
    /// under the controller, are not acted on.
    #[test]
    fn only_this_users_records_of_cgroups_under_the_controller_are_obeyed() {
        let t = v2_fixture();
        let root = t.path().join("fs/cgroup");
        let rs = records(&t);
        let dead = gone();
        let system = root.join("system");
        let elsewhere = t.path().join("elsewhere/dbperf-x");
        for d in [&system, &elsewhere] {
            std::fs::create_dir_all(d).unwrap();
        }
        rs.add(&record(&system, &dead, true)).unwrap();
        rs.add(&record(&elsewhere, &dead, true)).unwrap();
        let sneaky = record(&root.join("dbperf-pg-1/../system"), &dead, false);
        rs.add(&sneaky).unwrap();
        let mut foreign = record(&mk_dir(&root, "dbperf-pg-2"), &dead, true);
        foreign.uid += 1;
        let foreign_at = rs.add(&foreign).unwrap();
        let ignored = sweep(&rs, t.path());
        assert!(system.is_dir() && elsewhere.is_dir() && root.join("dbperf-pg-2").is_dir());
        assert!(
            matches!(&ignored[..], [Ignored::Damaged { path, why }] if *path == foreign_at
                && why.contains("not")),
            "{ignored:?}"
        );
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&foreign_at, std::fs::Permissions::from_mode(0o666)).unwrap();
        let ignored = sweep(&rs, t.path());
        assert!(
            matches!(&ignored[..], [Ignored::NotOwn { why, .. }] if why.contains("can be written by other users")),
            "{ignored:?}"
        );
        assert!(root.join("dbperf-pg-2").is_dir());
    }

    fn mk_dir(root: &Path, n: &str) -> PathBuf {
        let d = root.join(n);
        std::fs::create_dir(&d).unwrap();
        d
    }
}
