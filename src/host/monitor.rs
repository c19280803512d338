//! The host during a run: the fingerprint at the start, per-CPU frequency sampled once a second
//! while steps run, AER and swap counters before and after, and a CPU calibration loop before and
//! after. At the end it says what changed and what went wrong (docs/host.md, "During a run").
//! Everything here degrades to "not available" (a VM without cpufreq, an unreadable file); none
//! of it can fail a run.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;

use serde::Serialize;

use super::machine::{self, CpuTimes};
use super::sysfs::{self, read};
use super::{fingerprint, kernel, Fingerprint, Roots};

/// A step sagged when busy CPUs ran below this share of their allowed maximum (median).
pub const SAG_PCT: u32 = 90;
/// A CPU counts as busy in a second when it was this busy (non-idle share, %).
pub const BUSY_PCT: u64 = 50;
/// Calibration drift beyond this many percent is warned about.
pub const DRIFT_PCT: f64 = 5.0;
/// Steal during the run beyond this share of CPU time is warned about.
pub const STEAL_PCT: f64 = 1.0;
/// Samples a step needs before its frequency is judged.
const MIN_SAMPLES: u64 = 3;
/// Frequency histogram: 10 MHz buckets up to 10 GHz.
const KHZ_BUCKET: u64 = 10_000;
const KHZ_BUCKETS: usize = 1000;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RunRecord {
    pub frequency: FrequencyRecord,
    pub calibration: Option<Calibration>,
    pub aer_before: AerTotals,
    pub aer_after: AerTotals,
    /// Pages swapped in and out during the run (`/proc/vmstat` pswpin, pswpout).
    pub swap_pages_in: Option<u64>,
    pub swap_pages_out: Option<u64>,
    /// Share of CPU time the hypervisor gave to others during the run, %.
    pub steal_pct: Option<f64>,
    /// Settings that differ between the fingerprints taken at the start and at the end.
    pub changed: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AerTotals {
    pub available: bool,
    pub correctable_total: u64,
    pub storage_correctable_total: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FrequencyRecord {
    /// false without cpufreq (then `note` says why and the lists are empty).
    pub sampled: bool,
    pub note: Option<String>,
    pub sag_threshold_pct: u32,
    pub busy_threshold_pct: u64,
    pub steps: Vec<StepFrequency>,
    pub policies: Vec<PolicyFrequency>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StepFrequency {
    pub step: String,
    /// Policy-seconds sampled with a busy CPU.
    pub samples: u64,
    /// Median of scaling_cur_freq / scaling_max_freq over those samples, %; null without samples.
    pub median_pct_of_max: Option<u32>,
    pub min_pct_of_max: Option<u32>,
    /// median_pct_of_max < sag_threshold_pct, with at least 3 samples.
    pub sagged: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PolicyFrequency {
    pub policy: String,
    pub cpus: String,
    pub samples: u64,
    pub median_khz: Option<u64>,
    pub min_khz: Option<u64>,
    pub max_khz: Option<u64>,
    /// scaling_max_freq at the start: the reference for the percentages.
    pub allowed_max_khz: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Calibration {
    /// Iterations of the fixed loop (chosen once per process to last about 15 ms).
    pub iterations: u64,
    /// Fastest of five passes before the first step and after the last, ms.
    pub before_ms: f64,
    pub after_ms: f64,
    /// (after - before) / before, %: positive means the CPU got slower.
    pub drift_pct: f64,
}

// ---------------------------------------------------------------------------------------------
// Calibration

/// A fixed amount of integer work the compiler cannot remove or vectorise away.
fn spin(n: u64) -> u64 {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = x.wrapping_add(i);
    }
    std::hint::black_box(x)
}

fn iterations() -> u64 {
    static N: OnceLock<u64> = OnceLock::new();
    *N.get_or_init(|| {
        let probe = 1u64 << 18;
        let t = Instant::now();
        spin(probe);
        let ns = t.elapsed().as_nanos().max(1) as f64;
        let n = (15_000_000.0 / ns * probe as f64) as u64;
        n.clamp(1 << 16, 1 << 34)
    })
}

/// Fastest of five passes, ms: the fastest is the one least disturbed by other work, and five
/// short passes (about 75 ms in all) give more chances for an undisturbed one than one long.
pub fn calibration_ms() -> f64 {
    let n = iterations();
    (0..5)
        .map(|_| {
            let t = Instant::now();
            spin(n);
            t.elapsed().as_secs_f64() * 1000.0
        })
        .fold(f64::INFINITY, f64::min)
}

fn round(v: f64, digits: i32) -> f64 {
    let m = 10f64.powi(digits);
    (v * m).round() / m
}

// ---------------------------------------------------------------------------------------------
// Frequency sampling

struct SampledPolicy {
    name: String,
    cur: PathBuf,
    cpus: Vec<u32>,
    allowed_max: u64,
    hist: Vec<u32>,
    samples: u64,
    min: u64,
    max: u64,
}

struct StepAcc {
    name: String,
    /// Percent of allowed max, 0..=255.
    pct: Vec<u32>,
    samples: u64,
}

pub struct FreqSampler {
    stat: PathBuf,
    policies: Vec<SampledPolicy>,
    prev: HashMap<u32, (u64, u64)>,
    step: Option<StepAcc>,
    steps: Vec<StepFrequency>,
}

fn median_bucket(h: &[u32]) -> Option<usize> {
    let total: u64 = h.iter().map(|c| *c as u64).sum();
    if total == 0 {
        return None;
    }
    let half = total.div_ceil(2);
    let mut acc = 0u64;
    for (i, c) in h.iter().enumerate() {
        acc += *c as u64;
        if acc >= half {
            return Some(i);
        }
    }
    None
}

impl FreqSampler {
    fn new(roots: &Roots, f: &Fingerprint) -> Option<FreqSampler> {
        let policies: Vec<SampledPolicy> = f
            .cpufreq
            .policies
            .iter()
            .filter(|p| p.active())
            .filter_map(|p| {
                Some(SampledPolicy {
                    name: p.name.clone(),
                    cur: super::cpufreq::policy_dir(roots, &p.name).join("scaling_cur_freq"),
                    cpus: p.cpus.clone(),
                    allowed_max: p.max_khz.filter(|m| *m > 0)?,
                    hist: vec![0; KHZ_BUCKETS],
                    samples: 0,
                    min: u64::MAX,
                    max: 0,
                })
            })
            .collect();
        if policies.is_empty() {
            return None;
        }
        Some(FreqSampler {
            stat: roots.proc.join("stat"),
            policies,
            prev: HashMap::new(),
            step: None,
            steps: Vec::new(),
        })
    }

    /// Per-CPU (total, idle) ticks.
    fn cpu_ticks(&self) -> HashMap<u32, (u64, u64)> {
        read(&self.stat)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let (name, t) = machine::parse_cpu_line(l)?;
                let n = name.strip_prefix("cpu")?.parse().ok()?;
                Some((n, (t.total, t.idle)))
            })
            .collect()
    }

    fn begin_step(&mut self, name: &str) {
        self.prev = self.cpu_ticks();
        self.step = Some(StepAcc {
            name: name.into(),
            pct: vec![0; 256],
            samples: 0,
        });
    }

    /// One sample: the current frequency of every policy that has a CPU that was busy since the
    /// last sample. Idle CPUs are skipped: their low clock says nothing about the load.
    pub fn sample(&mut self) {
        let now = self.cpu_ticks();
        let busy = |cpu: &u32| {
            let (Some(a), Some(b)) = (self.prev.get(cpu), now.get(cpu)) else {
                return false;
            };
            let total = b.0.saturating_sub(a.0);
            let idle = b.1.saturating_sub(a.1);
            total > 0 && (total - idle.min(total)) * 100 >= BUSY_PCT * total
        };
        let busy_policies: Vec<usize> = self
            .policies
            .iter()
            .enumerate()
            .filter(|(_, p)| p.cpus.iter().any(busy))
            .map(|(i, _)| i)
            .collect();
        for i in busy_policies {
            let p = &mut self.policies[i];
            let Some(khz) = sysfs::read_u64(&p.cur) else {
                continue;
            };
            p.hist[((khz / KHZ_BUCKET) as usize).min(KHZ_BUCKETS - 1)] += 1;
            p.samples += 1;
            p.min = p.min.min(khz);
            p.max = p.max.max(khz);
            if let Some(s) = self.step.as_mut() {
                let pct = (khz * 100 / p.allowed_max).min(255) as usize;
                s.pct[pct] += 1;
                s.samples += 1;
            }
        }
        self.prev = now;
    }

    fn end_step(&mut self) {
        let Some(s) = self.step.take() else { return };
        let median = median_bucket(&s.pct).map(|m| m as u32);
        let min = s.pct.iter().position(|c| *c > 0).map(|m| m as u32);
        self.steps.push(StepFrequency {
            step: s.name,
            samples: s.samples,
            median_pct_of_max: median,
            min_pct_of_max: min,
            sagged: s.samples >= MIN_SAMPLES && median.is_some_and(|m| m < SAG_PCT),
        });
    }

    fn record(&self) -> FrequencyRecord {
        FrequencyRecord {
            sampled: true,
            note: None,
            sag_threshold_pct: SAG_PCT,
            busy_threshold_pct: BUSY_PCT,
            steps: self.steps.clone(),
            policies: self
                .policies
                .iter()
                .map(|p| PolicyFrequency {
                    policy: p.name.clone(),
                    cpus: sysfs::cpu_ranges(&p.cpus),
                    samples: p.samples,
                    // Bucket middle, so a 10 MHz bucket reads as its centre.
                    median_khz: median_bucket(&p.hist)
                        .map(|b| b as u64 * KHZ_BUCKET + KHZ_BUCKET / 2),
                    min_khz: (p.samples > 0).then_some(p.min),
                    max_khz: (p.samples > 0).then_some(p.max),
                    allowed_max_khz: p.allowed_max,
                })
                .collect(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The run

pub struct Monitor {
    roots: Roots,
    data_dirs: Vec<PathBuf>,
    start: Fingerprint,
    cpu_start: Option<CpuTimes>,
    swap_start: Option<(u64, u64)>,
    calibration_before: f64,
    freq: Option<FreqSampler>,
}

fn aer_totals(f: &Fingerprint) -> AerTotals {
    AerTotals {
        available: f.aer.available,
        correctable_total: f.aer.correctable_total,
        storage_correctable_total: f.aer.storage_correctable_total,
    }
}

impl Monitor {
    /// Takes the fingerprint and the "before" counters, and runs the calibration loop unless
    /// `calibrate` is false (then no drift is recorded).
    pub fn start(roots: Roots, data_dirs: Vec<PathBuf>, calibrate: bool) -> Monitor {
        let start = fingerprint(&roots, &data_dirs);
        let freq = FreqSampler::new(&roots, &start);
        Monitor {
            cpu_start: machine::cpu_times(&roots),
            swap_start: kernel::swap_pages(&roots),
            calibration_before: if calibrate {
                calibration_ms()
            } else {
                f64::NAN
            },
            freq,
            start,
            roots,
            data_dirs,
        }
    }

    pub fn fingerprint(&self) -> &Fingerprint {
        &self.start
    }

    /// One line for the start of a run.
    pub fn summary(&self) -> String {
        summary(&self.start)
    }

    pub fn step_begins(&mut self, step: &str) {
        if let Some(f) = self.freq.as_mut() {
            f.begin_step(step);
        }
    }

    /// Called once a second while a step is measured.
    pub fn second(&mut self) {
        if let Some(f) = self.freq.as_mut() {
            f.sample();
        }
    }

    pub fn step_ends(&mut self) {
        if let Some(f) = self.freq.as_mut() {
            f.end_step();
        }
    }

    /// The record for run.json (`host.during_run`) and the warnings, one sentence each.
    pub fn finish(self) -> (RunRecord, Vec<String>) {
        let after_ms = if self.calibration_before.is_finite() {
            calibration_ms()
        } else {
            f64::NAN
        };
        let end = fingerprint(&self.roots, &self.data_dirs);
        let changed = diff(&self.start, &end);
        let mut warnings: Vec<String> = changed_warning(&changed).into_iter().collect();
        let frequency = self.frequency();
        warnings.extend(sag_warnings(&frequency));
        warnings.extend(aer_rises(&self.start, &end));
        let calibration = calibration(self.calibration_before, after_ms);
        warnings.extend(calibration.as_ref().and_then(drift_warning));
        let swap = match (self.swap_start, kernel::swap_pages(&self.roots)) {
            (Some(a), Some(b)) => Some((b.0.saturating_sub(a.0), b.1.saturating_sub(a.1))),
            _ => None,
        };
        warnings.extend(swap.and_then(swap_warning));
        let steal = match (self.cpu_start, machine::cpu_times(&self.roots)) {
            (Some(a), Some(b)) => b.since(&a).steal_pct(),
            _ => None,
        };
        warnings.extend(steal.and_then(steal_warning));
        let record = RunRecord {
            frequency,
            calibration,
            aer_before: aer_totals(&self.start),
            aer_after: aer_totals(&end),
            swap_pages_in: swap.map(|s| s.0),
            swap_pages_out: swap.map(|s| s.1),
            steal_pct: steal,
            changed,
        };
        (record, warnings)
    }

    /// What the frequency sampler saw, or why there was nothing to sample.
    fn frequency(&self) -> FrequencyRecord {
        match &self.freq {
            Some(f) => f.record(),
            None => FrequencyRecord {
                sampled: false,
                note: Some(if self.start.cpufreq.policies.is_empty() {
                    "no cpufreq on this host (the hypervisor or firmware sets the clock)".into()
                } else {
                    "no active cpufreq policy with a scaling_max_freq".into()
                }),
                sag_threshold_pct: SAG_PCT,
                busy_threshold_pct: BUSY_PCT,
                steps: Vec::new(),
                policies: Vec::new(),
            },
        }
    }
}

/// The settings that changed during the run, the first six named.
fn changed_warning(changed: &[String]) -> Option<String> {
    if changed.is_empty() {
        return None;
    }
    let shown: Vec<&str> = changed.iter().take(6).map(|s| s.as_str()).collect();
    Some(format!(
        "host state changed during the run: {}{}",
        shown.join("; "),
        if changed.len() > shown.len() {
            format!(" (and {} more)", changed.len() - shown.len())
        } else {
            String::new()
        }
    ))
}

/// One warning per step whose busy CPUs ran below `SAG_PCT` of their allowed maximum.
fn sag_warnings(frequency: &FrequencyRecord) -> Vec<String> {
    frequency
        .steps
        .iter()
        .filter(|s| s.sagged)
        .map(|s| {
            format!(
                "CPU frequency sagged under load in step {}: busy CPUs ran at a median {}% of their allowed maximum (thermal or power capping, or a power-saving governor or EPP)",
                s.step,
                s.median_pct_of_max.unwrap_or(0)
            )
        })
        .collect()
}

/// One warning per PCIe device whose correctable errors rose between the two fingerprints.
fn aer_rises(start: &Fingerprint, end: &Fingerprint) -> Vec<String> {
    let before: BTreeMap<&str, u64> = start
        .aer
        .devices
        .iter()
        .map(|d| (d.device.as_str(), d.correctable.unwrap_or(0)))
        .collect();
    end.aer
        .devices
        .iter()
        .filter_map(|d| {
            let was = before.get(d.device.as_str()).copied().unwrap_or(0);
            let now = d.correctable.unwrap_or(0);
            (now > was).then(|| {
                format!(
                    "PCIe correctable errors rose during the run on {}{}: {was} -> {now} (the link retried transfers, which costs throughput and latency)",
                    d.device,
                    if d.storage_path { " (storage path)" } else { "" }
                )
            })
        })
        .collect()
}

/// The calibration loop's times before and after the run; None when it did not run before.
fn calibration(before_ms: f64, after_ms: f64) -> Option<Calibration> {
    (before_ms.is_finite() && before_ms > 0.0).then(|| Calibration {
        iterations: iterations(),
        before_ms: round(before_ms, 3),
        after_ms: round(after_ms, 3),
        drift_pct: round((after_ms - before_ms) / before_ms * 100.0, 2),
    })
}

fn drift_warning(c: &Calibration) -> Option<String> {
    (c.drift_pct.abs() > DRIFT_PCT).then(|| {
        format!(
            "CPU speed drifted during the run: the calibration loop took {:.1}% {} after the run than before ({:.1} vs {:.1} ms; {})",
            c.drift_pct.abs(),
            if c.drift_pct > 0.0 { "longer" } else { "less" },
            c.after_ms,
            c.before_ms,
            if c.drift_pct > 0.0 {
                "thermal throttling, power capping or a frequency change"
            } else {
                "boost or a governor ramping up"
            }
        )
    })
}

/// `(i, o)`: pages swapped in and out during the run.
fn swap_warning((i, o): (u64, u64)) -> Option<String> {
    (i + o > 0).then(|| {
        format!(
            "the host swapped during the run ({i} pages in, {o} out): memory pressure turns page faults into disk reads"
        )
    })
}

/// `s`: the share of CPU time the hypervisor took during the run, %.
fn steal_warning(s: f64) -> Option<String> {
    (s > STEAL_PCT).then(|| {
        format!(
            "the hypervisor took {s}% of CPU time during the run (steal): neighbours slowed this VM down"
        )
    })
}

/// "acpi-cpufreq, governor schedutil, boost on, SMT on, THP madvise; 3 warnings".
pub fn summary(f: &Fingerprint) -> String {
    let mut parts = Vec::new();
    if f.virtualization.vm {
        parts.push("virtual machine".to_string());
    }
    let cf = &f.cpufreq;
    if cf.policies.is_empty() {
        parts.push("no cpufreq".into());
    } else {
        parts.push(cf.mode.clone());
        let mut govs: Vec<String> = cf
            .policies
            .iter()
            .filter(|p| p.active())
            .filter_map(|p| p.governor.clone())
            .collect();
        govs.dedup();
        if !govs.is_empty() {
            parts.push(format!("governor {}", govs.join("/")));
        }
        parts.push(match cf.boost.enabled {
            Some(true) => "boost on".into(),
            Some(false) => "boost off".into(),
            None => "boost not controllable".into(),
        });
    }
    if let Some(c) = &f.smt.control {
        parts.push(format!("SMT {c}"));
    }
    if let Some(t) = &f.thp.enabled {
        parts.push(format!("THP {t}"));
    }
    let n = f.warnings.len();
    format!(
        "{}; {}",
        parts.join(", "),
        match n {
            0 => "no warnings".to_string(),
            1 => "1 warning (dbperf host show explains it)".to_string(),
            n => format!("{n} warnings (dbperf host show explains them)"),
        }
    )
}

// ---------------------------------------------------------------------------------------------
// What changed

/// Values that move by themselves (clocks, counters, derived warnings): not a change of state.
const VOLATILE: &[&str] = &[
    "cur_khz",
    "hw_cur_khz",
    "aer",
    "warnings",
    "steal_pct_since_boot",
];

/// Objects in a list are named by their own key, so a policy going offline does not shift
/// every later one.
const FLAT: crate::json::Flatten = crate::json::Flatten {
    skip: VOLATILE,
    element_names: Some(&["name", "path", "device"]),
};

/// Settings that differ between two fingerprints: "cpufreq.policies[policy0].governor
/// performance -> powersave".
pub fn diff(a: &Fingerprint, b: &Fingerprint) -> Vec<String> {
    let (mut x, mut y) = (BTreeMap::new(), BTreeMap::new());
    if let (Ok(va), Ok(vb)) = (serde_json::to_value(a), serde_json::to_value(b)) {
        crate::json::flatten(&va, &FLAT, String::new(), &mut x);
        crate::json::flatten(&vb, &FLAT, String::new(), &mut y);
    }
    let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|k| {
            let (l, r) = (x.get(k), y.get(k));
            (l != r).then(|| {
                format!(
                    "{k} {} -> {}",
                    l.map(String::as_str).unwrap_or("(absent)"),
                    r.map(String::as_str).unwrap_or("(absent)")
                )
            })
        })
        .collect()
}
