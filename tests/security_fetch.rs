//! `dbperf fetch` as root against hostile builds, end to end (the unpacker's own property tests
//! are in src/fetch/archive/tests.rs):
//!
//! * a tarball whose links climb out (a chain that each looks inside, a hard link through it)
//!   writes nothing outside the cache, caches nothing and is bad input (exit 2);
//! * setuid, setgid and group/other write bits of a build do not survive into the cache;
//! * `--from FILE --sha256 H` caches only what had the sha256 H, even while another user swaps
//!   the file in its directory;
//! * the cache is read as it is written: a FIFO or a link as build.json, an entry that is a link
//!   or that others may write, a cache another user owns, a basedir leaving the build: one
//!   sentence and exit 2 from `run`, `fetch --list` and `fetch --remove`, in bounded time.
//!
//! The tarballs hold the host's own PostgreSQL programs (the README's test command installs
//! PostgreSQL), so everything but the hostile part is a build dbperf would take.

use crate::common;

use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use common::{dbperf, text};

/// The host's PostgreSQL bin directory and the version it reports ("15.18").
fn host_postgres() -> Option<(PathBuf, String)> {
    let bin = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .find(|b| b.join("postgres").is_file())?;
    let v = std::process::Command::new(bin.join("postgres"))
        .arg("--version")
        .output()
        .ok()?;
    let version = String::from_utf8_lossy(&v.stdout)
        .split_whitespace()
        .nth(2)?
        .to_string();
    Some((bin, version))
}

/// One entry of a hand-made tarball: names written as raw header bytes (the tar crate's
/// setters refuse `..`, an attacker's archive does not).
enum Entry<'a> {
    File(&'a str, Vec<u8>, u32),
    Dir(&'a str, u32),
    Link(&'a str, &'a str),
    Hard(&'a str, &'a str),
}

fn header(name: &str, kind: tar::EntryType, mode: u32, size: usize, link: &str) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    let g = h.as_gnu_mut().unwrap();
    g.name[..name.len()].copy_from_slice(name.as_bytes());
    g.linkname[..link.len()].copy_from_slice(link.as_bytes());
    h.set_entry_type(kind);
    h.set_mode(mode);
    h.set_size(size as u64);
    h.set_cksum();
    h
}

/// A .tar.gz of `entries`.
fn tarball(path: &Path, entries: &[Entry]) {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut b = tar::Builder::new(gz);
    for e in entries {
        let (h, data) = match e {
            Entry::File(n, d, m) => (header(n, tar::EntryType::Regular, *m, d.len(), ""), &d[..]),
            Entry::Dir(n, m) => (header(n, tar::EntryType::Directory, *m, 0, ""), &[][..]),
            Entry::Link(n, t) => (header(n, tar::EntryType::Symlink, 0o777, 0, t), &[][..]),
            Entry::Hard(n, t) => (header(n, tar::EntryType::Link, 0o644, 0, t), &[][..]),
        };
        b.append(&h, data).unwrap();
    }
    std::fs::write(path, b.into_inner().unwrap().finish().unwrap()).unwrap();
}

/// The host's postgres and initdb as a build's `pgsql/bin/`, with the given modes.
fn postgres_entries(bin: &Path, mode: u32) -> Vec<(String, Vec<u8>, u32)> {
    ["postgres", "initdb"]
        .iter()
        .map(|p| {
            (
                format!("pgsql/bin/{p}"),
                std::fs::read(bin.join(p)).unwrap(),
                mode,
            )
        })
        .collect()
}

fn fetch(args: &[&str], cache: &Path) -> Output {
    dbperf()
        .arg("fetch")
        .args(args)
        .arg("--cache-dir")
        .arg(cache)
        .output()
        .unwrap()
}

fn bad_input(o: &Output, says: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", text(o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(says), "expected {says:?}: {}", text(o));
    assert_eq!(err.trim().lines().count(), 1, "one sentence: {err}");
}

/// Every path below `dir`, links not followed.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            }
            out.push(e.path());
        }
    }
    out.sort();
    out
}

#[test]
fn a_tarball_whose_links_climb_out_writes_nothing_outside_and_is_exit_2() {
    let Some((bin, version)) = host_postgres() else {
        eprintln!("skipped: no PostgreSQL under /usr/lib/postgresql");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // The cache three levels down, so a chain of three links would reach `tmp`.
    let cache = tmp.path().join("a/b/cache");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(tmp.path().join("victim"), "precious").unwrap();
    let before = tree(tmp.path());
    let archives = tempfile::tempdir().unwrap();
    let mut files = postgres_entries(&bin, 0o755);
    let chain = [
        vec![
            Entry::Link("pgsql/l", ".."),
            Entry::Link("pgsql/l/x", ".."),
            Entry::Link("pgsql/l/x/y", ".."),
            Entry::Link("pgsql/l/x/y/z", ".."),
            Entry::File("pgsql/l/x/y/z/w/escaped", b"as root".to_vec(), 0o644),
        ],
        vec![
            Entry::Link("pgsql/up", "."),
            Entry::Hard("pgsql/victim", "pgsql/up/../../../../victim"),
        ],
        vec![Entry::Link("pgsql/etc", "/etc")],
        vec![Entry::File("pgsql/../../escaped", b"x".to_vec(), 0o644)],
    ];
    for (i, hostile) in chain.into_iter().enumerate() {
        let mut entries: Vec<Entry> = files
            .iter_mut()
            .map(|(n, d, m)| Entry::File(n, std::mem::take(d), *m))
            .collect();
        entries.extend(hostile);
        let t = archives.path().join(format!("hostile{i}.tar.gz"));
        tarball(&t, &entries);
        files = postgres_entries(&bin, 0o755);
        let o = fetch(
            &["postgres", &version, "--from", t.to_str().unwrap()],
            &cache,
        );
        bad_input(
            &o,
            if i == 1 {
                "hard link"
            } else {
                "leaves its directory"
            },
        );
        let mut now = tree(tmp.path());
        now.retain(|p| !p.starts_with(&cache));
        let mut was = before.clone();
        was.retain(|p| !p.starts_with(&cache));
        assert_eq!(now, was, "nothing made outside the cache");
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("victim")).unwrap(),
            "precious"
        );
        assert!(
            tree(&cache).is_empty(),
            "nothing cached: {:?}",
            tree(&cache)
        );
    }
}

#[test]
fn setuid_and_wide_modes_do_not_survive_into_the_cache() {
    let Some((bin, version)) = host_postgres() else {
        eprintln!("skipped: no PostgreSQL under /usr/lib/postgresql");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let files = postgres_entries(&bin, 0o6777);
    let mut entries: Vec<Entry> = files
        .iter()
        .map(|(n, d, m)| Entry::File(n, d.clone(), *m))
        .collect();
    entries.push(Entry::Dir("pgsql/share", 0o1777));
    entries.push(Entry::File("pgsql/share/x", b"x".to_vec(), 0o4666));
    let t = tmp.path().join("suid.tar.gz");
    tarball(&t, &entries);
    let o = fetch(
        &["postgres", &version, "--from", t.to_str().unwrap()],
        &cache,
    );
    assert!(o.status.success(), "{}", text(&o));
    let build = cache.join(format!("postgres-{version}"));
    let paths = tree(&build);
    assert!(paths.len() >= 5, "{paths:?}");
    for p in paths {
        let m = std::fs::symlink_metadata(&p).unwrap();
        assert_eq!(
            m.mode() & 0o7022,
            0,
            "{} has mode {:o}",
            p.display(),
            m.mode()
        );
        // SAFETY: geteuid has no preconditions.
        assert_eq!(m.uid(), unsafe { libc::geteuid() }, "{}", p.display());
    }
    assert_eq!(
        std::fs::metadata(build.join("bin/postgres"))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777,
        0o755
    );
}

#[test]
fn a_from_file_swapped_while_it_is_read_is_never_cached_as_the_other() {
    let Some((bin, version)) = host_postgres() else {
        eprintln!("skipped: no PostgreSQL under /usr/lib/postgresql");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let make = |name: &str, extra: Option<&str>| {
        let mut entries: Vec<Entry> = Vec::new();
        let files = postgres_entries(&bin, 0o755);
        for (n, d, m) in &files {
            entries.push(Entry::File(n, d.clone(), *m));
        }
        if let Some(x) = extra {
            entries.push(Entry::File(x, b"swapped in".to_vec(), 0o644));
        }
        let p = tmp.path().join(name);
        tarball(&p, &entries);
        p
    };
    let good = make("good.tar.gz", None);
    let evil = make("evil.tar.gz", Some("pgsql/bin/evil"));
    let sha = {
        use sha2::Digest;
        sha2::Sha256::digest(std::fs::read(&good).unwrap())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    // Another user's directory, in effect: the file at `given` changes under dbperf's feet.
    let given = tmp.path().join("given.tar.gz");
    std::fs::copy(&good, &given).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (stop, good, evil, given, dir) = (
            stop.clone(),
            good.clone(),
            evil.clone(),
            given.clone(),
            tmp.path().to_path_buf(),
        );
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let from = if i.is_multiple_of(2) { &evil } else { &good };
                let tmp = dir.join(format!("next{}", i % 2));
                let _ = std::fs::copy(from, &tmp);
                let _ = std::fs::rename(&tmp, &given);
                i += 1;
            }
        })
    };
    let (mut cached, mut refused) = (0, 0);
    for _ in 0..6 {
        let o = fetch(
            &[
                "postgres",
                &version,
                "--from",
                given.to_str().unwrap(),
                "--sha256",
                &sha,
            ],
            &cache,
        );
        let build = cache.join(format!("postgres-{version}"));
        if o.status.success() {
            cached += 1;
            assert!(
                !build.join("bin/evil").exists(),
                "the other file was cached"
            );
            let b: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(build.join("build.json")).unwrap())
                    .unwrap();
            assert_eq!(b["sha256"], sha.as_str());
            let o = fetch(&["--remove", "postgres", &version], &cache);
            assert!(o.status.success(), "{}", text(&o));
        } else {
            refused += 1;
            assert_eq!(o.status.code(), Some(1), "{}", text(&o));
            assert!(
                String::from_utf8_lossy(&o.stderr).contains("sha256"),
                "{}",
                text(&o)
            );
            assert!(!build.exists());
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    eprintln!("swapped file: {cached} fetches cached the right build, {refused} were refused");
}

/// A cache with one build entry of dbperf's shape, whose build.json `plant` then replaces.
fn cache_with_entry(dir: &Path) -> (PathBuf, PathBuf) {
    let cache = dir.join("cache");
    let entry = cache.join("postgres-13.20");
    std::fs::create_dir_all(entry.join("bin")).unwrap();
    let info = serde_json::json!({
        "schema": 1, "engine": "postgres", "version": "13.20", "family": "test",
        "source": {"client": "npm"}, "sha256": "0", "size": 1,
        "fetched_at": "2026-01-01T00:00:00Z", "basedir": ".",
    });
    std::fs::write(entry.join("build.json"), info.to_string()).unwrap();
    (cache, entry)
}

/// `run`, `fetch --list` and `fetch --remove` on `cache`: each one sentence and exit 2 that
/// says `says`, well within a minute.
fn every_reader_refuses(cache: &Path, says: &str) {
    let started = Instant::now();
    let out = tempfile::tempdir().unwrap();
    let o = dbperf()
        .args([
            "run",
            "--no-progress",
            "--target",
            "postgres@13",
            "--cache-dir",
        ])
        .arg(cache)
        .arg("--out")
        .arg(out.path().join("r"))
        .output()
        .unwrap();
    bad_input(&o, says);
    bad_input(&fetch(&["--list", "postgres"], cache), says);
    bad_input(&fetch(&["--remove", "postgres", "13"], cache), says);
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn the_cache_is_read_as_it_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    // A FIFO as build.json: once a hang of `run` and `fetch --remove`.
    let (cache, entry) = cache_with_entry(&tmp.path().join("fifo"));
    std::fs::remove_file(entry.join("build.json")).unwrap();
    let c = std::ffi::CString::new(entry.join("build.json").to_str().unwrap()).unwrap();
    // SAFETY: a valid C string and a mode.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    every_reader_refuses(&cache, "FIFO");
    // A link to /dev/zero: once 2 GB read.
    let (cache, entry) = cache_with_entry(&tmp.path().join("zero"));
    std::fs::remove_file(entry.join("build.json")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", entry.join("build.json")).unwrap();
    every_reader_refuses(&cache, "symbolic link");
    // A basedir that leads to binaries elsewhere.
    let (cache, entry) = cache_with_entry(&tmp.path().join("base"));
    let text = std::fs::read_to_string(entry.join("build.json")).unwrap();
    let text = text.replace("\"basedir\":\".\"", "\"basedir\":\"../../../usr/bin\"");
    std::fs::File::create(entry.join("build.json"))
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    every_reader_refuses(&cache, "basedir");
    // An entry others may write to.
    let (cache, entry) = cache_with_entry(&tmp.path().join("open"));
    std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o777)).unwrap();
    every_reader_refuses(&cache, "can be written by other users");
    // As root: a cache, or an entry, that another user owns.
    if let Some((uid, gid)) = common::attacker() {
        let (cache, _) = cache_with_entry(&tmp.path().join("theirs"));
        std::os::unix::fs::chown(&cache, Some(uid), Some(gid)).unwrap();
        every_reader_refuses(&cache, "belongs to another user");
        let (cache, entry) = cache_with_entry(&tmp.path().join("entry"));
        std::os::unix::fs::chown(&entry, Some(uid), Some(gid)).unwrap();
        every_reader_refuses(&cache, "belongs to another user");
    }
}
