//! The suites dbperf runs, with one registry entry each, in the shape of `engines`. What the
//! rest of the crate knows about a suite (its name in result files and on the command line,
//! what people call it, the clap group its flags are declared in, which flags of another suite
//! a person may have meant as one of its own) is read from its entry, or decided by a `match`
//! on `Suite` (its session driver, its report section, its scaling curves): a new suite then
//! fails to compile wherever it needs a decision, instead of silently taking another suite's
//! branch.
//!
//! Adding a suite is its rooms (workload, session driver, report section) plus one entry in
//! `REGISTRY`. This room imports nothing of the crate, so every room may use it.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Suite {
    /// The Insert Benchmark (docs/ibench.md).
    Ibench,
    /// The sysbench-style microbenchmarks (docs/sysbench.md).
    Sysbench,
    /// TPC-C, the order-entry workload (docs/tpcc.md).
    Tpcc,
    /// pgbench's built-in scripts and script files (docs/pgbench.md).
    Pgbench,
}

#[derive(Debug)]
pub struct Entry {
    pub suite: Suite,
    /// How result files, campaigns, `--suite` and reports name it; also the id of the clap
    /// group its `dbperf run` flags are declared in, and of its table in a campaign.
    pub name: &'static str,
    /// What people call it, for sentences: "the Insert Benchmark".
    pub product: &'static str,
    /// What a report's headings call it: "Insert Benchmark".
    pub title: &'static str,
    /// What one of its flags is called in a sentence: "an Insert Benchmark flag".
    pub a_flag: &'static str,
    /// `dbperf run --suite`'s help for it.
    pub help: &'static str,
    /// Flags of other suites a person may have meant as one of this suite's: given with this
    /// suite, the refusal names the counterpart (`--clients` with sysbench: `--threads`).
    pub counterparts: &'static [(&'static str, &'static str)],
    /// What its concurrency sweep is called and where its levels are kept.
    pub sweep: Sweep,
}

/// A suite's sweep over concurrency (`--clients 1,2,4`): what a report calls a level, and
/// whether each level is a result of its own or a step of one result.
#[derive(Debug)]
pub struct Sweep {
    /// The `dbperf run` flag that gives the levels.
    pub flag: &'static str,
    /// One level's unit, for headings and sentences: "client".
    pub noun: &'static str,
    /// Several: "clients".
    pub nouns: &'static str,
    pub levels: Levels,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Levels {
    /// Each level is a cell of its own with a fresh load, its value the result's axis of this
    /// name (the Insert Benchmark's tables are per client).
    Cells { axis: &'static str },
    /// Each level is a step of one result after one load, its label the step's with this
    /// suffix and the level (`point-query_range=100_threads=8`).
    Steps { suffix: &'static str },
}

/// One entry per suite, in the order of `Suite`'s variants (`Suite::entry` indexes it; tested).
pub const REGISTRY: &[Entry] = &[
    Entry {
        suite: Suite::Ibench,
        name: "ibench",
        product: "the Insert Benchmark",
        title: "Insert Benchmark",
        a_flag: "an Insert Benchmark flag",
        help: "The Insert Benchmark: l.i0, l.x, l.i1, l.i2, then qr/qp pairs at each rate",
        counterparts: &[],
        sweep: Sweep {
            flag: "--clients",
            noun: "client",
            nouns: "clients",
            levels: Levels::Cells { axis: "clients" },
        },
    },
    Entry {
        suite: Suite::Sysbench,
        name: "sysbench",
        product: "the sysbench suite",
        title: "sysbench",
        a_flag: "a sysbench flag",
        help: "The sysbench-style microbenchmarks in the original's run order \
               (docs/sysbench.md)",
        counterparts: &[("--clients", "--threads"), ("--rows-l-i0", "--rows")],
        sweep: Sweep {
            flag: "--threads",
            noun: "thread",
            nouns: "threads",
            levels: Levels::Steps {
                suffix: "_threads=",
            },
        },
    },
    Entry {
        suite: Suite::Tpcc,
        name: "tpcc",
        product: "TPC-C",
        title: "TPC-C",
        a_flag: "a TPC-C flag",
        help: "TPC-C (TPC-C-like, as the peers run it): the load, then the five transactions \
               at each number of connections (docs/tpcc.md)",
        counterparts: &[
            ("--clients", "--connections"),
            ("--threads", "--connections"),
        ],
        sweep: Sweep {
            flag: "--connections",
            noun: "connection",
            nouns: "connections",
            levels: Levels::Steps {
                suffix: "_connections=",
            },
        },
    },
    Entry {
        suite: Suite::Pgbench,
        name: "pgbench",
        product: "pgbench",
        title: "pgbench",
        a_flag: "a pgbench flag",
        help: "pgbench's init and built-in scripts or script files, at each number of clients \
               (docs/pgbench.md)",
        counterparts: &[
            ("--clients", "--client"),
            ("--threads", "--client"),
            ("--connections", "--client"),
            ("--steps", "--init-only and --no-init"),
            ("--skip-load", "--no-init"),
        ],
        sweep: Sweep {
            flag: "--client",
            noun: "client",
            nouns: "clients",
            levels: Levels::Steps {
                suffix: "_clients=",
            },
        },
    },
];

impl Suite {
    /// The suite of a run or campaign that names none.
    pub const DEFAULT: Suite = Suite::Ibench;

    /// Every suite, in the registry's order.
    pub fn all() -> impl Iterator<Item = Suite> {
        REGISTRY.iter().map(|e| e.suite)
    }

    /// Its entry. `const` so the clap groups of `dbperf run` can be named by it.
    pub const fn entry(self) -> &'static Entry {
        &REGISTRY[self as usize]
    }

    pub const fn name(self) -> &'static str {
        self.entry().name
    }

    /// The suite a result file, a campaign or `--suite` names; None for a name no entry has.
    pub fn parse(name: &str) -> Option<Suite> {
        REGISTRY.iter().find(|e| e.name == name).map(|e| e.suite)
    }

    /// The suffix its sweep adds to a step's label; None when its levels are cells.
    pub fn level_suffix(self) -> Option<&'static str> {
        match self.entry().sweep.levels {
            Levels::Steps { suffix } => Some(suffix),
            Levels::Cells { .. } => None,
        }
    }

    /// The label of `step` at one level of the suite's sweep: `run_connections=4`.
    pub fn level_label(self, step: &str, level: u64) -> String {
        format!("{step}{}{level}", self.level_suffix().unwrap_or("@"))
    }

    /// Every suite's name joined by `sep`, for a message that offers them.
    pub fn names(sep: &str) -> String {
        Suite::all().map(Suite::name).collect::<Vec<_>>().join(sep)
    }
}

/// Result files and journals name a suite by its name.
impl serde::Serialize for Suite {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Suite {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Suite, D::Error> {
        let name = String::deserialize(d)?;
        Suite::parse(&name).ok_or_else(|| {
            // Escaped: the name comes from a file, and the sentence must stay one line.
            serde::de::Error::custom(format!(
                "suite \"{}\" is one this dbperf cannot report or run (it knows {}); upgrade \
                 dbperf",
                name.escape_debug(),
                Suite::names(", ")
            ))
        })
    }
}

impl fmt::Display for Suite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Suite; 4] = [Suite::Ibench, Suite::Sysbench, Suite::Tpcc, Suite::Pgbench];

    #[test]
    fn every_suite_has_its_entry_at_its_index_and_its_name_reads_back() {
        assert_eq!(REGISTRY.len(), ALL.len());
        for s in ALL {
            assert_eq!(s.entry().suite, s);
            assert_eq!(Suite::parse(s.name()), Some(s));
        }
        assert_eq!(Suite::parse("tpc-c"), None);
        assert_eq!(Suite::names(", "), "ibench, sysbench, tpcc, pgbench");
    }

    #[test]
    fn a_name_from_a_file_stays_one_line_in_the_error() {
        let e = serde_json::from_str::<Suite>("\"tp\\ncc\"").unwrap_err();
        assert!(!e.to_string().contains('\n'), "{e}");
        assert!(e.to_string().contains("upgrade dbperf"), "{e}");
        assert_eq!(
            serde_json::from_str::<Suite>("\"sysbench\"").unwrap(),
            Suite::Sysbench
        );
        assert_eq!(serde_json::to_string(&Suite::Ibench).unwrap(), "\"ibench\"");
    }
}
