//! The machine around the kernel: firmware, whether it is a virtual machine, which power
//! management daemons run, and whether it runs on battery (spec A.0, A.8, A.10).

use std::fs;

use serde::Serialize;

use super::sysfs::read;
use super::Roots;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Bios {
    pub vendor: Option<String>,
    pub version: Option<String>,
    pub date: Option<String>,
    pub release: Option<String>,
    pub sys_vendor: Option<String>,
    pub product_name: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Virtualization {
    pub vm: bool,
    /// What gave it away: `hypervisor cpu flag`, `dmi: QEMU`, `/sys/hypervisor: xen`; null on
    /// bare metal.
    pub evidence: Option<String>,
    /// Share of all CPU time since boot the hypervisor gave to others (`/proc/stat` steal), %.
    pub steal_pct_since_boot: Option<f64>,
}

/// What `/proc/cpuinfo` says about the processors.
pub struct CpuInfo {
    pub model: String,
    pub processors: usize,
    pub cores: usize,
    pub hypervisor_flag: bool,
}

pub fn cpuinfo(roots: &Roots) -> CpuInfo {
    let text = read(&roots.proc.join("cpuinfo")).unwrap_or_default();
    let mut model = None;
    let mut processors = 0;
    let mut cores = std::collections::BTreeSet::new();
    let mut physical = String::new();
    let mut hypervisor_flag = false;
    for l in text.lines() {
        let Some((k, v)) = l.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        match k {
            "processor" => processors += 1,
            "model name" | "Model" | "cpu model" if model.is_none() => model = Some(v.to_string()),
            "physical id" => physical = v.to_string(),
            "core id" => {
                cores.insert((physical.clone(), v.to_string()));
            }
            "flags" => hypervisor_flag |= v.split_whitespace().any(|f| f == "hypervisor"),
            _ => {}
        }
    }
    CpuInfo {
        model: model.unwrap_or_else(|| "unknown".into()),
        processors,
        cores: cores.len(),
        hypervisor_flag,
    }
}

pub fn bios(roots: &Roots) -> Bios {
    let d = roots.sys.join("class/dmi/id");
    let f = |n: &str| read(&d.join(n)).filter(|s| !s.is_empty());
    Bios {
        vendor: f("bios_vendor"),
        version: f("bios_version"),
        date: f("bios_date"),
        release: f("bios_release"),
        sys_vendor: f("sys_vendor"),
        product_name: f("product_name"),
    }
}

/// DMI vendors and products that only virtual machines report.
const VM_DMI: &[&str] = &[
    "QEMU",
    "KVM",
    "VMware, Inc.",
    "VMware Virtual Platform",
    "VirtualBox",
    "innotek GmbH",
    "Xen",
    "HVM domU",
    "Virtual Machine",
    "Google Compute Engine",
    "Amazon EC2",
    "OpenStack Nova",
    "Parallels Virtual Platform",
    "BHYVE",
    "Bochs",
    "Cloud Hypervisor",
    "Firecracker",
];

pub fn virtualization(roots: &Roots, info: &CpuInfo, bios: &Bios) -> Virtualization {
    let dmi = [&bios.sys_vendor, &bios.product_name]
        .into_iter()
        .flatten()
        .find(|v| VM_DMI.contains(&v.as_str()));
    let xen = read(&roots.sys.join("hypervisor/type")).filter(|s| !s.is_empty());
    let evidence = if info.hypervisor_flag {
        Some("hypervisor cpu flag".to_string())
    } else if let Some(d) = dmi {
        Some(format!("dmi: {d}"))
    } else {
        xen.map(|x| format!("/sys/hypervisor: {x}"))
    };
    Virtualization {
        vm: evidence.is_some(),
        evidence,
        steal_pct_since_boot: cpu_times(roots).and_then(|t| t.steal_pct()),
    }
}

/// The aggregate `cpu` line of `/proc/stat`, in ticks.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuTimes {
    pub total: u64,
    pub idle: u64,
    pub steal: u64,
}

impl CpuTimes {
    pub fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            total: self.total.saturating_sub(earlier.total),
            idle: self.idle.saturating_sub(earlier.idle),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }

    pub fn steal_pct(&self) -> Option<f64> {
        (self.total > 0)
            .then(|| (self.steal as f64 * 100.0 / self.total as f64 * 100.0).round() / 100.0)
    }
}

/// Parses one `cpu…` line of `/proc/stat`: user nice system idle iowait irq softirq steal; guest
/// time is already inside user and nice.
pub fn parse_cpu_line(l: &str) -> Option<(String, CpuTimes)> {
    let mut it = l.split_whitespace();
    let name = it.next()?.to_string();
    let v: Vec<u64> = it.take(8).filter_map(|x| x.parse().ok()).collect();
    if v.len() < 4 {
        return None;
    }
    let get = |i: usize| v.get(i).copied().unwrap_or(0);
    Some((
        name,
        CpuTimes {
            total: v.iter().sum(),
            idle: get(3) + get(4),
            steal: get(7),
        },
    ))
}

pub fn cpu_times(roots: &Roots) -> Option<CpuTimes> {
    let text = read(&roots.proc.join("stat"))?;
    let first = text.lines().next()?;
    let (name, t) = parse_cpu_line(first)?;
    (name == "cpu").then_some(t)
}

/// Daemons that change CPU frequency, power or interrupt settings behind a benchmark's back,
/// by the name the kernel keeps for them (`/proc/PID/comm`, at most 15 bytes).
const PM_DAEMONS: &[(&str, &str)] = &[
    ("tuned", "tuned"),
    ("tuned-ppd", "tuned-ppd"),
    ("power-profiles-", "power-profiles-daemon"),
    ("tlp", "tlp"),
    ("auto-cpufreq", "auto-cpufreq"),
    ("thermald", "thermald"),
    ("irqbalance", "irqbalance"),
    ("gamemoded", "gamemoded"),
    ("system76-power", "system76-power"),
];

pub fn pm_daemons(roots: &Roots) -> Vec<String> {
    let mut found = std::collections::BTreeSet::new();
    for e in fs::read_dir(&roots.proc).into_iter().flatten().flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Some(comm) = read(&e.path().join("comm")) {
            if let Some((_, shown)) = PM_DAEMONS.iter().find(|(c, _)| *c == comm) {
                found.insert(shown.to_string());
            }
        }
    }
    found.into_iter().collect()
}

/// false when a mains supply reports itself offline (a laptop on battery); null without one.
pub fn ac_power(roots: &Roots) -> Option<bool> {
    let mut seen = None;
    for e in fs::read_dir(roots.sys.join("class/power_supply"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let p = e.path();
        if read(&p.join("type")).as_deref() == Some("Mains") {
            match read(&p.join("online")).as_deref() {
                Some("1") => return Some(true),
                Some("0") => seen = Some(false),
                _ => {}
            }
        }
    }
    seen
}
