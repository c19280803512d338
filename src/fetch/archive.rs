//! Downloads unpacked into a build: tarballs (gzip, xz or none) and Debian packages, each read
//! from one open file in one pass that also computes the file's sha256, so the bytes checked
//! are the bytes unpacked. Every entry lands through a [`Tree`]: nothing is written through a
//! link, owners are this user's, no setuid, setgid, sticky or group/other write bit survives,
//! and devices, FIFOs and sparse files are refused. Links are made last, after every file, and
//! only when each one, followed through every other link of the build, stays inside it.
//!
//! An archive that breaks these rules is bad input (one sentence, exit 2); one that ends early
//! or fails its checksums is a failed fetch (exit 1), as a cut download is.

use std::cell::Cell;
use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

use rustix::fs::FileType;
use sha2::{Digest, Sha256};
use tar::EntryType;

use crate::error::BadInput;
use crate::safe_fs::tree::{Rel, Tree};

/// Bytes read from one archive file.
pub const MAX_ARCHIVE: u64 = 16 << 30;
/// Bytes written into one build, over all its archives.
pub const MAX_UNPACKED: u64 = 16 << 30;
/// Entries of one build, over all its archives, the directories their paths imply counted too
/// (a DBMS build has a few thousand).
pub const MAX_ENTRIES: u64 = 100_000;
/// Bytes of all the paths and link targets of one build: what the unpacker keeps in memory.
const MAX_NAME_BYTES: usize = 32 << 20;
/// A GNU long name or long link target, or a pax path (Linux's PATH_MAX).
const MAX_LONG_NAME: u64 = 4096;
/// Directories below a build's root an entry may be: far deeper than any build's files, and
/// shallow enough that walking, checking and removing the tree stays cheap.
pub const MAX_DEPTH: usize = 32;
/// Decompressed bytes per compressed byte read, beyond the first 64 MiB: real builds shrink
/// three- to tenfold; a stream that grows a hundredfold is a bomb, however much is skipped.
const MAX_RATIO: u64 = 100;
/// A pax extended header.
const MAX_PAX: u64 = 64 << 10;
/// Decompressed bytes after a tarball's end-of-archive marker (tar pads to 10 KiB records).
const MAX_TRAILER: u64 = 1 << 20;
/// Memory the xz decoder may take for a block's dictionary: xz -9 needs 65 MiB.
const XZ_MEMORY_KIB: u32 = 256 << 10;

/// sha256 (hex) and size of a file as it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDigest {
    pub sha256: String,
    pub size: u64,
}

/// sha256 (hex) and size of a file dbperf wrote itself (a download into its staging directory).
pub fn sha256_file(f: File) -> anyhow::Result<FileDigest> {
    let mut h = Hashing::new(f);
    io::copy(&mut h, &mut io::sink()).map_err(|e| h.error(e, "a download"))?;
    Ok(h.digest())
}

pub fn sha256_bytes(b: &[u8]) -> String {
    hex(&Sha256::digest(b))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The failure of a damaged archive, in words of dbperf's own: the tar crate's and the
/// decoders' messages may quote the archive's bytes (a header's name field), and an archive
/// can be any file the user can name.
fn damaged(what: &str, e: &io::Error) -> anyhow::Error {
    let how = match e.kind() {
        io::ErrorKind::UnexpectedEof => "it ends early",
        io::ErrorKind::OutOfMemory => "decoding it needs more memory than dbperf allows",
        _ => "it is not a tarball dbperf can read, or it fails its own checksums",
    };
    anyhow::anyhow!("{what} is damaged: {how}")
}

/// A reader that hashes and counts what passes, refusing more than [`MAX_ARCHIVE`] bytes.
struct Hashing<R> {
    inner: R,
    hash: Sha256,
    size: u64,
    over: bool,
    /// `size`, for the decompressor's guard (`Expanding`), which reads it while this is
    /// borrowed by the decoder.
    seen: Rc<Cell<u64>>,
}

impl<R: Read> Hashing<R> {
    fn new(inner: R) -> Self {
        Hashing {
            inner,
            hash: Sha256::new(),
            size: 0,
            over: false,
            seen: Rc::default(),
        }
    }

    fn digest(self) -> FileDigest {
        FileDigest {
            sha256: hex(&self.hash.finalize()),
            size: self.size,
        }
    }

    /// The error a failed read becomes: past the cap it is bad input, else the archive is
    /// damaged (cut short, or failing its own checksums).
    fn error(&self, e: io::Error, what: &str) -> anyhow::Error {
        if self.over {
            return BadInput(format!(
                "{what} is larger than {}, more than a build may be",
                crate::untrusted::size(MAX_ARCHIVE)
            ))
            .into();
        }
        damaged(what, &e)
    }
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.size += n as u64;
        self.seen.set(self.size);
        if self.size > MAX_ARCHIVE {
            self.over = true;
            return Err(io::Error::other("too large"));
        }
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

/// A decompressed stream, refused once it has grown past what its compressed bytes could give
/// a real build (`MAX_RATIO`), or past `MAX_UNPACKED`: entries dbperf skips (a global pax
/// header, a directory's data) are decompressed too, and counted here.
struct Expanding<R> {
    inner: R,
    compressed: Rc<Cell<u64>>,
    out: u64,
    bomb: Rc<Cell<bool>>,
}

impl<R: Read> Read for Expanding<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.out += n as u64;
        let allowed = (64 << 20) + MAX_RATIO.saturating_mul(self.compressed.get());
        if self.out > allowed.min(MAX_UNPACKED) {
            self.bomb.set(true);
            return Err(io::Error::other("expands too much"));
        }
        Ok(n)
    }
}

/// How an absolute link target is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Absolute {
    /// Refused: an official tarball's links are relative.
    Refuse,
    /// From the build's root, as a Debian package's are (`/usr/lib/x` is the build's
    /// `usr/lib/x`): made relative to the link's directory.
    FromRoot,
}

/// Unpacks archives into one build and then makes their links.
pub struct Unpacker<'t> {
    tree: &'t Tree,
    absolute: Absolute,
    /// Regular files written, the only targets a hard link may have.
    files: HashSet<Rel>,
    /// Links to make at the end, each with its target made relative.
    links: BTreeMap<Rel, PathBuf>,
    written: u64,
    entries: u64,
    /// The archive being read, for messages.
    what: String,
    /// The archive file's bytes read so far, and whether its stream grew like a bomb.
    compressed: Rc<Cell<u64>>,
    bomb: Rc<Cell<bool>>,
    /// Directories the entries' paths imply, by a hash of the path: counted as entries.
    dirs: HashSet<u64>,
    /// Bytes of the paths and link targets kept.
    name_bytes: usize,
}

/// What the prefix of a tarball's entries is: `package/native` in an npm package.
fn strip(path: &Path, prefix: &Rel) -> Option<PathBuf> {
    let mut comps = path.components().filter(|c| *c != Component::CurDir);
    for want in prefix.names() {
        match comps.next() {
            Some(Component::Normal(n)) if n == want => {}
            _ => return None,
        }
    }
    Some(comps.collect())
}

/// At most `cap` bytes of an entry's data (a long name, a pax header); more is bad input.
fn read_small(r: &mut impl Read, cap: u64, what: &str) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    r.take(cap + 1)
        .read_to_end(&mut out)
        .map_err(|e| damaged(what, &e))?;
    if out.len() as u64 > cap {
        return Err(BadInput(format!(
            "{what} has a header entry longer than {}",
            crate::untrusted::size(cap)
        ))
        .into());
    }
    Ok(out)
}

/// A path's bytes as shown in a sentence.
fn shown(p: &[u8]) -> String {
    crate::untrusted::shown(&String::from_utf8_lossy(p))
}

/// Names a GNU long-name entry or a pax header gives the next entry.
#[derive(Default)]
struct Pending {
    path: Option<Vec<u8>>,
    link: Option<Vec<u8>>,
}

impl<'t> Unpacker<'t> {
    pub fn new(tree: &'t Tree, absolute: Absolute) -> Self {
        Unpacker {
            tree,
            absolute,
            files: HashSet::new(),
            links: BTreeMap::new(),
            written: 0,
            entries: 0,
            what: String::new(),
            compressed: Rc::default(),
            bomb: Rc::default(),
            dirs: HashSet::new(),
            name_bytes: 0,
        }
    }

    /// Counts an entry at `rel`, and the directories above it not met before, against
    /// `MAX_ENTRIES`, and its name's bytes against `MAX_NAME_BYTES`.
    fn count(&mut self, rel: &Rel, extra_bytes: usize) -> anyhow::Result<()> {
        use std::hash::{Hash, Hasher};
        let mut up = rel.parent();
        while let Some(d) = up.filter(|d| !d.is_root()) {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            d.hash(&mut h);
            if !self.dirs.insert(h.finish()) {
                break;
            }
            self.entries += 1;
            up = d.parent();
        }
        self.name_bytes += rel.to_path().as_os_str().len() + extra_bytes;
        if self.entries > MAX_ENTRIES {
            return Err(self.bad(format!(
                "has more than {MAX_ENTRIES} entries (directories its paths imply counted)"
            )));
        }
        if self.name_bytes > MAX_NAME_BYTES {
            return Err(self.bad(format!(
                "names more than {} of paths",
                crate::untrusted::size(MAX_NAME_BYTES as u64)
            )));
        }
        Ok(())
    }

    /// A failed read of the archive: a bomb is bad input, anything else a damaged archive.
    fn read_error(&self, e: &io::Error) -> anyhow::Error {
        if self.bomb.get() {
            return self.bad(format!(
                "grows more than {MAX_RATIO}-fold when decompressed, or past {}, as no build does",
                crate::untrusted::size(MAX_UNPACKED)
            ));
        }
        damaged(&self.what, e)
    }

    pub fn tree(&self) -> &Tree {
        self.tree
    }

    fn bad(&self, why: impl std::fmt::Display) -> anyhow::Error {
        BadInput(format!("{} {why}", self.what)).into()
    }

    /// The tarball in `file` (gzip, xz or uncompressed, told by its first bytes): the entries
    /// under `prefix`, the prefix removed. Returns the file's digest.
    pub fn tarball(&mut self, file: File, prefix: &Rel, what: &str) -> anyhow::Result<FileDigest> {
        self.what = what.to_string();
        let mut h = Hashing::new(file);
        self.compressed = h.seen.clone();
        let r = self.compressed_tar(&mut h, prefix);
        self.end(h, r)
    }

    /// The Debian package in `file`: its data.tar.{xz,gz} unpacked from the build's root.
    pub fn deb(&mut self, file: File, what: &str) -> anyhow::Result<FileDigest> {
        self.what = what.to_string();
        let mut h = Hashing::new(file);
        self.compressed = h.seen.clone();
        let r = self.deb_members(&mut h);
        self.end(h, r)
    }

    /// The rest of the file read (so the digest is the whole file's), and a read error made
    /// into the sentence it deserves.
    fn end(&self, mut h: Hashing<File>, r: anyhow::Result<()>) -> anyhow::Result<FileDigest> {
        if h.over {
            return Err(h.error(io::Error::other("too large"), &self.what));
        }
        r?;
        io::copy(&mut h, &mut io::sink()).map_err(|e| h.error(e, &self.what))?;
        Ok(h.digest())
    }

    fn compressed_tar(&mut self, r: &mut impl Read, prefix: &Rel) -> anyhow::Result<()> {
        let mut r = BufReader::with_capacity(1 << 16, r);
        let head = r
            .fill_buf()
            .map_err(|e| anyhow::anyhow!("{} cannot be read: {e}", self.what))?;
        if head.starts_with(&[0x1f, 0x8b]) {
            self.tar(flate2::bufread::GzDecoder::new(r), prefix)
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
            let xz = lzma_rust2::XzReader::new_mem_limit(r, true, XZ_MEMORY_KIB);
            self.tar(xz, prefix)
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Err(self
                .bad("is zstd-compressed, which dbperf does not unpack: give a .tar.gz or .tar.xz"))
        } else {
            self.tar(r, prefix)
        }
    }

    /// An `ar` archive (a .deb): `!<arch>\n`, then members of a 60-byte header (name 16,
    /// dates and ids 32, size 10 in decimal, "`\n") and their data, padded to an even length.
    /// Read by hand: the `ar` crate allocates name tables of any size a header asks.
    fn deb_members(&mut self, r: &mut impl Read) -> anyhow::Result<()> {
        let mut magic = [0u8; 8];
        r.read_exact(&mut magic)
            .map_err(|e| damaged(&self.what, &e))?;
        if &magic != b"!<arch>\n" {
            return Err(self.bad("is not a Debian package (no ar header)"));
        }
        let mut found = false;
        loop {
            let mut head = [0u8; 60];
            match r.read(&mut head[..1]) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => return Err(damaged(&self.what, &e)),
            }
            r.read_exact(&mut head[1..])
                .map_err(|e| damaged(&self.what, &e))?;
            let size = std::str::from_utf8(&head[48..58])
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok());
            let (Some(size), b"`\n") = (size, &head[58..60]) else {
                return Err(self.bad("is not a Debian package (a damaged ar header)"));
            };
            let name = String::from_utf8_lossy(&head[..16])
                .trim_end()
                .trim_end_matches('/')
                .to_string();
            let mut member = r.by_ref().take(size);
            if name.starts_with("data.tar") {
                if found {
                    return Err(self.bad("has two data members"));
                }
                found = true;
                self.compressed_tar(&mut member, &Rel::root())?;
            }
            io::copy(&mut member, &mut io::sink()).map_err(|e| damaged(&self.what, &e))?;
            if member.limit() > 0 {
                anyhow::bail!("{} is damaged: it ends inside a member", self.what);
            }
            if size % 2 == 1 {
                let _ = r.read(&mut [0u8; 1]);
            }
        }
        if !found {
            return Err(self.bad("is not a Debian package (it has no data.tar member)"));
        }
        Ok(())
    }

    /// Every entry of a tar stream. Raw entries, with GNU long names and pax headers read here
    /// under a cap (the tar crate reads them whole, whatever size their header says).
    fn tar(&mut self, r: impl Read, prefix: &Rel) -> anyhow::Result<()> {
        let r = Expanding {
            inner: r,
            compressed: self.compressed.clone(),
            out: 0,
            bomb: self.bomb.clone(),
        };
        let mut ar = tar::Archive::new(r);
        let mut pending = Pending::default();
        let entries = ar.entries().map_err(|e| damaged(&self.what, &e))?.raw(true);
        for e in entries {
            let mut e = e.map_err(|e| self.read_error(&e))?;
            self.entries += 1;
            if self.entries > MAX_ENTRIES {
                return Err(self.bad(format!(
                    "has more than {MAX_ENTRIES} entries (directories its paths imply counted)"
                )));
            }
            let kind = e.header().entry_type();
            match kind {
                EntryType::GNULongName => {
                    pending.path = Some(self.long_name(&mut e)?);
                    continue;
                }
                EntryType::GNULongLink => {
                    pending.link = Some(self.long_name(&mut e)?);
                    continue;
                }
                EntryType::XHeader => {
                    let data = read_small(&mut e, MAX_PAX, &self.what)?;
                    for x in tar::PaxExtensions::new(&data).flatten() {
                        let v = x.value_bytes();
                        let long = v.len() as u64 > MAX_LONG_NAME;
                        match x.key_bytes() {
                            b"path" | b"linkpath" if long => {
                                return Err(self.bad(format!(
                                    "names a path longer than {}",
                                    crate::untrusted::size(MAX_LONG_NAME)
                                )))
                            }
                            b"path" => pending.path = Some(v.to_vec()),
                            b"linkpath" => pending.link = Some(v.to_vec()),
                            _ => {}
                        }
                    }
                    continue;
                }
                EntryType::XGlobalHeader => continue,
                _ => {}
            }
            let path = pending
                .path
                .take()
                .unwrap_or_else(|| e.path_bytes().into_owned());
            let link = pending
                .link
                .take()
                .or_else(|| e.link_name_bytes().map(|l| l.into_owned()));
            self.entry(&mut e, kind, &path, link, prefix)?;
        }
        // The stream read to its end (gzip's and xz's own checks run there), within reason.
        let mut rest = ar.into_inner().take(MAX_TRAILER + 1);
        let n = io::copy(&mut rest, &mut io::sink()).map_err(|e| self.read_error(&e))?;
        if n > MAX_TRAILER {
            return Err(self.bad("goes on past its end-of-archive marker"));
        }
        Ok(())
    }

    /// A GNU long name's bytes, its trailing NULs removed.
    fn long_name(&self, e: &mut impl Read) -> anyhow::Result<Vec<u8>> {
        let mut v = read_small(e, MAX_LONG_NAME, &self.what)?;
        while v.last() == Some(&0) {
            v.pop();
        }
        Ok(v)
    }

    fn entry(
        &mut self,
        e: &mut tar::Entry<impl Read>,
        kind: EntryType,
        path: &[u8],
        link: Option<Vec<u8>>,
        prefix: &Rel,
    ) -> anyhow::Result<()> {
        let full = Path::new(std::ffi::OsStr::from_bytes(path));
        let Some(rest) = strip(full, prefix) else {
            return Ok(());
        };
        let Some(rel) = Rel::parse(&rest).filter(|r| r.names().len() <= MAX_DEPTH) else {
            return Err(self.bad(format!(
                "holds a path that leaves its directory, has a name over 255 bytes or is deeper \
                 than {MAX_DEPTH} directories: {}",
                shown(path)
            )));
        };
        if rel.is_root() {
            return Ok(());
        }
        if self.links.contains_key(&rel) {
            return Err(self.bad(format!("holds two entries named {}", shown(path))));
        }
        self.count(&rel, link.as_ref().map_or(0, Vec::len))?;
        let mode = e.header().mode().unwrap_or(0o644);
        // In dbperf's words: the tree's own messages name the archive's paths as they are.
        let io_err = |e: io::Error| {
            let why = match e.kind() {
                io::ErrorKind::NotADirectory => "a file or link where a directory should be",
                io::ErrorKind::IsADirectory => "a directory where a file should be",
                io::ErrorKind::AlreadyExists => "something there already",
                _ => "the file system refused it",
            };
            self.bad(format!("cannot be unpacked at {}: {why}", shown(path)))
        };
        match kind {
            EntryType::Regular | EntryType::Continuous => {
                let mut f = self.tree.create_file(&rel, mode).map_err(io_err)?;
                self.copy(e, &mut f)?;
                self.files.insert(rel);
            }
            EntryType::Directory => self.tree.make_dir(&rel, mode).map_err(io_err)?,
            EntryType::Symlink => {
                let target = link.unwrap_or_default();
                self.link(rel, PathBuf::from(OsString::from_vec(target)))?;
            }
            EntryType::Link => {
                let target = link.unwrap_or_default();
                let to = strip(Path::new(std::ffi::OsStr::from_bytes(&target)), prefix)
                    .and_then(|t| Rel::parse(&t))
                    .filter(|t| self.files.contains(t));
                let Some(to) = to else {
                    return Err(self.bad(format!(
                        "holds a hard link to something that is not one of its files: {} -> {}",
                        shown(path),
                        shown(&target)
                    )));
                };
                self.tree.hard_link(&to, &rel).map_err(io_err)?;
                self.files.insert(rel);
            }
            EntryType::GNUSparse => {
                return Err(self.bad(format!(
                    "holds a sparse file, which dbperf does not unpack: {}",
                    shown(path)
                )))
            }
            EntryType::Char | EntryType::Block | EntryType::Fifo => {
                return Err(self.bad(format!(
                    "holds a device or FIFO, which no build needs: {}",
                    shown(path)
                )))
            }
            _ => {
                return Err(self.bad(format!(
                    "holds an entry of a kind dbperf does not unpack ({:?}): {}",
                    kind,
                    shown(path)
                )))
            }
        }
        Ok(())
    }

    /// An entry's data into `f`, within what the build may hold.
    fn copy(&mut self, e: &mut impl Read, f: &mut File) -> anyhow::Result<()> {
        let room = MAX_UNPACKED - self.written;
        let mut w = io::BufWriter::with_capacity(1 << 16, f);
        let n = io::copy(&mut e.take(room + 1), &mut w).map_err(|e| damaged(&self.what, &e))?;
        w.flush()?;
        if n > room {
            return Err(self.bad(format!(
                "unpacks to more than {}, more than a build may be",
                crate::untrusted::size(MAX_UNPACKED)
            )));
        }
        self.written += n;
        Ok(())
    }

    /// A link to make at the end: `at` -> `target`. An absolute target is refused or read from
    /// the build's root (see [`Absolute`]).
    pub fn link(&mut self, at: Rel, target: PathBuf) -> anyhow::Result<()> {
        let leaves = || {
            BadInput(format!(
                "{} holds a link that leaves its directory: {} -> {}",
                self.what,
                crate::untrusted::shown(&at.to_string()),
                crate::untrusted::shown(&target.to_string_lossy())
            ))
        };
        let deep = target.components().count() > 4 * MAX_DEPTH;
        if target.as_os_str().is_empty() || target.as_os_str().as_bytes().contains(&0) || deep {
            return Err(leaves().into());
        }
        let target = match (target.is_absolute(), self.absolute) {
            (false, _) => target,
            (true, Absolute::Refuse) => return Err(leaves().into()),
            (true, Absolute::FromRoot) => {
                let depth = at.names().len().saturating_sub(1);
                let mut t = PathBuf::from("../".repeat(depth));
                t.extend(target.components().skip(1));
                if t.as_os_str().is_empty() {
                    t.push(".");
                }
                t
            }
        };
        if self.links.insert(at.clone(), target).is_some() || self.files.contains(&at) {
            return Err(BadInput(format!(
                "{} holds two entries named {}",
                self.what,
                crate::untrusted::shown(&at.to_string())
            ))
            .into());
        }
        Ok(())
    }

    /// Checks every link against the directory that becomes the build (`top`), then makes
    /// them all. A `..` that climbs above that directory leaves the build, whatever is above it
    /// while unpacking.
    pub fn finish(self, top: Top) -> anyhow::Result<Unpacked> {
        let top = match top {
            Top::Root => Rel::root(),
            Top::SingleDirectory => self.single_top()?.unwrap_or_default(),
        };
        let mut within = BTreeMap::new();
        for (at, target) in &self.links {
            let Some(r) = at.strip_prefix(&top) else {
                return Err(self.leaves(at, target));
            };
            within.insert(r, target.clone());
        }
        let mut follow = links::Links::new(&within);
        for (at, target) in &within {
            match follow.check(at, target) {
                links::Leads::Inside => {}
                links::Leads::Outside => return Err(self.leaves(at, target)),
                links::Leads::TooComplex => {
                    return Err(
                        self.bad("holds links that take more following than any build's: refused")
                    )
                }
            }
        }
        for (at, target) in &self.links {
            let taken = || {
                BadInput(format!(
                    "{} holds two entries named {}",
                    self.what,
                    crate::untrusted::shown(&at.to_string())
                ))
            };
            match self.tree.kind(at) {
                Ok(None) => {}
                Ok(Some(_)) | Err(_) => return Err(taken().into()),
            }
            self.tree.symlink(at, target).map_err(|_| taken())?;
        }
        Ok(Unpacked {
            entries: self.entries,
            top,
        })
    }

    fn leaves(&self, at: &Rel, target: &Path) -> anyhow::Error {
        BadInput(format!(
            "{} holds a link that leaves its directory: {} -> {}",
            self.what,
            crate::untrusted::shown(&at.to_string()),
            crate::untrusted::shown(&target.to_string_lossy())
        ))
        .into()
    }

    /// The one directory every entry is under, links to be made included; None when the root
    /// holds anything else.
    fn single_top(&self) -> anyhow::Result<Option<Rel>> {
        let mut names = self.tree.names(&Rel::root())?;
        names.extend(self.links.keys().filter_map(|l| l.names().first().cloned()));
        names.sort();
        names.dedup();
        let [only] = names.as_slice() else {
            return Ok(None);
        };
        let rel = Rel::root().join(only).expect("a name of the tree");
        let dir = matches!(self.tree.kind(&rel)?, Some(FileType::Directory));
        Ok((dir && !self.links.contains_key(&rel)).then_some(rel))
    }
}

/// Where a build's own directory is in what was unpacked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Top {
    /// The tree's root (npm's `native/`, a Debian package's `/`).
    Root,
    /// The one directory every entry is under, when there is one (an official tarball's
    /// `mysql-8.0.36-linux-glibc2.28-x86_64/`); else the root.
    SingleDirectory,
}

/// What `finish` leaves: how many entries were read, and the build's directory in the tree.
#[derive(Debug)]
pub struct Unpacked {
    pub entries: u64,
    pub top: Rel,
}

/// A small file of the build (pg-symlinks.json), at most `cap` bytes, as text.
pub fn read_small_file(tree: &Tree, rel: &Rel, cap: u64) -> anyhow::Result<Option<String>> {
    match tree.kind(rel)? {
        None => return Ok(None),
        Some(FileType::RegularFile) => {}
        Some(_) => {
            return Err(BadInput(format!("{rel} in the build is not a regular file")).into())
        }
    }
    let f = tree.open_file(rel)?;
    let bytes = crate::safe_fs::read_file_capped(f, cap)
        .map_err(|_| BadInput(format!("{rel} in the build is larger than {cap} bytes")))?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| BadInput(format!("{rel} in the build is not text")).into())
}

mod links;

#[cfg(test)]
mod tests;
