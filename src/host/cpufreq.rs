//! CPU frequency scaling as the kernel exposes it: the driver and its mode, every policy's
//! governor, EPP and limits, and boost in each of the forms different drivers and kernels offer
//! (spec Part A.1).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::sysfs::{self, read, read_bool, read_u64};
use super::Roots;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CpuFreq {
    /// `scaling_driver` of the first active policy; `none` without cpufreq.
    pub driver: String,
    /// Driver and operating mode: `intel_pstate active`, `intel_pstate passive`,
    /// `amd-pstate active`, `amd-pstate guided`, `amd-pstate passive`, `acpi-cpufreq`, `cppc`,
    /// `none`, or another driver's name as it is.
    pub mode: String,
    pub intel_pstate: Option<IntelPstate>,
    pub amd_pstate: Option<AmdPstate>,
    pub boost: Boost,
    pub policies: Vec<Policy>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct IntelPstate {
    pub status: Option<String>,
    pub no_turbo: Option<bool>,
    pub min_perf_pct: Option<u64>,
    pub max_perf_pct: Option<u64>,
    pub turbo_pct: Option<u64>,
    pub hwp_dynamic_boost: Option<bool>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AmdPstate {
    /// Absent before Linux 6.3, when amd-pstate had only its passive mode.
    pub status: Option<String>,
    pub prefcore: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Boost {
    /// Which file controls boost here: `cpufreq/boost` (global), `policy boost` (per-policy only),
    /// `intel_pstate/no_turbo`, `cpb` (legacy AMD knob), or `none`.
    pub control: String,
    /// Whether boost is allowed (a permission, not proof that the CPU boosts); null when no file
    /// says.
    pub enabled: Option<bool>,
    /// The global `cpufreq/boost` file.
    pub global: Option<bool>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Policy {
    /// `policy0`, …
    pub name: String,
    /// Online CPUs of the policy (`affected_cpus`); empty when all its CPUs are offline.
    pub cpus: Vec<u32>,
    pub driver: Option<String>,
    pub governor: Option<String>,
    pub governors_available: Vec<String>,
    pub epp: Option<String>,
    pub epp_available: Vec<String>,
    pub min_khz: Option<u64>,
    pub max_khz: Option<u64>,
    pub cur_khz: Option<u64>,
    pub hw_min_khz: Option<u64>,
    pub hw_max_khz: Option<u64>,
    /// `cpuinfo_cur_freq`, read from hardware; absent with drivers that cannot read it.
    pub hw_cur_khz: Option<u64>,
    /// intel_pstate with HWP: above this is turbo.
    pub base_khz: Option<u64>,
    pub bios_limit_khz: Option<u64>,
    /// Per-policy `boost` (Linux 6.6+, drivers with boost support).
    pub boost: Option<bool>,
    /// Legacy AMD `cpb` (acpi-cpufreq).
    pub cpb: Option<bool>,
    /// amd-pstate's boosted maximum, even while boost is off.
    pub amd_pstate_max_khz: Option<u64>,
}

impl Policy {
    pub fn active(&self) -> bool {
        !self.cpus.is_empty()
    }
}

pub fn cpu_dir(roots: &Roots) -> PathBuf {
    roots.sys.join("devices/system/cpu")
}

pub fn policy_dir(roots: &Roots, name: &str) -> PathBuf {
    cpu_dir(roots).join("cpufreq").join(name)
}

fn read_policy(dir: &Path, name: &str) -> Policy {
    let f = |n: &str| dir.join(n);
    Policy {
        name: name.to_string(),
        cpus: read(&f("affected_cpus"))
            .map(|s| sysfs::cpu_list(&s))
            .unwrap_or_default(),
        driver: read(&f("scaling_driver")),
        governor: read(&f("scaling_governor")),
        governors_available: read(&f("scaling_available_governors"))
            .map(|s| sysfs::words(&s))
            .unwrap_or_default(),
        epp: read(&f("energy_performance_preference")),
        epp_available: read(&f("energy_performance_available_preferences"))
            .map(|s| sysfs::words(&s))
            .unwrap_or_default(),
        min_khz: read_u64(&f("scaling_min_freq")),
        max_khz: read_u64(&f("scaling_max_freq")),
        cur_khz: read_u64(&f("scaling_cur_freq")),
        hw_min_khz: read_u64(&f("cpuinfo_min_freq")),
        hw_max_khz: read_u64(&f("cpuinfo_max_freq")),
        hw_cur_khz: read_u64(&f("cpuinfo_cur_freq")),
        base_khz: read_u64(&f("base_frequency")),
        bios_limit_khz: read_u64(&f("bios_limit")),
        boost: read_bool(&f("boost")),
        cpb: read_bool(&f("cpb")),
        amd_pstate_max_khz: read_u64(&f("amd_pstate_max_freq")),
    }
}

pub fn read_cpufreq(roots: &Roots) -> CpuFreq {
    let cpu = cpu_dir(roots);
    let cf = cpu.join("cpufreq");
    let policies: Vec<Policy> = sysfs::numbered(&cf, "policy")
        .into_iter()
        .map(|(_, name)| read_policy(&cf.join(&name), &name))
        .collect();
    let ip = cpu.join("intel_pstate");
    let intel_pstate = ip.is_dir().then(|| IntelPstate {
        status: read(&ip.join("status")),
        no_turbo: read_bool(&ip.join("no_turbo")),
        min_perf_pct: read_u64(&ip.join("min_perf_pct")),
        max_perf_pct: read_u64(&ip.join("max_perf_pct")),
        turbo_pct: read_u64(&ip.join("turbo_pct")),
        hwp_dynamic_boost: read_bool(&ip.join("hwp_dynamic_boost")),
    });
    let ap = cpu.join("amd_pstate");
    let amd_pstate = ap.is_dir().then(|| AmdPstate {
        status: read(&ap.join("status")),
        prefcore: read(&ap.join("prefcore")),
    });
    let driver = policies
        .iter()
        .filter(|p| p.active())
        .find_map(|p| p.driver.clone())
        .unwrap_or_else(|| "none".into());
    let mode = mode(&driver, amd_pstate.as_ref());
    let global = read_bool(&cf.join("boost"));
    let boost = boost(&driver, global, intel_pstate.as_ref(), &policies);
    CpuFreq {
        driver,
        mode,
        intel_pstate,
        amd_pstate,
        boost,
        policies,
    }
}

fn mode(driver: &str, amd: Option<&AmdPstate>) -> String {
    match driver {
        "intel_pstate" => "intel_pstate active".into(),
        "intel_cpufreq" => "intel_pstate passive".into(),
        // Kernels before the June 2023 rename (and their stable updates) spell it with '_'.
        "amd-pstate-epp" | "amd_pstate_epp" => "amd-pstate active".into(),
        "amd-pstate" => match amd.and_then(|a| a.status.as_deref()) {
            Some("guided") => "amd-pstate guided".into(),
            _ => "amd-pstate passive".into(),
        },
        "cppc_cpufreq" => "cppc".into(),
        other => other.into(),
    }
}

pub fn is_intel(driver: &str) -> bool {
    matches!(driver, "intel_pstate" | "intel_cpufreq")
}

pub fn is_amd_epp(driver: &str) -> bool {
    matches!(driver, "amd-pstate-epp" | "amd_pstate_epp")
}

fn boost(
    driver: &str,
    global: Option<bool>,
    intel: Option<&IntelPstate>,
    policies: &[Policy],
) -> Boost {
    let active: Vec<&Policy> = policies.iter().filter(|p| p.active()).collect();
    let per_policy: Vec<bool> = active.iter().filter_map(|p| p.boost).collect();
    let any_policy_on = per_policy.is_empty() || per_policy.iter().any(|b| *b);
    if is_intel(driver) {
        if let Some(nt) = intel.and_then(|i| i.no_turbo) {
            return Boost {
                control: "intel_pstate/no_turbo".into(),
                enabled: Some(!nt),
                global,
            };
        }
    }
    if let Some(g) = global {
        return Boost {
            control: "cpufreq/boost".into(),
            enabled: Some(g && any_policy_on),
            global,
        };
    }
    if !per_policy.is_empty() {
        return Boost {
            control: "policy boost".into(),
            enabled: Some(any_policy_on),
            global,
        };
    }
    if let Some(c) = active.iter().find_map(|p| p.cpb) {
        return Boost {
            control: "cpb".into(),
            enabled: Some(c),
            global,
        };
    }
    Boost {
        control: "none".into(),
        enabled: None,
        global,
    }
}
