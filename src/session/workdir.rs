//! Removing and moving a run's own directories (a cell's data directory, a killed cell's
//! results) through directory handles. The names come from the plan or from the journal, which
//! dbperf reads back on `--resume`: every part is a plain name opened without following a
//! symbolic link (O_NOFOLLOW), so a link planted anywhere under the run directory cannot turn a
//! removal or a move into one elsewhere, even if it is planted while dbperf works. A link met
//! on the way is removed as a link, never followed.

use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

fn open_dir_at(dir: &OwnedFd, name: &str) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

fn open_base(base: &Path) -> std::io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        base,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// `base/parts[0]/.../parts[n-1]` opened part by part; None when a part does not exist.
/// `base` is the user's (the run directory); `parts` must be plain names.
fn walk(base: &Path, parts: &[&str]) -> std::io::Result<Option<OwnedFd>> {
    let mut dir = open_base(base)?;
    for p in parts {
        if !crate::untrusted::plain_name(p) {
            return Err(std::io::Error::other(format!(
                "{} is not a plain name",
                crate::untrusted::shown(p)
            )));
        }
        dir = match open_dir_at(&dir, p) {
            Ok(d) => d,
            Err(Errno::NOENT) => return Ok(None),
            Err(Errno::LOOP | Errno::NOTDIR) => {
                return Err(std::io::Error::other(format!(
                    "{} under {} is a symbolic link or not a directory",
                    p,
                    base.display()
                )))
            }
            Err(e) => return Err(e.into()),
        };
    }
    Ok(Some(dir))
}

/// Removes the tree `base/dirs.../name` and then each of `dirs` below the first that it leaves
/// empty, deepest first (`<out>/work/<target>/r<k>`: `<target>` when it is empty, never `work`).
/// Nothing there: Ok.
pub fn remove_tree(base: &Path, dirs: &[&str], name: &str) -> std::io::Result<()> {
    if !crate::untrusted::plain_name(name) {
        return Err(std::io::Error::other(format!(
            "{} is not a plain name",
            crate::untrusted::shown(name)
        )));
    }
    let Some(parent) = walk(base, dirs)? else {
        return Ok(());
    };
    crate::safe_fs::remove_at(&parent, name.as_ref(), 0)?;
    for depth in (1..dirs.len()).rev() {
        let Some(up) = walk(base, &dirs[..depth])? else {
            break;
        };
        if rustix::fs::unlinkat(&up, dirs[depth], AtFlags::REMOVEDIR).is_err() {
            break;
        }
    }
    Ok(())
}

/// Moves `base/from_dirs.../from` to `base/to_dir/to` (`to_dir` made when missing), through
/// handles: neither side can be redirected by a link.
pub fn move_aside(
    base: &Path,
    from_dirs: &[&str],
    from: &str,
    to_dir: &str,
    to: &str,
) -> std::io::Result<()> {
    for n in [from, to_dir, to] {
        if !(crate::untrusted::plain_name(n) || (n == to_dir && n.starts_with('.'))) {
            return Err(std::io::Error::other(format!(
                "{} is not a plain name",
                crate::untrusted::shown(n)
            )));
        }
    }
    let Some(src) = walk(base, from_dirs)? else {
        return Ok(());
    };
    let root = open_base(base)?;
    match rustix::fs::mkdirat(&root, to_dir, Mode::from_raw_mode(0o755)) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(e) => return Err(e.into()),
    }
    let dst = open_dir_at(&root, to_dir)?;
    match rustix::fs::renameat(&src, from, &dst, to) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// The parts of a cell id (`<target>` or `<target>/r<k>`): the directories above its last part,
/// and its last part.
pub(super) fn id_parts(id: &str) -> (Vec<&str>, &str) {
    let mut parts: Vec<&str> = id.split('/').collect();
    let last = parts.pop().unwrap_or_default();
    (parts, last)
}

/// Removes `<out>/work/<cell id>` and the directories of the id it leaves empty, through
/// handles (session/workdir.rs): no link in the way is followed.
pub(super) fn remove_cell_work(out: &Path, id: &str) -> std::io::Result<()> {
    let (mut dirs, last) = id_parts(id);
    dirs.insert(0, "work");
    remove_tree(out, &dirs, last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn a_tree_is_removed_with_its_empty_parents_and_links_are_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let run = d.path().join("run");
        let outside = d.path().join("outside");
        fs::create_dir_all(outside.join("keep")).unwrap();
        fs::write(outside.join("keep/file"), "x").unwrap();
        let cell = run.join("work/t/r1");
        fs::create_dir_all(cell.join("server/data")).unwrap();
        fs::write(cell.join("server/data/f"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, cell.join("server/link")).unwrap();
        remove_tree(&run, &["work", "t"], "r1").unwrap();
        assert!(!run.join("work/t").exists(), "the empty parent went too");
        assert!(
            run.join("work").exists(),
            "but not further than the given dirs"
        );
        assert!(
            outside.join("keep/file").exists(),
            "the link was not followed"
        );
        // A link planted in the way: nothing behind it is touched.
        fs::create_dir_all(run.join("work")).unwrap();
        std::os::unix::fs::symlink(&outside, run.join("work/t")).unwrap();
        let e = remove_tree(&run, &["work", "t"], "keep").unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert!(outside.join("keep/file").exists());
        // The last part a link: the link goes, not what it names.
        std::os::unix::fs::symlink(&outside, run.join("work/cell")).unwrap();
        remove_tree(&run, &["work"], "cell").unwrap();
        assert!(!run.join("work/cell").exists() && outside.join("keep/file").exists());
        assert!(remove_tree(&run, &["work"], "..").is_err());
        assert!(remove_tree(&run, &["../x"], "a").is_err());
        remove_tree(&run, &["work"], "missing").unwrap();
    }

    #[test]
    fn moving_aside_goes_through_handles() {
        let d = tempfile::tempdir().unwrap();
        let run = d.path();
        fs::create_dir_all(run.join("t/r1/steps")).unwrap();
        move_aside(run, &["t"], "r1", ".attempts", "t.r1.1").unwrap();
        assert!(run.join(".attempts/t.r1.1/steps").is_dir());
        assert!(!run.join("t/r1").exists());
        move_aside(run, &["t"], "r1", ".attempts", "t.r1.2").unwrap();
    }
}
