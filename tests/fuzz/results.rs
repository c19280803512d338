//! The result-file readers (src/results/, src/untrusted.rs): `read_run`, `read_step`,
//! `read_checked`, the campaign journal, the latency histograms step files carry, the history's
//! import of a whole result directory, and the per-second series
//! (`results::series::read_series`) with the chart drawn from it. Result directories travel
//! between machines and people, so any of their files may be damaged or made up; the journal is
//! read back by `--resume`, so a name in it must never stand for a path outside the run.

use std::io::Write;
use std::path::Path;

use dbperf::error::is_bad_input;
use dbperf::results::{self, campaign};
use proptest::prelude::*;
use serde_json::Value;

use super::{config, damage, word, Damage, Watch};

const RUN: &str = include_str!("../golden/schema1/ibench/sqlite.wal-normal/run.json");
const STEP: &str = include_str!("../golden/schema1/ibench/sqlite.wal-normal/steps/qr100.json");
const SYSBENCH_STEP: &str =
    include_str!("../golden/schema1/sysbench/sqlite.wal-normal/steps/load.json");
const JOURNAL: &str = include_str!("../golden/schema1/ibench/campaign.json");
const SERIES: &str =
    include_str!("../golden/schema1/ibench/sqlite.wal-normal/steps/l.i0.series.csv");

/// Well above what parsing a few KiB of JSON needs, far below what a length field in a
/// histogram header could ask for.
const ALLOCATION_BOUND: usize = 16 << 20;

/// What replaces a node of a valid file.
#[derive(Debug, Clone)]
pub enum Edit {
    Null,
    Bool(bool),
    Int(i64),
    Big(u64),
    Float(f64),
    Text(String),
    /// A name that would climb out of a directory, or one that is fine.
    Path(&'static str),
    Array,
    Object,
    Remove,
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        Just(Edit::Null),
        any::<bool>().prop_map(Edit::Bool),
        any::<i64>().prop_map(Edit::Int),
        prop::sample::select(vec![u64::MAX, 1 << 53, 99, 2]).prop_map(Edit::Big),
        prop::sample::select(vec![-1.0, 0.0, 1e308, -1e308, 0.5, 1e-300]).prop_map(Edit::Float),
        word().prop_map(|w| Edit::Text(String::from_utf8_lossy(&w).into_owned())),
        prop::sample::select(PATHS.to_vec()).prop_map(Edit::Path),
        Just(Edit::Array),
        Just(Edit::Object),
        Just(Edit::Remove),
    ]
}

/// Names a made-up file could give for a directory or a file.
const PATHS: [&str; 12] = [
    "..",
    "../x",
    "../../../../etc/passwd",
    "/etc",
    "/dev/zero",
    "a/b",
    "t/r1",
    "t/r",
    "t/r1/x",
    ".attempts",
    "x\u{0}y",
    "null.instant",
];

/// The number of nodes under (and including) `v`.
fn size(v: &Value) -> usize {
    1 + match v {
        Value::Array(a) => a.iter().map(size).sum(),
        Value::Object(o) => o.values().map(size).sum(),
        _ => 0,
    }
}

/// Applies `e` to the `i`-th node in depth-first order (the root is 0).
fn apply(v: &mut Value, mut i: usize, e: &Edit) {
    fn walk(v: &mut Value, i: &mut usize, e: &Edit) -> bool {
        let children: Vec<&mut Value> = match v {
            Value::Array(a) => a.iter_mut().collect(),
            Value::Object(o) => o.values_mut().collect(),
            _ => Vec::new(),
        };
        for c in children {
            if *i == 0 {
                *c = match e {
                    Edit::Null | Edit::Remove => Value::Null,
                    Edit::Bool(b) => Value::Bool(*b),
                    Edit::Int(n) => (*n).into(),
                    Edit::Big(n) => (*n).into(),
                    Edit::Float(f) => {
                        serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number)
                    }
                    Edit::Text(s) => Value::String(s.clone()),
                    Edit::Path(s) => Value::String(s.to_string()),
                    Edit::Array => Value::Array(Vec::new()),
                    Edit::Object => Value::Object(Default::default()),
                };
                return true;
            }
            *i -= 1;
            if walk(c, i, e) {
                return true;
            }
        }
        false
    }
    if i == 0 {
        return;
    }
    i -= 1;
    walk(v, &mut i, e);
    if matches!(e, Edit::Remove) {
        prune(v);
    }
}

/// Drops the object members an `Edit::Remove` set to null, and with them any that were null
/// already: a missing field is a different input from a null one, and both are worth trying.
fn prune(v: &mut Value) {
    match v {
        Value::Object(o) => {
            o.retain(|_, c| !c.is_null());
            o.values_mut().for_each(prune);
        }
        Value::Array(a) => a.iter_mut().for_each(prune),
        _ => {}
    }
}

#[derive(Debug, Clone)]
pub enum Input {
    Bytes(Vec<u8>),
    Edited {
        which: usize,
        edits: Vec<(prop::sample::Index, Edit)>,
        damage: Damage,
    },
}

const VALID: [&str; 4] = [RUN, STEP, SYSBENCH_STEP, JOURNAL];

impl Input {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Input::Bytes(b) => b.clone(),
            Input::Edited {
                which,
                edits,
                damage,
            } => {
                let mut v: Value = serde_json::from_str(VALID[*which]).unwrap();
                for (at, e) in edits {
                    let n = size(&v);
                    apply(&mut v, at.index(n), e);
                }
                damage.apply(serde_json::to_vec_pretty(&v).unwrap())
            }
        }
    }
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..128).prop_map(Input::Bytes),
        1 => "\\{\"schema\": ?[0-9]{1,3}(, \"[a-z_]{1,8}\": ?(null|[0-9]{1,5}|\"[a-z]{0,4}\"|\\[\\]|\\{\\}))*\\}"
            .prop_map(|s| Input::Bytes(s.into_bytes())),
        6 => (0..VALID.len(), prop::collection::vec((any::<prop::sample::Index>(), edit()), 0..4), damage())
            .prop_map(|(which, edits, damage)| Input::Edited { which, edits, damage }),
    ]
}

/// A reader's error must be bad input naming the file.
fn check<T>(r: anyhow::Result<T>, file: &Path) -> Result<Option<T>, TestCaseError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) => {
            let m = format!("{e:#}");
            prop_assert!(is_bad_input(&e), "not marked bad input: {m}");
            prop_assert!(
                m.contains(&file.display().to_string()),
                "names no file: {m}"
            );
            Ok(None)
        }
    }
}

/// Writes `bytes` as every kind of result file and reads each back.
pub fn exercise(bytes: &[u8]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("steps")).unwrap();
    for name in ["run.json", "steps/s.json", campaign::JOURNAL] {
        std::fs::File::create(d.join(name))
            .unwrap()
            .write_all(bytes)
            .unwrap();
    }
    let watch = Watch::start();
    check(
        results::read_checked(&d.join("run.json")),
        &d.join("run.json"),
    )?;
    check(results::read_run(d), &d.join("run.json"))?;
    if let Some(step) = check(results::read_step(d, "s"), &d.join("steps/s.json"))? {
        for op in step.ops.values() {
            let _ = results::decode_histogram(&op.hdr_latency);
        }
    }
    if let Some(j) = check(campaign::read_journal(d), &d.join(campaign::JOURNAL))? {
        // Whatever the journal says, its names stay below the run directory.
        for c in &j.cells {
            for name in [&c.id, &c.target] {
                let p = Path::new(name);
                prop_assert!(
                    !p.is_absolute()
                        && p.components()
                            .all(|x| matches!(x, std::path::Component::Normal(_)))
                        && !name.contains('\0'),
                    "the journal names {name:?}"
                );
            }
        }
    }
    // The history's import of the directory: run.json, every step it plans, their series.
    if let Err(e) = dbperf::history::import::read(d) {
        prop_assert!(is_bad_input(&e), "not marked bad input: {e:#}");
        prop_assert!(!format!("{e}").contains('\n'), "not one sentence: {e}");
    }
    watch.no_panic()?;
    watch.allocated_at_most(ALLOCATION_BOUND)?;
    Ok(())
}

/// A series file: arbitrary bytes, or dbperf's own damaged (numbers made extreme, lines cut,
/// columns dropped).
#[derive(Debug, Clone)]
pub enum SeriesInput {
    Bytes(Vec<u8>),
    Edited {
        cells: Vec<(prop::sample::Index, &'static str)>,
        damage: Damage,
    },
}

const EXTREMES: [&str; 10] = [
    "1e308",
    "-1e308",
    "inf",
    "NaN",
    "-1",
    "0",
    "",
    "18446744073709551615",
    "1e-320",
    "x,y,z",
];

impl SeriesInput {
    fn bytes(&self) -> Vec<u8> {
        match self {
            SeriesInput::Bytes(b) => b.clone(),
            SeriesInput::Edited { cells, damage } => {
                let mut rows: Vec<Vec<String>> = SERIES
                    .lines()
                    .map(|l| l.split(',').map(String::from).collect())
                    .collect();
                let n: usize = rows.iter().map(Vec::len).sum();
                for (at, v) in cells {
                    let mut i = at.index(n);
                    for r in rows.iter_mut() {
                        if i < r.len() {
                            r[i] = v.to_string();
                            break;
                        }
                        i -= r.len();
                    }
                }
                let text: String = rows.iter().map(|r| r.join(",") + "\n").collect();
                damage.apply(text.into_bytes())
            }
        }
    }
}

fn series_input() -> impl Strategy<Value = SeriesInput> {
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..256).prop_map(SeriesInput::Bytes),
        4 => (
            prop::collection::vec(
                (any::<prop::sample::Index>(), prop::sample::select(EXTREMES.to_vec())),
                0..8
            ),
            damage(),
        )
            .prop_map(|(cells, damage)| SeriesInput::Edited { cells, damage }),
    ]
}

/// Reads `bytes` as a series file and draws what it holds.
pub fn exercise_series(bytes: &[u8]) -> Result<(), TestCaseError> {
    use dbperf::report::chart::{self, Agg, Line, LineChart, XAxis};
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.series.csv");
    std::fs::write(&p, bytes).unwrap();
    let watch = Watch::start();
    if let Some(s) = check(dbperf::results::series::read_series(&p), &p)? {
        let targets = [dbperf::report::model::TargetLabel {
            name: "t".into(),
            dir: "d".into(),
            suite: "ibench".into(),
            engine: "sqlite".into(),
            version: "3".into(),
            config_name: "c".into(),
            status: "ok".into(),
            colour: "#000".into(),
            dash: String::new(),
        }];
        for k in &s.kinds {
            for (y, agg, log_y) in [(&k.rate, Agg::Mean, false), (&k.max_ms, Agg::Max, true)] {
                let svg = chart::line_svg(&LineChart {
                    title: k.kind.clone(),
                    x_axis: XAxis::Seconds,
                    y_label: "y".into(),
                    log_y,
                    lines: vec![Line {
                        target: 0,
                        points: chart::reduce(&s.t, y, agg, chart::MAX_POINTS),
                    }],
                    reference: s.target_rows_per_s.map(|r| (r, "target".into())),
                    markers: Vec::new(),
                    targets: &targets,
                });
                prop_assert!(svg.len() < 1 << 20, "a chart of {} bytes", svg.len());
            }
        }
    }
    watch.no_panic()?;
    watch.allocated_at_most(ALLOCATION_BOUND)?;
    Ok(())
}

/// A histogram as step files carry it: HdrHistogram V2 (optionally DEFLATE-compressed), base64.
/// The header's fields are varied; the counts are arbitrary bytes.
fn histogram() -> impl Strategy<Value = String> {
    (
        prop_oneof![3 => Just(0x1c84_9313u32), 1 => any::<u32>()],
        prop_oneof![2 => 0u32..64, 1 => any::<u32>()],
        prop_oneof![3 => Just(0u32), 1 => any::<u32>()],
        0u32..8,
        prop_oneof![Just(1u64), any::<u64>()],
        prop_oneof![Just(3_600_000_000_000u64), any::<u64>()],
        prop::collection::vec(any::<u8>(), 0..48),
        any::<bool>(),
        damage(),
    )
        .prop_map(
            |(cookie, len, offset, digits, low, high, counts, deflate, damage)| {
                use base64::Engine;
                let mut v2 = Vec::new();
                v2.extend_from_slice(&cookie.to_be_bytes());
                v2.extend_from_slice(&len.to_be_bytes());
                v2.extend_from_slice(&offset.to_be_bytes());
                v2.extend_from_slice(&digits.to_be_bytes());
                v2.extend_from_slice(&low.to_be_bytes());
                v2.extend_from_slice(&high.to_be_bytes());
                v2.extend_from_slice(&1.0f64.to_be_bytes());
                v2.extend_from_slice(&counts);
                let bytes = if deflate {
                    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), Default::default());
                    z.write_all(&v2).unwrap();
                    let z = z.finish().unwrap();
                    let mut out = 0x1c84_9314u32.to_be_bytes().to_vec();
                    out.extend_from_slice(&(z.len() as u32).to_be_bytes());
                    out.extend(z);
                    out
                } else {
                    v2
                };
                base64::engine::general_purpose::STANDARD.encode(damage.apply(bytes))
            },
        )
}

proptest! {
    #![proptest_config(config(3000))]

    #[test]
    fn result_files_are_read_or_refused_with_a_sentence(i in input()) {
        exercise(&i.bytes())?;
    }

    #[test]
    fn series_files_are_read_or_refused_and_draw_bounded_charts(i in series_input()) {
        exercise_series(&i.bytes())?;
    }

    #[test]
    fn histograms_are_decoded_or_refused(h in histogram()) {
        let watch = Watch::start();
        let _ = results::decode_histogram(&h);
        watch.no_panic()?;
        watch.allocated_at_most(ALLOCATION_BOUND)?;
    }
}

/// The harness itself: the valid files read as they are.
#[test]
fn valid_files_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("steps")).unwrap();
    std::fs::write(d.join("run.json"), RUN).unwrap();
    std::fs::write(d.join("steps/s.json"), STEP).unwrap();
    std::fs::write(d.join(campaign::JOURNAL), JOURNAL).unwrap();
    results::read_run(d).unwrap();
    let step = results::read_step(d, "s").unwrap();
    for op in step.ops.values() {
        results::decode_histogram(&op.hdr_latency).unwrap();
    }
    campaign::read_journal(d).unwrap();
    let p = d.join("steps/s.series.csv");
    std::fs::write(&p, SERIES).unwrap();
    let s = dbperf::results::series::read_series(&p).unwrap();
    assert_eq!(s.t.len(), SERIES.lines().count() - 1);
    exercise_series(SERIES.as_bytes()).unwrap();
}
