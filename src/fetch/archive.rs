//! Downloads as files: their sha256, and tarballs unpacked in-process with every path checked to
//! stay inside the build directory.

use std::fs;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

/// sha256 (hex) and size of a file.
pub fn sha256_file(p: &Path) -> anyhow::Result<(String, u64)> {
    let mut f =
        fs::File::open(p).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", p.display()))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        size += n as u64;
        h.update(&buf[..n]);
    }
    Ok((hex(&h.finalize()), size))
}

pub fn sha256_bytes(b: &[u8]) -> String {
    hex(&Sha256::digest(b))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A relative path of plain components only (no `..`, no root), or None.
pub fn safe_relative(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(x) => out.push(x),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// Compression of a tarball, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    Gzip,
    Xz,
    Plain,
}

pub fn sniff(p: &Path) -> anyhow::Result<Compression> {
    let mut head = [0u8; 6];
    let mut f = fs::File::open(p)?;
    let n = f.read(&mut head)?;
    Ok(if n >= 2 && head[..2] == [0x1f, 0x8b] {
        Compression::Gzip
    } else if n >= 6 && head == [0xfd, b'7', b'z', b'X', b'Z', 0] {
        Compression::Xz
    } else {
        Compression::Plain
    })
}

/// The paths of every entry (a whole pass over the archive).
pub fn entry_names(tarball: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut ar = tar::Archive::new(reader(tarball)?);
    for e in ar
        .entries()
        .map_err(|e| anyhow::anyhow!("{} is not a tarball: {e}", tarball.display()))?
    {
        let e = e.map_err(|e| anyhow::anyhow!("{} is damaged: {e}", tarball.display()))?;
        out.push(e.path()?.into_owned());
    }
    Ok(out)
}

fn reader(tarball: &Path) -> anyhow::Result<Box<dyn Read>> {
    let f = fs::File::open(tarball)?;
    Ok(match sniff(tarball)? {
        Compression::Gzip => Box::new(flate2::read::GzDecoder::new(f)),
        Compression::Plain => Box::new(f),
        Compression::Xz => {
            // No in-process xz decoder; the system's xz streams it (Debian: xz-utils).
            let child = std::process::Command::new("xz")
                .args(["-dc"])
                .arg(tarball)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .spawn()
                .map_err(|e| {
                    crate::error::BadInput(format!(
                        "{} is xz-compressed and xz cannot run ({e}); apt-get install xz-utils",
                        tarball.display()
                    ))
                })?;
            Box::new(XzReader { child })
        }
    })
}

/// Unpacks the entries of `tarball` under `prefix` (a leading directory, "" for all) into `dest`,
/// the prefix removed. Paths that would leave `dest` are refused; a truncated or corrupt archive
/// is an error. Returns the number of entries written.
pub fn unpack(tarball: &Path, prefix: &Path, dest: &Path) -> anyhow::Result<usize> {
    let mut ar = tar::Archive::new(reader(tarball)?);
    ar.set_preserve_permissions(true);
    ar.set_overwrite(true);
    let mut n = 0;
    for entry in ar
        .entries()
        .map_err(|e| anyhow::anyhow!("{} is not a tarball: {e}", tarball.display()))?
    {
        let mut entry =
            entry.map_err(|e| anyhow::anyhow!("{} is damaged: {e}", tarball.display()))?;
        let path = entry.path()?.into_owned();
        let Ok(rest) = path.strip_prefix(prefix) else {
            continue;
        };
        let Some(rel) = safe_relative(rest) else {
            if rest.as_os_str().is_empty() || rest == Path::new(".") {
                continue;
            }
            anyhow::bail!(
                "{} holds a path that leaves its directory: {}",
                tarball.display(),
                path.display()
            );
        };
        if entry.header().entry_type().is_symlink() || entry.header().entry_type().is_hard_link() {
            let target = entry.link_name()?.unwrap_or_default().into_owned();
            let inside = rel
                .parent()
                .map(|d| d.join(&target))
                .and_then(|j| normalise(&j));
            if target.is_absolute() || inside.is_none() {
                anyhow::bail!(
                    "{} holds a link that leaves its directory: {} -> {}",
                    tarball.display(),
                    path.display(),
                    target.display()
                );
            }
        }
        let out = dest.join(&rel);
        if let Some(d) = out.parent() {
            fs::create_dir_all(d)?;
        }
        if entry.header().entry_type().is_hard_link() {
            let target = entry.link_name()?.unwrap_or_default().into_owned();
            let src = target
                .strip_prefix(prefix)
                .ok()
                .and_then(safe_relative)
                .ok_or_else(|| anyhow::anyhow!("{}: bad hard link", tarball.display()))?;
            let _ = fs::remove_file(&out);
            fs::hard_link(dest.join(src), &out)?;
        } else {
            entry
                .unpack(&out)
                .map_err(|e| anyhow::anyhow!("{} is damaged: {e}", tarball.display()))?;
        }
        n += 1;
    }
    Ok(n)
}

/// `a/b/../c` -> `a/c`; None when it climbs above its start.
fn normalise(p: &Path) -> Option<PathBuf> {
    let mut out = Vec::new();
    for c in p.components() {
        match c {
            Component::Normal(x) => out.push(x),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop()?;
            }
            _ => return None,
        }
    }
    Some(out.iter().collect())
}

/// The decompressor's output; its exit status is checked at the end, so a truncated .xz is an
/// error rather than a short archive.
struct XzReader {
    child: std::process::Child,
}

impl Read for XzReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = match self.child.stdout.as_mut() {
            Some(o) => o.read(buf)?,
            None => 0,
        };
        if n == 0 {
            let st = self.child.wait()?;
            if !st.success() {
                return Err(std::io::Error::other(
                    "xz: the archive is truncated or corrupt",
                ));
            }
        }
        Ok(n)
    }
}

impl Drop for XzReader {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Writes `text` to `p` through a temporary file and a rename.
pub fn write_atomic(p: &Path, text: &[u8]) -> anyhow::Result<()> {
    let tmp = p.with_extension("tmp");
    let mut f = fs::File::create(&tmp)?;
    f.write_all(text)?;
    f.sync_all()?;
    fs::rename(&tmp, p)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tarball(dir: &Path, entries: &[(&str, &[u8])], link: Option<(&str, &str)>) -> PathBuf {
        let p = dir.join("t.tar.gz");
        let f = fs::File::create(&p).unwrap();
        let gz = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
        let mut b = tar::Builder::new(gz);
        for (name, data) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o755);
            h.set_cksum();
            b.append_data(&mut h, name, *data).unwrap();
        }
        if let Some((name, target)) = link {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Symlink);
            h.set_size(0);
            b.append_link(&mut h, name, target).unwrap();
        }
        b.into_inner().unwrap().finish().unwrap();
        p
    }

    #[test]
    fn unpacks_under_a_prefix_and_refuses_escapes() {
        let d = tempfile::tempdir().unwrap();
        let t = tarball(
            d.path(),
            &[("pkg/native/bin/postgres", b"x"), ("pkg/README", b"r")],
            Some(("pkg/native/lib/libx.so", "libx.so.1")),
        );
        let out = d.path().join("out");
        assert_eq!(unpack(&t, Path::new("pkg/native"), &out).unwrap(), 2);
        assert!(out.join("bin/postgres").is_file() && !out.join("README").exists());
        assert!(fs::symlink_metadata(out.join("lib/libx.so"))
            .unwrap()
            .is_symlink());

        let bad = tempfile::tempdir().unwrap();
        let t = tarball(bad.path(), &[("a", b"x")], Some(("b", "../../etc/passwd")));
        let e = unpack(&t, Path::new(""), &bad.path().join("o")).unwrap_err();
        assert!(e.to_string().contains("leaves its directory"), "{e}");
    }

    #[test]
    fn truncated_archives_are_errors() {
        let d = tempfile::tempdir().unwrap();
        let big: Vec<u8> = (0..200_000u32).map(|i| (i * 7919 % 251) as u8).collect();
        let t = tarball(d.path(), &[("a", &big)], None);
        let bytes = fs::read(&t).unwrap();
        fs::write(&t, &bytes[..bytes.len() / 2]).unwrap();
        assert!(unpack(&t, Path::new(""), &d.path().join("o")).is_err());
        assert_eq!(
            sha256_bytes(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
