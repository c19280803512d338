//! IO per device: a server whose log lives on a device of its own (a loop device here) has that
//! device counted beside the data's, each shown on its own with what it holds, in the step
//! file and the report.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

/// An ext4 file system on a loop device, mounted in a temporary directory that every user may
/// write (the managed server runs as its own user); unmounted and detached when dropped.
struct LoopMount {
    device: String,
    mount: PathBuf,
    _dir: tempfile::TempDir,
}

impl LoopMount {
    /// None where loop devices cannot be made (not root, or no loop support): skipped locally,
    /// a failure in CI, which runs as root on a machine that has them.
    fn new() -> Option<LoopMount> {
        let made = Self::make();
        if let Err(e) = &made {
            assert!(
                std::env::var_os("CI").is_none(),
                "a loop device is needed in CI: {e}"
            );
            eprintln!("skipping: {e}");
        }
        made.ok()
    }

    fn make() -> Result<LoopMount, String> {
        if unsafe { libc::geteuid() } != 0 {
            return Err("loop devices need root".into());
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let image = dir.path().join("disk.img");
        std::fs::File::create(&image)
            .and_then(|f| f.set_len(512 << 20))
            .map_err(|e| e.to_string())?;
        let sh = |cmd: &mut Command| -> Result<String, String> {
            let o = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
            if !o.status.success() {
                return Err(format!(
                    "{cmd:?}: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                ));
            }
            Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
        };
        let device = sh(Command::new("losetup").args(["-f", "--show"]).arg(&image))?;
        let mount = dir.path().join("mnt");
        let m = LoopMount {
            device: device.clone(),
            mount: mount.clone(),
            _dir: dir,
        };
        std::fs::create_dir(&mount).map_err(|e| e.to_string())?;
        sh(Command::new("mkfs.ext4").args(["-q", &device]))?;
        sh(Command::new("mount").arg(&device).arg(&mount))?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&mount, std::fs::Permissions::from_mode(0o777))
            .map_err(|e| e.to_string())?;
        Ok(m)
    }

    /// The device's name as /proc/diskstats has it (`loop3`).
    fn name(&self) -> String {
        self.device.trim_start_matches("/dev/").to_string()
    }
}

impl Drop for LoopMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mount).status();
        let _ = Command::new("losetup").args(["-d", &self.device]).status();
    }
}

/// Runs l.i0, l.x and l.i1 on `target` from a dbperf.toml holding `toml`, and checks that every
/// step counts the loop device as the log's, apart from the data directory's device, and that
/// the report shows both.
fn log_on_its_own_device(lm: &LoopMount, toml: &str, spec: &str, target: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("dbperf.toml");
    std::fs::write(&cfg, toml).unwrap();
    let out = tmp.path().join("r");
    let o = run(&[
        "run",
        "--config-file",
        cfg.to_str().unwrap(),
        "--target",
        spec,
        "--steps",
        "l.i0,l.x,l.i1",
        "--rows-l-i0",
        "20k",
        "--out",
        out.to_str().unwrap(),
        "--no-progress",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let dir = target_dir(&out, target);
    let (_, steps) = read_all(&dir);
    assert_eq!(steps.len(), 3);
    let log = lm.name();
    for s in &steps {
        let hw = s.hardware.as_ref().expect("hardware");
        assert!(hw.devices.contains(&log), "{}: {:?}", s.step, hw.devices);
        assert_eq!(hw.per_device.len(), hw.devices.len(), "{}", s.step);
        let l = hw
            .per_device
            .iter()
            .find(|d| d.device == log)
            .expect("the log device");
        use dbperf::results::hardware::DeviceRole;
        assert_eq!(l.holds, [DeviceRole::Log], "{}", s.step);
        // Every step commits: its log is written.
        assert!(
            l.io.writes_per_s > 0.0 && l.io.write_kb_per_s > 0.0,
            "{}: {l:?}",
            s.step
        );
        assert!(l.io.util_pct.is_some() && l.io.aqu_sz.is_some());
        let data: Vec<_> = hw
            .per_device
            .iter()
            .filter(|d| d.holds.contains(&DeviceRole::Data))
            .collect();
        assert!(
            !data.is_empty() && data.iter().all(|d| d.device != log),
            "{}: {:?}",
            s.step,
            hw.per_device
        );
        // The step's IO is the devices' added up.
        let io = hw.io.as_ref().expect("io");
        let sum: f64 = hw.per_device.iter().map(|d| d.io.write_kb_per_s).sum();
        assert!(
            (io.write_kb_per_s - sum).abs() <= 1e-6 * sum.max(1.0),
            "{}: {} vs {sum}",
            s.step,
            io.write_kb_per_s
        );
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for step in ["l.i0", "l.x", "l.i1"] {
        let at = md
            .find(&format!("**{step}: IO per device**"))
            .unwrap_or_else(|| panic!("no device table for {step}"));
        let table = &md[at..at + md[at..].find("\n\n_").unwrap()];
        assert!(
            table.contains(&format!("{target} · {log} (log)")),
            "{table}"
        );
        assert!(table.contains("(data)"), "{table}");
    }
}

#[test]
fn a_mariadb_redo_log_on_its_own_device_is_counted_and_shown_apart() {
    if !mariadb(false) {
        return;
    }
    let Some(lm) = LoopMount::new() else {
        return;
    };
    let redo = lm.mount.join("redo");
    std::fs::create_dir(&redo).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&redo, std::fs::Permissions::from_mode(0o777)).unwrap();
    log_on_its_own_device(
        &lm,
        &format!(
            "[config.redo]\nengine = \"mariadb\"\ntext = \"\"\"\ninnodb_buffer_pool_size = 256M\ninnodb_log_file_size = 64M\ninnodb_log_group_home_dir = {}\n\"\"\"\n",
            redo.display()
        ),
        "mariadb:redo",
        "mariadb.redo",
    );
    // The redo log was made there by the install step, not only looked for by the server.
    assert!(redo.join("ib_logfile0").exists());
}

#[test]
fn a_postgres_wal_on_its_own_device_is_counted_and_shown_apart() {
    if !postgres() {
        return;
    }
    let Some(lm) = LoopMount::new() else {
        return;
    };
    let wal = lm.mount.join("wal");
    log_on_its_own_device(
        &lm,
        &format!(
            "[config.wal]\nengine = \"postgres\"\ntext = \"shared_buffers = 128MB\"\ninitdb = [\"--waldir={}\"]\n",
            wal.display()
        ),
        "postgres:wal",
        "postgres.wal",
    );
    assert!(Path::new(&wal).is_dir());
}
