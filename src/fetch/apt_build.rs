//! A Debian build's packages made into a build tree: each package unpacked by dbperf itself,
//! and, where the release's C library is not the host's, its programs wrapped to run with the
//! build's own loader and libraries.

use std::io::Write;
use std::path::Path;

use rustix::fs::FileType;

use super::{archive, PackageRecord};
use crate::safe_fs::tree::{Rel, Tree};
use crate::safe_fs::{self, Dir};

pub(super) fn triplet() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        "aarch64-linux-gnu"
    } else {
        "x86_64-linux-gnu"
    }
}

pub(super) fn loader_name() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        "ld-linux-aarch64.so.1"
    } else {
        "ld-linux-x86-64.so.2"
    }
}

/// The packages as unpacked: each one's record, the manifest of their digests, their bytes.
pub(super) struct Unpacked {
    pub records: Vec<PackageRecord>,
    pub manifest: String,
    pub size: u64,
}

/// Every `.deb` apt-get downloaded into `debs_dir`, in name order, unpacked beneath `tree`.
/// Each package is read by dbperf itself (not dpkg-deb, which as root keeps the archive's
/// owners and setuid bits): one pass hashes it and unpacks its data.
pub(super) fn unpack_debs(debs_dir: &Dir, tree: &Tree) -> anyhow::Result<Unpacked> {
    let mut names: Vec<String> = debs_dir
        .names()?
        .into_iter()
        .filter_map(|n| n.into_string().ok())
        .filter(|n| n.ends_with(".deb") && crate::untrusted::plain_name(n))
        .collect();
    names.sort();
    let mut out = Unpacked {
        records: Vec::new(),
        manifest: String::new(),
        size: 0,
    };
    let mut u = archive::Unpacker::new(tree, archive::Absolute::FromRoot);
    for name in &names {
        let f = safe_fs::open_regular(&debs_dir.path().join(name))?;
        let d = u.deb(f, &format!("Debian package {name}"))?;
        out.size += d.size;
        out.manifest.push_str(&format!("{}  {name}\n", d.sha256));
        let mut pkg = name.split('_');
        out.records.push(PackageRecord {
            name: pkg.next().unwrap_or_default().to_string(),
            version: pkg.next().unwrap_or_default().replace("%3a", ":"),
            sha256: d.sha256,
            size: d.size,
        });
    }
    u.finish(archive::Top::Root)?;
    Ok(out)
}

/// How the build's programs run: through its own loader, with its libraries, and the notes
/// that say so.
pub(super) struct Runtime {
    pub loader: Option<String>,
    pub library_path: Option<String>,
    pub notes: Vec<String>,
}

/// The loader and library path the build's programs need (`own_loader`: the release's C
/// library is newer than the host's; `libs`: the packages brought for libraries the host
/// lacks), with the programs wrapped accordingly.
pub(super) fn runtime(
    tree: &Tree,
    release: &str,
    own_loader: bool,
    libs: &[String],
) -> anyhow::Result<Runtime> {
    let build = tree.path();
    let t = triplet();
    let lib_dirs: Vec<String> = [format!("usr/lib/{t}"), format!("lib/{t}")]
        .into_iter()
        .filter(|d| build.join(d).is_dir())
        .collect();
    let loader = if own_loader {
        let l = lib_dirs
            .iter()
            .map(|d| format!("{d}/{}", loader_name()))
            .find(|l| build.join(l).exists());
        match l {
            Some(l) => Some(l),
            None => anyhow::bail!("Debian {release}'s libc6 brought no {}", loader_name()),
        }
    } else {
        None
    };
    let library_path = (!libs.is_empty() && !lib_dirs.is_empty()).then(|| lib_dirs.join(":"));
    let mut notes = Vec::new();
    if library_path.is_some() || loader.is_some() {
        let n = wrap_programs(tree, release, loader.as_deref(), library_path.as_deref())?;
        notes.push(match &loader {
            Some(l) => format!(
                "Debian {release} is newer than this host's C library: its {n} programs run through \
                 the build's own loader ({l}) and libraries ({}), not the host's",
                libs.join(" ")
            ),
            None => format!(
                "Debian {release}'s {n} programs run with LD_LIBRARY_PATH set to the build's \
                 libraries the host lacks ({})",
                libs.join(" ")
            ),
        });
    }
    Ok(Runtime {
        loader,
        library_path,
        notes,
    })
}

fn is_elf(tree: &Tree, rel: &Rel) -> bool {
    let mut head = [0u8; 4];
    tree.open_file(rel)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok()
        && head == *b"\x7fELF"
}

/// A program name a wrapper script may quote: nothing the shell would read as code.
fn script_safe(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._+-".contains(&b))
}

/// Replaces every ELF program in the build's bin directories with a wrapper that runs it with
/// the build's libraries (and loader). Returns how many were wrapped.
pub(super) fn wrap_programs(
    tree: &Tree,
    release: &str,
    loader: Option<&str>,
    library_path: Option<&str>,
) -> anyhow::Result<usize> {
    let rel = |s: &str| Rel::parse(Path::new(s)).expect("plain names");
    let mut dirs = vec![rel("usr/bin"), rel("usr/sbin")];
    let pg = rel("usr/lib/postgresql");
    for v in tree.names(&pg).unwrap_or_default() {
        dirs.extend(pg.join(&v).and_then(|d| d.join("bin")));
    }
    let mut n = 0;
    for d in dirs {
        let Ok(names) = tree.names(&d) else { continue };
        let up = "../".repeat(d.names().len());
        for name in names {
            let Some(name) = name.to_str().filter(|n| script_safe(n)) else {
                continue;
            };
            let (Some(path), Some(real)) = (d.join(name), d.join(format!(".{name}.real"))) else {
                continue;
            };
            if tree.kind(&path)? != Some(FileType::RegularFile) || !is_elf(tree, &path) {
                continue;
            }
            tree.rename(&path, &real)?;
            let lp: Vec<String> = library_path
                .unwrap_or("")
                .split(':')
                .filter(|s| !s.is_empty())
                .map(|s| format!("$here/{up}{s}"))
                .collect();
            let run = match loader {
                Some(l) => format!(
                    "exec \"$here/{up}{l}\" --library-path \"{}\" --argv0 \"$0\" \"$here/.{name}.real\" \"$@\"",
                    lp.join(":")
                ),
                None => format!(
                    "LD_LIBRARY_PATH=\"{}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}\"\nexport LD_LIBRARY_PATH\nexec \"$here/.{name}.real\" \"$@\"",
                    lp.join(":")
                ),
            };
            let script = format!(
                "#!/bin/sh\n# Written by dbperf fetch: Debian {release}'s {name} with the build's own \
                 libraries (build.json says how).\nhere=$(dirname \"$(readlink -f \"$0\")\")\n{run}\n"
            );
            tree.create_file(&path, 0o755)?
                .write_all(script.as_bytes())?;
            n += 1;
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::safe_fs::Also;
    use std::fs;

    #[test]
    fn programs_are_wrapped_relative_to_the_build() {
        let t = tempfile::tempdir().unwrap();
        let base = safe_fs::open_dir(t.path(), Also::Nobody).unwrap();
        let tree = Tree::create(&base, "b").unwrap();
        let d = tree.path();
        fs::create_dir_all(d.join("usr/sbin")).unwrap();
        fs::write(d.join("usr/sbin/mariadbd"), b"\x7fELF....").unwrap();
        fs::write(d.join("usr/sbin/script"), b"#!/bin/sh\n").unwrap();
        fs::write(d.join("usr/sbin/$(reboot)"), b"\x7fELF....").unwrap();
        let n = wrap_programs(
            &tree,
            "trixie",
            Some("usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"),
            Some("usr/lib/x86_64-linux-gnu"),
        )
        .unwrap();
        assert_eq!(n, 1);
        let w = fs::read_to_string(d.join("usr/sbin/mariadbd")).unwrap();
        assert!(
            w.contains("\"$here/../../usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\" --library-path \"$here/../../usr/lib/x86_64-linux-gnu\""),
            "{w}"
        );
        assert!(d.join("usr/sbin/.mariadbd.real").is_file());
        assert!(
            !d.join("usr/sbin/.$(reboot).real").exists(),
            "not quoted in a script"
        );
    }
}
