//! `dbperf run --profile`: perf samples the managed server during each step's measured time, and
//! the stacks are folded per step; without perf, a warning and a completed run.

use crate::common;

use std::path::Path;

use common::*;

/// Whether perf can be run here: skipped locally without it, a failure in CI, where
/// scripts/install-test-deps.sh installs linux-perf.
fn perf_works() -> bool {
    let ok = std::process::Command::new("perf")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok || std::env::var_os("CI").is_none(),
        "perf is missing: CI must install linux-perf (scripts/install-test-deps.sh)"
    );
    if !ok {
        eprintln!("skipping: perf is not installed");
    }
    ok
}

/// What a profiled run of one managed server must show.
struct Expect<'a> {
    target: &'a str,
    dir_name: &'a str,
    /// Every stack starts in the server's own process.
    process: &'a str,
    /// The server's entry points, on every step's stacks (one of them).
    entry: &'a [&'a str],
    /// Where the server executes statements, on the busiest step's stacks (one of them).
    executor: &'a [&'a str],
    /// `--profile-scope`: `system` (every CPU, the server's stacks kept when folding; needs
    /// root) or `processes` (perf attached to them).
    scope: &'a str,
}

/// Runs l.i0, l.x and l.i1 with --profile: every measured step has a non-empty folded profile
/// of the server's processes through its entry points, and the report draws each as a flame
/// graph that renders in headless Chromium.
fn profiled_run(e: Expect) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = run(&[
        "run",
        "--target",
        e.target,
        "--steps",
        "l.i0,l.x,l.i1",
        "--rows-l-i0",
        "20k",
        "--profile",
        "--require-profile",
        "--profile-scope",
        e.scope,
        // l.x on 20k rows is a few tens of milliseconds of server CPU: at the default 99 Hz a
        // fast machine takes one sample, whose stack may not reach the server's entry point
        // (Debian's builds unwind through libc without frame pointers).
        "--profile-hz",
        "999",
        "--out",
        out.to_str().unwrap(),
        "--no-progress",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let dir = target_dir(&out, e.dir_name);
    let (_, steps) = read_all(&dir);
    assert_eq!(steps.len(), 3);
    for s in &steps {
        let p = s
            .profile
            .as_ref()
            .expect("a profile record in the step file");
        assert!(p.error.is_none(), "{}: {:?}", s.step, p.error);
        assert!(p.command.contains("perf record") && p.command.contains(" -g "));
        let flag = if e.scope == "system" { " -a " } else { " -p " };
        assert!(p.command.contains(flag), "{}", p.command);
        assert!(!p.pids.is_empty());
        assert_eq!(p.processes, "server");
        // perf's own CPU over the measured time is recorded, and at 999 Hz on two CPUs it is
        // still a small share of the host's (measured: well under 1%).
        let share = p.perf_cpu_share.expect("perf's CPU share");
        assert!(p.perf_cpu_s.unwrap() >= 0.0);
        assert!((0.0..0.1).contains(&share), "{}: perf used {share}", s.step);
        let folded = std::fs::read_to_string(
            dir.join("steps")
                .join(p.folded_file.as_deref().expect("folded")),
        )
        .unwrap();
        let stacks = dbperf::profile::fold::parse(&folded);
        let samples: u64 = stacks.iter().map(|(_, n)| n).sum();
        assert!(samples > 0, "{}: empty profile", s.step);
        assert_eq!(samples, p.samples);
        // Stacks of the server's processes, through its resolved entry points.
        let prefix = format!("{};", e.process);
        assert!(
            stacks.iter().all(|(st, _)| st.starts_with(&prefix)),
            "{}: {folded}",
            s.step
        );
        assert!(
            e.entry.iter().any(|f| folded.contains(f)),
            "{}: none of {:?} in {folded}",
            s.step,
            e.entry
        );
    }
    // The step that did the most work shows where statements execute.
    let i1 = std::fs::read_to_string(dir.join("steps/l.i1.profile.folded")).unwrap();
    assert!(e.executor.iter().any(|f| i1.contains(f)), "{i1}");
    assert!(
        !dir.join("steps/l.i1.perf.data").exists(),
        "perf's file is removed once folded"
    );
    flame_graphs_render(&out.join("report.html"), &steps, e.executor);
}

/// The report holds a flame graph per profiled step; the page and each flame graph (an SVG
/// with inferno's search and zoom script) render in headless Chromium without a console error,
/// and a drawn flame graph names the server's functions.
fn flame_graphs_render(html: &Path, steps: &[dbperf::results::StepFile], names: &[&str]) {
    use base64::Engine;
    let page = std::fs::read_to_string(html).unwrap();
    let marker = r#"<iframe class="flame" "#;
    assert!(
        page.matches(marker).count() >= steps.len(),
        "a flame graph per step"
    );
    let Some(r) = common::chromium::render(html, "") else {
        return;
    };
    assert!(r.console.is_empty(), "console messages: {:#?}", r.console);
    assert!(r.dom.matches(marker).count() >= steps.len());
    // The l.i1 flame graph on its own, as the iframe shows it.
    let svg = page
        .split(marker)
        .skip(1)
        .filter_map(|f| {
            let b64 = f.split("base64,").nth(1)?.split('"').next()?;
            base64::engine::general_purpose::STANDARD.decode(b64).ok()
        })
        .map(|b| String::from_utf8(b).unwrap())
        .find(|svg| names.iter().any(|n| svg.contains(n)))
        .expect("a flame graph naming where statements execute");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("flame.svg");
    std::fs::write(&file, &svg).unwrap();
    let r = common::chromium::render(&file, "").unwrap();
    assert!(r.console.is_empty(), "console messages: {:#?}", r.console);
    assert!(
        r.dom.matches("<rect").count() > 20,
        "{}",
        &r.dom[..2000.min(r.dom.len())]
    );
    assert!(names.iter().any(|n| r.dom.contains(n)));
    // inferno's script ran: it lays the frames out again to the window's width.
    let frames_width = |doc: &str| -> String {
        let at = doc.find(r#"<svg id="frames""#).expect("the frames group");
        let tag = &doc[at..at + doc[at..].find('>').unwrap()];
        tag.split("width=\"")
            .nth(1)
            .unwrap_or_default()
            .split('"')
            .next()
            .unwrap_or_default()
            .to_string()
    };
    assert_ne!(
        frames_width(&r.dom),
        frames_width(&svg),
        "the flame graph's script did not run"
    );
}

#[test]
fn every_measured_step_of_a_postgres_run_has_a_folded_profile_with_server_frames() {
    if !postgres() || !perf_works() {
        return;
    }
    profiled_run(Expect {
        target: "postgres",
        dir_name: "postgres.default",
        process: "postgres",
        entry: &["PostgresMain", "PostmasterMain"],
        executor: &["ExecutorRun", "ExecInsert"],
        // Every CPU sampled (the default as root): only the server's own stacks may remain.
        scope: if unsafe { libc::geteuid() } == 0 {
            "system"
        } else {
            "processes"
        },
    });
}

#[test]
fn every_measured_step_of_a_mariadb_run_has_a_folded_profile_with_server_frames() {
    if !mariadb(false) || !perf_works() {
        return;
    }
    profiled_run(Expect {
        target: "mariadb",
        dir_name: "mariadb.default",
        process: "mariadbd",
        entry: &[
            "do_command",
            "handle_one_connection",
            "do_handle_one_connection",
        ],
        executor: &["mysql_execute_command"],
        scope: "processes",
    });
}

#[test]
fn without_perf_the_run_warns_once_and_completes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let args = [
        "run",
        "--steps",
        "l.i0,l.x",
        "--rows-l-i0",
        "2k",
        "--profile",
        "--out",
        out.to_str().unwrap(),
        "--no-progress",
    ];
    let o = dbperf().env("PATH", &bin).args(args).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let t = text(&o);
    assert_eq!(t.matches("perf is not installed").count(), 1, "{t}");
    let (_, steps) = read_all(&target_dir(&out, "sqlite.wal-normal"));
    assert_eq!(steps.len(), 2);
    assert!(steps.iter().all(|s| s.profile.is_none()));
    // With --require-profile: bad input before anything runs.
    let out2 = tmp.path().join("r2");
    let mut a2 = args.to_vec();
    a2[7] = out2.to_str().unwrap();
    a2.push("--require-profile");
    let o = dbperf().env("PATH", &bin).args(&a2).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!Path::new(&out2).join("sqlite.wal-normal").exists());
}

/// The same SQLite load, once with a sync on every commit (delete-full): the profile diff names
/// the kernel's fsync path among the functions whose CPU per operation grew.
#[test]
fn a_config_made_slower_on_purpose_shows_its_cause_in_the_profile_diff() {
    if !perf_works() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = run(&[
        "run",
        "--target",
        "sqlite:wal-off",
        "--target",
        "sqlite:delete-full",
        "--steps",
        "l.i0",
        "--rows-l-i0",
        "100k",
        "--profile",
        "--profile-hz",
        "999",
        "--require-profile",
        "--out",
        out.to_str().unwrap(),
        "--no-progress",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let step = |t: &str| out.join(t).join("steps/l.i0.json");
    let o = run(&[
        "profile",
        "diff",
        step("sqlite.wal-off").to_str().unwrap(),
        step("sqlite.delete-full").to_str().unwrap(),
        "--top",
        "40",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(t.contains("CPU µs/op"), "{t}");
    let base = dbperf::profile::diff::load(&step("sqlite.wal-off")).unwrap();
    let new = dbperf::profile::diff::load(&step("sqlite.delete-full")).unwrap();
    let mut rows = dbperf::profile::diff::compare(&base, &new, usize::MAX).rows;
    rows.sort_by(|a, b| (b.new_total - b.base_total).total_cmp(&(a.new_total - a.base_total)));
    // 40, as the command above prints: the other profile tests sample servers at the same time.
    let top: Vec<&str> = rows.iter().take(40).map(|r| r.function.as_str()).collect();
    assert!(
        top.iter()
            .any(|f| f.contains("sys_fsync") || f.contains("sys_fdatasync")),
        "no fsync among the 40 functions whose CPU per op grew most: {top:?}\n{t}"
    );
    // The report draws a differential flame graph against the base.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("differential flame graph"),
        "no differential flame graph"
    );
    // Bad input: a step file without a profile.
    let bare = tmp.path().join("bare.json");
    std::fs::write(&bare, r#"{"schema":1,"step":"l.i0"}"#).unwrap();
    let o = run(&[
        "profile",
        "diff",
        bare.to_str().unwrap(),
        bare.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// perf's data per step is capped (`--profile-max-size`): at the cap perf stops sampling, the
/// run goes on, and the step's profile keeps what was sampled and says it is partial.
#[test]
fn a_profile_at_its_size_cap_is_kept_and_marked_partial() {
    if !perf_works() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = run(&[
        "run",
        "--steps",
        "l.i0",
        "--rows-l-i0",
        "2m",
        "--profile",
        "--profile-hz",
        "999",
        "--profile-max-size",
        "200K",
        "--require-profile",
        "--out",
        out.to_str().unwrap(),
        "--no-progress",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let (_, steps) = read_all(&target_dir(&out, "sqlite.wal-normal"));
    let p = steps[0].profile.as_ref().unwrap();
    assert!(p.command.contains("--max-size=200K"), "{}", p.command);
    let e = p.error.as_deref().unwrap_or_default();
    assert!(
        e.contains("size limit"),
        "{e:?} ({} samples in {} s)",
        p.samples,
        steps[0].duration_s
    );
    assert!(p.samples > 0 && p.folded_file.is_some(), "{p:?}");
    // perf's own file is gone once folded.
    let left: Vec<_> = std::fs::read_dir(out.join("sqlite.wal-normal/steps"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".perf.data"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // profile diff says so too.
    let step = out.join("sqlite.wal-normal/steps/l.i0.json");
    let step = step.to_str().unwrap();
    let o = run(&["profile", "diff", step, step]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("The base profile is partial: perf stopped sampling at its size limit"),
        "{t}"
    );
}
