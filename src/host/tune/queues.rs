//! The block-device settings tune plans: the I/O scheduler of the disks under the data
//! directories, and the read-ahead of every device between them and the file system.

use std::path::PathBuf;

use super::plan::Plan;
use crate::error::bad_input;
use crate::host::block::{self, BlockDevice};
use crate::host::{sysfs, Roots};

/// The block devices under `paths`, each once; `flag` names the option in the refusal when a
/// path has none.
pub(super) fn devices(
    roots: &Roots,
    paths: &[PathBuf],
    flag: &str,
) -> anyhow::Result<Vec<BlockDevice>> {
    let mut devices: Vec<BlockDevice> = Vec::new();
    for dir in paths {
        let d = block::data_dir(roots, dir);
        if d.devices.is_empty() {
            return bad_input(format!(
                "{} has no block device under it ({}), so {flag} has nothing to set",
                d.path,
                d.note.unwrap_or_else(|| "none found".into())
            ));
        }
        for b in d.devices {
            if !devices.iter().any(|x| x.sys_dir == b.sys_dir) {
                devices.push(b);
            }
        }
    }
    Ok(devices)
}

/// `--scheduler`: the elevator of every disk (stacked devices, dm and md, have none).
pub(super) fn scheduler(plan: &mut Plan, devices: &[BlockDevice], s: &str) -> anyhow::Result<()> {
    let disks = || devices.iter().filter(|b| b.underlying);
    for b in disks() {
        if !b.schedulers_available.iter().any(|x| x == s) {
            return bad_input(format!(
                "{} offers the I/O schedulers {}, not '{s}'",
                b.name,
                b.schedulers_available.join(", ")
            ));
        }
    }
    for b in disks() {
        // Switching the elevator resets the queue depth and drops the old elevator's tunables:
        // saved first, so undo (last write first) puts the elevator back, then them.
        plan.companion(
            "--scheduler",
            format!("{} nr_requests", b.name),
            b.queue("nr_requests"),
        );
        let iosched = b.queue("iosched");
        for name in sysfs::names(&iosched) {
            let path = iosched.join(&name);
            if sysfs::writable(&path) {
                plan.companion("--scheduler", format!("{} iosched/{name}", b.name), path);
            }
        }
        plan.add(
            "--scheduler",
            format!("{} scheduler", b.name),
            b.queue("scheduler"),
            Some(s.to_string()),
            true,
        );
    }
    Ok(())
}

/// The page size in KiB.
fn page_kb() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let bytes = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(bytes).map_or(4, |b| (b / 1024).max(1))
}

/// `--read-ahead`: read_ahead_kb of every device, a whole number of pages.
pub(super) fn read_ahead(plan: &mut Plan, devices: &[BlockDevice], kb: u64) -> anyhow::Result<()> {
    let page_kb = page_kb();
    if !kb.is_multiple_of(page_kb) {
        return bad_input(format!(
            "a read-ahead of {kb} KiB is not a whole number of pages ({page_kb} KiB \
             here): the kernel keeps read-ahead in pages and would hold {} KiB",
            kb / page_kb * page_kb
        ));
    }
    // The file system reads through the top device (a dm device has its own read-ahead); the
    // disks under it get the same value so nothing below reads more.
    for b in devices {
        plan.add(
            "--read-ahead",
            format!("{} read_ahead_kb", b.name),
            b.queue("read_ahead_kb"),
            Some(kb.to_string()),
            false,
        );
    }
    Ok(())
}
