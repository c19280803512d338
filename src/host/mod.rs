//! Host readiness: what the host is doing (`Fingerprint`, stored with every run and printed by
//! `dbperf host show`), what of it spoils comparisons (`warnings`), setting it right and putting
//! it back exactly (`tune`), and watching it during a run (`monitor`). Documented in docs/host.md.
//!
//! Every sysfs and procfs path is read under `Roots`, so tests point them at fixture trees
//! built from the kernel documentation (`fixture`, compiled for tests and examples only).

pub mod aer;
pub mod block;
pub mod cpufreq;
// Test code, not the program's: the unit tests build it, and tests/ and examples/ through the
// `fixtures` feature the crate's dev-dependency on itself turns on (Cargo.toml).
#[cfg(any(test, feature = "fixtures"))]
pub mod fixture;
pub mod kernel;
pub mod machine;
pub mod monitor;
pub mod show;
pub mod sysfs;
pub mod tune;
pub mod warnings;

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

pub use warnings::Warning;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Fingerprint {
    pub hostname: String,
    pub os: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cpus_online: usize,
    pub memory_kb: u64,
    /// Physical cores (distinct physical id + core id in /proc/cpuinfo); 0 when not listed.
    pub cores: usize,
    pub kernel_cmdline: String,
    pub cpufreq: cpufreq::CpuFreq,
    pub smt: kernel::Smt,
    pub thp: kernel::Thp,
    pub sysctl: kernel::Sysctl,
    /// One entry per data directory looked at.
    pub storage: Vec<block::DataDir>,
    pub bios: machine::Bios,
    pub aer: aer::Aer,
    pub virtualization: machine::Virtualization,
    /// Power-management daemons running (tuned, power-profiles-daemon, tlp, auto-cpufreq,
    /// thermald, irqbalance, …).
    pub pm_daemons: Vec<String>,
    /// false on battery; null without a mains power supply entry.
    pub ac_power: Option<bool>,
    /// What in this state spoils comparisons, with why and how to fix it.
    pub warnings: Vec<Warning>,
}

#[derive(Debug, Clone)]
pub struct Roots {
    /// Where `/sys` is (`--sysfs-root`).
    pub sys: PathBuf,
    /// Where `/proc` is (`--procfs-root`).
    pub proc: PathBuf,
    pub etc: PathBuf,
}

impl Default for Roots {
    fn default() -> Self {
        Roots {
            sys: "/sys".into(),
            proc: "/proc".into(),
            etc: "/etc".into(),
        }
    }
}

impl Roots {
    /// Roots for a fixture tree holding `sys/` and `proc/`.
    pub fn under(dir: &Path) -> Roots {
        Roots {
            sys: dir.join("sys"),
            proc: dir.join("proc"),
            etc: dir.join("etc"),
        }
    }
}

fn read(p: &Path) -> String {
    fs::read_to_string(p).unwrap_or_default()
}

/// The host's RAM: MemTotal of /proc/meminfo, KiB (0 when it cannot be read).
pub fn memory_kb(roots: &Roots) -> u64 {
    read(&roots.proc.join("meminfo"))
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Reads the host's state. `data_dirs` are the directories whose block devices are looked at
/// (a run's work directory; `host show --path`).
pub fn fingerprint(roots: &Roots, data_dirs: &[PathBuf]) -> Fingerprint {
    let info = machine::cpuinfo(roots);
    let memory_kb = memory_kb(roots);
    let os = read(&roots.etc.join("os-release"))
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| "unknown".into());
    let storage: Vec<block::DataDir> = data_dirs
        .iter()
        .map(|d| block::data_dir(roots, d))
        .collect();
    let disks: Vec<PathBuf> = storage
        .iter()
        .flat_map(|d| d.devices.iter().map(|b| b.sys_dir.clone()))
        .collect();
    let bios = machine::bios(roots);
    let virtualization = machine::virtualization(roots, &info, &bios);
    let mut f = Fingerprint {
        hostname: read(&roots.proc.join("sys/kernel/hostname"))
            .trim()
            .to_string(),
        os,
        kernel: read(&roots.proc.join("sys/kernel/osrelease"))
            .trim()
            .to_string(),
        cpu_model: info.model.clone(),
        cpus_online: info.processors,
        memory_kb,
        cores: info.cores,
        kernel_cmdline: kernel::cmdline(roots),
        cpufreq: cpufreq::read_cpufreq(roots),
        smt: kernel::read_smt(roots),
        thp: kernel::read_thp(roots),
        sysctl: kernel::read_sysctl(roots),
        storage,
        bios,
        aer: aer::read_aer(roots, &disks),
        virtualization,
        pm_daemons: machine::pm_daemons(roots),
        ac_power: machine::ac_power(roots),
        warnings: Vec::new(),
    };
    f.warnings = warnings::check(&f);
    f
}

/// Resets this process's peak resident set (VmHWM) to its current RSS, so each target of a run
/// reports its own peak (Linux 4.0+; silently a no-op elsewhere).
pub fn reset_own_peak_rss(roots: &Roots) {
    let _ = fs::write(roots.proc.join("self/clear_refs"), b"5");
}

/// Peak resident set of this process (VmHWM), KiB.
pub fn own_peak_rss_kb(roots: &Roots) -> Option<u64> {
    read(&roots.proc.join("self/status"))
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[cfg(test)]
mod tests;
