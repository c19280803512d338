//! Truth check of dbperf's host figures against the tools performance engineers trust: while a
//! write step of fixed length (sysbench's insert, 12 s) runs on a managed PostgreSQL and MariaDB,
//! and an l.i1 on a fetched PostgreSQL 18, `vmstat -n 1` and `iostat -dxk -y 1` record the host;
//! dbperf's per-second samples (`steps/<step>.host.csv`) must agree with them
//! within 2% over the same interval: CPU us+sy, context switches/s, reads/s, KB read/s,
//! writes/s, KB written/s (docs/fidelity.md says how the intervals are aligned).
//!
//! Alignment: each vmstat/iostat line is stamped with the wall-clock time it was read from the
//! tool's pipe, the end of the second it reports (the tools print as soon as a second ends).
//! The window compared is whole tool seconds inside the step, minus the first and last second
//! (for the IO columns, its edges placed where the tool's rate was steadiest: `steady_edges`);
//! dbperf's rows (each stamped with its own end time and length) are summed over exactly that
//! window, a row that straddles an edge counted pro rata.
//!
//! The tests take turns (`one_at_a_time`): the tools see the whole device and every CPU, so a
//! second test's server starting beside the compared step (reading its binaries into a cold
//! page cache) puts bursts of reads in the window. Pro rata assumes a straddling row's IO is
//! spread evenly over it; a burst in an edge row breaks that, and on CI's fresh machine such
//! bursts moved reads/s by 13-18% while CPU and context switches agreed within 0.3%.

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

/// Held for the whole of each test, so no other test's processes share the compared window.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    // A failed test poisons the lock; the next test still gets its turn.
    TURN.lock().unwrap_or_else(|p| p.into_inner())
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

/// The first and last tool second of the window compared for one column: in the first third
/// and the last third of the seconds, the boundary where the tool's rate changed least. A dbperf
/// row straddling an edge is counted pro rata, which is exact when its IO is spread evenly over
/// it; a burst in that row (the kernel's writeback, a checkpoint) is not, and on CI's machine one
/// at an edge moved KB written/s by 5% while writes/s agreed within 0.2%.
fn steady_edges(v: &[f64]) -> (usize, usize) {
    let n = v.len();
    let third = (n / 3).max(1);
    // The jump at the boundary before second x.
    let jump = |x: usize| (v[x] - v[x - 1]).abs();
    let j = (1..=third)
        .min_by(|a, b| jump(*a).total_cmp(&jump(*b)))
        .unwrap();
    let k = (n - 1 - third..=n - 2)
        .filter(|k| *k > j)
        .min_by(|a, b| jump(*a + 1).total_cmp(&jump(*b + 1)))
        .unwrap_or(n - 2);
    (j, k)
}

/// The standard error of the mean of `v`'s seconds.
fn standard_error(v: &[f64]) -> f64 {
    let n = v.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (var / n).sqrt()
}

fn close(what: &str, dbperf: f64, tool: f64, floor: f64, tolerance: f64) {
    let diff = (dbperf - tool).abs();
    // Within the tolerance; near zero (an idle device), within `floor` in absolute terms instead.
    assert!(
        diff <= tolerance * tool.abs() || diff <= floor,
        "{what}: dbperf {dbperf:.2} vs tool {tool:.2} ({:+.1}%)",
        (dbperf - tool) / tool.abs().max(1e-9) * 100.0
    );
    eprintln!("{what}: dbperf {dbperf:.2}, tool {tool:.2}");
}

/// One run checked against the tools: the step compared and how the run is asked for.
struct Case<'a> {
    target: &'a str,
    dir_name: &'a str,
    step: &'a str,
    /// Steps and sizes (the compared step must run for ten seconds or more).
    args: &'a [&'a str],
    /// How far dbperf's figures may be from the tools', as a fraction.
    tolerance: f64,
}

/// Runs the case while vmstat and iostat record the host, compares the step's per-second host
/// figures with theirs, and returns the step's file.
fn check(c: Case) -> dbperf::results::StepFile {
    let Case {
        target,
        dir_name,
        step: name,
        args,
        tolerance,
    } = c;
    let _turn = one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let vm = monitor("vmstat", &["-n", "1"]);
    let io = monitor("iostat", &["-dxk", "-y", "1"]);
    let mut a = vec!["run", "--target", target];
    a.extend_from_slice(args);
    a.extend_from_slice(&[
        "--out",
        out.to_str().unwrap(),
        "--no-progress",
        "--no-calibration",
    ]);
    let o = run(&a);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let steps = out.join(dir_name).join("steps");
    let rows = host_rows(&std::fs::read_to_string(steps.join(format!("{name}.host.csv"))).unwrap());
    assert!(
        rows.len() >= 8,
        "the step ran {} s: too short to compare",
        rows.len()
    );
    let step_start = rows[0].end - rows[0].len;
    let step_end = rows.last().unwrap().end;
    let (wa, wb) = (step_start + 1.0, step_end - 1.0);
    let step: dbperf::results::StepFile =
        serde_json::from_str(&std::fs::read_to_string(steps.join(format!("{name}.json"))).unwrap())
            .unwrap();
    let devices = step.hardware.as_ref().unwrap().devices.clone();

    // vmstat: cs = column 12, us = 13, sy = 14 (1-based). Each line covers the time since the
    // line before it, which is a little over its nominal second (vmstat sleeps a second, then
    // reads and prints; longer on a busy host), while its cs column is the count divided by
    // the nominal second (procps: `DSYSv(stat_CTX) / sleep_time`): so counts are summed and
    // divided by the lines' real span. us and sy are shares of each line's own ticks.
    let mut cs = 0.0;
    let mut cpu_time = 0.0;
    let mut lines = 0;
    let (mut a, mut b) = (f64::MAX, f64::MIN);
    let mut prev: Option<f64> = None;
    for (t, l) in vm.lines.lock().unwrap().iter() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 17 || f[0].parse::<u64>().is_err() {
            continue;
        }
        let since = prev.replace(*t);
        let Some(since) = since else {
            // The first data line: the averages since boot.
            continue;
        };
        if since < wa || *t > wb {
            continue;
        }
        cs += f[11].parse::<f64>().unwrap();
        cpu_time += (f[12].parse::<f64>().unwrap() + f[13].parse::<f64>().unwrap()) * (t - since);
        lines += 1;
        a = a.min(since);
        b = b.max(*t);
    }
    assert!(lines >= 5, "only {lines} vmstat seconds inside the step");
    close(
        &format!("{target} context switches/s"),
        dbperf_avg(&rows, "cs_per_s", a, b),
        cs / (b - a),
        0.0,
        tolerance,
    );
    // vmstat rounds us and sy to whole percents: half a percent each is its own error.
    let dbperf_cpu = dbperf_avg(&rows, "user_pct", a, b) + dbperf_avg(&rows, "system_pct", a, b);
    close(
        &format!("{target} CPU us+sy %"),
        dbperf_cpu,
        cpu_time / (b - a),
        1.0,
        tolerance,
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
    let mut per_second: std::collections::BTreeMap<i64, (f64, [f64; 4])> = Default::default();
    for (t, l) in &lines {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.is_empty() || !devices.iter().any(|d| d == f[0]) || *t - 1.0 < wa || *t > wb {
            continue;
        }
        let e = per_second
            .entry((*t * 10.0) as i64)
            .or_insert((*t, [0.0; 4]));
        for (i, c) in cols.iter().enumerate() {
            e.1[i] += f[*c].parse::<f64>().unwrap();
        }
    }
    let seconds: Vec<(f64, [f64; 4])> = per_second.into_values().collect();
    assert!(seconds.len() >= 5, "only {} iostat seconds", seconds.len());
    for (i, &(name, dcol, floor)) in [
        ("reads/s", "reads_per_s", 1.0),
        ("KB read/s", "read_kb_per_s", 8.0),
        ("writes/s", "writes_per_s", 1.0),
        ("KB written/s", "write_kb_per_s", 8.0),
    ]
    .iter()
    .enumerate()
    {
        let v: Vec<f64> = seconds.iter().map(|s| s.1[i]).collect();
        let (j, k) = steady_edges(&v);
        let (a, b) = (seconds[j].0 - 1.0, seconds[k].0);
        let window = &v[j..=k];
        let tool = window.iter().sum::<f64>() / window.len() as f64;
        // Both sample whole seconds, each on its own clock: where the device's traffic comes
        // in bursts (another process reading), the same bursts fall into different seconds,
        // and the two averages differ by about the series' own standard error. Agreement is
        // judged within that noise, so a busy host widens the check only where it is noisy.
        let noise = 2.0 * standard_error(window);
        close(
            &format!("{target} {name}"),
            dbperf_avg(&rows, dcol, a, b),
            tool,
            f64::max(floor, noise),
            tolerance,
        );
    }
    step
}

/// A step of fixed length, so the window compared is a dozen whole seconds on any host, fast or
/// busy: sysbench's oltp_insert for 12 s, one commit per row, so the device sees a steady
/// stream of log writes and syncs beside the CPU's work.
const LOAD: &[&str] = &[
    "--suite",
    "sysbench",
    "--tests",
    "insert",
    "--rows",
    "10000",
    "--warmup-seconds",
    "1",
    "--write-seconds",
    "12",
];
const LOAD_STEP: &str = "insert_range=100";

fn tools() -> bool {
    available("procps (vmstat)", "/usr/bin/vmstat")
        && available("sysstat (iostat)", "/usr/bin/iostat")
}

#[test]
fn host_figures_agree_with_vmstat_and_iostat_on_postgres() {
    if !(postgres() && tools()) {
        return;
    }
    check(Case {
        target: "postgres",
        dir_name: "postgres.default",
        step: LOAD_STEP,
        args: LOAD,
        tolerance: 0.02,
    });
}

#[test]
fn host_figures_agree_with_vmstat_and_iostat_on_mariadb() {
    if !(mariadb(false) && tools()) {
        return;
    }
    check(Case {
        target: "mariadb",
        dir_name: "mariadb.default",
        step: LOAD_STEP,
        args: LOAD,
        tolerance: 0.02,
    });
}

/// PostgreSQL 17 moved the checkpointer's writes to pg_stat_checkpointer and the backends' to
/// pg_stat_io; on a PostgreSQL 18 build (from npm, as `dbperf fetch` gets it) a write step's
/// write amplification still stands on device writes that agree with iostat: the step's host
/// figures agree with iostat within 5% (a step of a dozen seconds), and
/// the write-amplification numerator is those same
/// device bytes over the measured time (within 1% of the per-second samples' sum), over DBMS
/// writes that now include WAL and relation pages counted from the new views.
#[test]
fn postgres_18_write_amplification_stands_on_device_writes_iostat_agrees_with() {
    if !tools() {
        return;
    }
    if Command::new("npm").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "npm is missing: CI must install it (scripts/install-test-deps.sh)"
        );
        eprintln!("skipping: npm is not installed");
        return;
    }
    // The fetch (unpacking a build) must not overlap another test's compared window either.
    let turn = one_at_a_time();
    let cache = fetch_cache();
    let o = run(&[
        "fetch",
        "postgres",
        "18",
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    drop(turn);
    let mut args = LOAD.to_vec();
    args.extend_from_slice(&["--cache-dir", cache.to_str().unwrap()]);
    let step = check(Case {
        target: "postgres@18",
        dir_name: "postgres@18.default",
        step: LOAD_STEP,
        args: &args,
        tolerance: 0.05,
    });
    let hw = step.hardware.as_ref().unwrap();
    let dbms = step.dbms.as_ref().expect("DBMS counters");
    let wa = &dbms.write_amplification;
    let device = wa.device_write_bytes.expect("device bytes");
    let io = hw.io.as_ref().expect("IO figures");
    let from_rates = io.write_kb_per_s * 1024.0 * hw.interval_s;
    assert!(
        (device - from_rates).abs() <= 0.01 * from_rates,
        "device bytes {device} vs the step's write rate over its interval {from_rates}"
    );
    let (log, data) = (wa.log_bytes.unwrap(), wa.data_bytes.unwrap_or(0.0));
    assert!(log > 0.0, "{wa:?}");
    let amp = wa.amplification.unwrap();
    assert!((amp - device / (log + data)).abs() <= 1e-6 * amp, "{wa:?}");
    assert!(
        !wa.notes.iter().any(|n| n.contains("block_size unknown")),
        "{wa:?}"
    );
}

/// cpupq is host CPU per query from /proc/stat, which counts every CPU: a run pinned to one CPU
/// (taskset) must not divide by one CPU's share (the bug this guards against was a factor of the
/// CPU count). Pinned or not, the step records the host's CPU count, and cpupq (the original's
/// formula: cpups/100 x CPUs x 10^6 / op rate) equals the host's busy CPU time per operation
/// counted directly from /proc/stat's jiffies. Comparing the two runs' cpupq with each other
/// would measure the host (a pinned run shares its one CPU with whatever else runs), not the code.
#[test]
fn cpu_per_operation_does_not_depend_on_pinning() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 || Command::new("taskset").arg("-V").output().is_err() {
        eprintln!("skipping: needs taskset and 2 CPUs");
        return;
    }
    let _turn = one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    for pinned in [false, true] {
        let out = tmp.path().join(if pinned { "pinned" } else { "free" });
        let bin = env!("CARGO_BIN_EXE_dbperf");
        let mut c = if pinned {
            let mut c = Command::new("taskset");
            c.args(["-c", "0", bin]);
            c
        } else {
            Command::new(bin)
        };
        let o = c
            .args([
                "run",
                "--steps",
                "l.i0,l.x,l.i1",
                "--rows-l-i1",
                "100k",
                "--no-calibration",
                "--out",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let (_, steps) = read_all(&target_dir(&out, "sqlite.wal-normal"));
        for s in &steps {
            let h = s.hardware.as_ref().unwrap();
            assert_eq!(
                h.cpus, cpus,
                "{}: CPUs are the host's, not the pinned set",
                s.step
            );
            let host = h.host.as_ref().unwrap();
            let cpupq = h.ibench_row.cpupq.unwrap();
            let formula = (host.user_pct + host.system_pct) / 100.0 * cpus as f64 * 1e6
                / (h.op_count / h.interval_s);
            assert!(
                (cpupq - formula).abs() <= 1e-6 * formula,
                "{}: cpupq {cpupq} vs {formula}",
                s.step
            );
            // From the busy jiffies themselves: the same up to the ticks' granularity (100 a
            // second per CPU) and steal time, which cpupq leaves out; far from the factor of
            // the CPU count the bug made. Steps of a second or more only, for the granularity.
            if h.interval_s < 1.0 {
                continue;
            }
            let direct = h.per_op.host_cpu_us.unwrap();
            assert!(
                (cpupq - direct).abs() <= 0.25 * direct,
                "{} (pinned {pinned}): cpupq {cpupq} vs busy CPU per operation {direct}",
                s.step
            );
        }
    }
}
