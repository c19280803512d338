//! `dbperf report` end to end: real SQLite runs of two configs through the dbperf binary, the
//! report in every format checked against the step files, rendered by headless Chromium; a real
//! failed step; hardware-metric columns and sysbench results as the parallel issues will write
//! them; and every kind of bad input.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

use common::chromium::render;
use common::*;
use serde_json::{json, Value};

const NORMAL: &str = "sqlite.wal-normal";
const FULL: &str = "sqlite.wal-full";

struct Shared {
    out: PathBuf,
    output: Output,
}

/// One real run of two SQLite configs, shared by the tests that only read it: six seconds per
/// qr/qp step so the variance figures (five full seconds or more) exist, and l.i1/l.i2 long
/// enough on wal-full (fsync per commit) to have per-second charts.
fn shared() -> &'static Shared {
    static S: OnceLock<Shared> = OnceLock::new();
    S.get_or_init(|| {
        let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
        // Leftovers of earlier test processes (statics are never dropped).
        for e in std::fs::read_dir(tmp).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix("report-") {
                if !Path::new("/proc").join(pid).exists() {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let root = tmp.join(format!("report-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let out = root.join("r");
        let output = run(&[
            "run",
            "--target",
            "sqlite",
            "--target",
            "sqlite:wal-full",
            "--rows-l-i0",
            "30k",
            "--rows-l-i1",
            "30k",
            "--rows-l-i2",
            "10k",
            "--query-seconds",
            "6",
            "--rates",
            "100",
            "--no-progress",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(output.status.code(), Some(0), "{}", text(&output));
        Shared { out, output }
    })
}

fn report(args: &[&str]) -> Output {
    let mut a = vec!["report"];
    a.extend_from_slice(args);
    run(&a)
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn table<'a>(j: &'a Value, id: &str) -> &'a Value {
    j["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("no table {id}"))
}

fn cell<'a>(t: &'a Value, row: &str, column: &str) -> &'a Value {
    let c = t["columns"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["key"] == column)
        .unwrap_or_else(|| panic!("no column {column} in {}", t["id"]));
    let r = t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == row)
        .unwrap_or_else(|| panic!("no row {row} in {}", t["id"]));
    &r["cells"][c]
}

/// Floats that went through JSON twice (step file -> report -> report.json) may differ in the
/// last bit: serde_json's default number parsing is not always correctly rounded.
#[track_caller]
fn close(a: &Value, b: impl Into<f64>) {
    let (a, b) = (a.as_f64().unwrap_or(f64::NAN), b.into());
    assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{a} != {b}");
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn headline(dir: &Path, step: &str) -> f64 {
    read_json(&dir.join("steps").join(format!("{step}.json")))["headline"]["value"]
        .as_f64()
        .unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// A copy of a target's result under another target name.
fn renamed_copy(from: &Path, to: &Path, name: &str) {
    copy_dir(from, to);
    let mut run = read_json(&to.join("run.json"));
    run["target"]["name"] = name.into();
    std::fs::write(to.join("run.json"), run.to_string()).unwrap();
}

fn edit_json(p: &Path, f: impl FnOnce(&mut Value)) {
    let mut v = read_json(p);
    f(&mut v);
    std::fs::write(p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
fn run_ends_with_a_report_of_what_it_ran() {
    let s = shared();
    let stdout = String::from_utf8_lossy(&s.output.stdout);
    let html = s.out.join("report.html");
    assert!(
        stdout.contains(&format!("Report: {}", html.display())),
        "{stdout}"
    );
    let md = std::fs::read_to_string(s.out.join("report.md")).unwrap();
    assert!(md.contains(&format!("| {NORMAL} |")) && md.contains(&format!("| {FULL} |")));
    // Base = the first target run; wal-normal ran first.
    assert!(
        md.contains(&format!("Base of relative values: **{NORMAL}**")),
        "{md}"
    );
    // CPU figures resting on fewer than 100 10 ms ticks are marked rough under the metrics
    // table, and only those: the note follows the ticks the step file records (l.x on 30k
    // rows usually has few; a loaded machine may give it more), not the machine's speed.
    let rough: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("Rough: host CPU ("))
        .collect();
    let step = read_json(&s.out.join(NORMAL).join("steps").join("l.x.json"));
    let ticks = step["hardware"]["host"]["busy_ticks"].as_u64().unwrap();
    let noted = rough
        .iter()
        .any(|l| l.contains(&format!("{NORMAL} l.x")) && l.contains("fewer than 100 clock ticks"));
    assert_eq!(
        noted,
        ticks < 100,
        "l.x had {ticks} ticks; notes: {rough:#?}"
    );
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(html.contains("<svg") && html.contains(r#"id="ibench-tput-rel""#));
    assert_eq!(html.contains("Rough: host CPU ("), !rough.is_empty());
}

#[test]
fn report_of_two_configs_matches_the_step_files_in_every_format() {
    let s = shared();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("rep");
    let (full_dir, normal_dir) = (s.out.join(FULL), s.out.join(NORMAL));
    // wal-full given first: rows follow the order given, not the order the run used.
    let o = report(&[
        full_dir.to_str().unwrap(),
        normal_dir.to_str().unwrap(),
        "--base",
        NORMAL,
        "--out",
        out.to_str().unwrap(),
        "--format",
        "html,md,csv,json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for f in ["report.html", "report.md", "report.csv", "report.json"] {
        assert!(
            String::from_utf8_lossy(&o.stdout).contains(&out.join(f).display().to_string()),
            "{}",
            text(&o)
        );
    }
    let j = read_json(&out.join("report.json"));
    assert_eq!(j["base"], NORMAL);
    let names: Vec<&str> = j["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, [FULL, NORMAL]);

    // Summary: absolute headline per step, relative to the base with 2 decimals.
    let steps = ["l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100"];
    let abs = table(&j, "ibench-tput");
    let rel = table(&j, "ibench-tput-rel");
    assert_eq!(rel["base"], NORMAL);
    let cols: Vec<&str> = abs["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    assert_eq!(cols, steps);
    for step in steps {
        let (f, n) = (headline(&full_dir, step), headline(&normal_dir, step));
        close(&cell(abs, FULL, step)["value"], f);
        close(&cell(abs, NORMAL, step)["value"], n);
        let r = cell(rel, FULL, step);
        close(&r["value"], round2(f / n));
        assert_eq!(r["text"], format!("{:.2}", round2(f / n)));
        // A ratio past a threshold is marked only when its 95% interval is past it too
        // (docs/statistics.md); two SQLite configs' qr/qp can differ by noise alone. One round
        // a side: the interval is of that run's seconds, so a mark is unconfirmed, not a call.
        let noise = r["note"]
            .as_str()
            .is_some_and(|n| n.starts_with("no difference within noise"));
        let want = if noise {
            ""
        } else if round2(f / n) <= 0.95 {
            "unconfirmed_worse"
        } else if round2(f / n) >= 1.05 {
            "unconfirmed_better"
        } else {
            ""
        };
        assert_eq!(r["mark"], want, "{step}");
        assert_eq!(cell(rel, NORMAL, step)["text"], "1.00");
        // Quartile colours on two values: the larger one is green; the smaller is red
        // unless it is at least 80% of the larger. A missed SLA (a busy host's doing) greys a
        // cell instead, by a rule of its own with unit tests (src/report/rules.rs): the two
        // values are compared here only where both targets met theirs.
        let met = |dir: &Path| {
            read_json(&dir.join("steps").join(format!("{step}.json")))["ibench"]["sla"]["met"]
                .as_bool()
                .unwrap_or(true)
        };
        if !(met(&full_dir) && met(&normal_dir)) {
            continue;
        }
        let (hi, lo) = if f >= n {
            (FULL, NORMAL)
        } else {
            (NORMAL, FULL)
        };
        assert_eq!(cell(abs, hi, step)["mark"], "best", "{step}");
        let lo_mark = if f.min(n) >= 0.8 * f.max(n) {
            ""
        } else {
            "worst"
        };
        assert_eq!(cell(abs, lo, step)["mark"], lo_mark, "{step}");
    }

    // SLA: achieved background inserts per qr/qp step, and the target row.
    let sla = table(&j, "ibench-sla");
    for step in ["qr100", "qp100"] {
        let f = read_json(&full_dir.join("steps").join(format!("{step}.json")));
        close(
            &cell(sla, FULL, step)["value"],
            f["ibench"]["sla"]["achieved_rows_per_s"].as_f64().unwrap(),
        );
        close(
            &cell(sla, "target", step)["value"],
            step[2..].parse::<f64>().unwrap(),
        );
    }

    // Per step: metrics (absolute, relative), response-time buckets per operation type summing
    // to 100%, latency percentiles, variance over the full seconds.
    let li1 = read_json(&full_dir.join("steps/l.i1.json"));
    let m = table(&j, "ibench-l-i1-metrics");
    close(
        &cell(m, FULL, "ips")["value"],
        li1["ops"]["insert"]["rows_per_s"].as_f64().unwrap(),
    );
    close(
        &cell(m, FULL, "maxop")["value"],
        li1["ops"]["insert"]["max_ms"].as_f64().unwrap(),
    );
    close(
        &cell(m, FULL, "secs")["value"],
        li1["duration_s"].as_f64().unwrap(),
    );
    // Hardware cost, when this dbperf records it, lands in the original's columns.
    for (field, column) in [("cpupq", "cpupq"), ("wpi", "wpi"), ("dbgb2", "dbgb2")] {
        if let Some(x) = li1["hardware"]["ibench_row"][field].as_f64() {
            close(&cell(m, FULL, column)["value"], x);
        }
    }
    if let Some(x) = li1["hardware"]["per_op"]["client_cpu_us"].as_f64() {
        close(&cell(m, FULL, "client_cpu_us_per_op")["value"], x);
    }
    assert!(table(&j, "ibench-l-i1-metrics-rel")["rows"].is_array());
    for (step, op) in [("l.i1", "delete"), ("qr100", "query"), ("qp100", "insert")] {
        let id = format!("ibench-{}-rt-{op}", step.replace('.', "-"));
        let t = table(&j, &id);
        let sum: f64 = (0..10)
            .map(|c| t["rows"][0]["cells"][c]["value"].as_f64().unwrap())
            .sum();
        assert!((sum - 100.0).abs() < 1e-6, "{id}: {sum}");
        let f = read_json(&full_dir.join("steps").join(format!("{step}.json")));
        let p = table(&j, &format!("ibench-{}-lat-{op}", step.replace('.', "-")));
        close(
            &cell(p, FULL, "p99")["value"],
            f["ops"][op]["latency_us"]["p99"].as_f64().unwrap() / 1000.0,
        );
        close(
            &cell(p, FULL, "count")["value"],
            f["ops"][op]["count"].as_f64().unwrap(),
        );
    }
    let v = table(&j, "ibench-qr100-variance");
    let cv = cell(v, NORMAL, "query_cv")["value"].as_f64().unwrap();
    assert!(cv > 0.0 && cv < 100.0, "{cv}");
    // Recompute it from the series: population sd / mean over the full seconds.
    let csv = std::fs::read_to_string(normal_dir.join("steps/qr100.series.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let qi = header.iter().position(|h| *h == "query_ops_per_s").unwrap();
    let vals: Vec<f64> = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[1] == "1.000")
        .map(|f| f[qi].parse().unwrap())
        .collect();
    let mean = vals.iter().sum::<f64>() / vals.len() as f64;
    let sd = (vals.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / vals.len() as f64).sqrt();
    assert!(
        (cv - sd / mean * 100.0).abs() < 1e-6,
        "{cv} vs {}",
        sd / mean * 100.0
    );

    // Details: versions and configs with their full text.
    let d = table(&j, "targets");
    assert_eq!(cell(d, FULL, "config")["text"], "wal-full");
    assert_eq!(cell(d, NORMAL, "version")["text"], rusqlite::version());

    // Markdown: the same tables, rows in the order given, the base named.
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let (pf, pn) = (
        md.find(&format!("| {FULL} |")).unwrap(),
        md.find(&format!("| {NORMAL} |")).unwrap(),
    );
    assert!(pf < pn, "rows in the order given");
    assert!(md.contains(&format!(
        "**Throughput relative to the base** (base: {NORMAL})"
    )));
    let rel_li0 = round2(headline(&full_dir, "l.i0") / headline(&normal_dir, "l.i0"));
    assert!(md.contains(&format!("| {FULL} | {rel_li0:.2}")), "{md}");
    assert!(md.contains("| target | ≤256µs (%) | ≤1ms (%)"));
    assert!(
        md.contains("| target | l.i0 | l.x | l.i1 |"),
        "ratios have no unit"
    );

    // CSV: one line per cell of every table, and the same numbers.
    let csv = std::fs::read_to_string(out.join("report.csv")).unwrap();
    let cells: usize = j["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["rows"].as_array().unwrap().len() * t["columns"].as_array().unwrap().len())
        .sum();
    assert_eq!(csv.lines().count(), cells + 1);
    assert!(csv.starts_with(
        "table,title,suite,step,op,base,row,target,column,label,unit,value,text,mark,note\n"
    ));
    let line = csv
        .lines()
        .find(|l| l.starts_with("ibench-tput-rel,") && l.contains(&format!(",{FULL},{FULL},l.i0,")))
        .unwrap();
    assert!(
        line.contains(&format!(",{rel_li0},{rel_li0:.2},")),
        "{line}"
    );

    // HTML: self-contained.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for banned in [
        "<script src",
        "<link rel=\"stylesheet\"",
        "@import",
        "url(http",
        "src=\"http",
    ] {
        assert!(!html.contains(banned), "{banned}");
    }
    assert_eq!(
        html.matches("http").count(),
        html.matches("http://www.w3.org/2000/svg").count(),
        "the only URL is the SVG namespace"
    );
}

fn png_size(png: &[u8]) -> (u32, u32) {
    assert_eq!(&png[1..4], b"PNG");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&png[16..20]), be(&png[20..24]))
}

/// The cell texts of a row of a table in a DOM dump: `<tr data-t="N"` in the table with `id`.
fn dom_row(dom: &str, id: &str, t: usize) -> Vec<String> {
    let start = dom
        .find(&format!(r#"id="{id}""#))
        .unwrap_or_else(|| panic!("{id}"));
    let table = &dom[start..start + dom[start..].find("</table>").unwrap()];
    let row = &table[table.find(&format!(r#"<tr data-t="{t}""#)).unwrap()..];
    let row = &row[..row.find("</tr>").unwrap()];
    row.split("<td")
        .skip(1)
        .map(|c| {
            let c = &c[c.find('>').unwrap() + 1..];
            c[..c.find("</td>").unwrap()].to_string()
        })
        .collect()
}

/// The class of each cell of target `t`'s row in table `id` of a rendered page ("" for none).
fn dom_row_classes(dom: &str, id: &str, t: usize) -> Vec<String> {
    let start = dom
        .find(&format!(r#"id="{id}""#))
        .unwrap_or_else(|| panic!("{id}"));
    let table = &dom[start..start + dom[start..].find("</table>").unwrap()];
    let row = &table[table.find(&format!(r#"<tr data-t="{t}""#)).unwrap()..];
    let row = &row[..row.find("</tr>").unwrap()];
    row.split("<td")
        .skip(1)
        .map(|c| {
            let tag = &c[..c.find('>').unwrap()];
            tag.split(r#"class=""#)
                .nth(1)
                .map(|x| x[..x.find('"').unwrap()].to_string())
                .unwrap_or_default()
        })
        .collect()
}

/// Charts the report should draw for a run, from its series files.
fn expected_charts(out: &Path) -> usize {
    let steps = ["l.i0", "l.i1", "l.i2", "qr100", "qp100"];
    steps
        .iter()
        .map(|step| {
            let long_enough = [NORMAL, FULL].iter().any(|t| {
                let csv = std::fs::read_to_string(
                    out.join(t).join("steps").join(format!("{step}.series.csv")),
                )
                .unwrap();
                csv.lines()
                    .skip(1)
                    .filter(|l| l.split(',').nth(1).unwrap().parse::<f64>().unwrap() >= 0.5)
                    .count()
                    >= 2
            });
            let kinds = if step.starts_with('q') {
                3
            } else if *step == "l.i0" {
                1
            } else {
                2
            };
            if long_enough {
                2 * kinds
            } else {
                0
            }
        })
        .sum()
}

#[test]
fn html_renders_in_headless_chromium_and_the_base_can_be_chosen_in_the_page() {
    let s = shared();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("rep");
    let o = report(&[
        s.out.to_str().unwrap(),
        "--base",
        FULL,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let html = out.join("report.html");
    // Targets in run order: 0 = wal-normal, 1 = wal-full (the base); the page opens with
    // wal-normal as the base instead.
    let Some(r) = render(&html, "#base=0") else {
        return;
    };
    assert!(r.console.is_empty(), "console messages: {:#?}", r.console);
    assert_eq!(png_size(&r.png), (1400, 2400));
    assert!(r.png.len() > 20_000, "a screenshot with content");
    assert!(
        r.dom.contains(r#"data-ready="1""#),
        "the page's script ran to its end"
    );
    // Tables and charts are in the rendered document.
    let tables = r.dom.matches("<table").count();
    let svgs = r.dom.matches("<svg").count();
    assert!(tables >= 40, "{tables} tables");
    // Two charts (rate, largest latency) per operation type of every step but l.x that lasted
    // two seconds or more for some target: six per qr/qp step, four for l.i1 and l.i2.
    assert_eq!(svgs, expected_charts(&s.out), "{svgs} charts");
    assert!(
        svgs >= 2 * 6,
        "the two 6-second qr/qp steps alone have six each"
    );
    assert_eq!(
        r.dom.matches("<path").count(),
        2 * svgs,
        "every chart has a line per target"
    );
    // The page recomputed the relative tables against wal-normal.
    let dir_n = s.out.join(NORMAL);
    let dir_f = s.out.join(FULL);
    let base_row = dom_row(&r.dom, "ibench-tput-rel", 0);
    assert!(base_row.iter().all(|c| c == "1.00"), "{base_row:?}");
    let other = dom_row(&r.dom, "ibench-tput-rel", 1);
    let want = round2(headline(&dir_f, "l.i1") / headline(&dir_n, "l.i1"));
    assert_eq!(other[2], format!("{want:.2}"), "{other:?}");
    // Opened without a fragment, the base given on the command line stays.
    let plain = render(&html, "").unwrap();
    assert!(plain.console.is_empty(), "{:#?}", plain.console);
    let other = dom_row(&plain.dom, "ibench-tput-rel", 0);
    let want = round2(headline(&dir_n, "l.i1") / headline(&dir_f, "l.i1"));
    assert_eq!(other[2], format!("{want:.2}"), "{other:?}");
}

#[test]
fn a_failed_step_is_a_gap_and_every_other_step_is_reported() {
    let s = shared();
    // A real failure: max_page_count caps the database, so l.i1 runs out of room (SQLITE_FULL)
    // and qr100 never runs.
    let tmp = tempfile::tempdir().unwrap();
    let failed_out = tmp.path().join("failed");
    let o = run(&[
        "run",
        "--steps",
        "l.i0,l.x,l.i1,qr100",
        "--rows-l-i0",
        "10k",
        "--rows-l-i1",
        "400k",
        "--deletes",
        "off",
        "--pragma",
        "max_page_count=2000",
        "--no-progress",
        "--out",
        failed_out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("Report: "),
        "a failed run still ends with its report: {}",
        text(&o)
    );
    let custom = "sqlite.wal-normal+custom";
    let rep = tmp.path().join("rep");
    let o = report(&[
        s.out.join(NORMAL).to_str().unwrap(),
        failed_out.to_str().unwrap(),
        "--out",
        rep.to_str().unwrap(),
        "--format",
        "json,md",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let j = read_json(&rep.join("report.json"));
    let abs = table(&j, "ibench-tput");
    for step in ["l.i0", "l.x"] {
        assert!(
            cell(abs, custom, step)["value"].as_f64().unwrap() > 0.0,
            "{step}"
        );
    }
    let failed = cell(abs, custom, "l.i1");
    assert_eq!(
        (failed["text"].as_str(), failed["value"].is_null()),
        (Some("failed"), true)
    );
    assert!(
        failed["note"].as_str().unwrap().contains("full"),
        "{failed}"
    );
    let not_run = cell(abs, custom, "qr100");
    assert_eq!(not_run["text"], "—");
    assert!(not_run["note"]
        .as_str()
        .unwrap()
        .contains("stopped at l.i1"));
    assert_eq!(
        cell(abs, custom, "qp100")["text"],
        "—",
        "never planned: a gap, not a zero"
    );
    assert_eq!(
        cell(table(&j, "ibench-tput-rel"), custom, "l.i1")["text"],
        "failed"
    );
    let m = table(&j, "ibench-l-i1-metrics");
    let row = m["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == custom)
        .unwrap();
    assert!(
        row["note"].as_str().unwrap().contains("c1.inserter"),
        "{row}"
    );
    let w = j["warnings"].as_array().unwrap();
    assert!(
        w.iter()
            .any(|w| w.as_str().unwrap().contains("step l.i1 failed")),
        "{w:?}"
    );
    assert!(
        w.iter()
            .any(|w| w.as_str().unwrap().contains("different parameters")),
        "{w:?}"
    );
    let md = std::fs::read_to_string(rep.join("report.md")).unwrap();
    assert!(md.contains("### l.i0") && md.contains("### qp100"));
}

#[test]
fn metric_columns_appear_when_step_files_carry_them() {
    let s = shared();
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    copy_dir(&s.out.join(NORMAL), &a);
    copy_dir(&s.out.join(FULL), &b);
    // a as dbperf writes hardware cost (`hardware`, docs/metrics.md), plus a `metrics` object
    // with a metric this dbperf has never heard of; b only a `metrics` object, without wpi and
    // with rss not measured (null). Server CPU is measured by neither: no column.
    edit_json(&a.join("steps/l.i1.json"), |v| {
        // Only the figures named here: every other one not measured (null).
        let h = &mut v["hardware"];
        for group in ["ibench_row", "per_op", "sysbench_row"] {
            for (k, x) in h[group].as_object_mut().unwrap() {
                if k != "o_s" {
                    *x = Value::Null;
                }
            }
        }
        for (group, k, x) in [
            ("ibench_row", "ips", 1.0),
            ("ibench_row", "cpupq", 40.0),
            ("ibench_row", "wpi", 0.5),
            ("ibench_row", "rss", 0.1),
            ("per_op", "host_cpu_us", 41.0),
            ("per_op", "client_cpu_us", 5.0),
            ("sysbench_row", "cpu_o", 0.01),
            ("sysbench_row", "cs_o", 2.0),
        ] {
            h[group][k] = json!(x);
        }
        h["missing"] = json!(["server CPU: embedded target (the client is the DBMS)"]);
        h["io"] = Value::Null;
        v["metrics"] = json!({"frobs_per_op": 3.0, "counters": {"x": 1}});
    });
    edit_json(&b.join("steps/l.i1.json"), |v| {
        v.as_object_mut().unwrap().remove("hardware");
        v["metrics"] = json!({"cpupq": 50.0, "client_cpu_us_per_op": 5.0, "rss_gb": null,
                              "server_cpu_us_per_op": null});
    });
    // l.i2 with no hardware figures at all (as results from before hardware cost).
    for d in [&a, &b] {
        edit_json(&d.join("steps/l.i2.json"), |v| {
            v.as_object_mut().unwrap().remove("hardware");
        });
    }
    let rep = tmp.path().join("rep");
    let o = report(&[
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        rep.to_str().unwrap(),
        "--format",
        "json,md",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let md = std::fs::read_to_string(rep.join("report.md")).unwrap();
    assert!(
        md.contains("Not measured: server CPU: embedded target (the client is the DBMS) (sqlite.wal-normal)."),
        "{md}"
    );
    let j = read_json(&rep.join("report.json"));
    let m = table(&j, "ibench-l-i1-metrics");
    let keys: Vec<&str> = m["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "ips",
            "wpi",
            "cpupq",
            "client_cpu_us_per_op",
            "rss_gb",
            "frobs_per_op",
            "maxop",
            "ips_p50_interval",
            "ips_p99_interval",
            "secs"
        ]
    );
    let gap = cell(m, FULL, "wpi");
    assert_eq!(
        (gap["text"].as_str(), gap["value"].is_null()),
        (Some("—"), true)
    );
    assert!(
        cell(m, FULL, "rss_gb")["value"].is_null(),
        "null is not measured, not 0"
    );
    let rel = table(&j, "ibench-l-i1-metrics-rel");
    let c = cell(rel, FULL, "cpupq");
    assert_eq!(c["value"].as_f64(), Some(1.25));
    // One round a side has no interval for a figure per operation: unconfirmed, not called.
    assert_eq!(
        c["mark"], "unconfirmed_worse",
        "more CPU per operation is worse"
    );
    assert_eq!(cell(rel, FULL, "client_cpu_us_per_op")["text"], "1.00");
    // Steps without metrics have none of these columns.
    let keys = table(&j, "ibench-l-i2-metrics")["columns"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(keys, 5);
}

/// sysbench results as written some other way than by dbperf (docs/report.md, "sysbench
/// results"): a top-level `group` or none, metrics in a `metrics` object, no `sysbench` object
/// and no hardware. The files follow the result schema (docs/results.md); the golden files of
/// release 3be8b90 give the fields this test is not about.
fn sysbench_target(dir: &Path, name: &str, factor: f64, skip: &[&str]) {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/release-3be8b90/sysbench/sqlite.wal-normal");
    let tests: [(&str, Option<&str>, f64); 8] = [
        ("point-query_range=100", Some("point"), 20_000.0),
        ("points-notcovered-si.pre_range=100", Some("point"), 3_000.0),
        ("range-covered-pk_range=100", Some("range"), 8_000.0),
        ("scan_range=100", None, 400.0),
        ("read-only_range=10", Some("range_agg"), 9_000.0),
        ("read-only-count_range=1000", None, 900.0),
        ("update-index_range=100", Some("write"), 5_000.0),
        ("insert_range=100", Some("write"), 0.0),
    ];
    let planned: Vec<&str> = tests.iter().map(|t| t.0).collect();
    std::fs::create_dir_all(dir.join("steps")).unwrap();
    let mut run = read_json(&golden.join("run.json"));
    run["preset"] = json!("1u.1t");
    run["target"] = json!({"name": name, "engine": "postgres",
        "version": format!("PostgreSQL {name}"), "config_name": "default",
        "config_text": "shared_buffers = 1GB\n"});
    run["parameters"] = json!({"threads": 1, "tables": 1, "rows": 1000000});
    run["steps_planned"] = json!(planned);
    run["host"] = json!({"hostname": "vm"});
    run["started_at"] = json!("2026-01-01T00:00:00Z");
    std::fs::write(dir.join("run.json"), run.to_string()).unwrap();
    let template = read_json(&golden.join("steps/point-query_range=100.json"));
    for (i, (label, group, qps)) in tests.iter().enumerate() {
        if skip.contains(label) {
            continue;
        }
        let mut v = template.clone();
        v["step"] = json!(label);
        v["duration_s"] = json!(300.0);
        v["headline"] =
            json!({"metric": "queries_per_s", "value": qps * factor, "unit": "queries/s"});
        v["metrics"] = json!({"cpu_per_op": 0.001 * (i + 1) as f64 * factor, "cs_per_op": 2.0,
                              "r_per_op": 0.0, "rkb_per_op": 0.0, "wkb_per_op": 1.5});
        for absent in ["sysbench", "hardware", "dbms", "series_file"] {
            v.as_object_mut().unwrap().remove(absent);
        }
        if let Some(g) = group {
            v["group"] = json!(g);
        }
        std::fs::write(
            dir.join("steps").join(format!("{label}.json")),
            v.to_string(),
        )
        .unwrap();
    }
}

#[test]
fn sysbench_results_are_reported_per_group() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    sysbench_target(&root.join("pg16"), "pg16", 1.0, &[]);
    sysbench_target(&root.join("pg17"), "pg17", 0.9, &["scan_range=100"]);
    sysbench_target(&root.join("pg18"), "pg18", 1.2, &[]);
    let rep = root.join("rep");
    let o = report(&[
        root.join("pg16").to_str().unwrap(),
        root.join("pg17").to_str().unwrap(),
        root.join("pg18").to_str().unwrap(),
        "--out",
        rep.to_str().unwrap(),
        "--format",
        "html,md,json",
        "--show-pre",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let j = read_json(&rep.join("report.json"));
    // Without --show-pre the current run order's report leaves the .pre runs out and says so.
    let hidden = root.join("hidden");
    let o = report(&[
        root.join("pg16").to_str().unwrap(),
        "--out",
        hidden.to_str().unwrap(),
        "--format",
        "md,json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let h = read_json(&hidden.join("report.json"));
    assert!(!h.to_string().contains(".pre_range"), "{h}");
    let md = std::fs::read_to_string(hidden.join("report.md")).unwrap();
    assert!(md.contains("`.pre` runs"), "{md}");
    assert!(j.to_string().contains("points-notcovered-si.pre_range=100"));
    let point = table(&j, "sysbench-point-qps-rel");
    assert_eq!(point["base"], "pg16");
    assert_eq!(cell(point, "pg17", "point-query_range=100")["text"], "0.90");
    // One round each and no series: beyond the threshold, unconfirmed.
    assert_eq!(
        cell(point, "pg17", "point-query_range=100")["mark"],
        "unconfirmed_worse"
    );
    assert_eq!(
        cell(point, "pg18", "point-query_range=100")["mark"],
        "unconfirmed_better"
    );
    // scan is in "range" by its name (the result does not say); pg17 has no scan: a gap.
    let range = table(&j, "sysbench-range-qps");
    assert_eq!(cell(range, "pg17", "scan_range=100")["text"], "—");
    close(&cell(range, "pg16", "scan_range=100")["value"], 400.0);
    assert!(table(&j, "sysbench-range-agg-qps")["columns"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["key"] == "read-only-count_range=1000"));
    // insert: 0 QPS for every target -> `1` on the relative table.
    let w = table(&j, "sysbench-write-qps-rel");
    assert_eq!(cell(w, "pg18", "insert_range=100")["text"], "1");
    // Summary statistics over the group's ratios.
    let st = table(&j, "sysbench-write-stats");
    let stat = |k: &str| cell(st, "pg18", k)["value"].as_f64().unwrap();
    assert!((stat("avg") - 1.1).abs() < 1e-9, "(1.2 + 1) / 2");
    assert!((stat("median") - 1.1).abs() < 1e-9);
    assert_eq!((stat("min"), stat("max")), (1.0, 1.2));
    assert!(
        (stat("stddev") - 0.1).abs() < 1e-9,
        "population standard deviation"
    );
    // Metrics per microbenchmark, relative with the 1/inf rules.
    let m = table(&j, "sysbench-m-update-index-range-100-rel");
    assert_eq!(cell(m, "pg18", "cpu_per_op")["text"], "1.20");
    assert_eq!(cell(m, "pg18", "cpu_per_op")["mark"], "unconfirmed_worse");
    assert_eq!(cell(m, "pg18", "r_per_op")["text"], "1", "both 0");
    let cols: Vec<&str> = m["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["label"].as_str().unwrap())
        .collect();
    assert_eq!(cols, ["cpu/o", "cs/o", "r/o", "rKB/o", "wKB/o", "o/s"]);

    let html = std::fs::read_to_string(rep.join("report.html")).unwrap();
    // Bar charts name every microbenchmark in full.
    assert!(html.contains(">points-notcovered-si.pre_range=100</text>"));
    let md = std::fs::read_to_string(rep.join("report.md")).unwrap();
    for g in [
        "Point queries",
        "Range queries without aggregation",
        "Range queries with aggregation",
        "Writes",
    ] {
        assert!(md.contains(&format!("### {g}")), "{g}");
    }
    let Some(r) = render(&rep.join("report.html"), "#base=2") else {
        return;
    };
    assert!(r.console.is_empty(), "{:#?}", r.console);
    assert!(r.dom.contains(r#"data-ready="1""#));
    assert_eq!(r.dom.matches("<svg").count(), 4, "one bar chart per group");
    // Relative to pg18 now: pg16's point-query is 1/1.2, beyond the threshold but with no
    // interval against this base: unconfirmed, never a call.
    let row = dom_row(&r.dom, "sysbench-point-qps-rel", 0);
    assert_eq!(row[0], "0.83");
    let classes = dom_row_classes(&r.dom, "sysbench-point-qps-rel", 0);
    assert_eq!(classes[0], "unconfirmed-worse", "{classes:?}");
    // The statistics follow the chosen base too.
    let st = dom_row(&r.dom, "sysbench-write-stats", 2);
    assert!(st.iter().all(|c| c == "1.00" || c == "0.00"), "{st:?}");
}

#[test]
fn a_run_directory_stands_for_its_targets_in_run_order() {
    let s = shared();
    let tmp = tempfile::tempdir().unwrap();
    let o = report(&[
        s.out.to_str().unwrap(),
        "--out",
        tmp.path().to_str().unwrap(),
        "--format",
        "json",
        "--thresholds",
        "0.5,1.5",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let j = read_json(&tmp.path().join("report.json"));
    assert_eq!(j["targets"][0]["name"], NORMAL);
    assert_eq!(j["targets"][1]["name"], FULL);
    assert_eq!(j["thresholds"], json!({"low": 0.5, "high": 1.5}));
}

fn assert_bad_input(args: &[&str], expect: &str) {
    let o = report(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}\n{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(expect),
        "{args:?}: expected '{expect}' in:\n{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one sentence: {err}");
    assert!(err.starts_with("error: "), "{err}");
}

#[test]
fn bad_input_is_one_sentence_and_exit_2() {
    let s = shared();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("rep");
    let o = out.to_str().unwrap();
    let normal = s.out.join(NORMAL);
    let n = normal.to_str().unwrap();
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    assert_bad_input(
        &[empty.to_str().unwrap(), "--out", o],
        "is not a dbperf result directory",
    );
    assert_bad_input(&["/nonexistent/results", "--out", o], "does not exist");
    let future = tmp.path().join("future");
    copy_dir(&normal, &future);
    edit_json(&future.join("run.json"), |v| v["schema"] = json!(99));
    assert_bad_input(
        &[future.to_str().unwrap(), "--out", o],
        "newer than this dbperf understands (2); upgrade dbperf",
    );
    let future_step = tmp.path().join("future-step");
    renamed_copy(&normal, &future_step, "other");
    edit_json(&future_step.join("steps/qr100.json"), |v| {
        v["schema"] = json!(3)
    });
    assert_bad_input(
        &[future_step.to_str().unwrap(), "--out", o],
        "result schema 3",
    );
    assert_bad_input(
        &[n, "--base", "sqlite.nope", "--out", o],
        "base sqlite.nope is not among the inputs",
    );
    let twin = tmp.path().join("twin");
    copy_dir(&normal, &twin);
    assert_bad_input(
        &[n, twin.to_str().unwrap(), "--out", o],
        "same target name sqlite.wal-normal",
    );
    assert_bad_input(
        &[n, "--thresholds", "1.05,0.95", "--out", o],
        "--thresholds",
    );
    let pdf = report(&[n, "--format", "pdf", "--out", o]);
    assert_eq!(pdf.status.code(), Some(2), "{}", text(&pdf));
    assert!(String::from_utf8_lossy(&pdf.stderr).starts_with("error: invalid value 'pdf'"));
    let file = tmp.path().join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    assert_bad_input(
        &[n, "--out", file.join("x").to_str().unwrap()],
        "cannot create the report directory",
    );
    assert!(!out.exists(), "nothing written on bad input");
}

#[test]
fn help_documents_every_option() {
    let o = report(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let h = String::from_utf8_lossy(&o.stdout);
    for flag in [
        "RESULT_DIR",
        "--base",
        "--out",
        "--format",
        "--thresholds",
        "--cv-flag",
        "--title",
    ] {
        assert!(h.contains(flag), "help lacks {flag}");
    }
    let top = run(&["--help"]);
    assert!(String::from_utf8_lossy(&top.stdout).contains("report"));
}

/// What a lying server said (its version string, its config as it reported it) and a tampered
/// result file's strings reach every output as text: no escape sequence reaches report.md, the
/// CSV, the terminal or history's text and CSV; report.md and report.html show markup as text;
/// a CSV cell that a spreadsheet would run as a formula is quoted as text.
#[test]
fn outside_text_is_shown_in_every_output_never_obeyed() {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/release-3be8b90/ibench");
    let dir = tmp.path().join("lying");
    copy_dir(&src, &dir);
    let evil = "3.54.1\u{1b}[2J\u{1b}]0;pwned\u{7}<script>alert(1)</script>|x\r";
    let formula = "=HYPERLINK(\"http://x\",\"y\")";
    edit_json(&dir.join("sqlite.wal-normal/run.json"), |j| {
        j["target"]["version"] = json!(evil);
        j["target"]["config_name"] = json!(formula);
        j["host"]["hostname"] = json!(evil);
    });
    let out = tmp.path().join("rep");
    let o = report(&[
        dir.to_str().unwrap(),
        "--format",
        "html,md,csv,json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        !o.stdout.contains(&0x1b) && !o.stderr.contains(&0x1b),
        "terminal"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        !md.contains('\u{1b}') && !md.contains('\r') && !md.contains('\u{7}'),
        "md"
    );
    // Outside code blocks (whose text Markdown shows as it is), markup is shown as text.
    let mut fenced = false;
    for line in md.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            assert!(
                !line.contains("<script>"),
                "md shows markup as text: {line}"
            );
        }
    }
    assert!(md.contains("\\u{1b}"), "the escape is shown: {md}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(!html.contains("<script>alert"), "html");
    let csv = std::fs::read_to_string(out.join("report.csv")).unwrap();
    assert!(!csv.contains('\u{1b}') && !csv.contains('\r'), "csv");
    for line in csv.lines() {
        for field in line.split(',') {
            assert!(
                !field.starts_with('=') && !field.starts_with("\"="),
                "csv: {line}"
            );
        }
    }
    // The JSON keeps the value as it was, escaped as JSON escapes it.
    let json = std::fs::read_to_string(out.join("report.json")).unwrap();
    assert!(!json.contains('\u{1b}'), "json");
    // history: imported, then shown as text and CSV.
    let db = tmp.path().join("h.sqlite");
    let o = dbperf()
        .args(["history", "add", "--db"])
        .arg(&db)
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    for format in ["text", "csv"] {
        let o = dbperf()
            .args(["history", "changes", "--format", format, "--db"])
            .arg(&db)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        assert!(!o.stdout.contains(&0x1b), "history {format}");
    }
}

/// Every string of a result file a tampered copy could hold markup in: each string field of
/// run.json and of every step file gets `<img ...>` appended where the file still reads with it
/// (a field the reader refuses to take that way is left as it was), and neither report.md nor
/// report.html carries the markup raw: not in a table, a note, a heading, nor the blocks of
/// config text, parameters, host and hardware.
#[test]
fn markup_planted_in_every_string_field_is_never_raw_in_a_report() {
    const MARK: &str = "<img src=x onerror=alert(1)>";
    let tmp = tempfile::tempdir().unwrap();
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/release-3be8b90");
    let mut planted = 0;
    let mut inputs = Vec::new();
    for suite in ["ibench", "sysbench"] {
        let dir = tmp.path().join(suite);
        copy_dir(&golden.join(suite), &dir);
        for target in std::fs::read_dir(&dir).unwrap().flatten() {
            let t = target.path();
            planted += plant(&t.join("run.json"), MARK, &|p| {
                dbperf::results::read_run(p.parent().unwrap()).is_ok()
            });
            for step in std::fs::read_dir(t.join("steps")).unwrap().flatten() {
                let p = step.path();
                if p.extension().is_some_and(|e| e == "json") {
                    planted += plant(&p, MARK, &|p| dbperf::results::read_step_file(p).is_ok());
                }
            }
        }
        inputs.push(dir);
    }
    assert!(planted > 200, "only {planted} fields took the markup");
    for dir in &inputs {
        let out = tmp.path().join(format!(
            "rep-{}",
            dir.file_name().unwrap().to_str().unwrap()
        ));
        let o = report(&[
            dir.to_str().unwrap(),
            "--format",
            "html,md",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o));
        for f in ["report.md", "report.html"] {
            let page = std::fs::read_to_string(out.join(f)).unwrap();
            assert!(
                page.contains("&lt;img src=x"),
                "{f} shows the markup as text"
            );
            if let Some(at) = page.find("<img") {
                panic!(
                    "{f} carries markup raw: {}",
                    &page[at.saturating_sub(200)..at + 40]
                );
            }
        }
    }
}

/// Appends `mark` to each string in the JSON file `p` that `reads` still accepts; how many.
fn plant(p: &Path, mark: &str, reads: &dyn Fn(&Path) -> bool) -> usize {
    let original: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let mut paths = Vec::new();
    string_paths(&original, &mut Vec::new(), &mut paths);
    let mut doc = original;
    let mut n = 0;
    for path in paths {
        let before = doc.clone();
        let mut at = &mut doc;
        for k in &path {
            at = match k {
                Key::Field(f) => &mut at[f.as_str()],
                Key::Item(i) => &mut at[*i],
            };
        }
        let s = at.as_str().unwrap().to_string();
        *at = Value::String(format!("{s}{mark}"));
        std::fs::write(p, doc.to_string()).unwrap();
        if reads(p) {
            n += 1;
        } else {
            doc = before;
        }
    }
    std::fs::write(p, doc.to_string()).unwrap();
    n
}

enum Key {
    Field(String),
    Item(usize),
}

fn string_paths(v: &Value, at: &mut Vec<Key>, out: &mut Vec<Vec<Key>>) {
    let copy = |at: &Vec<Key>| -> Vec<Key> {
        at.iter()
            .map(|k| match k {
                Key::Field(f) => Key::Field(f.clone()),
                Key::Item(i) => Key::Item(*i),
            })
            .collect()
    };
    match v {
        Value::String(_) => out.push(copy(at)),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                at.push(Key::Item(i));
                string_paths(x, at, out);
                at.pop();
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                at.push(Key::Field(k.clone()));
                string_paths(x, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}
