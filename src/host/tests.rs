//! Host readiness against fixture trees built from the kernel documentation: one test per
//! fixture for what `host show` reads and warns about, then block-device resolution, tune
//! planning, all-or-nothing tune, exact undo, and the run-time monitor.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::tune::{self, Freq, Request};
use super::*;

#[test]
fn reads_a_fixture_tree() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    fs::create_dir_all(p.join("proc/sys/kernel")).unwrap();
    fs::create_dir_all(p.join("etc")).unwrap();
    fs::write(p.join("proc/cpuinfo"), "processor\t: 0\nmodel name\t: Test CPU 9000\n\nprocessor\t: 1\nmodel name\t: Test CPU 9000\n").unwrap();
    fs::write(p.join("proc/meminfo"), "MemTotal:       24576000 kB\n").unwrap();
    fs::write(p.join("proc/sys/kernel/hostname"), "box\n").unwrap();
    fs::write(p.join("proc/sys/kernel/osrelease"), "6.1.0-test\n").unwrap();
    fs::write(
        p.join("etc/os-release"),
        "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n",
    )
    .unwrap();
    let f = fingerprint(&Roots::under(p), &[]);
    assert_eq!(f.cpu_model, "Test CPU 9000");
    assert_eq!((f.cpus_online, f.memory_kb), (2, 24_576_000));
    assert_eq!(
        (f.hostname.as_str(), f.kernel.as_str()),
        ("box", "6.1.0-test")
    );
    assert_eq!(f.os, "Debian GNU/Linux 12 (bookworm)");
    // Nothing else exists in this tree: everything reads as absent, nothing fails.
    assert_eq!(f.cpufreq.mode, "none");
    assert_eq!(f.smt.control, None);
    assert!(!f.aer.available);
}

fn fixture(name: &str) -> (tempfile::TempDir, Roots) {
    let d = tempfile::tempdir().unwrap();
    fixture::build(name, d.path()).unwrap();
    let r = Roots::under(d.path());
    (d, r)
}

fn show(name: &str, dirs: &[&str]) -> Fingerprint {
    let (_d, r) = fixture(name);
    let dirs: Vec<PathBuf> = dirs.iter().map(PathBuf::from).collect();
    fingerprint(&r, &dirs)
}

fn ids(f: &Fingerprint) -> BTreeSet<String> {
    f.warnings.iter().map(|w| w.id.clone()).collect()
}

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn warning<'a>(f: &'a Fingerprint, id: &str) -> &'a Warning {
    f.warnings
        .iter()
        .find(|w| w.id == id)
        .unwrap_or_else(|| panic!("no {id} warning"))
}

#[test]
fn acpi_cpufreq_with_boost_on() {
    let f = show("acpi-boost-on", &[]);
    assert_eq!(
        (f.cpufreq.driver.as_str(), f.cpufreq.mode.as_str()),
        ("acpi-cpufreq", "acpi-cpufreq")
    );
    assert_eq!(f.cpufreq.boost.control, "cpufreq/boost");
    assert_eq!(f.cpufreq.boost.enabled, Some(true));
    assert_eq!(f.cpufreq.policies.len(), 4);
    let p = &f.cpufreq.policies[0];
    // 5.15: the legacy cpb knob, no per-policy boost yet.
    assert_eq!((p.cpb, p.boost), (Some(true), None));
    assert_eq!(
        (p.hw_min_khz, p.hw_max_khz, p.bios_limit_khz),
        (Some(1_500_000), Some(3_000_000), Some(3_000_000))
    );
    assert_eq!(p.hw_cur_khz, Some(2_994_000));
    assert_eq!(p.governors_available.len(), 6);
    assert_eq!(ids(&f), set(&["governor", "boost-on", "smt-on"]));
    assert!(warning(&f, "boost-on")
        .fix
        .contains("writes 0 to cpufreq/boost"));
    assert!(warning(&f, "governor")
        .message
        .contains("schedutil on CPUs 0-3"));
    assert_eq!((f.cpus_online, f.cores), (4, 2));
    assert_eq!(f.bios.version.as_deref(), Some("2.3"));
    assert!(!f.virtualization.vm);
    assert_eq!(f.pm_daemons, vec!["irqbalance"]);
}

#[test]
fn acpi_cpufreq_with_boost_off_is_a_quiet_host() {
    let f = show("acpi-boost-off", &[]);
    assert_eq!(f.cpufreq.boost.enabled, Some(false));
    assert_eq!(f.cpufreq.boost.global, Some(false));
    assert!(f
        .cpufreq
        .policies
        .iter()
        .filter(|p| p.active())
        .all(|p| p.boost == Some(false)));
    // SMT off: the siblings' policies stay, inactive.
    let active: Vec<_> = f.cpufreq.policies.iter().filter(|p| p.active()).collect();
    assert_eq!((active.len(), f.cpufreq.policies.len()), (2, 4));
    assert_eq!(f.smt.control.as_deref(), Some("off"));
    assert_eq!(f.smt.active, Some(false));
    assert_eq!(ids(&f), set(&[]), "{:#?}", f.warnings);
}

#[test]
fn amd_pstate_epp_active_without_a_boost_file() {
    let f = show("amd-pstate-epp-active", &[]);
    assert_eq!(f.cpufreq.mode, "amd-pstate active");
    assert_eq!(
        f.cpufreq.amd_pstate.as_ref().unwrap().status.as_deref(),
        Some("active")
    );
    assert_eq!(f.cpufreq.boost.control, "none");
    assert_eq!(f.cpufreq.boost.enabled, None);
    let p = &f.cpufreq.policies[0];
    assert_eq!(p.epp.as_deref(), Some("balance_performance"));
    assert_eq!(p.governors_available, vec!["performance", "powersave"]);
    assert_eq!(p.amd_pstate_max_khz, Some(5_881_000));
    assert_eq!(
        ids(&f),
        set(&[
            "governor",
            "boost-uncontrollable",
            "epp",
            "smt-on",
            "pm-daemon"
        ])
    );
    let w = warning(&f, "boost-uncontrollable");
    assert!(
        w.message.contains("Linux 6.8") && w.message.contains("6.11"),
        "{}",
        w.message
    );
    for fix in [
        "amd_pstate=passive",
        "amd_pstate=guided",
        "amd_pstate=disable",
        "Linux 6.11 or newer",
    ] {
        assert!(w.fix.contains(fix), "{fix} missing from {}", w.fix);
    }
    assert_eq!(f.pm_daemons, vec!["power-profiles-daemon"]);
}

#[test]
fn amd_pstate_guided_with_pcie_errors_on_the_storage_path() {
    let f = show("amd-pstate-guided", &["/"]);
    assert_eq!(f.cpufreq.mode, "amd-pstate guided");
    assert_eq!(f.cpufreq.boost.control, "cpufreq/boost");
    assert_eq!(f.cpufreq.policies[0].boost, Some(true));
    assert_eq!(
        ids(&f),
        set(&["governor", "boost-on", "smt-on", "aer-errors"])
    );
    assert_eq!(
        (f.aer.correctable_total, f.aer.storage_correctable_total),
        (12, 12)
    );
    assert!(warning(&f, "aer-errors")
        .message
        .contains("0000:01:00.0: 12 correctable"));
    // Without the data directory on that drive the errors are not on the storage path.
    let g = show("amd-pstate-guided", &["/data"]);
    assert_eq!(g.aer.storage_correctable_total, 0);
    assert!(!ids(&g).contains("aer-errors"));
}

#[test]
fn amd_pstate_passive_before_the_status_file() {
    let f = show("amd-pstate-passive", &["/"]);
    // 6.1 has no amd_pstate/ directory: the mode comes from the driver name.
    assert_eq!(f.cpufreq.mode, "amd-pstate passive");
    assert!(f.cpufreq.amd_pstate.is_none());
    assert_eq!(f.cpufreq.boost.control, "cpufreq/boost");
    assert_eq!(f.cpufreq.policies[0].boost, None);
    assert_eq!(ids(&f), set(&["boost-on", "smt-on"]));
    // Errors on a port that is not on the storage path are counted, not warned about.
    assert_eq!(
        (f.aer.correctable_total, f.aer.storage_correctable_total),
        (5, 0)
    );
}

#[test]
fn intel_pstate_active_with_no_turbo() {
    let f = show("intel-pstate-active-no-turbo", &[]);
    assert_eq!(f.cpufreq.mode, "intel_pstate active");
    assert_eq!(f.cpufreq.boost.control, "intel_pstate/no_turbo");
    assert_eq!(f.cpufreq.boost.enabled, Some(false));
    let i = f.cpufreq.intel_pstate.as_ref().unwrap();
    assert_eq!(
        (i.status.as_deref(), i.no_turbo),
        (Some("active"), Some(true))
    );
    let p = &f.cpufreq.policies[0];
    assert_eq!(
        (p.max_khz, p.hw_max_khz, p.base_khz),
        (Some(2_000_000), Some(3_200_000), Some(2_000_000))
    );
    // no_turbo explains the lower cap: no max-freq-capped warning.
    assert_eq!(ids(&f), set(&["governor", "epp", "smt-on", "pm-daemon"]));
    assert!(warning(&f, "governor")
        .why
        .contains("intel_pstate's own powersave"));
}

#[test]
fn intel_cpufreq_passive_with_turbo() {
    let f = show("intel-cpufreq-passive", &[]);
    assert_eq!(f.cpufreq.mode, "intel_pstate passive");
    assert_eq!(f.cpufreq.boost.control, "intel_pstate/no_turbo");
    assert_eq!(f.cpufreq.boost.enabled, Some(true));
    assert_eq!(ids(&f), set(&["governor", "boost-on", "smt-on"]));
    assert!(warning(&f, "boost-on")
        .fix
        .contains("writes 1 to intel_pstate/no_turbo"));
}

#[test]
fn vm_without_cpufreq() {
    let f = show("vm-no-cpufreq", &["/var/lib/db"]);
    assert_eq!(
        (f.cpufreq.driver.as_str(), f.cpufreq.mode.as_str()),
        ("none", "none")
    );
    assert!(f.cpufreq.policies.is_empty());
    assert!(f.virtualization.vm);
    assert_eq!(
        f.virtualization.evidence.as_deref(),
        Some("hypervisor cpu flag")
    );
    assert!(f.virtualization.steal_pct_since_boot.unwrap() > 0.0);
    assert_eq!(f.smt.control.as_deref(), Some("notsupported"));
    assert_eq!(f.bios.version, None);
    assert!(!f.aer.available);
    assert_eq!(ids(&f), set(&["no-cpufreq", "virtual-machine"]));
    let d = &f.storage[0];
    assert_eq!(d.mount_point.as_deref(), Some("/"));
    assert_eq!(d.devices.len(), 1);
    let b = &d.devices[0];
    assert_eq!(
        (b.name.as_str(), b.rotational, b.read_ahead_kb),
        ("vda", Some(true), Some(8192))
    );
    assert_eq!(b.scheduler.as_deref(), Some("mq-deadline"));
}

#[test]
fn smt_forced_off() {
    let f = show("smt-forceoff", &[]);
    assert_eq!(f.smt.control.as_deref(), Some("forceoff"));
    assert_eq!(ids(&f), set(&[]));
    assert!(show::render(&f).contains("forceoff (nosmt=force at boot"));
}

#[test]
fn thp_always() {
    let f = show("thp-always", &[]);
    assert_eq!(f.thp.enabled.as_deref(), Some("always"));
    assert_eq!(f.thp.defrag.as_deref(), Some("always"));
    assert_eq!(
        ids(&f),
        set(&["boost-on", "smt-on", "thp-always", "thp-defrag-always"])
    );
    assert!(warning(&f, "thp-always").fix.contains("--thp madvise"));
}

#[test]
fn every_fixture_shows_without_panicking() {
    for name in fixture::NAMES {
        let f = show(name, &["/", "/data/x", "/tmp/y", "/nowhere"]);
        let text = show::render(&f);
        assert!(
            text.contains("cpufreq") && text.contains("warning") || text.contains("No warnings"),
            "{name}"
        );
        serde_json::to_string(&f).unwrap();
    }
}

#[test]
fn block_devices_follow_partitions_and_device_mapper() {
    let f = show(
        "intel-pstate-active-no-turbo",
        &["/data/pg", "/boot/efi/EFI", "/tmp/x"],
    );
    let data = &f.storage[0];
    assert_eq!(data.mount_point.as_deref(), Some("/data"));
    assert_eq!(data.dev.as_deref(), Some("253:0"));
    assert_eq!(data.chain, vec!["dm-0", "nvme1n1p1", "nvme1n1"]);
    let names: Vec<(&str, &str, bool)> = data
        .devices
        .iter()
        .map(|d| (d.name.as_str(), d.kind.as_str(), d.underlying))
        .collect();
    assert_eq!(
        names,
        vec![("dm-0", "dm", false), ("nvme1n1", "disk", true)]
    );
    assert_eq!(data.devices[0].dm_name.as_deref(), Some("vg0-data"));
    assert_eq!(
        data.devices[1].schedulers_available,
        vec!["none", "mq-deadline", "kyber", "bfq"]
    );
    let efi = &f.storage[1];
    assert_eq!(efi.chain, vec!["nvme0n1p1", "nvme0n1"]);
    assert_eq!(efi.devices.len(), 1);
    assert_eq!(efi.devices[0].name, "nvme0n1");
    let tmp = &f.storage[2];
    assert_eq!(tmp.fstype.as_deref(), Some("tmpfs"));
    assert!(tmp.devices.is_empty() && tmp.note.is_some());
    // The data directory's drive and its root port are the storage path; the other drive's
    // port is not.
    let on: Vec<&str> = f
        .aer
        .devices
        .iter()
        .filter(|d| d.storage_path)
        .map(|d| d.device.as_str())
        .collect();
    assert_eq!(
        on,
        vec![
            "0000:00:01.1",
            "0000:00:01.2",
            "0000:01:00.0",
            "0000:02:00.0"
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// tune and undo

fn req() -> Request {
    Request {
        paths: vec!["/data/pg".into()],
        ..Request::default()
    }
}

fn err(r: anyhow::Result<impl std::fmt::Debug>) -> String {
    let e = r.unwrap_err();
    assert!(crate::error::is_bad_input(&e), "{e:#}");
    e.to_string()
}

/// Every regular file of a tree with its content, to prove a tree is back as it was.
fn snapshot(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() {
                out.push((e.path(), fs::read_to_string(e.path()).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn plan_orders_writes_as_the_kernel_docs_require() {
    let (_d, r) = fixture("intel-cpufreq-passive");
    let p = tune::plan(
        &r,
        &Request {
            boost: Some(false),
            governor: Some("performance".into()),
            smt: Some(false),
            max_freq: Some(Freq::Khz(3_000_000)),
            thp: Some("never".into()),
            ..req()
        },
    )
    .unwrap();
    let order: Vec<&str> = p.iter().map(|e| e.setting.as_str()).collect();
    let first = |s: &str| order.iter().position(|x| *x == s).unwrap();
    assert!(first("--governor") < first("--boost"));
    assert!(first("--boost") < first("--max-freq"));
    assert_eq!(*order.last().unwrap(), "--smt");
    // no_turbo is saved when the governor changes (it can reset it) and written by --boost.
    let nt: Vec<_> = p
        .iter()
        .filter(|e| e.what == "intel_pstate no_turbo")
        .collect();
    assert_eq!(nt.len(), 1);
    assert_eq!((nt[0].old.as_str(), nt[0].new.as_deref()), ("0", Some("1")));
}

#[test]
fn frequency_limits_are_written_in_a_valid_order() {
    let (_d, r) = fixture("acpi-boost-off");
    // Raising the minimum within the current range: max first; lowering both below the current
    // minimum: min first.
    let f = |min, max| {
        tune::plan(
            &r,
            &Request {
                min_freq: Some(Freq::Khz(min)),
                max_freq: Some(Freq::Khz(max)),
                ..req()
            },
        )
        .unwrap()
        .into_iter()
        .take(2)
        .map(|e| e.what.rsplit(' ').next().unwrap().to_string())
        .collect::<Vec<_>>()
    };
    assert_eq!(
        f(1_000_000, 1_200_000),
        vec!["scaling_max_freq", "scaling_min_freq"]
    );
    fs::write(
        r.sys
            .join("devices/system/cpu/cpufreq/policy0/scaling_min_freq"),
        "3000000\n",
    )
    .unwrap();
    assert_eq!(
        f(1_000_000, 1_200_000),
        vec!["scaling_min_freq", "scaling_max_freq"]
    );
    assert!(err(tune::plan(
        &r,
        &Request {
            max_freq: Some(Freq::Khz(9_000_000)),
            ..req()
        }
    ))
    .contains("outside the hardware limits"));
    assert!(err(tune::plan(
        &r,
        &Request {
            min_freq: Some(Freq::Max),
            max_freq: Some(Freq::Min),
            ..req()
        }
    ))
    .contains("would exceed the maximum"));
    assert_eq!(tune::parse_freq("2.4GHz"), Ok(Freq::Khz(2_400_000)));
    assert_eq!(tune::parse_freq("2400MHz"), Ok(Freq::Khz(2_400_000)));
    assert_eq!(tune::parse_freq("max"), Ok(Freq::Max));
    assert!(tune::parse_freq("fast").is_err());
}

#[test]
fn refusals_name_the_missing_control() {
    let (_d, r) = fixture("amd-pstate-epp-active");
    let e = err(tune::plan(
        &r,
        &Request {
            boost: Some(false),
            ..req()
        },
    ));
    assert!(
        e.contains("amd-pstate-epp") && e.contains("amd_pstate=passive") && e.contains("6.11"),
        "{e}"
    );
    let e = err(tune::plan(
        &r,
        &Request {
            governor: Some("schedutil".into()),
            ..req()
        },
    ));
    assert!(
        e.contains("offers the governors performance, powersave, not 'schedutil'"),
        "{e}"
    );
    let e = err(tune::plan(
        &r,
        &Request {
            epp: Some("turbo".into()),
            ..req()
        },
    ));
    assert!(e.contains("not 'turbo'"), "{e}");

    let (_d, r) = fixture("vm-no-cpufreq");
    for rq in [
        Request {
            governor: Some("performance".into()),
            ..req()
        },
        Request {
            boost: Some(false),
            ..req()
        },
    ] {
        assert!(err(tune::plan(&r, &rq)).contains("no CPU frequency control"));
    }
    assert!(err(tune::plan(
        &r,
        &Request {
            smt: Some(false),
            ..req()
        }
    ))
    .contains("no SMT"));

    let (_d, r) = fixture("smt-forceoff");
    assert!(err(tune::plan(
        &r,
        &Request {
            smt: Some(true),
            ..req()
        }
    ))
    .contains("forced off at boot"));
    let e = err(tune::plan(
        &r,
        &Request {
            epp: Some("performance".into()),
            ..req()
        },
    ));
    assert!(e.contains("offers no energy_performance_preference"), "{e}");

    let (_d, r) = fixture("intel-pstate-active-no-turbo");
    let e = err(tune::plan(
        &r,
        &Request {
            governor: Some("performance".into()),
            epp: Some("power".into()),
            ..req()
        },
    ));
    assert!(e.contains("holds EPP at performance"), "{e}");
    let e = err(tune::plan(
        &r,
        &Request {
            scheduler: Some("cfq".into()),
            ..req()
        },
    ));
    assert!(
        e.contains("nvme1n1 offers the I/O schedulers none, mq-deadline, kyber, bfq, not 'cfq'"),
        "{e}"
    );
    let e = err(tune::plan(
        &r,
        &Request {
            read_ahead_kb: Some(1),
            paths: vec!["/tmp/x".into()],
            ..req()
        },
    ));
    assert!(e.contains("no block device"), "{e}");
    let e = err(tune::plan(
        &r,
        &Request {
            thp: Some("sometimes".into()),
            ..req()
        },
    ));
    assert!(e.contains("always, madvise, never"), "{e}");
    assert!(err(tune::plan(
        &r,
        &Request {
            swappiness: Some(500),
            ..req()
        }
    ))
    .contains("0 to 200"));
}

#[test]
fn tune_then_undo_restores_every_file_exactly() {
    for name in [
        "acpi-boost-on",
        "amd-pstate-guided",
        "intel-pstate-active-no-turbo",
        "intel-cpufreq-passive",
    ] {
        let (d, r) = fixture(name);
        let state = d.path().join("state/host-tune.json");
        let before_files = snapshot(&r.sys);
        let before = fingerprint(&r, &[PathBuf::from("/data/pg")]);
        let rq = Request {
            boost: Some(false),
            governor: Some("performance".into()),
            epp: before.cpufreq.policies[0]
                .epp
                .as_ref()
                .map(|_| "performance".to_string()),
            smt: Some(false),
            thp: Some("never".into()),
            thp_defrag: Some("never".into()),
            swappiness: Some(1),
            scheduler: Some("mq-deadline".into()),
            read_ahead_kb: Some(512),
            ..req()
        };
        let rep = tune::tune(&r, &rq, &state, false).unwrap();
        assert!(
            rep.lines.last().unwrap().contains("dbperf host undo"),
            "{name}: {:?}",
            rep.lines
        );
        let tuned = fingerprint(&r, &[PathBuf::from("/data/pg")]);
        assert_eq!(tuned.cpufreq.boost.enabled, Some(false), "{name}");
        assert!(tuned
            .cpufreq
            .policies
            .iter()
            .all(|p| p.governor.as_deref() == Some("performance")));
        assert_eq!(
            (tuned.smt.control.as_deref(), tuned.thp.enabled.as_deref()),
            (Some("off"), Some("never"))
        );
        assert_eq!(
            tuned.storage[0].devices[1].scheduler.as_deref(),
            Some("mq-deadline")
        );
        assert!(tuned.storage[0]
            .devices
            .iter()
            .all(|b| b.read_ahead_kb == Some(512)));
        assert!(state.exists());

        tune::undo(&r, &state).unwrap();
        assert!(!state.exists());
        let after = fingerprint(&r, &[PathBuf::from("/data/pg")]);
        // A fixture cannot re-add the other choices the kernel lists in a choice file.
        let norm = |f: &Fingerprint| {
            let mut f = f.clone();
            for b in f.storage.iter_mut().flat_map(|d| d.devices.iter_mut()) {
                b.schedulers_available.clear();
            }
            serde_json::to_value(f).unwrap()
        };
        assert_eq!(norm(&before), norm(&after), "{name}");
        // Plain files are back byte for byte; choice files hold the saved word (a fixture
        // cannot re-add the brackets the kernel prints).
        let after_files = snapshot(&r.sys);
        for ((p, a), (_, b)) in before_files.iter().zip(&after_files) {
            match sysfs::bracketed(a) {
                Some((sel, choices)) if choices.len() > 1 => {
                    assert!(a == b || b.trim() == sel, "{}: {b}", p.display())
                }
                _ => assert_eq!(a, b, "{name}: {}", p.display()),
            }
        }
    }
}

#[test]
fn a_second_tune_keeps_the_first_old_values() {
    let (d, r) = fixture("acpi-boost-on");
    let state = d.path().join("s.json");
    tune::tune(
        &r,
        &Request {
            governor: Some("powersave".into()),
            ..req()
        },
        &state,
        false,
    )
    .unwrap();
    tune::tune(
        &r,
        &Request {
            governor: Some("performance".into()),
            boost: Some(false),
            ..req()
        },
        &state,
        false,
    )
    .unwrap();
    let s = tune::load_state(&state).unwrap().unwrap();
    let g = s
        .entries
        .iter()
        .find(|e| e.what == "policy0 scaling_governor")
        .unwrap();
    assert_eq!(
        (g.old.as_str(), g.new.as_deref()),
        ("schedutil", Some("performance"))
    );
    tune::undo(&r, &state).unwrap();
    let f = fingerprint(&r, &[]);
    assert_eq!(f.cpufreq.policies[0].governor.as_deref(), Some("schedutil"));
    assert_eq!(f.cpufreq.boost.enabled, Some(true));
}

#[test]
fn a_failed_write_puts_back_what_was_changed() {
    let (d, r) = fixture("amd-pstate-passive");
    let state = d.path().join("s.json");
    // SMT is written last; make it a kernel file that refuses writes even from root.
    let smt = r.sys.join("devices/system/cpu/smt/control");
    let ro = Path::new("/sys/devices/system/cpu/kernel_max");
    if !ro.exists() {
        return;
    }
    fs::remove_file(&smt).unwrap();
    std::os::unix::fs::symlink(ro, &smt).unwrap();
    let before = snapshot(&r.sys);
    let e = err(tune::tune(
        &r,
        &Request {
            governor: Some("powersave".into()),
            thp: Some("never".into()),
            smt: Some(false),
            ..req()
        },
        &state,
        false,
    ));
    assert!(
        e.starts_with("cannot write") && e.contains("so nothing was changed"),
        "{e}"
    );
    assert!(
        e.contains("the 5 settings already changed were put back"),
        "{e}"
    );
    assert!(
        !state.exists(),
        "the state file of a tune that changed nothing is removed"
    );
    let after = snapshot(&r.sys);
    for ((p, a), (_, b)) in before.iter().zip(&after) {
        if p.ends_with("enabled") {
            assert_eq!(b.trim(), "madvise");
        } else {
            assert_eq!(a, b, "{}", p.display());
        }
    }
}

#[test]
fn undo_without_state_and_tune_without_settings_are_refused() {
    let (d, r) = fixture("acpi-boost-on");
    let e = err(tune::undo(&r, &d.path().join("none.json")));
    assert!(e.contains("nothing to undo"), "{e}");
    let e = err(tune::tune(&r, &req(), &d.path().join("s.json"), false));
    assert!(e.contains("nothing to tune"), "{e}");
    fs::write(d.path().join("junk.json"), "{").unwrap();
    assert!(
        err(tune::undo(&r, &d.path().join("junk.json"))).contains("not a dbperf host state file")
    );
}

#[test]
fn root_is_needed_only_for_the_real_sys_and_proc() {
    let e = |p: &str| tune::Entry {
        setting: "--thp".into(),
        what: "x".into(),
        path: p.into(),
        old: "a".into(),
        new: Some("b".into()),
        choice: false,
    };
    assert!(tune::needs_root(
        &[e("/sys/kernel/mm/transparent_hugepage/enabled")],
        1000
    ));
    assert!(tune::needs_root(&[e("/proc/sys/vm/swappiness")], 1000));
    assert!(!tune::needs_root(&[e("/proc/sys/vm/swappiness")], 0));
    assert!(!tune::needs_root(
        &[e("/tmp/fx/sys/kernel/mm/transparent_hugepage/enabled")],
        1000
    ));
    assert!(!tune::needs_root(&[e("/system/x")], 1000));
}

// ---------------------------------------------------------------------------------------------
// the run-time monitor

/// Makes CPU 0 look busy (or idle) for the next second in the fixture's /proc/stat.
fn tick(r: &Roots, cpu0_busy: bool, n: u64) {
    let busy = if cpu0_busy { 100 * n } else { 0 };
    let idle = if cpu0_busy { 0 } else { 100 * n };
    let text = format!(
        "cpu  {busy} 0 0 {} 0 0 0 0 0 0\ncpu0 {busy} 0 0 {idle} 0 0 0 0 0 0\ncpu1 0 0 0 {} 0 0 0 0 0 0\n",
        idle + 100 * n,
        100 * n
    );
    fs::write(r.proc.join("stat"), text).unwrap();
}

fn cur(r: &Roots, khz: u64) {
    fs::write(
        r.sys
            .join("devices/system/cpu/cpufreq/policy0/scaling_cur_freq"),
        format!("{khz}\n"),
    )
    .unwrap();
}

#[test]
fn monitor_samples_busy_cpus_and_flags_a_sag() {
    let (_d, r) = fixture("acpi-boost-off");
    tick(&r, true, 0);
    let mut m = monitor::Monitor::start(r.clone(), vec![], true);
    // A step at full clock, then one at 60% of the 3701 MHz maximum.
    m.step_begins("l.i0");
    for i in 1..=5 {
        tick(&r, true, i);
        cur(&r, 3_700_000);
        m.second();
    }
    m.step_ends();
    m.step_begins("l.i1");
    for i in 6..=10 {
        tick(&r, true, i);
        cur(&r, 2_220_000);
        m.second();
    }
    m.step_ends();
    let (rec, warnings) = m.finish();
    assert!(rec.frequency.sampled);
    let s: Vec<(&str, u64, Option<u32>, bool)> = rec
        .frequency
        .steps
        .iter()
        .map(|s| (s.step.as_str(), s.samples, s.median_pct_of_max, s.sagged))
        .collect();
    // Only policy0 has a busy CPU; CPU 1 stays idle and is not sampled.
    assert_eq!(
        s,
        vec![("l.i0", 5, Some(99), false), ("l.i1", 5, Some(59), true)]
    );
    assert_eq!(rec.frequency.policies[0].samples, 10);
    assert_eq!(rec.frequency.policies[1].samples, 0);
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("sagged under load in step l.i1")),
        "{warnings:?}"
    );
    assert!(!warnings.iter().any(|w| w.contains("step l.i0")));
    assert!(rec.calibration.is_some());
}

#[test]
fn monitor_reports_state_changes_and_rising_pcie_errors() {
    let (_d, r) = fixture("amd-pstate-passive");
    let m = monitor::Monitor::start(r.clone(), vec![PathBuf::from("/")], true);
    fs::write(
        r.sys
            .join("devices/system/cpu/cpufreq/policy1/scaling_governor"),
        "powersave\n",
    )
    .unwrap();
    fs::write(
        r.sys.join("kernel/mm/transparent_hugepage/enabled"),
        "[always] madvise never\n",
    )
    .unwrap();
    let aer = r
        .sys
        .join("devices/pci0000:00/0000:00:01.1/0000:01:00.0/aer_dev_correctable");
    fs::write(&aer, "RxErr 3\nBadTLP 0\nTOTAL_ERR_COR 3\n").unwrap();
    fs::write(r.proc.join("vmstat"), "pswpin 10\npswpout 20\n").unwrap();
    let (rec, warnings) = m.finish();
    assert_eq!(
        rec.changed,
        vec![
            "cpufreq.policies[policy1].governor performance -> powersave",
            "thp.enabled madvise -> always"
        ]
    );
    assert_eq!(
        (
            rec.aer_before.storage_correctable_total,
            rec.aer_after.storage_correctable_total
        ),
        (0, 3)
    );
    assert_eq!(
        (rec.swap_pages_in, rec.swap_pages_out),
        (Some(10), Some(20))
    );
    let all = warnings.join("\n");
    assert!(
        all.contains("host state changed during the run: cpufreq.policies[policy1].governor"),
        "{all}"
    );
    assert!(all.contains("0000:01:00.0 (storage path): 0 -> 3"), "{all}");
    assert!(
        all.contains("swapped during the run (10 pages in, 20 out)"),
        "{all}"
    );
}

#[test]
fn monitor_on_a_vm_without_cpufreq_just_says_so() {
    let (_d, r) = fixture("vm-no-cpufreq");
    let mut m = monitor::Monitor::start(r.clone(), vec![PathBuf::from("/")], true);
    m.step_begins("l.i0");
    m.second();
    m.step_ends();
    let (rec, warnings) = m.finish();
    assert!(!rec.frequency.sampled);
    assert!(rec
        .frequency
        .note
        .as_deref()
        .unwrap()
        .contains("no cpufreq"));
    assert!(rec.changed.is_empty(), "{:?}", rec.changed);
    // Calibration drift depends on what else this machine runs while tests run in parallel.
    assert!(
        warnings.iter().all(|w| w.starts_with("CPU speed drifted")),
        "{warnings:?}"
    );
    assert!(monitor::summary(m_fingerprint(&r)).starts_with("virtual machine, no cpufreq"));
}

fn m_fingerprint(r: &Roots) -> &'static Fingerprint {
    Box::leak(Box::new(fingerprint(r, &[])))
}

/// A state file is what undo writes into kernel files as root: one that names a file outside
/// the sysfs and procfs roots, that is a link, or that another user could have written is
/// refused before anything is written.
#[test]
fn undo_writes_only_kernel_settings_from_a_state_file_of_its_own() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let (d, r) = fixture("acpi-boost-on");
    let state = d.path().join("s.json");
    let mut q = req();
    q.swappiness = Some(1);
    tune::tune(&r, &q, &state, false).unwrap();
    let good = fs::read_to_string(&state).unwrap();

    // An entry naming a file outside the roots (here a file in the temp dir, standing for
    // /etc/shadow) is refused and the file keeps its content.
    let victim = d.path().join("victim");
    fs::write(&victim, "secret\n").unwrap();
    let mut s: serde_json::Value = serde_json::from_str(&good).unwrap();
    s["entries"][0]["path"] = victim.display().to_string().into();
    fs::write(&state, serde_json::to_string(&s).unwrap()).unwrap();
    let e = err(tune::undo(&r, &state));
    assert!(e.contains("not a kernel setting"), "{e}");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "secret\n");
    // Nor through `..` from inside the sysfs root.
    let sneaky = r.sys.join("..").join("victim");
    s["entries"][0]["path"] = sneaky.display().to_string().into();
    fs::write(&state, serde_json::to_string(&s).unwrap()).unwrap();
    assert!(err(tune::undo(&r, &state)).contains("not a kernel setting"));
    // Nor through a link inside the sysfs root that leads out of it.
    symlink(&victim, r.sys.join("planted")).unwrap();
    s["entries"][0]["path"] = r.sys.join("planted").display().to_string().into();
    fs::write(&state, serde_json::to_string(&s).unwrap()).unwrap();
    assert!(err(tune::undo(&r, &state)).contains("not a kernel setting"));
    assert_eq!(fs::read_to_string(&victim).unwrap(), "secret\n");

    // The state file itself: a link, a file others may write, a FIFO.
    fs::write(d.path().join("real.json"), &good).unwrap();
    fs::remove_file(&state).unwrap();
    symlink(d.path().join("real.json"), &state).unwrap();
    assert!(err(tune::undo(&r, &state)).contains("symbolic link"));
    fs::remove_file(&state).unwrap();
    fs::write(&state, &good).unwrap();
    fs::set_permissions(&state, fs::Permissions::from_mode(0o666)).unwrap();
    assert!(err(tune::undo(&r, &state)).contains("can be written by other users"));
    fs::set_permissions(&state, fs::Permissions::from_mode(0o644)).unwrap();
    if crate::server::process::running_as_root() {
        std::os::unix::fs::chown(&state, Some(65534), None).unwrap();
        let e = err(tune::undo(&r, &state));
        assert!(
            e.contains("belongs to") && e.contains("the saved host settings decides"),
            "{e}"
        );
    }
    fs::remove_file(&state).unwrap();
    let fifo = std::ffi::CString::new(state.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    assert!(err(tune::undo(&r, &state)).contains("not a regular file"));
    fs::remove_file(&state).unwrap();

    // A link planted where tune writes its temporary file is replaced, not written through.
    let tmp = d.path().join(".s.json.tmp");
    symlink(&victim, &tmp).unwrap();
    fs::write(&state, &good).unwrap();
    tune::undo(&r, &state).unwrap();
    tune::tune(&r, &q, &state, false).unwrap();
    assert_eq!(fs::read_to_string(&victim).unwrap(), "secret\n");
    assert!(!tmp.exists());
    tune::undo(&r, &state).unwrap();
}
