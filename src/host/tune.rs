//! `dbperf host tune` and `dbperf host undo`: change the settings that make results vary, and
//! put back exactly what was there before (not fixed defaults, as pyperf's `reset` does).
//!
//! Every file to change is read and saved in the state file (a journal: path, old value, new
//! value) before the first write, so even a crash leaves enough to undo. Tune is all or nothing:
//! when a write fails, what was already changed is put back. Writes follow spec A.1.7: governor
//! before boost (a governor change resets intel_pstate's no_turbo), boost before EPP and limits,
//! SMT last so that undo brings sibling CPUs back first and then restores their policies too.

mod cpu;
mod plan;
mod queues;
mod summary;
mod vm;

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{cpufreq, sysfs, Roots};
use crate::error::{bad_input, BadInput};
use plan::{merge, Plan};
use summary::{as_set, summarize};

pub const STATE_SCHEMA: u32 = 1;

/// A frequency limit: kHz, or the hardware's own minimum or maximum.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Freq {
    Khz(u64),
    Min,
    Max,
}

/// Parses `min`, `max`, `2400000` (kHz), `2400MHz`, `2.4GHz`.
pub fn parse_freq(s: &str) -> Result<Freq, String> {
    let t = s.trim().to_ascii_lowercase();
    let bad = || {
        format!("'{s}' is not a frequency (examples: max, min, 2400000 for kHz, 2400MHz, 2.4GHz)")
    };
    match t.as_str() {
        "min" => return Ok(Freq::Min),
        "max" => return Ok(Freq::Max),
        _ => {}
    }
    let (num, mult) = if let Some(n) = t.strip_suffix("ghz") {
        (n, 1_000_000.0)
    } else if let Some(n) = t.strip_suffix("mhz") {
        (n, 1000.0)
    } else if let Some(n) = t.strip_suffix("khz") {
        (n, 1.0)
    } else {
        (t.as_str(), 1.0)
    };
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    if !(v.is_finite() && v > 0.0) {
        return Err(bad());
    }
    Ok(Freq::Khz((v * mult).round() as u64))
}

/// What `dbperf host tune` was asked to set.
#[derive(Debug, Default, Clone)]
pub struct Request {
    pub boost: Option<bool>,
    pub governor: Option<String>,
    pub epp: Option<String>,
    pub min_freq: Option<Freq>,
    pub max_freq: Option<Freq>,
    pub smt: Option<bool>,
    pub thp: Option<String>,
    pub thp_defrag: Option<String>,
    pub swappiness: Option<u64>,
    pub scheduler: Option<String>,
    pub read_ahead_kb: Option<u64>,
    /// Directories whose block devices --scheduler and --read-ahead change.
    pub paths: Vec<PathBuf>,
}

impl Request {
    pub fn is_empty(&self) -> bool {
        self.boost.is_none()
            && self.governor.is_none()
            && self.epp.is_none()
            && self.min_freq.is_none()
            && self.max_freq.is_none()
            && self.smt.is_none()
            && self.thp.is_none()
            && self.thp_defrag.is_none()
            && self.swappiness.is_none()
            && self.scheduler.is_none()
            && self.read_ahead_kb.is_none()
    }
}

/// One file in the journal.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The option that caused it, e.g. `--governor`.
    pub setting: String,
    /// Short name for people: `policy0 scaling_governor`, `nvme0n1 read_ahead_kb`.
    pub what: String,
    pub path: PathBuf,
    /// The value before dbperf changed anything.
    pub old: String,
    /// The value written; null for a file saved only because writing another one changes it
    /// (EPP when the governor changes, per-policy boost when global boost changes).
    pub new: Option<String>,
    /// A choice file (`[none] mq-deadline`): compare and restore the selected word.
    #[serde(default)]
    pub choice: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct State {
    pub schema: u32,
    pub saved_at: String,
    pub dbperf_version: String,
    pub kernel: String,
    /// `/proc/sys/kernel/random/boot_id` when tune ran: undo notices a reboot in between.
    pub boot_id: Option<String>,
    /// In the order written; undo goes backwards.
    pub entries: Vec<Entry>,
}

/// What was done, for people.
#[derive(Debug, Default)]
pub struct Report {
    pub lines: Vec<String>,
}

/// The current value of a journal entry's file.
pub fn current(e: &Entry) -> Option<String> {
    let raw = sysfs::read(&e.path)?;
    if e.choice {
        sysfs::bracketed(&raw).map(|(s, _)| s)
    } else {
        Some(raw)
    }
}

/// Default state file: /var/lib/dbperf for root (tuning the real /sys needs root),
/// $XDG_STATE_HOME/dbperf or ~/.local/state/dbperf otherwise.
pub fn default_state_file() -> PathBuf {
    let name = "host-tune.json";
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        return PathBuf::from("/var/lib/dbperf").join(name);
    }
    let env = |k: &str| {
        std::env::var_os(k)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if let Some(x) = env("XDG_STATE_HOME") {
        return x.join("dbperf").join(name);
    }
    if let Some(h) = env("HOME") {
        return h.join(".local/state/dbperf").join(name);
    }
    PathBuf::from("/var/lib/dbperf").join(name)
}

/// Whether writing these entries needs root: only files of the real /sys and /proc do, so tests
/// can tune a writable fixture tree as any user.
pub fn needs_root(entries: &[Entry], euid: u32) -> bool {
    euid != 0
        && entries
            .iter()
            .any(|e| e.path.starts_with("/sys") || e.path.starts_with("/proc"))
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Reads the host and works out every file to write, in the order they are written (spec
/// A.1.7, see the top of this file). Errors here are the user's (a value the driver does not
/// offer, a control this kernel lacks): nothing has been written yet.
pub fn plan(roots: &Roots, req: &Request) -> anyhow::Result<Vec<Entry>> {
    let cf = cpufreq::read_cpufreq(roots);
    let cpus = cpu::Cpus::new(roots, &cf);
    let mut plan = Plan::default();
    if let Some(g) = &req.governor {
        cpu::governor(&mut plan, &cpus, g)?;
    }
    if let Some(on) = req.boost {
        cpu::boost(&mut plan, &cpus, on)?;
    }
    if let Some(e) = &req.epp {
        cpu::epp(&mut plan, &cpus, e, req.governor.as_ref())?;
    }
    let limits = cpu::Limits {
        min: req.min_freq,
        max: req.max_freq,
    };
    if limits.min.is_some() || limits.max.is_some() {
        cpu::limits(&mut plan, &cpus, limits)?;
    }
    for (flag, file, value) in [
        ("--thp", "enabled", &req.thp),
        ("--thp-defrag", "defrag", &req.thp_defrag),
    ] {
        if let Some(v) = value {
            vm::thp(&mut plan, roots, flag, file, v)?;
        }
    }
    if let Some(s) = req.swappiness {
        vm::swappiness(&mut plan, roots, s)?;
    }
    if req.scheduler.is_some() || req.read_ahead_kb.is_some() {
        let flag = if req.scheduler.is_some() {
            "--scheduler"
        } else {
            "--read-ahead"
        };
        let devices = queues::devices(roots, &req.paths, flag)?;
        if let Some(s) = &req.scheduler {
            queues::scheduler(&mut plan, &devices, s)?;
        }
        if let Some(kb) = req.read_ahead_kb {
            queues::read_ahead(&mut plan, &devices, kb)?;
        }
    }
    if let Some(on) = req.smt {
        cpu::smt(&mut plan, roots, on)?;
    }
    Ok(plan.entries)
}

fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// The state file at `path`, None when there is none. `undo` writes what it names as root, so it
/// is a record that drives an action: refused unless this user wrote it (its own, not writable
/// by others, not a link or a second name: `safe_fs::acting_record`), at most [`STATE_MAX`]
/// bytes.
pub fn load_state(path: &Path) -> anyhow::Result<Option<State>> {
    let Some(text) =
        crate::safe_fs::acting_record::read(path, STATE_MAX, "the saved host settings")?
    else {
        return Ok(None);
    };
    let s: State = serde_json::from_slice(&text).map_err(|e| {
        BadInput(format!(
            "{} is not a dbperf host state file ({}); move it away if it is not from dbperf",
            path.display(),
            crate::untrusted::json_error(&e)
        ))
    })?;
    if s.schema > STATE_SCHEMA {
        return bad_input(format!(
            "{} was written by a newer dbperf (state schema {}); undo with that version",
            path.display(),
            s.schema
        ));
    }
    Ok(Some(s))
}

/// The most of a state file dbperf reads: one entry per tunable file, a few hundred bytes each.
const STATE_MAX: u64 = 4 << 20;

/// Whether undo may write to `p`: only kernel settings under the sysfs root or the procfs
/// root's `sys/`, named without `.` or `..`, and still there once links are resolved (sysfs
/// links stay inside sysfs). Anything else in a state file was not written by tune.
fn is_kernel_setting(roots: &Roots, p: &Path) -> bool {
    use std::path::Component;
    if !p.is_absolute()
        || p.components()
            .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
    {
        return false;
    }
    let proc_sys = roots.proc.join("sys");
    let Ok(real) = fs::canonicalize(p) else {
        // A control this kernel no longer has: nothing is written, restore reports it.
        return p.starts_with(&roots.sys) || p.starts_with(&proc_sys);
    };
    [&roots.sys, &proc_sys].iter().any(|root| {
        p.starts_with(root) && fs::canonicalize(root).is_ok_and(|r| real.starts_with(r))
    })
}

/// Writes the state file so that a crash leaves either the old or the new one: temporary file,
/// fsync, rename, fsync of the directory. Its directory is made and checked like every
/// directory dbperf writes into (src/safe_fs.rs), and the temporary file is made new.
pub fn save_state(path: &Path, s: &State) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    crate::safe_fs::make_dir_all(dir, crate::safe_fs::Also::Nobody)
        .map_err(|e| std::io::Error::other(format!("{e:#}")))?;
    let tmp = dir.join(format!(
        ".{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    ));
    {
        let mut f = crate::safe_fs::create_replacing(&tmp, 0o600)?;
        let mut text = serde_json::to_vec_pretty(s).map_err(std::io::Error::other)?;
        text.push(b'\n');
        f.write_all(&text)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path)?;
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Puts back `entries`, last write first, where a file no longer holds its old value; then a
/// second pass over all of them, because restoring one file can change another (a governor
/// resets no_turbo, global boost sets every policy's boost) and because limits restored in an
/// order the kernel rejects (min above the current max) succeed once the other is back.
/// Returns the entries that still do not hold their old value, with the last error.
fn restore(entries: &[Entry]) -> Vec<(Entry, String)> {
    let mut errors: BTreeMap<PathBuf, String> = BTreeMap::new();
    for _pass in 0..2 {
        for e in entries.iter().rev() {
            if current(e).as_deref() == Some(e.old.as_str()) {
                errors.remove(&e.path);
                continue;
            }
            match sysfs::write(&e.path, &e.old) {
                Ok(()) => {
                    errors.remove(&e.path);
                }
                Err(err) => {
                    errors.insert(e.path.clone(), err.to_string());
                }
            }
        }
    }
    entries
        .iter()
        .filter_map(|e| {
            let err = errors.get(&e.path)?;
            (current(e).as_deref() != Some(e.old.as_str())).then(|| (e.clone(), err.clone()))
        })
        .collect()
}

/// Applies `req`, saving the previous values in `state_file` first.
pub fn tune(
    roots: &Roots,
    req: &Request,
    state_file: &Path,
    dry_run: bool,
) -> anyhow::Result<Report> {
    if req.is_empty() {
        return bad_input("nothing to tune: give at least one setting, e.g. --boost off (dbperf host tune --help lists them)");
    }
    let planned = plan(roots, req)?;
    let writes: Vec<&Entry> = planned.iter().filter(|e| e.new.is_some()).collect();
    let mut report = Report::default();
    if writes.is_empty() {
        report
            .lines
            .push("nothing to change: the host already has these settings".into());
        return Ok(report);
    }
    if dry_run {
        report
            .lines
            .extend(summarize(&as_set(&writes), "would set"));
        return Ok(report);
    }
    if needs_root(&planned, euid()) {
        return bad_input("dbperf host tune changes kernel settings under /sys and /proc and must run as root (sudo dbperf host tune …)");
    }
    let previous = load_state(state_file)?;
    let state = journal(roots, previous.as_ref(), &planned);
    save_state(state_file, &state).map_err(|e| {
        BadInput(format!(
            "cannot save the previous host settings to {} ({e}), so nothing was changed; choose another --state-file",
            state_file.display()
        ))
    })?;
    write_all(&planned, state_file, previous.as_ref())?;
    report.lines = written(&writes, state_file);
    Ok(report)
}

/// The state file to save before writing `planned`: the previous one with the plan added, or a
/// new one. A second tune adds to the first: a file already saved keeps its original old value,
/// so undo still returns to the state before the first tune.
fn journal(roots: &Roots, previous: Option<&State>, planned: &[Entry]) -> State {
    let mut state = previous.cloned().unwrap_or_else(|| State {
        schema: STATE_SCHEMA,
        saved_at: now(),
        dbperf_version: env!("CARGO_PKG_VERSION").into(),
        kernel: sysfs::read(&roots.proc.join("sys/kernel/osrelease")).unwrap_or_default(),
        boot_id: sysfs::read(&roots.proc.join("sys/kernel/random/boot_id")),
        entries: Vec::new(),
    });
    for e in planned {
        match state.entries.iter().position(|x| x.path == e.path) {
            Some(i) => merge(&mut state.entries, i, &e.setting, e.new.clone()),
            None => state.entries.push(e.clone()),
        }
    }
    state
}

/// Writes every planned value in order, all or nothing: when a write fails, what was already
/// written is put back and the state file returns to what it was (`previous`, or none); only
/// what cannot be put back stays in it, for `dbperf host undo`.
fn write_all(planned: &[Entry], state_file: &Path, previous: Option<&State>) -> anyhow::Result<()> {
    for (i, e) in planned.iter().enumerate() {
        let Some(new) = &e.new else { continue };
        let Err(err) = sysfs::write(&e.path, new) else {
            continue;
        };
        let changed = planned[..i].iter().filter(|x| x.new.is_some()).count();
        let left = restore(planned);
        if left.is_empty() {
            let _ = match previous {
                Some(p) => save_state(state_file, p),
                None => fs::remove_file(state_file),
            };
            return bad_input(format!(
                "cannot write {} ({err}); {} put back, so nothing was changed",
                e.path.display(),
                match changed {
                    0 => "no earlier setting had been changed".to_string(),
                    1 => "the 1 setting already changed was".to_string(),
                    n => format!("the {n} settings already changed were"),
                }
            ));
        }
        return bad_input(format!(
            "cannot write {} ({err}), and {} earlier changes could not be put back (first: {}: {}); they are saved in {}: run dbperf host undo",
            e.path.display(),
            left.len(),
            left[0].0.path.display(),
            left[0].1,
            state_file.display()
        ));
    }
    Ok(())
}

/// What tune wrote, for people: the changes, every file the kernel adjusted after the write, and
/// where the previous values are.
fn written(writes: &[&Entry], state_file: &Path) -> Vec<String> {
    let mut lines = summarize(&as_set(writes), "set");
    for e in writes {
        let now = current(e).unwrap_or_default();
        if Some(&now) != e.new.as_ref() {
            lines.push(format!(
                "note: {} reads {now} after writing {} (the kernel adjusted it)",
                e.path.display(),
                e.new.as_deref().unwrap_or("")
            ));
        }
    }
    lines.push(format!(
        "previous values saved in {}; dbperf host undo puts them back",
        state_file.display()
    ));
    lines
}

/// Removes a state file whose values are no longer to be put back.
pub fn discard_state(path: &Path) -> anyhow::Result<()> {
    fs::remove_file(path).or_else(|e| bad_input(format!("cannot remove {} ({e})", path.display())))
}

/// Which files a state file may name for undo to write them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Any kernel setting tune writes (`dbperf host undo`).
    Any,
    /// Only block devices' queue settings a read-ahead or scheduler sweep writes:
    /// `queue/read_ahead_kb`, `queue/scheduler`, `queue/nr_requests`, `queue/iosched/*`.
    BlockQueues,
}

impl Scope {
    fn allows(self, roots: &Roots, p: &Path) -> bool {
        if !is_kernel_setting(roots, p) {
            return false;
        }
        match self {
            Scope::Any => true,
            Scope::BlockQueues => is_queue_setting(roots, p),
        }
    }
}

/// `<sysfs>/.../queue/{read_ahead_kb,scheduler,nr_requests}` or `.../queue/iosched/<name>`.
fn is_queue_setting(roots: &Roots, p: &Path) -> bool {
    let names: Vec<&str> = p
        .strip_prefix(&roots.sys)
        .map(|r| r.iter().filter_map(|c| c.to_str()).collect())
        .unwrap_or_default();
    matches!(
        names.as_slice(),
        [.., "queue", "read_ahead_kb" | "scheduler" | "nr_requests"] | [.., "queue", "iosched", _]
    )
}

/// The boot this host is in (`/proc/sys/kernel/random/boot_id`).
pub fn boot_id(roots: &Roots) -> Option<String> {
    sysfs::read(&roots.proc.join("sys/kernel/random/boot_id"))
}

/// Restores every value saved by tune, last change first, and removes the state file.
pub fn undo(roots: &Roots, state_file: &Path) -> anyhow::Result<Report> {
    undo_in(roots, state_file, Scope::Any)
}

/// `undo`, refusing a state file that names anything outside `scope` (nothing is written then).
pub fn undo_in(roots: &Roots, state_file: &Path, scope: Scope) -> anyhow::Result<Report> {
    let Some(state) = load_state(state_file)? else {
        return bad_input(format!(
            "no saved host settings at {}: nothing to undo (dbperf host tune saves them there)",
            state_file.display()
        ));
    };
    if let Some(e) = state.entries.iter().find(|e| !scope.allows(roots, &e.path)) {
        let what = match scope {
            Scope::Any => format!(
                "which is not a kernel setting under {} or {}",
                roots.sys.display(),
                roots.proc.join("sys").display()
            ),
            Scope::BlockQueues => {
                "which a read-ahead or I/O scheduler sweep does not set".to_string()
            }
        };
        return bad_input(format!(
            "{} names {}, {what}; nothing was restored (move the file away if it is not \
             dbperf's)",
            state_file.display(),
            e.path.display(),
        ));
    }
    if needs_root(&state.entries, euid()) {
        return bad_input("dbperf host undo restores kernel settings under /sys and /proc and must run as root (sudo dbperf host undo)");
    }
    let mut report = Report::default();
    let boot_now = boot_id(roots);
    if state.boot_id.is_some() && boot_now.is_some() && state.boot_id != boot_now {
        report.lines.push(format!(
            "note: the host has rebooted since the tune of {}; restoring the saved values anyway",
            state.saved_at
        ));
    }
    let differing: Vec<(String, String, String)> = state
        .entries
        .iter()
        .rev()
        .filter_map(|e| {
            let now = current(e).unwrap_or_else(|| "(unreadable)".into());
            (now != e.old).then(|| (e.what.clone(), now, e.old.clone()))
        })
        .collect();
    let left = restore(&state.entries);
    if !left.is_empty() {
        let mut rest = state.clone();
        rest.entries = left.iter().map(|(e, _)| e.clone()).collect();
        let _ = save_state(state_file, &rest);
        return bad_input(format!(
            "could not restore {} of {} saved settings (first: cannot write {}: {}); they stay in {} for another dbperf host undo",
            left.len(),
            state.entries.len(),
            left[0].0.path.display(),
            left[0].1,
            state_file.display()
        ));
    }
    fs::remove_file(state_file).map_err(|e| {
        BadInput(format!(
            "restored every setting but cannot remove {} ({e}); remove it by hand",
            state_file.display()
        ))
    })?;
    if differing.is_empty() {
        report
            .lines
            .push("every saved setting already had its previous value".into());
    } else {
        report.lines.extend(summarize(&differing, "restored"));
    }
    report
        .lines
        .push(format!("removed {}", state_file.display()));
    Ok(report)
}
