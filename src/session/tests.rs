//! The run loop as a test sees it through its events, on the hidden null target (every
//! statement answered at once), so a whole campaign takes milliseconds.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::events::Recorder;
use super::*;
use crate::spec::ibench::IbenchOverrides;
use crate::spec::{self, presets};

fn request(out: &Path, targets: &[&str], rounds: u32) -> Request {
    let overrides = IbenchOverrides {
        rows_l_i0: Some(200),
        steps: Some(vec!["l.i0".into(), "l.x".into()]),
        ..IbenchOverrides::default()
    };
    let params = spec::ibench::ibench_params(&presets::get("quick").unwrap(), &overrides).unwrap();
    let targets = targets
        .iter()
        .map(|t| spec::target::parse(t, &[]).unwrap())
        .collect();
    Request {
        calibrate: false,
        server_start_timeout: Duration::from_secs(10),
        statement_timeout: Duration::from_secs(10),
        ddl_timeout: Duration::from_secs(60),
        rounds,
        ..Request::new(
            vec![Arc::new(IbenchSuite {
                params,
                sweep: false,
            })],
            targets,
            out.to_path_buf(),
        )
    }
}

/// The events of the run that tell its course (notes such as the host line vary by machine).
fn course(r: &Recorder) -> Vec<&str> {
    r.log
        .iter()
        .map(String::as_str)
        .filter(|l| !l.starts_with("note "))
        .collect()
}

#[test]
fn a_campaign_tells_its_plan_then_each_cell_in_rotated_rounds_then_its_steps() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let mut rec = Recorder::default();
    let o = run(request(&out, &["null", "null:sleep-1us"], 2), &mut rec).unwrap();
    assert_eq!(o.exit, Exit::Ok);
    let (a, b) = ("null.instant", "null.sleep-1us");
    let mut want: Vec<String> = vec![
        format!("plan 1 {a}/r1 here=true"),
        format!("plan 2 {b}/r1 here=true"),
        format!("plan 3 {b}/r2 here=true"),
        format!("plan 4 {a}/r2 here=true"),
    ];
    // Round 2 is round 1 rotated: never AAA BBB.
    for (n, t, round) in [(1, a, 1), (2, b, 1), (3, b, 2), (4, a, 2)] {
        want.push(format!("cell {n}/4 {t} round {round}/2"));
        for step in ["l.i0", "l.x"] {
            want.push(format!("step {t} {step}"));
            want.push(format!("end {t} {step} ok"));
        }
        want.push(format!("target {t} ok"));
    }
    assert_eq!(course(&rec), want);
    // Every cell said its steps before they ran, and the step files the events carried are
    // the ones written.
    let begins = rec
        .log
        .iter()
        .filter(|l| l.contains("TargetBegins"))
        .count();
    assert_eq!(begins, 4);
    assert_eq!(rec.steps.len(), 8);
    for (target, s) in &rec.steps {
        let cell = o
            .cells
            .iter()
            .find(|c| c.target == *target && c.steps.iter().any(|x| x == s))
            .expect("the step is in the outcome");
        let on_disk = crate::results::read_step(&out.join(&cell.id), &s.step).unwrap();
        // (Floats other than the rounded ones need not survive JSON to the last bit.)
        assert_eq!(
            (
                &on_disk.started_at,
                on_disk.status,
                &on_disk.headline,
                &on_disk.ops
            ),
            (&s.started_at, s.status, &s.headline, &s.ops)
        );
    }
    // The summary: every cell in the order it ran, each result in plan order.
    let ran: Vec<&str> = o.cells.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ran,
        [
            "null.instant/r1",
            "null.sleep-1us/r1",
            "null.sleep-1us/r2",
            "null.instant/r2"
        ]
    );
    let dirs: Vec<PathBuf> = ran.iter().map(|id| out.join(id)).collect();
    assert_eq!(o.result_dirs, dirs);
}
