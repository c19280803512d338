//! One name in an open directory, made, looked at and removed through the directory's handle:
//! never through a link, and a name that is taken is never taken over. For directories dbperf
//! makes new and owns from then on (a memory cap's cgroup, server/cgroup.rs).

use std::io;

use rustix::fs::{AtFlags, FileType, Mode};
use rustix::io::Errno;

use super::Dir;

/// What a name in a directory is, as `lstat` says: the entry itself, a link not followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryStat {
    pub is_dir: bool,
    pub dev: u64,
    pub ino: u64,
    /// Last modification, seconds since the epoch (a cgroup's: when it was made, or when a
    /// child was made in it).
    pub mtime_s: i64,
}

impl Dir {
    /// Makes the directory `name` here (mode 0755 less the umask), only if nothing has that
    /// name: mkdirat, which fails with `AlreadyExists` when anything is there, a link included
    /// (it is not followed). Never takes over what someone else made.
    pub fn make_new_dir(&self, name: &str) -> io::Result<()> {
        rustix::fs::mkdirat(&self.file, name, Mode::from_raw_mode(0o755)).map_err(io::Error::from)
    }

    /// The entry `name` here, without following a link.
    pub fn stat_entry(&self, name: &str) -> io::Result<EntryStat> {
        let st = rustix::fs::statat(&self.file, name, AtFlags::SYMLINK_NOFOLLOW)?;
        Ok(EntryStat {
            is_dir: FileType::from_raw_mode(st.st_mode) == FileType::Directory,
            dev: st.st_dev,
            ino: st.st_ino,
            mtime_s: st.st_mtime,
        })
    }

    /// Removes the empty directory `name` here (rmdir: nothing it holds, and never a link).
    /// Nothing there: `NotFound`.
    pub fn remove_empty_dir(&self, name: &str) -> io::Result<()> {
        match rustix::fs::unlinkat(&self.file, name, AtFlags::REMOVEDIR) {
            Ok(()) => Ok(()),
            Err(Errno::NOTDIR) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a directory",
            )),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{open_dir, Also};

    #[test]
    fn a_name_taken_is_never_taken_over_and_a_link_never_followed() {
        let t = tempfile::tempdir().unwrap();
        let d = open_dir(t.path(), Also::Nobody).unwrap();
        d.make_new_dir("a").unwrap();
        let e = d.make_new_dir("a").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), t.path().join("l")).unwrap();
        let e = d.make_new_dir("l").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        assert!(
            !d.stat_entry("l").unwrap().is_dir,
            "the link, not its target"
        );
        assert!(d.remove_empty_dir("l").is_err());
        assert!(elsewhere.path().is_dir());
        let a = d.stat_entry("a").unwrap();
        assert!(a.is_dir && a.ino != 0);
        d.remove_empty_dir("a").unwrap();
        let e = d.remove_empty_dir("a").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    }
}
