//! `dbperf bisect`: flags into a bisect plan (the builds in order, the step and figure judged,
//! the round budget), the search's lines and the session's events onto the terminal, and the
//! answer. The search and its measurements are the bisect room's (docs/bisect.md).

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;

use super::render::Terminal;
use super::run::{absolute, interrupt_flag, run_request, targets};
use super::run_args::RunArgs;
use super::what::{what, What};
use super::{EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK};
use crate::bisect::search::Budget;
use crate::bisect::{Plan, Watch};
use crate::error::bad_input;
use crate::report::bisect::{thresholds, Figure};
use crate::results::campaign::Invocation;
use crate::session::{Events, Exit, Request};
use crate::spec::target::Target;

/// `dbperf bisect`'s options: `dbperf run`'s, and what the search judges and may spend.
#[derive(Args, Debug)]
pub struct BisectArgs {
    #[command(flatten)]
    pub run: RunArgs,

    /// With two `--target ENGINE@VERSION`: bisect over every release the build source has
    /// between them too (npm's for PostgreSQL, Debian's for MariaDB and MySQL), in one build
    /// family; builds not in the cache are fetched with --fetch.
    #[arg(long)]
    pub between: bool,

    /// The step whose figure is judged [default: the run's only step; required when it has
    /// several].
    #[arg(long, value_name = "STEP")]
    pub judge: Option<String>,

    /// The figure judged: the step's headline, or a metric of its hardware cost per operation
    /// (cpu_per_op, server_cpu_us_per_op, wkbpi, ...; docs/metrics.md).
    #[arg(long, value_name = "NAME", default_value = "headline")]
    pub metric: String,

    /// A difference is a change only when its whole 95% interval is beyond PCT percent either
    /// way: above 1 + PCT/100 or below its inverse (100: twice or half) [default: the report's
    /// verdict's, 0.95 and 1.05].
    #[arg(long, value_name = "PCT")]
    pub threshold: Option<f64>,

    /// Rounds a build is measured at most before a verdict on it is given up as undecided
    /// (--repeats is how many it gets first, default 3; two more are added at a time).
    #[arg(long, value_name = "N", default_value_t = 9,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_rounds: u32,
}

/// The options of `dbperf run` that a bisect decides itself or cannot take: its cells are its
/// own (no campaign, shard, Slurm or base), and each build is one row (no sweep).
const NOT_WITH_BISECT: &[&str] = &[
    "campaign",
    "shard",
    "slurm",
    "sbatch_arg",
    "base",
    "vary",
    "read_ahead_kb",
    "io_scheduler",
    "list_presets",
    "no_retry",
];

pub fn run(mut args: BisectArgs) -> anyhow::Result<i32> {
    let show = !args.run.no_progress && std::io::stderr().is_terminal();
    let (invocation, resume_dir) = start(&mut args)?;
    if let Some(flag) = NOT_WITH_BISECT.iter().find(|id| args.run.given.has(id)) {
        return bad_input(format!(
            "--{} does not go with dbperf bisect: its measurements are campaigns of its own, one row per build",
            flag.replace('_', "-")
        ));
    }
    let file = crate::spec::config_file::load(args.run.config_file.as_deref())?;
    let mut w = what(&args.run, &file)?;
    if w.suites.len() != 1 {
        return bad_input("a bisect judges one suite at one level: give --clients a single value");
    }
    w.target_specs = target_specs(&args)?;
    let targets = targets(&args.run, &file, &w)?;
    check_one_engine(&targets)?;
    let first = args.run.repeats.unwrap_or(3);
    if args.max_rounds < first {
        return bad_input(format!(
            "--max-rounds {} is fewer than the {first} rounds a build is measured first (--repeats)",
            args.max_rounds
        ));
    }
    if let Some(p) = args.threshold.filter(|p| !(*p > 0.0 && *p <= 1000.0)) {
        return bad_input(format!(
            "--threshold {p} is not a percentage above 0 and at most 1000"
        ));
    }
    let out = match (&resume_dir, &args.run.out) {
        (Some(d), _) => d.clone(),
        (None, Some(p)) => absolute(p)?,
        (None, None) => absolute(&default_out())?,
    };
    let plan = Plan {
        step: judged_step(&args, &w)?,
        figure: Figure::parse(&args.metric)?,
        thresholds: thresholds(args.threshold),
        budget: Budget {
            first,
            more: 2,
            most: args.max_rounds,
        },
        targets,
        out: out.clone(),
        resume: resume_dir.is_some(),
        invocation: invocation.clone(),
        interrupt: interrupt_flag(),
    };
    let make =
        |t: Vec<Target>, rounds: u32, dir: PathBuf, resume: bool| -> anyhow::Result<Request> {
            let w = What {
                rounds,
                ..what(&args.run, &file)?
            };
            let req = run_request(&args.run, &w, t, dir.clone())?;
            Ok(Request {
                resume,
                // A cell that failed is a build that is skipped, not one to run again.
                retry_failed: false,
                // A batch is continued through its bisect, which knows what it is for.
                invocation: Invocation {
                    args: vec![
                        "bisect".into(),
                        "--resume".into(),
                        out.display().to_string(),
                    ],
                    cwd: invocation.cwd.clone(),
                },
                interrupt: plan.interrupt.clone(),
                ..req
            })
        };
    let mut watch = Shown {
        term: Terminal::new(show),
    };
    let done = crate::bisect::run(&plan, &make, &mut watch)?;
    let f = &done.file;
    out!(
        "bisect: {}: {}",
        f.outcome.map_or("stopped", |o| o.word()),
        f.sentence
    );
    out!("Results: {}", out.display());
    Ok(match done.exit {
        Exit::Ok => EXIT_OK,
        Exit::Failed => EXIT_FAILED,
        Exit::Interrupted => EXIT_INTERRUPTED,
    })
}

struct Shown {
    term: Terminal,
}

impl Watch for Shown {
    fn events(&mut self) -> &mut dyn Events {
        &mut self.term
    }
    fn line(&mut self, line: &str) {
        say!("{line}");
    }
}

/// The bisect's invocation, and on `--resume DIR` its own arguments read back from DIR.
fn start(args: &mut BisectArgs) -> anyhow::Result<(Invocation, Option<PathBuf>)> {
    let Some(dir) = args.run.resume.clone() else {
        let inv = Invocation {
            args: args.run.argv.clone(),
            cwd: std::env::current_dir()
                .map(|d| d.display().to_string())
                .unwrap_or_default(),
        };
        return Ok((inv, None));
    };
    if let Some(extra) = args.run.given.first_other_than(&["resume", "no_progress"]) {
        return bad_input(format!(
            "{extra} cannot go with --resume: a resumed bisect keeps the arguments it was started \
             with (only --no-progress may be added)"
        ));
    }
    let dir = absolute(&dir)?;
    let f = crate::results::bisect::read_own_bisect(&dir)?;
    if std::env::set_current_dir(&f.invocation.cwd).is_err() {
        return bad_input(format!(
            "the bisect in {} was started in {}, which no longer exists",
            dir.display(),
            f.invocation.cwd
        ));
    }
    let argv = std::iter::once("dbperf".to_string()).chain(f.invocation.args.iter().cloned());
    match super::parse(argv) {
        Ok(super::Cli {
            command: super::Command::Bisect(b),
        }) if b.run.resume.is_none() => {
            *args = *b;
            Ok((f.invocation, Some(dir)))
        }
        _ => bad_input(format!(
            "{} records arguments this dbperf cannot read: {}",
            dir.join(crate::results::bisect::BISECT_FILE).display(),
            f.invocation.args.join(" ")
        )),
    }
}

fn default_out() -> PathBuf {
    let fmt = time::macros::format_description!("[year][month][day]-[hour][minute][second]");
    let stamp = time::OffsetDateTime::now_utc()
        .format(&fmt)
        .unwrap_or_default();
    PathBuf::from("results").join(format!("{stamp}-bisect"))
}

/// The builds in order: the targets given, or with --between every release between the two.
fn target_specs(a: &BisectArgs) -> anyhow::Result<Vec<String>> {
    let specs = &a.run.targets;
    if a.between {
        return super::bisect_between::expand(&a.run, specs);
    }
    if specs.len() < 2 {
        return bad_input(format!(
            "a bisect needs two targets at least, in order (--target A --target B ...), or two \
             with --between; {} given",
            specs.len()
        ));
    }
    Ok(specs.clone())
}

/// One engine (and storage engine) over the whole list: a bisect looks for the build that
/// changed, not for the difference between two DBMSs.
fn check_one_engine(targets: &[Target]) -> anyhow::Result<()> {
    let first = &targets[0];
    match targets
        .iter()
        .find(|t| t.engine != first.engine || t.rocksdb() != first.rocksdb())
    {
        Some(t) => bad_input(format!(
            "a bisect is over builds of one engine, and {} is not the engine of {}",
            t.name, first.name
        )),
        None => Ok(()),
    }
}

fn judged_step(a: &BisectArgs, w: &What) -> anyhow::Result<String> {
    let steps = w.suites[0].step_names();
    match &a.judge {
        Some(s) if steps.contains(s) => Ok(s.clone()),
        Some(s) => bad_input(format!(
            "--judge {s} is not a step of this run ({})",
            steps.join(", ")
        )),
        None if steps.len() == 1 => Ok(steps[0].clone()),
        None => bad_input(format!(
            "the run has steps {}: name the one whose figure the bisect judges with --judge STEP",
            steps.join(", ")
        )),
    }
}
