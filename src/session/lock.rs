//! One dbperf at a time in a run directory. Two runs (or a run and its `--resume`) given the
//! same `--out` would each clean up after the other's cells and rewrite the other's journal, so
//! a run holds an exclusive lock on `<out>/.dbperf.lock` (flock) for its whole life; the second
//! is refused with one sentence naming the first's pid. The lock goes with the process: a dbperf
//! that is killed leaves no stale lock, only the file.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags};
use rustix::io::Errno;

use crate::error::{bad_input, BadInput};

pub const LOCK_FILE: &str = ".dbperf.lock";

/// Held for as long as it lives.
pub struct RunLock {
    file: File,
    dir: OwnedFd,
    name: String,
}

/// Takes the run directory's lock, or says who holds it.
pub fn take(out: &Path) -> anyhow::Result<RunLock> {
    take_named(out, LOCK_FILE, &|who| {
        format!(
            "{who} is running in {} right now; wait for it to end or choose another --out",
            out.display()
        )
    })
}

/// Takes the lock file `name` in the directory `dir` (made and checked by the caller), or
/// refuses with `busy(who holds it)`.
pub fn take_named(
    dir_path: &Path,
    name: &str,
    busy: &dyn Fn(&str) -> String,
) -> anyhow::Result<RunLock> {
    let shown = dir_path.join(name);
    let cannot = |e: Errno| BadInput(format!("cannot lock {}: {e}", shown.display()));
    let dir = rustix::fs::open(
        dir_path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(cannot)?;
    // The file may be unlinked and made again between our open and our lock (a run that made
    // the directory and gives up removes it): the lock is ours only on the file the name
    // still stands for.
    for _ in 0..10 {
        let fd = match rustix::fs::openat(
            &dir,
            name,
            OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::from_raw_mode(0o644),
        ) {
            Ok(fd) => fd,
            Err(Errno::LOOP) => {
                return bad_input(format!(
                    "{} is a symbolic link; dbperf does not lock through links (remove it)",
                    shown.display()
                ))
            }
            Err(e) => return Err(cannot(e).into()),
        };
        let st = rustix::fs::fstat(&fd).map_err(cannot)?;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return bad_input(format!(
                "{} is not a regular file; remove it",
                shown.display()
            ));
        }
        match rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(Errno::WOULDBLOCK) => return bad_input(busy(&holder(File::from(fd)))),
            Err(e) => return Err(cannot(e).into()),
        }
        let still = rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW);
        if !still.is_ok_and(|now| now.st_dev == st.st_dev && now.st_ino == st.st_ino) {
            continue;
        }
        let mut file = File::from(fd);
        // Who holds it, for the sentence a second dbperf prints.
        let _ = file.set_len(0);
        let _ = file.write_all(format!("{}\n", std::process::id()).as_bytes());
        return Ok(RunLock {
            file,
            dir,
            name: name.to_string(),
        });
    }
    bad_input(format!(
        "cannot lock {}: it keeps being replaced",
        shown.display()
    ))
}

/// Who holds a lock, from the pid the holder wrote (a few bytes at most are read: the file is
/// not ours).
fn holder(mut f: File) -> String {
    let mut text = String::new();
    let _ = f.rewind();
    let _ = f.take(16).read_to_string(&mut text);
    match text.trim().parse::<u32>() {
        Ok(pid) => format!("another dbperf (pid {pid})"),
        Err(_) => "another dbperf".to_string(),
    }
}

impl RunLock {
    /// Gives the lock up and removes its file: for a run that made the run directory and
    /// leaves nothing in it. The file goes first, while still locked, so no other dbperf can
    /// hold a lock on a file that is no longer there (see `take`).
    pub fn remove(self) {
        let _ = rustix::fs::unlinkat(&self.dir, self.name.as_str(), AtFlags::empty());
        drop(self.file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_the_holder_and_is_free_again_after() {
        let d = tempfile::tempdir().unwrap();
        let first = take(d.path()).unwrap();
        let e = take(d.path()).err().unwrap();
        assert!(crate::error::is_bad_input(&e));
        let s = e.to_string();
        assert!(s.contains(&format!("pid {}", std::process::id())), "{s}");
        drop(first);
        let again = take(d.path()).unwrap();
        again.remove();
        assert!(!d.path().join(LOCK_FILE).exists());
    }

    #[test]
    fn a_planted_link_is_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("elsewhere");
        std::os::unix::fs::symlink(&target, d.path().join(LOCK_FILE)).unwrap();
        let e = take(d.path()).err().unwrap().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert!(!target.exists(), "nothing was created through the link");
    }
}
