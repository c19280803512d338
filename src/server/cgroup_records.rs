//! The cgroups dbperf made for memory caps, as its server registry records them: one file per
//! cgroup in the registry's `cgroups/` directory (`<pid>-<start>-<n>.json` of the dbperf that
//! made it), written before the cgroup is made. So a dbperf killed at any moment leaves no
//! cgroup of its own that no record names, and the sweep (cgroup_sweep.rs) removes only what a
//! record of this user's names, never a cgroup for its name (docs/security.md, promise 9).
//!
//! A cgroup is always made new (mkdirat, which fails when anything has the name, a link
//! included): a directory of that name someone else made is never taken over, the next name is
//! tried, and after [`NAMES`] of them the cap is refused with a sentence.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::identity::Identity;
use crate::host::sysfs;
use crate::safe_fs::{self, entry::EntryStat, Also, Dir};

/// How many names a cgroup may get: `dbperf-<base>`, then `-2` to `-8`.
pub const NAMES: u32 = 8;

/// The most of a record file dbperf reads (it writes about 1 KiB).
const RECORD_MAX: u64 = 64 * 1024;

const WHAT: &str = "a cgroup record of the server registry";

/// How far from its record's time a cgroup recorded but never said to be made may have been
/// made to be the one its dbperf made (seconds before, after): the two are a system call apart.
const MADE_WITHIN: (i64, i64) = (2, 10);

/// The directory a record's dbperf made, as the kernel tells it apart from a later one of the
/// same name: cgroupfs never gives a removed cgroup's inode number to another while the kernel
/// runs (kernfs numbers carry a generation on 64-bit hosts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirId {
    pub dev: u64,
    pub ino: u64,
}

/// One cgroup dbperf made (or was about to make).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub schema: u32,
    /// The cgroup's directory, directly under the memory controller's root.
    pub path: String,
    /// Who made it: the effective uid of the dbperf that made it.
    pub uid: u32,
    /// The dbperf that made it: while it runs the cgroup is its own, empty from when it is made
    /// until its server joins it.
    pub owner: Identity,
    /// When the record was written, seconds since the epoch: a moment before the cgroup was
    /// made.
    pub recorded_unix_s: i64,
    /// The directory made, once it was; None when its dbperf was killed between making the
    /// cgroup and saying so (or before making it).
    #[serde(default)]
    pub made: Option<DirId>,
}

impl Record {
    /// The cgroup's name when the record names a `dbperf-<plain name>` directly under `root`;
    /// None for anything else (nothing dbperf would make).
    pub fn name_under(&self, root: &Path) -> Option<&str> {
        let path = Path::new(&self.path);
        let name = path.file_name()?.to_str()?;
        let plain = name
            .strip_prefix("dbperf-")
            .is_some_and(crate::untrusted::plain_name);
        (path.parent() == Some(root) && plain).then_some(name)
    }

    /// Whether `st` is the directory this record's dbperf made: the one it recorded, or, when it
    /// was killed before recording it, a directory made a moment after the record.
    pub fn is_made(&self, st: &EntryStat) -> bool {
        let when = self.recorded_unix_s - MADE_WITHIN.0..=self.recorded_unix_s + MADE_WITHIN.1;
        st.is_dir
            && match self.made {
                Some(id) => id.dev == st.dev && id.ino == st.ino,
                None => when.contains(&st.mtime_s),
            }
    }
}

/// Why a record file was not read.
#[derive(Debug)]
pub enum Unread {
    /// Another user's, or one others can change: not acted on, whatever it says.
    NotOwn(String),
    /// Not a record: cut short, not JSON, gone, or naming another user.
    Damaged(String),
}

/// The records' directory (the registry's `cgroups/`, private like the registry).
#[derive(Debug, Clone)]
pub struct Records {
    dir: PathBuf,
}

/// Tells apart the records one dbperf writes.
static NEXT: AtomicU64 = AtomicU64::new(1);

impl Records {
    /// The records in `dir`, made (0700) where absent.
    pub fn open(dir: &Path) -> anyhow::Result<Records> {
        let d = safe_fs::make_dir_all(dir, Also::Nobody)?;
        Records::private(d)
    }

    /// The records in `dir`; None when there is no such directory.
    pub fn existing(dir: &Path) -> Option<anyhow::Result<Records>> {
        dir.is_dir()
            .then(|| safe_fs::open_dir(dir, Also::Nobody).and_then(Records::private))
    }

    fn private(d: Dir) -> anyhow::Result<Records> {
        // Read access someone gave others is taken away again, through the open directory.
        if d.metadata()?.mode() & 0o077 != 0 {
            d.set_mode(0o700)?;
        }
        Ok(Records {
            dir: d.path().to_path_buf(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn handle(&self) -> anyhow::Result<Dir> {
        safe_fs::open_dir(&self.dir, Also::Nobody)
    }

    /// Writes `r` as a new record (whole or not at all) and returns its file.
    pub fn add(&self, r: &Record) -> anyhow::Result<PathBuf> {
        let name = format!(
            "{}-{}-{}.json",
            r.owner.pid,
            r.owner.start_time_ticks,
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let at = self.dir.join(&name);
        self.replace(&at, r)?;
        Ok(at)
    }

    /// Writes `r` over the record `at` (a reader sees the old one or the new one whole).
    pub fn replace(&self, at: &Path, r: &Record) -> anyhow::Result<()> {
        let name = at
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| anyhow::anyhow!("{} is no record's name", at.display()))?;
        let mut text = serde_json::to_vec_pretty(r)?;
        text.push(b'\n');
        self.handle()?
            .write_atomic(name, &text)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", at.display()))
    }

    /// Removes the record `at` (its cgroup is gone, or was never made).
    pub fn forget(&self, at: &Path) {
        if let (Ok(d), Some(n)) = (self.handle(), at.file_name()) {
            let _ = d.remove(n);
        }
    }

    /// Every record file, read (one that could not be, with why): never through a link, at
    /// most [`RECORD_MAX`] bytes, and only one this user wrote (`safe_fs::acting_record`).
    pub fn list(&self) -> Vec<(PathBuf, Result<Record, Unread>)> {
        let names = self
            .handle()
            .and_then(|d| Ok(d.names()?))
            .unwrap_or_default();
        names
            .iter()
            .filter_map(|n| n.to_str())
            .filter(|n| !n.starts_with('.') && n.ends_with(".json"))
            .map(|n| {
                let at = self.dir.join(n);
                let read = read_record(&at);
                (at, read)
            })
            .collect()
    }
}

fn read_record(at: &Path) -> Result<Record, Unread> {
    let bytes = match safe_fs::acting_record::read(at, RECORD_MAX, WHAT) {
        Ok(Some(b)) => b,
        Ok(None) => return Err(Unread::Damaged("it is gone".into())),
        Err(e) if crate::error::is_not_own_record(&e) => {
            return Err(Unread::NotOwn(format!("{e:#}")))
        }
        Err(e) => return Err(Unread::Damaged(format!("{e:#}"))),
    };
    let r: Record = serde_json::from_slice(&bytes).map_err(|e| Unread::Damaged(e.to_string()))?;
    let me = euid();
    if r.uid != me {
        return Err(Unread::Damaged(format!(
            "it says user {} made its cgroup, not {}, who wrote it",
            r.uid, me
        )));
    }
    Ok(r)
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// How a cgroup is made under the controller's root (the kernel makes its files with it):
/// [`Dir::make_new_dir`]; tests give one that makes a fixture's files too.
pub type Mkdir<'a> = &'a dyn Fn(&Dir, &str) -> std::io::Result<()>;

/// What a server's cgroup is named after: its target and port (unique among the servers
/// running), as a plain name.
pub fn base(target: &str, port: u16) -> String {
    let t: String = target
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    // A cgroup's name is at most 255 bytes: a long target name is cut (the port tells apart).
    let t: String = t.trim_start_matches('.').chars().take(200).collect();
    format!("{t}-{port}")
}

/// The names a cgroup of `base` may get, in the order tried.
pub fn names(base: &str) -> Vec<String> {
    (1..=NAMES)
        .map(|n| match n {
            1 => format!("dbperf-{base}"),
            n => format!("dbperf-{base}-{n}"),
        })
        .collect()
}

/// A cgroup made new, and its record.
#[derive(Debug, Clone)]
pub struct Made {
    pub name: String,
    pub record: Record,
    /// The record's file.
    pub at: PathBuf,
}

/// Makes a new cgroup of `base` under `root`, recorded in `records` before it is made: the
/// first of [`names`] that nothing has. A name anything has (a cgroup someone made, a link) is
/// never used; when all are taken, bad input with a sentence.
pub fn make_fresh(records: &Records, root: &Dir, base: &str, mkdir: Mkdir) -> anyhow::Result<Made> {
    let owner = Identity::this_process()
        .ok_or_else(|| anyhow::anyhow!("cannot read dbperf's own process in /proc"))?;
    let tried = names(base);
    for name in &tried {
        if root.has(name) {
            continue;
        }
        if let Some(made) = make_one(records, root, name, &owner, mkdir)? {
            return Ok(made);
        }
    }
    crate::error::bad_input(format!(
        "the cgroups {} to {} under {} all exist, and dbperf takes over no cgroup it did not \
         make (each server gets a new one): remove those nobody uses, or give the target \
         another name",
        tried[0],
        tried[tried.len() - 1],
        root.path().display()
    ))
}

/// One name: recorded, then made, then the record says which directory was made. None when
/// the name was taken between the look and the making.
fn make_one(
    records: &Records,
    root: &Dir,
    name: &str,
    owner: &Identity,
    mkdir: Mkdir,
) -> anyhow::Result<Option<Made>> {
    let mut record = Record {
        schema: 1,
        path: root.path().join(name).display().to_string(),
        uid: euid(),
        owner: owner.clone(),
        recorded_unix_s: now_s(),
        made: None,
    };
    let at = records.add(&record)?;
    if let Err(e) = mkdir(root, name) {
        records.forget(&at);
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            return Ok(None);
        }
        anyhow::bail!("cannot make the cgroup {}: {e}", record.path);
    }
    let saved = root
        .stat_entry(name)
        .map_err(anyhow::Error::from)
        .and_then(|st| {
            record.made = Some(DirId {
                dev: st.dev,
                ino: st.ino,
            });
            records.replace(&at, &record)
        });
    if let Err(e) = saved {
        // Left to the sweep (its record names it) when it cannot be removed now.
        if root.remove_empty_dir(name).is_ok() {
            records.forget(&at);
        }
        return Err(e.context(format!("cannot record the cgroup {}", record.path)));
    }
    Ok(Some(Made {
        name: name.to_string(),
        record,
        at,
    }))
}

fn now_s() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The pids in a cgroup (none when it cannot be read).
pub fn tasks(dir: &Path) -> Vec<u32> {
    sysfs::read(&dir.join("cgroup.procs"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// What removing a recorded cgroup came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    Removed,
    /// Nothing of its name is there.
    Gone,
    /// A directory of its name is there that its dbperf did not make: left alone.
    NotOurs,
    /// It holds a process or a child cgroup (its server, or someone's, still uses it), or it
    /// could not be looked at: left.
    Held,
}

/// Removes the cgroup `name` under `root` that `record` names, when it is the very directory
/// its dbperf made and holds no process (rmdir, which also refuses one with a child cgroup).
pub fn remove_made(root: &Dir, name: &str, record: &Record) -> Removal {
    match root.stat_entry(name) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Removal::Gone,
        Err(_) => return Removal::Held,
        Ok(st) if !record.is_made(&st) => return Removal::NotOurs,
        Ok(_) => {}
    }
    if !tasks(&root.path().join(name)).is_empty() {
        return Removal::Held;
    }
    match root.remove_empty_dir(name) {
        Ok(()) => Removal::Removed,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Removal::Gone,
        Err(_) => Removal::Held,
    }
}
