//! A campaign's host settings as axes (`read_ahead_kb`, `io_scheduler`): applied to the block
//! devices under a cell's data before it runs and put back exactly after it, through `dbperf
//! host tune`'s machinery and a state file of the run's own. Put back when the cell ends however
//! it ends, by a guard process when dbperf is killed (SIGKILL included: the guard reads a pipe
//! whose end dbperf holds, and undoes the state file when it closes), and on `--resume` if a
//! state file was left all the same.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use crate::error::bad_input;
use crate::host::{tune, Roots};

/// The state file of a run's host settings, in its run directory.
pub const STATE_FILE: &str = ".host-axes.json";

/// One combination of host settings a cell runs under.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostSetting {
    pub read_ahead_kb: Option<u64>,
    pub scheduler: Option<String>,
}

impl HostSetting {
    /// Its values as a cell's axes.
    pub fn axes(&self) -> BTreeMap<String, String> {
        let mut a = BTreeMap::new();
        if let Some(kb) = self.read_ahead_kb {
            a.insert("read_ahead_kb".to_string(), kb.to_string());
        }
        if let Some(s) = &self.scheduler {
            a.insert("io_scheduler".to_string(), s.clone());
        }
        a
    }

    fn request(&self, paths: Vec<PathBuf>) -> tune::Request {
        tune::Request {
            read_ahead_kb: self.read_ahead_kb,
            scheduler: self.scheduler.clone(),
            paths,
            ..tune::Request::default()
        }
    }
}

/// Every combination of the given read-ahead values and schedulers; none without either.
pub fn combinations(read_ahead: &[u64], schedulers: &[String]) -> Vec<HostSetting> {
    let mut out = Vec::new();
    let ra: Vec<Option<u64>> = if read_ahead.is_empty() {
        vec![None]
    } else {
        read_ahead.iter().map(|&k| Some(k)).collect()
    };
    let sc: Vec<Option<String>> = if schedulers.is_empty() {
        vec![None]
    } else {
        schedulers.iter().cloned().map(Some).collect()
    };
    for r in &ra {
        for s in &sc {
            if r.is_some() || s.is_some() {
                out.push(HostSetting {
                    read_ahead_kb: *r,
                    scheduler: s.clone(),
                });
            }
        }
    }
    out
}

/// Before anything runs: every combination can be set on the devices under `dir` (the run's
/// work directory), by a root dbperf (bad input otherwise). Nothing is written.
pub fn check(roots: &Roots, settings: &[HostSetting], dir: &Path) -> anyhow::Result<()> {
    if settings.is_empty() {
        return Ok(());
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root && roots.sys == Path::new("/sys") {
        return bad_input(
            "read_ahead_kb and io_scheduler sweeps change block device settings under /sys, \
             which needs root: run dbperf as root (or drop the sweep)",
        );
    }
    let scratch = dir.join(STATE_FILE);
    for s in settings {
        tune::tune(roots, &s.request(vec![dir.to_path_buf()]), &scratch, true)?;
    }
    Ok(())
}

/// A host setting in force for a cell, and the guard that puts it back if dbperf dies.
pub struct Applied {
    roots: Roots,
    state_file: PathBuf,
    guard: Option<Child>,
}

/// Applies `s` to the devices under `work`, saving what they had in `state_file` first, and
/// starts the guard.
pub fn apply(
    roots: &Roots,
    s: &HostSetting,
    work: &Path,
    state_file: &Path,
) -> anyhow::Result<Applied> {
    tune::tune(
        roots,
        &s.request(vec![work.to_path_buf()]),
        state_file,
        false,
    )?;
    let guard = start_guard(roots, state_file);
    Ok(Applied {
        roots: roots.clone(),
        state_file: state_file.to_path_buf(),
        guard,
    })
}

impl Applied {
    /// Puts the devices back as they were, then lets the guard go.
    pub fn restore(mut self) -> anyhow::Result<()> {
        let r = put_back(&self.roots, &self.state_file);
        if let Some(mut g) = self.guard.take() {
            // Closing its pipe ends it: the state file is gone, so it has nothing to do.
            drop(g.stdin.take());
            let _ = g.wait();
        }
        r
    }
}

/// Undoes a state file of the run's, if there is one (a cell's dbperf was killed before its
/// guard could).
pub fn put_back(roots: &Roots, state_file: &Path) -> anyhow::Result<()> {
    if std::fs::symlink_metadata(state_file).is_err() {
        return Ok(());
    }
    tune::undo(roots, state_file).map(|_| ())
}

/// `dbperf host guard`: a process of its own group (Ctrl-C at the terminal does not reach it)
/// that waits for its standard input to close, which happens when dbperf ends, whatever way.
/// None when it cannot start: the cell still restores, only a killed dbperf would not.
fn start_guard(roots: &Roots, state_file: &Path) -> Option<Child> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().ok()?;
    std::process::Command::new(exe)
        .args(["host", "guard", "--state-file"])
        .arg(state_file)
        .arg("--sysfs-root")
        .arg(&roots.sys)
        .arg("--procfs-root")
        .arg(&roots.proc)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()
}

/// The guard's body: blocks until its standard input ends, then puts back what the state file
/// still holds.
pub fn guard(roots: &Roots, state_file: &Path) -> anyhow::Result<()> {
    let mut buf = [0u8; 64];
    let mut stdin = std::io::stdin();
    while matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
    put_back(roots, state_file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinations_cover_every_pair_and_name_their_axes() {
        assert!(combinations(&[], &[]).is_empty());
        let c = combinations(&[128, 4096], &["none".into()]);
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].axes()["read_ahead_kb"], "4096");
        assert_eq!(c[1].axes()["io_scheduler"], "none");
    }
}
