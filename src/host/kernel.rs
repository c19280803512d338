//! Kernel settings that move results without touching the CPU clock: SMT, transparent huge
//! pages, and the VM sysctls that decide when dirty pages reach the device (spec A.4-A.6).

use serde::Serialize;

use super::sysfs::{read, read_bool, read_bracketed, read_u64};
use super::Roots;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Smt {
    /// `on`, `off`, `forceoff`, `notsupported`, `notimplemented` or a thread count; null when the
    /// kernel has no `smt/control`.
    pub control: Option<String>,
    /// SMT enabled and sibling threads online.
    pub active: Option<bool>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Thp {
    /// The selected word of `transparent_hugepage/enabled`.
    pub enabled: Option<String>,
    pub defrag: Option<String>,
}

/// Values from `/proc/sys/vm` and `/proc/sys/kernel`; null when the file does not exist.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Sysctl {
    pub swappiness: Option<u64>,
    pub dirty_ratio: Option<u64>,
    pub dirty_background_ratio: Option<u64>,
    pub dirty_bytes: Option<u64>,
    pub dirty_background_bytes: Option<u64>,
    pub dirty_expire_centisecs: Option<u64>,
    pub dirty_writeback_centisecs: Option<u64>,
    pub zone_reclaim_mode: Option<u64>,
    pub numa_balancing: Option<u64>,
}

pub fn smt_dir(roots: &Roots) -> std::path::PathBuf {
    roots.sys.join("devices/system/cpu/smt")
}

pub fn thp_dir(roots: &Roots) -> std::path::PathBuf {
    roots.sys.join("kernel/mm/transparent_hugepage")
}

pub fn read_smt(roots: &Roots) -> Smt {
    let d = smt_dir(roots);
    Smt {
        control: read(&d.join("control")),
        active: read_bool(&d.join("active")),
    }
}

pub fn read_thp(roots: &Roots) -> Thp {
    let d = thp_dir(roots);
    Thp {
        enabled: read_bracketed(&d.join("enabled")).map(|(s, _)| s),
        defrag: read_bracketed(&d.join("defrag")).map(|(s, _)| s),
    }
}

pub fn read_sysctl(roots: &Roots) -> Sysctl {
    let vm = |n: &str| read_u64(&roots.proc.join("sys/vm").join(n));
    Sysctl {
        swappiness: vm("swappiness"),
        dirty_ratio: vm("dirty_ratio"),
        dirty_background_ratio: vm("dirty_background_ratio"),
        dirty_bytes: vm("dirty_bytes"),
        dirty_background_bytes: vm("dirty_background_bytes"),
        dirty_expire_centisecs: vm("dirty_expire_centisecs"),
        dirty_writeback_centisecs: vm("dirty_writeback_centisecs"),
        zone_reclaim_mode: vm("zone_reclaim_mode"),
        numa_balancing: read_u64(&roots.proc.join("sys/kernel/numa_balancing")),
    }
}

pub fn cmdline(roots: &Roots) -> String {
    read(&roots.proc.join("cmdline")).unwrap_or_default()
}

/// Pages swapped in and out since boot (`/proc/vmstat` pswpin, pswpout).
pub fn swap_pages(roots: &Roots) -> Option<(u64, u64)> {
    let text = read(&roots.proc.join("vmstat"))?;
    let get = |key: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            (k == key).then(|| v.trim().parse::<u64>().ok()).flatten()
        })
    };
    Some((get("pswpin")?, get("pswpout")?))
}
