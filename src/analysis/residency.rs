//! Whether a step ran in memory or was IO-bound, by measurement (docs/metrics.md, "In memory or
//! IO-bound"): the disk reads per operation of the devices under the data decide, and what the
//! step read from disk against the data's size (a scan reads much in few reads); the DBMS's
//! cache hit ratio and the memory cap say why. A step with no device figures or
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
        let (h, m) = (self.hits, self.misses);
        if !(h.is_finite() && m.is_finite()) || h < 0.0 || m < 0.0 || h + m == 0.0 {
            return None;
        }
        // As 1 / (1 + m/h), which a sum past f64's range (a tampered counter) cannot turn to 0.
        Some(if h == 0.0 { 0.0 } else { 1.0 / (1.0 + m / h) })
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
    /// The data's size in bytes at the end of the step.
    pub data_bytes: Option<f64>,
}

impl Evidence {
    /// What the step read from disk over the data's size: a scan reads much in few, large
    /// reads (an index build reads its table in reads of a megabyte and more), which reads
    /// per operation alone would call in memory.
    pub fn read_share(&self) -> Option<f64> {
        let read = self.read_kb_per_op? * 1024.0 * self.ops?;
        let data = self.data_bytes.filter(|d| *d > 0.0)?;
        Some(read / data).filter(|x| x.is_finite() && *x >= 0.0)
    }

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

/// A step that read at least its data's whole size from disk is IO-bound however few its reads
/// per operation: it read its data from disk (a scan), or read it again and again. A share, so
/// a long step reaches it sooner than a short one with the same reads per operation: that is
/// what the words say, a step that kept reading its data from disk.
pub const IO_BOUND_READ_SHARE: f64 = 1.0;

/// Reads at least this large (KB) are a scan's: the kernel's read-ahead or the DBMS's own
/// merged them. A page is 4 to 16 KB.
pub const SCAN_READ_KB: f64 = 64.0;

/// A step in memory read less than this share of its data's size from disk.
pub const IN_MEMORY_READ_SHARE: f64 = 0.01;

/// The verdict for a step's evidence.
pub fn classify(e: &Evidence) -> Residency {
    let (Some(ops), Some(r)) = (e.ops, e.reads_per_op) else {
        return Residency::Unknown;
    };
    if ops.is_nan() || ops < MIN_OPS || !r.is_finite() || r < 0.0 {
        return Residency::Unknown;
    }
    // The devices' reads are every process's. When the DBMS missed its own cache less than
    // once in a hundred operations, at most its misses' worth of them were its own (each of
    // its disk reads follows a miss): the rest were another process's (a backup, another
    // server on the disk), and both figures count only the DBMS's share.
    let own = match e.cache {
        Some(c) if c.misses.is_finite() && c.misses / ops < IN_MEMORY_READS_PER_OP && r > 0.0 => {
            (c.misses / ops / r).min(1.0)
        }
        _ => 1.0,
    };
    let r = r * own;
    // The share speaks for scans only: reads of a page or a few (random reads) are judged per
    // operation, where a step's length does not count and a few foreign reads of a small
    // table do not make it IO-bound.
    let share = e
        .read_share()
        .filter(|_| e.kb_per_read().is_some_and(|kb| kb >= SCAN_READ_KB))
        .map(|x| x * own);
    if r >= IO_BOUND_READS_PER_OP || share.is_some_and(|s| s >= IO_BOUND_READ_SHARE) {
        Residency::IoBound
    } else if r < IN_MEMORY_READS_PER_OP && share.is_none_or(|s| s < IN_MEMORY_READ_SHARE) {
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
            data_bytes: None,
        }
    }

    /// Found running it (issue 34): l.x on a capped PostgreSQL read 1.3 GB from disk for a
    /// 0.7 GB table in reads of 1.3 MB: 0.00027 reads per indexed row, which reads per
    /// operation alone called in memory.
    #[test]
    fn a_scan_that_reads_its_data_from_disk_is_io_bound() {
        let scan = Evidence {
            ops: Some(3_579_138.0),
            reads_per_op: Some(0.000270),
            read_kb_per_op: Some(0.000270 * 1338.0),
            cache: None,
            data_bytes: Some(0.695 * (1u64 << 30) as f64),
        };
        assert_eq!(classify(&scan), Residency::IoBound);
        // l.i0 of the same run: 2.8 MB read for 350 MB of data.
        let load = Evidence {
            ops: Some(3_579_138.0),
            reads_per_op: Some(0.000196),
            read_kb_per_op: Some(0.000196 * 4.0),
            cache: None,
            data_bytes: Some(0.350 * (1u64 << 30) as f64),
        };
        assert_eq!(classify(&load), Residency::InMemory);
        // Page-sized reads of a small table: judged per operation, not by the share (found in
        // the golden SQLite reports: 440 KB read for 350 KB of data, 0.0004 reads per query).
        let small = Evidence {
            ops: Some(2_000_000.0),
            reads_per_op: Some(0.000397),
            read_kb_per_op: Some(0.000397 * 4.11),
            cache: None,
            data_bytes: Some(0.000336 * (1u64 << 30) as f64),
        };
        assert_eq!(classify(&small), Residency::InMemory);
        // Few reads per operation but a tenth of the data read: some IO.
        let some = Evidence {
            data_bytes: Some(scan.read_kb_per_op.unwrap() * 1024.0 * 3_579_138.0 * 10.0),
            ..scan
        };
        assert_eq!(classify(&some), Residency::SomeIo);
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
        // A step of a few operations: its reads say nothing per operation.
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

    /// Found by an outside review (issue 34): `dd` reading the same disk during a capped step
    /// whose data fit made it "IO-bound" with 100% cache hits, and hid the warning.
    #[test]
    fn reads_the_dbms_did_not_miss_its_cache_for_are_not_its_own() {
        let busy_disk = Evidence {
            cache: Some(CacheHits {
                hits: 50_000.0,
                misses: 3.0,
            }),
            ..at(10_000.0, 0.497)
        };
        assert_eq!(classify(&busy_disk), Residency::InMemory);
        let missing = Evidence {
            cache: Some(CacheHits {
                hits: 50_000.0,
                misses: 9_000.0,
            }),
            ..at(10_000.0, 0.497)
        };
        assert_eq!(classify(&missing), Residency::IoBound);
        // A load that read 90% of its data from disk in 23 KB reads while its cache missed
        // 0.005 times per row (MySQL's index build): page-sized reads, judged per row, and
        // fewer than one row in a hundred waited for one.
        let load = Evidence {
            ops: Some(17_000_000.0),
            reads_per_op: Some(0.00936),
            read_kb_per_op: Some(0.00936 * 22.9),
            cache: Some(CacheHits {
                hits: 1e9,
                misses: 0.005 * 17_000_000.0,
            }),
            data_bytes: Some(3.89 * (1u64 << 30) as f64),
        };
        assert_eq!(classify(&load), Residency::InMemory);
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
        let huge = CacheHits {
            hits: 1e308,
            misses: 1e308,
        };
        assert_eq!(huge.ratio(), Some(0.5));
    }
}
