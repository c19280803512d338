//! Which options a command line gave, as opposed to left at their defaults. clap knows it
//! (`ArgMatches::value_source`); it is kept here, with the group each option is declared in, so
//! a question such as "was an Insert Benchmark flag given with the sysbench suite?" is answered
//! from the declarations in `RunArgs` rather than from a list kept by hand beside them.

use clap::parser::ValueSource;
use clap::{ArgMatches, Command};

/// The options of `dbperf run` given on its command line, in the order they are declared.
#[derive(Debug, Clone, Default)]
pub struct Given {
    options: Vec<GivenOption>,
}

#[derive(Debug, Clone)]
struct GivenOption {
    id: String,
    /// How a person types it: `--rows-l-i0`.
    flag: String,
    /// The groups it is declared in (`ibench`, `sysbench`, `workload`).
    groups: Vec<String>,
}

/// Groups of `dbperf run`'s options, declared on their fields in `RunArgs` and `SysbenchArgs`.
pub const IBENCH: &str = crate::suites::Suite::Ibench.name();
pub const SYSBENCH: &str = crate::suites::Suite::Sysbench.name();
/// Options that say what a suite does (not how the run is organised): a campaign decides them.
pub const WORKLOAD: &str = "workload";

impl Given {
    /// The options `matches` (parsed by `cmd`) took from the command line.
    pub fn of(cmd: &Command, matches: &ArgMatches) -> Given {
        let options = cmd
            .get_arguments()
            .filter(|a| {
                let id = a.get_id().as_str();
                matches.value_source(id) == Some(ValueSource::CommandLine)
            })
            .map(|a| {
                let id = a.get_id().as_str().to_string();
                GivenOption {
                    flag: match a.get_long() {
                        Some(l) => format!("--{l}"),
                        None => id.clone(),
                    },
                    groups: cmd
                        .get_groups()
                        .filter(|g| g.get_args().any(|m| m == a.get_id()))
                        .map(|g| g.get_id().as_str().to_string())
                        .collect(),
                    id,
                }
            })
            .collect();
        Given { options }
    }

    /// Whether the option with this id (the field's name) was given.
    pub fn has(&self, id: &str) -> bool {
        self.options.iter().any(|o| o.id == id)
    }

    /// The first given option declared in `group`, as typed (`--steps`).
    pub fn first_in(&self, group: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|o| o.groups.iter().any(|g| g == group))
            .map(|o| o.flag.as_str())
    }

    /// The first given option neither declared in `group` nor among the ids `allowed`, as
    /// typed.
    pub fn first_outside(&self, group: &str, allowed: &[&str]) -> Option<&str> {
        self.options
            .iter()
            .find(|o| !o.groups.iter().any(|g| g == group) && !allowed.contains(&o.id.as_str()))
            .map(|o| o.flag.as_str())
    }

    /// The first given option whose id is not among `allowed`, as typed.
    pub fn first_other_than(&self, allowed: &[&str]) -> Option<&str> {
        self.options
            .iter()
            .find(|o| !allowed.contains(&o.id.as_str()))
            .map(|o| o.flag.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, ArgAction, ArgGroup};

    fn cmd() -> Command {
        Command::new("t")
            .arg(Arg::new("steps").long("steps"))
            .arg(Arg::new("preset").long("preset").default_value("quick"))
            .arg(Arg::new("keep").long("keep").action(ArgAction::SetTrue))
            .group(ArgGroup::new(IBENCH).args(["steps"]).multiple(true))
    }

    #[test]
    fn defaults_are_not_given_and_groups_are_the_declared_ones() {
        let c = cmd();
        let g = Given::of(&c, &c.clone().get_matches_from(["t", "--keep"]));
        assert!(g.has("keep") && !g.has("preset") && !g.has("steps"));
        assert_eq!(g.first_in(IBENCH), None);
        assert_eq!(g.first_other_than(&["keep"]), None);
        let g = Given::of(
            &c,
            &c.clone()
                .get_matches_from(["t", "--preset=quick", "--steps", "l.i0"]),
        );
        assert!(g.has("preset"), "given, though equal to the default");
        assert_eq!(g.first_in(IBENCH), Some("--steps"));
        assert_eq!(g.first_other_than(&["steps"]), Some("--preset"));
    }
}
