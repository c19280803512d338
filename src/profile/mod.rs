//! CPU profiles of a step's measured time: `perf record -g` attached to the server's processes
//! (and/or dbperf itself) from the engine's measured start to its measured end, folded into the
//! standard folded-stack text, drawn as flame graphs and compared between builds per operation
//! (docs/profiles.md).
//!
//! `record` runs perf, `fold` turns its samples into folded stacks, `diff` compares two steps'
//! stacks by CPU per operation, `flame` draws (inferno).

pub mod diff;
pub mod flame;
pub mod fold;
pub mod record;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

pub use record::Recording;

/// Whose CPU is sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// The managed server's process tree; dbperf itself for an embedded DBMS (SQLite runs in it).
    Server,
    /// dbperf: the benchmark client.
    Client,
    Both,
}

impl Who {
    pub fn name(self) -> &'static str {
        match self {
            Who::Server => "server",
            Who::Client => "client",
            Who::Both => "both",
        }
    }
}

/// How perf samples: every CPU (its samples then filtered to the processes), or attached to the
/// processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    System,
    Processes,
}

/// What the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub who: Who,
    /// Samples per second.
    pub hz: u32,
    /// A run that cannot profile is bad input rather than a warning.
    pub require: bool,
    /// None: system-wide where allowed, else attached.
    pub scope: Option<Scope>,
    /// perf's data file per step may grow to this many bytes; sampling stops there.
    pub max_bytes: u64,
}

/// The default cap on a step's perf data: every CPU sampled at 99 Hz with call graphs is up
/// to about 100 KB per CPU per second, so a 128-CPU host fills 2 GiB in about 3 minutes of a
/// step, where nothing would otherwise stop it short of a full disk.
pub const DEFAULT_MAX_SIZE: &str = "2G";

/// perf, checked to work here, with the event it samples.
#[derive(Debug, Clone)]
pub struct Profiler {
    pub perf: PathBuf,
    pub event: String,
    pub hz: u32,
    pub who: Who,
    /// Sample every CPU (`perf record -a`) and keep the sampled processes' samples when
    /// folding, rather than attach to the processes (`-p`). Per-process events are switched
    /// with their task at every context switch, which cost the server 3-5% CPU per operation
    /// (more for the client it talks to) on a 2-CPU VM; per-CPU events cost nothing measurable.
    /// Needs root or `perf_event_paranoid` 0 or less; otherwise dbperf attaches.
    pub system_wide: bool,
    /// `Settings::max_bytes`.
    pub max_bytes: u64,
}

/// Every wait on perf is bounded: a probe that hangs means no profiles.
const PROBE_DEADLINE: Duration = Duration::from_secs(30);

/// Finds perf on PATH and checks that it may sample here: hardware cycles where the CPU's
/// counters are available, else the software clock (virtual machines); as a user other than root
/// with `perf_event_paranoid` 2, user-space only. The error is one sentence for a warning.
pub fn probe(s: &Settings) -> Result<Profiler, String> {
    let perf = which("perf").ok_or_else(|| {
        "perf is not installed (Debian: apt-get install linux-perf), so no CPU profiles are \
         taken"
            .to_string()
    })?;
    let root = unsafe { libc::geteuid() } == 0;
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|t| t.trim().parse::<i32>().ok())
        .unwrap_or(2);
    if !root && paranoid > 2 {
        return Err(format!(
            "perf_event_paranoid is {paranoid}, which forbids profiling to users other than \
             root (sysctl kernel.perf_event_paranoid=2 allows it for your own processes)"
        ));
    }
    let user_only = !root && paranoid >= 2;
    let suffix = if user_only { ":u" } else { "" };
    let hardware = has_hardware_cycles(&perf);
    let mut tried = Vec::new();
    for base in ["cycles", "cpu-clock"] {
        if base == "cycles" && !hardware {
            continue;
        }
        let event = format!("{base}{suffix}");
        match try_record(&perf, &event, false) {
            Ok(()) => {
                let system_wide = match s.scope {
                    Some(Scope::Processes) => false,
                    Some(Scope::System) => {
                        try_record(&perf, &event, true).map_err(|e| {
                            format!(
                                "perf cannot sample every CPU here ({e}); --profile-scope \
                                 processes attaches to the processes instead"
                            )
                        })?;
                        true
                    }
                    None => (root || paranoid <= 0) && try_record(&perf, &event, true).is_ok(),
                };
                return Ok(Profiler {
                    perf,
                    event,
                    hz: s.hz,
                    who: s.who,
                    system_wide,
                    max_bytes: s.max_bytes,
                });
            }
            Err(e) => tried.push(format!("{event}: {e}")),
        }
    }
    Err(format!(
        "perf cannot sample here ({}), so no CPU profiles are taken",
        tried.join("; ")
    ))
}

pub(crate) fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// `perf stat -e cycles` says `<not supported>` where no PMU is exposed (most VMs).
fn has_hardware_cycles(perf: &Path) -> bool {
    let mut c = Command::new(perf);
    c.args(["stat", "-x,", "-e", "cycles", "--", "true"]);
    match record::output_within(c, PROBE_DEADLINE) {
        Ok((true, _, err)) => !err.contains("<not supported>") && !err.contains("<not counted>"),
        _ => false,
    }
}

fn try_record(perf: &Path, event: &str, system_wide: bool) -> Result<(), String> {
    let dir = tempdir()?;
    let data = dir.join("probe.data");
    let mut c = Command::new(perf);
    // -D -1: the option dbperf starts perf with (sampling off until enabled), which old perf
    // versions do not know.
    c.args([
        "record", "-q", "-N", "-g", "-F", "99", "-D", "-1", "-e", event, "-o",
    ])
    .arg(&data);
    if system_wide {
        c.arg("-a");
    }
    c.args(["--", "true"]);
    let r = record::output_within(c, PROBE_DEADLINE);
    let _ = std::fs::remove_dir_all(&dir);
    match r {
        Ok((true, _, _)) => Ok(()),
        Ok((false, _, err)) => Err(last_line(&err)),
        Err(e) => Err(e),
    }
}

/// A private directory for the probe's file: an unguessable name, mode 0700, created
/// exclusively (tempfile), so nothing planted under /tmp is written through.
fn tempdir() -> Result<PathBuf, String> {
    tempfile::Builder::new()
        .prefix("dbperf-perf-probe-")
        .tempdir()
        .map(|d| d.keep())
        .map_err(|e| format!("cannot create a private directory under /tmp: {e}"))
}

pub(crate) fn last_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("failed without saying why")
        .to_string()
}
