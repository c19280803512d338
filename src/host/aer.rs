//! PCIe Advanced Error Reporting counters (spec A.9). A corrected error is retried by the link:
//! nothing is lost, but the retries cost throughput and latency, so errors on the path to the
//! storage device make a result suspect.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::sysfs::read;
use super::Roots;

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct Aer {
    /// Whether any PCI device offers AER counters; without them there is nothing to say (absence
    /// is not zero).
    pub available: bool,
    /// `TOTAL_ERR_COR` summed over every device.
    pub correctable_total: u64,
    /// The same, over the devices between a data directory's disks and the CPU.
    pub storage_correctable_total: u64,
    pub devices: Vec<AerDevice>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AerDevice {
    /// PCI address, e.g. `0000:01:00.0`.
    pub device: String,
    pub correctable: Option<u64>,
    pub nonfatal: Option<u64>,
    pub fatal: Option<u64>,
    /// On the path from a data directory's disk up to its root port.
    pub storage_path: bool,
}

/// The `TOTAL_ERR_*` line that ends each `aer_dev_*` file.
fn total(p: &Path) -> Option<u64> {
    read(p)?.lines().rev().find_map(|l| {
        let (k, v) = l.split_once(char::is_whitespace)?;
        k.starts_with("TOTAL_ERR_")
            .then(|| v.trim().parse().ok())
            .flatten()
    })
}

/// Reads every AER-capable device; `storage` are canonical sysfs directories of the disks under
/// the data directories, whose ancestors are their PCI path.
pub fn read_aer(roots: &Roots, storage: &[PathBuf]) -> Aer {
    let mut devices = Vec::new();
    let dir = roots.sys.join("bus/pci/devices");
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let Ok(real) = std::fs::canonicalize(e.path()) else {
            continue;
        };
        let correctable = total(&real.join("aer_dev_correctable"));
        if correctable.is_none() && !real.join("aer_dev_fatal").exists() {
            continue;
        }
        devices.push(AerDevice {
            device: e.file_name().to_string_lossy().into_owned(),
            correctable,
            nonfatal: total(&real.join("aer_dev_nonfatal")),
            fatal: total(&real.join("aer_dev_fatal")),
            storage_path: storage.iter().any(|s| s.starts_with(&real)),
        });
    }
    let sum = |only_storage: bool| {
        devices
            .iter()
            .filter(|d| d.storage_path || !only_storage)
            .filter_map(|d| d.correctable)
            .sum()
    };
    Aer {
        available: !devices.is_empty(),
        correctable_total: sum(false),
        storage_correctable_total: sum(true),
        devices,
    }
}
