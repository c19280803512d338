//! pgbench's parameters from a preset and the flags, validated with errors a user can act on;
//! its script files are read (bounded, no links) and parsed here, so a script dbperf cannot run
//! is refused before anything runs.

use serde::Deserialize;

use super::bounds::DEFAULT_SEED;
use super::presets::{names, of_suite, Listed, Listing};
use crate::error::bad_input;
use crate::suites::Suite;
use crate::workload::pgbench::builtin::Builtin;
use crate::workload::pgbench::{expr::Symbols, init, script, MOST_SCRIPTS};
use crate::workload::pgbench::{PgbenchParams, QueryMode, ScriptSpec, Source};

/// A pgbench preset (presets.toml's `[pgbench.<name>]`).
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PgbenchPreset {
    #[serde(skip_deserializing)]
    pub name: String,
    pub description: String,
    pub scale: u64,
    pub clients: u64,
    pub time_s: u64,
}

impl super::presets::Named for PgbenchPreset {
    fn name(&self) -> &str {
        &self.name
    }
    fn set_name(&mut self, name: String) {
        self.name = name;
    }
}

pub fn presets() -> Vec<PgbenchPreset> {
    of_suite(Suite::Pgbench)
}

/// Flags that override a pgbench preset; `None` keeps the preset's value or the default.
#[derive(Debug, Clone, Default)]
pub struct PgbenchOverrides {
    pub scale: Option<u64>,
    pub clients: Option<Vec<u64>>,
    pub time_s: Option<u64>,
    pub transactions: Option<u64>,
    /// `--builtin NAME[@W]`, in order.
    pub builtins: Vec<String>,
    /// `--file FILE[@W]`, in order.
    pub files: Vec<String>,
    pub query_mode: Option<QueryMode>,
    pub init_steps: Option<String>,
    pub fillfactor: Option<u64>,
    pub init_only: bool,
    pub no_init: bool,
    pub no_vacuum: bool,
    pub rate: Option<f64>,
    pub latency_limit_ms: Option<f64>,
    pub max_tries: Option<u64>,
    pub connect: bool,
    pub seed: Option<u64>,
}

/// A year: longer than any run, short enough that no deadline computed from it overflows.
const MOST_SECONDS: u64 = 366 * 24 * 3600;
const MOST_CLIENTS: u64 = 1024;
/// pgbench's accounts are numbered in a bigint from scale 20,000; beyond this is a typo.
const MOST_SCALE: u64 = 1_000_000;
/// The most a script file may hold.
const MOST_SCRIPT_BYTES: u64 = 1 << 20;

pub fn pgbench_params(preset: &str, o: &PgbenchOverrides) -> anyhow::Result<PgbenchParams> {
    let all = presets();
    let Some(p) = all.iter().find(|p| p.name == preset) else {
        return bad_input(format!(
            "pgbench has no preset {}; it has {}",
            crate::untrusted::shown(preset),
            names(&all)
        ));
    };
    let scale = o.scale.unwrap_or(p.scale);
    if !(1..=MOST_SCALE).contains(&scale) {
        return bad_input(format!("--scale must be between 1 and {MOST_SCALE}"));
    }
    let clients = o.clients.clone().unwrap_or(vec![p.clients]);
    if clients.iter().any(|&c| c > MOST_CLIENTS) {
        return bad_input(format!("--client must be at most {MOST_CLIENTS}"));
    }
    let (time_s, transactions) = duration(p, o)?;
    let init_steps = o.init_steps.clone().unwrap_or_else(|| "dtgvp".into());
    init::steps_of(&init_steps).or_else(bad_input)?;
    let fillfactor = o.fillfactor.unwrap_or(100);
    if !(10..=100).contains(&fillfactor) {
        return bad_input("--fillfactor must be between 10 and 100");
    }
    if o.init_only && o.no_init {
        return bad_input("--init-only and --no-init together leave nothing to run");
    }
    let max_tries = o.max_tries.unwrap_or(1);
    if max_tries == 0 {
        return bad_input("--max-tries must be at least 1");
    }
    let positive = |v: Option<f64>, flag: &str| match v {
        Some(x) if !(x.is_finite() && x > 0.0) => bad_input(format!("{flag} must be above 0")),
        _ => Ok(v),
    };
    Ok(PgbenchParams {
        preset: p.name.clone(),
        scale,
        clients,
        time_s,
        transactions,
        scripts: scripts(o)?,
        query_mode: o.query_mode.unwrap_or(QueryMode::Simple),
        init_steps,
        fillfactor,
        init: !o.no_init,
        run: !o.init_only,
        no_vacuum: o.no_vacuum,
        rate: positive(o.rate, "--rate")?,
        latency_limit_ms: positive(o.latency_limit_ms, "--latency-limit")?,
        max_tries,
        connect: o.connect,
        seed: o.seed.unwrap_or(DEFAULT_SEED),
    })
}

/// -T or -t, not both; the preset's seconds when neither.
fn duration(p: &PgbenchPreset, o: &PgbenchOverrides) -> anyhow::Result<(Option<u64>, Option<u64>)> {
    match (o.time_s, o.transactions) {
        (Some(_), Some(_)) => bad_input("give --time or --transactions, not both"),
        (None, Some(0)) => bad_input("--transactions must be at least 1"),
        (None, Some(t)) => Ok((None, Some(t))),
        (t, None) => {
            let t = t.unwrap_or(p.time_s);
            if !(1..=MOST_SECONDS).contains(&t) {
                return bad_input(format!(
                    "--time must be between 1 and {MOST_SECONDS} (a year)"
                ));
            }
            Ok((Some(t), None))
        }
    }
}

/// `NAME@W` split; the weight 1 when none is given.
fn weighted<'a>(arg: &'a str, flag: &str) -> anyhow::Result<(&'a str, u64)> {
    let Some((name, w)) = arg.rsplit_once('@') else {
        return Ok((arg, 1));
    };
    match w.parse::<u64>() {
        Ok(w) if w <= i32::MAX as u64 => Ok((name, w)),
        _ => bad_input(format!(
            "{flag} {}: the weight after @ must be a whole number",
            crate::untrusted::shown(arg)
        )),
    }
}

/// The scripts: --builtin's then --file's, in order; tpcb-like alone when neither is given.
/// Each is parsed here, so one dbperf cannot run is refused before anything runs.
fn scripts(o: &PgbenchOverrides) -> anyhow::Result<Vec<ScriptSpec>> {
    let mut out = Vec::new();
    for b in &o.builtins {
        let (name, weight) = weighted(b, "--builtin")?;
        let builtin = Builtin::find(name).or_else(|e| bad_input(format!("--builtin: {e}")))?;
        out.push(ScriptSpec {
            source: Source::Builtin(builtin),
            weight,
        });
    }
    for f in &o.files {
        let (path, weight) = weighted(f, "--file")?;
        let text = crate::untrusted::read_text(
            std::path::Path::new(path),
            crate::untrusted::Limit {
                max: MOST_SCRIPT_BYTES,
                what: "a pgbench script",
                links: crate::untrusted::Links::Refuse,
            },
        )?;
        script::parse(path, weight, &text, &mut Symbols::default()).or_else(bad_input)?;
        out.push(ScriptSpec {
            source: Source::File {
                path: path.to_string(),
                text,
            },
            weight,
        });
    }
    if out.is_empty() {
        out.push(ScriptSpec {
            source: Source::Builtin(Builtin::TpcbLike),
            weight: 1,
        });
    }
    if out.len() > MOST_SCRIPTS {
        return bad_input(format!(
            "at most {MOST_SCRIPTS} scripts (--builtin and --file) in one run"
        ));
    }
    if out.iter().map(|s| s.weight).sum::<u64>() == 0 {
        return bad_input("the scripts' weights add up to 0: no script would run");
    }
    Ok(out)
}

/// The presets as `--list-presets` shows them.
pub fn listing() -> Listing {
    Listing {
        header: [
            "pgbench preset",
            "scale",
            "clients",
            "time s",
            "description",
        ]
        .map(String::from)
        .to_vec(),
        rows: presets()
            .into_iter()
            .map(|p| {
                [
                    p.name,
                    p.scale.to_string(),
                    p.clients.to_string(),
                    p.time_s.to_string(),
                    p.description,
                ]
                .into_iter()
                .map(Listed::Text)
                .collect()
            })
            .collect(),
        note: "For --suite pgbench (docs/pgbench.md).\n".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(o: &PgbenchOverrides) -> anyhow::Result<PgbenchParams> {
        pgbench_params("smoke", o)
    }

    #[test]
    fn defaults_are_pgbenchs() {
        let p = params(&PgbenchOverrides::default()).unwrap();
        assert_eq!(
            (p.scale, p.clients.clone(), p.time_s),
            (1, vec![1], Some(5))
        );
        assert_eq!(p.init_steps, "dtgvp");
        assert_eq!(p.scripts[0].source, Source::Builtin(Builtin::TpcbLike));
        assert_eq!(
            (p.query_mode, p.max_tries, p.fillfactor),
            (QueryMode::Simple, 1, 100)
        );
        assert_eq!(p.step_names(), ["init", "run"]);
    }

    #[test]
    fn weights_and_bad_flags_are_read_as_pgbench_reads_them() {
        let o = PgbenchOverrides {
            builtins: vec!["select-only@9".into(), "simple@1".into()],
            ..Default::default()
        };
        let p = params(&o).unwrap();
        assert_eq!(
            p.scripts
                .iter()
                .map(|s| (s.name(), s.weight))
                .collect::<Vec<_>>(),
            [
                ("select-only".to_string(), 9),
                ("simple-update".to_string(), 1)
            ]
        );
        for (o, says) in [
            (
                PgbenchOverrides {
                    builtins: vec!["x@2".into()],
                    ..Default::default()
                },
                "no built-in script",
            ),
            (
                PgbenchOverrides {
                    builtins: vec!["select-only@-1".into()],
                    ..Default::default()
                },
                "whole number",
            ),
            (
                PgbenchOverrides {
                    time_s: Some(1),
                    transactions: Some(1),
                    ..Default::default()
                },
                "not both",
            ),
            (
                PgbenchOverrides {
                    init_steps: Some("dtz".into()),
                    ..Default::default()
                },
                "not an init step",
            ),
            (
                PgbenchOverrides {
                    builtins: vec!["select-only@0".into()],
                    ..Default::default()
                },
                "add up to 0",
            ),
        ] {
            let e = params(&o).unwrap_err();
            assert!(crate::error::is_bad_input(&e), "{e}");
            assert!(e.to_string().contains(says), "{e}");
        }
    }

    #[test]
    fn a_bad_script_file_is_refused_naming_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("bad.sql");
        std::fs::write(&f, "\\set x 1\nSELECT :x;\n\\shell rm -rf /\n").unwrap();
        let o = PgbenchOverrides {
            files: vec![format!("{}@2", f.display())],
            ..Default::default()
        };
        let e = params(&o).unwrap_err();
        assert!(crate::error::is_bad_input(&e), "{e}");
        assert!(
            e.to_string().contains("bad.sql:3: \\shell is refused"),
            "{e}"
        );
        let link = dir.path().join("link.sql");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        let o = PgbenchOverrides {
            files: vec![link.display().to_string()],
            ..Default::default()
        };
        let e = params(&o).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
    }
}
