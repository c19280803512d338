//! The host fingerprint stored with every run. Paths are read under an injectable root so tests
//! (and the host-readiness work to come) can point at fixture trees.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Fingerprint {
    pub hostname: String,
    pub os: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cpus_online: usize,
    pub memory_kb: u64,
}

pub struct Roots {
    pub proc: PathBuf,
    pub etc: PathBuf,
}

impl Default for Roots {
    fn default() -> Self {
        Roots {
            proc: "/proc".into(),
            etc: "/etc".into(),
        }
    }
}

fn read(p: &Path) -> String {
    fs::read_to_string(p).unwrap_or_default()
}

pub fn fingerprint(roots: &Roots) -> Fingerprint {
    let cpuinfo = read(&roots.proc.join("cpuinfo"));
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            matches!(k.trim(), "model name" | "Model" | "cpu model").then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let cpus_online = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count();
    let memory_kb = read(&roots.proc.join("meminfo"))
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    let os = read(&roots.etc.join("os-release"))
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| "unknown".into());
    Fingerprint {
        hostname: read(&roots.proc.join("sys/kernel/hostname"))
            .trim()
            .to_string(),
        os,
        kernel: read(&roots.proc.join("sys/kernel/osrelease"))
            .trim()
            .to_string(),
        cpu_model,
        cpus_online,
        memory_kb,
    }
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
mod tests {
    use super::*;

    #[test]
    fn reads_a_fixture_tree() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        fs::create_dir_all(p.join("proc/sys/kernel")).unwrap();
        fs::create_dir_all(p.join("etc")).unwrap();
        fs::write(p.join("proc/cpuinfo"), "processor\t: 0\nmodel name\t: Test CPU 9000\n\nprocessor\t: 1\nmodel name\t: Test CPU 9000\n").unwrap();
        fs::write(p.join("proc/meminfo"), "MemTotal:       24576000 kB\n").unwrap();
        fs::write(p.join("proc/sys/kernel/hostname"), "box\n").unwrap();
        fs::write(p.join("proc/sys/kernel/osrelease"), "6.1.0-test\n").unwrap();
        fs::write(
            p.join("etc/os-release"),
            "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n",
        )
        .unwrap();
        let f = fingerprint(&Roots {
            proc: p.join("proc"),
            etc: p.join("etc"),
        });
        assert_eq!(f.cpu_model, "Test CPU 9000");
        assert_eq!((f.cpus_online, f.memory_kb), (2, 24_576_000));
        assert_eq!(
            (f.hostname.as_str(), f.kernel.as_str()),
            ("box", "6.1.0-test")
        );
        assert_eq!(f.os, "Debian GNU/Linux 12 (bookworm)");
    }
}
