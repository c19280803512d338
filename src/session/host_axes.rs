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
use crate::host::{block, tune, Roots};

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

/// Before anything runs: every combination can be set on the devices under `dir` (where the
/// cells' data will be), by a root dbperf (bad input otherwise). Nothing is written.
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

/// Locks on the devices a run sweeps, held for the whole run: two runs sweeping the same disk
/// would each measure under the other's value and save the other's value as the one to put
/// back, so the second is refused.
pub struct DeviceLocks {
    _held: Vec<super::lock::RunLock>,
}

/// Takes a lock for every device under `dir` (none without a host sweep), in the state
/// directory's `host-axes/`, or refuses naming the dbperf that holds one.
pub fn lock_devices(
    roots: &Roots,
    settings: &[HostSetting],
    dir: &Path,
) -> anyhow::Result<DeviceLocks> {
    let mut held = Vec::new();
    if settings.is_empty() {
        return Ok(DeviceLocks { _held: held });
    }
    let state = crate::server::registry::dir()?;
    let locks = state.parent().unwrap_or(&state).join("host-axes");
    crate::safe_fs::make_dir_all(&locks, crate::safe_fs::Also::Nobody)?;
    let mut names: Vec<String> = block::data_dir(roots, dir)
        .devices
        .into_iter()
        .map(|d| d.name)
        .filter(|n| crate::untrusted::plain_name(n))
        .collect();
    names.sort();
    names.dedup();
    // A fixture tree's devices are not the host's: their locks are apart.
    let prefix = match roots.sys == Path::new("/sys") {
        true => String::new(),
        false => {
            use sha2::Digest;
            let digest = sha2::Sha256::digest(roots.sys.as_os_str().as_encoded_bytes());
            format!(
                "fixture-{:02x}{:02x}{:02x}{:02x}-",
                digest[0], digest[1], digest[2], digest[3]
            )
        }
    };
    for name in names {
        let busy = |who: &str| {
            format!(
                "{who} is sweeping read-ahead or the I/O scheduler of {name} right now; two \
                 sweeps of one device would measure under each other's settings: wait for it \
                 to end"
            )
        };
        held.push(super::lock::take_named(
            &locks,
            &format!("{prefix}{name}.lock"),
            &busy,
        )?);
    }
    Ok(DeviceLocks { _held: held })
}

/// A host setting in force for a cell, and the guard that puts it back if dbperf dies.
pub struct Applied {
    roots: Roots,
    state_file: PathBuf,
    guard: Result<Child, String>,
}

/// Starts the guard, then applies `s` to the devices under `work`, saving what they had in
/// `state_file` first. The guard comes first so that from the first write on a dbperf killed
/// by any signal is covered.
pub fn apply(
    roots: &Roots,
    s: &HostSetting,
    work: &Path,
    state_file: &Path,
) -> anyhow::Result<Applied> {
    let applied = Applied {
        roots: roots.clone(),
        state_file: state_file.to_path_buf(),
        guard: start_guard(roots, state_file),
    };
    let request = s.request(vec![work.to_path_buf()]);
    match tune::tune(roots, &request, state_file, false) {
        Ok(_) => Ok(applied),
        Err(e) => {
            // tune put back what it wrote; this ends the guard (and retries if it could not).
            let _ = applied.restore();
            Err(e)
        }
    }
}

impl Applied {
    /// Why no guard watches this cell, if none does: a dbperf killed in it would leave the
    /// setting for `--resume` or `dbperf host undo` to put back.
    pub fn unguarded(&self) -> Option<&str> {
        self.guard.as_ref().err().map(String::as_str)
    }

    /// Puts the devices back as they were, then lets the guard go.
    pub fn restore(mut self) -> anyhow::Result<()> {
        let r = put_back(&self.roots, &self.state_file).map(|_| ());
        if let Ok(g) = self.guard.as_mut() {
            // Closing its pipe ends it: the state file is gone, so it has nothing to do.
            drop(g.stdin.take());
            let _ = g.wait();
        }
        r
    }
}

/// Undoes a state file a killed dbperf left, if there is one, and says what it did. Only a
/// file of this boot naming block devices' queue settings is undone (it is root's own, in the
/// run's directory, and still: a copied or edited one must not make root write elsewhere); one
/// from before a reboot is removed, since the reboot put every device back already.
pub fn put_back(roots: &Roots, state_file: &Path) -> anyhow::Result<Vec<String>> {
    let Some(state) = tune::load_state(state_file)? else {
        return Ok(Vec::new());
    };
    let now = tune::boot_id(roots);
    if state.boot_id.is_some() && now.is_some() && state.boot_id != now {
        tune::discard_state(state_file)?;
        return Ok(vec![format!(
            "{} was saved before the host rebooted, which gave every device its boot settings: \
             nothing to put back, removed it",
            state_file.display()
        )]);
    }
    Ok(tune::undo_in(roots, state_file, tune::Scope::BlockQueues)?.lines)
}

/// `dbperf host guard`: a process of its own group (Ctrl-C at the terminal does not reach it)
/// that waits for its standard input to close, which happens when dbperf ends, whatever way.
/// It runs this very binary through /proc/self/exe, which stays valid when the file was
/// replaced or removed since dbperf started. The error says why it could not start.
fn start_guard(roots: &Roots, state_file: &Path) -> Result<Child, String> {
    use std::os::unix::process::CommandExt;
    std::process::Command::new("/proc/self/exe")
        .arg0("dbperf")
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
        .map_err(|e| format!("cannot start dbperf's guard process: {e}"))
}

/// The guard's body: blocks until its standard input ends, then puts back what the state file
/// still holds.
pub fn guard(roots: &Roots, state_file: &Path) -> anyhow::Result<()> {
    let mut buf = [0u8; 64];
    let mut stdin = std::io::stdin();
    while matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
    put_back(roots, state_file).map(|_| ())
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
