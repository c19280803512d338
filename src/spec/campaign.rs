//! `[campaign.<name>]` in dbperf.toml: targets (a list, or engines x builds x configs), suites,
//! preset with per-suite overrides, repeats, pause and base target, declared once and run with
//! `dbperf run --campaign <name>` (docs/campaigns.md).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::error::bad_input;
use crate::suites::Suite;

/// A `[campaign.<name>]` as written.
#[derive(Debug, Default, Deserialize)]
pub struct CampaignDecl {
    /// Targets by name (declared in [target.*]) or inline (`postgres@16.4:small`).
    pub targets: Option<Vec<String>>,
    /// ... or every combination of these: `<engine>[@<build>][:<config>]`.
    pub engines: Option<Vec<String>>,
    /// Versions (`16.4`) or binaries paths, for `engines`.
    pub builds: Option<Vec<String>>,
    /// Config names, for `engines`.
    pub configs: Option<Vec<String>>,
    /// Registered suites' names; the default suite when absent.
    pub suites: Option<Vec<String>>,
    pub preset: Option<String>,
    pub repeats: Option<u32>,
    /// Seconds between cells.
    pub pause_between: Option<u64>,
    /// The target relative numbers are against.
    pub base: Option<String>,
    /// Host settings swept over: every cell runs at each read-ahead (KB) and scheduler of the
    /// block devices under its data, set before it and put back after.
    pub read_ahead_kb: Option<Vec<u64>>,
    pub io_scheduler: Option<Vec<String>>,
    /// One server setting swept over: `vary = { setting = "innodb_page_size", values = [...] }`.
    pub vary: Option<VaryDecl>,
    /// A memory cap on every managed server of the campaign: `server_memory = "512M"`.
    pub server_memory: Option<String>,
    /// Every other key: a table of `dbperf run` flags for one suite, named as the suite
    /// (`[campaign.<name>.sysbench]`: `tests = "point-query,read-only*"`, `threads = 4`),
    /// checked against the registry by `check_keys` when the file is read (a key that is
    /// neither is refused there, as `deny_unknown_fields` would, which cannot be combined with
    /// this catch-all; its sentence names the campaign and the key, not the line).
    #[serde(flatten)]
    pub rest: toml::Table,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VaryDecl {
    pub setting: String,
    pub values: Vec<String>,
}

/// A campaign as the CLI turns it into a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Campaign {
    pub name: String,
    /// `--target` arguments, in order.
    pub targets: Vec<String>,
    pub suites: Vec<Suite>,
    pub preset: Option<String>,
    pub repeats: u32,
    pub pause_between: Option<u64>,
    pub base: Option<String>,
    /// Per suite: the `dbperf run` arguments its overrides stand for.
    pub args: BTreeMap<Suite, Vec<String>>,
    /// Host settings swept over (checked as `--read-ahead-kb` and `--io-scheduler` are).
    pub read_ahead_kb: Vec<u64>,
    pub io_scheduler: Vec<String>,
    pub vary: Option<super::target::Vary>,
    /// `--server-memory` in bytes.
    pub server_memory: Option<u64>,
}

/// More cells than a campaign of years could run: a declaration past it is a mistake, refused
/// before a plan of that size is built in memory and written to the journal.
pub const MAX_CELLS: usize = 100_000;

impl CampaignDecl {
    /// `--target` arguments, in order: `targets`, or every combination of `engines`, `builds`
    /// and `configs`.
    fn targets(&self, name: &str) -> anyhow::Result<Vec<String>> {
        Ok(match (&self.targets, &self.engines) {
            (Some(t), None) if !t.is_empty() => {
                if self.builds.is_some() || self.configs.is_some() {
                    return bad_input(format!(
                        "campaign {name}: builds and configs go with engines, not with targets"
                    ));
                }
                t.clone()
            }
            (None, Some(engines)) if !engines.is_empty() => {
                let builds = self.builds.clone().unwrap_or_default();
                let configs = self.configs.clone().unwrap_or_default();
                let n = engines.len() as u128
                    * builds.len().max(1) as u128
                    * configs.len().max(1) as u128;
                if n > MAX_CELLS as u128 {
                    return bad_input(format!(
                        "campaign {name}: engines x builds x configs make {n} targets, more than \
                         the {MAX_CELLS} cells a campaign may have"
                    ));
                }
                let mut out = Vec::new();
                for e in engines {
                    for b in opt_list(&builds) {
                        for c in opt_list(&configs) {
                            let mut s = e.clone();
                            if let Some(b) = b {
                                s.push('@');
                                s.push_str(b);
                            }
                            if let Some(c) = c {
                                s.push(':');
                                s.push_str(c);
                            }
                            out.push(s);
                        }
                    }
                }
                out
            }
            _ => {
                return bad_input(format!(
                    "campaign {name} needs targets = [...] or engines = [...] (not both, not empty)"
                ))
            }
        })
    }

    /// Refuses a key that is neither a campaign's nor a suite's table, as the file is read
    /// (every campaign of it, not only the one run: a typo is found before it matters).
    pub fn check_keys(&self, name: &str) -> anyhow::Result<()> {
        self.suite_flags(name).map(|_| ())
    }

    /// Its tables of flags, each under a registered suite's name; any other key is refused.
    fn suite_flags(&self, name: &str) -> anyhow::Result<Vec<(Suite, &toml::Table)>> {
        let mut out = Vec::new();
        for (key, value) in &self.rest {
            let Some(suite) = Suite::parse(key) else {
                return bad_input(format!(
                    "campaign {name}: {} is neither a key of a campaign nor a table of a suite's \
                     flags ([campaign.{name}.<suite>], suites: {}; docs/campaigns.md)",
                    crate::untrusted::shown(key),
                    Suite::names(", ")
                ));
            };
            let toml::Value::Table(t) = value else {
                return bad_input(format!(
                    "campaign {name}: {suite} is a table of the suite's flags, \
                     [campaign.{name}.{suite}], not a value"
                ));
            };
            out.push((suite, t));
        }
        Ok(out)
    }

    /// The suites it runs, by their registered names.
    fn suites(&self, name: &str) -> anyhow::Result<Vec<Suite>> {
        let Some(names) = &self.suites else {
            return Ok(vec![Suite::DEFAULT]);
        };
        if names.is_empty() {
            return bad_input(format!("campaign {name}: suites is empty"));
        }
        names
            .iter()
            .map(|s| match Suite::parse(s) {
                Some(suite) => Ok(suite),
                None => bad_input(format!(
                    "campaign {name}: unknown suite '{s}' ({})",
                    Suite::names(" or ")
                )),
            })
            .collect()
    }
}

impl CampaignDecl {
    pub fn resolve(&self, name: &str) -> anyhow::Result<Campaign> {
        let targets = self.targets(name)?;
        let suites = self.suites(name)?;
        let repeats = self.repeats.unwrap_or(1);
        if repeats == 0 {
            return bad_input(format!("campaign {name}: repeats must be at least 1"));
        }
        let cells = targets.len() as u128 * suites.len() as u128 * u128::from(repeats);
        if cells > MAX_CELLS as u128 {
            return bad_input(format!(
                "campaign {name}: {} targets x {} suites x {repeats} repeats make {cells} cells, \
                 more than the {MAX_CELLS} a campaign may have",
                targets.len(),
                suites.len()
            ));
        }
        if let Some(p) = self.pause_between {
            super::check_seconds(
                &format!("campaign {name}: pause_between ="),
                p,
                super::MAX_WAIT_SECONDS,
            )?;
        }
        let mut args = BTreeMap::new();
        for (suite, table) in self.suite_flags(name)? {
            if !suites.contains(&suite) {
                return bad_input(format!(
                    "campaign {name} has [campaign.{name}.{suite}] but does not run {suite}"
                ));
            }
            args.insert(suite, flags(name, suite, table)?);
        }
        // Lists stay lists from the TOML to the cell: a value is never joined and split again,
        // so one holding a comma is refused instead of becoming two cells.
        let read_ahead_kb = match &self.read_ahead_kb {
            Some(v) => super::kb_list(v)
                .map(|k| k.0)
                .or_else(|e| bad_input(format!("campaign {name}: read_ahead_kb {e}")))?,
            None => Vec::new(),
        };
        let io_scheduler = match &self.io_scheduler {
            Some(v) => super::schedulers(v)
                .map(|s| s.0)
                .or_else(|e| bad_input(format!("campaign {name}: io_scheduler {e}")))?,
            None => Vec::new(),
        };
        let vary = match &self.vary {
            Some(v) => Some(
                super::target::vary(&v.setting, &v.values)
                    .or_else(|e| bad_input(format!("campaign {name}: vary: {e}")))?,
            ),
            None => None,
        };
        let server_memory = match &self.server_memory {
            Some(v) => Some(
                super::parse_server_memory(v)
                    .or_else(|e| bad_input(format!("campaign {name}: server_memory: {e}")))?,
            ),
            None => None,
        };
        Ok(Campaign {
            name: name.to_string(),
            server_memory,
            targets,
            suites,
            preset: self.preset.clone(),
            repeats,
            pause_between: self.pause_between,
            base: self.base.clone(),
            args,
            read_ahead_kb,
            io_scheduler,
            vary,
        })
    }
}

fn opt_list(v: &[String]) -> Vec<Option<&str>> {
    if v.is_empty() {
        vec![None]
    } else {
        v.iter().map(|s| Some(s.as_str())).collect()
    }
}

/// `rows_l_i0 = "1M"` -> `--rows-l-i0 1M`; `true` -> the bare flag; a list -> comma-joined.
fn flags(name: &str, suite: Suite, t: &toml::Table) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    for (k, v) in t {
        // The campaign's own keys (and `dbperf run`'s names for them): a suite's table that
        // set them would be parsed as flags and then ignored, the campaign deciding them.
        if matches!(
            k.as_str(),
            "target"
                | "targets"
                | "engines"
                | "builds"
                | "configs"
                | "suite"
                | "suites"
                | "preset"
                | "out"
                | "repeats"
                | "pause_between"
                | "base"
                | "read_ahead_kb"
                | "io_scheduler"
                | "vary"
                | "server_memory"
        ) {
            return bad_input(format!(
                "campaign {name}: {k} is set for the whole campaign, not in [campaign.{name}.{suite}]"
            ));
        }
        let flag = format!("--{}", k.replace('_', "-"));
        let scalar = |v: &toml::Value| -> Option<String> {
            match v {
                toml::Value::String(s) => Some(s.clone()),
                toml::Value::Integer(i) => Some(i.to_string()),
                toml::Value::Float(f) => Some(f.to_string()),
                _ => None,
            }
        };
        match v {
            toml::Value::Boolean(true) => out.push(flag),
            toml::Value::Boolean(false) => {}
            toml::Value::Array(items) => {
                let parts: Option<Vec<String>> = items.iter().map(scalar).collect();
                // The suite's flag takes the list comma-separated, as on the command line: an
                // item holding a comma would become two.
                if let Some(bad) = parts.iter().flatten().find(|p| p.contains(',')) {
                    return bad_input(format!(
                        "campaign {name}: {k} has the value {}, which holds a comma; each \
                         value of a list is one item",
                        crate::untrusted::shown(bad)
                    ));
                }
                match parts {
                    Some(p) => {
                        out.push(flag);
                        out.push(p.join(","));
                    }
                    None => {
                        return bad_input(format!(
                            "campaign {name}: {k} must be a list of numbers or strings"
                        ))
                    }
                }
            }
            other => match scalar(other) {
                Some(s) => {
                    out.push(flag);
                    out.push(s);
                }
                None => {
                    return bad_input(format!(
                        "campaign {name}: {k} must be a string, number, boolean or list"
                    ))
                }
            },
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(text: &str) -> CampaignDecl {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn engines_builds_and_configs_make_every_combination() {
        let c = decl(
            r#"engines = ["postgres"]
builds = ["15", "16.4"]
configs = ["default", "small"]
repeats = 3
[ibench]
rows_l_i0 = "1M"
rates = [100, 500]
shared_table = true
deletes = "off"
"#,
        )
        .resolve("v")
        .unwrap();
        assert_eq!(
            c.targets,
            [
                "postgres@15:default",
                "postgres@15:small",
                "postgres@16.4:default",
                "postgres@16.4:small"
            ]
        );
        assert_eq!(c.repeats, 3);
        assert_eq!(
            c.args[&Suite::Ibench],
            // In the file's order.
            [
                "--rows-l-i0",
                "1M",
                "--rates",
                "100,500",
                "--shared-table",
                "--deletes",
                "off"
            ]
        );
    }

    #[test]
    fn mistakes_are_one_sentence() {
        for (text, expect) in [
            ("", "needs targets"),
            ("targets = [\"a\"]\nengines = [\"b\"]\n", "needs targets"),
            ("targets = [\"a\"]\nbuilds = [\"1\"]\n", "go with engines"),
            (
                "targets = [\"a\"]\nrepeats = 4294967295\n",
                "more than the 100000",
            ),
            ("targets = [\"a\"]\nsuites = [\"tpce\"]\n", "unknown suite"),
            ("targets = [\"a\"]\nrepeats = 0\n", "at least 1"),
            // A list's value holding the list's comma is refused, never split into more cells.
            (
                "targets = [\"a\"]\nvary = { setting = \"work_mem\", values = [\"4MB,listen_addresses\", \"8MB\"] }\n",
                "\"4MB,listen_addresses\" is not a value",
            ),
            (
                "targets = [\"a\"]\nio_scheduler = [\"none,bfq\", \"kyber\"]\n",
                "io_scheduler has \"none,bfq\", which is not an I/O scheduler",
            ),
            (
                "targets = [\"a\"]\n[ibench]\nrates = [\"100,200\", \"300\"]\n",
                "rates has the value \"100,200\", which holds a comma",
            ),
            (
                "targets = [\"a\"]\n[sysbench]\nthreads = 4\n",
                "does not run sysbench",
            ),
            (
                "targets = [\"a\"]\n[ibench]\npreset = \"x\"\n",
                "whole campaign",
            ),
            // A key no campaign has, a table no suite is named, a suite's flags not a table.
            (
                "targets = [\"a\"]\nrepeat = 3\n",
                "\"repeat\" is neither a key",
            ),
            (
                "targets = [\"a\"]\n[tpce]\nwarehouses = 1\n",
                "\"tpce\" is neither",
            ),
            (
                "targets = [\"a\"]\nsysbench = 3\n",
                "sysbench is a table of the suite's flags",
            ),
        ] {
            let e = decl(text).resolve("c").unwrap_err();
            assert!(crate::error::is_bad_input(&e), "{text}");
            assert!(e.to_string().contains(expect), "{text}: {e}");
        }
        // A few KB of declaration that would expand to 10^9 targets is refused before expanding.
        let many = |p: &str| {
            (0..1000)
                .map(|i| format!("\"{p}{i}\""))
                .collect::<Vec<_>>()
                .join(",")
        };
        let text = format!(
            "engines = [{}]\nbuilds = [{}]\nconfigs = [{}]\n",
            many("e"),
            many("b"),
            many("c")
        );
        let e = decl(&text).resolve("c").unwrap_err();
        assert!(e.to_string().contains("make 1000000000 targets"), "{e}");
    }
}
