//! `dbperf host show|tune|undo` as a user runs them, on fixture trees built from the kernel
//! documentation (dbperf::host::fixture): output and warnings per driver, JSON, tune + undo
//! restoring the exact previous values, and one sentence + exit 2 for every bad input, with
//! nothing half-written.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;
use dbperf::host::fixture;

/// Index of the --state-file value in `Fx::args` (host, sub, 2 roots with values, --state-file).
const STATE_ARG: usize = 7;

struct Fx {
    dir: tempfile::TempDir,
}

impl Fx {
    fn new(name: &str) -> Fx {
        let dir = tempfile::tempdir().unwrap();
        fixture::build(name, dir.path()).unwrap();
        Fx { dir }
    }

    fn sys(&self) -> PathBuf {
        self.dir.path().join("sys")
    }

    fn state(&self) -> PathBuf {
        self.dir.path().join("state/host-tune.json")
    }

    /// `dbperf host <sub> --sysfs-root … --procfs-root … <args>`
    fn args(&self, sub: &str, args: &[&str]) -> Vec<String> {
        let mut v = vec![
            "host".to_string(),
            sub.to_string(),
            "--sysfs-root".into(),
            self.sys().display().to_string(),
            "--procfs-root".into(),
            self.dir.path().join("proc").display().to_string(),
        ];
        if sub != "show" {
            v.push("--state-file".into());
            v.push(self.state().display().to_string());
        }
        v.extend(args.iter().map(|s| s.to_string()));
        v
    }

    fn run(&self, sub: &str, args: &[&str]) -> Output {
        dbperf().args(self.args(sub, args)).output().unwrap()
    }

    fn show_json(&self) -> serde_json::Value {
        let o = self.run("show", &["--json", "--path", "/data/pg"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        // A fixture cannot re-add the other choices the kernel lists in a choice file.
        for d in v["storage"].as_array_mut().unwrap() {
            for b in d["devices"].as_array_mut().unwrap() {
                b["schedulers_available"] = serde_json::Value::Null;
            }
        }
        v
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Exit 2 and one line on stderr, `error: …`, containing `expect`.
fn assert_one_sentence(o: &Output, expect: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", text(o));
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "not one sentence:\n{err}");
    assert!(lines[0].starts_with("error: "), "{err}");
    assert!(lines[0].contains(expect), "expected '{expect}' in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Every regular file under `dir` with its content.
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

fn each_file(dir: &Path, f: &dyn Fn(&Path)) {
    for e in fs::read_dir(dir).unwrap().flatten() {
        let t = e.file_type().unwrap();
        if t.is_dir() {
            each_file(&e.path(), f);
        } else if t.is_file() {
            f(&e.path());
        }
    }
}

fn chmod(p: &Path, mode: u32) {
    fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A directory the unprivileged user owns, for its state file: dbperf refuses to write into a
/// directory other users can change, so a world-writable one would not do.
fn unprivileged_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    if is_root() {
        std::os::unix::fs::chown(d.path(), Some(65534), Some(65534)).unwrap();
    }
    d
}

/// Runs dbperf as an unprivileged user: nobody when the tests run as root (file modes do not
/// stop root), else as ourselves.
fn run_unprivileged(args: &[String]) -> Output {
    let mut c = dbperf();
    c.args(args);
    if is_root() {
        c.uid(65534).gid(65534);
    }
    c.output().unwrap()
}

#[test]
fn help_documents_every_option() {
    for (sub, flags) in [
        (
            "show",
            &["--json", "--path", "--sysfs-root", "--procfs-root"][..],
        ),
        (
            "tune",
            &[
                "--boost",
                "--governor",
                "--epp",
                "--min-freq",
                "--max-freq",
                "--smt",
                "--thp",
                "--thp-defrag",
                "--swappiness",
                "--scheduler",
                "--read-ahead",
                "--path",
                "--state-file",
                "--dry-run",
                "--sysfs-root",
                "--procfs-root",
            ][..],
        ),
        (
            "undo",
            &["--state-file", "--sysfs-root", "--procfs-root"][..],
        ),
    ] {
        let o = run(&["host", sub, "--help"]);
        assert_eq!(o.status.code(), Some(0));
        let h = stdout(&o);
        for f in flags {
            assert!(h.contains(f), "host {sub} --help lacks {f}");
        }
        let lines: Vec<&str> = h.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim_start();
            if t.starts_with("--") || t.starts_with("-h,") {
                // The description follows on the same line (after two spaces) or the next.
                let same = t
                    .split_once("  ")
                    .is_some_and(|(_, d)| !d.trim().is_empty());
                let next = lines.get(i + 1).map(|n| n.trim()).unwrap_or("");
                assert!(
                    same || (!next.is_empty() && !next.starts_with('-')),
                    "undocumented option in host {sub}: {l}"
                );
            }
        }
    }
    let h = stdout(&run(&["host", "--help"]));
    for s in ["show", "tune", "undo"] {
        assert!(h.contains(s), "{h}");
    }
}

#[test]
fn show_names_the_driver_and_warns_per_fixture() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "acpi-boost-on",
            "acpi-cpufreq, boost on (cpufreq/boost)",
            &["governor", "boost-on", "smt-on"],
        ),
        (
            "acpi-boost-off",
            "acpi-cpufreq, boost off (cpufreq/boost)",
            &[],
        ),
        (
            "amd-pstate-epp-active",
            "amd-pstate-epp (amd-pstate active), boost: no control",
            &[
                "governor",
                "boost-uncontrollable",
                "epp",
                "smt-on",
                "pm-daemon",
            ],
        ),
        (
            "amd-pstate-guided",
            "amd-pstate (amd-pstate guided), boost on (cpufreq/boost)",
            &["governor", "boost-on", "smt-on"],
        ),
        (
            "amd-pstate-passive",
            "amd-pstate (amd-pstate passive), boost on",
            &["boost-on", "smt-on"],
        ),
        (
            "intel-pstate-active-no-turbo",
            "intel_pstate (intel_pstate active), boost off (intel_pstate/no_turbo)",
            &["governor", "epp", "smt-on", "pm-daemon"],
        ),
        (
            "intel-cpufreq-passive",
            "intel_cpufreq (intel_pstate passive), boost on (intel_pstate/no_turbo)",
            &["governor", "boost-on", "smt-on"],
        ),
        (
            "vm-no-cpufreq",
            "none: no cpufreq policies",
            &["no-cpufreq", "virtual-machine"],
        ),
        ("smt-forceoff", "forceoff (nosmt=force at boot", &[]),
        (
            "thp-always",
            "enabled always, defrag always",
            &["boost-on", "smt-on", "thp-always", "thp-defrag-always"],
        ),
    ];
    for (name, line, warnings) in cases {
        let fx = Fx::new(name);
        let o = fx.run("show", &["--path", "/data/pg"]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", text(&o));
        let s = stdout(&o);
        assert!(s.contains(line), "{name}: no '{line}' in\n{s}");
        let shown: Vec<&str> = s
            .lines()
            .filter_map(|l| l.strip_prefix("  ! "))
            .map(|l| l.split(':').next().unwrap())
            .collect();
        assert_eq!(&shown, warnings, "{name}:\n{s}");
        if warnings.is_empty() {
            assert!(s.contains("No warnings."), "{name}");
        } else {
            assert!(
                s.contains("      why: ") && s.contains("      fix: "),
                "{name}"
            );
        }
        if *name != "vm-no-cpufreq" {
            assert!(s.contains("dm-0 -> nvme1n1p1 -> nvme1n1"), "{name}:\n{s}");
        }
    }
}

#[test]
fn the_amd_pstate_epp_warning_says_how_to_get_boost_control() {
    let s = stdout(&Fx::new("amd-pstate-epp-active").run("show", &[]));
    let w: String = s
        .lines()
        .skip_while(|l| !l.contains("! boost-uncontrollable"))
        .take(3)
        .collect::<Vec<_>>()
        .join("\n");
    for part in [
        "amd-pstate-epp (active mode) on Linux 6.8 offers no boost control",
        "amd_pstate=passive or amd_pstate=guided",
        "amd_pstate=disable to use acpi-cpufreq",
        "Linux 6.11 or newer",
    ] {
        assert!(w.contains(part), "'{part}' missing:\n{w}");
    }
}

#[test]
fn show_json_is_the_fingerprint_with_its_warnings() {
    let v = Fx::new("intel-pstate-active-no-turbo").show_json();
    assert_eq!(v["cpufreq"]["mode"], "intel_pstate active");
    assert_eq!(v["cpufreq"]["intel_pstate"]["no_turbo"], true);
    assert_eq!(v["cpufreq"]["policies"][0]["epp"], "balance_performance");
    assert_eq!(v["kernel"], "6.8.0-45-generic");
    assert_eq!(v["storage"][0]["mount_point"], "/data");
    assert_eq!(v["storage"][0]["devices"][0]["dm_name"], "vg0-data");
    assert_eq!(v["bios"]["product_name"], "PowerEdge R250");
    let ids: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["governor", "epp", "smt-on", "pm-daemon"]);
    for w in v["warnings"].as_array().unwrap() {
        for k in ["message", "why", "fix"] {
            assert!(!w[k].as_str().unwrap().is_empty());
        }
    }
}

#[test]
fn show_on_this_host_never_fails() {
    let o = run(&["host", "show"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(stdout(&o).contains("cpufreq"));
    let o = run(&["host", "show", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["cpufreq"]["mode"].is_string());
}

#[test]
fn tune_and_undo_restore_the_exact_previous_values() {
    for (name, extra) in [
        ("acpi-boost-on", &["--boost", "off"][..]),
        ("intel-cpufreq-passive", &["--boost", "off"][..]),
        (
            "intel-pstate-active-no-turbo",
            &["--boost", "on", "--epp", "balance_power"][..],
        ),
        ("amd-pstate-guided", &["--boost", "off"][..]),
        ("amd-pstate-epp-active", &["--epp", "performance"][..]),
    ] {
        let fx = Fx::new(name);
        let before = fx.show_json();
        let files = snapshot(&fx.sys());
        let mut args = vec![
            "--smt",
            "off",
            "--thp",
            "never",
            "--swappiness",
            "10",
            "--read-ahead",
            "1024",
            "--scheduler",
            "mq-deadline",
            "--path",
            "/data/pg",
            "--max-freq",
            "max",
        ];
        if name != "intel-pstate-active-no-turbo" {
            args.extend(["--governor", "performance"]);
        }
        args.extend(extra);
        let o = fx.run("tune", &args);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", text(&o));
        let out = stdout(&o);
        assert!(out.contains("set smt control: on -> off"), "{name}: {out}");
        assert!(
            out.contains("dbperf host undo puts them back"),
            "{name}: {out}"
        );
        assert!(fx.state().exists());
        let tuned = fx.show_json();
        assert_eq!(tuned["smt"]["control"], "off", "{name}");
        assert_eq!(tuned["thp"]["enabled"], "never");
        assert_eq!(tuned["sysctl"]["swappiness"], 10);
        assert_eq!(
            tuned["storage"][0]["devices"][1]["scheduler"],
            "mq-deadline"
        );

        let o = fx.run("undo", &[]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", text(&o));
        assert!(
            stdout(&o).contains("restored smt control: off -> on"),
            "{}",
            text(&o)
        );
        assert!(!fx.state().exists());
        assert_eq!(before, fx.show_json(), "{name}: host differs after undo");
        for ((p, a), (_, b)) in files.iter().zip(snapshot(&fx.sys())) {
            let name = p.file_name().unwrap().to_string_lossy();
            if name == "enabled" || name == "scheduler" {
                continue; // choice files: compared through show --json above
            }
            assert_eq!(*a, b, "{} not restored byte for byte", p.display());
        }
        // Undo again: nothing saved any more.
        assert_one_sentence(&fx.run("undo", &[]), "nothing to undo");
    }
}

#[test]
fn intel_boost_goes_through_no_turbo() {
    let fx = Fx::new("intel-cpufreq-passive");
    let nt = fx.sys().join("devices/system/cpu/intel_pstate/no_turbo");
    let o = fx.run("tune", &["--boost", "off"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(fs::read_to_string(&nt).unwrap(), "1\n");
    assert!(!fx.sys().join("devices/system/cpu/cpufreq/boost").exists());
    fx.run("undo", &[]);
    assert_eq!(fs::read_to_string(&nt).unwrap(), "0\n");
}

#[test]
fn dry_run_and_no_change_write_nothing() {
    let fx = Fx::new("acpi-boost-on");
    let files = snapshot(&fx.sys());
    let o = fx.run("tune", &["--boost", "off", "--dry-run"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        stdout(&o).contains("would set cpufreq boost: 1 -> 0"),
        "{}",
        text(&o)
    );
    let o = fx.run("tune", &["--governor", "schedutil"]);
    assert!(stdout(&o).contains("nothing to change"), "{}", text(&o));
    assert_eq!(files, snapshot(&fx.sys()));
    assert!(!fx.state().exists());
}

#[test]
fn bad_input_is_one_sentence_and_changes_nothing() {
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "acpi-boost-on",
            &["--governor", "turbo"],
            "the acpi-cpufreq driver offers the governors conservative, ondemand, userspace, powersave, performance, schedutil, not 'turbo'",
        ),
        (
            "amd-pstate-epp-active",
            &["--governor", "performance", "--boost", "off"],
            "amd-pstate-epp (active mode) on Linux 6.8 offers no boost control",
        ),
        (
            "smt-forceoff",
            &["--smt", "on"],
            "SMT was forced off at boot (nosmt=force)",
        ),
        (
            "vm-no-cpufreq",
            &["--governor", "performance"],
            "no CPU frequency control",
        ),
        (
            "acpi-boost-off",
            &["--epp", "performance"],
            "offers no energy_performance_preference",
        ),
        (
            "acpi-boost-off",
            &["--scheduler", "cfq", "--path", "/data/pg"],
            "nvme1n1 offers the I/O schedulers none, mq-deadline, kyber, bfq, not 'cfq'",
        ),
        (
            "acpi-boost-off",
            &["--read-ahead", "64", "--path", "/tmp/x"],
            "no block device",
        ),
        ("acpi-boost-off", &["--swappiness", "300"], "0 to 200"),
        (
            "acpi-boost-off",
            &["--max-freq", "9GHz"],
            "outside the hardware limits",
        ),
        ("acpi-boost-off", &[], "nothing to tune"),
    ];
    for (name, args, expect) in cases {
        let fx = Fx::new(name);
        let files = snapshot(&fx.sys());
        assert_one_sentence(&fx.run("tune", args), expect);
        assert_eq!(files, snapshot(&fx.sys()), "{name} {args:?} changed files");
        assert!(!fx.state().exists(), "{name} {args:?} left a state file");
    }
    let fx = Fx::new("acpi-boost-on");
    assert_one_sentence(&fx.run("undo", &[]), "no saved host settings at");
    assert_one_sentence(
        &run(&["host", "show", "--sysfs-root", "/nonexistent/sys"]),
        "--sysfs-root /nonexistent/sys is not a directory",
    );
    // Unknown settings and values are clap's: exit 2, the first line says what.
    for args in [
        &["host", "tune", "--turbo", "off"][..],
        &["host", "tune", "--boost", "maybe"][..],
        &["host", "tune", "--thp", "sometimes"][..],
        &["host", "tune", "--max-freq", "fast"][..],
        &["host", "reset"][..],
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.starts_with("error:") && !err.contains("panicked"),
            "{err}"
        );
    }
}

#[test]
fn tune_on_a_read_only_tree_changes_nothing() {
    let fx = Fx::new("acpi-boost-on");
    chmod(fx.dir.path(), 0o755);
    each_file(&fx.sys(), &|p| chmod(p, 0o444));
    each_file(&fx.dir.path().join("proc"), &|p| chmod(p, 0o444));
    let state_dir = unprivileged_dir();
    let state = state_dir.path().join("s.json");
    let files = snapshot(&fx.sys());
    let mut args = fx.args("tune", &["--governor", "performance", "--thp", "never"]);
    args[STATE_ARG] = state.display().to_string();
    let o = run_unprivileged(&args);
    assert_one_sentence(&o, "cannot write");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("nothing was changed"),
        "{}",
        text(&o)
    );
    assert_eq!(files, snapshot(&fx.sys()));
    assert!(!state.exists());
}

#[test]
fn a_failing_later_write_puts_the_earlier_ones_back() {
    let fx = Fx::new("amd-pstate-passive");
    chmod(fx.dir.path(), 0o755);
    each_file(&fx.sys(), &|p| chmod(p, 0o666));
    each_file(&fx.dir.path().join("proc"), &|p| chmod(p, 0o666));
    // SMT is written last.
    chmod(&fx.sys().join("devices/system/cpu/smt/control"), 0o444);
    let state_dir = unprivileged_dir();
    let state = state_dir.path().join("s.json");
    let files = snapshot(&fx.sys());
    let swappiness = fs::read_to_string(fx.dir.path().join("proc/sys/vm/swappiness")).unwrap();
    let mut args = fx.args(
        "tune",
        &[
            "--governor",
            "powersave",
            "--boost",
            "off",
            "--swappiness",
            "5",
            "--smt",
            "off",
        ],
    );
    args[STATE_ARG] = state.display().to_string();
    let o = run_unprivileged(&args);
    assert_one_sentence(
        &o,
        "settings already changed were put back, so nothing was changed",
    );
    assert_eq!(files, snapshot(&fx.sys()));
    assert_eq!(
        swappiness,
        fs::read_to_string(fx.dir.path().join("proc/sys/vm/swappiness")).unwrap()
    );
    assert!(!state.exists());
}

#[test]
fn tuning_the_real_sys_needs_root() {
    // Only meaningful when the test can run dbperf without root.
    let thp = Path::new("/sys/kernel/mm/transparent_hugepage/enabled");
    let Some(current) = fs::read_to_string(thp)
        .ok()
        .and_then(|s| Some(s.split('[').nth(1)?.split(']').next()?.to_string()))
    else {
        return;
    };
    let other = if current == "never" {
        "madvise"
    } else {
        "never"
    };
    let state_dir = unprivileged_dir();
    let args: Vec<String> = [
        "host",
        "tune",
        "--thp",
        other,
        "--state-file",
        &state_dir.path().join("s.json").display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let o = run_unprivileged(&args);
    assert_one_sentence(&o, "must run as root");
    assert!(fs::read_to_string(thp)
        .unwrap()
        .contains(&format!("[{current}]")));
    assert_one_sentence(
        &run_unprivileged(&[
            "host".into(),
            "undo".into(),
            "--state-file".into(),
            state_dir.path().join("s.json").display().to_string(),
        ]),
        "nothing to undo",
    );
}

#[test]
fn every_run_stores_the_host_and_what_happened_to_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = run(&[
        "run",
        "--steps",
        "l.i0,l.i1",
        "--rows-l-i0",
        "20k",
        "--rows-l-i1",
        "5k",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("host: ") && err.contains("calibration loop"),
        "{err}"
    );
    let (run_file, _) = read_all(&target_dir(&out, "sqlite.wal-normal"));
    let h = &run_file.host;
    // The same object `host show --json` prints, for the run's data directory.
    assert!(h["cpufreq"]["mode"].is_string(), "{h}");
    assert!(h["warnings"].is_array());
    assert!(h["storage"][0]["path"]
        .as_str()
        .unwrap()
        .ends_with("work/sqlite.wal-normal"));
    let d = &h["during_run"];
    assert!(d["calibration"]["before_ms"].as_f64().unwrap() > 0.0, "{d}");
    assert!(d["changed"].is_array());
    match d["frequency"]["sampled"].as_bool().unwrap() {
        // With cpufreq every step that ran has an entry, even one too short to sample.
        true => assert_eq!(d["frequency"]["steps"].as_array().unwrap().len(), 2, "{d}"),
        false => assert!(d["frequency"]["note"].is_string()),
    }
    // Run-level warnings are sentences; each also went to stderr.
    for w in &run_file.warnings {
        assert!(err.contains(&format!("host warning: {w}")), "{w}");
    }
}

/// Switching the elevator resets the queue depth and drops the old elevator's tunables: tune
/// saves them before the switch and undo puts the elevator back first, then them.
#[test]
fn a_scheduler_change_is_undone_with_the_queue_settings_the_kernel_reset() {
    let fx = Fx::new("vm-no-cpufreq");
    let queue = find_queue(&fx.sys(), "vda");
    let o = fx.run("tune", &["--scheduler", "kyber", "--path", "/"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let state = fs::read_to_string(fx.state()).unwrap();
    for saved in [
        "vda nr_requests",
        "vda iosched/read_expire",
        "vda iosched/fifo_batch",
    ] {
        assert!(state.contains(saved), "{saved} saved: {state}");
    }
    // What the kernel does on the switch.
    fs::write(queue.join("nr_requests"), "256\n").unwrap();
    fs::write(queue.join("iosched/read_expire"), "400\n").unwrap();
    let o = fx.run("undo", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let read = |f: &str| {
        fs::read_to_string(queue.join(f))
            .unwrap()
            .trim()
            .to_string()
    };
    // A fixture's choice file holds what was written (the kernel's would show the choices).
    assert_eq!(read("scheduler"), "mq-deadline");
    assert_eq!(read("nr_requests"), "1023");
    assert_eq!(read("iosched/read_expire"), "500");
    assert_eq!(read("iosched/fifo_batch"), "16");
}

/// The kernel keeps read-ahead in whole pages: a value it cannot hold is refused, not
/// recorded as set while the device holds another.
#[test]
fn a_read_ahead_of_part_of_a_page_is_refused() {
    let fx = Fx::new("vm-no-cpufreq");
    assert_one_sentence(
        &fx.run("tune", &["--read-ahead", "6", "--path", "/"]),
        "not a whole number of pages",
    );
    assert!(!fx.state().exists());
}

/// The guard of a read-ahead or scheduler sweep undoes only block devices' queue settings of
/// this boot: a state file naming anything else (copied in with a result directory, edited)
/// writes nothing; one from before a reboot is dropped, since the reboot reset the devices.
#[test]
fn a_sweeps_guard_writes_only_queue_settings_of_this_boot() {
    let fx = Fx::new("vm-no-cpufreq");
    let swappiness = fx.dir.path().join("proc/sys/vm/swappiness");
    let before = fs::read_to_string(&swappiness).unwrap();
    let o = fx.run(
        "tune",
        &["--swappiness", "7", "--read-ahead", "64", "--path", "/"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let guard = |fx: &Fx| {
        dbperf()
            .args(fx.args("guard", &[]))
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let o = guard(&fx);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("does not set"), "{}", text(&o));
    assert_eq!(fs::read_to_string(&swappiness).unwrap(), "7\n");
    assert!(fx.state().exists(), "left for dbperf host undo");
    // From another boot: nothing is written, the file goes.
    let mut j: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(fx.state()).unwrap()).unwrap();
    j["boot_id"] = "00000000-0000-0000-0000-000000000000".into();
    j["entries"]
        .as_array_mut()
        .unwrap()
        .retain(|e| e["setting"] != "--swappiness");
    fs::write(fx.state(), j.to_string()).unwrap();
    let o = guard(&fx);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!fx.state().exists());
    let ra = find_queue(&fx.sys(), "vda").join("read_ahead_kb");
    assert_eq!(fs::read_to_string(ra).unwrap(), "64\n", "not written");
    fs::write(&swappiness, before).unwrap();
}

/// The queue directory of block device `name` in a fixture tree.
fn find_queue(sys: &Path, name: &str) -> PathBuf {
    fs::canonicalize(sys.join("class/block").join(name))
        .or_else(|_| fs::canonicalize(sys.join("block").join(name)))
        .unwrap()
        .join("queue")
}
