//! A directory tree filled from outside bytes (a fetched build): every path below its root is
//! reached from the root's handle one plain name at a time with `openat(O_NOFOLLOW)`, so no
//! operation goes through a link, whoever made it (an archive's entry, another process). This is
//! what `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` does in one call; walking by hand works
//! on every kernel and in sandboxes that filter openat2, and the names are checked to be plain
//! names first, so `..` never climbs out.
//!
//! What is made here is made by this process, so it is owned by this user whatever an archive
//! says, and its mode is narrowed: no setuid, setgid or sticky bit, no write bit for group or
//! others (see [`file_mode`]). Links are made only by [`Tree::symlink`], whose caller decides
//! where they may point (fetch/archive.rs checks that every link stays inside).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};
use rustix::io::Errno;

use super::Dir;

/// A path below a tree's root: plain names only (no `.`, `..`, `/` or NUL, 1 to 255 bytes each).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rel(Vec<OsString>);

/// Whether `name` can be one directory entry's name.
fn plain(name: &OsStr) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 255
        && b != b"."
        && b != b".."
        && !b.contains(&b'/')
        && !b.contains(&0)
}

impl Rel {
    /// The root itself.
    pub fn root() -> Rel {
        Rel(Vec::new())
    }

    /// `a/./b/` is `a/b`; None for an absolute path, a `..` or a name that is not plain.
    pub fn parse(p: &Path) -> Option<Rel> {
        let mut out = Vec::new();
        for c in p.components() {
            match c {
                Component::Normal(n) if plain(n) => out.push(n.to_os_string()),
                Component::CurDir => {}
                _ => return None,
            }
        }
        Some(Rel(out))
    }

    /// The path of `name` in this directory; None when `name` is not plain.
    pub fn join(&self, name: impl AsRef<OsStr>) -> Option<Rel> {
        let name = name.as_ref();
        plain(name).then(|| {
            let mut v = self.0.clone();
            v.push(name.to_os_string());
            Rel(v)
        })
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    pub fn names(&self) -> &[OsString] {
        &self.0
    }

    /// The directory it is in (the root for a top-level name; None for the root).
    pub fn parent(&self) -> Option<Rel> {
        (!self.0.is_empty()).then(|| Rel(self.0[..self.0.len() - 1].to_vec()))
    }

    /// Its last name (None for the root).
    pub fn name(&self) -> Option<&OsStr> {
        self.0.last().map(OsString::as_os_str)
    }

    /// This path below `prefix`, with `prefix` removed; None when it is not below it.
    pub fn strip_prefix(&self, prefix: &Rel) -> Option<Rel> {
        self.0
            .starts_with(&prefix.0)
            .then(|| Rel(self.0[prefix.0.len()..].to_vec()))
    }

    pub fn to_path(&self) -> PathBuf {
        self.0.iter().collect()
    }
}

impl std::fmt::Display for Rel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.to_path().display())
    }
}

/// The mode a file made here gets for the `mode` an archive asks: its read and execute bits,
/// never setuid, setgid or sticky, never writable by group or others; always readable and
/// writable by its owner.
pub fn file_mode(mode: u32) -> u32 {
    (mode & 0o755) | 0o600
}

/// Likewise for a directory, which its owner can always enter.
pub fn dir_mode(mode: u32) -> u32 {
    (mode & 0o755) | 0o700
}

fn open_dir_at(dir: &File, name: &OsStr) -> io::Result<File> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => Ok(File::from(fd)),
        // A link (ELOOP, or ENOTDIR from O_DIRECTORY | O_NOFOLLOW) or a file in the way.
        Err(Errno::LOOP | Errno::NOTDIR) => Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!(
                "{} is a link or a file where a directory should be",
                Path::new(name).display()
            ),
        )),
        Err(e) => Err(e.into()),
    }
}

/// A directory tree reached only from its root's handle.
#[derive(Debug)]
pub struct Tree {
    root: File,
    path: PathBuf,
}

impl Tree {
    /// Makes `name` in `dir` new and empty (mode 0755: the server user runs what it holds);
    /// refused when anything of that name is there.
    pub fn create(dir: &Dir, name: &str) -> anyhow::Result<Tree> {
        let path = dir.path().join(name);
        rustix::fs::mkdirat(&dir.file, name, Mode::from_raw_mode(0o700))
            .map_err(|e| anyhow::Error::from(io::Error::from(e)))
            .map_err(|e| e.context(format!("cannot create {}", path.display())))?;
        let root = open_dir_at(&dir.file, name.as_ref())?;
        rustix::fs::fchmod(&root, Mode::from_raw_mode(0o755)).map_err(io::Error::from)?;
        Ok(Tree { root, path })
    }

    /// Where the tree is, for messages and for programs run from it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory `names` opened name by name (made, mode 0755, where `make` and absent).
    fn walk(&self, names: &[OsString], make: bool) -> io::Result<File> {
        let mut cur = self.root.try_clone()?;
        for n in names {
            if make {
                match rustix::fs::mkdirat(&cur, n.as_os_str(), Mode::from_raw_mode(0o755)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            cur = open_dir_at(&cur, n)?;
        }
        Ok(cur)
    }

    /// The directory `rel` is in, opened, and its last name.
    fn parent<'r>(&self, rel: &'r Rel, make: bool) -> io::Result<(File, &'r OsStr)> {
        let Some((name, up)) = rel.0.split_last() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the tree's root has no parent",
            ));
        };
        Ok((self.walk(up, make)?, name.as_os_str()))
    }

    /// What `rel` is, not following a link at its end; None when nothing is there.
    pub fn kind(&self, rel: &Rel) -> io::Result<Option<FileType>> {
        if rel.is_root() {
            return Ok(Some(FileType::Directory));
        }
        let (dir, name) = match self.parent(rel, false) {
            Ok(p) => p,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(FileType::from_raw_mode(st.st_mode))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Makes the directory `rel` (and its parents) where absent, with [`dir_mode`] of `mode`.
    pub fn make_dir(&self, rel: &Rel, mode: u32) -> io::Result<()> {
        if rel.is_root() {
            return Ok(());
        }
        let (dir, name) = self.parent(rel, true)?;
        match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o700)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(e.into()),
        }
        let d = open_dir_at(&dir, name)?;
        rustix::fs::fchmod(&d, Mode::from_raw_mode(dir_mode(mode)))?;
        Ok(())
    }

    /// Unlinks what is at `name` in `dir` unless it is a directory (a link is unlinked as
    /// itself); nothing there is fine.
    fn clear(dir: &File, name: &OsStr) -> io::Result<()> {
        match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Directory => {
                Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    format!("{} is a directory", Path::new(name).display()),
                ))
            }
            Ok(_) => Ok(rustix::fs::unlinkat(dir, name, AtFlags::empty())?),
            Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Creates the file `rel` afresh for writing (what was there is unlinked, never followed),
    /// its parents made where absent, with [`file_mode`] of `mode`.
    pub fn create_file(&self, rel: &Rel, mode: u32) -> io::Result<File> {
        let (dir, name) = self.parent(rel, true)?;
        Self::clear(&dir, name)?;
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        let fd = rustix::fs::openat(
            &dir,
            name,
            flags | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )?;
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(file_mode(mode)))?;
        Ok(File::from(fd))
    }

    /// Opens the regular file `rel` to read: never through a link, never blocking on a FIFO.
    pub fn open_file(&self, rel: &Rel) -> io::Result<File> {
        let (dir, name) = self.parent(rel, false)?;
        let st = rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{rel} is not a regular file"),
            ));
        }
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY;
        let flags = flags | OFlags::CLOEXEC;
        let f = File::from(rustix::fs::openat(&dir, name, flags, Mode::empty())?);
        if !f.metadata()?.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{rel} is not a regular file"),
            ));
        }
        Ok(f)
    }

    /// A second name `new` for the regular file `existing` (a link at `existing` is refused,
    /// never followed); what was at `new` is replaced.
    pub fn hard_link(&self, existing: &Rel, new: &Rel) -> io::Result<()> {
        if self.kind(existing)? != Some(FileType::RegularFile) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{existing} is not a regular file"),
            ));
        }
        let (from, from_name) = self.parent(existing, false)?;
        let (to, to_name) = self.parent(new, true)?;
        Self::clear(&to, to_name)?;
        Ok(rustix::fs::linkat(
            &from,
            from_name,
            &to,
            to_name,
            AtFlags::empty(),
        )?)
    }

    /// Makes the symbolic link `rel` -> `target`; nothing may be at `rel`. The caller has
    /// checked where `target` leads.
    pub fn symlink(&self, rel: &Rel, target: &Path) -> io::Result<()> {
        let (dir, name) = self.parent(rel, true)?;
        Ok(rustix::fs::symlinkat(target, &dir, name)?)
    }

    /// The names in the directory `rel`, sorted.
    pub fn names(&self, rel: &Rel) -> io::Result<Vec<OsString>> {
        let d = self.walk(&rel.0, false)?;
        let mut out = Vec::new();
        for e in rustix::fs::Dir::read_from(&d)? {
            let n = e?.file_name().to_bytes().to_vec();
            if n != b"." && n != b".." {
                out.push(OsStr::from_bytes(&n).to_os_string());
            }
        }
        out.sort();
        Ok(out)
    }

    /// Renames `from` to `to` inside the tree (a link is moved as itself).
    pub fn rename(&self, from: &Rel, to: &Rel) -> io::Result<()> {
        let (a, a_name) = self.parent(from, false)?;
        let (b, b_name) = self.parent(to, true)?;
        Ok(rustix::fs::renameat(&a, a_name, &b, b_name)?)
    }

    /// Moves the directory `rel` (the root when empty) out of the tree, to `name` in `to`,
    /// unless something of that name is there already (then Ok(false)).
    pub fn move_out(&self, rel: &Rel, to: &Dir, name: &str) -> io::Result<bool> {
        let (from, from_name) = match rel.parent() {
            Some(_) => self.parent(rel, false)?,
            None => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the tree's root is moved by its parent",
                ))
            }
        };
        match rustix::fs::renameat_with(&from, from_name, &to.file, name, RenameFlags::NOREPLACE) {
            Ok(()) => Ok(true),
            Err(Errno::EXIST | Errno::NOTEMPTY) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn rel(s: &str) -> Rel {
        Rel::parse(Path::new(s)).unwrap()
    }

    #[test]
    fn names_are_plain() {
        assert_eq!(rel("a/./b/").names().len(), 2);
        assert!(Rel::parse(Path::new("../a")).is_none());
        assert!(Rel::parse(Path::new("a/../b")).is_none());
        assert!(Rel::parse(Path::new("/a")).is_none());
        assert!(rel(".").is_root());
        assert!(rel("a").join("..").is_none() && rel("a").join("b/c").is_none());
        assert_eq!(rel("a/b").parent(), Some(rel("a")));
        assert_eq!(rel("a").parent(), Some(Rel::root()));
    }

    #[test]
    fn nothing_goes_through_a_link_and_modes_are_narrowed() {
        let t = tempfile::tempdir().unwrap();
        let outside = t.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        let base = super::super::open_dir(t.path(), super::super::Also::Nobody).unwrap();
        let tree = Tree::create(&base, "tree").unwrap();
        std::os::unix::fs::symlink(&outside, tree.path().join("l")).unwrap();
        assert!(tree.create_file(&rel("l/x"), 0o644).is_err());
        assert!(tree.make_dir(&rel("l/d"), 0o755).is_err());
        assert!(tree.names(&rel("l")).is_err());
        assert!(tree.open_file(&rel("l")).is_err());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        // A link at the end is replaced as itself, never written through.
        std::fs::write(outside.join("victim"), "keep").unwrap();
        std::os::unix::fs::symlink(outside.join("victim"), tree.path().join("v")).unwrap();
        let mut f = tree.create_file(&rel("v"), 0o4777).unwrap();
        io::Write::write_all(&mut f, b"new").unwrap();
        assert_eq!(
            std::fs::read_to_string(outside.join("victim")).unwrap(),
            "keep"
        );
        let m = std::fs::symlink_metadata(tree.path().join("v")).unwrap();
        assert!(m.is_file());
        assert_eq!(m.permissions().mode() & 0o7777, 0o755);
        tree.make_dir(&rel("d/e"), 0o3777).unwrap();
        let m = std::fs::metadata(tree.path().join("d/e")).unwrap();
        assert_eq!(m.mode() & 0o7777, 0o755);
        // A hard link to a link is refused.
        assert!(tree.hard_link(&rel("l"), &rel("h")).is_err());
        tree.hard_link(&rel("v"), &rel("d/h")).unwrap();
        assert_eq!(
            std::fs::read_to_string(tree.path().join("d/h")).unwrap(),
            "new"
        );
        assert_eq!(tree.names(&Rel::root()).unwrap(), ["d", "l", "v"]);
    }
}
