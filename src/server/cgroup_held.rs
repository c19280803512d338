//! Whether a server was held to its memory cap, as the kernel says at the end of a step: its
//! cgroup still the one dbperf made, its limit the cap asked, the server's process in it, and
//! the most the cgroup held (docs/io-bound.md, "Read back after each step"). Anyone as root
//! can raise a limit, remove a process from a cgroup or move it elsewhere mid-run; the results
//! then say the step was not capped instead of reporting the cap asked.

use super::cgroup::{Cap, Controller};
use super::cgroup_records::tasks;
use crate::host::sysfs;
use crate::results::StepMemoryCap;
use crate::safe_fs::{self, Also};

/// A cgroup's limit as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Bytes(u64),
    /// v2's `max`: none.
    Unlimited,
    Unread,
}

/// What the kernel said of a cap's cgroup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// The cgroup is there, and is the directory dbperf made.
    pub present: bool,
    pub limit: Limit,
    pub peak: Option<u64>,
    /// The server's main process is in it.
    pub has_server: bool,
}

impl Cap {
    /// The cap as the kernel holds it now for the server whose main process is `server_pid`.
    pub fn held(&self, server_pid: u32) -> StepMemoryCap {
        judge(self.bytes, page_size(), &self.read_back(server_pid))
    }

    fn read_back(&self, server_pid: u32) -> Reading {
        let present = safe_fs::open_dir(self.controller.root(), Also::Nobody)
            .and_then(|root| Ok(root.stat_entry(&self.made.name)?))
            .is_ok_and(|st| self.made.record.is_made(&st));
        if !present {
            return Reading {
                present,
                limit: Limit::Unread,
                peak: None,
                has_server: false,
            };
        }
        let limit = match sysfs::read(&self.dir.join(self.controller.limit_file())) {
            Some(t) if t == "max" => Limit::Unlimited,
            Some(t) => t.parse().map_or(Limit::Unread, Limit::Bytes),
            None => Limit::Unread,
        };
        let peak_file = match self.controller {
            Controller::V2(_) => "memory.peak",
            Controller::V1(_) => "memory.max_usage_in_bytes",
        };
        Reading {
            present,
            limit,
            peak: sysfs::read_u64(&self.dir.join(peak_file)),
            has_server: tasks(&self.dir).contains(&server_pid),
        }
    }
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(p).ok().filter(|&p| p > 0).unwrap_or(4096)
}

/// The step file's record of a cap of `asked` bytes from what was read: held when nothing is
/// wrong. The kernel keeps a limit in whole pages, so `asked` rounded down to one is the cap.
pub fn judge(asked: u64, page: u64, r: &Reading) -> StepMemoryCap {
    let mut wrong = Vec::new();
    if !r.present {
        wrong.push("its cgroup is gone (or is no longer the one dbperf made)".to_string());
    } else {
        match r.limit {
            Limit::Bytes(b) if b == asked || b == asked / page * page => {}
            Limit::Bytes(b) => wrong.push(format!(
                "the cgroup's limit is {b} bytes, not the {asked} asked"
            )),
            Limit::Unlimited => wrong.push("the cgroup's limit is max (none)".into()),
            Limit::Unread => wrong.push("the cgroup's limit could not be read".into()),
        }
        if !r.has_server {
            wrong.push("the server's process is no longer in the cgroup".into());
        }
    }
    StepMemoryCap {
        bytes: asked,
        limit_bytes: match r.limit {
            Limit::Bytes(b) => Some(b),
            _ => None,
        },
        peak_bytes: r.peak,
        held: wrong.is_empty(),
        why_not: (!wrong.is_empty()).then(|| wrong.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::cgroup::tests::{fixture_mkdir, records, v2_fixture};

    const MIB: u64 = 1 << 20;

    fn reading(limit: Limit, has_server: bool) -> Reading {
        Reading {
            present: true,
            limit,
            peak: Some(100 * MIB),
            has_server,
        }
    }

    #[test]
    fn a_cap_is_held_only_at_the_limit_asked_with_the_server_in_it() {
        let held = judge(256 * MIB, 4096, &reading(Limit::Bytes(256 * MIB), true));
        assert!(held.held && held.why_not.is_none(), "{held:?}");
        assert_eq!(held.warning(), None);
        assert_eq!(
            (held.limit_bytes, held.peak_bytes),
            (Some(256 * MIB), Some(100 * MIB))
        );
        // A cap off a page: the kernel's limit is the page below.
        assert!(judge(10_000, 4096, &reading(Limit::Bytes(8192), true)).held);
        let raised = judge(256 * MIB, 4096, &reading(Limit::Bytes(1 << 40), true));
        assert!(!raised.held);
        let w = raised.warning().unwrap();
        assert!(w.contains("not held to its 256 MiB memory cap"), "{w}");
        assert!(
            w.contains("1099511627776 bytes, not the 268435456 asked"),
            "{w}"
        );
        let max = judge(256 * MIB, 4096, &reading(Limit::Unlimited, true));
        assert_eq!(max.limit_bytes, None);
        assert!(max.why_not.unwrap().contains("max (none)"));
        let moved = judge(256 * MIB, 4096, &reading(Limit::Bytes(256 * MIB), false));
        assert!(moved.why_not.unwrap().contains("no longer in the cgroup"));
        let gone = Reading {
            present: false,
            limit: Limit::Unread,
            peak: None,
            has_server: false,
        };
        let g = judge(256 * MIB, 4096, &gone);
        assert!(
            !g.held && g.why_not.as_ref().unwrap().contains("is gone"),
            "{g:?}"
        );
    }

    /// Read from a fixture cgroup: the limit dbperf wrote, then one changed behind its back, then
    /// the cgroup removed and another made in its place.
    #[test]
    fn the_cap_is_read_back_from_the_cgroup() {
        let t = v2_fixture();
        let c = Controller::find(t.path()).unwrap();
        let cap = Cap::create_with(&c, "pg-1", 256 * MIB, &records(&t), &fixture_mkdir).unwrap();
        let pid = std::process::id();
        std::fs::write(cap.dir.join("cgroup.procs"), format!("1\n{pid}\n")).unwrap();
        std::fs::write(cap.dir.join("memory.peak"), "1234\n").unwrap();
        let h = cap.held(pid);
        assert!(h.held, "{h:?}");
        assert_eq!(h.peak_bytes, Some(1234));
        assert!(!cap.held(pid + 1).held, "another process");
        std::fs::write(cap.dir.join("memory.max"), "max\n").unwrap();
        assert!(!cap.held(pid).held);
        // Another made in its place (while it is there: see the sweep's test on inodes).
        let other = t.path().join("fs/cgroup/other");
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join("memory.max"), "268435456\n").unwrap();
        std::fs::write(other.join("cgroup.procs"), format!("{pid}\n")).unwrap();
        std::fs::remove_dir_all(&cap.dir).unwrap();
        assert!(!cap.held(pid).held);
        std::fs::rename(&other, &cap.dir).unwrap();
        let h = cap.held(pid);
        assert!(!h.held && h.why_not.unwrap().contains("no longer the one"));
    }
}
