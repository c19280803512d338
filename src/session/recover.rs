//! Before a resumed run continues: what a killed, interrupted or failed attempt left is
//! cleaned up or set aside, and its cell planned again. The journal is read back from a file
//! anyone who can write the run directory can edit, so each thing it names is checked before
//! anything is stopped or removed.

use std::path::Path;

use super::workdir::{self, id_parts, remove_cell_work};
use super::{mark, Loop, Note};
use crate::error::bad_input;
use crate::results::campaign::{self, CellState, Journal, JournalCell};

/// Whether `p` is `dir` or below it, compared component by component: `p` must be absolute and
/// hold no `.` or `..` (which could climb out after a string comparison said inside).
fn lexically_inside(p: &Path, dir: &Path) -> bool {
    use std::path::Component;
    p.is_absolute()
        && p.components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
        && p.starts_with(dir)
}

/// A journal's `work_dir` for cell `c` must be the cell's own, `<out>/work/<cell id>`. The run
/// directory may have moved since the journal was written, so any absolute path ending in
/// `work/<cell id>` is accepted; what is removed is always the one under `out`, whatever the
/// journal says.
fn check_work_dir(out: &Path, c: &JournalCell, w: &str) -> anyhow::Result<()> {
    let suffix = Path::new("work").join(&c.id);
    let p = Path::new(w);
    if lexically_inside(p, Path::new("/")) && p.ends_with(&suffix) {
        return Ok(());
    }
    bad_input(format!(
        "{} names {} as the work directory of cell {}, which is not {}; the journal was edited, so dbperf removes nothing and resumes nothing",
        out.join(campaign::JOURNAL).display(),
        crate::untrusted::shown(w),
        c.id,
        out.join(&suffix).display()
    ))
}

/// A directory of the run that could not be removed on resume (a link or a file planted in its
/// way): the run does not go on over it.
fn not_removed(p: &Path, e: std::io::Error) -> anyhow::Result<()> {
    bad_input(format!(
        "cannot remove {} before redoing its cell: {e}",
        p.display()
    ))
}

/// Cells a resume runs again, by id, with the state the journal had them in.
pub(super) type Redone = std::collections::BTreeMap<String, CellState>;

impl Loop<'_> {
    /// Before a resumed run continues: cells whose dbperf was killed are cleaned up and planned
    /// again, interrupted ones (and failed ones, once, unless told not to) too; what they wrote
    /// is moved aside (killed: removed, it is incomplete).
    /// Returns the cells planned again, each with the state it was found in.
    pub(super) fn recover(&mut self, j: &mut Journal) -> anyhow::Result<Redone> {
        let mut redone = Redone::new();
        for c in j.cells.iter_mut() {
            let found = c.state;
            match c.state {
                CellState::Running => {
                    if let Some(r) = &c.runner {
                        if mark::alive(r) && r.pid != std::process::id() {
                            return bad_input(format!(
                                "cell {} is being run by dbperf pid {} right now; wait for it or \
                                 stop it first",
                                c.id, r.pid
                            ));
                        }
                    }
                    self.stop_left_servers(c)?;
                    let (dirs, last) = id_parts(&c.id);
                    workdir::remove_tree(&self.req.out, &dirs, last)
                        .or_else(|e| not_removed(&self.req.out.join(&c.id), e))?;
                    if let Some(w) = c.work_dir.take() {
                        check_work_dir(&self.req.out, c, &w)?;
                        remove_cell_work(&self.req.out, &c.id)
                            .or_else(|e| not_removed(&self.req.out.join("work").join(&c.id), e))?;
                    }
                    c.state = CellState::Planned;
                    c.runner = None;
                }
                CellState::Interrupted => {
                    self.set_aside(c);
                    c.state = CellState::Planned;
                }
                // One retry of a failure; a killed attempt before or after it does not count.
                CellState::Failed if self.req.retry_failed && c.failed_attempts() < 2 => {
                    self.set_aside(c);
                    c.state = CellState::Planned;
                }
                _ => {}
            }
            if c.state != found {
                redone.insert(c.id.clone(), found);
            }
        }
        Ok(redone)
    }

    /// Moves an earlier attempt's results to `<out>/.attempts/<cell>.<n>`, where reports do not
    /// look but nothing is lost.
    fn set_aside(&mut self, c: &JournalCell) {
        let from = self.req.out.join(&c.id);
        if !from.exists() {
            return;
        }
        let (dirs, last) = id_parts(&c.id);
        let to = format!("{}.{}", c.id.replace('/', "."), c.attempts);
        if let Err(e) = workdir::move_aside(&self.req.out, &dirs, last, ".attempts", &to) {
            self.write_failed(format!("moving {} aside: {e}", from.display()));
        }
    }

    /// The servers a killed dbperf left running for cell `c`: each is stopped (SIGKILL to its
    /// process group) only when it is the very process the journal recorded (pid, boot, start
    /// time, owner and command line, checked again at the signal through
    /// `Identity::signal_group`), runs as a user other than root (dbperf never runs a server as
    /// root), and was started on a data directory inside the cell's work directory, which its
    /// command line names. The journal is a file anyone who can write the run directory can
    /// edit: an entry naming another process, or a directory elsewhere, is refused.
    fn stop_left_servers(&mut self, c: &mut JournalCell) -> anyhow::Result<()> {
        let work = self.req.cell_work(&c.id, &c.target, &c.axes);
        for s in std::mem::take(&mut c.servers) {
            let datadir = Path::new(&s.datadir);
            if !lexically_inside(datadir, &work) {
                return bad_input(format!(
                    "{} names {} as the data directory of a server of cell {}, which is not inside the cell's work directory {}; the journal was edited, so dbperf stops nothing and resumes nothing",
                    self.req.out.join(campaign::JOURNAL).display(),
                    crate::untrusted::shown(&s.datadir),
                    c.id,
                    work.display()
                ));
            }
            // Gone, or its pid now holds another process: nothing to stop.
            let Some(now) = mark::now(&s.process) else {
                continue;
            };
            if now.uid == 0 || !now.mentions(datadir) {
                return bad_input(format!(
                    "{} names pid {} as the server of cell {} on {}, but that process {}; the journal was edited, so dbperf stops nothing and resumes nothing",
                    self.req.out.join(campaign::JOURNAL).display(),
                    now.pid,
                    c.id,
                    datadir.display(),
                    if now.uid == 0 {
                        "runs as root"
                    } else {
                        "was not started on that directory"
                    }
                ));
            }
            if now.signal_group(libc::SIGKILL) {
                self.events.note(
                    &c.target,
                    &Note::LeftoverStopped(format!(
                        "pid {} (data directory {}), left by a dbperf that was killed",
                        now.pid, s.datadir
                    )),
                );
            }
        }
        Ok(())
    }
}
