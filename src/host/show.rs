//! `dbperf host show` for people: the fingerprint as labelled lines, policies with the same
//! settings folded into one row, then the warnings with why and fix.

use std::fmt::Write;

use super::block::BlockDevice;
use super::cpufreq::Policy;
use super::sysfs::cpu_ranges;
use super::Fingerprint;

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref()
        .map(|x| x.to_string())
        .unwrap_or_else(|| "-".into())
}

fn onoff(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "on",
        Some(false) => "off",
        None => "-",
    }
}

/// A flag file's value as the kernel writes it: `1`, `0`, or `-` when unread.
fn one_zero(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "1",
        Some(false) => "0",
        None => "-",
    }
}

fn mhz(v: Option<u64>) -> String {
    v.map(|k| (k / 1000).to_string())
        .unwrap_or_else(|| "-".into())
}

fn range(a: Option<u64>, b: Option<u64>) -> String {
    if a.is_none() && b.is_none() {
        return "-".into();
    }
    format!("{}-{}", mhz(a), mhz(b))
}

/// The settings that make two policies the same row.
fn key(p: &Policy) -> String {
    format!(
        "{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{}",
        p.driver,
        p.governor,
        p.epp,
        p.min_khz,
        p.max_khz,
        p.hw_min_khz,
        p.hw_max_khz,
        p.boost,
        p.cpb,
        p.bios_limit_khz,
        p.active()
    )
}

fn table(rows: &[Vec<String>]) -> String {
    let n = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n)
        .map(|i| {
            rows.iter()
                .map(|r| r.get(i).map(|c| c.chars().count()).unwrap_or(0))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::from("  ");
        for (i, c) in r.iter().enumerate() {
            line.push_str(c);
            if i + 1 < r.len() {
                line.push_str(&" ".repeat(widths[i] - c.chars().count() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn policy_rows(ps: &[Policy]) -> Vec<Vec<String>> {
    let mut rows = vec![vec![
        "policies".to_string(),
        "cpus".into(),
        "governor".into(),
        "epp".into(),
        "min-max MHz".into(),
        "hw MHz".into(),
        "cur MHz".into(),
        "boost".into(),
    ]];
    let mut i = 0;
    while i < ps.len() {
        let mut j = i;
        while j + 1 < ps.len() && key(&ps[j + 1]) == key(&ps[i]) {
            j += 1;
        }
        let group = &ps[i..=j];
        let p = &group[0];
        let idx: Vec<u32> = group
            .iter()
            .filter_map(|p| p.name.strip_prefix("policy")?.parse().ok())
            .collect();
        let cpus: Vec<u32> = group.iter().flat_map(|p| p.cpus.iter().copied()).collect();
        let curs: Vec<u64> = group.iter().filter_map(|p| p.cur_khz).collect();
        let cur = match (curs.iter().min(), curs.iter().max()) {
            (Some(a), Some(b)) if a / 1000 == b / 1000 => mhz(Some(*a)),
            (Some(a), Some(b)) => format!("{}-{}", a / 1000, b / 1000),
            _ => "-".into(),
        };
        let mut boost = match (p.boost, p.cpb) {
            (Some(b), _) => onoff(Some(b)).to_string(),
            (None, Some(c)) => format!("cpb {}", onoff(Some(c))),
            (None, None) => "-".into(),
        };
        if let Some(l) = p.bios_limit_khz {
            boost.push_str(&format!("  (bios_limit {})", l / 1000));
        }
        rows.push(vec![
            format!("policy{}", cpu_ranges(&idx)),
            if p.active() {
                cpu_ranges(&cpus)
            } else {
                "offline".into()
            },
            opt(&p.governor),
            opt(&p.epp),
            range(p.min_khz, p.max_khz),
            range(p.hw_min_khz, p.hw_max_khz),
            cur,
            boost,
        ]);
        i = j + 1;
    }
    rows
}

/// One labelled line: the label in a column of its own, then the text.
fn line(s: &mut String, label: &str, text: String) {
    let _ = writeln!(s, "{label:<11} {text}");
}

/// Every section of `host show`, in order.
const SECTIONS: &[fn(&mut String, &Fingerprint)] =
    &[machine, cpufreq, smt, thp, vm, storage, aer, daemons, power];

pub fn render(f: &Fingerprint) -> String {
    let mut s = String::new();
    for section in SECTIONS {
        section(&mut s, f);
    }
    s.push('\n');
    warnings(&mut s, f);
    s
}

/// The host, kernel command line, CPU and memory, firmware and whether it is a VM.
fn machine(s: &mut String, f: &Fingerprint) {
    line(
        s,
        "host",
        format!("{}, {}, kernel {}", f.hostname, f.os, f.kernel),
    );
    line(s, "cmdline", f.kernel_cmdline.clone());
    line(
        s,
        "cpu",
        format!(
            "{}, {} online CPUs{}, {} MiB memory",
            f.cpu_model,
            f.cpus_online,
            if f.cores > 0 {
                format!(" on {} cores", f.cores)
            } else {
                String::new()
            },
            f.memory_kb / 1024
        ),
    );
    let b = &f.bios;
    let bios = match (&b.vendor, &b.version) {
        (None, None) => "BIOS unknown (no /sys/class/dmi/id)".to_string(),
        _ => format!(
            "BIOS {} {} ({}){}",
            opt(&b.vendor),
            opt(&b.version),
            opt(&b.date),
            match (&b.sys_vendor, &b.product_name) {
                (None, None) => String::new(),
                (v, p) => format!(", {} {}", opt(v), opt(p)),
            }
        ),
    };
    let machine = if f.virtualization.vm {
        format!(
            "virtual machine ({}{})",
            f.virtualization.evidence.as_deref().unwrap_or("detected"),
            f.virtualization
                .steal_pct_since_boot
                .map(|p| format!(", steal {p}% since boot"))
                .unwrap_or_default()
        )
    } else {
        "bare metal".to_string()
    };
    line(s, "machine", format!("{machine}, {bios}"));
}

/// The driver and boost, the driver's own switches, and the policies' table.
fn cpufreq(s: &mut String, f: &Fingerprint) {
    let cf = &f.cpufreq;
    if cf.policies.is_empty() {
        line(
            s,
            "cpufreq",
            "none: no cpufreq policies (the hypervisor or firmware sets the clock)".into(),
        );
        return;
    }
    let mode = if cf.mode != cf.driver {
        format!("{} ({})", cf.driver, cf.mode)
    } else {
        cf.driver.clone()
    };
    let boost = match cf.boost.enabled {
        Some(e) => format!("boost {} ({})", onoff(Some(e)), cf.boost.control),
        None => "boost: no control".to_string(),
    };
    line(s, "cpufreq", format!("{mode}, {boost}"));
    if let Some(i) = &cf.intel_pstate {
        line(
            s,
            "",
            format!(
                "intel_pstate: status {}, no_turbo {}, perf pct {}-{}, turbo_pct {}, hwp_dynamic_boost {}",
                opt(&i.status),
                one_zero(i.no_turbo),
                opt(&i.min_perf_pct),
                opt(&i.max_perf_pct),
                opt(&i.turbo_pct),
                onoff(i.hwp_dynamic_boost)
            ),
        );
    }
    if let Some(a) = &cf.amd_pstate {
        line(
            s,
            "",
            format!(
                "amd_pstate: status {}, prefcore {}",
                opt(&a.status),
                opt(&a.prefcore)
            ),
        );
    }
    s.push_str(&table(&policy_rows(&cf.policies)));
}

fn smt(s: &mut String, f: &Fingerprint) {
    let smt = match (f.smt.control.as_deref(), f.smt.active) {
        (None, _) => "unknown (no smt/control)".to_string(),
        (Some("forceoff"), _) => {
            "forceoff (nosmt=force at boot: cannot be turned on until a reboot)".into()
        }
        (Some(c), a) => format!(
            "{c}{}",
            match a {
                Some(true) => ", siblings online",
                Some(false) => ", not active",
                None => "",
            }
        ),
    };
    line(s, "smt", smt);
}

fn thp(s: &mut String, f: &Fingerprint) {
    line(
        s,
        "thp",
        format!(
            "enabled {}, defrag {}",
            opt(&f.thp.enabled),
            opt(&f.thp.defrag)
        ),
    );
}

/// The VM sysctls.
fn vm(s: &mut String, f: &Fingerprint) {
    let v = &f.sysctl;
    line(
        s,
        "vm",
        format!(
            "swappiness {}, dirty_ratio {}, dirty_background_ratio {}, dirty_bytes {}, dirty_background_bytes {}, dirty_expire_centisecs {}, dirty_writeback_centisecs {}, zone_reclaim_mode {}, numa_balancing {}",
            opt(&v.swappiness),
            opt(&v.dirty_ratio),
            opt(&v.dirty_background_ratio),
            opt(&v.dirty_bytes),
            opt(&v.dirty_background_bytes),
            opt(&v.dirty_expire_centisecs),
            opt(&v.dirty_writeback_centisecs),
            opt(&v.zone_reclaim_mode),
            opt(&v.numa_balancing)
        ),
    );
}

/// Every data directory: its mount, the device chain under it, and each device's queue.
fn storage(s: &mut String, f: &Fingerprint) {
    for d in &f.storage {
        let head = match (&d.mount_point, &d.fstype) {
            (Some(m), Some(t)) => format!(
                "{}: {t} on {} mounted at {m} ({})",
                d.path,
                d.source.as_deref().unwrap_or("?"),
                d.mount_options.as_deref().unwrap_or("")
            ),
            _ => d.path.clone(),
        };
        line(s, "storage", head);
        if let Some(n) = &d.note {
            line(s, "", format!("no block device: {n}"));
        }
        if d.chain.len() > 1 {
            line(s, "", d.chain.join(" -> "));
        }
        for b in &d.devices {
            line(s, "", device(b));
        }
    }
}

/// One block device's queue settings.
fn device(b: &BlockDevice) -> String {
    format!(
        "{}{}: scheduler {} (of {}), read_ahead_kb {}, rotational {}, write_cache {}",
        b.name,
        b.dm_name
            .as_ref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default(),
        opt(&b.scheduler),
        if b.schedulers_available.is_empty() {
            "-".into()
        } else {
            b.schedulers_available.join(" ")
        },
        opt(&b.read_ahead_kb),
        one_zero(b.rotational),
        opt(&b.write_cache)
    )
}

fn aer(s: &mut String, f: &Fingerprint) {
    let a = &f.aer;
    line(
        s,
        "pcie aer",
        if a.available {
            format!(
                "correctable errors since boot: {} on the storage path, {} in all ({} devices report)",
                a.storage_correctable_total,
                a.correctable_total,
                a.devices.len()
            )
        } else {
            "no AER counters (no AER-capable PCIe device, or a kernel before 4.19)".into()
        },
    );
}

fn daemons(s: &mut String, f: &Fingerprint) {
    line(
        s,
        "daemons",
        if f.pm_daemons.is_empty() {
            "no power-management daemon running".into()
        } else {
            f.pm_daemons.join(", ")
        },
    );
}

fn power(s: &mut String, f: &Fingerprint) {
    if let Some(ac) = f.ac_power {
        line(
            s,
            "power",
            if ac { "on mains" } else { "on battery" }.into(),
        );
    }
}

/// The warnings, each with why it matters and how to fix it.
fn warnings(s: &mut String, f: &Fingerprint) {
    if f.warnings.is_empty() {
        s.push_str("No warnings.\n");
        return;
    }
    let _ = writeln!(
        s,
        "{} warning{}:",
        f.warnings.len(),
        if f.warnings.len() == 1 { "" } else { "s" }
    );
    for w in &f.warnings {
        let _ = writeln!(s, "  ! {}: {}", w.id, w.message);
        let _ = writeln!(s, "      why: {}", w.why);
        let _ = writeln!(s, "      fix: {}", w.fix);
    }
}
