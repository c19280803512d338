//! `dbperf bisect`: which of an ordered list of builds changed a step's figure. The search
//! (`search`) is a pure function of what is measured; this room runs what it asks for, each
//! measurement an ordinary campaign (`session::run`) in a batch directory of the bisect's own
//! (`m01`, `m02`, ...), judges builds with the report's noise-aware verdict (`report::bisect`),
//! and records the path in bisect.json. A resume replays the search over the batches already
//! there and measures only what they lack (docs/bisect.md).

pub mod search;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::bad_input;
use crate::report::bisect::{self as judged, Figure, Judgement, Rounds};
use crate::report::rules::Thresholds;
use crate::results::bisect::{
    self as record, Batch, BisectFile, Judged, Measured, Outcome, Pair, BISECT_FILE,
};
use crate::results::campaign::{self, CellState, Invocation};
use crate::session::{self, Events, Exit, Request};
use crate::spec::target::Target;
use search::{Budget, Ending, Known, Next, Why};

/// Everything a bisect needs, validated by the CLI.
pub struct Plan {
    /// The builds in order, resolved.
    pub targets: Vec<Target>,
    pub step: String,
    pub figure: Figure,
    pub thresholds: Thresholds,
    pub budget: Budget,
    /// The bisect directory (absolute).
    pub out: PathBuf,
    /// Continue the bisect in `out`.
    pub resume: bool,
    pub invocation: Invocation,
    pub interrupt: Arc<AtomicBool>,
}

/// Makes the campaign request of one batch: these targets, so many rounds, into that directory,
/// continued when it holds a journal already. The CLI's: it knows the run flags.
pub type MakeRequest<'a> = dyn Fn(Vec<Target>, u32, PathBuf, bool) -> anyhow::Result<Request> + 'a;

/// What the person watching is told, beside the session's events.
pub trait Watch {
    fn events(&mut self) -> &mut dyn Events;
    fn line(&mut self, line: &str);
}

/// How the bisect ended.
pub struct Finished {
    pub file: BisectFile,
    pub exit: Exit,
    /// The culprit pair's comparison, written by the report (`<out>/pair`), when there is one.
    pub pair_dir: Option<PathBuf>,
}

/// What is measured so far, over every batch.
struct State {
    rounds: Vec<Rounds>,
    failed: Vec<bool>,
    /// Per build, the batches that measured it (indexes into `batches`).
    batches: Vec<Batch>,
    measured_order: Vec<usize>,
    /// Verdicts asked for, in order, keyed by the pair and the rounds each side had.
    path: Vec<((usize, usize, usize, usize), Judgement)>,
}

/// Runs the bisect to its end (or to an interruption).
pub fn run(plan: &Plan, make: &MakeRequest, watch: &mut dyn Watch) -> anyhow::Result<Finished> {
    let mut file = start(plan)?;
    let n = plan.targets.len();
    let mut st = State {
        rounds: vec![Rounds::default(); n],
        failed: vec![false; n],
        batches: Vec::new(),
        measured_order: Vec::new(),
        path: Vec::new(),
    };
    loop {
        let next = next_move(plan, &mut st);
        let (builds, rounds, why) = match next {
            Next::Done(ending) => return Ok(finish(plan, &mut file, &st, ending, watch)),
            Next::Measure {
                builds,
                rounds,
                why,
            } => (builds, rounds, why),
        };
        let dir = format!("m{:02}", st.batches.len() + 1);
        let names: Vec<String> = builds
            .iter()
            .map(|&b| plan.targets[b].name.clone())
            .collect();
        watch.line(&format!(
            "bisect: {dir}: {} ({rounds} round{}; {})",
            names.join(", "),
            if rounds == 1 { "" } else { "s" },
            why_words(why)
        ));
        let exit = measure_batch(plan, make, &builds, rounds, &plan.out.join(&dir), watch)?;
        st.batches.push(Batch {
            dir: dir.clone(),
            targets: names,
            rounds,
            why: why_words(why).to_string(),
        });
        if exit == Exit::Interrupted || plan.interrupt.load(Ordering::SeqCst) {
            save(plan, &mut file, &st);
            return Ok(Finished {
                file,
                exit: Exit::Interrupted,
                pair_dir: None,
            });
        }
        let read = judged::read_batch(&plan.out.join(&dir), &plan.step, plan.figure)?;
        for &b in &builds {
            if !st.measured_order.contains(&b) {
                st.measured_order.push(b);
            }
            match read
                .get(&plan.targets[b].name)
                .filter(|r| !r.values.is_empty())
            {
                Some(r) => st.rounds[b].add(r.clone()),
                None => {
                    watch.line(&format!(
                        "bisect: {} did not run step {}: skipped",
                        plan.targets[b].name, plan.step
                    ));
                    st.failed[b] = true;
                }
            }
        }
        save(plan, &mut file, &st);
    }
}

fn why_words(w: Why) -> &'static str {
    match w {
        Why::Ends => "both ends",
        Why::Middle => "a middle with the two it is between",
        Why::MoreRounds => "more rounds to decide a verdict",
    }
}

/// The search's next move over what `st` holds, every verdict it asks for recorded.
fn next_move(plan: &Plan, st: &mut State) -> Next {
    let counts: Vec<u32> = st.rounds.iter().map(|r| r.values.len() as u32).collect();
    let asked = std::cell::RefCell::new(Vec::new());
    let compare = |a: usize, b: usize| {
        let key = (a, b, counts[a] as usize, counts[b] as usize);
        let known = st
            .path
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, j)| j.clone());
        let j = known.unwrap_or_else(|| {
            let j = judged::judge(
                &st.rounds[a],
                &st.rounds[b],
                plan.figure,
                &plan.step,
                plan.thresholds,
            );
            asked.borrow_mut().push((key, j.clone()));
            j
        });
        search::Comparison {
            verdict: j.verdict,
            ratio: j.ratio,
        }
    };
    let known = Known {
        rounds: &counts,
        failed: &st.failed,
        compare: &compare,
    };
    let next = search::next(plan.targets.len(), &known, plan.budget);
    for (k, j) in asked.into_inner() {
        if !st.path.iter().any(|(x, _)| *x == k) {
            st.path.push((k, j));
        }
    }
    next
}

/// The bisect file of a new bisect (refusing a directory that holds one), or of the one
/// continued (refusing one of other builds).
fn start(plan: &Plan) -> anyhow::Result<BisectFile> {
    let names: Vec<String> = plan.targets.iter().map(|t| t.name.clone()).collect();
    let path = plan.out.join(BISECT_FILE);
    if plan.resume {
        let f = record::read_own_bisect(&plan.out)?;
        if f.targets != names || f.step != plan.step || f.metric != plan.figure.key() {
            return bad_input(format!(
                "{} records a bisect of other builds or another figure than its arguments now \
                 give (dbperf.toml changed?)",
                path.display()
            ));
        }
        return Ok(f);
    }
    if path.exists() {
        return bad_input(format!(
            "{} holds an earlier bisect; continue it with --resume {} or choose another --out",
            plan.out.display(),
            plan.out.display()
        ));
    }
    if let Err(e) = crate::safe_fs::make_dir_all(&plan.out, crate::safe_fs::Also::Nobody) {
        return bad_input(format!(
            "cannot create the bisect directory {}: {e:#}",
            plan.out.display()
        ));
    }
    let f = BisectFile {
        schema: crate::results::SCHEMA,
        tool: crate::results::Tool {
            name: "dbperf".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            git_revision: crate::git_revision().into(),
        },
        created_at: now(),
        invocation: plan.invocation.clone(),
        targets: names,
        step: plan.step.clone(),
        metric: plan.figure.key().to_string(),
        low: plan.thresholds.low,
        high: plan.thresholds.high,
        first_rounds: plan.budget.first,
        max_rounds: plan.budget.most,
        outcome: None,
        culprit: None,
        range: None,
        second: None,
        sentence: String::new(),
        measured: Vec::new(),
        batches: Vec::new(),
        path: Vec::new(),
    };
    record::write_bisect(&plan.out, &f)
        .or_else(|e| bad_input(format!("cannot write {}: {e}", path.display())))?;
    Ok(f)
}

fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// One batch: run (or continue) its campaign, unless its journal says it is finished.
fn measure_batch(
    plan: &Plan,
    make: &MakeRequest,
    builds: &[usize],
    rounds: u32,
    dir: &Path,
    watch: &mut dyn Watch,
) -> anyhow::Result<Exit> {
    let targets: Vec<Target> = builds.iter().map(|&b| plan.targets[b].clone()).collect();
    let journal = dir.join(campaign::JOURNAL);
    let resume = journal.exists();
    if resume {
        let j = campaign::read_own_journal(dir)?;
        let mut had: Vec<&str> = j.cells.iter().map(|c| c.target.as_str()).collect();
        had.sort_unstable();
        had.dedup();
        let mut want: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
        want.sort_unstable();
        if had != want || j.rounds != rounds {
            return bad_input(format!(
                "{} holds a measurement of other builds or rounds than the search now asks for \
                 (the bisect's arguments or dbperf.toml changed): start it afresh in another --out",
                dir.display()
            ));
        }
        let finished = |s: CellState| matches!(s, CellState::Done | CellState::Failed);
        if j.cells.iter().all(|c| finished(c.state)) {
            return Ok(Exit::Ok);
        }
    }
    let req = make(targets, rounds, dir.to_path_buf(), resume)?;
    let outcome = session::run(req, watch.events())?;
    Ok(outcome.exit)
}

/// bisect.json as it stands: the builds measured, the batches and the verdicts so far.
fn save(plan: &Plan, file: &mut BisectFile, st: &State) {
    file.measured = st
        .measured_order
        .iter()
        .map(|&b| {
            let r = &st.rounds[b];
            let fold = |f: fn(f64, f64) -> f64| r.values.iter().copied().reduce(f);
            Measured {
                target: plan.targets[b].name.clone(),
                rounds: r.values.len() as u32,
                value: r.median(),
                min: fold(f64::min),
                max: fold(f64::max),
                failed: st.failed[b],
            }
        })
        .collect();
    file.batches = st.batches.clone();
    file.path = st
        .path
        .iter()
        .map(|((a, b, _, _), j)| Judged {
            before: plan.targets[*a].name.clone(),
            after: plan.targets[*b].name.clone(),
            ratio: Some(j.ratio).filter(|r| r.is_finite()),
            lo: j.interval.map(|i| i.lo),
            hi: j.interval.map(|i| i.hi),
            verdict: j.verdict,
            note: j.note.clone(),
        })
        .collect();
    // A record that could not be written is said at the end; the measurements are kept.
    let _ = record::write_bisect(&plan.out, file);
}

/// The ending recorded, the culprit pair's comparison and the pages written.
fn finish(
    plan: &Plan,
    file: &mut BisectFile,
    st: &State,
    ending: Ending,
    watch: &mut dyn Watch,
) -> Finished {
    let name = |i: usize| plan.targets[i].name.clone();
    let pair = |a: usize, b: usize| Pair {
        before: name(a),
        after: name(b),
    };
    let second_words = |s: Option<(usize, usize)>| match s {
        Some((a, b)) => format!(
            " A second change was found on the way, between {} and {}, and not bisected.",
            name(a),
            name(b)
        ),
        None => String::new(),
    };
    let (first, last) = (name(0), name(plan.targets.len() - 1));
    let mut exit = Exit::Ok;
    let (outcome, sentence) = match ending {
        Ending::NoChange { unsure } => {
            let why = if unsure {
                format!(", still unsure after {} rounds a side", plan.budget.most)
            } else {
                String::new()
            };
            (
                Outcome::NoChange,
                format!("no change between {first} and {last} to bisect{why}."),
            )
        }
        Ending::Culprit {
            before,
            after,
            second,
        } => {
            file.culprit = Some(pair(before, after));
            file.second = second.map(|(a, b)| pair(a, b));
            let skipped = if after - before > 1 {
                " (the builds between them failed and were skipped)"
            } else {
                ""
            };
            let ratio = judged_ratio(st, before, after);
            (
                Outcome::Culprit,
                format!(
                    "changed between {} and {}{skipped}: {ratio}.{}",
                    name(before),
                    name(after),
                    second_words(second)
                ),
            )
        }
        Ending::Gradual { lo, hi, second } => {
            file.range = Some(pair(lo, hi));
            file.second = second.map(|(a, b)| pair(a, b));
            (
                Outcome::Gradual,
                format!(
                    "the change between {} and {} is gradual: each half of that range is the same as its ends, so no one build made it.{}",
                    name(lo),
                    name(hi),
                    second_words(second)
                ),
            )
        }
        Ending::Undecided {
            lo,
            hi,
            open,
            second,
        } => {
            file.range = Some(pair(open.0, open.1));
            file.second = second.map(|(a, b)| pair(a, b));
            (
                Outcome::Undecided,
                format!(
                    "could not decide within {} rounds a build: {} against {} is left open (the change is between {} and {}).{}",
                    plan.budget.most,
                    name(open.0),
                    name(open.1),
                    name(lo),
                    name(hi),
                    second_words(second)
                ),
            )
        }
        Ending::EndFailed { build } => {
            exit = Exit::Failed;
            (
                Outcome::Undecided,
                format!(
                    "{} failed to run step {}: an end of the list must be measured to bisect.",
                    name(build),
                    plan.step
                ),
            )
        }
    };
    file.outcome = Some(outcome);
    file.sentence = sentence;
    save(plan, file, st);
    let pair_dir = file
        .culprit
        .clone()
        .and_then(|p| pair_report(plan, st, &p, watch));
    let rel = pair_dir.as_ref().map(|_| "pair");
    write_pages(plan, file, rel, watch);
    Finished {
        file: file.clone(),
        exit,
        pair_dir,
    }
}

/// "0.08× (95% interval 0.07–0.09)" for the last verdict between two builds.
fn judged_ratio(st: &State, a: usize, b: usize) -> String {
    match st
        .path
        .iter()
        .rev()
        .find(|((x, y, _, _), _)| (*x, *y) == (a, b))
    {
        Some((_, j)) => format!("{:.3}× of the figure, {}", j.ratio, j.note),
        None => "no verdict recorded".into(),
    }
}

/// The report of the culprit pair, from the last batch that measured both together.
fn pair_report(plan: &Plan, st: &State, p: &Pair, watch: &mut dyn Watch) -> Option<PathBuf> {
    let batch = st
        .batches
        .iter()
        .rev()
        .find(|b| b.targets.contains(&p.before) && b.targets.contains(&p.after))?;
    let dir = plan.out.join(&batch.dir);
    let dirs = vec![dir.join(&p.before), dir.join(&p.after)];
    let out = plan.out.join("pair");
    match crate::report::after_run(&out, &dirs, Some(&p.before)) {
        Ok(_) => Some(out),
        Err(e) => {
            watch.line(&format!(
                "bisect: the culprit pair's report was not written: {e:#}"
            ));
            None
        }
    }
}

fn write_pages(plan: &Plan, file: &BisectFile, pair: Option<&str>, watch: &mut dyn Watch) {
    let pages: BTreeMap<&str, String> = BTreeMap::from([
        ("report.md", judged::markdown(file, pair)),
        ("report.html", judged::html(file, pair)),
    ]);
    for (name, text) in pages {
        let path = plan.out.join(name);
        if let Err(e) = crate::results::write_atomic(&path, text.as_bytes()) {
            watch.line(&format!("NOT WRITTEN: {}: {e}", path.display()));
        }
    }
}
