//! The original's two run orders (spec §5.5), as data: mdcallag/mytools
//! bench/sysbench.lua/all_small.sh at commit 23aa3363 (2024-04, 42 reported tests) and at HEAD
//! (the "current" list: 32 reported tests once the `.pre` ones are dropped, as its report
//! script does). Each entry is one sysbench run: a test, a variant suffix, the range of its
//! label, which duration it gets, how many threads, and whether the "postwrite" cleanup follows.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunOrder {
    #[serde(rename = "2024")]
    Y2024,
    Current,
}

impl RunOrder {
    pub fn name(self) -> &'static str {
        match self {
            RunOrder::Y2024 => "2024",
            RunOrder::Current => "current",
        }
    }

    pub fn entries(self) -> &'static [Entry] {
        match self {
            RunOrder::Y2024 => ORDER_2024,
            RunOrder::Current => ORDER_CURRENT,
        }
    }
}

/// The suffix of a test's name in the original.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// The test on the aged tables (after the write-heavy tests).
    Plain,
    /// `.pre`: right after the load, on fresh tables.
    Pre,
    /// `.warm`: warms caches, not reported.
    Warm,
    /// `.warmpre`: scan's warm-up before the `.pre` tests, not reported.
    Warmpre,
}

impl Variant {
    pub fn suffix(self) -> &'static str {
        match self {
            Variant::Plain => "",
            Variant::Pre => ".pre",
            Variant::Warm => ".warm",
            Variant::Warmpre => ".warmpre",
        }
    }

    /// Warm-ups are run but, as in the original's reports, not reported.
    pub fn reported(self) -> bool {
        matches!(self, Variant::Plain | Variant::Pre)
    }
}

/// Which duration a run gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Secs {
    /// The read-only duration (secs_read).
    Read,
    /// The write duration (secs_write; also the original's insert duration).
    Write,
    /// scan.warm / scan.warmpre: 60 s in the original (`--warm-seconds`).
    Warm,
    /// One event per thread (the 2024 scan: --events=1).
    OneEvent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Threads {
    /// `--threads`.
    Given,
    /// As many threads as tables (point-query.warm, the 2024 scan).
    Tables,
}

#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub test: &'static str,
    pub variant: Variant,
    pub range: u64,
    pub secs: Secs,
    pub threads: Threads,
    /// The "postwrite" cleanup and wait follows (spec §5.6).
    pub postwrite: bool,
}

impl Entry {
    /// `<test><suffix>`, e.g. `point-query.pre`.
    pub fn name(&self) -> String {
        format!("{}{}", self.test, self.variant.suffix())
    }

    /// The original's report label, `<test><suffix>_range=<R>`.
    pub fn label(&self) -> String {
        format!("{}_range={}", self.name(), self.range)
    }
}

const fn e(test: &'static str, variant: Variant, range: u64, secs: Secs) -> Entry {
    Entry {
        test,
        variant,
        range,
        secs,
        threads: Threads::Given,
        postwrite: false,
    }
}

use Secs::{OneEvent, Read, Warm, Write};
use Variant::{Plain, Pre, Warmpre};

/// point-query.warm runs with the load (setup=1), one thread per table, then "postwrite".
const LOAD_WARM: Entry = Entry {
    test: "point-query",
    variant: Variant::Warm,
    range: 100,
    secs: Read,
    threads: Threads::Tables,
    postwrite: true,
};

/// read-write range=100 is followed by "postwrite".
const READ_WRITE_100: Entry = Entry {
    postwrite: true,
    ..e("read-write", Plain, 100, Write)
};

const ORDER_2024: &[Entry] = &[
    LOAD_WARM,
    // Pre: read-only on the fresh tables.
    e("point-query", Pre, 100, Read),
    e("random-points", Pre, 10, Read),
    e("random-points", Pre, 100, Read),
    e("random-points", Pre, 1000, Read),
    e("read-only", Pre, 10, Read),
    e("read-only", Pre, 100, Read),
    e("read-only", Pre, 10000, Read),
    e("points-covered-pk", Pre, 100, Read),
    e("points-notcovered-pk", Pre, 100, Read),
    e("points-covered-si", Pre, 100, Read),
    e("points-notcovered-si", Pre, 100, Read),
    e("range-covered-pk", Pre, 100, Read),
    e("range-notcovered-pk", Pre, 100, Read),
    e("range-covered-si", Pre, 100, Read),
    e("range-notcovered-si", Pre, 100, Read),
    // Write-heavy. write-only runs for the read duration, as in the original.
    e("update-inlist", Plain, 100, Write),
    e("update-index", Plain, 100, Write),
    e("update-nonindex", Plain, 100, Write),
    e("update-one", Plain, 100, Write),
    e("update-zipf", Plain, 100, Write),
    e("write-only", Plain, 10000, Read),
    e("read-write", Plain, 10, Write),
    READ_WRITE_100,
    // Post: the same read-only tests on the aged tables.
    e("read-only", Plain, 10, Read),
    e("read-only", Plain, 100, Read),
    e("read-only", Plain, 10000, Read),
    e("point-query", Plain, 100, Read),
    e("random-points", Plain, 10, Read),
    e("random-points", Plain, 100, Read),
    e("random-points", Plain, 1000, Read),
    e("hot-points", Plain, 100, Read),
    e("points-covered-pk", Plain, 100, Read),
    e("points-notcovered-pk", Plain, 100, Read),
    e("points-covered-si", Plain, 100, Read),
    e("points-notcovered-si", Plain, 100, Read),
    e("range-covered-pk", Plain, 100, Read),
    e("range-notcovered-pk", Plain, 100, Read),
    e("range-covered-si", Plain, 100, Read),
    e("range-notcovered-si", Plain, 100, Read),
    // One full scan per table, one thread each.
    Entry {
        threads: Threads::Tables,
        ..e("scan", Plain, 100, OneEvent)
    },
    e("delete", Plain, 100, Write),
    e("insert", Plain, 100, Write),
];

const ORDER_CURRENT: &[Entry] = &[
    LOAD_WARM,
    e("scan", Warmpre, 100, Warm),
    e("point-query", Pre, 100, Read),
    e("range-notcovered-si", Pre, 100, Read),
    e("update-inlist", Plain, 100, Write),
    e("update-index", Plain, 100, Write),
    e("update-nonindex", Plain, 100, Write),
    e("update-one", Plain, 100, Write),
    e("update-zipf", Plain, 100, Write),
    e("write-only", Plain, 10000, Read),
    e("read-write", Plain, 10, Write),
    READ_WRITE_100,
    e("scan", Variant::Warm, 100, Warm),
    e("scan", Plain, 100, Read),
    e("read-only", Plain, 10, Read),
    e("read-only", Plain, 100, Read),
    e("read-only", Plain, 10000, Read),
    e("read-only-simple", Plain, 1000, Read),
    e("read-only-sum", Plain, 1000, Read),
    e("read-only-order", Plain, 1000, Read),
    e("read-only-distinct", Plain, 1000, Read),
    e("read-only-count", Plain, 1000, Read),
    e("point-query", Plain, 100, Read),
    e("random-points", Plain, 10, Read),
    e("random-points", Plain, 100, Read),
    e("random-points", Plain, 1000, Read),
    e("hot-points", Plain, 100, Read),
    e("points-covered-pk", Plain, 100, Read),
    e("points-notcovered-pk", Plain, 100, Read),
    e("range-covered-pk", Plain, 100, Read),
    e("range-notcovered-pk", Plain, 100, Read),
    // With MyRocks the secondary index blocks are likely evicted by now: warm them first.
    e("points-covered-si", Variant::Warm, 100, Read),
    e("points-covered-si", Plain, 100, Read),
    e("points-notcovered-si", Plain, 100, Read),
    e("range-covered-si", Plain, 100, Read),
    e("range-notcovered-si", Plain, 100, Read),
    e("delete", Plain, 100, Write),
    e("insert", Plain, 100, Write),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::sysbench::catalog;

    fn reported(o: RunOrder) -> Vec<String> {
        o.entries()
            .iter()
            .filter(|e| e.variant.reported())
            .map(Entry::label)
            .collect()
    }

    #[test]
    fn the_2024_list_has_42_reported_tests() {
        let r = reported(RunOrder::Y2024);
        assert_eq!(r.len(), 42);
        assert_eq!(r.iter().filter(|l| l.contains(".pre_")).count(), 15);
        assert_eq!(r[0], "point-query.pre_range=100");
        assert_eq!(r.last().unwrap(), "insert_range=100");
    }

    #[test]
    fn the_current_list_has_32_without_pre() {
        let r = reported(RunOrder::Current);
        let no_pre: Vec<_> = r.iter().filter(|l| !l.contains(".pre_")).collect();
        assert_eq!(no_pre.len(), 32, "{no_pre:?}");
        assert_eq!(r.len(), 34);
    }

    #[test]
    fn every_entry_is_in_the_catalog_and_labels_are_unique() {
        for o in [RunOrder::Y2024, RunOrder::Current] {
            let labels: Vec<String> = o.entries().iter().map(Entry::label).collect();
            for (i, e) in o.entries().iter().enumerate() {
                assert!(catalog::find(e.test).is_some(), "{}", e.test);
                assert!(!labels[..i].contains(&labels[i]), "{} twice", labels[i]);
            }
            let pw: Vec<String> = o
                .entries()
                .iter()
                .filter(|e| e.postwrite)
                .map(Entry::label)
                .collect();
            assert_eq!(
                pw,
                ["point-query.warm_range=100", "read-write_range=100"],
                "{o:?}"
            );
        }
    }
}
