//! The unpacker against hostile archives: whatever an archive holds, nothing is made outside
//! the build, every link in the build stays inside it, and no mode wider than 0755 survives.

use super::*;
use crate::safe_fs::{self, tree::Tree, Also};
use proptest::prelude::*;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

/// One tar entry, its names written into the header as raw bytes (the tar crate's own setters
/// refuse `..`, which an attacker's archive does not).
#[derive(Debug, Clone)]
struct E {
    kind: EntryType,
    name: String,
    link: String,
    mode: u32,
    data: Vec<u8>,
}

fn file(name: &str, data: &[u8]) -> E {
    E {
        kind: EntryType::Regular,
        name: name.into(),
        link: String::new(),
        mode: 0o644,
        data: data.to_vec(),
    }
}

fn sym(name: &str, target: &str) -> E {
    E {
        kind: EntryType::Symlink,
        link: target.into(),
        ..file(name, b"")
    }
}

fn hard(name: &str, target: &str) -> E {
    E {
        kind: EntryType::Link,
        ..sym(name, target)
    }
}

fn tar_bytes(entries: &[E]) -> Vec<u8> {
    let mut out = Vec::new();
    for e in entries {
        let mut h = tar::Header::new_gnu();
        {
            let g = h.as_gnu_mut().unwrap();
            let n = e.name.as_bytes();
            g.name[..n.len().min(100)].copy_from_slice(&n[..n.len().min(100)]);
            let l = e.link.as_bytes();
            g.linkname[..l.len().min(100)].copy_from_slice(&l[..l.len().min(100)]);
        }
        h.set_entry_type(e.kind);
        h.set_mode(e.mode);
        h.set_size(e.data.len() as u64);
        h.set_cksum();
        out.extend_from_slice(h.as_bytes());
        out.extend_from_slice(&e.data);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    out.resize(out.len() + 1024, 0);
    out
}

#[derive(Debug, Clone, Copy)]
enum Wrap {
    Gz,
    Xz,
    Deb,
}

fn gz(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

fn xz(b: &[u8]) -> Vec<u8> {
    let mut w =
        lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::with_preset(1)).unwrap();
    w.write_all(b).unwrap();
    w.finish().unwrap()
}

/// An `ar` archive of (name, data) members.
fn ar(members: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut out = b"!<arch>\n".to_vec();
    for (name, data) in members {
        let head = format!(
            "{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
            name,
            0,
            0,
            0,
            100644,
            data.len()
        );
        assert_eq!(head.len(), 60);
        out.extend_from_slice(head.as_bytes());
        out.extend_from_slice(data);
        if data.len() % 2 == 1 {
            out.push(b'\n');
        }
    }
    out
}

fn deb(tar: &[u8]) -> Vec<u8> {
    ar(&[
        ("debian-binary", b"2.0\n".to_vec()),
        (
            "control.tar.xz",
            xz(&tar_bytes(&[file("./control", b"Package: x\n")])),
        ),
        ("data.tar.xz", xz(tar)),
    ])
}

/// A scratch place: `base/outside/` with a file to protect, and the build's tree `base/s/b`.
struct Place {
    _t: tempfile::TempDir,
    base: PathBuf,
    tree: Tree,
}

fn place() -> Place {
    let t = tempfile::tempdir().unwrap();
    let base = t.path().to_path_buf();
    fs::create_dir_all(base.join("outside")).unwrap();
    fs::write(base.join("outside/victim"), "keep").unwrap();
    fs::create_dir(base.join("s")).unwrap();
    let s = safe_fs::open_dir(&base.join("s"), Also::Nobody).unwrap();
    let tree = Tree::create(&s, "b").unwrap();
    Place { _t: t, base, tree }
}

fn write_file(p: &Place, bytes: &[u8]) -> File {
    let f = p.base.join("archive");
    fs::write(&f, bytes).unwrap();
    File::open(&f).unwrap()
}

/// Unpacks `entries` wrapped as `w` into a fresh place: the result and the place.
fn unpack(entries: &[E], w: Wrap) -> (anyhow::Result<u64>, Place) {
    let p = place();
    let raw = tar_bytes(entries);
    let r = {
        let (bytes, absolute) = match w {
            Wrap::Gz => (gz(&raw), Absolute::Refuse),
            Wrap::Xz => (xz(&raw), Absolute::Refuse),
            Wrap::Deb => (deb(&raw), Absolute::FromRoot),
        };
        let f = write_file(&p, &bytes);
        let mut u = Unpacker::new(&p.tree, absolute);
        let read = match w {
            Wrap::Deb => u.deb(f, "the test package"),
            _ => u.tarball(f, &Rel::root(), "the test tarball"),
        };
        read.and_then(|_| u.finish(Top::Root)).map(|d| d.entries)
    };
    (r, p)
}

/// Every path under `dir`, not following links.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p.clone());
            }
            out.push(p);
        }
    }
    out.sort();
    out
}

/// What must hold whatever the archive was.
fn nothing_escaped(p: &Place) {
    let top: Vec<_> = fs::read_dir(&p.base)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(top.len(), 3, "only archive, outside and s: {top:?}");
    assert_eq!(
        walk(&p.base.join("outside")),
        [p.base.join("outside/victim")]
    );
    assert_eq!(
        fs::read_to_string(p.base.join("outside/victim")).unwrap(),
        "keep"
    );
    let s: Vec<_> = fs::read_dir(p.base.join("s"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(s, ["b"]);
    let root = fs::canonicalize(p.tree.path()).unwrap();
    for f in walk(p.tree.path()) {
        let m = fs::symlink_metadata(&f).unwrap();
        if m.file_type().is_symlink() {
            // Where the kernel takes it, if anywhere: inside.
            if let Ok(real) = fs::canonicalize(&f) {
                assert!(
                    real.starts_with(&root),
                    "{} -> {}",
                    f.display(),
                    real.display()
                );
            }
            continue;
        }
        assert!(m.is_file() || m.is_dir(), "{}", f.display());
        assert_eq!(
            m.mode() & 0o7022,
            0,
            "{} has mode {:o}",
            f.display(),
            m.mode()
        );
        assert_eq!(m.uid(), unsafe { libc::geteuid() });
    }
}

fn bad(r: anyhow::Result<u64>, says: &str) {
    let e = r.unwrap_err();
    assert!(crate::error::is_bad_input(&e), "{e:#}");
    assert!(e.to_string().contains(says), "{e}");
}

#[test]
fn a_chain_of_links_that_each_look_inside_cannot_climb_out() {
    // The attack of the issue: each link points one level up from a directory that is itself
    // a link, so the next file would land above the build.
    let entries = [
        sym("d/l", ".."),
        sym("d/l/x", ".."),
        sym("d/l/x/y", ".."),
        file("d/l/x/y/z/escaped", b"root's now"),
    ];
    for w in [Wrap::Gz, Wrap::Xz, Wrap::Deb] {
        let (r, p) = unpack(&entries, w);
        assert!(r.is_err(), "{w:?}");
        nothing_escaped(&p);
    }
    // Links to links that climb: each alone looks inside.
    let (r, p) = unpack(
        &[sym("a", "b/.."), sym("b", "c/.."), sym("c", "..")],
        Wrap::Gz,
    );
    bad(r, "leaves its directory");
    nothing_escaped(&p);
    // A hard link through such a chain to a file outside.
    let entries = [sym("l", "."), hard("h", "l/../../outside/victim")];
    let (r, p) = unpack(&entries, Wrap::Gz);
    bad(r, "hard link");
    nothing_escaped(&p);
}

#[test]
fn links_that_stay_inside_are_made_after_the_files() {
    let entries = [
        file("pkg/bin/postgres", b"x"),
        sym("pkg/lib/libx.so", "libx.so.1"),
        file("pkg/lib/libx.so.1", b"lib"),
        sym("pkg/share", "lib/../bin"),
        hard("pkg/bin/initdb", "pkg/bin/postgres"),
    ];
    let p = place();
    let f = write_file(&p, &gz(&tar_bytes(&entries)));
    let mut u = Unpacker::new(&p.tree, Absolute::Refuse);
    let prefix = Rel::parse(Path::new("pkg")).unwrap();
    let d = u.tarball(f, &prefix, "t").unwrap();
    assert_eq!(d.size, fs::metadata(p.base.join("archive")).unwrap().len());
    assert_eq!(
        d.sha256,
        sha256_bytes(&fs::read(p.base.join("archive")).unwrap())
    );
    // Five entries, and the two directories their paths imply (bin, lib).
    assert_eq!(u.finish(Top::Root).unwrap().entries, 7);
    let t = p.tree.path();
    assert_eq!(fs::read_to_string(t.join("lib/libx.so")).unwrap(), "lib");
    assert_eq!(
        fs::read_link(t.join("share")).unwrap(),
        Path::new("lib/../bin")
    );
    assert_eq!(fs::metadata(t.join("bin/initdb")).unwrap().nlink(), 2);
    nothing_escaped(&p);
}

#[test]
fn names_and_links_that_leave_are_bad_input() {
    for entries in [
        vec![file("../x", b"")],
        vec![file("/etc/x", b"")],
        vec![file("a/../../x", b"")],
        vec![sym("a", "/etc/passwd")],
        vec![sym("a", "../../x")],
        vec![sym("a", "")],
        vec![hard("a", "/etc/passwd")],
        vec![hard("a", "missing")],
    ] {
        let (r, p) = unpack(&entries, Wrap::Gz);
        bad(r, "holds");
        nothing_escaped(&p);
    }
}

#[test]
fn modes_are_narrowed_and_devices_refused() {
    let mut suid = file("bin/x", b"#!/bin/sh\n");
    suid.mode = 0o6777;
    let mut dir = file("d", b"");
    dir.kind = EntryType::Directory;
    dir.mode = 0o1777;
    let (r, p) = unpack(&[suid, dir], Wrap::Gz);
    r.unwrap();
    let m = |f: &str| {
        fs::metadata(p.tree.path().join(f))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    assert_eq!(m("bin/x"), 0o755);
    assert_eq!(m("d"), 0o755);
    for kind in [EntryType::Fifo, EntryType::Char, EntryType::Block] {
        let e = E {
            kind,
            ..file("dev", b"")
        };
        let (r, p) = unpack(&[e], Wrap::Gz);
        bad(r, "device or FIFO");
        nothing_escaped(&p);
    }
}

#[test]
fn a_debian_package_reads_absolute_links_from_its_root() {
    let entries = [
        file("./usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", b"ld"),
        sym(
            "./lib64/ld-linux-x86-64.so.2",
            "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
        ),
        sym("./usr/bin/root", "/"),
    ];
    let (r, p) = unpack(&entries, Wrap::Deb);
    r.unwrap();
    let t = p.tree.path();
    assert_eq!(
        fs::read_link(t.join("lib64/ld-linux-x86-64.so.2")).unwrap(),
        Path::new("../usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2")
    );
    assert_eq!(
        fs::read_to_string(t.join("lib64/ld-linux-x86-64.so.2")).unwrap(),
        "ld"
    );
    assert_eq!(
        fs::canonicalize(t.join("usr/bin/root")).unwrap(),
        fs::canonicalize(t).unwrap()
    );
    nothing_escaped(&p);
    // Not a package at all.
    let p = place();
    let f = write_file(&p, &gz(b"x"));
    let e = Unpacker::new(&p.tree, Absolute::FromRoot)
        .deb(f, "x.deb")
        .unwrap_err();
    assert!(crate::error::is_bad_input(&e), "{e}");
}

#[test]
fn long_names_are_read_under_a_cap() {
    // A GNU long name whose header claims more than a path can be.
    let mut long = file("././@LongLink", &vec![b'a'; 5000]);
    long.kind = EntryType::GNULongName;
    let (r, _) = unpack(&[long, file("x", b"")], Wrap::Gz);
    bad(r, "longer than");
    // A real one is used.
    let name = format!("{}/f", "d".repeat(150));
    let mut long = file("././@LongLink", name.as_bytes());
    long.kind = EntryType::GNULongName;
    let (r, p) = unpack(&[long, file("ignored", b"v")], Wrap::Gz);
    r.unwrap();
    assert_eq!(fs::read_to_string(p.tree.path().join(&name)).unwrap(), "v");
}

#[test]
fn cut_and_corrupt_archives_fail_without_being_called_bad_input() {
    let big: Vec<u8> = (0..200_000u32).map(|i| (i * 7919 % 251) as u8).collect();
    for w in [Wrap::Gz, Wrap::Xz] {
        let raw = tar_bytes(&[file("a", &big)]);
        let bytes = match w {
            Wrap::Gz => gz(&raw),
            _ => xz(&raw),
        };
        let p = place();
        let f = write_file(&p, &bytes[..bytes.len() / 2]);
        let e = Unpacker::new(&p.tree, Absolute::Refuse)
            .tarball(f, &Rel::root(), "t")
            .unwrap_err();
        assert!(!crate::error::is_bad_input(&e), "{w:?}: {e}");
        // One byte flipped near the end: the stream's own check fails.
        let mut flipped = bytes.clone();
        let at = flipped.len() - 6;
        flipped[at] ^= 0xff;
        let p = place();
        let f = write_file(&p, &flipped);
        assert!(Unpacker::new(&p.tree, Absolute::Refuse)
            .tarball(f, &Rel::root(), "t")
            .is_err());
    }
}

/// Unpacks `entries` (a .tar.gz) finishing at `top`: the result and the place.
fn unpack_top(entries: &[E], top: Top) -> (anyhow::Result<Unpacked>, Place) {
    let p = place();
    let f = write_file(&p, &gz(&tar_bytes(entries)));
    let mut u = Unpacker::new(&p.tree, Absolute::Refuse);
    let r = u.tarball(f, &Rel::root(), "t").and_then(|_| u.finish(top));
    (r, p)
}

#[test]
fn a_single_top_directory_is_the_build() {
    let (r, _) = unpack_top(
        &[
            file("mysql-8.0/bin/mysqld", b""),
            file("mysql-8.0/share/x", b""),
        ],
        Top::SingleDirectory,
    );
    assert_eq!(r.unwrap().top, Rel::parse(Path::new("mysql-8.0")).unwrap());
    let (r, _) = unpack_top(
        &[file("bin/mysqld", b""), file("share/x", b"")],
        Top::SingleDirectory,
    );
    assert!(r.unwrap().top.is_root());
    // A link beside the directory: not a single top.
    let (r, _) = unpack_top(
        &[file("pg/bin/x", b""), sym("l", "pg")],
        Top::SingleDirectory,
    );
    assert!(r.unwrap().top.is_root());
}

/// When the build is the tarball's top directory, a link is checked against that directory,
/// not the staging root above it: `pg/up -> ..` looks inside while unpacking and leads to the
/// cache once `pg` is the build; `pg/bin -> ../pg/bin2` leads to another build named `pg`.
#[test]
fn links_are_checked_against_the_directory_that_becomes_the_build() {
    for link in [
        sym("pg/up", ".."),
        sym("pg/bin", "../pg/bin2"),
        sym("pg/a/b", "../../x"),
    ] {
        let entries = [file("pg/bin2/postgres", b"x"), link.clone()];
        let (r, p) = unpack_top(&entries, Top::SingleDirectory);
        let e = r.unwrap_err();
        assert!(crate::error::is_bad_input(&e), "{e:#}");
        assert!(e.to_string().contains("leaves its directory"), "{e}");
        nothing_escaped(&p);
        // From the root it would be inside.
        let (r, _) = unpack_top(&entries, Top::Root);
        assert!(r.is_ok(), "{:?}", link.name);
    }
}

#[test]
fn deep_paths_long_pax_names_and_bombs_are_refused_early() {
    let deep = vec!["d"; MAX_DEPTH + 1].join("/");
    let (r, p) = unpack(&[file(&deep, b"x")], Wrap::Gz);
    bad(r, "deeper than");
    nothing_escaped(&p);
    // A pax record is "<its length> key=value\n".
    let record = |n: usize| format!("{n} path={}\n", "a/".repeat(2495));
    let mut pax = file("././@PaxHeader", record(record(0).len() + 3).as_bytes());
    pax.kind = EntryType::XHeader;
    let (r, _) = unpack(&[pax, file("x", b"")], Wrap::Gz);
    bad(r, "longer than");
    // 200 MiB of zeros in a global header dbperf skips: refused as it grows, long before 16 GiB.
    let mut bomb = file("././@GlobalHead", &vec![0u8; 200 << 20]);
    bomb.kind = EntryType::XGlobalHeader;
    let started = std::time::Instant::now();
    let (r, _) = unpack(&[bomb], Wrap::Gz);
    bad(r, "fold when decompressed");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

/// The directories a path implies count as entries: a few thousand files 31 directories deep
/// each would otherwise make a hundred thousand directories.
#[test]
fn directories_paths_imply_count_as_entries() {
    let deep = vec!["d"; 30].join("/");
    let entries: Vec<E> = (0..3400)
        .map(|i| file(&format!("t{i}/{deep}/f"), b""))
        .collect();
    let (r, _) = unpack(&entries, Wrap::Gz);
    bad(r, "more than 100000 entries");
}

/// What the tree says when an entry cannot be made names the archive's path as it is: the
/// sentence says it in dbperf's words, the path quoted.
#[test]
fn an_entry_that_cannot_be_made_is_told_in_one_quoted_line() {
    let mut dir = file("x\nerror: FAKE\u{1b}[2J", b"");
    dir.kind = EntryType::Directory;
    let entries = [dir, file("x\nerror: FAKE\u{1b}[2J", b"data")];
    let (r, _) = unpack(&entries, Wrap::Gz);
    let e = format!("{:#}", r.unwrap_err());
    assert!(!e.contains('\n') && !e.contains('\u{1b}'), "{e}");
    assert!(e.contains("a directory where a file should be"), "{e}");
}

#[test]
fn a_damaged_archive_is_not_quoted() {
    // A header whose name is a line of /etc/shadow and whose checksum is wrong.
    let mut raw = tar_bytes(&[file("root:$6$secret:19000:0\u{1b}[2J", b"x")]);
    raw[148] ^= 1;
    let p = place();
    let f = write_file(&p, &raw);
    let e = Unpacker::new(&p.tree, Absolute::Refuse)
        .tarball(f, &Rel::root(), "t")
        .unwrap_err();
    let s = format!("{e:#}");
    assert!(!s.contains("secret") && !s.contains('\u{1b}'), "{s}");
    assert!(s.contains("is damaged"), "{s}");
}

/// Names from a small alphabet, so generated entries meet each other.
fn name() -> impl Strategy<Value = String> {
    let part = prop::sample::select(vec!["a", "b", "l", ".", "..", "", "/"]);
    prop::collection::vec(part, 1..5).prop_map(|v| v.join("/"))
}

fn entry() -> impl Strategy<Value = E> {
    let kind = prop::sample::select(vec![
        EntryType::Regular,
        EntryType::Directory,
        EntryType::Symlink,
        EntryType::Symlink,
        EntryType::Link,
        EntryType::Fifo,
        EntryType::Char,
    ]);
    let target = prop_oneof![
        name(),
        prop::sample::select(vec![
            "..",
            "../..",
            "/",
            "/etc",
            "/outside",
            "../outside/victim"
        ])
        .prop_map(String::from),
    ];
    let mode = prop::sample::select(vec![0o644, 0o755, 0o4755, 0o2777, 0o1777, 0o777]);
    (kind, name(), target, mode).prop_map(|(kind, name, link, mode)| E {
        kind,
        name,
        link,
        mode,
        data: b"data".to_vec(),
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 300,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn no_generated_archive_writes_outside_or_keeps_a_wide_mode(
        entries in prop::collection::vec(entry(), 1..12),
        w in prop::sample::select(vec![Wrap::Gz, Wrap::Xz, Wrap::Deb]),
    ) {
        let (_, p) = unpack(&entries, w);
        nothing_escaped(&p);
    }

    #[test]
    fn damaged_bytes_are_an_error_never_a_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..2048),
        cut in 0usize..4096,
        w in prop::sample::select(vec![Wrap::Gz, Wrap::Xz, Wrap::Deb]),
    ) {
        let raw = tar_bytes(&[file("a/b", b"x"), sym("a/c", "b")]);
        let mut good = match w {
            Wrap::Gz => gz(&raw),
            Wrap::Xz => xz(&raw),
            Wrap::Deb => deb(&raw),
        };
        let at = cut % (good.len() + 1);
        good.truncate(at);
        good.extend_from_slice(&bytes);
        let p = place();
        let f = write_file(&p, &good);
        let mut u = Unpacker::new(&p.tree, Absolute::FromRoot);
        let _ = match w {
            Wrap::Deb => u.deb(f, "t"),
            _ => u.tarball(f, &Rel::root(), "t"),
        }
        .and_then(|_| u.finish(Top::Root));
        nothing_escaped(&p);
    }
}
