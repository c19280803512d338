//! A record that drives an action must be owned by the user running dbperf.
//!
//! Some files dbperf reads back decide what it does next, as whoever runs it, root included:
//! the Slurm submission (`--resume --slurm` writes its arguments into job scripts and submits
//! them), a campaign's journal on `--resume` (the command line it runs again, the work
//! directories it removes, the servers it stops), the host settings state file (kernel
//! settings written back), the server registry and an instance's `server.json` (processes
//! signalled, cgroups removed). Such a record is acted on only when this user wrote it: owned
//! by the effective uid, writable by nobody else, and with one name. Where it lies and what it
//! says prove nothing, since another user who can put a file there (a shared results
//! directory, a file chowned to them) could have written both. This is the one check every such
//! record goes through (docs/security.md, "Records that drive an action").
//!
//! Files only read for a report or a history import (a colleague's or CI's results, a shared
//! history) are not records of this kind: they stay readable whoever wrote them, through the
//! `untrusted` gate as the untrusted input they are.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::error::{BadInput, NotOwnRecord};

/// Refuses the record at `path`, whose metadata (of the file or directory opened, not of the
/// path looked at again) is `m`, unless the user running dbperf owns it and nobody else can
/// change it. `what` names the record for the sentence ("the Slurm submission").
pub fn check(path: &Path, m: &fs::Metadata, what: &str) -> Result<(), NotOwnRecord> {
    let me = super::euid();
    if m.uid() != me {
        return Err(NotOwnRecord(format!(
            "{} belongs to {}, not to {}, who runs dbperf: {what} decides what dbperf does, and \
             dbperf acts only on one the user running it wrote; remove it, or chown it if you \
             trust what it says",
            path.display(),
            super::user_name(m.uid()),
            super::user_name(me)
        )));
    }
    if super::others_may_write(m) {
        return Err(NotOwnRecord(format!(
            "{} can be written by other users (mode {:o}): {what} decides what dbperf does, and \
             dbperf acts only on one nobody else can change; chmod go-w it if you trust what it \
             says",
            path.display(),
            m.mode() & 0o7777
        )));
    }
    if m.is_file() && m.nlink() != 1 {
        return Err(NotOwnRecord(format!(
            "{} has a second name (a hard link): {what} decides what dbperf does, and dbperf \
             acts only on a file of one name, which it writes",
            path.display()
        )));
    }
    Ok(())
}

/// The bytes of the record at `path` after [`check`], None when there is nothing of that name:
/// opened without following a link or blocking on a FIFO (see [`super::open_checked`]), at most
/// `cap` bytes.
pub fn read(path: &Path, cap: u64, what: &str) -> anyhow::Result<Option<Vec<u8>>> {
    let unreadable = |e: &dyn std::fmt::Display| {
        anyhow::Error::new(BadInput(format!("cannot read {}: {e}", path.display())))
    };
    let f = match super::open_checked(path, false) {
        Ok((f, _)) => f,
        Err(super::NotOpened::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None)
        }
        Err(super::NotOpened::Io(e)) => return Err(unreadable(&e)),
        Err(super::NotOpened::Link) => return Err(unreadable(&"it is a symbolic link")),
        Err(super::NotOpened::Kind(_)) => return Err(unreadable(&"it is not a regular file")),
    };
    let m = f.metadata().map_err(|e| unreadable(&e))?;
    check(path, &m, what)?;
    super::read_file_capped(f, cap)
        .map(Some)
        .map_err(|e| unreadable(&e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_record_is_obeyed_only_when_this_user_wrote_it() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("submit.json");
        fs::write(&p, "{}").unwrap();
        assert_eq!(read(&p, 10, "the record").unwrap().unwrap(), b"{}");
        assert!(read(&t.path().join("none"), 10, "the record")
            .unwrap()
            .is_none());
        fs::set_permissions(&p, fs::Permissions::from_mode(0o666)).unwrap();
        let e = read(&p, 10, "the record").unwrap_err();
        assert!(crate::error::is_bad_input(&e), "{e:#}");
        assert!(
            e.to_string().contains("can be written by other users"),
            "{e}"
        );
        fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
        fs::hard_link(&p, t.path().join("second")).unwrap();
        let e = read(&p, 10, "the record").unwrap_err();
        assert!(e.to_string().contains("a second name"), "{e}");
        fs::remove_file(t.path().join("second")).unwrap();
        std::os::unix::fs::symlink(&p, t.path().join("link")).unwrap();
        assert!(read(&t.path().join("link"), 10, "the record").is_err());
        assert!(read(&p, 1, "the record").is_err(), "capped");
        // Another user's, when this test may give it away.
        if super::super::euid() == 0 {
            std::os::unix::fs::chown(&p, Some(65534), None).unwrap();
            let e = read(&p, 10, "the Slurm submission").unwrap_err();
            assert!(crate::error::is_bad_input(&e), "{e:#}");
            let s = e.to_string();
            assert!(s.contains("belongs to") && s.contains("not to root"), "{s}");
            assert!(
                s.contains("the Slurm submission decides what dbperf does"),
                "{s}"
            );
        }
    }
}
