//! Where CPU per operation moved between two steps' profiles. A function's CPU per operation is
//! its share of the samples times the step's CPU per operation of the processes sampled, so a
//! build that does the same work faster is not shown as hotter just because it did more of it
//! per second.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::fold;

/// One step's profile with what is needed to put it per operation.
#[derive(Debug, Clone)]
pub struct Profile {
    pub stacks: Vec<(String, u64)>,
    /// CPU µs per operation of the processes sampled; None when the step did not measure it.
    pub cpu_us_per_op: Option<f64>,
    /// What an operation is (`insert`, `query`, ...).
    pub op: String,
    /// perf's own CPU over the measured time as a share of the host's (0..1), when recorded.
    pub perf_cpu_share: Option<f64>,
    /// Why the profile is partial (perf stopped at its size limit, was killed ...), as the
    /// step file says it.
    pub partial: Option<String>,
}

impl Profile {
    pub fn samples(&self) -> u64 {
        self.stacks.iter().map(|(_, n)| n).sum()
    }
}

/// Reads `steps/<step>.json` and the folded file it names. The error is one sentence.
pub fn load(step_file: &Path) -> Result<Profile, String> {
    // Through the results gate: a step file from a newer dbperf is refused, not misread, and
    // a FIFO, a device or a file over the cap is refused before it is read.
    let v = crate::results::read_checked(step_file).map_err(|e| e.to_string())?;
    let dir = step_file.parent().unwrap_or(Path::new("."));
    from_step(&v, dir).map_err(|e| format!("{}: {e}", step_file.display()))
}

/// The profile of a step file's JSON, its folded file looked for in `dir`.
pub fn from_step(v: &Value, dir: &Path) -> Result<Profile, String> {
    let p = v
        .get("profile")
        .filter(|p| !p.is_null())
        .ok_or("the step has no profile (run with --profile)")?;
    let file = p
        .get("folded_file")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            let why = p.get("error").and_then(Value::as_str).unwrap_or("unknown");
            format!("the step's profile has no folded stacks ({why})")
        })?;
    // Only a file beside the step file: the name comes from a file someone may have edited.
    if !crate::untrusted::plain_name(file) {
        return Err(format!(
            "the folded file name {file:?} is not a plain file name"
        ));
    }
    let stacks = fold::read(&dir.join(file))?;
    let per_op = v.pointer("/hardware/per_op");
    let get = |k: &str| per_op.and_then(|p| p.get(k)).and_then(Value::as_f64);
    let processes = p
        .get("processes")
        .and_then(Value::as_str)
        .unwrap_or("server");
    let cpu_us_per_op = match processes {
        "client" => get("client_cpu_us"),
        "both" => match (get("server_cpu_us"), get("client_cpu_us")) {
            (None, None) => None,
            (s, c) => Some(s.unwrap_or(0.0) + c.unwrap_or(0.0)),
        },
        // An embedded DBMS runs in dbperf: its server profile is dbperf's CPU.
        _ => get("server_cpu_us").or_else(|| get("client_cpu_us")),
    };
    let op = v
        .pointer("/hardware/op")
        .and_then(Value::as_str)
        .unwrap_or("op")
        .to_string();
    Ok(Profile {
        stacks,
        cpu_us_per_op,
        op,
        perf_cpu_share: p.get("perf_cpu_share").and_then(Value::as_f64),
        partial: p.get("error").and_then(Value::as_str).map(str::to_string),
    })
}

/// What the numbers of a comparison are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// CPU µs per operation.
    UsPerOp,
    /// Percent of the samples, when a step did not measure its CPU per operation.
    PctOfSamples,
}

impl Unit {
    pub fn label(self) -> &'static str {
        match self {
            Unit::UsPerOp => "CPU µs/op",
            Unit::PctOfSamples => "% of samples",
        }
    }
}

/// One function in both profiles: `self` is CPU in the function itself (leaf of the stack),
/// `total` with what it called (each stack counted once however often the function recurs).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub function: String,
    pub base_self: f64,
    pub new_self: f64,
    pub base_total: f64,
    pub new_total: f64,
}

impl Row {
    pub fn change_self(&self) -> f64 {
        self.new_self - self.base_self
    }
}

#[derive(Debug, Clone)]
pub struct Diff {
    pub unit: Unit,
    /// Largest change of self CPU first.
    pub rows: Vec<Row>,
}

/// Per function: (self samples, total samples).
fn per_function(stacks: &[(String, u64)]) -> HashMap<&str, (u64, u64)> {
    let mut m: HashMap<&str, (u64, u64)> = HashMap::new();
    let mut seen: Vec<&str> = Vec::new();
    for (stack, n) in stacks {
        seen.clear();
        let frames: Vec<&str> = stack.split(';').collect();
        for f in &frames {
            if !seen.contains(f) {
                seen.push(f);
                m.entry(f).or_default().1 += n;
            }
        }
        if let Some(leaf) = frames.last() {
            m.entry(leaf).or_default().0 += n;
        }
    }
    m
}

/// The scale that turns one profile's samples into the comparison's unit.
fn scales(base: &Profile, new: &Profile) -> (Unit, f64, f64) {
    let per = |p: &Profile, total: f64| -> f64 {
        if total > 0.0 {
            p.cpu_us_per_op.unwrap_or(0.0) / total
        } else {
            0.0
        }
    };
    let (bt, nt) = (base.samples() as f64, new.samples() as f64);
    match (base.cpu_us_per_op, new.cpu_us_per_op) {
        (Some(_), Some(_)) => (Unit::UsPerOp, per(base, bt), per(new, nt)),
        _ => {
            let pct = |t: f64| if t > 0.0 { 100.0 / t } else { 0.0 };
            (Unit::PctOfSamples, pct(bt), pct(nt))
        }
    }
}

/// The `top` functions whose self CPU per operation changed most, largest change first.
pub fn compare(base: &Profile, new: &Profile, top: usize) -> Diff {
    let (unit, bs, ns) = scales(base, new);
    let b = per_function(&base.stacks);
    let n = per_function(&new.stacks);
    let mut names: Vec<&str> = b.keys().chain(n.keys()).copied().collect();
    names.sort_unstable();
    names.dedup();
    let mut rows: Vec<Row> = names
        .into_iter()
        .map(|f| {
            let (b_self, b_total) = b.get(f).copied().unwrap_or_default();
            let (n_self, n_total) = n.get(f).copied().unwrap_or_default();
            Row {
                function: f.to_string(),
                base_self: b_self as f64 * bs,
                new_self: n_self as f64 * ns,
                base_total: b_total as f64 * bs,
                new_total: n_total as f64 * ns,
            }
        })
        .collect();
    rows.sort_by(|x, y| {
        y.change_self()
            .abs()
            .total_cmp(&x.change_self().abs())
            .then_with(|| x.function.cmp(&y.function))
    });
    rows.truncate(top);
    Diff { unit, rows }
}

/// Folded lines with two counts (`stack base new`), both in CPU nanoseconds per operation (or
/// hundredths of a percent of samples), for a differential flame graph: widths are the new
/// build's, colours the change.
pub fn differential_lines(base: &Profile, new: &Profile) -> (Unit, Vec<String>) {
    let (unit, bs, ns) = scales(base, new);
    // µs -> ns, % -> 1/100 %: whole numbers, which flame-graph tools count in.
    let k = match unit {
        Unit::UsPerOp => 1000.0,
        Unit::PctOfSamples => 100.0,
    };
    let mut m: std::collections::BTreeMap<&str, (f64, f64)> = Default::default();
    for (s, c) in &base.stacks {
        m.entry(s).or_default().0 += *c as f64 * bs * k;
    }
    for (s, c) in &new.stacks {
        m.entry(s).or_default().1 += *c as f64 * ns * k;
    }
    let lines = m
        .into_iter()
        .filter_map(|(s, (b, n))| {
            let (b, n) = (b.round() as u64, n.round() as u64);
            (b > 0 || n > 0).then(|| format!("{s} {b} {n}"))
        })
        .collect();
    (unit, lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str, cpu: Option<f64>) -> Profile {
        Profile {
            stacks: fold::parse(text),
            cpu_us_per_op: cpu,
            op: "query".into(),
            perf_cpu_share: None,
            partial: None,
        }
    }

    #[test]
    fn a_faster_build_with_the_same_shares_is_not_hotter() {
        // Same shares; the new build spends half the CPU per op: everything got cheaper.
        let base = p("main;run;malloc 50\nmain;run;parse 50\n", Some(20.0));
        let new = p("main;run;malloc 100\nmain;run;parse 100\n", Some(10.0));
        let d = compare(&base, &new, 10);
        assert_eq!(d.unit, Unit::UsPerOp);
        let malloc = d.rows.iter().find(|r| r.function == "malloc").unwrap();
        assert!((malloc.base_self - 10.0).abs() < 1e-9);
        assert!((malloc.new_self - 5.0).abs() < 1e-9);
        let run = d.rows.iter().find(|r| r.function == "run").unwrap();
        assert!((run.base_total - 20.0).abs() < 1e-9 && run.base_self == 0.0);
    }

    #[test]
    fn the_function_that_grew_comes_first() {
        let base = p("main;run;malloc 10\nmain;run;parse 90\n", Some(10.0));
        let new = p("main;run;malloc 60\nmain;run;parse 90\n", Some(15.0));
        let d = compare(&base, &new, 1);
        assert_eq!(d.rows[0].function, "malloc");
        assert!((d.rows[0].change_self() - 5.0).abs() < 1e-9);
        let (_, lines) = differential_lines(&base, &new);
        assert!(
            lines.contains(&"main;run;malloc 1000 6000".to_string()),
            "{lines:?}"
        );
    }

    #[test]
    fn recursion_counts_once_in_total() {
        let stacks = fold::parse("a;b;a;b 4\n");
        let m = per_function(&stacks);
        assert_eq!(m["a"], (0, 4));
        assert_eq!(m["b"], (4, 4));
    }
}
