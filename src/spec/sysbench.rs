//! The sysbench suite's parameters from a preset and the flags, validated with errors a user can
//! act on.

use super::bounds::{check_seconds, DEFAULT_SEED, MAX_STEP_SECONDS};
use super::presets::SysbenchPreset;
use crate::error::bad_input;
use crate::workload::sysbench::order::RunOrder;
use crate::workload::sysbench::{select, KValues, SysbenchParams, LOAD_BATCH, ZIPF_EXP};

/// Flags that override a sysbench preset; `None` keeps the preset's value.
#[derive(Debug, Clone)]
pub struct SysbenchOverrides {
    pub run_order: RunOrder,
    pub tests: Option<Vec<String>>,
    /// One count, or the levels of a sweep.
    pub threads: Option<super::Levels>,
    pub tables: Option<u64>,
    pub rows: Option<u64>,
    pub read_seconds: Option<u64>,
    pub write_seconds: Option<u64>,
    pub warm_seconds: Option<u64>,
    pub warmup_seconds: Option<u64>,
    pub postwrite_seconds: Option<u64>,
    pub prepared: bool,
    pub usepk: u8,
    pub k_values: KValues,
    pub seed: Option<u64>,
    pub skip_load: bool,
}

impl Default for SysbenchOverrides {
    fn default() -> Self {
        SysbenchOverrides {
            run_order: RunOrder::Current,
            tests: None,
            threads: None,
            tables: None,
            rows: None,
            read_seconds: None,
            write_seconds: None,
            warm_seconds: None,
            warmup_seconds: None,
            postwrite_seconds: None,
            prepared: true,
            usepk: 1,
            k_values: KValues::Special,
            seed: None,
            skip_load: false,
        }
    }
}

/// Threads and tables beyond this are a typo rather than a benchmark.
const MAX_THREADS: u64 = 1024;

pub fn sysbench_params(
    preset: &SysbenchPreset,
    o: &SysbenchOverrides,
) -> anyhow::Result<SysbenchParams> {
    let levels = o
        .threads
        .clone()
        .unwrap_or_else(|| super::Levels(vec![preset.threads]));
    let (threads, most) = (levels.lowest(), levels.highest());
    let tables = o.tables.unwrap_or(preset.tables);
    let rows = o.rows.unwrap_or(preset.rows);
    if threads == 0 || most > MAX_THREADS {
        return bad_input(format!("--threads must be 1..{MAX_THREADS}, got {most}"));
    }
    if tables == 0 || tables > MAX_THREADS {
        return bad_input(format!("--tables must be 1..{MAX_THREADS}, got {tables}"));
    }
    if rows == 0 || rows > i32::MAX as u64 {
        return bad_input(format!(
            "--rows must be 1..{} (sysbench's id and k are INTEGER), got {rows}",
            i32::MAX
        ));
    }
    if most > rows {
        return bad_input(format!(
            "--threads {most} is more threads than the {rows} rows per table"
        ));
    }
    let secs = |name: &str, v: Option<u64>, d: u64| -> anyhow::Result<u64> {
        let s = v.unwrap_or(d);
        if s == 0 {
            return bad_input(format!("--{name} must be at least 1"));
        }
        check_seconds(&format!("--{name}"), s, MAX_STEP_SECONDS)
    };
    for (name, v) in [
        ("--warmup-seconds", o.warmup_seconds),
        ("--postwrite-seconds", o.postwrite_seconds),
    ] {
        if let Some(v) = v {
            check_seconds(name, v, MAX_STEP_SECONDS)?;
        }
    }
    let read_seconds = secs("read-seconds", o.read_seconds, preset.read_seconds)?;
    let write_seconds = secs("write-seconds", o.write_seconds, preset.write_seconds)?;
    let warm_seconds = secs("warm-seconds", o.warm_seconds, preset.warm_seconds)?;
    let planned = select(o.run_order, o.tests.as_deref(), rows)?;
    if planned.is_empty() {
        return bad_input("--tests selects no microbenchmark");
    }
    Ok(SysbenchParams {
        preset: preset.name.clone(),
        run_order: o.run_order,
        threads,
        thread_levels: if levels.0.len() > 1 {
            levels.0
        } else {
            Vec::new()
        },
        tables,
        rows,
        read_seconds,
        write_seconds,
        warm_seconds,
        warmup_seconds: o.warmup_seconds.unwrap_or(preset.warmup_seconds),
        prepared: o.prepared,
        usepk: o.usepk,
        k_values: o.k_values,
        zipfian_exp: ZIPF_EXP,
        postwrite_seconds: o.postwrite_seconds.or(preset.postwrite_seconds),
        seed: o.seed.unwrap_or(DEFAULT_SEED),
        load: !o.skip_load,
        load_batch_rows: LOAD_BATCH,
        tests: planned.iter().map(|p| p.label()).collect(),
    })
}

/// The presets as `--list-presets` shows them; one sized from the memory cap shows its rows for
/// `cap`, or says "from cap".
pub fn listing(cap: Option<u64>) -> super::presets::Listing {
    use super::presets::{listed_rows, sysbench_all, Listed};
    let rows = sysbench_all()
        .into_iter()
        .map(|p| {
            let sized = p.sized_by_cap.is_some();
            let p = p.clone().for_cap(cap, None).unwrap_or(p);
            vec![
                Listed::Text(p.name.clone()),
                Listed::Text(p.threads.to_string()),
                Listed::Text(p.tables.to_string()),
                listed_rows(sized, cap, p.rows),
                Listed::Text(p.read_seconds.to_string()),
                Listed::Text(p.write_seconds.to_string()),
                Listed::Text(p.warmup_seconds.to_string()),
                Listed::Text(p.description.clone()),
            ]
        })
        .collect();
    super::presets::Listing {
        header: [
            "sysbench preset",
            "threads",
            "tables",
            "rows/table",
            "read s",
            "write s",
            "warm-up s",
            "description",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        note: "For --suite sysbench (docs/sysbench.md).\n".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::presets::sysbench_get;

    #[test]
    fn quick_runs_the_current_order() {
        let p = sysbench_params(&sysbench_get("quick").unwrap(), &Default::default()).unwrap();
        assert_eq!(p.tests.len(), 38);
        assert_eq!(p.tests[0], "point-query.warm_range=100");
        assert_eq!(p.step_names()[0], "load");
        assert_eq!((p.threads, p.tables, p.rows), (1, 1, 10_000));
    }

    /// A sweep runs each microbenchmark at every level before the next one, as the original's
    /// run.sh loops over thread counts inside each test; the tests whose count is the number of
    /// tables run once.
    #[test]
    fn a_thread_sweep_is_the_inner_loop() {
        let o = SysbenchOverrides {
            threads: Some(super::super::Levels(vec![1, 4])),
            tests: Some(vec![
                "point-query.warm".into(),
                "point-query".into(),
                "scan".into(),
            ]),
            ..Default::default()
        };
        let p = sysbench_params(&sysbench_get("quick").unwrap(), &o).unwrap();
        assert_eq!(p.threads, 1);
        assert_eq!(
            p.step_names(),
            [
                "load",
                "point-query.warm_range=100",
                "scan_range=100_threads=1",
                "scan_range=100_threads=4",
                "point-query_range=100_threads=1",
                "point-query_range=100_threads=4",
            ]
        );
        let threads: Vec<u64> = p.planned().iter().map(|t| p.threads_of(t)).collect();
        assert_eq!(threads, [p.tables, 1, 4, 1, 4]);
        assert_eq!(
            crate::results::split_level("scan_range=100_threads=4"),
            ("scan_range=100", Some(4))
        );
        // Over the rows per table, at its highest level.
        let o = SysbenchOverrides {
            threads: Some(super::super::Levels(vec![1, 20_000])),
            ..Default::default()
        };
        assert!(sysbench_params(&sysbench_get("quick").unwrap(), &o).is_err());
    }

    #[test]
    fn impossible_values_are_bad_input() {
        let q = sysbench_get("quick").unwrap();
        for (o, words) in [
            (
                SysbenchOverrides {
                    threads: Some(super::super::Levels(vec![20_000])),
                    ..Default::default()
                },
                "--threads",
            ),
            (
                SysbenchOverrides {
                    threads: Some(super::super::Levels(vec![50])),
                    rows: Some(10),
                    ..Default::default()
                },
                "more threads than the 10 rows",
            ),
            (
                SysbenchOverrides {
                    read_seconds: Some(0),
                    ..Default::default()
                },
                "--read-seconds",
            ),
            (
                SysbenchOverrides {
                    tests: Some(vec!["nope".into()]),
                    ..Default::default()
                },
                "unknown microbenchmark",
            ),
        ] {
            let e = sysbench_params(&q, &o).unwrap_err();
            assert!(crate::error::is_bad_input(&e), "{o:?}");
            assert!(e.to_string().contains(words), "{e}");
        }
    }
}
