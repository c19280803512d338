//! What the runner remembers about each operation type: full-step HDR histograms of latency (from
//! the intended start) and service time (from the actual start), the Insert Benchmark's ten
//! response-time buckets with the exact maximum, counts, rows and errors. Plus the per-second
//! `Interval` a role shares with the once-a-second collector.

use hdrhistogram::Histogram;

/// Latency histograms record nanoseconds up to 1 hour with 3 significant digits. The lowest
/// discernible value is 1 ns, not 1 µs: with a 1 µs floor HDR buckets are 512 ns wide below
/// ~1 ms, i.e. 7% steps for an 8 µs in-process query.
pub const HIST_LOW_NS: u64 = 1;
pub const HIST_HIGH_NS: u64 = 3_600_000_000_000;
pub const HIST_SIGFIG: u8 = 3;
/// Per-second histograms only feed a p99 per second: 2 digits keep them small (13 KB).
pub const INTERVAL_SIGFIG: u8 = 2;

/// Upper bounds (inclusive) of the Insert Benchmark's response-time buckets; the tenth bucket is
/// everything above 16 s.
pub const IBENCH_BOUNDS_NS: [u64; 9] = [
    256_000,
    1_000_000,
    4_000_000,
    16_000_000,
    64_000_000,
    256_000_000,
    1_000_000_000,
    4_000_000_000,
    16_000_000_000,
];

/// Error messages kept per operation type (the count is exact; the text is a sample).
const ERROR_SAMPLES: usize = 5;

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(HIST_LOW_NS, HIST_HIGH_NS, HIST_SIGFIG).expect("valid bounds")
}

pub fn ibench_bucket(ns: u64) -> usize {
    IBENCH_BOUNDS_NS
        .iter()
        .position(|&b| ns <= b)
        .unwrap_or(IBENCH_BOUNDS_NS.len())
}

/// Everything measured for one operation type over a step. Mergeable across roles.
#[derive(Clone)]
pub struct KindStats {
    pub ops: u64,
    pub rows: u64,
    pub errors: u64,
    /// `errors` by what they did: rolled back and restarted, skipped, failed the step.
    pub retried: u64,
    pub ignored: u64,
    pub failed: u64,
    pub error_samples: Vec<String>,
    pub latency: Histogram<u64>,
    pub service: Histogram<u64>,
    pub buckets: [u64; 10],
    pub max_latency_ns: u64,
    pub max_service_ns: u64,
}

impl Default for KindStats {
    fn default() -> Self {
        KindStats {
            ops: 0,
            rows: 0,
            errors: 0,
            retried: 0,
            ignored: 0,
            failed: 0,
            error_samples: Vec::new(),
            latency: new_histogram(),
            service: new_histogram(),
            buckets: [0; 10],
            max_latency_ns: 0,
            max_service_ns: 0,
        }
    }
}

impl KindStats {
    #[inline]
    pub fn record(&mut self, latency_ns: u64, service_ns: u64, rows: u64) {
        self.ops += 1;
        self.rows += rows;
        self.latency.saturating_record(latency_ns);
        self.service.saturating_record(service_ns);
        self.buckets[ibench_bucket(latency_ns)] += 1;
        self.max_latency_ns = self.max_latency_ns.max(latency_ns);
        self.max_service_ns = self.max_service_ns.max(service_ns);
    }

    /// For closed-loop roles, where service time equals latency: the service histogram is
    /// filled from the latency one when the role ends.
    #[inline]
    pub fn record_latency(&mut self, latency_ns: u64, rows: u64) {
        self.ops += 1;
        self.rows += rows;
        self.latency.saturating_record(latency_ns);
        self.buckets[ibench_bucket(latency_ns)] += 1;
        self.max_latency_ns = self.max_latency_ns.max(latency_ns);
    }

    pub fn record_error(&mut self, message: &str, class: super::ErrorClass) {
        self.errors += 1;
        match class {
            super::ErrorClass::Retried => self.retried += 1,
            super::ErrorClass::Ignored => self.ignored += 1,
            super::ErrorClass::Failed => self.failed += 1,
        }
        if self.error_samples.len() < ERROR_SAMPLES
            && !self.error_samples.iter().any(|m| m == message)
        {
            self.error_samples.push(message.to_string());
        }
    }

    pub fn merge(&mut self, other: &KindStats) {
        self.ops += other.ops;
        self.rows += other.rows;
        self.errors += other.errors;
        self.retried += other.retried;
        self.ignored += other.ignored;
        self.failed += other.failed;
        for m in &other.error_samples {
            if self.error_samples.len() < ERROR_SAMPLES && !self.error_samples.contains(m) {
                self.error_samples.push(m.clone());
            }
        }
        self.latency.add(&other.latency).expect("same bounds");
        self.service.add(&other.service).expect("same bounds");
        for (a, b) in self.buckets.iter_mut().zip(other.buckets.iter()) {
            *a += b;
        }
        self.max_latency_ns = self.max_latency_ns.max(other.max_latency_ns);
        self.max_service_ns = self.max_service_ns.max(other.max_service_ns);
    }
}

/// One role's activity of one operation type in the current second. The role adds to it under
/// an uncontended mutex; the collector swaps it out once a second.
pub struct Interval {
    pub ops: u64,
    pub rows: u64,
    pub errors: u64,
    pub max_ns: u64,
    pub hist: Histogram<u32>,
}

impl Default for Interval {
    fn default() -> Self {
        Interval {
            ops: 0,
            rows: 0,
            errors: 0,
            max_ns: 0,
            hist: Histogram::new_with_bounds(HIST_LOW_NS, HIST_HIGH_NS, INTERVAL_SIGFIG)
                .expect("valid bounds"),
        }
    }
}

impl Interval {
    #[inline]
    pub fn record(&mut self, latency_ns: u64, rows: u64) {
        self.ops += 1;
        self.rows += rows;
        self.max_ns = self.max_ns.max(latency_ns);
        self.hist.saturating_record(latency_ns);
    }

    /// Adds `other` into self and clears `other` (keeps its allocation).
    pub fn drain_from(&mut self, other: &mut Interval) {
        self.ops += other.ops;
        self.rows += other.rows;
        self.errors += other.errors;
        self.max_ns = self.max_ns.max(other.max_ns);
        if other.ops > 0 {
            self.hist.add(&other.hist).expect("same bounds");
        }
        other.ops = 0;
        other.rows = 0;
        other.errors = 0;
        other.max_ns = 0;
        other.hist.reset();
    }

    pub fn p99_ns(&self) -> u64 {
        if self.ops == 0 {
            0
        } else {
            self.hist.value_at_quantile(0.99).min(self.max_ns)
        }
    }

    pub fn is_empty(&self) -> bool {
        self.ops == 0 && self.errors == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ibench_buckets_use_inclusive_upper_bounds() {
        assert_eq!(ibench_bucket(0), 0);
        assert_eq!(ibench_bucket(256_000), 0);
        assert_eq!(ibench_bucket(256_001), 1);
        assert_eq!(ibench_bucket(1_000_000), 1);
        assert_eq!(ibench_bucket(16_000_000_000), 8);
        assert_eq!(ibench_bucket(16_000_000_001), 9);
        assert_eq!(ibench_bucket(u64::MAX), 9);
    }

    #[test]
    fn histogram_percentiles_are_within_three_digits() {
        let mut k = KindStats::default();
        for us in 1..=10_000u64 {
            k.record(us * 1000, us * 1000, 1);
        }
        let p50 = k.latency.value_at_quantile(0.5) as f64;
        let p99 = k.latency.value_at_quantile(0.99) as f64;
        assert!((p50 / 5_000_000.0 - 1.0).abs() < 0.001, "p50 {p50}");
        assert!((p99 / 9_900_000.0 - 1.0).abs() < 0.001, "p99 {p99}");
        assert_eq!(k.max_latency_ns, 10_000_000);
        assert_eq!(k.buckets.iter().sum::<u64>(), 10_000);
        assert_eq!(k.buckets[0], 256); // 1..=256 µs
        assert_eq!(k.buckets[1], 1000 - 256);
    }

    #[test]
    fn one_hour_and_beyond_saturate_instead_of_failing() {
        let mut k = KindStats::default();
        k.record(HIST_HIGH_NS * 2, 5, 0);
        assert_eq!(k.ops, 1);
        assert_eq!(k.max_latency_ns, HIST_HIGH_NS * 2, "exact max is kept");
        assert_eq!(k.buckets[9], 1);
    }

    #[test]
    fn merge_adds_everything() {
        let mut a = KindStats::default();
        let mut b = KindStats::default();
        a.record(2_000, 1_000, 10);
        b.record(5_000_000, 4_000_000, 5);
        b.record_error("busy", super::super::ErrorClass::Ignored);
        b.record_error("busy", super::super::ErrorClass::Retried);
        a.merge(&b);
        assert_eq!((a.ops, a.rows, a.errors), (2, 15, 2));
        assert_eq!((a.retried, a.ignored, a.failed), (1, 1, 0));
        assert_eq!(a.error_samples, vec!["busy".to_string()]);
        assert_eq!(a.latency.len(), 2);
        assert_eq!(a.max_service_ns, 4_000_000);
    }

    #[test]
    fn interval_drain_resets_the_source() {
        let mut src = Interval::default();
        src.record(3_000_000, 50);
        src.errors = 1;
        let mut acc = Interval::default();
        acc.drain_from(&mut src);
        assert_eq!(
            (acc.ops, acc.rows, acc.errors, acc.max_ns),
            (1, 50, 1, 3_000_000)
        );
        assert_eq!(
            (src.ops, src.rows, src.errors, src.hist.len()),
            (0, 0, 0, 0)
        );
        assert!((acc.p99_ns() as f64 / 3e6 - 1.0).abs() < 0.01);
    }
}
