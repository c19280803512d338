//! The CPU settings tune plans: every active cpufreq policy's governor, boost, EPP and frequency
//! limits, and SMT. Each checks its value against what this driver and kernel offer before it
//! plans a write; `tune::plan` calls them in the order spec A.1.7 writes them.

use std::path::PathBuf;

use super::plan::Plan;
use super::Freq;
use crate::error::bad_input;
use crate::host::cpufreq::{self, is_amd_epp, CpuFreq, Policy};
use crate::host::sysfs::{self, kernel_version};
use crate::host::{kernel, Roots};

/// What the CPU settings are planned against: the cpufreq state and its active policies.
pub(super) struct Cpus<'a> {
    roots: &'a Roots,
    cf: &'a CpuFreq,
    policies: Vec<&'a Policy>,
}

impl<'a> Cpus<'a> {
    pub(super) fn new(roots: &'a Roots, cf: &'a CpuFreq) -> Cpus<'a> {
        Cpus {
            roots,
            cf,
            policies: cf.policies.iter().filter(|p| p.active()).collect(),
        }
    }

    fn dir(&self, p: &Policy) -> PathBuf {
        cpufreq::policy_dir(self.roots, &p.name)
    }

    fn driver(&self) -> &str {
        &self.cf.driver
    }

    /// Refuses `opt` on a host without cpufreq policies.
    fn need(&self, opt: &str) -> anyhow::Result<()> {
        if self.policies.is_empty() {
            return bad_input(format!(
                "this host has no CPU frequency control (no cpufreq policies, usual in virtual machines), so {opt} cannot be set"
            ));
        }
        Ok(())
    }
}

/// `--governor`: every active policy's scaling_governor, once each is known to offer it.
pub(super) fn governor(plan: &mut Plan, c: &Cpus, g: &str) -> anyhow::Result<()> {
    c.need("--governor")?;
    for p in &c.policies {
        if !p.governors_available.is_empty() && !p.governors_available.iter().any(|x| x == g) {
            return bad_input(format!(
                "the {} driver offers the governors {}, not '{g}'",
                c.driver(),
                p.governors_available.join(", ")
            ));
        }
    }
    for p in &c.policies {
        if p.governor.as_deref() == Some(g) {
            continue;
        }
        // A governor change moves EPP (intel_pstate HWP, amd-pstate-epp) and can reset
        // intel_pstate's no_turbo; save them so undo puts them back as they were.
        plan.companion(
            "--governor",
            format!("{} energy_performance_preference", p.name),
            c.dir(p).join("energy_performance_preference"),
        );
        plan.companion(
            "--governor",
            "intel_pstate no_turbo".into(),
            cpufreq::cpu_dir(c.roots).join("intel_pstate/no_turbo"),
        );
        plan.add(
            "--governor",
            format!("{} scaling_governor", p.name),
            c.dir(p).join("scaling_governor"),
            Some(g.to_string()),
            false,
        );
    }
    Ok(())
}

fn one_zero(on: bool) -> String {
    if on { "1" } else { "0" }.to_string()
}

/// `--boost`: through whichever file controls boost here (`Boost::control`).
pub(super) fn boost(plan: &mut Plan, c: &Cpus, on: bool) -> anyhow::Result<()> {
    c.need("--boost")?;
    match c.cf.boost.control.as_str() {
        "intel_pstate/no_turbo" => no_turbo(plan, c, on),
        "cpufreq/boost" => global_boost(plan, c, on),
        "policy boost" => per_policy_boost(plan, c, on, "boost", |p| p.boost.is_some()),
        "cpb" => per_policy_boost(plan, c, on, "cpb", |p| p.cpb.is_some()),
        _ => return no_boost_control(c),
    }
    Ok(())
}

/// intel_pstate's no_turbo, which holds the opposite of boost.
fn no_turbo(plan: &mut Plan, c: &Cpus, on: bool) {
    // Setting no_turbo lowers both frequency caps; clearing it restores them only if nothing
    // wrote them meanwhile, so save them.
    for p in &c.policies {
        plan.companion(
            "--boost",
            format!("{} scaling_min_freq", p.name),
            c.dir(p).join("scaling_min_freq"),
        );
        plan.companion(
            "--boost",
            format!("{} scaling_max_freq", p.name),
            c.dir(p).join("scaling_max_freq"),
        );
    }
    plan.add(
        "--boost",
        "intel_pstate no_turbo".into(),
        cpufreq::cpu_dir(c.roots).join("intel_pstate/no_turbo"),
        Some(one_zero(!on)),
        false,
    );
}

/// The global cpufreq/boost switch.
fn global_boost(plan: &mut Plan, c: &Cpus, on: bool) {
    // The global switch also sets every policy's boost; save those to restore a mixed state
    // exactly.
    for p in &c.policies {
        plan.companion(
            "--boost",
            format!("{} boost", p.name),
            c.dir(p).join("boost"),
        );
        plan.companion("--boost", format!("{} cpb", p.name), c.dir(p).join("cpb"));
    }
    plan.add(
        "--boost",
        "cpufreq boost".into(),
        cpufreq::cpu_dir(c.roots).join("cpufreq/boost"),
        Some(one_zero(on)),
        false,
    );
}

/// A boost file in each policy that has one: `boost`, or the legacy AMD `cpb`.
fn per_policy_boost(plan: &mut Plan, c: &Cpus, on: bool, file: &str, has: fn(&Policy) -> bool) {
    for p in c.policies.iter().filter(|p| has(p)) {
        plan.add(
            "--boost",
            format!("{} {file}", p.name),
            c.dir(p).join(file),
            Some(one_zero(on)),
            false,
        );
    }
}

/// The refusal when the driver offers no boost file, with the way out for this driver.
fn no_boost_control(c: &Cpus) -> anyhow::Result<()> {
    let release = sysfs::read(&c.roots.proc.join("sys/kernel/osrelease")).unwrap_or_default();
    let k = kernel_version(&release)
        .map(|(a, b)| format!("Linux {a}.{b}"))
        .unwrap_or_else(|| "this kernel".into());
    let driver = c.driver();
    if is_amd_epp(driver) {
        return bad_input(format!(
            "amd-pstate-epp (active mode) on {k} offers no boost control (no cpufreq/boost and no per-policy boost file): boot with amd_pstate=passive or amd_pstate=guided, or amd_pstate=disable to use acpi-cpufreq, or run Linux 6.11 or newer"
        ));
    }
    bad_input(format!(
        "the {driver} driver offers no boost control on this CPU (no cpufreq/boost, per-policy boost, intel_pstate/no_turbo or cpb file)"
    ))
}

/// `--epp`: every policy with an energy_performance_preference. `governor` is the one --governor
/// sets, if given: intel_pstate pins EPP under the performance governor.
pub(super) fn epp(
    plan: &mut Plan,
    c: &Cpus,
    e: &str,
    governor: Option<&String>,
) -> anyhow::Result<()> {
    c.need("--epp")?;
    let driver = c.driver();
    let with: Vec<&&Policy> = c.policies.iter().filter(|p| p.epp.is_some()).collect();
    if with.is_empty() {
        return bad_input(format!(
            "the {driver} driver offers no energy_performance_preference (EPP exists with intel_pstate and with amd-pstate-epp, the active mode)"
        ));
    }
    let numeric = e.parse::<u32>().is_ok_and(|n| n <= 255);
    for p in &with {
        if !numeric && !p.epp_available.is_empty() && !p.epp_available.iter().any(|x| x == e) {
            return bad_input(format!(
                "EPP takes {} (or a number 0-255) here, not '{e}'",
                p.epp_available.join(", ")
            ));
        }
    }
    let governor_after = |p: &Policy| governor.cloned().or_else(|| p.governor.clone());
    if driver == "intel_pstate"
        && e != "performance"
        && e != "0"
        && with
            .iter()
            .any(|p| governor_after(p).as_deref() == Some("performance"))
    {
        return bad_input(
            "intel_pstate holds EPP at performance while the governor is performance; add --governor powersave to set another EPP",
        );
    }
    for p in with {
        plan.add(
            "--epp",
            format!("{} energy_performance_preference", p.name),
            c.dir(p).join("energy_performance_preference"),
            Some(e.to_string()),
            false,
        );
    }
    Ok(())
}

/// `--min-freq` and `--max-freq`, in kHz or as the hardware's own limits.
#[derive(Clone, Copy)]
pub(super) struct Limits {
    pub(super) min: Option<Freq>,
    pub(super) max: Option<Freq>,
}

impl Limits {
    /// The option the journal names them by.
    fn flag(self) -> &'static str {
        if self.max.is_some() {
            "--max-freq"
        } else {
            "--min-freq"
        }
    }
}

/// `--min-freq`/`--max-freq`: every active policy's scaling limits.
pub(super) fn limits(plan: &mut Plan, c: &Cpus, l: Limits) -> anyhow::Result<()> {
    c.need(l.flag())?;
    for p in &c.policies {
        policy_limits(plan, c, p, l)?;
    }
    Ok(())
}

/// One policy's new limits, checked against its hardware range and each other.
fn policy_limits(plan: &mut Plan, c: &Cpus, p: &Policy, l: Limits) -> anyhow::Result<()> {
    let (Some(hw_min), Some(hw_max), Some(old_min), Some(old_max)) =
        (p.hw_min_khz, p.hw_max_khz, p.min_khz, p.max_khz)
    else {
        return bad_input(format!("{} has no frequency limits to set", p.name));
    };
    let resolve = |f: Option<Freq>, flag: &str| -> anyhow::Result<Option<u64>> {
        Ok(match f {
            None => None,
            Some(Freq::Min) => Some(hw_min),
            Some(Freq::Max) => Some(hw_max),
            Some(Freq::Khz(k)) if (hw_min..=hw_max).contains(&k) => Some(k),
            Some(Freq::Khz(k)) => {
                return bad_input(format!(
                    "{flag} {k} kHz is outside the hardware limits of {} ({hw_min}-{hw_max} kHz)",
                    p.name
                ))
            }
        })
    };
    let new_min = resolve(l.min, "--min-freq")?;
    let new_max = resolve(l.max, "--max-freq")?;
    let (lo, hi) = (new_min.unwrap_or(old_min), new_max.unwrap_or(old_max));
    if lo > hi {
        return bad_input(format!(
            "the minimum frequency would exceed the maximum on {} ({lo} > {hi} kHz)",
            p.name
        ));
    }
    let set = |plan: &mut Plan, file: &str, v: Option<u64>| {
        if let Some(v) = v {
            plan.add(
                l.flag(),
                format!("{} {file}", p.name),
                c.dir(p).join(file),
                Some(v.to_string()),
                false,
            );
        }
    };
    // The kernel rejects min > max at every moment: lower the minimum first when the new maximum
    // is below the old minimum, otherwise raise the maximum first (as cpupower).
    if hi < old_min {
        set(plan, "scaling_min_freq", new_min);
        set(plan, "scaling_max_freq", new_max);
    } else {
        set(plan, "scaling_max_freq", new_max);
        set(plan, "scaling_min_freq", new_min);
    }
    Ok(())
}

/// `--smt`: smt/control, unless the kernel or the boot forbids switching it.
pub(super) fn smt(plan: &mut Plan, roots: &Roots, on: bool) -> anyhow::Result<()> {
    let path = kernel::smt_dir(roots).join("control");
    let target = if on { "on" } else { "off" };
    match sysfs::read(&path).as_deref() {
        None => {
            return bad_input(format!(
                "this kernel has no SMT control ({} is missing)",
                path.display()
            ))
        }
        Some("forceoff") if on => return bad_input(
            "SMT was forced off at boot (nosmt=force) and cannot be turned on until a reboot without it",
        ),
        Some("notsupported") => {
            return bad_input("this CPU has no SMT (smt/control says notsupported)")
        }
        Some("notimplemented") => return bad_input(
            "this kernel cannot switch SMT at run time (smt/control says notimplemented)",
        ),
        _ => {}
    }
    plan.add(
        "--smt",
        "smt control".into(),
        path,
        Some(target.into()),
        false,
    );
    Ok(())
}
