//! Caps on what dbperf reads from a query's rows: the server decides how many rows it sends and
//! how long their values are, so a query dbperf reads whole (the server's version, its settings,
//! counters, status reports) stops at limits no real server reaches instead of growing memory
//! without bound, and one it reads only for its end (DDL, maintenance) stops an endless stream of
//! rows. Past a cap the statement fails with one sentence (`Fault::TooMuch`) and its connection
//! is closed: it is somewhere in the middle of a reply.

/// The limits for one statement's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keep {
    /// Rows, whether kept or not.
    pub rows: u64,
    /// Bytes of one value.
    pub value: usize,
    /// Bytes of every value together.
    pub total: usize,
}

/// Settings, counters, statistics views and single values: SHOW GLOBAL VARIABLES and SHOW
/// GLOBAL STATUS have about a thousand rows, pg_settings a few hundred, pg_stat_user_indexes one
/// per index; no setting or counter is longer than a few KiB.
pub const KEEP: Keep = Keep {
    rows: 100_000,
    value: 64 << 10,
    total: 32 << 20,
};

/// The engines' status reports: SHOW ENGINE INNODB STATUS is one value, which InnoDB itself
/// cuts at 1 MB; MyRocks' has a row per column family.
pub const KEEP_REPORT: Keep = Keep {
    value: 4 << 20,
    ..KEEP
};

/// Statements read only for their end (DDL, SET, VACUUM, ANALYZE TABLE): they return no rows or
/// one per table. Their values are not kept, so only their number is capped.
pub const SKIP: Keep = Keep {
    rows: KEEP.rows,
    value: usize::MAX,
    total: usize::MAX,
};

/// What one kept cell costs besides its bytes: an `Option<String>` and its allocation.
pub const CELL_COST: usize = 32;

/// What one statement has sent so far, against its `Keep`.
#[derive(Debug)]
pub struct Tally {
    keep: Keep,
    rows: u64,
    bytes: usize,
}

impl Tally {
    pub fn new(keep: Keep) -> Tally {
        Tally {
            keep,
            rows: 0,
            bytes: 0,
        }
    }

    /// Counts one more row with these values; the sentence the statement fails with once the
    /// server has sent more than the limits.
    pub fn row(&mut self, values: &[Option<&[u8]>]) -> Result<(), String> {
        self.rows += 1;
        if self.rows > self.keep.rows {
            return Err(format!(
                "the server sent more than {} rows where dbperf expects a few; dbperf stopped \
                 reading and closed the connection",
                self.keep.rows
            ));
        }
        // A kept cell costs memory whether or not it holds bytes (a row of 30,000 NULLs is 4
        // bytes a cell on the wire and far more kept), so each counts this much towards the
        // total besides its bytes.
        self.bytes = self.bytes.saturating_add(values.len() * CELL_COST);
        for v in values.iter().flatten() {
            if v.len() > self.keep.value {
                return Err(format!(
                    "the server sent a value of {} bytes where dbperf expects at most {} KiB; \
                     dbperf stopped reading and closed the connection",
                    v.len(),
                    self.keep.value >> 10
                ));
            }
            self.bytes = self.bytes.saturating_add(v.len());
        }
        if self.bytes > self.keep.total {
            return Err(format!(
                "the server sent more than {} MiB of rows where dbperf expects a few KiB; dbperf \
                 stopped reading and closed the connection",
                self.keep.total >> 20
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_values_and_their_total_are_each_capped() {
        // Each cell costs CELL_COST besides its bytes.
        let small = Keep {
            rows: 3,
            value: 4,
            total: 3 * CELL_COST + 10,
        };
        let mut t = Tally::new(Keep {
            total: 100 * CELL_COST,
            ..small
        });
        for _ in 0..3 {
            t.row(&[Some(b"ab"), None]).unwrap();
        }
        let e = t.row(&[]).unwrap_err();
        assert!(e.contains("more than 3 rows"), "{e}");
        let e = Tally::new(small).row(&[Some(b"abcde")]).unwrap_err();
        assert!(e.contains("a value of 5 bytes"), "{e}");
        let mut t = Tally::new(Keep { rows: 100, ..small });
        for _ in 0..2 {
            t.row(&[Some(b"abcd")]).unwrap();
        }
        assert!(t.row(&[Some(b"abcd")]).unwrap_err().contains("MiB of rows"));
        // A row of NULLs is no free row: its cells are counted.
        let nulls = vec![None; 4];
        assert!(Tally::new(small)
            .row(&nulls)
            .unwrap_err()
            .contains("MiB of rows"));
    }

    #[test]
    fn skipped_rows_are_counted_but_their_size_is_not() {
        let mut t = Tally::new(SKIP);
        let big = vec![0u8; 1 << 20];
        for _ in 0..SKIP.rows {
            t.row(&[Some(&big)]).unwrap();
        }
        assert!(t.row(&[]).is_err());
    }
}
