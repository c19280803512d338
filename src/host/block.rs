//! The block devices under a data directory and their queue settings (spec A.7). The device is
//! found by the mount's major:minor from `/proc/self/mountinfo`, then `/sys/dev/block/MAJ:MIN`;
//! partitions lead to their disk and device-mapper or MD devices to their `slaves/`. Names are
//! never matched by substring: `sda1` is a partition because its directory holds `partition`,
//! not because its name starts with `sda`.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::sysfs::{read, read_bool, read_bracketed, read_u64};
use super::Roots;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DataDir {
    /// The directory as given (made absolute).
    pub path: String,
    pub mount_point: Option<String>,
    pub fstype: Option<String>,
    /// The mount's source, e.g. `/dev/nvme0n1p2`.
    pub source: Option<String>,
    pub mount_options: Option<String>,
    /// major:minor of the mounted device.
    pub dev: Option<String>,
    /// From the mounted device down to the disks: `dm-0 -> nvme1n1p1 -> nvme1n1`.
    pub chain: Vec<String>,
    /// Devices with a request queue: the mounted device (unless it is a partition) and every
    /// disk under it.
    pub devices: Vec<BlockDevice>,
    /// Why no device was found (tmpfs, overlay, a path outside every mount).
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BlockDevice {
    pub name: String,
    /// `disk`, `dm` (device mapper; `dm_name` is its name), or `md`.
    pub kind: String,
    pub dm_name: Option<String>,
    /// True for the disks at the bottom of the chain, whose queues reach the hardware.
    pub underlying: bool,
    pub scheduler: Option<String>,
    pub schedulers_available: Vec<String>,
    pub read_ahead_kb: Option<u64>,
    pub rotational: Option<bool>,
    pub write_cache: Option<String>,
    /// Canonical sysfs directory of the device (for walking up to its PCI path).
    #[serde(skip)]
    pub sys_dir: PathBuf,
}

impl BlockDevice {
    pub fn queue(&self, file: &str) -> PathBuf {
        self.sys_dir.join("queue").join(file)
    }
}

struct Mount {
    dev: String,
    point: String,
    options: String,
    fstype: String,
    source: String,
}

/// mountinfo escapes space, tab, newline and backslash as octal (`\040`).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let f: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            Some(Mount {
                dev: f.get(2)?.to_string(),
                point: unescape(f.get(4)?),
                options: f.get(5)?.to_string(),
                fstype: r.first()?.to_string(),
                source: unescape(r.get(1).unwrap_or(&"")),
            })
        })
        .collect()
}

/// Whether `path` is `mount` or below it, comparing whole path components.
fn under(path: &Path, mount: &Path) -> bool {
    path.starts_with(mount)
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p)
        .or_else(|_| std::path::absolute(p))
        .unwrap_or_else(|_| p.to_path_buf())
}

/// Resolves a symlink inside `root` and keeps the result inside it (fixture trees use the same
/// relative links as the kernel, so this only matters for a broken tree).
fn resolve(root: &Path, p: &Path) -> Option<PathBuf> {
    let c = std::fs::canonicalize(p).ok()?;
    let root = std::fs::canonicalize(root).ok()?;
    c.starts_with(&root).then_some(c)
}

pub fn data_dir(roots: &Roots, dir: &Path) -> DataDir {
    let path = absolute(dir);
    let mut d = DataDir {
        path: path.display().to_string(),
        mount_point: None,
        fstype: None,
        source: None,
        mount_options: None,
        dev: None,
        chain: Vec::new(),
        devices: Vec::new(),
        note: None,
    };
    let mounts = parse_mountinfo(&read(&roots.proc.join("self/mountinfo")).unwrap_or_default());
    // The longest mount point containing the path; of equal ones the last, because a later
    // mount on the same point hides the earlier.
    let mut best: Option<&Mount> = None;
    for m in &mounts {
        let depth = Path::new(&m.point).components().count();
        if under(&path, Path::new(&m.point))
            && best.is_none_or(|b| depth >= Path::new(&b.point).components().count())
        {
            best = Some(m);
        }
    }
    let Some(m) = best else {
        d.note = Some("no mount in /proc/self/mountinfo holds this path".into());
        return d;
    };
    d.mount_point = Some(m.point.clone());
    d.fstype = Some(m.fstype.clone());
    d.source = Some(m.source.clone());
    d.mount_options = Some(m.options.clone());
    d.dev = Some(m.dev.clone());
    let Some(top) = device_dir(roots, m) else {
        d.note = Some(format!(
            "{} on {} has no block device",
            m.fstype,
            if m.source.is_empty() { "?" } else { &m.source }
        ));
        return d;
    };
    let mut chain = Vec::new();
    let mut disks = Vec::new();
    walk(&top, &mut chain, &mut disks, 0);
    d.chain = chain;
    let top_is_partition = top.join("partition").exists();
    let mut dirs: Vec<(PathBuf, bool)> = Vec::new();
    if !top_is_partition && !disks.contains(&top) {
        dirs.push((top.clone(), false));
    }
    for disk in disks {
        if !dirs.iter().any(|(p, _)| *p == disk) {
            dirs.push((disk, true));
        }
    }
    d.devices = dirs.into_iter().map(|(p, u)| device(&p, u)).collect();
    d
}

/// The mounted device's sysfs directory. Anonymous devices (major 0: btrfs subvolumes, tmpfs,
/// overlay) fall back to the mount source, looked up by its exact name.
fn device_dir(roots: &Roots, m: &Mount) -> Option<PathBuf> {
    let major_zero = m.dev.split(':').next() == Some("0");
    if !major_zero {
        if let Some(p) = resolve(&roots.sys, &roots.sys.join("dev/block").join(&m.dev)) {
            return Some(p);
        }
    }
    let name = m.source.strip_prefix("/dev/")?;
    if let Some(dm) = name.strip_prefix("mapper/") {
        // Device-mapper sources are named by their dm name, which each dm-N records.
        for e in std::fs::read_dir(roots.sys.join("class/block"))
            .ok()?
            .flatten()
        {
            if read(&e.path().join("dm/name")).as_deref() == Some(dm) {
                return resolve(&roots.sys, &e.path());
            }
        }
        return None;
    }
    if name.contains('/') {
        return None;
    }
    resolve(&roots.sys, &roots.sys.join("class/block").join(name))
}

/// Follows a partition to its disk and a stacked device to its slaves, collecting the chain of
/// names and the disks at the bottom.
fn walk(dir: &Path, chain: &mut Vec<String>, disks: &mut Vec<PathBuf>, depth: usize) {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !chain.contains(&name) {
        chain.push(name);
    }
    if depth > 16 {
        return;
    }
    if dir.join("partition").exists() {
        if let Some(parent) = dir.parent() {
            walk(parent, chain, disks, depth + 1);
        }
        return;
    }
    let mut slaves: Vec<PathBuf> = std::fs::read_dir(dir.join("slaves"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::canonicalize(e.path()).ok())
        .collect();
    slaves.sort();
    if slaves.is_empty() {
        if !disks.contains(&dir.to_path_buf()) {
            disks.push(dir.to_path_buf());
        }
        return;
    }
    for s in slaves {
        walk(&s, chain, disks, depth + 1);
    }
}

fn device(dir: &Path, underlying: bool) -> BlockDevice {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dm_name = read(&dir.join("dm/name"));
    let kind = if dir.join("dm").is_dir() {
        "dm"
    } else if dir.join("md").is_dir() {
        "md"
    } else {
        "disk"
    };
    let q = dir.join("queue");
    let sched = read_bracketed(&q.join("scheduler"));
    BlockDevice {
        name,
        kind: kind.into(),
        dm_name,
        underlying,
        scheduler: sched.as_ref().map(|(s, _)| s.clone()),
        schedulers_available: sched.map(|(_, c)| c).unwrap_or_default(),
        read_ahead_kb: read_u64(&q.join("read_ahead_kb")),
        rotational: read_bool(&q.join("rotational")),
        write_cache: read(&q.join("write_cache")),
        sys_dir: dir.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_are_parsed_and_unescaped() {
        let m = parse_mountinfo(
            "36 35 98:0 /mnt1 /mnt/my\\040data rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n\
             27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n",
        );
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].point, "/mnt/my data");
        assert_eq!((m[0].dev.as_str(), m[0].fstype.as_str()), ("98:0", "ext3"));
        assert_eq!(m[1].source, "/dev/vda");
        assert!(under(
            Path::new("/mnt/my data/x"),
            Path::new("/mnt/my data")
        ));
        assert!(!under(
            Path::new("/mnt/my datax"),
            Path::new("/mnt/my data")
        ));
    }
}
