//! Fake `/sys` and `/proc` trees for tests, written from the kernel documentation cited in the
//! host spec (cpufreq.rst, intel_pstate.rst, amd-pstate.rst, sysfs-devices-system-cpu,
//! transhuge.rst, sysfs-block, aer_stats): the same file names, value formats (`performance
//! powersave`, `[always] madvise never`, kHz, `TOTAL_ERR_COR n`) and relative symlinks as the
//! kernel's. Both the unit tests and the CLI tests (tests/host.rs) build them, which is why
//! this lives in the library; it is compiled only for tests and examples (`cfg(test)`, or the
//! `fixtures` feature that the crate's dev-dependency on itself turns on: Cargo.toml), never
//! into the program.
//!
//! `build(name, dir)` writes `dir/sys`, `dir/proc` and `dir/etc`; point `--sysfs-root` and
//! `--procfs-root` at the first two (`Roots::under(dir)`).

mod hosts;

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use hosts::{host, Freq, Host, Storage};

/// Every fixture `build` knows.
pub const NAMES: &[&str] = &[
    "acpi-boost-on",
    "acpi-boost-off",
    "amd-pstate-epp-active",
    "amd-pstate-guided",
    "amd-pstate-passive",
    "intel-pstate-active-no-turbo",
    "intel-cpufreq-passive",
    "vm-no-cpufreq",
    "smt-forceoff",
    "thp-always",
];

const EPP_CHOICES: &str = "default performance balance_performance balance_power power";

struct Tree {
    root: PathBuf,
}

impl Tree {
    fn put(&self, rel: &str, content: impl AsRef<str>) -> io::Result<()> {
        let p = self.root.join(rel);
        fs::create_dir_all(p.parent().expect("fixture paths have a parent"))?;
        let mut text = content.as_ref().to_string();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        fs::write(p, text)
    }

    fn dir(&self, rel: &str) -> io::Result<()> {
        fs::create_dir_all(self.root.join(rel))
    }

    /// A relative symlink, as sysfs makes them, so the tree can be moved or copied.
    fn link(&self, rel: &str, target: &str) -> io::Result<()> {
        let from = Path::new(rel).parent().expect("links have a parent");
        let to = Path::new(target);
        let a: Vec<Component> = from.components().collect();
        let b: Vec<Component> = to.components().collect();
        let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        let mut r = PathBuf::new();
        for _ in common..a.len() {
            r.push("..");
        }
        for c in &b[common..] {
            r.push(c);
        }
        let p = self.root.join(rel);
        fs::create_dir_all(p.parent().expect("links have a parent"))?;
        std::os::unix::fs::symlink(r, p)
    }
}

/// Writes the named fixture tree into `dir` (which must exist).
pub fn build(name: &str, dir: &Path) -> io::Result<()> {
    let h = host(name).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("no fixture named {name}; known: {}", NAMES.join(", ")),
        )
    })?;
    let t = Tree {
        root: dir.to_path_buf(),
    };
    write_cpus(&t, &h)?;
    write_proc(&t, &h)?;
    write_storage(&t, &h)?;
    write_misc(&t, &h)?;
    Ok(())
}

fn ranges(v: &[u32]) -> String {
    super::sysfs::cpu_ranges(v)
}

fn write_cpus(t: &Tree, h: &Host) -> io::Result<()> {
    let c = "sys/devices/system/cpu";
    let total = h.cores * h.threads;
    // Linux numbers the first thread of every core first, then the siblings.
    let online: Vec<u32> = (0..total)
        .filter(|cpu| h.smt_online || *cpu < h.cores)
        .collect();
    let all: Vec<u32> = (0..total).collect();
    t.put(&format!("{c}/online"), ranges(&online))?;
    t.put(&format!("{c}/possible"), ranges(&all))?;
    t.put(&format!("{c}/present"), ranges(&all))?;
    let offline: Vec<u32> = all
        .iter()
        .copied()
        .filter(|x| !online.contains(x))
        .collect();
    t.put(&format!("{c}/offline"), ranges(&offline))?;
    t.put(&format!("{c}/smt/control"), h.smt_control)?;
    t.put(
        &format!("{c}/smt/active"),
        if h.smt_online && h.threads > 1 {
            "1"
        } else {
            "0"
        },
    )?;
    t.dir(&format!("{c}/cpufreq"))?;
    for cpu in &all {
        let core = cpu % h.cores;
        let siblings: Vec<u32> = (0..h.threads).map(|k| core + k * h.cores).collect();
        t.put(
            &format!("{c}/cpu{cpu}/online"),
            if online.contains(cpu) { "1" } else { "0" },
        )?;
        t.put(&format!("{c}/cpu{cpu}/topology/core_id"), core.to_string())?;
        t.put(
            &format!("{c}/cpu{cpu}/topology/thread_siblings_list"),
            ranges(&siblings),
        )?;
        if let Some(f) = &h.freq {
            t.link(
                &format!("{c}/cpu{cpu}/cpufreq"),
                &format!("{c}/cpufreq/policy{cpu}"),
            )?;
            write_policy(
                t,
                &format!("{c}/cpufreq/policy{cpu}"),
                *cpu,
                online.contains(cpu),
                f,
            )?;
        }
    }
    if let Some(f) = &h.freq {
        if let Some(b) = f.global_boost {
            t.put(&format!("{c}/cpufreq/boost"), b)?;
        }
        if let Some((status, no_turbo)) = f.intel {
            let d = format!("{c}/intel_pstate");
            t.put(&format!("{d}/status"), status)?;
            t.put(&format!("{d}/no_turbo"), no_turbo)?;
            t.put(&format!("{d}/max_perf_pct"), "100")?;
            t.put(&format!("{d}/min_perf_pct"), "25")?;
            t.put(&format!("{d}/turbo_pct"), "37")?;
            t.put(&format!("{d}/num_pstates"), "25")?;
            if f.driver == "intel_pstate" {
                t.put(&format!("{d}/hwp_dynamic_boost"), "0")?;
            }
        }
        if let Some(s) = f.amd_status {
            t.put(&format!("{c}/amd_pstate/status"), s)?;
        }
    }
    Ok(())
}

fn write_policy(t: &Tree, d: &str, cpu: u32, online: bool, f: &Freq) -> io::Result<()> {
    let n = |v: u64| v.to_string();
    // An inactive policy (all its CPUs offline) keeps its directory; affected_cpus is empty.
    t.put(
        &format!("{d}/affected_cpus"),
        if online {
            cpu.to_string()
        } else {
            String::new()
        },
    )?;
    t.put(&format!("{d}/related_cpus"), cpu.to_string())?;
    t.put(&format!("{d}/scaling_driver"), f.driver)?;
    t.put(&format!("{d}/scaling_available_governors"), f.governors)?;
    t.put(&format!("{d}/scaling_governor"), f.governor)?;
    t.put(&format!("{d}/cpuinfo_min_freq"), n(f.hw_min))?;
    t.put(&format!("{d}/cpuinfo_max_freq"), n(f.hw_max))?;
    t.put(&format!("{d}/cpuinfo_transition_latency"), "0")?;
    t.put(&format!("{d}/scaling_min_freq"), n(f.min))?;
    t.put(&format!("{d}/scaling_max_freq"), n(f.max))?;
    // Idle CPUs sit lower than the busy one; only CPU 0 shows the load.
    let cur = if cpu == 0 {
        f.cur
    } else {
        (f.cur + f.hw_min) / 2
    };
    t.put(&format!("{d}/scaling_cur_freq"), n(cur.max(f.hw_min)))?;
    t.put(
        &format!("{d}/scaling_setspeed"),
        if f.governor == "userspace" {
            n(f.cur)
        } else {
            "<unsupported>".into()
        },
    )?;
    if let Some(a) = f.available_frequencies {
        t.put(&format!("{d}/scaling_available_frequencies"), a)?;
    }
    if f.hw_cur {
        t.put(&format!("{d}/cpuinfo_cur_freq"), n(cur.max(f.hw_min)))?;
    }
    if let Some(e) = f.epp {
        t.put(&format!("{d}/energy_performance_preference"), e)?;
        t.put(
            &format!("{d}/energy_performance_available_preferences"),
            EPP_CHOICES,
        )?;
    }
    if let Some(b) = f.base {
        t.put(&format!("{d}/base_frequency"), n(b))?;
    }
    if let Some(b) = f.bios_limit {
        t.put(&format!("{d}/bios_limit"), n(b))?;
    }
    if let Some(b) = f.policy_boost {
        t.put(&format!("{d}/boost"), b)?;
    }
    if let Some(b) = f.cpb {
        t.put(&format!("{d}/cpb"), b)?;
    }
    if let Some((max, nonlinear, highest)) = f.amd {
        t.put(&format!("{d}/amd_pstate_max_freq"), n(max))?;
        t.put(
            &format!("{d}/amd_pstate_lowest_nonlinear_freq"),
            n(nonlinear),
        )?;
        t.put(&format!("{d}/amd_pstate_highest_perf"), n(highest))?;
    }
    Ok(())
}

fn write_proc(t: &Tree, h: &Host) -> io::Result<()> {
    let online: Vec<u32> = (0..h.cores * h.threads)
        .filter(|cpu| h.smt_online || *cpu < h.cores)
        .collect();
    t.put("proc/cpuinfo", cpuinfo(h, &online))?;
    t.put(
        "proc/meminfo",
        "MemTotal:       65536000 kB\nMemFree:        60000000 kB\nMemAvailable:   62000000 kB\n",
    )?;
    t.put("proc/stat", stat(h, &online))?;
    t.put("proc/cmdline", h.cmdline)?;
    t.put("proc/sys/kernel/hostname", h.hostname)?;
    t.put("proc/sys/kernel/osrelease", h.kernel)?;
    t.put(
        "proc/sys/kernel/random/boot_id",
        "5b3c1f0e-2a4d-4e6f-8a9b-0c1d2e3f4a5b",
    )?;
    t.put("proc/sys/kernel/numa_balancing", "0")?;
    for (k, v) in [
        ("swappiness", "60"),
        ("dirty_ratio", "20"),
        ("dirty_background_ratio", "10"),
        ("dirty_bytes", "0"),
        ("dirty_background_bytes", "0"),
        ("dirty_expire_centisecs", "3000"),
        ("dirty_writeback_centisecs", "500"),
        ("zone_reclaim_mode", "0"),
    ] {
        t.put(&format!("proc/sys/vm/{k}"), v)?;
    }
    t.put("proc/vmstat", "nr_free_pages 15000000\npswpin 0\npswpout 0\nthp_fault_alloc 12\nthp_fault_fallback 0\ncompact_stall 0\n")?;
    t.put("proc/self/mountinfo", mountinfo(h.storage))?;
    t.put("proc/1/comm", "systemd")?;
    for (i, d) in h.daemons.iter().enumerate() {
        t.put(&format!("proc/{}/comm", 600 + i), d)?;
    }
    Ok(())
}

/// /proc/cpuinfo: one entry per online CPU.
fn cpuinfo(h: &Host, online: &[u32]) -> String {
    let mut cpuinfo = String::new();
    let mhz = h.freq.as_ref().map(|f| f.cur / 1000).unwrap_or(2450);
    for cpu in online {
        let mut flags = "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx lm constant_tsc rep_good nopl xtopology cpuid pni ssse3 fma cx16 sse4_1 sse4_2 popcnt aes xsave avx f16c rdrand".to_string();
        if h.hypervisor {
            flags.push_str(" hypervisor");
        }
        cpuinfo.push_str(&format!(
            "processor\t: {cpu}\nvendor_id\t: {}\ncpu family\t: 25\nmodel\t\t: 1\nmodel name\t: {}\nstepping\t: 1\ncpu MHz\t\t: {mhz}.000\ncache size\t: 512 KB\nphysical id\t: 0\nsiblings\t: {}\ncore id\t\t: {}\ncpu cores\t: {}\napicid\t\t: {cpu}\nfpu\t\t: yes\nflags\t\t: {flags}\n\n",
            h.vendor,
            h.cpu_model,
            online.len(),
            cpu % h.cores,
            h.cores
        ));
    }
    cpuinfo
}

/// /proc/stat: the host's and every online CPU's ticks, with the host's steal.
fn stat(h: &Host, online: &[u32]) -> String {
    let mut stat = format!(
        "cpu  {} 120 {} {} 900 0 300 {} 0 0\n",
        40_000 * online.len(),
        9_000 * online.len(),
        500_000 * online.len(),
        h.steal
    );
    for cpu in online {
        stat.push_str(&format!(
            "cpu{cpu} 40000 30 9000 500000 225 0 75 {} 0 0\n",
            h.steal / online.len().max(1) as u64
        ));
    }
    stat.push_str("intr 1000000\nctxt 5000000\nbtime 1763700000\nprocesses 4000\nprocs_running 1\nprocs_blocked 0\n");
    stat
}

/// /proc/self/mountinfo of each storage layout.
fn mountinfo(storage: Storage) -> &'static str {
    match storage {
        Storage::Nvme => "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro\n\
             23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n\
             24 22 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n\
             25 22 0:5 / /dev rw,nosuid,relatime shared:2 - devtmpfs udev rw,size=32768000k,mode=755\n\
             31 22 259:1 / /boot/efi rw,relatime shared:30 - vfat /dev/nvme0n1p1 rw,fmask=0077,dmask=0077\n\
             32 22 253:0 / /data rw,noatime shared:31 - xfs /dev/mapper/vg0-data rw,attr2,inode64,logbufs=8,noquota\n\
             33 22 0:33 / /tmp rw,nosuid,nodev shared:32 - tmpfs tmpfs rw,size=8192000k\n",
        Storage::Virtio => "22 27 0:21 / /proc rw,relatime - proc proc rw\n\
             23 27 0:22 / /sys rw,relatime - sysfs sysfs rw\n\
             24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw,size=12334524k,mode=755\n\
             27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n",
    }
}

fn queue(
    t: &Tree,
    dev: &str,
    scheduler: &str,
    read_ahead: &str,
    rotational: &str,
) -> io::Result<()> {
    t.put(&format!("{dev}/queue/scheduler"), scheduler)?;
    t.put(&format!("{dev}/queue/read_ahead_kb"), read_ahead)?;
    t.put(&format!("{dev}/queue/rotational"), rotational)?;
    t.put(&format!("{dev}/queue/write_cache"), "write back")?;
    t.put(&format!("{dev}/queue/nr_requests"), "1023")?;
    if scheduler.contains("[mq-deadline]") {
        // The elevator's tunables (mq-deadline's defaults), which switching elevators drops.
        t.put(&format!("{dev}/queue/iosched/read_expire"), "500")?;
        t.put(&format!("{dev}/queue/iosched/fifo_batch"), "16")?;
    }
    t.put(&format!("{dev}/queue/logical_block_size"), "512")?;
    t.put(&format!("{dev}/queue/physical_block_size"), "4096")
}

fn aer(t: &Tree, dev: &str, correctable: u64) -> io::Result<()> {
    t.put(
        &format!("{dev}/aer_dev_correctable"),
        format!(
            "RxErr {correctable}\nBadTLP 0\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR {correctable}"
        ),
    )?;
    t.put(
        &format!("{dev}/aer_dev_nonfatal"),
        "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\nUnxCmplt 0\nRxOF 0\nMalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\nUncorrIntErr 0\nBlockedTLP 0\nAtomicOpBlocked 0\nTLPBlockedErr 0\nPoisonTLPBlocked 0\nTOTAL_ERR_NONFATAL 0",
    )?;
    t.put(
        &format!("{dev}/aer_dev_fatal"),
        "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\nUnxCmplt 0\nRxOF 0\nMalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\nUncorrIntErr 0\nBlockedTLP 0\nAtomicOpBlocked 0\nTLPBlockedErr 0\nPoisonTLPBlocked 0\nTOTAL_ERR_FATAL 0",
    )
}

fn pci(t: &Tree, path: &str) -> io::Result<()> {
    let bdf = path.rsplit('/').next().unwrap_or(path);
    t.link(&format!("sys/bus/pci/devices/{bdf}"), path)
}

fn block(t: &Tree, dir: &str, name: &str, dev: &str) -> io::Result<()> {
    t.put(&format!("{dir}/dev"), dev)?;
    t.link(&format!("sys/dev/block/{dev}"), dir)?;
    t.link(&format!("sys/class/block/{name}"), dir)
}

fn write_storage(t: &Tree, h: &Host) -> io::Result<()> {
    match h.storage {
        Storage::Virtio => write_virtio(t),
        Storage::Nvme => write_nvme(t, h),
    }
}

/// The research VM's one disk, virtio `vda`.
fn write_virtio(t: &Tree) -> io::Result<()> {
    let pcidev = "sys/devices/pci0000:00/0000:00:02.0";
    t.put(&format!("{pcidev}/vendor"), "0x1af4")?;
    pci(t, pcidev)?;
    let vda = format!("{pcidev}/virtio1/block/vda");
    block(t, &vda, "vda", "254:0")?;
    t.link("sys/block/vda", &vda)?;
    queue(t, &vda, "none [mq-deadline] kyber bfq", "8192", "1")
}

/// Two NVMe drives, each behind a root port, and a NIC's port beside them, all with AER
/// counters: `/` and `/boot/efi` on the first drive, `/data` on LVM over the second.
fn write_nvme(t: &Tree, h: &Host) -> io::Result<()> {
    let port0 = "sys/devices/pci0000:00/0000:00:01.1";
    let port1 = "sys/devices/pci0000:00/0000:00:01.2";
    let nic_port = "sys/devices/pci0000:00/0000:00:1c.0";
    let ep0 = format!("{port0}/0000:01:00.0");
    let ep1 = format!("{port1}/0000:02:00.0");
    for p in [port0, port1, nic_port, &ep0, &ep1] {
        pci(t, p)?;
    }
    aer(t, port0, 0)?;
    aer(t, &ep0, h.nvme_errors)?;
    aer(t, port1, 0)?;
    aer(t, &ep1, 0)?;
    aer(t, nic_port, h.other_errors)?;
    t.put(
        &format!("{port0}/aer_rootport_total_err_cor"),
        h.nvme_errors.to_string(),
    )?;
    t.put(
        &format!("{nic_port}/aer_rootport_total_err_cor"),
        h.other_errors.to_string(),
    )?;
    write_system_drive(t, &ep0)?;
    write_data_drive(t, &ep1)
}

/// nvme0n1 under the PCIe endpoint `ep`: partition 1 is `/boot/efi`, partition 2 `/`.
fn write_system_drive(t: &Tree, ep: &str) -> io::Result<()> {
    let n0 = format!("{ep}/nvme/nvme0/nvme0n1");
    block(t, &n0, "nvme0n1", "259:0")?;
    t.link("sys/block/nvme0n1", &n0)?;
    t.link(&format!("{ep}/nvme/nvme0/device"), ep)?;
    t.link(&format!("{n0}/device"), &format!("{ep}/nvme/nvme0"))?;
    queue(t, &n0, "[none] mq-deadline kyber bfq", "128", "0")?;
    for (i, dev) in [(1, "259:1"), (2, "259:2")] {
        let p = format!("{n0}/nvme0n1p{i}");
        block(t, &p, &format!("nvme0n1p{i}"), dev)?;
        t.put(&format!("{p}/partition"), i.to_string())?;
    }
    Ok(())
}

/// nvme1n1 under the PCIe endpoint `ep`, its one partition held by LVM's dm-0 (`/data`).
fn write_data_drive(t: &Tree, ep: &str) -> io::Result<()> {
    let n1 = format!("{ep}/nvme/nvme1/nvme1n1");
    block(t, &n1, "nvme1n1", "259:3")?;
    t.link("sys/block/nvme1n1", &n1)?;
    queue(t, &n1, "[none] mq-deadline kyber bfq", "128", "0")?;
    let p1 = format!("{n1}/nvme1n1p1");
    block(t, &p1, "nvme1n1p1", "259:4")?;
    t.put(&format!("{p1}/partition"), "1")?;
    t.link(
        &format!("{p1}/holders/dm-0"),
        "sys/devices/virtual/block/dm-0",
    )?;

    let dm = "sys/devices/virtual/block/dm-0";
    block(t, dm, "dm-0", "253:0")?;
    t.link("sys/block/dm-0", dm)?;
    t.put(&format!("{dm}/dm/name"), "vg0-data")?;
    t.put(&format!("{dm}/dm/uuid"), "LVM-k3J8x2")?;
    t.link(&format!("{dm}/slaves/nvme1n1p1"), &p1)?;
    // Device-mapper queues are bio-based: no elevator to choose.
    queue(t, dm, "none", "4096", "0")
}

fn write_misc(t: &Tree, h: &Host) -> io::Result<()> {
    t.put("sys/kernel/mm/transparent_hugepage/enabled", h.thp_enabled)?;
    t.put("sys/kernel/mm/transparent_hugepage/defrag", h.thp_defrag)?;
    t.put("sys/kernel/mm/transparent_hugepage/khugepaged/defrag", "1")?;
    t.put(
        "sys/kernel/mm/transparent_hugepage/shmem_enabled",
        "always within_size advise [never] deny force",
    )?;
    if let Some([vendor, version, date, release, sys_vendor, product]) = h.bios {
        let d = "sys/devices/virtual/dmi/id";
        for (k, v) in [
            ("bios_vendor", vendor),
            ("bios_version", version),
            ("bios_date", date),
            ("bios_release", release),
            ("sys_vendor", sys_vendor),
            ("product_name", product),
        ] {
            t.put(&format!("{d}/{k}"), v)?;
        }
        t.link("sys/class/dmi/id", d)?;
    }
    t.dir("sys/class/power_supply")?;
    t.put(
        "etc/os-release",
        "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n",
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fixture_builds() {
        for name in NAMES {
            let d = tempfile::tempdir().unwrap();
            build(name, d.path()).unwrap();
            assert!(d.path().join("proc/cpuinfo").exists(), "{name}");
        }
        assert!(build("nope", tempfile::tempdir().unwrap().path()).is_err());
    }

    #[test]
    fn names_are_the_hosts_described() {
        let described: Vec<&str> = hosts::HOSTS.iter().map(|(n, _)| *n).collect();
        assert_eq!(NAMES, described.as_slice());
    }
}
