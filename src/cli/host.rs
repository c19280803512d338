//! `dbperf host show|tune|undo`: what the host is doing, setting it right, and putting it back.
//! The work is in `crate::host`; this is flags and printing.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};

use super::flags::OnOff;
use super::EXIT_OK;
use crate::error::bad_input;
use crate::host::{self, tune, Roots};

#[derive(Subcommand, Debug)]
pub enum HostCommand {
    /// Show the host settings that make results vary (CPU frequency driver, governor, boost, EPP,
    /// SMT, THP, VM sysctls, block devices, BIOS, PCIe errors, daemons), then warnings with why
    /// each matters and how to fix it.
    Show(ShowArgs),
    /// Change settings for repeatable results (as root), saving the exact previous values first.
    Tune(TuneArgs),
    /// Put back exactly the values the last `dbperf host tune` saved.
    Undo(UndoArgs),
    /// Started by `dbperf run` beside a cell of a read-ahead or scheduler sweep: waits for its
    /// standard input to close (dbperf ended, however), then undoes the state file if it is
    /// still there.
    #[command(hide = true)]
    Guard(UndoArgs),
}

#[derive(Args, Debug)]
pub struct RootArgs {
    /// Where sysfs is read and written; point it at a copy or fixture tree to look at or test
    /// another host's files (tune needs root only when this is the real /sys).
    #[arg(long, value_name = "DIR", default_value = "/sys")]
    pub sysfs_root: PathBuf,
    /// Where procfs is read (and /proc/sys written).
    #[arg(long, value_name = "DIR", default_value = "/proc")]
    pub procfs_root: PathBuf,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Print the fingerprint as JSON (the same object run.json stores as `host`).
    #[arg(long)]
    pub json: bool,
    /// Data directory whose block devices to show, repeatable [default: the current directory].
    #[arg(long = "path", value_name = "DIR")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub roots: RootArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ThpEnabled {
    Always,
    Madvise,
    Never,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ThpDefrag {
    Always,
    Defer,
    #[value(name = "defer+madvise")]
    DeferMadvise,
    Madvise,
    Never,
}

#[derive(Args, Debug)]
pub struct TuneArgs {
    /// CPU boost (turbo): writes cpufreq/boost, every policy's boost, intel_pstate/no_turbo or
    /// the legacy cpb file, whichever this driver offers.
    #[arg(long, value_enum)]
    pub boost: Option<OnOff>,
    /// Frequency governor of every CPU policy, e.g. performance (must be one the driver offers).
    #[arg(long, value_name = "NAME")]
    pub governor: Option<String>,
    /// Energy/performance preference of every policy (intel_pstate, amd-pstate-epp), e.g.
    /// performance.
    #[arg(long, value_name = "VALUE")]
    pub epp: Option<String>,
    /// Lowest frequency of every policy: kHz, 2400MHz, 2.4GHz, or min/max (the hardware's).
    #[arg(long, value_name = "FREQ", value_parser = tune::parse_freq)]
    pub min_freq: Option<tune::Freq>,
    /// Highest frequency of every policy: kHz, 2400MHz, 2.4GHz, or min/max (the hardware's).
    #[arg(long, value_name = "FREQ", value_parser = tune::parse_freq)]
    pub max_freq: Option<tune::Freq>,
    /// Simultaneous multithreading (smt/control); off takes sibling CPUs offline.
    #[arg(long, value_enum)]
    pub smt: Option<OnOff>,
    /// Transparent huge pages (transparent_hugepage/enabled).
    #[arg(long, value_enum)]
    pub thp: Option<ThpEnabled>,
    /// Transparent huge page defragmentation (transparent_hugepage/defrag).
    #[arg(long, value_enum)]
    pub thp_defrag: Option<ThpDefrag>,
    /// vm.swappiness, 0-200.
    #[arg(long, value_name = "N")]
    pub swappiness: Option<u64>,
    /// I/O scheduler of the disks under every --path, e.g. none or mq-deadline.
    #[arg(long, value_name = "NAME")]
    pub scheduler: Option<String>,
    /// Read-ahead in KiB of the block devices under every --path (read_ahead_kb).
    #[arg(long = "read-ahead", value_name = "KB")]
    pub read_ahead: Option<u64>,
    /// Data directory whose block devices --scheduler and --read-ahead change, repeatable
    /// [default: the current directory].
    #[arg(long = "path", value_name = "DIR")]
    pub paths: Vec<PathBuf>,
    /// Where the previous values are saved [default: /var/lib/dbperf/host-tune.json as root,
    /// else $XDG_STATE_HOME/dbperf/host-tune.json or ~/.local/state/dbperf/host-tune.json].
    #[arg(long, value_name = "FILE")]
    pub state_file: Option<PathBuf>,
    /// Print what would change and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub roots: RootArgs,
}

#[derive(Args, Debug)]
pub struct UndoArgs {
    /// The state file `dbperf host tune` wrote [default: as for tune].
    #[arg(long, value_name = "FILE")]
    pub state_file: Option<PathBuf>,
    #[command(flatten)]
    pub roots: RootArgs,
}

fn dir_arg(flag: &str, p: &Path) -> anyhow::Result<PathBuf> {
    if !p.is_dir() {
        return bad_input(format!("{flag} {} is not a directory", p.display()));
    }
    // Absolute, so tune can tell the real /sys and /proc from a fixture tree.
    Ok(std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf()))
}

fn roots(a: &RootArgs) -> anyhow::Result<Roots> {
    Ok(Roots {
        sys: dir_arg("--sysfs-root", &a.sysfs_root)?,
        proc: dir_arg("--procfs-root", &a.procfs_root)?,
        ..Roots::default()
    })
}

fn paths(given: &[PathBuf]) -> Vec<PathBuf> {
    if given.is_empty() {
        vec![std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))]
    } else {
        given.to_vec()
    }
}

fn state_file(given: &Option<PathBuf>) -> PathBuf {
    given.clone().unwrap_or_else(tune::default_state_file)
}

pub fn run(cmd: HostCommand) -> anyhow::Result<i32> {
    match cmd {
        HostCommand::Show(a) => {
            let f = host::fingerprint(&roots(&a.roots)?, &paths(&a.paths));
            if a.json {
                out!("{}", serde_json::to_string_pretty(&f)?);
            } else {
                let text = host::show::render(&f);
                out!("{}", text.trim_end_matches('\n'));
            }
        }
        HostCommand::Tune(a) => {
            let word = |v: &dyn std::fmt::Debug| format!("{v:?}");
            let req = tune::Request {
                boost: a.boost.map(|b| b == OnOff::On),
                governor: a.governor.clone(),
                epp: a.epp.clone(),
                min_freq: a.min_freq,
                max_freq: a.max_freq,
                smt: a.smt.map(|b| b == OnOff::On),
                thp: a.thp.map(|t| word(&t).to_lowercase()),
                thp_defrag: a.thp_defrag.map(|t| match t {
                    ThpDefrag::DeferMadvise => "defer+madvise".to_string(),
                    t => word(&t).to_lowercase(),
                }),
                swappiness: a.swappiness,
                scheduler: a.scheduler.clone(),
                read_ahead_kb: a.read_ahead,
                paths: paths(&a.paths),
            };
            let r = tune::tune(
                &roots(&a.roots)?,
                &req,
                &state_file(&a.state_file),
                a.dry_run,
            )?;
            for l in r.lines {
                out!("{l}");
            }
        }
        HostCommand::Guard(a) => {
            let Some(f) = &a.state_file else {
                return bad_input("host guard needs --state-file");
            };
            crate::session::host_axes::guard(&roots(&a.roots)?, f)?;
        }
        HostCommand::Undo(a) => {
            let r = tune::undo(&roots(&a.roots)?, &state_file(&a.state_file))?;
            for l in r.lines {
                out!("{l}");
            }
        }
    }
    Ok(EXIT_OK)
}
