//! A result disk (a small tmpfs) that fills up while dbperf runs.

use super::*;

pub fn disk_full(name: &str) -> Row {
    let mut row = Row::new(
        name,
        "exit 1 (not 2); steps written before the disk filled still valid; the second target \
         still runs; the summary names every file not written; no partial file",
        60,
    );
    let mut l = Launch::new();
    let mnt = l.tmp.path().join("out");
    std::fs::create_dir_all(&mnt).unwrap();
    let mounted = std::process::Command::new("mount")
        .args([
            "-t",
            "tmpfs",
            "-o",
            "size=2m",
            "tmpfs",
            mnt.to_str().unwrap(),
        ])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipping {name}: this test cannot mount a tmpfs here (needs root)");
        return row.skip("cannot mount a tmpfs here (needs root)");
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(&self.0)
                .status();
        }
    }
    // Dropped before `l`, whose temporary directory holds the mount point.
    let _unmount = Unmount(mnt.clone());
    let out = mnt.join("r");
    l.out = out.clone();
    let work = l.tmp.path().join("work");
    l.start(&[
        "run",
        "--target",
        "sqlite",
        "--target",
        "sqlite:wal-off",
        "--steps",
        "l.i0,l.x,l.i1",
        "--rows-l-i0",
        "10k",
        "--rows-l-i1",
        "200k",
        "--out",
        out.to_str().unwrap(),
        "--work-dir",
        work.to_str().unwrap(),
        "--no-progress",
    ]);
    let cell = "sqlite.wal-normal";
    if l.wait_for(60, |l| l.step(cell, "l.x").exists()).is_none() {
        let ended = l.end(5);
        row.check(
            false,
            format!("l.x did not end: {}", short(&ended.stderr, 300)),
        );
        return row;
    }
    // Another process fills the disk while l.i1 runs.
    let fault = Instant::now();
    if let Ok(mut f) = File::create(mnt.join("filler")) {
        let block = vec![0u8; 64 * 1024];
        while f.write_all(&block).is_ok() {}
    }
    let ended = l.end(60);
    row.time_to_fail = ended.at.duration_since(fault);
    let not_written: Vec<&str> = ended
        .stdout
        .lines()
        .filter(|l| l.starts_with("NOT WRITTEN: "))
        .collect();
    // The summary table has a line per step of each target that ran.
    let summary = ended
        .stdout
        .lines()
        .any(|l| l.contains("sqlite.wal-off") && l.contains("l.i0"));
    row.observed = format!(
        "{}; summary table printed: {summary}; {} NOT WRITTEN lines, e.g. \"{}\"",
        exit(ended.code),
        not_written.len(),
        short(
            &not_written
                .first()
                .map(|l| l.replace(&*mnt.to_string_lossy(), "<out>"))
                .unwrap_or_default(),
            80
        )
    );
    row.check(ended.code == Some(1), "exit 1");
    row.check(summary, "a summary with both targets");
    row.check(
        not_written
            .iter()
            .any(|l| l.contains("No space left on device")),
        "the summary names what was not written",
    );
    row.check(
        ended.stdout.contains("sqlite.wal-off"),
        "the second target ran",
    );
    let (n, what) = steps_lost(&out, cell, &["l.i0", "l.x"]);
    row.steps_lost = n;
    row.check(what.is_empty(), format!("lost: {what:?}"));
    // No report or result file is left half-written.
    for f in ["report.html", "report.md"] {
        let p = out.join(f);
        let partial = p.exists() && std::fs::metadata(&p).unwrap().len() == 0;
        row.check(!partial, format!("{f} left empty"));
    }
    row.panics = panics(&ended.stderr);
    let (n, what) = processes_left(&[], l.tmp.path());
    row.processes_left = n;
    row.check(what.is_empty(), format!("left: {what:?}"));
    row
}
