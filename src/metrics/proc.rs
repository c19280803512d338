//! Reading /proc: host CPU and context switches (/proc/stat), the data device's IO
//! (/proc/diskstats), and CPU, context switches and RSS of processes (/proc/<pid>/stat,
//! /proc/<pid>/status). Every path is under an injectable root so tests can use fixture trees.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

/// Clock ticks per second for /proc CPU times (USER_HZ): 100 on every Linux ABI.
pub const USER_HZ: f64 = 100.0;
const SECTOR: u64 = 512;

/// Whole-host CPU time, in ticks, and context switches since boot.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HostCpu {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    pub ctxt: u64,
}

impl HostCpu {
    pub fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }

    /// Ticks not idle and not waiting for IO: what `vmstat` reports as us + sy (+ st).
    pub fn busy(&self) -> u64 {
        self.user + self.nice + self.system + self.irq + self.softirq + self.steal
    }
}

/// CPUs /proc/stat accounts for (its `cpuN` lines): the host's, whatever this process may run
/// on (taskset, cgroups), so per-operation CPU from /proc/stat's totals is not scaled by a
/// pinned process's CPU count.
pub fn stat_cpus(proc_root: &Path) -> Option<usize> {
    let text = fs::read_to_string(proc_root.join("stat")).ok()?;
    let n = text
        .lines()
        .filter(|l| {
            l.strip_prefix("cpu")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        })
        .count();
    (n > 0).then_some(n)
}

pub fn host_cpu(proc_root: &Path) -> Option<HostCpu> {
    let text = fs::read_to_string(proc_root.join("stat")).ok()?;
    let mut cpu = None;
    let mut ctxt = None;
    for line in text.lines() {
        let mut f = line.split_ascii_whitespace();
        match f.next() {
            Some("cpu") => {
                let v: Vec<u64> = f.map(|x| x.parse().unwrap_or(0)).collect();
                let g = |i: usize| v.get(i).copied().unwrap_or(0);
                cpu = Some(HostCpu {
                    user: g(0),
                    nice: g(1),
                    system: g(2),
                    idle: g(3),
                    iowait: g(4),
                    irq: g(5),
                    softirq: g(6),
                    steal: g(7),
                    ctxt: 0,
                });
            }
            Some("ctxt") => ctxt = f.next().and_then(|x| x.parse().ok()),
            _ => {}
        }
    }
    let mut c = cpu?;
    c.ctxt = ctxt?;
    Some(c)
}

/// Completed IOs and bytes of one or more block devices since boot.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DiskIo {
    pub reads: u64,
    pub read_bytes: u64,
    pub writes: u64,
    pub write_bytes: u64,
    /// Flush requests (kernel 5.5+; 0 before).
    pub flushes: u64,
    /// Milliseconds spent on reads and on writes (the sums of each request's time).
    pub read_ms: u64,
    pub write_ms: u64,
    /// Milliseconds the device had a request in flight (iostat's %util source).
    pub busy_ms: u64,
    /// Requests in flight integrated over time, ms (iostat's aqu-sz source).
    pub queue_ms: u64,
}

impl DiskIo {
    /// The counts from `earlier` to this one (a counter that went back counts 0).
    pub fn since(&self, earlier: &DiskIo) -> DiskIo {
        DiskIo {
            reads: self.reads.saturating_sub(earlier.reads),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            writes: self.writes.saturating_sub(earlier.writes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
            flushes: self.flushes.saturating_sub(earlier.flushes),
            read_ms: self.read_ms.saturating_sub(earlier.read_ms),
            write_ms: self.write_ms.saturating_sub(earlier.write_ms),
            busy_ms: self.busy_ms.saturating_sub(earlier.busy_ms),
            queue_ms: self.queue_ms.saturating_sub(earlier.queue_ms),
        }
    }

    fn add(&mut self, o: &DiskIo) {
        self.reads += o.reads;
        self.read_bytes += o.read_bytes;
        self.writes += o.writes;
        self.write_bytes += o.write_bytes;
        self.flushes += o.flushes;
        self.read_ms += o.read_ms;
        self.write_ms += o.write_ms;
        self.busy_ms += o.busy_ms;
        self.queue_ms += o.queue_ms;
    }
}

/// /proc/diskstats' counters of each named device (exact names, e.g. `nvme0n1`, `dm-0`).
/// Devices not listed count nothing; a listed device that is gone is absent.
pub fn disk_io(proc_root: &Path, devices: &BTreeSet<String>) -> BTreeMap<String, DiskIo> {
    let mut out = BTreeMap::new();
    let Ok(text) = fs::read_to_string(proc_root.join("diskstats")) else {
        return out;
    };
    for line in text.lines() {
        let f: Vec<&str> = line.split_ascii_whitespace().collect();
        if f.len() < 14 || !devices.contains(f[2]) {
            continue;
        }
        let n = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
        let io = DiskIo {
            reads: n(3),
            read_bytes: n(5) * SECTOR,
            writes: n(7),
            write_bytes: n(9) * SECTOR,
            flushes: n(18),
            read_ms: n(6),
            write_ms: n(10),
            busy_ms: n(12),
            queue_ms: n(13),
        };
        out.entry(f[2].to_string())
            .or_insert_with(DiskIo::default)
            .add(&io);
    }
    out
}

/// The devices' counters added up.
pub fn total(per_device: &BTreeMap<String, DiskIo>) -> DiskIo {
    let mut t = DiskIo::default();
    for d in per_device.values() {
        t.add(d);
    }
    t
}

/// CPU (ticks) and context switches of a set of processes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProcCpu {
    pub utime: u64,
    pub stime: u64,
    pub voluntary_cs: u64,
    pub involuntary_cs: u64,
    pub rss_kb: u64,
}

impl ProcCpu {
    fn add(&mut self, o: &ProcCpu) {
        self.utime += o.utime;
        self.stime += o.stime;
        self.voluntary_cs += o.voluntary_cs;
        self.involuntary_cs += o.involuntary_cs;
        self.rss_kb += o.rss_kb;
    }
}

/// (ppid, utime, stime) from /proc/<pid>/stat; the command name may hold spaces and
/// parentheses, so fields are counted from the last ')'.
fn stat_fields(text: &str) -> Option<(u32, u64, u64)> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_ascii_whitespace().collect();
    // rest starts at field 3 (state): ppid is field 4, utime 14, stime 15.
    let ppid = f.get(1)?.parse().ok()?;
    let utime = f.get(11)?.parse().ok()?;
    let stime = f.get(12)?.parse().ok()?;
    Some((ppid, utime, stime))
}

fn status_fields(text: &str) -> (u64, u64, u64) {
    let mut v = (0, 0, 0);
    for line in text.lines() {
        let num = |l: &str| {
            l.split_ascii_whitespace()
                .nth(1)
                .and_then(|x| x.parse().ok())
                .unwrap_or(0)
        };
        if line.starts_with("voluntary_ctxt_switches:") {
            v.0 = num(line);
        } else if line.starts_with("nonvoluntary_ctxt_switches:") {
            v.1 = num(line);
        } else if line.starts_with("VmRSS:") {
            v.2 = num(line);
        }
    }
    v
}

/// One process (all its threads: /proc/<pid>/stat counts them all).
pub fn process(proc_root: &Path, pid: u32) -> Option<ProcCpu> {
    let dir = proc_root.join(pid.to_string());
    let (_, utime, stime) = stat_fields(&fs::read_to_string(dir.join("stat")).ok()?)?;
    let (vol, invol, rss) =
        status_fields(&fs::read_to_string(dir.join("status")).unwrap_or_default());
    Some(ProcCpu {
        utime,
        stime,
        voluntary_cs: vol,
        involuntary_cs: invol,
        rss_kb: rss,
    })
}

/// This process, from getrusage(RUSAGE_SELF): microsecond resolution where /proc/<pid>/stat
/// has 10 ms ticks, which matters for short steps. Times are returned in ticks·10⁴ (µs) in the
/// same struct; see `Snapshot` for the unit each source uses.
pub fn own_usage_us(proc_root: &Path) -> ProcCpu {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    let rss = fs::read_to_string(proc_root.join("self/status"))
        .map(|t| status_fields(&t).2)
        .unwrap_or(0);
    ProcCpu {
        utime: us(ru.ru_utime),
        stime: us(ru.ru_stime),
        voluntary_cs: ru.ru_nvcsw as u64,
        involuntary_cs: ru.ru_nivcsw as u64,
        rss_kb: rss,
    }
}

/// A process and every descendant alive now (PostgreSQL's postmaster and its backends and
/// workers). Backends that exited between two snapshots take their CPU with them: counted by
/// `Tree::delta` through the postmaster's cumulative children times instead.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    pub per_pid: HashMap<u32, ProcCpu>,
    /// cutime + cstime of the root: CPU of children that exited and were reaped.
    pub reaped: u64,
}

pub fn tree(proc_root: &Path, root: u32) -> Tree {
    let mut parent: BTreeMap<u32, u32> = BTreeMap::new();
    if let Ok(rd) = fs::read_dir(proc_root) {
        for e in rd.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if let Some((ppid, _, _)) = fs::read_to_string(e.path().join("stat"))
                .ok()
                .and_then(|t| stat_fields(&t))
            {
                parent.insert(pid, ppid);
            }
        }
    }
    let in_tree = |mut pid: u32| {
        for _ in 0..64 {
            if pid == root {
                return true;
            }
            match parent.get(&pid) {
                Some(&p) if p != 0 && p != pid => pid = p,
                _ => return false,
            }
        }
        false
    };
    let mut t = Tree::default();
    for &pid in parent.keys() {
        if in_tree(pid) {
            if let Some(c) = process(proc_root, pid) {
                t.per_pid.insert(pid, c);
            }
        }
    }
    t.reaped = reaped_children(proc_root, root).unwrap_or(0);
    t
}

fn reaped_children(proc_root: &Path, pid: u32) -> Option<u64> {
    let text = fs::read_to_string(proc_root.join(pid.to_string()).join("stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_ascii_whitespace().collect();
    let cu: u64 = f.get(13)?.parse().ok()?;
    let cs: u64 = f.get(14)?.parse().ok()?;
    Some(cu + cs)
}

impl Tree {
    pub fn sum(&self) -> ProcCpu {
        let mut s = ProcCpu::default();
        for c in self.per_pid.values() {
            s.add(c);
        }
        s
    }

    /// CPU ticks (user, system) and context switches the tree used since `earlier`: processes
    /// alive at both ends by difference, processes born since counted whole, processes that
    /// exited since through the root's reaped-children time (all of it as system: the split is
    /// not kept for reaped children).
    pub fn delta(&self, earlier: &Tree) -> ProcCpu {
        let mut d = ProcCpu::default();
        for (pid, now) in &self.per_pid {
            let before = earlier.per_pid.get(pid).copied().unwrap_or_default();
            d.utime += now.utime.saturating_sub(before.utime);
            d.stime += now.stime.saturating_sub(before.stime);
            d.voluntary_cs += now.voluntary_cs.saturating_sub(before.voluntary_cs);
            d.involuntary_cs += now.involuntary_cs.saturating_sub(before.involuntary_cs);
        }
        let gone_before: u64 = earlier
            .per_pid
            .iter()
            .filter(|(pid, _)| !self.per_pid.contains_key(pid))
            .map(|(_, c)| c.utime + c.stime)
            .sum();
        // The reaped time grew by the whole life of each process that exited; what it had used
        // up to the first snapshot was already counted there.
        let reaped = self.reaped.saturating_sub(earlier.reaped);
        d.stime += reaped.saturating_sub(gone_before);
        d.rss_kb = self.sum().rss_kb;
        d
    }
}

/// Bytes the files under `dir` take on disk (allocated blocks, as `du`), not following links.
pub fn dir_size_on_disk(dir: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0u64;
    let mut stack: Vec<PathBuf> = vec![dir.to_path_buf()];
    let mut seen = false;
    while let Some(d) = stack.pop() {
        let Ok(rd) = fs::read_dir(&d) else { continue };
        seen = true;
        for e in rd.flatten() {
            let Ok(m) = e.metadata() else { continue };
            total += m.blocks() * 512;
            if m.is_dir() {
                stack.push(e.path());
            }
        }
    }
    seen.then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpus_are_those_proc_stat_accounts_for() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("stat"),
            "cpu  10 0 5 100 0 0 0 0\ncpu0 5 0 2 50 0 0 0 0\ncpu1 5 0 3 50 0 0 0 0\n\
             cpu3 0 0 0 1 0 0 0 0\nctxt 99\ncpufreq 1\n",
        )
        .unwrap();
        assert_eq!(stat_cpus(dir.path()), Some(3));
        assert_eq!(stat_cpus(&dir.path().join("none")), None);
    }

    #[test]
    fn stat_fields_survive_odd_command_names() {
        let line = "1234 (post (gres) x) S 1 1234 1234 0 -1 4194560 500 0 0 0 77 33 5 6 20 0 1 0 100 1000 50";
        assert_eq!(stat_fields(line), Some((1, 77, 33)));
        assert_eq!(reaped_children_from(line), Some(11));
    }

    fn reaped_children_from(text: &str) -> Option<u64> {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("1234")).unwrap();
        fs::write(dir.path().join("1234/stat"), text).unwrap();
        reaped_children(dir.path(), 1234)
    }

    #[test]
    fn host_cpu_and_disks_from_fixture_files() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("stat"),
            "cpu  10 1 20 300 4 5 6 7 0 0\ncpu0 5 0 10 150 2 2 3 3 0 0\nctxt 9999\n",
        )
        .unwrap();
        let c = host_cpu(dir.path()).unwrap();
        assert_eq!(
            (c.user, c.system, c.idle, c.steal, c.ctxt),
            (10, 20, 300, 7, 9999)
        );
        assert_eq!(c.total(), 353);
        assert_eq!(c.busy(), 10 + 1 + 20 + 5 + 6 + 7);
        fs::write(
            dir.path().join("diskstats"),
            " 253 0 vda 100 0 800 30 50 0 400 60 1 70 95 0 0 0 0 7 0\n \
             253 1 vda1 90 0 700 0 40 0 300 0 0 0 0 0 0 0 0 0 0\n \
             7 0 loop0 5 0 10 0 0 0 0 0 0 0 0\n",
        )
        .unwrap();
        let io = disk_io(dir.path(), &["vda".to_string()].into());
        assert_eq!(io.len(), 1);
        assert_eq!(
            total(&io),
            DiskIo {
                reads: 100,
                read_bytes: 800 * 512,
                writes: 50,
                write_bytes: 400 * 512,
                flushes: 7,
                read_ms: 30,
                write_ms: 60,
                busy_ms: 70,
                queue_ms: 95,
            }
        );
        // Exact names only: vda does not pull in vda1.
        assert!(disk_io(dir.path(), &["vd".to_string()].into()).is_empty());
        // Each device on its own.
        let both = disk_io(dir.path(), &["vda".to_string(), "loop0".to_string()].into());
        assert_eq!((both["vda"].reads, both["loop0"].reads), (100, 5));
        assert_eq!(total(&both).reads, 105);
    }

    #[test]
    fn a_process_tree_counts_children_born_and_reaped() {
        let dir = tempfile::tempdir().unwrap();
        let put = |pid: u32, ppid: u32, ut: u64, st: u64, cut: u64| {
            let d = dir.path().join(pid.to_string());
            fs::create_dir_all(&d).unwrap();
            fs::write(
                d.join("stat"),
                format!("{pid} (p) S {ppid} 0 0 0 -1 0 0 0 0 0 {ut} {st} {cut} 0 20 0 1 0 1 1 1"),
            )
            .unwrap();
            fs::write(
                d.join("status"),
                "voluntary_ctxt_switches:\t3\nnonvoluntary_ctxt_switches:\t1\nVmRSS:\t  100 kB\n",
            )
            .unwrap();
        };
        put(10, 1, 5, 5, 0); // root
        put(11, 10, 1, 1, 0); // child
        put(99, 1, 50, 50, 0); // not in the tree
        let t0 = tree(dir.path(), 10);
        assert_eq!(t0.per_pid.len(), 2);
        // Child 11 exits (reaped: 4 ticks in its life), 12 is born with 2, root uses 3 more.
        fs::remove_dir_all(dir.path().join("11")).unwrap();
        put(10, 1, 7, 6, 4);
        put(12, 10, 1, 1, 0);
        let t1 = tree(dir.path(), 10);
        let d = t1.delta(&t0);
        // root +3, newborn +2, reaped 4 minus the 2 already seen = +2.
        assert_eq!(d.utime + d.stime, 3 + 2 + 2);
        assert_eq!(d.rss_kb, 200);
    }
}
