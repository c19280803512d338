//! Truth check of dbperf's host figures against the tools performance engineers trust: while an
//! l.i0 step runs on a managed PostgreSQL and MariaDB, `vmstat -n 1` and `iostat -dxk -y 1`
//! record the host; dbperf's per-second samples (`steps/l.i0.host.csv`) must agree with them
//! within 2% over the same interval: CPU us+sy, context switches/s, reads/s, KB read/s,
//! writes/s, KB written/s (docs/fidelity.md says how the intervals are aligned).
//!
//! Alignment: each vmstat/iostat line is stamped with the wall-clock time it was read from the
//! tool's pipe, the end of the second it reports (the tools print as soon as a second ends).
//! The window compared is every whole tool second that lies inside the step, minus the first
//! and last second; dbperf's rows (each stamped with its own end time and length) are summed
//! over exactly that window, a row that straddles an edge counted pro rata.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use common::*;

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// A monitor whose stdout lines are kept with the time each arrived.
struct Monitor {
    child: Child,
    lines: Arc<Mutex<Vec<(f64, String)>>>,
}

fn monitor(program: &str, args: &[&str]) -> Monitor {
    let mut child = Command::new(program)
        .args(args)
        .env("LC_ALL", "C")
        .env("S_COLORS", "never")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    let out = child.stdout.take().unwrap();
    let lines = Arc::new(Mutex::new(Vec::new()));
    let keep = lines.clone();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            keep.lock().unwrap().push((now(), l));
        }
    });
    Monitor { child, lines }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One dbperf per-second row: [end - len, end] and its values by column name.
struct Row {
    end: f64,
    len: f64,
    v: std::collections::HashMap<String, f64>,
}

fn host_rows(csv: &str) -> Vec<Row> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let v = header
                .iter()
                .zip(&f)
                .filter_map(|(h, x)| x.parse::<f64>().ok().map(|x| (h.to_string(), x)))
                .collect::<std::collections::HashMap<_, _>>();
            Row {
                end: v["unix_s"],
                len: v["interval_s"],
                v,
            }
        })
        .collect()
}

/// dbperf's average of a rate column over [a, b]: each row's amount (rate × its length) counted
/// for the part of the row inside the window.
fn dbperf_avg(rows: &[Row], col: &str, a: f64, b: f64) -> f64 {
    let mut amount = 0.0;
    for r in rows {
        let (s, e) = (r.end - r.len, r.end);
        let overlap = (e.min(b) - s.max(a)).max(0.0);
        if overlap > 0.0 {
            amount += r.v.get(col).copied().unwrap_or(0.0) * overlap;
        }
    }
    amount / (b - a)
}

fn close(what: &str, dbperf: f64, tool: f64, floor: f64) {
    let diff = (dbperf - tool).abs();
    // Within 2%; near zero (an idle device), within `floor` in absolute terms instead.
    assert!(
        diff <= 0.02 * tool.abs() || diff <= floor,
        "{what}: dbperf {dbperf:.2} vs tool {tool:.2} ({:+.1}%)",
        (dbperf - tool) / tool.abs().max(1e-9) * 100.0
    );
    eprintln!("{what}: dbperf {dbperf:.2}, tool {tool:.2}");
}

fn check(target: &str, dir_name: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let vm = monitor("vmstat", &["-n", "1"]);
    let io = monitor("iostat", &["-dxk", "-y", "1"]);
    let o = run(&[
        "run",
        "--target",
        target,
        "--steps",
        "l.i0",
        "--rows-l-i0",
        "6M",
        "--out",
        out.to_str().unwrap(),
        "--no-progress",
        "--no-calibration",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let steps = out.join(dir_name).join("steps");
    let rows = host_rows(&std::fs::read_to_string(steps.join("l.i0.host.csv")).unwrap());
    assert!(
        rows.len() >= 8,
        "the step ran {} s: too short to compare",
        rows.len()
    );
    let step_start = rows[0].end - rows[0].len;
    let step_end = rows.last().unwrap().end;
    let (wa, wb) = (step_start + 1.0, step_end - 1.0);
    let step: dbperf::results::StepFile =
        serde_json::from_str(&std::fs::read_to_string(steps.join("l.i0.json")).unwrap()).unwrap();
    let devices = step.hardware.unwrap().devices;

    // vmstat: cs = column 12, us = 13, sy = 14 (1-based).
    let mut cs = Vec::new();
    let mut cpu = Vec::new();
    let (mut a, mut b) = (f64::MAX, f64::MIN);
    for (t, l) in vm.lines.lock().unwrap().iter().skip(1) {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 17 || f[0].parse::<u64>().is_err() || *t - 1.0 < wa || *t > wb {
            continue;
        }
        cs.push(f[11].parse::<f64>().unwrap());
        cpu.push(f[12].parse::<f64>().unwrap() + f[13].parse::<f64>().unwrap());
        a = a.min(t - 1.0);
        b = b.max(*t);
    }
    assert!(
        cs.len() >= 5,
        "only {} vmstat seconds inside the step",
        cs.len()
    );
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    close(
        &format!("{target} context switches/s"),
        dbperf_avg(&rows, "cs_per_s", a, b),
        mean(&cs),
        0.0,
    );
    // vmstat rounds us and sy to whole percents: half a percent each is its own error.
    let dbperf_cpu = dbperf_avg(&rows, "user_pct", a, b) + dbperf_avg(&rows, "system_pct", a, b);
    close(
        &format!("{target} CPU us+sy %"),
        dbperf_cpu,
        mean(&cpu),
        1.0,
    );

    // iostat: find the columns from its header, sum the data devices per second.
    let lines = io.lines.lock().unwrap().clone();
    let header = lines
        .iter()
        .find(|(_, l)| l.starts_with("Device"))
        .expect("iostat header")
        .1
        .clone();
    let col = |name: &str| header.split_whitespace().position(|h| h == name).unwrap();
    let cols = [col("r/s"), col("rkB/s"), col("w/s"), col("wkB/s")];
    let mut per_second: std::collections::BTreeMap<i64, [f64; 4]> = Default::default();
    let (mut ia, mut ib) = (f64::MAX, f64::MIN);
    for (t, l) in &lines {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.is_empty() || !devices.iter().any(|d| d == f[0]) || *t - 1.0 < wa || *t > wb {
            continue;
        }
        let e = per_second.entry((*t * 10.0) as i64).or_default();
        for (i, c) in cols.iter().enumerate() {
            e[i] += f[*c].parse::<f64>().unwrap();
        }
        ia = ia.min(t - 1.0);
        ib = ib.max(*t);
    }
    assert!(
        per_second.len() >= 5,
        "only {} iostat seconds",
        per_second.len()
    );
    let n = per_second.len() as f64;
    for (i, (name, dcol, floor)) in [
        ("reads/s", "reads_per_s", 1.0),
        ("KB read/s", "read_kb_per_s", 8.0),
        ("writes/s", "writes_per_s", 1.0),
        ("KB written/s", "write_kb_per_s", 8.0),
    ]
    .iter()
    .enumerate()
    {
        let tool = per_second.values().map(|v| v[i]).sum::<f64>() / n;
        close(
            &format!("{target} {name}"),
            dbperf_avg(&rows, dcol, ia, ib),
            tool,
            *floor,
        );
    }
}

fn tools() -> bool {
    available("procps (vmstat)", "/usr/bin/vmstat")
        && available("sysstat (iostat)", "/usr/bin/iostat")
}

#[test]
fn host_figures_agree_with_vmstat_and_iostat_on_postgres() {
    if !(postgres() && tools()) {
        return;
    }
    check("postgres", "postgres.default");
}

#[test]
fn host_figures_agree_with_vmstat_and_iostat_on_mariadb() {
    if !(mariadb(false) && tools()) {
        return;
    }
    check("mariadb", "mariadb.default");
}
