//! Everything a run checks and takes before its first cell: the plan and each cell's
//! fingerprint, the profiler, the result directory and its lock, the journal of the run being
//! continued, and every target. Bad input found here ends the run before anything ran, and
//! leaves no directory it made.

use std::path::{Path, PathBuf};

use super::ledger::{check_same_plan, Ledger, Print};
use super::target::{self, Access, Checked};
use super::{fingerprint, lock, plan, read_journal, Events, Note, Request};
use crate::error::bad_input;
use crate::results::campaign;
use crate::spec::target::Target;

/// What the cells run with.
pub(super) struct Prepared {
    pub cells: Vec<plan::Cell>,
    pub prints: Vec<Print>,
    pub profiler: Option<crate::profile::Profiler>,
    /// Per suite, per target: how the cells reach it.
    pub checked: Vec<Vec<Checked>>,
    /// `--work-dir`, else `<out>/work`.
    pub work_root: PathBuf,
    /// Held, never read, until the run ends: a second dbperf on this --out is refused.
    pub _lock: lock::RunLock,
    /// Held likewise: a second dbperf sweeping the same devices is refused.
    pub _device_locks: super::host_axes::DeviceLocks,
}

/// What the cells run with, and the journal: the continued run's on --resume (not yet
/// recovered), else a fresh one.
pub(super) fn prepare(
    req: &Request,
    events: &mut dyn Events,
) -> anyhow::Result<(Prepared, Ledger)> {
    let target_names: Vec<(String, plan::Axes)> = req
        .targets
        .iter()
        .map(|t| (t.name.clone(), t.axes.clone()))
        .collect();
    let suites: Vec<(&str, plan::Axes)> = req
        .suites
        .iter()
        .map(|s| (s.suite().name(), s.axes()))
        .collect();
    let hosts: Vec<plan::Axes> = req.hosts.iter().map(|h| h.axes()).collect();
    let cells = plan::cells(&target_names, &suites, &hosts, req.rounds.max(1));
    if !req.hosts.is_empty() {
        if let Some(t) = req.targets.iter().find(|t| t.external.is_some()) {
            return bad_input(format!(
                "target {} is a server dbperf does not manage: its data is not on this host, so \
                 read_ahead_kb and io_scheduler sweeps cannot apply to it",
                t.name
            ));
        }
    }
    let prints = cells
        .iter()
        .map(|c| fingerprint::of(&req.targets[c.target], req.suites[c.suite].as_ref()))
        .collect::<anyhow::Result<Vec<_>>>()?;
    refuse_shared_directories(&cells)?;
    let profiler = profiler(req, events)?;
    check_work_dir_option(req)?;
    let out = &req.out;
    let work_root = req.work_dir.clone().unwrap_or_else(|| out.join("work"));
    // The devices that matter are those under the cells' data, which --work-dir may put on
    // another file system than --out.
    super::host_axes::check(&req.host_roots, &req.hosts, &work_root)?;
    let device_locks = super::host_axes::lock_devices(&req.host_roots, &req.hosts, &work_root)?;
    let out_existed = out.exists();
    super::create_dir(out, "result directory")?;
    // Taken before anything of an earlier run here is read or changed.
    let lock = match lock::take(out) {
        Ok(l) => l,
        Err(e) => {
            if !out_existed {
                let _ = std::fs::remove_dir(out);
            }
            return Err(e);
        }
    };
    check_own_work(req)?;
    let ledger = match req.resume {
        true => {
            // A dbperf killed inside a cell whose guard could not put the devices back: put
            // back now, before the journal is even compared (a refused resume must not leave
            // them changed). Only a continued run's: a fresh run never undoes a file it finds.
            let state = out.join(super::host_axes::STATE_FILE);
            for line in super::host_axes::put_back(&req.host_roots, &state)? {
                events.note("", &Note::HostPutBack(line));
            }
            let j = read_journal(out)?;
            check_same_plan(&j, &cells, &prints)?;
            Ledger { journal: j }
        }
        false => {
            refuse_earlier_results(req, &cells)?;
            Ledger::fresh(req, &cells, &prints)
        }
    };
    let work_root_existed = work_root.exists();
    let checked = match check_targets(req, &cells, &work_root) {
        Ok(c) => c,
        Err(e) => {
            // Nothing ran: leave no directory this run made.
            if !work_root_existed && req.work_dir.is_none() {
                let _ = std::fs::remove_dir_all(&work_root);
            }
            if !out_existed {
                lock.remove();
                let _ = std::fs::remove_dir(out);
            }
            return Err(e);
        }
    };
    let prepared = Prepared {
        cells,
        prints,
        profiler,
        checked,
        work_root,
        _lock: lock,
        _device_locks: device_locks,
    };
    Ok((prepared, ledger))
}

/// Two cells in one directory would overwrite each other's results: swept values that differ
/// only in characters a directory name cannot hold (`a:b`, `a/b`) are refused.
fn refuse_shared_directories(cells: &[plan::Cell]) -> anyhow::Result<()> {
    let mut seen = std::collections::BTreeSet::new();
    match cells.iter().find(|c| !seen.insert(c.id.as_str())) {
        Some(c) => bad_input(format!(
            "two cells of this run would share the directory {}: swept values must differ in \
             more than the characters a directory name cannot hold",
            c.id
        )),
        None => Ok(()),
    }
}

/// Probed once, before anything runs: a run that must profile and cannot is bad input.
fn profiler(
    req: &Request,
    events: &mut dyn Events,
) -> anyhow::Result<Option<crate::profile::Profiler>> {
    let Some(s) = &req.profile else {
        return Ok(None);
    };
    match crate::profile::probe(s) {
        Ok(p) => Ok(Some(p)),
        Err(e) if s.require => bad_input(format!("--require-profile: {e}")),
        Err(e) => {
            events.note("", &Note::Warning(e));
            Ok(None)
        }
    }
}

fn check_work_dir_option(req: &Request) -> anyhow::Result<()> {
    match req.work_dir.as_ref().filter(|w| w.exists() && !w.is_dir()) {
        Some(w) => bad_input(format!(
            "--work-dir {} is not a directory; give a directory (it is made when missing)",
            w.display()
        )),
        None => Ok(()),
    }
}

/// The run's own work directory is made and removed by dbperf: a link in its place (planted,
/// or left by hand) would send both elsewhere.
fn check_own_work(req: &Request) -> anyhow::Result<()> {
    let own_work = req.out.join("work");
    if req.work_dir.is_none() && std::fs::symlink_metadata(&own_work).is_ok_and(|m| !m.is_dir()) {
        return bad_input(format!(
            "{} is a symbolic link or not a directory; dbperf makes its work directory itself \
             (remove it, or give --work-dir)",
            own_work.display()
        ));
    }
    Ok(())
}

/// A new run never writes over an earlier one's results.
fn refuse_earlier_results(req: &Request, cells: &[plan::Cell]) -> anyhow::Result<()> {
    let out = &req.out;
    if out.join(campaign::JOURNAL).exists() {
        return bad_input(format!(
            "{} holds an earlier run; continue it with --resume {} or choose another --out",
            out.display(),
            out.display()
        ));
    }
    for c in cells {
        if out.join(&c.id).join("run.json").exists() {
            return bad_input(format!(
                "{} already holds a result for target {}; choose another --out",
                out.display(),
                req.targets[c.target].name
            ));
        }
    }
    Ok(())
}

/// Every target checked for every suite, and every cell's kept work directory.
fn check_targets(
    req: &Request,
    cells: &[plan::Cell],
    work_root: &Path,
) -> anyhow::Result<Vec<Vec<Checked>>> {
    let cell_work = |c: &plan::Cell| req.cell_work(&c.id, &req.targets[c.target].name, &c.axes);
    // Where the first cell of each embedded target keeps its data.
    let first_work = |t: &Target| -> PathBuf {
        cells
            .iter()
            .find(|c| req.targets[c.target].name == t.name)
            .map(cell_work)
            .unwrap_or_else(|| work_root.join(&t.name))
    };
    let mut all = Vec::new();
    for s in &req.suites {
        let cx = target::CheckCx {
            suite: s.as_ref(),
            server_user: req.server_user.as_deref(),
            server_start_timeout: req.server_start_timeout,
            timeouts: req.timeouts(),
            interrupt: &req.interrupt,
            embedded_dir: &first_work,
        };
        all.push(target::check(&req.targets, &cx)?);
    }
    for c in cells {
        check_kept_work(&cell_work(c), &all[c.suite][c.target])?;
    }
    Ok(all)
}

/// Before anything runs: a work directory (kept from an earlier run with `--work-dir`, or the
/// run's own on `--resume`), or the way to it, must be one dbperf can work in safely (safe_fs::
/// check_dir: the work root too, when it does not exist yet), and so must a managed server's
/// instance directory in it (no link in the place of `server`, `data` or `run`, nothing another
/// user owns or can write to), or the run is refused as bad input.
fn check_kept_work(work: &Path, checked: &Checked) -> anyhow::Result<()> {
    let checks = crate::safe_fs::check_dir(work).and_then(|()| match &checked.access {
        Access::Managed(plan) => {
            crate::server::check_kept(&work.join("server"), plan.user.as_ref())
        }
        _ => Ok(()),
    });
    match checks {
        // A path that cannot be a directory (a file on the way) is the user's too.
        Err(e) if !crate::error::is_bad_input(&e) => bad_input(format!(
            "cannot use the work directory {}: {e:#}",
            work.display()
        )),
        other => other,
    }
}
