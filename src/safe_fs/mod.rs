//! Directories and files in places another user could reach. dbperf may run as root on a shared
//! host, so a path it works under must not let anyone else redirect it:
//!
//! * every directory on the way is owned by root or by this user and writable by nobody else
//!   (a sticky directory such as /tmp excepted: nobody can move another's entry in it);
//! * a symbolic link on the way is followed only when root or this user made it;
//! * the directory dbperf works in is never a link, is owned by root or this user (or, where
//!   the caller says so, the server user) and is writable by nobody else.
//!
//! "Writable by nobody else": no write bit for others, and a group write bit only for this
//! user's own group (the one-group-per-user convention of most distributions).
//!
//! Under such a directory nobody else can change anything, so plain paths below it are safe.
//! Files are still created new and never through a link (O_EXCL | O_NOFOLLOW), and files read
//! back are opened without following a link and read up to a cap.
//!
//! Directories are walked one name at a time with openat(O_NOFOLLOW), made with mkdirat (never
//! through a link) and changed (mode, owner) through the open handle, never by path.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::error::BadInput;

pub mod acting_record;
pub mod entry;
pub mod tree;

/// Deeper than any tree dbperf removes (a server's data directory, a build): a deeper one is
/// left as it is.
const MAX_REMOVE_DEPTH: usize = 64;

/// Links followed while resolving one path: the kernel's own limit (ELOOP).
const MAX_LINKS: usize = 40;

/// Mode of the directories dbperf makes (less the umask): never writable by others.
const DIR_MODE: u32 = 0o755;

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

fn egid() -> u32 {
    // SAFETY: getegid has no preconditions.
    unsafe { libc::getegid() }
}

/// Root or this user: the only owners whose directories and links dbperf trusts.
fn trusted_owner(uid: u32) -> bool {
    uid == 0 || uid == euid()
}

/// Whether someone besides the owner (and this user's own group) may write into it.
pub fn others_may_write(m: &fs::Metadata) -> bool {
    m.mode() & 0o002 != 0 || (m.mode() & 0o020 != 0 && m.gid() != egid())
}

fn sticky(m: &fs::Metadata) -> bool {
    m.mode() & 0o1000 != 0
}

/// Who, besides root and this user, may own the directory at the end of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Also {
    Nobody,
    /// This uid too (the server user's directories, and instance directories older dbperfs
    /// gave it).
    Uid(u32),
    /// Anyone: for reading a record whose own owner is checked (`dbperf server stop` reads a
    /// `server.json` of its own user's in a directory an older dbperf gave the server user).
    Anyone,
}

/// An open directory, reached without following any link nobody trusted, and its path with
/// every link resolved.
#[derive(Debug)]
pub struct Dir {
    file: File,
    path: PathBuf,
}

impl Dir {
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn metadata(&self) -> io::Result<fs::Metadata> {
        self.file.metadata()
    }

    /// fchmod: the directory opened, whatever is at its path now.
    pub fn set_mode(&self, mode: u32) -> io::Result<()> {
        self.file.set_permissions(fs::Permissions::from_mode(mode))
    }

    /// fchown, likewise.
    pub fn set_owner(&self, uid: u32, gid: u32) -> io::Result<()> {
        std::os::unix::fs::fchown(&self.file, Some(uid), Some(gid))
    }

    /// The names in this directory, sorted (`.` and `..` left out).
    pub fn names(&self) -> io::Result<Vec<OsString>> {
        let mut out = Vec::new();
        for e in rustix::fs::Dir::read_from(&self.file)? {
            let n = e?.file_name().to_bytes().to_vec();
            if n != b"." && n != b".." {
                out.push(OsString::from_vec(n));
            }
        }
        out.sort();
        Ok(out)
    }

    /// Removes `name` in this directory: a directory with all it holds, anything else (a link
    /// included) as itself, never following a link. Nothing there: Ok.
    pub fn remove(&self, name: &std::ffi::OsStr) -> io::Result<()> {
        remove_at(&self.file, name, 0)
    }

    /// Moves `name` here to `to_name` in `to` (a link is moved as itself), unless something of
    /// that name is there already: then false, and nothing moved.
    pub fn move_to(&self, name: &str, to: &Dir, to_name: &str) -> io::Result<bool> {
        let flags = rustix::fs::RenameFlags::NOREPLACE;
        match rustix::fs::renameat_with(&self.file, name, &to.file, to_name, flags) {
            Ok(()) => Ok(true),
            Err(Errno::EXIST | Errno::NOTEMPTY) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Removes this directory, which must be empty, by its name in its parent (reopened
    /// without following a link); a directory that is no longer the one opened is left.
    pub fn remove_empty(&self) -> io::Result<()> {
        let (Some(parent), Some(name)) = (self.path.parent(), self.path.file_name()) else {
            return Ok(());
        };
        let up = File::from(rustix::fs::open(
            parent,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?);
        let here = self.file.metadata()?;
        match rustix::fs::statat(&up, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if st.st_ino == here.ino() && st.st_dev == here.dev() => {
                Ok(rustix::fs::unlinkat(&up, name, AtFlags::REMOVEDIR)?)
            }
            _ => Ok(()),
        }
    }

    /// Renames `from` to `to` in this directory (a link is renamed as itself).
    pub fn rename(&self, from: &std::ffi::OsStr, to: &std::ffi::OsStr) -> io::Result<()> {
        Ok(rustix::fs::renameat(&self.file, from, &self.file, to)?)
    }

    /// Writes `name` in this directory so a reader sees the old file or the whole new one: into
    /// `.<name>.tmp`, made new (a stale one, or a link planted there, is unlinked first, never
    /// followed), synced, then renamed over `name` (which replaces a link or a FIFO as itself).
    pub fn write_atomic(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let tmp = format!(".{name}.tmp");
        let _ = rustix::fs::unlinkat(&self.file, tmp.as_str(), AtFlags::empty());
        let written = (|| {
            let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
            let fd = rustix::fs::openat(
                &self.file,
                tmp.as_str(),
                flags | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o644),
            )?;
            let mut f = File::from(fd);
            io::Write::write_all(&mut f, bytes)?;
            f.sync_all()?;
            rustix::fs::renameat(&self.file, tmp.as_str(), &self.file, name)?;
            self.file.sync_all()
        })();
        if written.is_err() {
            // A full disk leaves no half-written temporary file behind.
            let _ = rustix::fs::unlinkat(&self.file, tmp.as_str(), AtFlags::empty());
        }
        written
    }

    /// Opens the regular file `name` in this directory to read: not through a link, not
    /// blocking on a FIFO.
    pub fn open_file(&self, name: &str) -> io::Result<File> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let st = rustix::fs::statat(&self.file, name, AtFlags::SYMLINK_NOFOLLOW)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        let flags = flags | OFlags::NOCTTY;
        let f = File::from(rustix::fs::openat(&self.file, name, flags, Mode::empty())?);
        if !f.metadata()?.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        Ok(f)
    }

    /// Whether `name` exists in this directory (a link counts, and is not followed).
    pub fn has(&self, name: &str) -> bool {
        rustix::fs::statat(&self.file, name, AtFlags::SYMLINK_NOFOLLOW).is_ok()
    }

    /// The subdirectory `name`, made (mode 0700) when absent; never a link. An existing one
    /// must be owned by root, this user or `also`, and writable by nobody else.
    pub fn subdir(&self, name: &str, also: Also) -> anyhow::Result<Dir> {
        let path = self.path.join(name);
        let fd = match rustix::fs::mkdirat(&self.file, name, Mode::from_raw_mode(0o700)) {
            Ok(()) | Err(Errno::EXIST) => open_dir_at(&self.file, name.as_ref(), &path)?,
            Err(e) => {
                return Err(anyhow::Error::from(io::Error::from(e))
                    .context(format!("cannot create {}", path.display())))
            }
        };
        let d = Dir { file: fd, path };
        d.check_end(also)?;
        Ok(d)
    }

    /// The existing subdirectory `name`, under the same rules as [`Dir::subdir`]; None when
    /// there is nothing of that name.
    pub fn existing_subdir(&self, name: &str, also: Also) -> anyhow::Result<Option<Dir>> {
        if !self.has(name) {
            return Ok(None);
        }
        let path = self.path.join(name);
        let d = Dir {
            file: open_dir_at(&self.file, name.as_ref(), &path)?,
            path,
        };
        d.check_end(also)?;
        Ok(Some(d))
    }

    /// The rule for the directory dbperf works in (see the module's documentation).
    fn check_end(&self, also: Also) -> anyhow::Result<()> {
        let m = self.file.metadata()?;
        let owner_ok = trusted_owner(m.uid()) || also == Also::Uid(m.uid()) || also == Also::Anyone;
        if !owner_ok {
            return Err(BadInput(format!(
                "{} belongs to another user ({}); dbperf works only in a directory of its own \
                 user, so give another one",
                self.path.display(),
                user_name(m.uid())
            ))
            .into());
        }
        if others_may_write(&m) {
            return Err(BadInput(format!(
                "{} can be written by other users (mode {:o}); dbperf works only in a directory \
                 nobody else can change, so give another one or chmod go-w it",
                self.path.display(),
                m.mode() & 0o7777
            ))
            .into());
        }
        Ok(())
    }
}

/// Removes `name` in `dir`: a directory with all it holds, anything else (a link included) as
/// itself. Names are taken as the bytes they are (a name need not be UTF-8).
pub fn remove_at<Fd: std::os::fd::AsFd>(
    dir: Fd,
    name: &std::ffi::OsStr,
    depth: usize,
) -> io::Result<()> {
    let sub = match rustix::fs::openat(
        &dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(sub) => sub,
        Err(Errno::NOENT) => return Ok(()),
        Err(Errno::LOOP | Errno::NOTDIR) => {
            return Ok(rustix::fs::unlinkat(&dir, name, AtFlags::empty())?)
        }
        Err(e) => return Err(e.into()),
    };
    if depth >= MAX_REMOVE_DEPTH {
        return Err(io::Error::other(format!(
            "more than {MAX_REMOVE_DEPTH} directories deep"
        )));
    }
    let mut names: Vec<OsString> = Vec::new();
    for entry in rustix::fs::Dir::read_from(&sub)? {
        let n = entry?.file_name().to_bytes().to_vec();
        if n != b"." && n != b".." {
            names.push(OsString::from_vec(n));
        }
    }
    for n in names {
        remove_at(&sub, &n, depth + 1)?;
    }
    Ok(rustix::fs::unlinkat(&dir, name, AtFlags::REMOVEDIR)?)
}

/// The directory a report's `--out DIR` names: made where absent (with
/// its missing parents), walked and checked as every directory dbperf works in (no link at its
/// end, nothing another user owns or can write on the way). Bad input when it cannot be.
pub fn output_dir(path: &Path) -> anyhow::Result<Dir> {
    make_dir_all(path, Also::Nobody).map_err(|e| {
        if crate::error::is_bad_input(&e) {
            e
        } else {
            BadInput(format!(
                "cannot create the report directory {}: {e:#}",
                path.display()
            ))
            .into()
        }
    })
}

/// Whether `path`, every link on the way resolved, is `dir` or below it (`dir` resolved too):
/// a path a record names inside a directory, checked to lead nowhere else.
pub fn leads_inside(path: &Path, dir: &Path) -> bool {
    match (fs::canonicalize(path), fs::canonicalize(dir)) {
        (Ok(p), Ok(d)) => p.starts_with(d),
        _ => false,
    }
}

/// A failed write into a report directory: a directory in the file's place is the user's to
/// move (bad input); anything else (a full disk) is a failure.
pub fn write_error(path: &Path, e: io::Error) -> anyhow::Error {
    match e.raw_os_error() {
        Some(libc::EISDIR) | Some(libc::ENOTEMPTY) | Some(libc::EEXIST) => BadInput(format!(
            "cannot write {}: a directory is in its place",
            path.display()
        ))
        .into(),
        _ => anyhow::anyhow!("cannot write {}: {e}", path.display()),
    }
}

/// The name of `uid` for messages, or its number.
pub fn user_name(uid: u32) -> String {
    // SAFETY: getpwuid returns a pointer into static storage or null; the name is copied at once.
    unsafe {
        let pw = libc::getpwuid(uid);
        if pw.is_null() || (*pw).pw_name.is_null() {
            return format!("uid {uid}");
        }
        std::ffi::CStr::from_ptr((*pw).pw_name)
            .to_string_lossy()
            .into_owned()
    }
}

/// A file in the way of a directory: an error of the path's kind (ENOTDIR), which callers
/// report as they report a directory they cannot create, not a refusal of something planted.
fn not_a_directory(path: &Path) -> anyhow::Error {
    anyhow::Error::from(io::Error::from(Errno::NOTDIR))
        .context(format!("{} is not a directory", path.display()))
}

/// Opens `name` in `dir` as a directory, refusing a link (ELOOP) or anything else.
fn open_dir_at(dir: &File, name: &std::ffi::OsStr, path: &Path) -> anyhow::Result<File> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => Ok(File::from(fd)),
        // O_DIRECTORY | O_NOFOLLOW on a link: ENOTDIR from Linux, ELOOP elsewhere.
        Err(Errno::LOOP | Errno::NOTDIR) => {
            let link = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink);
            if !link {
                return Err(not_a_directory(path));
            }
            Err(BadInput(format!(
                "{} is a symbolic link where dbperf expects a directory of its own; remove it",
                path.display()
            ))
            .into())
        }
        Err(e) => Err(anyhow::Error::from(io::Error::from(e))
            .context(format!("cannot open {}", path.display()))),
    }
}

/// Opens the existing directory `path` for dbperf to work in (see the module's rules).
pub fn open_dir(path: &Path, also: Also) -> anyhow::Result<Dir> {
    walk(path, false, End::WorkIn(also))
}

/// Opens the directory `path` for dbperf to work in, making it and its missing parents (mode
/// 0755 less the umask) where absent.
pub fn make_dir_all(path: &Path, also: Also) -> anyhow::Result<Dir> {
    walk(path, true, End::WorkIn(also))
}

/// Checks, without making anything, that dbperf could work in `path`: the directory itself
/// when it exists, else the way to it as far as it exists. Bad input when it could not.
pub fn check_dir(path: &Path) -> anyhow::Result<()> {
    if fs::symlink_metadata(path).is_ok() {
        return open_dir(path, Also::Nobody).map(|_| ());
    }
    let abs = std::path::absolute(path)
        .map_err(|e| anyhow::anyhow!("cannot resolve {}: {e}", path.display()))?;
    match abs
        .ancestors()
        .skip(1)
        .find(|a| fs::symlink_metadata(a).is_ok())
    {
        Some(a) => walk(a, false, End::OnTheWay).map(|_| ()),
        None => Ok(()),
    }
}

/// Which rule the last directory of a walk must pass.
#[derive(Clone, Copy)]
enum End {
    /// dbperf works in it ([`Dir::check_end`]).
    WorkIn(Also),
    /// dbperf will make directories below it ([`check_on_the_way`]).
    OnTheWay,
}

fn names(p: &Path) -> Vec<OsString> {
    p.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect()
}

/// Resolves `path` from / one name at a time, as the kernel would, but checking every
/// directory and link on the way before going through it.
fn walk(path: &Path, create: bool, end_rule: End) -> anyhow::Result<Dir> {
    let abs = std::path::absolute(path)
        .map_err(|e| anyhow::anyhow!("cannot resolve {}: {e}", path.display()))?;
    let root = Dir {
        file: File::open("/")?,
        path: PathBuf::from("/"),
    };
    check_on_the_way(&root)?;
    let mut stack = vec![root];
    // Names still to go, the next one last.
    let mut todo: Vec<OsString> = names(&abs).into_iter().rev().collect();
    let (mut links, mut tries) = (0, 0);
    while let Some(name) = todo.pop() {
        if name == ".." {
            if stack.len() > 1 {
                stack.pop();
            }
            continue;
        }
        let last = todo.is_empty();
        let cur = stack.last().expect("the root stays");
        let here = cur.path.join(&name);
        let st = match rustix::fs::statat(&cur.file, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            // Made, then looked at again like any other (bounded: someone removing it as fast).
            Err(Errno::NOENT) if create && tries < 10 => {
                tries += 1;
                match rustix::fs::mkdirat(
                    &cur.file,
                    name.as_os_str(),
                    Mode::from_raw_mode(DIR_MODE),
                ) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => {
                        return Err(anyhow::Error::from(io::Error::from(e))
                            .context(format!("cannot create {}", here.display())))
                    }
                }
                todo.push(name);
                continue;
            }
            Err(e) => {
                return Err(anyhow::Error::from(io::Error::from(e))
                    .context(format!("cannot reach {}", here.display())))
            }
        };
        match FileType::from_raw_mode(st.st_mode) {
            FileType::Symlink => {
                if last {
                    return Err(BadInput(format!(
                        "{} is a symbolic link; dbperf works only in a real directory there, \
                         so give the directory it points to",
                        here.display()
                    ))
                    .into());
                }
                if !trusted_owner(st.st_uid) {
                    return Err(BadInput(format!(
                        "{} is a symbolic link made by another user ({}); dbperf follows only \
                         links of root or its own user",
                        here.display(),
                        user_name(st.st_uid)
                    ))
                    .into());
                }
                links += 1;
                if links > MAX_LINKS {
                    return Err(BadInput(format!(
                        "{} goes through more than {MAX_LINKS} symbolic links",
                        abs.display()
                    ))
                    .into());
                }
                let target = rustix::fs::readlinkat(&cur.file, name.as_os_str(), Vec::new())
                    .map_err(io::Error::from)?;
                let target = PathBuf::from(OsString::from_vec(target.into_bytes()));
                if target.is_absolute() {
                    stack.truncate(1);
                }
                todo.extend(names(&target).into_iter().rev());
            }
            FileType::Directory => {
                let file = open_dir_at(&cur.file, &name, &here)?;
                let d = Dir { file, path: here };
                // What was opened is checked, not what was looked at a moment before.
                if !last {
                    check_on_the_way(&d)?;
                }
                stack.push(d);
            }
            _ => return Err(not_a_directory(&here)),
        }
    }
    let end = stack.pop().expect("the root stays");
    match end_rule {
        End::WorkIn(also) => end.check_end(also)?,
        End::OnTheWay => check_on_the_way(&end)?,
    }
    Ok(end)
}

/// The rule for a directory on the way to the one dbperf works in.
fn check_on_the_way(d: &Dir) -> anyhow::Result<()> {
    let m = d.file.metadata()?;
    if !trusted_owner(m.uid()) {
        return Err(BadInput(format!(
            "{} belongs to another user ({}), who could move what dbperf makes below it; give \
             a path through directories of root or your own",
            d.path.display(),
            user_name(m.uid())
        ))
        .into());
    }
    if others_may_write(&m) && !sticky(&m) {
        return Err(BadInput(format!(
            "{} can be written by other users (mode {:o}), who could move what dbperf makes \
             below it; give a path through directories nobody else can change",
            d.path.display(),
            m.mode() & 0o7777
        ))
        .into());
    }
    Ok(())
}

/// Creates the file `path` new, for writing: never an existing file, never through a link
/// (O_CREAT | O_EXCL | O_NOFOLLOW).
pub fn create_new(path: &Path, mode: u32) -> io::Result<File> {
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// Creates the file `path` afresh: whatever was there (an old file of dbperf's, a link) is
/// unlinked first (which never follows a link), then the file is made new as in [`create_new`].
pub fn create_replacing(path: &Path, mode: u32) -> io::Result<File> {
    match fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    create_new(path, mode)
}

/// Writes `bytes` to a file made afresh at `path` (see [`create_replacing`]); a failed write
/// leaves no partial file.
pub fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let written =
        create_replacing(path, 0o644).and_then(|mut f| io::Write::write_all(&mut f, bytes));
    if written.is_err() {
        let _ = fs::remove_file(path);
    }
    written
}

/// Why `open_checked` did not open a file.
#[derive(Debug)]
pub enum NotOpened {
    Io(io::Error),
    /// A symbolic link, where links are not followed.
    Link,
    /// Not a regular file: a FIFO, a device, a directory, a socket.
    Kind(FileType),
}

/// Opens `path` to read only when it is a regular file, without opening anything else on the
/// way: it is looked at through an `O_PATH` handle (which opens no device, FIFO or tty, so
/// nothing happens by looking), then reopened from that very handle (`/proc/self/fd`), so what
/// is read is what was looked at, however fast another user swaps the name. `follow`: a link at
/// the end is followed (a file the user names), else refused.
pub fn open_checked(path: &Path, follow: bool) -> Result<(File, rustix::fs::Stat), NotOpened> {
    let mut flags = OFlags::PATH | OFlags::CLOEXEC;
    if !follow {
        flags |= OFlags::NOFOLLOW;
    }
    let h = rustix::fs::open(path, flags, Mode::empty()).map_err(|e| NotOpened::Io(e.into()))?;
    let st = rustix::fs::fstat(&h).map_err(|e| NotOpened::Io(e.into()))?;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => {}
        FileType::Symlink => return Err(NotOpened::Link),
        other => return Err(NotOpened::Kind(other)),
    }
    let reopen = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&h));
    let read = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let f = File::from(
        rustix::fs::open(reopen.as_str(), read, Mode::empty())
            .map_err(|e| NotOpened::Io(e.into()))?,
    );
    Ok((f, st))
}

/// Opens an existing regular file to read: never through a link, never blocking on a FIFO
/// planted in its place, never a file with a second name (a hard link to something else).
pub fn open_regular(path: &Path) -> io::Result<File> {
    let f = match open_checked(path, false) {
        Ok((f, _)) => f,
        Err(NotOpened::Io(e)) => return Err(e),
        // As O_NOFOLLOW would say it.
        Err(NotOpened::Link) => return Err(io::Error::from_raw_os_error(libc::ELOOP)),
        Err(NotOpened::Kind(_)) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ))
        }
    };
    let m = f.metadata()?;
    if m.nlink() != 1 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a file with more than one name",
        ));
    }
    Ok(f)
}

/// The whole of a file dbperf reads back (see [`open_regular`]), refused past `cap` bytes.
pub fn read_capped(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    read_file_capped(open_regular(path)?, cap)
}

/// The whole of the open file `f`, refused past `cap` bytes.
pub fn read_file_capped(f: File, cap: u64) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    f.take(cap + 1).read_to_end(&mut out)?;
    if out.len() as u64 > cap {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {cap} bytes"),
        ));
    }
    Ok(out)
}

/// At most the last `cap` bytes of `f` from its start, as text: a log for an error message.
pub fn read_end(f: &mut File, cap: u64) -> String {
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if f.seek(SeekFrom::Start(len.saturating_sub(cap))).is_err() {
        return String::new();
    }
    let mut out = Vec::new();
    let _ = f.take(cap).read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The last `cap` bytes of the log at `path` (see [`open_regular`]); empty when it cannot be
/// read safely.
pub fn read_log_end(path: &Path, cap: u64) -> String {
    match open_regular(path) {
        Ok(mut f) => read_end(&mut f, cap),
        Err(_) => String::new(),
    }
}

/// The size of the log at `path` now (see [`open_regular`]): where the part a later
/// [`read_log_from`] reads begins. 0 when it cannot be read safely.
pub fn log_len(path: &Path) -> u64 {
    open_regular(path)
        .and_then(|f| f.metadata())
        .map(|m| m.len())
        .unwrap_or(0)
}

/// What was written to the log at `path` from byte `from` on, as (text, bytes written): at
/// most its last `cap` bytes, from a line's start when cut. A log shorter than `from` was
/// replaced, and is read from its start. None when it cannot be read safely.
pub fn read_log_from(path: &Path, from: u64, cap: u64) -> Option<(String, u64)> {
    let mut f = open_regular(path).ok()?;
    let len = f.metadata().ok()?.len();
    let from = if len < from { 0 } else { from };
    let start = from.max(len.saturating_sub(cap));
    f.seek(SeekFrom::Start(start)).ok()?;
    let mut out = Vec::new();
    (&mut f).take(len - start).read_to_end(&mut out).ok()?;
    if start > from {
        let cut = out
            .iter()
            .position(|b| *b == b'\n')
            .map_or(out.len(), |i| i + 1);
        out.drain(..cut);
    }
    Some((String::from_utf8_lossy(&out).into_owned(), len - from))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_log_is_read_from_an_offset_bounded_and_from_a_lines_start() {
        use std::io::Write;
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("log");
        fs::write(&p, "start-up 1\nstart-up 2\n").unwrap();
        let from = log_len(&p);
        assert_eq!(read_log_from(&p, from, 1000), Some((String::new(), 0)));
        let mut f = fs::OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"during 1\nduring 2\n").unwrap();
        assert_eq!(
            read_log_from(&p, from, 1000),
            Some(("during 1\nduring 2\n".to_string(), 18))
        );
        assert_eq!(
            read_log_from(&p, from, 12),
            Some(("during 2\n".to_string(), 18))
        );
        // Replaced by a shorter log: read from its start.
        fs::write(&p, "new\n").unwrap();
        assert_eq!(
            read_log_from(&p, from, 1000),
            Some(("new\n".to_string(), 4))
        );
        symlink(&p, t.path().join("link")).unwrap();
        assert_eq!(read_log_from(&t.path().join("link"), 0, 1000), None);
    }

    fn mode(p: &Path) -> u32 {
        fs::symlink_metadata(p).unwrap().mode() & 0o7777
    }

    #[test]
    fn directories_are_made_and_reopened() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("a/b/c");
        let d = make_dir_all(&p, Also::Nobody).unwrap();
        assert_eq!(d.path(), p);
        assert!(mode(&p) & 0o022 == 0);
        let again = open_dir(&t.path().join("a/x/../b/c"), Also::Nobody);
        assert!(again.is_err(), "x does not exist");
        fs::create_dir(t.path().join("a/x")).unwrap();
        let again = open_dir(&t.path().join("a/x/../b/c"), Also::Nobody).unwrap();
        assert_eq!(again.path(), p);
    }

    #[test]
    fn a_link_at_the_end_is_refused_and_not_followed() {
        let t = tempfile::tempdir().unwrap();
        let target = t.path().join("target");
        fs::create_dir(&target).unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o750)).unwrap();
        symlink(&target, t.path().join("link")).unwrap();
        let e = make_dir_all(&t.path().join("link"), Also::Nobody).unwrap_err();
        assert!(crate::error::is_bad_input(&e), "{e:#}");
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        let base = open_dir(t.path(), Also::Nobody).unwrap();
        let e = base.subdir("link", Also::Nobody).unwrap_err();
        assert!(crate::error::is_bad_input(&e), "{e:#}");
        assert_eq!(mode(&target), 0o750);
        // A link of this user's on the way is followed.
        let d = make_dir_all(&t.path().join("link/sub"), Also::Nobody).unwrap();
        assert_eq!(d.path(), target.join("sub"));
    }

    #[test]
    fn a_directory_others_can_write_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let open = t.path().join("open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
        let e = open_dir(&open, Also::Nobody).unwrap_err();
        assert!(crate::error::is_bad_input(&e), "{e:#}");
        assert!(
            e.to_string().contains("can be written by other users"),
            "{e}"
        );
        // On the way, too, unless it is sticky (as /tmp is).
        let e = make_dir_all(&open.join("x"), Also::Nobody).unwrap_err();
        assert!(crate::error::is_bad_input(&e), "{e:#}");
        assert!(!open.join("x").exists());
        fs::set_permissions(&open, fs::Permissions::from_mode(0o1777)).unwrap();
        make_dir_all(&open.join("x"), Also::Nobody).unwrap();
    }

    #[test]
    fn a_directory_to_be_made_is_checked_on_the_way_to_it() {
        let t = tempfile::tempdir().unwrap();
        let open = t.path().join("open");
        fs::create_dir(&open).unwrap();
        check_dir(&open.join("a/b")).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
        let e = check_dir(&open.join("a/b")).unwrap_err();
        assert!(crate::error::is_bad_input(&e), "{e:#}");
        assert!(!open.join("a").exists(), "nothing made");
        fs::set_permissions(&open, fs::Permissions::from_mode(0o1777)).unwrap();
        check_dir(&open.join("a/b")).unwrap();
        assert!(check_dir(&open).is_err(), "worked in itself, sticky or not");
    }

    #[test]
    fn files_are_never_written_through_a_link() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        let link = t.path().join("out.csv");
        symlink(&victim, &link).unwrap();
        assert!(create_new(&link, 0o644).is_err());
        let mut f = create_replacing(&link, 0o644).unwrap();
        io::Write::write_all(&mut f, b"new").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(fs::read_to_string(&link).unwrap(), "new");
        assert!(!fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn reads_refuse_links_second_names_and_big_files() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("f");
        fs::write(&f, "0123456789").unwrap();
        assert_eq!(read_capped(&f, 10).unwrap(), b"0123456789");
        assert!(read_capped(&f, 9).is_err());
        symlink(&f, t.path().join("l")).unwrap();
        assert!(read_capped(&t.path().join("l"), 100).is_err());
        fs::hard_link(&f, t.path().join("h")).unwrap();
        assert!(read_capped(&t.path().join("h"), 100).is_err());
        fs::remove_file(t.path().join("h")).unwrap();
        assert_eq!(read_log_end(&f, 4), "6789");
        assert_eq!(read_log_end(&t.path().join("l"), 4), "");
    }
}
