//! What in a host's state spoils benchmark comparisons. Each warning says what was found, why
//! it matters, and how to fix it on this driver and kernel; docs/host.md lists them all.

use std::collections::BTreeMap;

use serde::Serialize;

use super::cpufreq::{is_amd_epp, is_intel, Policy};
use super::sysfs::{cpu_ranges, kernel_version};
use super::Fingerprint;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Warning {
    /// Stable name, e.g. `boost-on` (docs/host.md lists every one).
    pub id: String,
    pub message: String,
    pub why: String,
    pub fix: String,
}

fn w(id: &str, message: String, why: impl Into<String>, fix: impl Into<String>) -> Warning {
    Warning {
        id: id.into(),
        message,
        why: why.into(),
        fix: fix.into(),
    }
}

fn mhz(khz: u64) -> String {
    format!("{} MHz", khz / 1000)
}

fn cpus_of<'a>(ps: impl IntoIterator<Item = &'a Policy>) -> String {
    let cpus: Vec<u32> = ps
        .into_iter()
        .flat_map(|p| p.cpus.iter().copied())
        .collect();
    cpu_ranges(&cpus)
}

/// Policies grouped by a value, in order of first appearance: "schedutil on CPUs 0-3".
fn grouped<'a>(
    ps: &[&'a Policy],
    key: impl Fn(&Policy) -> String,
) -> Vec<(String, Vec<&'a Policy>)> {
    let mut order: Vec<String> = Vec::new();
    let mut map: BTreeMap<String, Vec<&Policy>> = BTreeMap::new();
    for p in ps {
        let k = key(p);
        if !map.contains_key(&k) {
            order.push(k.clone());
        }
        map.entry(k).or_default().push(p);
    }
    order
        .into_iter()
        .map(|k| {
            let v = map.remove(&k).unwrap_or_default();
            (k, v)
        })
        .collect()
}

fn describe(groups: &[(String, Vec<&Policy>)]) -> String {
    groups
        .iter()
        .map(|(k, ps)| format!("{k} on CPUs {}", cpus_of(ps.iter().copied())))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What every check reads: the fingerprint, its active cpufreq policies and their driver.
struct Host<'a> {
    f: &'a Fingerprint,
    active: Vec<&'a Policy>,
    driver: &'a str,
    vm: bool,
}

impl Host<'_> {
    /// The active policies `keep` picks.
    fn active_where(&self, keep: impl Fn(&Policy) -> bool) -> Vec<&Policy> {
        self.active.iter().copied().filter(|p| keep(p)).collect()
    }
}

/// One warning's check: the warning when the host has what it is about.
type Check = fn(&Host) -> Option<Warning>;

/// Every check, in the order `host show` lists the warnings (docs/host.md).
const CHECKS: &[Check] = &[
    no_cpufreq,
    virtual_machine,
    driver_mixed,
    governor,
    boost_on,
    boost_uncontrollable,
    boost_mixed,
    epp,
    max_freq_capped,
    bios_limit,
    smt_on,
    thp_always,
    thp_defrag_always,
    aer_errors,
    pm_daemon,
    on_battery,
];

pub fn check(f: &Fingerprint) -> Vec<Warning> {
    let host = Host {
        f,
        active: f.cpufreq.policies.iter().filter(|p| p.active()).collect(),
        driver: f.cpufreq.driver.as_str(),
        vm: f.virtualization.vm,
    };
    CHECKS.iter().filter_map(|check| check(&host)).collect()
}

fn no_cpufreq(h: &Host) -> Option<Warning> {
    if !h.active.is_empty() {
        return None;
    }
    Some(w(
        "no-cpufreq",
        format!(
            "no CPU frequency scaling is visible (no cpufreq policies): {} sets the clock, and dbperf can neither read nor control it",
            if h.vm { "the hypervisor" } else { "the firmware" }
        ),
        "results then depend on a frequency policy outside this kernel's view: turbo, power \
         capping and, in a virtual machine, other tenants of the same host",
        if h.vm {
            "compare only runs on the same instance type, prefer dedicated hosts or pinned \
             vCPUs, and check the calibration drift dbperf records with every run"
        } else {
            "let the OS control P-states in the firmware setup (often called OS DBPM, CPPC or \
             HWP native), so a cpufreq driver (acpi-cpufreq, intel_pstate, amd-pstate) loads"
        },
    ))
}

fn virtual_machine(h: &Host) -> Option<Warning> {
    if !h.vm {
        return None;
    }
    let v = &h.f.virtualization;
    let steal = v
        .steal_pct_since_boot
        .filter(|s| *s > 0.0)
        .map(|s| format!("; the hypervisor has taken {s}% of CPU time since boot (steal)"))
        .unwrap_or_default();
    Some(w(
        "virtual-machine",
        format!(
            "this is a virtual machine ({}){steal}",
            v.evidence.as_deref().unwrap_or("detected")
        ),
        "the hypervisor decides the real CPU frequency, which physical cores and SMT \
         siblings the vCPUs share, and the I/O path, and neighbours take CPU time (steal); \
         none of it is visible or settable from here",
        "compare runs only on the same instance type and host class, prefer dedicated hosts \
         or pinned vCPUs, and watch steal time, which dbperf records with every run",
    ))
}

fn driver_mixed(h: &Host) -> Option<Warning> {
    let drivers = grouped(&h.active, |p| p.driver.clone().unwrap_or_default());
    (drivers.len() > 1).then(|| {
        w(
            "driver-mixed",
            format!(
                "policies use different scaling drivers: {}",
                describe(&drivers)
            ),
            "the CPUs follow different frequency rules, so the same thread runs at different \
             speeds depending on where the scheduler puts it",
            "check the kernel command line (intel_pstate=, amd_pstate=) and the firmware's \
             P-state setting, then reboot",
        )
    })
}

fn governor(h: &Host) -> Option<Warning> {
    let slow = h.active_where(|p| p.governor.as_deref().is_some_and(|g| g != "performance"));
    if slow.is_empty() {
        return None;
    }
    let driver = h.driver;
    let groups = grouped(&h.active, |p| p.governor.clone().unwrap_or_default());
    let names: Vec<String> = grouped(&slow, |p| p.governor.clone().unwrap_or_default())
        .into_iter()
        .map(|(g, _)| g)
        .collect();
    let why = if driver == "intel_pstate" || is_amd_epp(driver) {
        format!(
            "{driver}'s own powersave algorithm lowers the clock whenever the load pauses, \
             so latency and throughput depend on how bursty the benchmark is"
        )
    } else if names.iter().any(|n| n == "powersave") {
        "the generic powersave governor holds the CPU at its lowest frequency".to_string()
    } else {
        format!(
            "{} follows the load, so the first seconds of a step and light steps run at a \
             lower clock than busy ones, and steps and runs stop being comparable",
            names.join(", ")
        )
    };
    let note = match driver {
        "intel_pstate" => {
            " (intel_pstate's own performance algorithm; with HWP it also sets EPP to performance)"
        }
        d if is_amd_epp(d) => {
            " (amd-pstate-epp's performance mode; it also sets EPP to performance)"
        }
        _ => "",
    };
    Some(w(
        "governor",
        format!(
            "CPU frequency governor is not performance: {}",
            describe(&groups)
        ),
        why,
        format!("dbperf host tune --governor performance{note}"),
    ))
}

fn boost_on(h: &Host) -> Option<Warning> {
    let boost = &h.f.cpufreq.boost;
    if boost.enabled != Some(true) {
        return None;
    }
    let how = match boost.control.as_str() {
        "intel_pstate/no_turbo" => "writes 1 to intel_pstate/no_turbo",
        "cpufreq/boost" => "writes 0 to cpufreq/boost",
        "policy boost" => "writes 0 to every policy's boost file",
        _ => "writes 0 to the legacy AMD cpb file of every policy",
    };
    Some(w(
        "boost-on",
        format!("CPU boost (turbo) is on ({})", boost.control),
        "boost clocks depend on temperature, power limits and how many cores are busy, \
         so the same run gives different numbers from hour to hour, and single-thread \
         results look better than on a loaded machine",
        format!(
            "dbperf host tune --boost off ({how}); or keep boost on in every run you \
             compare (the state is stored in run.json)"
        ),
    ))
}

/// No file says whether boost is on, though cpufreq runs: see `no_boost_control`.
fn boost_uncontrollable(h: &Host) -> Option<Warning> {
    if h.f.cpufreq.boost.enabled.is_some() || h.active.is_empty() {
        return None;
    }
    no_boost_control(h.driver, kernel_version(&h.f.kernel))
}

fn boost_mixed(h: &Host) -> Option<Warning> {
    let boosts = h.active_where(|p| p.boost.is_some());
    let groups = grouped(&boosts, |p| {
        if p.boost == Some(true) { "on" } else { "off" }.to_string()
    });
    (groups.len() > 1).then(|| {
        w(
            "boost-mixed",
            format!("per-policy boost differs: {}", describe(&groups)),
            "threads run at different top speeds depending on the CPU the scheduler picks",
            "dbperf host tune --boost off (or on) sets every policy alike",
        )
    })
}

fn epp(h: &Host) -> Option<Warning> {
    let epp = h.active_where(|p| {
        p.epp
            .as_deref()
            .is_some_and(|e| e != "performance" && e != "0")
    });
    if epp.is_empty() {
        return None;
    }
    let groups = grouped(&h.active, |p| {
        p.epp.clone().unwrap_or_else(|| "none".into())
    });
    let alt = if is_amd_epp(h.driver) || h.driver == "intel_pstate" {
        ", or --governor performance, which also sets EPP to performance"
    } else {
        ""
    };
    Some(w(
        "epp",
        format!(
            "energy/performance preference (EPP) is not performance: {}",
            describe(&groups)
        ),
        "the EPP hint tells the CPU's own frequency control to trade speed for energy: \
         anything but performance ramps up more slowly and peaks lower, in hardware, \
         whatever the governor",
        format!("dbperf host tune --epp performance{alt}"),
    ))
}

fn max_freq_capped(h: &Host) -> Option<Warning> {
    // With boost off, drivers lower scaling_max_freq themselves (intel_pstate no_turbo does), so
    // a lower max is then expected.
    if h.f.cpufreq.boost.enabled == Some(false) {
        return None;
    }
    let capped =
        h.active_where(|p| matches!((p.max_khz, p.hw_max_khz), (Some(m), Some(x)) if m < x));
    let p = capped.first()?;
    Some(w(
        "max-freq-capped",
        format!(
            "scaling_max_freq is below the hardware maximum on CPUs {} ({} of {})",
            cpus_of(capped.iter().copied()),
            mhz(p.max_khz.unwrap_or(0)),
            mhz(p.hw_max_khz.unwrap_or(0))
        ),
        "something capped the CPU clock (a daemon, a power profile, an earlier tuning), so \
         runs here are slower than the hardware allows and will not match runs elsewhere",
        "dbperf host tune --max-freq max, after finding what set it (see the daemons above)",
    ))
}

fn bios_limit(h: &Host) -> Option<Warning> {
    let limited =
        h.active_where(|p| matches!((p.bios_limit_khz, p.hw_max_khz), (Some(b), Some(x)) if b < x));
    let p = limited.first()?;
    Some(w(
        "bios-limit",
        format!(
            "the firmware caps CPUs {} at {} (bios_limit), below the hardware maximum {}",
            cpus_of(limited.iter().copied()),
            mhz(p.bios_limit_khz.unwrap_or(0)),
            mhz(p.hw_max_khz.unwrap_or(0))
        ),
        "the platform is limiting power or temperature, often through a power-saving \
         profile in the firmware setup, sometimes because of cooling or the power supply",
        "set the firmware setup's power profile to maximum performance or OS control, and \
         check cooling and power supply",
    ))
}

fn smt_on(h: &Host) -> Option<Warning> {
    let f = h.f;
    if f.smt.control.as_deref() != Some("on") || f.smt.active != Some(true) {
        return None;
    }
    Some(w(
        "smt-on",
        format!(
            "SMT (hyper-threading) is on: {} logical CPUs{}",
            f.cpus_online,
            if f.cores > 0 {
                format!(" on {} cores", f.cores)
            } else {
                String::new()
            }
        ),
        "two hardware threads share a core's execution units and caches: a benchmark thread \
         slows down when work lands on its sibling, and where threads land changes from run \
         to run",
        "dbperf host tune --smt off for the most repeatable numbers, or keep SMT on in every \
         run you compare (the state is stored in run.json)",
    ))
}

fn thp_always(h: &Host) -> Option<Warning> {
    (h.f.thp.enabled.as_deref() == Some("always")).then(|| {
        w(
            "thp-always",
            "transparent huge pages are used for every mapping (enabled = always)".to_string(),
            "the kernel then compacts memory and collapses pages in the background (khugepaged) \
             and on page faults, which adds latency spikes and changes memory use from run to \
             run; PostgreSQL, MySQL, MongoDB and Redis advise against it",
            "dbperf host tune --thp madvise (only mappings that ask) or --thp never; at boot: \
             transparent_hugepage=madvise",
        )
    })
}

fn thp_defrag_always(h: &Host) -> Option<Warning> {
    let thp = &h.f.thp;
    (thp.enabled.as_deref() != Some("never") && thp.defrag.as_deref() == Some("always")).then(
        || {
            w(
            "thp-defrag-always",
            "huge-page faults compact memory synchronously (defrag = always)".to_string(),
            "a page fault then waits for direct compaction, a latency spike of milliseconds that \
             appears only when memory is fragmented, so it varies from run to run",
            "dbperf host tune --thp-defrag madvise (or defer)",
        )
        },
    )
}

fn aer_errors(h: &Host) -> Option<Warning> {
    let list: Vec<String> =
        h.f.aer
            .devices
            .iter()
            .filter(|d| {
                d.storage_path
                    && [d.correctable, d.nonfatal, d.fatal]
                        .iter()
                        .any(|c| c.unwrap_or(0) > 0)
            })
            .map(|d| {
                format!(
                    "{}: {} correctable, {} non-fatal, {} fatal",
                    d.device,
                    d.correctable.unwrap_or(0),
                    d.nonfatal.unwrap_or(0),
                    d.fatal.unwrap_or(0)
                )
            })
            .collect();
    if list.is_empty() {
        return None;
    }
    Some(w(
        "aer-errors",
        format!(
            "PCIe errors counted since boot on the storage path ({})",
            list.join("; ")
        ),
        "the link retried those transfers: retries lower throughput and raise latency, and \
         a link that keeps erring tends to get worse",
        "read the kernel log (journalctl -k | grep -i aer), reseat or replace the drive, \
         cable or riser, or try another slot; dbperf records the counters before and after \
         every run and warns when they rise",
    ))
}

fn pm_daemon(h: &Host) -> Option<Warning> {
    let names: Vec<&str> =
        h.f.pm_daemons
            .iter()
            .map(String::as_str)
            .filter(|d| *d != "irqbalance")
            .collect();
    if names.is_empty() {
        return None;
    }
    let thermal = if names.contains(&"thermald") {
        "; thermald lowers power limits when the machine runs hot"
    } else {
        ""
    };
    Some(w(
        "pm-daemon",
        format!("power-management daemons are running: {}", names.join(", ")),
        format!(
            "they set governor, EPP, boost and device settings themselves and can rewrite \
             them in the middle of a run, undoing dbperf host tune (tuned's performance \
             profiles even turn boost on){thermal}"
        ),
        format!(
            "stop them for the benchmark (systemctl stop {}) and start them again afterwards, \
             or give them the same profile in every run you compare",
            names.join(" ")
        ),
    ))
}

fn on_battery(h: &Host) -> Option<Warning> {
    (h.f.ac_power == Some(false)).then(|| {
        w(
            "on-battery",
            "the machine runs on battery".to_string(),
            "on battery, firmware and daemons lower power limits and switch to power-saving \
             profiles",
            "plug in the power supply",
        )
    })
}

/// The driver can boost but offers no file to control it.
fn no_boost_control(driver: &str, kernel: Option<(u32, u32)>) -> Option<Warning> {
    let k = kernel
        .map(|(a, b)| format!("Linux {a}.{b}"))
        .unwrap_or_else(|| "this kernel".into());
    if is_amd_epp(driver) {
        let old = kernel.is_some_and(|v| v < (6, 11));
        return Some(w(
            "boost-uncontrollable",
            format!(
                "amd-pstate-epp (active mode) on {k} offers no boost control: neither \
                 cpufreq/boost nor a per-policy boost file exists, so boost stays as the firmware \
                 set it (normally on){}",
                if old {
                    "; amd-pstate-epp gets a boost file only from Linux 6.11"
                } else {
                    ""
                }
            ),
            "boost can neither be turned off for repeatable numbers nor confirmed on, so runs \
             here cannot be matched to runs with a known boost state",
            format!(
                "boot with amd_pstate=passive or amd_pstate=guided (both offer cpufreq/boost), or \
                 with amd_pstate=disable to use acpi-cpufreq (cpufreq/boost), or switch now with \
                 `echo passive > /sys/devices/system/cpu/amd_pstate/status` as root (this resets \
                 every per-policy setting){}; or turn Core Performance Boost off in the firmware \
                 setup",
                if old {
                    ", or run Linux 6.11 or newer"
                } else {
                    ""
                }
            ),
        ));
    }
    if is_intel(driver) {
        return Some(w(
            "boost-uncontrollable",
            format!("{driver} offers no intel_pstate/no_turbo file on {k}, so turbo cannot be controlled"),
            "boost can neither be turned off for repeatable numbers nor confirmed on",
            "check whether turbo is disabled in the firmware setup; otherwise boot with \
             intel_pstate=disable to use acpi-cpufreq, which offers cpufreq/boost",
        ));
    }
    None
}
