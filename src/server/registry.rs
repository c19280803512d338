//! The server registry: one small JSON file per managed server in a private state directory, so
//! that the record of a server outlives the dbperf that started it. A run's servers die with
//! dbperf (the parent-death signal; one stopped with SIGSTOP too, as the kernel continues an
//! orphaned process group that has a stopped member), but a `dbperf server start` killed before
//! it handed its server over leaves a server that has no death signal at all, a server that
//! stops just after dbperf died keeps its death signal pending, and a server stuck in the
//! kernel may outlive its signal. Every `dbperf run` and `dbperf server stop`
//! sweeps the registry first: such leftovers are stopped, after checking that each pid is still
//! held by the very process recorded ([`Identity`]).
//!
//! Where: `$DBPERF_STATE_DIR/servers`, else `$XDG_STATE_HOME/dbperf/servers`, else
//! `~/.local/state/dbperf/servers`; root without `XDG_STATE_HOME` uses
//! `/var/lib/dbperf/servers`. The directory is mode 0700 and its files 0600; one another user
//! owns or can write to, or reached through such directories or a link of another user's, is
//! refused (src/safe_fs.rs), and entries are read without following links, 64 KiB at most.
//! Its `cgroups/` holds the records of memory caps' cgroups (cgroup_records.rs).

use crate::engines::Engine;
use std::fs;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::cgroup_records::Records;
use super::cgroup_sweep::{self, Ignored};
use super::identity::Identity;
use crate::safe_fs::{self, Also};

/// Overrides where the registry lives (tests give every test its own).
pub const STATE_DIR_ENV: &str = "DBPERF_STATE_DIR";

/// What dbperf knows about one server it started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub schema: u32,
    pub target: String,
    /// postgres, mariadb or mysql.
    pub engine: String,
    pub datadir: String,
    pub port: u16,
    pub socket: String,
    pub log: String,
    pub started_at: String,
    /// The server's main process (the PostgreSQL postmaster, mysqld): it leads its process
    /// group, which holds everything the server forked.
    pub server: Identity,
    /// The dbperf that started it.
    pub owner: Identity,
    /// Handed over to the user by `dbperf server start`: left running on purpose, never a
    /// leftover, stopped by `dbperf server stop` only.
    pub may_outlive: bool,
    /// The cgroup of its memory cap (`--server-memory`), for a person to find: what removes a
    /// cgroup is its own record (`cgroups/`, cgroup_records.rs), never this field. Absent in
    /// older entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
}

/// The registry directory for this user (see the module's documentation).
pub fn dir() -> anyhow::Result<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    locate(var, super::process::running_as_root()).ok_or_else(|| {
        anyhow::anyhow!(
            "no place for dbperf's server registry: HOME is not set; set {STATE_DIR_ENV} to a \
             private directory"
        )
    })
}

fn locate(var: impl Fn(&str) -> Option<PathBuf>, root: bool) -> Option<PathBuf> {
    let state = if let Some(d) = var(STATE_DIR_ENV) {
        d
    } else if let Some(x) = var("XDG_STATE_HOME") {
        x.join("dbperf")
    } else if root {
        PathBuf::from("/var/lib/dbperf")
    } else {
        var("HOME")?.join(".local/state/dbperf")
    };
    Some(std::path::absolute(state.join("servers")).unwrap_or_else(|_| state.join("servers")))
}

/// The file of the server `server`: named after its pid and start time, so a reused pid gets
/// another file.
pub fn path_of(dir: &Path, server: &Identity) -> PathBuf {
    dir.join(format!("{}-{}.json", server.pid, server.start_time_ticks))
}

/// Creates the registry directory (0700, owned by this user) or checks an existing one: a link
/// in its place, a directory another user owns or can write to, or one reached through such
/// directories is refused, since dbperf signals the processes its entries name. Read access
/// someone gave others is taken away again (through the open directory, never by path).
fn private(dir: &Path) -> anyhow::Result<()> {
    let d = safe_fs::make_dir_all(dir, Also::Nobody).map_err(|e| refused(dir, e))?;
    tighten(&d)
}

fn check_private(dir: &Path) -> anyhow::Result<()> {
    let d = safe_fs::open_dir(dir, Also::Nobody).map_err(|e| refused(dir, e))?;
    tighten(&d)
}

fn refused(dir: &Path, e: anyhow::Error) -> anyhow::Error {
    anyhow::anyhow!(
        "the server registry {} cannot be used: {e:#}; set {STATE_DIR_ENV} to a private \
         directory",
        dir.display()
    )
}

fn tighten(d: &safe_fs::Dir) -> anyhow::Result<()> {
    if d.metadata()?.mode() & 0o077 != 0 {
        d.set_mode(0o700)?;
    }
    Ok(())
}

/// Writes `entry` atomically (a new 0600 file renamed into place) and returns its path.
pub fn record(entry: &Entry) -> anyhow::Result<PathBuf> {
    let dir = dir()?;
    private(&dir)?;
    let path = path_of(&dir, &entry.server);
    write_atomic(&dir, &path, entry)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

fn write_atomic(dir: &Path, path: &Path, entry: &Entry) -> std::io::Result<()> {
    let mut text = serde_json::to_vec_pretty(entry).map_err(std::io::Error::other)?;
    text.push(b'\n');
    // tempfile creates the file new (O_EXCL) with mode 0600.
    let mut f = tempfile::Builder::new()
        .prefix(".new-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    f.write_all(&text)?;
    f.as_file().sync_all()?;
    f.persist(path).map_err(|e| e.error)?;
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Removes a server's entry (it was stopped). A missing file is no error.
pub fn forget(path: &Path) {
    let _ = fs::remove_file(path);
}

/// Removes the entry of the server `server`, wherever its file is named (it has stopped), and
/// the recorded cgroups whose dbperf and server are gone, its memory cap's among them.
pub fn forget_server(server: &Identity) {
    let Ok(dir) = dir() else { return };
    for (path, entry) in entries(&dir) {
        if entry.ok().is_some_and(|e| e.server.same_start(server)) {
            forget(&path);
        }
    }
    forget(&path_of(&dir, server));
    sweep_cgroups(&dir);
}

/// The records of the cgroups dbperf makes for memory caps (cgroup_records.rs): the registry's
/// `cgroups/`, private like it. Each is written before its cgroup is made.
pub fn cgroup_records() -> anyhow::Result<Records> {
    let dir = dir()?;
    private(&dir)?;
    Records::open(&dir.join(CGROUPS)).map_err(|e| refused(&dir.join(CGROUPS), e))
}

/// The registry's directory of cgroup records.
const CGROUPS: &str = "cgroups";

/// The cgroup sweep (cgroup_sweep.rs) over this registry's records, what it did not act on as
/// sweep warnings.
fn sweep_cgroups(dir: &Path) -> Vec<Swept> {
    let records = match Records::existing(&dir.join(CGROUPS)) {
        None => return Vec::new(),
        Some(Ok(r)) => r,
        Some(Err(e)) => {
            return vec![Swept::Damaged {
                path: dir.join(CGROUPS),
                why: format!("{e:#}"),
            }]
        }
    };
    cgroup_sweep::sweep(&records, Path::new("/sys"))
        .into_iter()
        .map(|i| match i {
            Ignored::Damaged { path, why } => Swept::Damaged { path, why },
            Ignored::NotOwn { path, why } => Swept::NotOwn { path, why },
        })
        .collect()
}

/// The most of an entry file dbperf reads (it writes about 1 KiB).
const ENTRY_MAX: u64 = 64 * 1024;

/// Every entry file in `dir`, read (a damaged one as the reason it could not be): never
/// through a link or a second name, at most [`ENTRY_MAX`] bytes each. An entry names processes
/// dbperf signals and a cgroup it removes, so it is a record that drives an action: one this
/// user did not write is not read (`safe_fs::acting_record`), and is told apart as such.
fn entries(dir: &Path) -> Vec<(PathBuf, Result<Entry, Unread>)> {
    let Ok(list) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in list.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with('.') || !name.ends_with(".json") {
            continue;
        }
        out.push((path.clone(), read_entry(&path)));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Why an entry file was not read.
#[derive(Debug)]
enum Unread {
    /// Another user's, or one others can change: not acted on, whatever it says.
    NotOwn(String),
    /// Not an entry: cut short, not JSON, gone.
    Damaged(String),
}

fn read_entry(path: &Path) -> Result<Entry, Unread> {
    let what = "a server registry entry";
    let bytes = match safe_fs::acting_record::read(path, ENTRY_MAX, what) {
        Ok(Some(b)) => b,
        Ok(None) => return Err(Unread::Damaged("it is gone".into())),
        Err(e) if crate::error::is_not_own_record(&e) => {
            return Err(Unread::NotOwn(format!("{e:#}")))
        }
        Err(e) => return Err(Unread::Damaged(format!("{e:#}"))),
    };
    serde_json::from_slice::<Entry>(&bytes).map_err(|e| Unread::Damaged(e.to_string()))
}

/// How a recorded server ended when dbperf stopped it.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// It ended on the signal it was sent, after that many seconds.
    Stopped(f64),
    /// It did not end in time and its process group was killed.
    Killed(u64),
    /// SIGKILL did not end it either (it is stuck in the kernel, e.g. on a dead disk).
    StillRunning,
    /// The pid is no longer held by the recorded process: nothing was signalled.
    NotRunning,
}

impl Stop {
    pub fn describe(&self) -> String {
        match self {
            Stop::Stopped(s) => format!("stopped in {s:.1} s"),
            Stop::Killed(t) => format!("killed after {t} s without stopping"),
            Stop::StillRunning => "still running after SIGKILL".into(),
            Stop::NotRunning => "was not running".into(),
        }
    }
}

/// Stops a server dbperf recorded but is not the parent of: `first` to the very process
/// recorded, a continue signal to its group and its descendants (a stopped server acts on its
/// signal only once it runs), then SIGKILL to them after `timeout`. Nothing is signalled once the pid is held
/// by another process.
pub fn stop_recorded(server: &Identity, first: i32, timeout: Duration) -> Stop {
    let start = Instant::now();
    if !server.signal(first) {
        return Stop::NotRunning;
    }
    server.signal_group(libc::SIGCONT);
    server.signal_descendants(libc::SIGCONT);
    let gone = |limit: Duration| {
        while start.elapsed() < limit {
            if !server.is_alive_same() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        !server.is_alive_same()
    };
    if gone(timeout) {
        return Stop::Stopped(start.elapsed().as_secs_f64());
    }
    // The descendants first: once the leader dies they become init's and are not found.
    server.signal_descendants(libc::SIGKILL);
    server.signal_group(libc::SIGKILL);
    if gone(timeout + Duration::from_secs(10)) {
        Stop::Killed(timeout.as_secs())
    } else {
        Stop::StillRunning
    }
}

/// What a sweep did, one sentence each for the person running dbperf.
#[derive(Debug, Clone, PartialEq)]
pub enum Swept {
    /// A leftover (its dbperf is gone, it was not handed over) was stopped.
    Stopped { entry: Box<Entry>, how: Stop },
    /// An entry that could not be read was left alone.
    Damaged { path: PathBuf, why: String },
    /// An entry another user wrote (or can change) was left alone: it is not acted on.
    NotOwn { path: PathBuf, why: String },
}

impl Swept {
    pub fn sentence(&self) -> String {
        match self {
            Swept::Stopped { entry, how } => format!(
                "{} ({}, pid {}, data directory {}), started by dbperf pid {} which is gone: {}",
                entry.target,
                entry.engine,
                entry.server.pid,
                entry.datadir,
                entry.owner.pid,
                how.describe()
            ),
            Swept::Damaged { path, why } => {
                format!(
                    "ignored a damaged server registry file {}: {why}",
                    path.display()
                )
            }
            Swept::NotOwn { why, .. } => format!("ignored a server registry file: {why}"),
        }
    }
}

/// The signal a leftover gets: what the kernel would have sent it when its dbperf died (its
/// engine's stop that does not wait; SIGKILL for an engine the entry names wrongly).
fn leftover_signal(engine: &str) -> i32 {
    Engine::parse(engine)
        .and_then(Engine::server)
        .map_or(libc::SIGKILL, |f| f.kill_signal)
}

/// Looks for leftovers in this user's registry: entries of servers that were not handed over,
/// whose dbperf is gone and whose process is still the one recorded, are stopped; entries whose
/// process is gone are removed. A server whose dbperf still runs, or one handed over by
/// `dbperf server start`, is left alone; no pid is signalled on its number alone, and nothing
/// but registry entries and the cgroups of the registry's cgroup records (cgroup_sweep.rs) is
/// deleted.
pub fn sweep() -> Vec<Swept> {
    match dir() {
        // The cgroups after the servers: a leftover stopped leaves its cgroup empty.
        Ok(d) if d.is_dir() => [sweep_in(&d), sweep_cgroups(&d)].concat(),
        _ => Vec::new(),
    }
}

pub fn sweep_in(dir: &Path) -> Vec<Swept> {
    if let Err(e) = check_private(dir) {
        return vec![Swept::Damaged {
            path: dir.to_path_buf(),
            why: format!("{e:#}"),
        }];
    }
    let mut done = Vec::new();
    for (path, entry) in entries(dir) {
        let entry = match entry {
            Ok(e) => e,
            Err(Unread::Damaged(why)) => {
                done.push(Swept::Damaged { path, why });
                continue;
            }
            Err(Unread::NotOwn(why)) => {
                done.push(Swept::NotOwn { path, why });
                continue;
            }
        };
        if !entry.server.is_alive_same() {
            let retitled =
                Identity::of(entry.server.pid).is_some_and(|n| n.same_start(&entry.server));
            // The same process with another command line is not gone: leave its record.
            if !retitled {
                forget(&path);
            }
            continue;
        }
        if entry.may_outlive || entry.owner.is_alive_same() {
            continue;
        }
        let how = stop_recorded(
            &entry.server,
            leftover_signal(&entry.engine),
            Duration::from_secs(30),
        );
        if how != Stop::StillRunning {
            forget(&path);
        }
        done.push(Swept::Stopped {
            entry: Box::new(entry),
            how,
        });
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command};

    fn spawn(program: &str, args: &[&str]) -> (Child, Identity) {
        let child = Command::new(program)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let id = crate::server::identity::tests::exec_done(child.id(), program);
        (child, id)
    }

    fn sleeper() -> (Child, Identity) {
        spawn("sleep", &["1000"])
    }

    /// The identity of a process that has ended.
    fn gone() -> Identity {
        let (mut c, id) = sleeper();
        c.kill().unwrap();
        c.wait().unwrap();
        id
    }

    fn entry(server: Identity, owner: Identity, may_outlive: bool) -> Entry {
        Entry {
            schema: 1,
            target: "postgres.default".into(),
            engine: "postgres".into(),
            datadir: "/nowhere/data".into(),
            port: 1,
            socket: "/nowhere/run/.s.PGSQL.1".into(),
            log: "/nowhere/run/server.log".into(),
            started_at: String::new(),
            server,
            owner,
            may_outlive,
            cgroup: None,
        }
    }

    #[test]
    fn the_state_directory_is_chosen_in_order() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| PathBuf::from(v))
            }
        };
        let all = &[
            ("DBPERF_STATE_DIR", "/s"),
            ("XDG_STATE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(locate(vars(all), false), Some("/s/servers".into()));
        let xdg = &[("XDG_STATE_HOME", "/x"), ("HOME", "/h")];
        assert_eq!(locate(vars(xdg), true), Some("/x/dbperf/servers".into()));
        let home = &[("HOME", "/h")];
        assert_eq!(
            locate(vars(home), false),
            Some("/h/.local/state/dbperf/servers".into())
        );
        assert_eq!(
            locate(vars(home), true),
            Some("/var/lib/dbperf/servers".into())
        );
        assert_eq!(locate(vars(&[]), false), None);
    }

    #[test]
    fn entries_are_private_and_written_whole() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("servers");
        private(&dir).unwrap();
        let me = Identity::this_process().unwrap();
        let e = entry(me.clone(), me.clone(), false);
        let path = path_of(&dir, &me);
        write_atomic(&dir, &path, &e).unwrap();
        assert_eq!(fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        let names: Vec<_> = fs::read_dir(&dir).unwrap().flatten().collect();
        assert_eq!(names.len(), 1, "no temporary file left");
        let read = entries(&dir);
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].1.as_ref().unwrap(), &e);
        // Made readable by someone: tightened again before it is used.
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        check_private(&dir).unwrap();
        assert_eq!(fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        // Made writable by others: they could have put entries naming any process there.
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
        let e = check_private(&dir).unwrap_err().to_string();
        assert!(e.contains("can be written by other users"), "{e}");
        assert_eq!(sweep_in(&dir).len(), 1, "nothing read, one warning");
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        // A link in its place is never followed.
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        assert!(private(&link).is_err() && check_private(&link).is_err());
    }

    /// Real processes stand in for servers: the sweep stops only what it should, and never
    /// signals a pid whose process is not the one recorded.
    #[test]
    fn a_sweep_stops_leftovers_only() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("servers");
        private(&dir).unwrap();
        let me = Identity::this_process().unwrap();
        let dead = gone();
        let put = |e: &Entry| {
            let p = path_of(&dir, &e.server);
            write_atomic(&dir, &p, e).unwrap();
            p
        };
        // A leftover: its owner is gone, it was not handed over.
        let (mut left, left_id) = sleeper();
        let mut leftover = entry(left_id.clone(), dead.clone(), false);
        leftover.engine = "mariadb".into();
        let left_path = put(&leftover);
        // Its owner still runs (another dbperf at work).
        let (mut busy, busy_id) = sleeper();
        let busy_path = put(&entry(busy_id.clone(), me.clone(), false));
        // Handed over by `server start`, owner gone: the user's, not a leftover.
        let (mut kept, kept_id) = sleeper();
        let kept_path = put(&entry(kept_id.clone(), dead.clone(), true));
        // The pid is held by another process (another start time): never signalled.
        let (mut other, other_id) = sleeper();
        let mut forged = other_id.clone();
        forged.start_time_ticks -= 1;
        let forged_path = put(&entry(forged, dead.clone(), false));
        // Gone: the entry goes.
        let gone_path = put(&entry(gone(), dead.clone(), false));
        fs::write(dir.join("junk.json"), "{").unwrap();

        let swept = sweep_in(&dir);
        assert_eq!(swept.len(), 2, "{swept:#?}");
        let damaged = swept.iter().find(|s| matches!(s, Swept::Damaged { .. }));
        assert!(
            damaged.is_some_and(|d| d.sentence().contains("junk.json")),
            "{swept:#?}"
        );
        let stopped = swept.iter().find_map(|s| match s {
            Swept::Stopped { entry, how } => Some((s, entry, how)),
            _ => None,
        });
        let (s, entry, how) = stopped.expect("the leftover was stopped");
        assert_eq!(entry.server, left_id);
        assert!(matches!(how, Stop::Stopped(_)), "{how:?}");
        let s = s.sentence();
        assert!(s.contains(&format!("pid {}", left_id.pid)), "{s}");
        assert!(s.contains("which is gone: stopped in"), "{s}");
        // The MySQL family's leftover signal ended it.
        let status = left.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        assert!(!left_path.exists() && !gone_path.exists() && !forged_path.exists());
        assert!(busy_path.exists() && kept_path.exists());
        for (c, id) in [
            (&mut busy, &busy_id),
            (&mut kept, &kept_id),
            (&mut other, &other_id),
        ] {
            assert!(id.is_alive_same(), "{id:?} was signalled");
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }

    /// An entry another user wrote, or one others can change, names what dbperf would signal:
    /// it is left alone, said so, and its process is not signalled.
    #[test]
    fn a_sweep_obeys_only_entries_this_user_wrote() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("servers");
        private(&dir).unwrap();
        let (mut left, left_id) = sleeper();
        let path = path_of(&dir, &left_id);
        write_atomic(&dir, &path, &entry(left_id.clone(), gone(), false)).unwrap();
        let mut tries = vec![("can be written by other users", 0o646, None)];
        if crate::server::process::running_as_root() {
            tries.push(("belongs to nobody", 0o600, Some(65534)));
        }
        for (said, mode, owner) in tries {
            fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
            if let Some(uid) = owner {
                std::os::unix::fs::chown(&path, Some(uid), None).unwrap();
            }
            let swept = sweep_in(&dir);
            assert!(
                matches!(&swept[..], [Swept::NotOwn { path: p, .. }] if *p == path),
                "{swept:#?}"
            );
            let s = swept[0].sentence();
            assert!(s.contains(said), "{s}");
            assert!(
                s.contains("a server registry entry decides what dbperf does"),
                "{s}"
            );
            assert!(left_id.is_alive_same(), "signalled on another user's entry");
            assert!(path.exists(), "another user's entry removed");
        }
        left.kill().unwrap();
        left.wait().unwrap();
    }

    /// A stopped process with a handler (as the postmaster has for SIGQUIT) acts on its signal
    /// only once continued.
    #[test]
    fn a_stopped_leftover_is_continued_to_act_on_its_signal() {
        let script = "trap 'exit 7' TERM; echo ready; while :; do sleep 0.05; done";
        let (mut c, id) = spawn("sh", &["-c", script]);
        // Stopped only once the handler is in place.
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(c.stdout.as_mut().unwrap()),
            &mut line,
        )
        .unwrap();
        assert_eq!(line, "ready\n");
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(c.id() as i32, libc::SIGSTOP) };
        let how = stop_recorded(&id, libc::SIGTERM, Duration::from_secs(10));
        assert!(matches!(how, Stop::Stopped(_)), "{how:?}");
        assert_eq!(c.wait().unwrap().code(), Some(7), "the handler ran");
        assert_eq!(
            stop_recorded(&id, libc::SIGTERM, Duration::from_secs(1)),
            Stop::NotRunning
        );
    }
}
