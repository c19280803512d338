//! Asking a DBMS binary about itself (`--version`, `--help`) before it is used. The binary may
//! come from a download or from a directory another user can write to, so as root it runs as the
//! server user, like the server it belongs to: dbperf never executes DBMS code as root. It runs
//! with a deadline and what it prints is capped, so a binary that hangs or floods cannot hold
//! dbperf.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::process::{command, User};

/// How long a binary may take to say its version or its options.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// What is kept of its output: a version line or an option list is a few KiB.
const MAX_OUTPUT: u64 = 256 * 1024;

/// What a probe printed, stdout then stderr, and whether it exited with success.
pub struct Answer {
    pub text: String,
    /// What it printed on stdout alone.
    pub stdout: String,
    pub success: bool,
}

/// Runs `program args` as `user` (None: as dbperf's own user, which is then not root) and
/// waits at most `deadline` for it to finish.
pub fn ask(
    program: &Path,
    args: &[&str],
    user: Option<&User>,
    deadline: Duration,
) -> anyhow::Result<Answer> {
    let mut c = command(program, user);
    c.args(args);
    let what = format!("{} {}", shown(program), args.join(" "));
    ask_command(c, &what, deadline)
}

/// Runs a prepared command (stdin, environment and process group as the caller set them; its
/// output is piped here), named `what` in errors, and waits at most `deadline` for it.
pub fn ask_command(mut c: Command, what: &str, deadline: Duration) -> anyhow::Result<Answer> {
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| anyhow::anyhow!("{what} does not run: {e}"))?;
    // Read on threads so a binary that prints more than a pipe holds is not blocked forever;
    // each reader stops storing at the cap and drains the rest.
    let (tx, rx) = std::sync::mpsc::channel();
    let readers = [
        child.stdout.take().map(|o| read_capped(o, 0, tx.clone())),
        child.stderr.take().map(|e| read_capped(e, 1, tx.clone())),
    ];
    drop(tx);
    let start = Instant::now();
    let status = loop {
        // Seen ended but not reaped: its pid, so its group's id, is still its own, and what it
        // left running in the group (a `sleep &` holding the pipes open) goes with it.
        if super::process::has_ended(&child) {
            super::process::signal_group(child.id(), libc::SIGKILL);
            break child.wait()?;
        }
        if start.elapsed() > deadline {
            super::process::signal_group(child.id(), libc::SIGKILL);
            let _ = child.kill();
            let _ = child.wait();
            anyhow::bail!(
                "{what} did not finish within {}",
                crate::dbms::seconds(deadline)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // The pipes close when the last holder is gone; one that escaped the group may hold them,
    // and is not waited for past the deadline.
    let mut texts = [String::new(), String::new()];
    for _ in readers.iter().flatten() {
        let left = deadline
            .saturating_sub(start.elapsed())
            .max(Duration::from_secs(1));
        match rx.recv_timeout(left) {
            Ok((i, t)) => texts[i] = t,
            Err(_) => anyhow::bail!(
                "{what} exited but something it started kept its output open past {}",
                crate::dbms::seconds(deadline)
            ),
        }
    }
    let [stdout, stderr] = texts;
    Ok(Answer {
        text: format!("{stdout}{stderr}"),
        stdout,
        success: status.success(),
    })
}

/// A program's path in a sentence: a fetched build's directory names come from its archive.
fn shown(program: &Path) -> String {
    crate::untrusted::shown(&program.display().to_string())
}

/// Reads `r` on a thread, keeping at most `MAX_OUTPUT` bytes and draining the rest, then sends
/// (`which`, the text) once it ends.
fn read_capped<R: Read + Send + 'static>(
    r: R,
    which: usize,
    done: std::sync::mpsc::Sender<(usize, String)>,
) {
    std::thread::spawn(move || {
        let mut r = r;
        let mut kept = Vec::new();
        let _ = (&mut r).take(MAX_OUTPUT).read_to_end(&mut kept);
        let _ = std::io::copy(&mut r, &mut std::io::sink());
        let _ = done.send((which, String::from_utf8_lossy(&kept).into_owned()));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_capped_and_a_hang_ends_at_the_deadline() {
        let a = ask(
            Path::new("/bin/sh"),
            &["-c", "head -c 10000000 /dev/zero; echo done >&2"],
            None,
            DEADLINE,
        )
        .unwrap();
        assert!(a.success);
        assert_eq!(a.text.len() as u64, MAX_OUTPUT + "done\n".len() as u64);
        let t = Instant::now();
        let e = ask(
            Path::new("/bin/sh"),
            &["-c", "sleep 100"],
            None,
            Duration::from_millis(300),
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("did not finish within"), "{e}");
        // The sleep's whole group was killed, not waited for.
        assert!(t.elapsed() < Duration::from_secs(50), "{:?}", t.elapsed());
        // One that prints its version and leaves a child holding its output: answered, and the
        // child is gone with it.
        let t = Instant::now();
        let a = ask(
            Path::new("/bin/sh"),
            &["-c", "echo 'postgres (PostgreSQL) 15.1'; sleep 100000 &"],
            None,
            Duration::from_secs(20),
        )
        .unwrap();
        assert!(a.text.contains("15.1"), "{}", a.text);
        assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
        let left = std::process::Command::new("pgrep")
            .args(["-f", "^sleep 100000$"])
            .output()
            .unwrap();
        assert!(left.stdout.is_empty(), "the background child was killed");
    }

    /// A build's `--version` is DBMS code: it gets none of dbperf's environment (a password
    /// or a cloud key of the operator's).
    #[test]
    fn a_probe_sees_none_of_dbperfs_environment() {
        // SAFETY: a variable of this test's own, set before the probe's process starts.
        unsafe { std::env::set_var("DBPERF_TEST_PROBE_SECRET", "s3cret") };
        let a = ask(
            Path::new("/bin/sh"),
            &["-c", "echo \"[$DBPERF_TEST_PROBE_SECRET]\" \"$PATH\""],
            None,
            DEADLINE,
        )
        .unwrap();
        assert!(a.text.starts_with("[] "), "{}", a.text);
        assert!(a.text.contains("/usr/bin"), "{}", a.text);
    }

    #[test]
    fn as_root_a_probe_runs_as_the_user_given() {
        if !super::super::process::running_as_root() {
            eprintln!("skipped: not root");
            return;
        }
        let nobody = super::super::process::lookup_user("nobody").expect("nobody");
        let a = ask(Path::new("/usr/bin/id"), &["-u"], Some(&nobody), DEADLINE).unwrap();
        assert_eq!(a.text.trim(), nobody.uid.to_string());
    }
}
