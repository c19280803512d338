//! Whether a step ran in memory or was IO-bound, by measurement (docs/metrics.md, "In memory or
//! IO-bound"): the disk reads per operation of the devices under the data decide; the DBMS's
//! cache hit ratio, the data size and the memory cap say why. A step with no device figures or
//! too few operations gets no verdict: per-operation reads over a handful of operations say
//! nothing about the data's residency.

/// At or above this many disk reads per operation a step is IO-bound: one operation in ten
/// waits for the disk at least once.
pub const IO_BOUND_READS_PER_OP: f64 = 0.1;

/// Below this many disk reads per operation a step ran in memory: fewer than one operation in a
/// hundred touches the disk.
pub const IN_MEMORY_READS_PER_OP: f64 = 0.01;

/// The fewest operations a verdict rests on.
pub const MIN_OPS: f64 = 1000.0;

/// Hits and misses of the DBMS's own cache over a step (PostgreSQL's shared_buffers, InnoDB's
/// buffer pool, MyRocks' block cache). A miss is a read from the OS: from disk, or from the
/// page cache where the DBMS reads through it (PostgreSQL, buffered InnoDB).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CacheHits {
    pub hits: f64,
    pub misses: f64,
}

impl CacheHits {
    /// Hits over all lookups; None without lookups.
    pub fn ratio(&self) -> Option<f64> {
        let all = self.hits + self.misses;
        (all > 0.0 && self.hits >= 0.0 && self.misses >= 0.0).then(|| self.hits / all)
    }
}

/// What a verdict rests on, for one step.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Evidence {
    /// Operations the per-operation figures are over.
    pub ops: Option<f64>,
    /// Reads of the devices under the data, per operation.
    pub reads_per_op: Option<f64>,
    /// KB read from those devices per operation.
    pub read_kb_per_op: Option<f64>,
    pub cache: Option<CacheHits>,
}

impl Evidence {
    /// KB per disk read; None without reads.
    pub fn kb_per_read(&self) -> Option<f64> {
        let r = self.reads_per_op.filter(|r| *r > 0.0)?;
        Some(self.read_kb_per_op? / r)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Residency {
    /// Fewer than `IN_MEMORY_READS_PER_OP` disk reads per operation.
    InMemory,
    /// Between the two thresholds: some operations wait for the disk.
    SomeIo,
    /// At least `IO_BOUND_READS_PER_OP` disk reads per operation.
    IoBound,
    /// No verdict: no device figures, or too few operations.
    Unknown,
}

impl Residency {
    pub fn label(self) -> &'static str {
        match self {
            Residency::InMemory => "in memory",
            Residency::SomeIo => "some IO",
            Residency::IoBound => "IO-bound",
            Residency::Unknown => "unknown",
        }
    }
}

/// The verdict for a step's evidence.
pub fn classify(e: &Evidence) -> Residency {
    let (Some(ops), Some(r)) = (e.ops, e.reads_per_op) else {
        return Residency::Unknown;
    };
    if ops.is_nan() || ops < MIN_OPS || !r.is_finite() || r < 0.0 {
        return Residency::Unknown;
    }
    if r >= IO_BOUND_READS_PER_OP {
        Residency::IoBound
    } else if r < IN_MEMORY_READS_PER_OP {
        Residency::InMemory
    } else {
        Residency::SomeIo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ops: f64, reads: f64) -> Evidence {
        Evidence {
            ops: Some(ops),
            reads_per_op: Some(reads),
            read_kb_per_op: Some(reads * 8.0),
            cache: None,
        }
    }

    #[test]
    fn the_thresholds_decide() {
        assert_eq!(classify(&at(88_385.0, 0.857)), Residency::IoBound);
        assert_eq!(classify(&at(5000.0, 0.1)), Residency::IoBound);
        assert_eq!(classify(&at(5000.0, 0.099)), Residency::SomeIo);
        assert_eq!(classify(&at(5000.0, 0.01)), Residency::SomeIo);
        assert_eq!(classify(&at(5000.0, 0.0099)), Residency::InMemory);
        assert_eq!(classify(&at(5000.0, 0.0)), Residency::InMemory);
    }

    #[test]
    fn no_verdict_without_the_figures_it_rests_on() {
        // l.x creates one index: one operation, thousands of reads.
        assert_eq!(classify(&at(1.0, 30_000.0)), Residency::Unknown);
        assert_eq!(classify(&at(999.0, 0.0)), Residency::Unknown);
        assert_eq!(classify(&at(f64::NAN, 1.0)), Residency::Unknown);
        assert_eq!(classify(&at(5000.0, f64::NAN)), Residency::Unknown);
        assert_eq!(classify(&at(5000.0, -1.0)), Residency::Unknown);
        let none = Evidence {
            ops: Some(5000.0),
            ..Default::default()
        };
        assert_eq!(classify(&none), Residency::Unknown);
    }

    #[test]
    fn kb_per_read_and_hit_ratio() {
        assert_eq!(at(5000.0, 0.5).kb_per_read(), Some(8.0));
        assert_eq!(at(5000.0, 0.0).kb_per_read(), None);
        let c = CacheHits {
            hits: 238_582.0,
            misses: 115_515.0,
        };
        assert!((c.ratio().unwrap() - 0.6738).abs() < 1e-4);
        let none = CacheHits {
            hits: 0.0,
            misses: 0.0,
        };
        assert_eq!(none.ratio(), None);
    }
}
