//! What a `dbperf run` is: its suites (each refusing the others' flags), targets, rounds and
//! base, from its flags or from a campaign of dbperf.toml.

use std::sync::Arc;

use super::given::WORKLOAD;
use super::run_args::RunArgs;
use crate::error::bad_input;
use crate::session::{self, IbenchSuite, PgbenchSuite, SysbenchSuite, TpccSuite};
use crate::spec::{self, presets};
use crate::suites::Suite;

/// A flag of another suite than `chosen` (`--threads` with the Insert Benchmark) makes no
/// sense: said in one sentence naming the suite it belongs to, rather than ignored. Walks the
/// registry, so a new suite's flags are refused with the others by their clap group.
pub(super) fn refuse_other_suites_flags(a: &RunArgs, chosen: Suite) -> anyhow::Result<()> {
    for owner in Suite::all().filter(|s| *s != chosen) {
        let Some(flag) = a.given.first_in(owner.name()) else {
            continue;
        };
        // Some have a counterpart in the chosen suite a person may have meant.
        let hint = match chosen.entry().counterparts.iter().find(|(f, _)| *f == flag) {
            Some((_, c)) => format!(" ({} has {c})", chosen.entry().product),
            None => String::new(),
        };
        let default = if a.given.has("suite") {
            ""
        } else {
            " (the default suite)"
        };
        return bad_input(format!(
            "{flag}{hint} is {} and does not apply to --suite {chosen}{default}; add --suite \
             {owner} to run {}",
            owner.entry().a_flag,
            owner.entry().product
        ));
    }
    Ok(())
}

/// A key of a suite's table in a campaign that is a flag of `dbperf run` but not of the suite
/// (`pragma`, `work_dir`): it would be parsed and then ignored, so it is refused. What the
/// table's arguments always hold besides the suite's flags: the suite, the preset, the
/// campaign's memory cap (which sizes the preset) and the seed (a suite's own).
fn refuse_run_keys(campaign: &str, suite: Suite, a: &RunArgs) -> anyhow::Result<()> {
    match a
        .given
        .first_outside(suite.name(), &["suite", "preset", "server_memory", "seed"])
    {
        Some(flag) => bad_input(format!(
            "campaign {campaign}: {} is not a flag of the {suite} suite, not in \
             [campaign.{campaign}.{suite}]",
            flag.trim_start_matches("--").replace('-', "_")
        )),
        None => Ok(()),
    }
}

/// A key of one suite in a campaign's table of another (`threads` under ibench): said in the
/// campaign's terms, not the command line's.
fn refuse_other_suites_keys(campaign: &str, suite: Suite, a: &RunArgs) -> anyhow::Result<()> {
    for owner in Suite::all().filter(|s| *s != suite) {
        if let Some(flag) = a.given.first_in(owner.name()) {
            return bad_input(format!(
                "campaign {campaign}: {} belongs to the {owner} suite, not in \
                 [campaign.{campaign}.{suite}]",
                flag.trim_start_matches("--").replace('-', "_")
            ));
        }
    }
    Ok(())
}

/// The suite `a` asks for, with every parameter after preset and flags: the Insert Benchmark
/// once per level of a `--clients` sweep.
pub(super) fn suite_of(a: &RunArgs) -> anyhow::Result<Vec<Arc<dyn session::Suite>>> {
    refuse_other_suites_flags(a, a.suite)?;
    Ok(match a.suite {
        Suite::Ibench => {
            let preset = presets::get(&a.preset)?;
            let levels: Vec<Option<u64>> = match &a.ibench.clients {
                Some(l) => l.0.iter().map(|&n| Some(n)).collect(),
                None => vec![None],
            };
            let sweep = levels.len() > 1;
            let mut out: Vec<Arc<dyn session::Suite>> = Vec::new();
            for clients in levels {
                let preset = preset
                    .clone()
                    .for_cap(a.server_memory, clients.unwrap_or(1))?;
                out.push(Arc::new(IbenchSuite {
                    params: spec::ibench::ibench_params(
                        &preset,
                        &a.ibench.overrides(clients, a.seed),
                    )?,
                    sweep,
                }));
            }
            out
        }
        Suite::Sysbench => {
            vec![Arc::new(SysbenchSuite {
                params: a.sysbench.params(&a.preset, a.seed, a.server_memory)?,
            })]
        }
        Suite::Tpcc => vec![Arc::new(TpccSuite {
            params: a.tpcc.params(&a.preset, a.seed)?,
        })],
        Suite::Pgbench => vec![Arc::new(PgbenchSuite {
            params: a.pgbench.params(&a.preset, a.seed)?,
        })],
    })
}

/// The first flag given that sets what a suite does (not how the run is organised).
fn workload_flag(a: &RunArgs) -> Option<&str> {
    std::iter::once(WORKLOAD)
        .chain(Suite::all().map(Suite::name))
        .find_map(|g| a.given.first_in(g))
}

/// What the run is: its suites, targets, rounds and base, from the flags or a campaign.
pub(super) struct What {
    pub(super) name: String,
    pub(super) suites: Vec<Arc<dyn session::Suite>>,
    /// A server setting swept over.
    pub(super) vary: Option<spec::target::Vary>,
    /// Host settings swept over.
    pub(super) hosts: Vec<session::host_axes::HostSetting>,
    /// `--server-memory`: a cap on every managed server, over a target's own.
    pub(super) server_memory: Option<u64>,
    pub(super) target_specs: Vec<String>,
    pub(super) rounds: u32,
    pub(super) pause_between: u64,
    pub(super) base: Option<String>,
    pub(super) campaign: Option<String>,
}

/// What a run is from its own flags (no campaign).
fn from_flags(a: &RunArgs) -> anyhow::Result<What> {
    let suites = suite_of(a)?;
    Ok(What {
        // The directory adds the preset: `<date>-ibench-quick`.
        name: suites[0].suite().name().to_string(),
        suites,
        vary: a.vary.clone(),
        server_memory: a.server_memory,
        hosts: session::host_axes::combinations(
            a.read_ahead_kb.as_ref().map_or(&[][..], |k| &k.0),
            a.io_scheduler.as_ref().map_or(&[][..], |s| &s.0),
        ),
        target_specs: if a.targets.is_empty() {
            vec![crate::engines::Engine::DEFAULT.name().to_string()]
        } else {
            a.targets.clone()
        },
        rounds: a.repeats.unwrap_or(1),
        pause_between: a.pause_between,
        base: a.base.clone(),
        campaign: None,
    })
}

/// Campaign `name`'s suite `s`: its arguments in dbperf.toml parsed as `dbperf run` parses
/// flags, so they are checked alike, with the campaign's preset (or the one given) and cap.
fn campaign_suite(
    a: &RunArgs,
    name: &str,
    c: &spec::campaign::Campaign,
    s: Suite,
) -> anyhow::Result<Vec<Arc<dyn session::Suite>>> {
    // --preset given when the run started (its journal's command line, on --resume) overrides
    // the campaign's.
    let preset_given = a.given.has("preset");
    let mut argv = vec![
        "dbperf".to_string(),
        "run".into(),
        "--suite".into(),
        s.name().to_string(),
    ];
    if let Some(p) = c.preset.as_ref().filter(|_| !preset_given) {
        argv.extend(["--preset".to_string(), p.clone()]);
    } else if preset_given {
        argv.extend(["--preset".to_string(), a.preset.clone()]);
    }
    argv.extend(c.args.get(&s).cloned().unwrap_or_default());
    // A preset sized from the cap is sized from the campaign's.
    if let Some(cap) = c.server_memory {
        argv.extend(["--server-memory".to_string(), cap.to_string()]);
    }
    let parsed = match super::parse(&argv) {
        Ok(super::Cli {
            command: super::Command::Run(r),
        }) => r,
        Ok(_) => unreachable!("the arguments name the run command"),
        Err(e) => {
            let first = e.to_string();
            let first = first
                .lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches("error: ");
            return bad_input(format!("campaign {name}, {s}: {first}"));
        }
    };
    refuse_other_suites_keys(name, s, &parsed)?;
    refuse_run_keys(name, s, &parsed)?;
    suite_of(&parsed)
}

pub(super) fn what(a: &RunArgs, file: &spec::config_file::ConfigFile) -> anyhow::Result<What> {
    let Some(name) = &a.campaign else {
        return from_flags(a);
    };
    if let Some(flag) = workload_flag(a) {
        return bad_input(format!(
            "{flag} is decided by campaign {name}; change it in dbperf.toml's [campaign.{name}]"
        ));
    }
    let c = file.campaign(name)?;
    let mut suites = Vec::new();
    for &s in &c.suites {
        suites.extend(campaign_suite(a, name, &c, s)?);
    }
    Ok(What {
        name: name.clone(),
        suites,
        vary: c.vary.clone(),
        server_memory: c.server_memory,
        hosts: session::host_axes::combinations(&c.read_ahead_kb, &c.io_scheduler),
        target_specs: c.targets.clone(),
        rounds: a.repeats.unwrap_or(c.repeats),
        pause_between: c.pause_between.unwrap_or(a.pause_between),
        base: a.base.clone().or(c.base.clone()),
        campaign: Some(name.clone()),
    })
}

/// What a run of `a` would be, checked as far as it can be without this host: dbperf.toml,
/// the campaign, its suites' flags and its targets' definitions (`dbperf run --slurm` checks
/// before it submits; builds and memory caps are the nodes' to check).
pub(super) fn check_plan(a: &RunArgs) -> anyhow::Result<()> {
    let file = spec::config_file::load(a.config_file.as_deref())?;
    let w = what(a, &file)?;
    for s in &w.target_specs {
        file.resolve(s, &a.pragmas)?;
    }
    Ok(())
}
