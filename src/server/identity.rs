//! Which process a pid is, beyond its number. A pid is reused as soon as its process has been
//! reaped, so dbperf never signals a pid it read from a file without first checking that the
//! process now holding it is the one it recorded: same boot, same start time (clock ticks after
//! boot, field 22 of `/proc/<pid>/stat`), same owner and same command line.
//!
//! Records that outlive the dbperf that wrote them (`server.json`, the server registry, the
//! campaign journal) store an [`Identity`] and call [`Identity::is_alive_same`] before acting.

use std::fs;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

use serde::{Deserialize, Serialize};

/// A process as it was when recorded. Serialised as plain JSON fields so records stay readable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    pub pid: u32,
    /// Field 22 of `/proc/<pid>/stat`: when the process started, in clock ticks after boot.
    pub start_time_ticks: u64,
    /// `/proc/sys/kernel/random/boot_id`: start times restart from zero at every boot.
    pub boot_id: String,
    /// Real user id of the process (`Uid:` in `/proc/<pid>/status`).
    pub uid: u32,
    /// `/proc/<pid>/cmdline`, one string per argument. Servers dbperf starts keep theirs
    /// (PostgreSQL rewrites the titles of its backends, not of the postmaster).
    pub cmdline: Vec<String>,
}

impl Identity {
    /// The process holding `pid` now; None when there is none, or it is a zombie (it has exited
    /// and only waits to be reaped), or its command line cannot be read.
    pub fn of(pid: u32) -> Option<Identity> {
        Identity::of_in(Path::new("/proc"), pid)
    }

    /// Like [`Identity::of`] under another procfs root (tests use fixture trees).
    pub fn of_in(proc_root: &Path, pid: u32) -> Option<Identity> {
        let dir = proc_root.join(pid.to_string());
        let stat = fs::read_to_string(dir.join("stat")).ok()?;
        let (state, start_time_ticks) = parse_stat(&stat)?;
        if state == 'Z' || state == 'X' {
            return None;
        }
        let uid = parse_uid(&fs::read_to_string(dir.join("status")).ok()?)?;
        let cmdline = parse_cmdline(&fs::read(dir.join("cmdline")).ok()?);
        if cmdline.is_empty() {
            return None;
        }
        let boot_id = fs::read_to_string(proc_root.join("sys/kernel/random/boot_id")).ok()?;
        Some(Identity {
            pid,
            start_time_ticks,
            boot_id: boot_id.trim().to_string(),
            uid,
            cmdline,
        })
    }

    /// This dbperf process.
    pub fn this_process() -> Option<Identity> {
        Identity::of(std::process::id())
    }

    /// True when `pid` is still held by the recorded process: it exists, is not a zombie, and
    /// has the same boot, start time, owner and command line. False after a reboot, after the
    /// process exited, and when the pid now belongs to another process.
    pub fn is_alive_same(&self) -> bool {
        self.is_alive_same_in(Path::new("/proc"))
    }

    pub fn is_alive_same_in(&self, proc_root: &Path) -> bool {
        Identity::of_in(proc_root, self.pid).is_some_and(|now| now == *self)
    }

    /// Whether `other` is the same process run by the same kernel (pid, boot, start time),
    /// whatever its command line now says: a process that rewrote its title, not a reused pid.
    pub fn same_start(&self, other: &Identity) -> bool {
        self.pid == other.pid
            && self.boot_id == other.boot_id
            && self.start_time_ticks == other.start_time_ticks
    }

    /// Sends `sig` to the recorded process only if it still holds its pid; false when it does
    /// not (or the signal could not be sent). The check is made through a pidfd opened first:
    /// a pidfd keeps naming the process it was opened for, so a pid reused between the check
    /// and the signal cannot receive it.
    pub fn signal(&self, sig: i32) -> bool {
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, self.pid as libc::pid_t, 0) };
        if fd < 0 {
            // Kernels before 5.3 have no pidfd: check, then signal at once.
            let nosys = io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS);
            // SAFETY: kill has no memory-safety preconditions.
            return nosys
                && self.is_alive_same()
                && unsafe { libc::kill(self.pid as i32, sig) } == 0;
        }
        // SAFETY: the descriptor was just returned by the kernel and is owned here only.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        if !self.is_alive_same() {
            return false;
        }
        // SAFETY: a valid pidfd, a null siginfo (as kill would send) and no flags.
        let r = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                fd.as_raw_fd(),
                sig,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            )
        };
        r == 0
    }

    /// Sends `sig` to the process group the recorded process leads (a server and whatever it
    /// forked), only while that process still holds its pid and leads its group.
    pub fn signal_group(&self, sig: i32) -> bool {
        let leads = fs::read_to_string(format!("/proc/{}/stat", self.pid))
            .ok()
            .and_then(|s| parse_pgid(&s))
            == Some(self.pid);
        // SAFETY: kill has no memory-safety preconditions; a negative pid names the group.
        leads && self.is_alive_same() && unsafe { libc::kill(-(self.pid as i32), sig) } == 0
    }

    /// `sig` to every descendant of the recorded process (not itself), listed while it is
    /// still the recorded one: PostgreSQL's backends each lead their own session, so neither
    /// the server's pid nor its group reaches them. Returns how many were signalled.
    pub fn signal_descendants(&self, sig: i32) -> usize {
        if !self.is_alive_same() {
            return 0;
        }
        let mut n = 0;
        for pid in crate::metrics::proc::tree(std::path::Path::new("/proc"), self.pid)
            .per_pid
            .into_keys()
            .filter(|p| *p != self.pid)
        {
            // SAFETY: kill has no memory-safety preconditions.
            if unsafe { libc::kill(pid as i32, sig) } == 0 {
                n += 1;
            }
        }
        n
    }

    /// What holds the pid now, for messages when it is not the recorded process.
    pub fn now_describe(&self) -> String {
        match Identity::of(self.pid) {
            None => format!("no process has pid {}", self.pid),
            Some(now) if now.boot_id != self.boot_id => {
                format!(
                    "the machine rebooted; pid {} is now {}",
                    self.pid,
                    now.short()
                )
            }
            Some(now) => format!("pid {} is now another process: {}", self.pid, now.short()),
        }
    }

    /// The command line shortened for messages.
    pub fn short(&self) -> String {
        let s = self.cmdline.join(" ");
        match s.char_indices().nth(100) {
            Some((i, _)) => format!("{}...", &s[..i]),
            None => s,
        }
    }

    /// Whether any argument mentions `path` (a server's data directory).
    pub fn mentions(&self, path: &Path) -> bool {
        let p = path.to_string_lossy();
        !p.is_empty() && self.cmdline.iter().any(|a| a.contains(p.as_ref()))
    }
}

/// What holds a recorded process's pid now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The very process recorded: same boot, start time, owner and command line.
    Same,
    /// No process holds the pid, or only a zombie does.
    Gone,
    /// The recorded process by pid, boot and start time, but its owner or command line
    /// changed (a setuid, a new title): its command line now, for a message.
    Changed(String),
    /// Another process holds the pid: what it is, for a message.
    Another(String),
}

/// Whether the live process holding `recorded.pid` is the process recorded (pid, boot, start
/// time, real uid and command line all equal), the check before any signal to a pid read from
/// a file. It says nothing about who wrote the record: a caller must trust the file first.
/// Signalling re-checks through a pidfd ([`Identity::signal`]), so a pid reused after this
/// answer is not signalled either.
pub fn verify(recorded: &Identity) -> Verdict {
    match Identity::of(recorded.pid) {
        None => Verdict::Gone,
        Some(now) if now == *recorded => Verdict::Same,
        Some(now) if recorded.same_start(&now) => Verdict::Changed(now.short()),
        Some(_) => Verdict::Another(recorded.now_describe()),
    }
}

/// (state, start time) from `/proc/<pid>/stat`. The command name in parentheses may hold spaces
/// and parentheses, so fields are counted after its last `)`.
fn parse_stat(stat: &str) -> Option<(char, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // f[0] is field 3 (state), so field 22 (starttime) is f[19].
    let state = f.first()?.chars().next()?;
    Some((state, f.get(19)?.parse().ok()?))
}

/// The process group id (field 5 of `/proc/<pid>/stat`).
fn parse_pgid(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(2)?.parse().ok()
}

fn parse_uid(status: &str) -> Option<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn parse_cmdline(raw: &[u8]) -> Vec<String> {
    raw.split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_command_name() {
        let stat = "4242 (post gres) (x)) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 \
                    1 0 833893 1000 10 18446744073709551615";
        assert_eq!(parse_stat(stat), Some(('S', 833893)));
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (x) S 1 2"), None);
        assert_eq!(parse_pgid(stat), Some(4242));
    }

    #[test]
    fn this_process_is_itself_and_a_child_is_not_after_it_exits() {
        let me = Identity::this_process().expect("own identity");
        assert!(me.is_alive_same());
        assert!(me.start_time_ticks > 0 && !me.boot_id.is_empty());
        let mut other = me.clone();
        other.start_time_ticks += 1;
        assert!(
            !other.is_alive_same(),
            "another start time is another process"
        );
        let mut other = me.clone();
        other.cmdline.push("--more".into());
        assert!(
            !other.is_alive_same(),
            "another command line is another process"
        );
        let mut other = me.clone();
        other.boot_id = "another boot".into();
        assert!(!other.is_alive_same(), "a pid from before a reboot");
        assert!(other.now_describe().contains("rebooted"));

        let mut child = std::process::Command::new("sleep")
            .arg("1000")
            .spawn()
            .unwrap();
        // spawn() returns once the child has begun exec, but the kernel sets the new command
        // line a moment later (the vfork parent is released before the arguments are in place),
        // so a just-spawned process can briefly read as having none.
        let start = std::time::Instant::now();
        let id = loop {
            if let Some(id) = Identity::of(child.id()) {
                break id;
            }
            assert!(start.elapsed().as_secs() < 5, "the child is running");
            std::thread::sleep(std::time::Duration::from_millis(1));
        };
        assert_eq!(id.cmdline, ["sleep", "1000"]);
        assert!(id.is_alive_same());
        child.kill().unwrap();
        // A zombie (killed, not yet reaped) no longer counts as alive.
        let start = std::time::Instant::now();
        while id.is_alive_same() {
            assert!(start.elapsed().as_secs() < 5);
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        child.wait().unwrap();
        assert!(!id.is_alive_same());
        assert!(Identity::of(child.id()).is_none() || !id.is_alive_same());
    }

    /// A signal reaches the recorded process only: not another start time on the same pid,
    /// not a group the process does not lead.
    #[test]
    fn signals_reach_the_recorded_process_only() {
        use std::os::unix::process::CommandExt;
        let spawn = |group: bool| {
            let mut c = std::process::Command::new("sleep");
            c.arg("1000");
            if group {
                c.process_group(0);
            }
            let child = c.spawn().unwrap();
            let id = exec_done(child.id(), "sleep");
            (child, id)
        };
        let (mut c, id) = spawn(true);
        let mut reused = id.clone();
        reused.start_time_ticks += 1;
        assert!(!reused.signal(libc::SIGKILL) && !reused.signal_group(libc::SIGKILL));
        assert!(id.is_alive_same(), "a forged record was signalled");
        let (mut follower, fid) = spawn(false);
        assert!(!fid.signal_group(libc::SIGKILL), "not a group leader");
        assert!(fid.is_alive_same());
        assert!(id.signal_group(libc::SIGKILL));
        assert!(fid.signal(libc::SIGKILL));
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(c.wait().unwrap().signal(), Some(libc::SIGKILL));
        assert_eq!(follower.wait().unwrap().signal(), Some(libc::SIGKILL));
        assert!(!id.signal(libc::SIGKILL), "gone");
    }

    /// The identity of a just-spawned child once it runs `program` (see the test above).
    pub fn exec_done(pid: u32, program: &str) -> Identity {
        let start = std::time::Instant::now();
        loop {
            if let Some(id) = Identity::of(pid).filter(|i| i.cmdline[0] == program) {
                return id;
            }
            assert!(start.elapsed().as_secs() < 5, "{program} runs");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    #[test]
    fn verify_tells_the_recorded_process_from_others() {
        let me = Identity::this_process().unwrap();
        assert_eq!(verify(&me), Verdict::Same);
        let mut retitled = me.clone();
        retitled.cmdline = vec!["postgres: checkpointer".into()];
        assert!(matches!(verify(&retitled), Verdict::Changed(_)));
        let mut another = me.clone();
        another.start_time_ticks += 1;
        assert!(matches!(verify(&another), Verdict::Another(_)));
        let mut root_now = me.clone();
        root_now.uid = root_now.uid.wrapping_add(1);
        assert!(
            matches!(verify(&root_now), Verdict::Changed(_)),
            "another owner is not the same"
        );
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let mut gone = me;
        gone.pid = pid;
        assert!(matches!(verify(&gone), Verdict::Gone | Verdict::Another(_)));
    }

    #[test]
    fn round_trips_through_json() {
        let me = Identity::this_process().unwrap();
        let text = serde_json::to_string(&me).unwrap();
        assert!(text.contains("\"start_time_ticks\""), "{text}");
        let back: Identity = serde_json::from_str(&text).unwrap();
        assert_eq!(back, me);
    }

    #[test]
    fn fixture_procfs() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        fs::create_dir_all(p.join("sys/kernel/random")).unwrap();
        fs::write(p.join("sys/kernel/random/boot_id"), "b1\n").unwrap();
        fs::create_dir_all(p.join("77")).unwrap();
        let stat = "77 (postgres) S 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 555 0 0";
        fs::write(p.join("77/stat"), stat).unwrap();
        fs::write(
            p.join("77/status"),
            "Name:\tpostgres\nUid:\t105\t105\t105\t105\n",
        )
        .unwrap();
        fs::write(
            p.join("77/cmdline"),
            b"/usr/bin/postgres\0-D\0/tmp/x/data\0",
        )
        .unwrap();
        let id = Identity::of_in(p, 77).unwrap();
        assert_eq!(
            (id.start_time_ticks, id.uid, id.boot_id.as_str()),
            (555, 105, "b1")
        );
        assert!(id.mentions(Path::new("/tmp/x/data")));
        assert!(!id.mentions(Path::new("/tmp/y/data")));
        assert!(id.is_alive_same_in(p));
        fs::write(p.join("77/stat"), stat.replace(" S ", " Z ")).unwrap();
        assert!(Identity::of_in(p, 77).is_none(), "a zombie is not alive");
        assert!(!id.is_alive_same_in(p));
    }
}
