//! The options a user adds to sbatch (`--sbatch-arg`), read as sbatch itself reads them, so a
//! refusal cannot be dodged by spelling. sbatch parses its command line with glibc's
//! getopt_long over Slurm's option table (src/common/slurm_opt.c, `slurm_option_table_create`,
//! with "+" at the head of the short options: parsing stops at the first word that is not an
//! option). getopt_long takes:
//!
//! * a long option by its full name or by any abbreviation only it begins (`--arr` is
//!   `--array`); a full name wins over the longer names it begins (`--cluster`, not
//!   `--clusters`); an abbreviation several options begin is an error;
//! * its value as `--opt=value`, or for an option that requires one, the next word whatever it
//!   is (`--partition --array=1` is partition `--array=1`); an optional value only after `=`;
//! * short options bundled (`-Ha1` is `-H -a 1`): a letter that takes a value takes the rest of
//!   the word, or the next word when the rest is empty (only the rest, for an optional value).
//!
//! The words come after dbperf's own options and before its job script, so they must read
//! whole: a last option still waiting for its value would take the script's path, and a word
//! that is no option would become the script (`:` splits a heterogeneous job, `--` ends the
//! options). No crate reproduces these rules (clap's `infer_long_args` and getopts differ on
//! values that begin with `-` and on optional values), and a call into glibc's getopt_long goes
//! through its process-wide state, so the rules are modelled here, in the order glibc applies
//! them; tests/slurm.rs holds the model to the installed sbatch.

/// Whether an option takes a value (getopt_long's `has_arg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HasArg {
    No,
    /// `--opt=value`, `--opt value`, `-xvalue`, `-x value`.
    Required,
    /// `--opt=value` and `-xvalue` only: `--opt value` is the option alone, then `value`.
    Optional,
}

/// What an option would do to what dbperf submits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The user's to choose: where, how long, on whose account the jobs run.
    Free,
    /// dbperf sets it for the array and the report job to be what they must: the array's
    /// shards, the report job waiting for them, the logs, a whole node per task.
    Dbperfs,
    /// sbatch would submit nothing, or not print the job's id and return, which dbperf records
    /// to watch and resubmit the campaign.
    HidesTheJob,
    /// The jobs would go to a cluster dbperf's squeue does not ask about, so a resubmission
    /// could run a shard that still runs there.
    OtherCluster,
}

/// One option of sbatch's table.
#[derive(Debug, PartialEq, Eq)]
pub struct Opt {
    pub name: &'static str,
    pub short: Option<char>,
    pub has_arg: HasArg,
    pub role: Role,
}

const fn o(name: &'static str, short: Option<char>, has_arg: HasArg, role: Role) -> Opt {
    Opt {
        name,
        short,
        has_arg,
        role,
    }
}

use HasArg::{No, Optional, Required};
use Role::{Dbperfs, Free, HidesTheJob, OtherCluster};

/// sbatch's options: every option Slurm 20.11 to 25.11 gives sbatch, taken from slurm_opt.c of
/// each release (an entry with a name and a set function for every command or for sbatch).
/// Knowing a newer option does not change how an older sbatch reads a word: it can only make
/// an abbreviation ambiguous here that an older sbatch resolves, and that is refused. Two
/// options differ across these releases in whether a value is allowed after `=`
/// (`--get-user-env`, `--requeue`); neither ever takes the next word, and they are read as
/// optional. `--tasks-per-node` is `--ntasks-per-node` under another name; no abbreviation
/// begins both.
pub const OPTIONS: &[Opt] = &[
    o("account", Some('A'), Required, Free),
    o("acctg-freq", None, Required, Free),
    o("array", Some('a'), Required, Dbperfs),
    o("autocomplete", None, Required, HidesTheJob),
    o("batch", None, Required, Free),
    o("bb", None, Required, Free),
    o("bbf", None, Required, Free),
    o("begin", Some('b'), Required, Free),
    o("chdir", Some('D'), Required, Free),
    o("cluster", None, Required, OtherCluster),
    o("cluster-constraint", None, Required, Free),
    o("clusters", Some('M'), Required, OtherCluster),
    o("comment", None, Required, Free),
    o("consolidate-segments", None, No, Free),
    o("constraint", Some('C'), Required, Free),
    o("container", None, Required, Free),
    o("container-id", None, Required, Free),
    o("context", None, Required, Free),
    o("contiguous", None, No, Free),
    o("core-spec", Some('S'), Required, Free),
    o("cores-per-socket", None, Required, Free),
    o("cpu-freq", None, Required, Free),
    o("cpus-per-gpu", None, Required, Free),
    o("cpus-per-task", Some('c'), Required, Free),
    o("deadline", None, Required, Free),
    o("delay-boot", None, Required, Free),
    o("dependency", Some('d'), Required, Dbperfs),
    o("distribution", Some('m'), Required, Free),
    o("error", Some('e'), Required, Free),
    o("exclude", Some('x'), Required, Free),
    // dbperf gives every task --exclusive; --exclusive=user would let the campaign's other
    // tasks share its node.
    o("exclusive", None, Optional, Dbperfs),
    o("export", None, Required, Free),
    o("export-file", None, Required, Free),
    o("external", None, No, Free),
    o("extra", None, Required, Free),
    o("extra-node-info", Some('B'), Required, Free),
    o("get-user-env", None, Optional, Free),
    o("gid", None, Required, Free),
    o("gpu-bind", None, Required, Free),
    o("gpu-freq", None, Required, Free),
    o("gpus", Some('G'), Required, Free),
    o("gpus-per-node", None, Required, Free),
    o("gpus-per-socket", None, Required, Free),
    o("gpus-per-task", None, Required, Free),
    o("gres", None, Required, Free),
    o("gres-flags", None, Required, Free),
    o("help", Some('h'), No, HidesTheJob),
    o("hint", None, Required, Free),
    o("hold", Some('H'), No, Free),
    o("ignore-pbs", None, No, Free),
    o("input", Some('i'), Required, Free),
    o("job-name", Some('J'), Required, Dbperfs),
    o("kill-on-invalid-dep", None, Required, Free),
    o("licenses", Some('L'), Required, Free),
    o("mail-type", None, Required, Free),
    o("mail-user", None, Required, Free),
    o("mcs-label", None, Required, Free),
    o("mem", None, Required, Free),
    o("mem-bind", None, Required, Free),
    o("mem-per-cpu", None, Required, Free),
    o("mem-per-gpu", None, Required, Free),
    o("mincpus", None, Required, Free),
    o("network", None, Required, Free),
    o("nice", None, Optional, Free),
    o("no-kill", Some('k'), Optional, Free),
    o("no-requeue", None, No, Free),
    o("nodefile", Some('F'), Required, Free),
    o("nodelist", Some('w'), Required, Free),
    o("nodes", Some('N'), Required, Free),
    o("ntasks", Some('n'), Required, Free),
    o("ntasks-per-core", None, Required, Free),
    o("ntasks-per-gpu", None, Required, Free),
    o("ntasks-per-node", None, Required, Free),
    o("ntasks-per-socket", None, Required, Free),
    o("ntasks-per-tres", None, Required, Free),
    o("oom-kill-step", None, Optional, Free),
    o("open-mode", None, Required, Dbperfs),
    o("output", Some('o'), Required, Dbperfs),
    o("overcommit", Some('O'), No, Free),
    // The opposite of --exclusive: the same setting of the job.
    o("oversubscribe", Some('s'), No, Dbperfs),
    o("parsable", None, No, Dbperfs),
    o("partition", Some('p'), Required, Free),
    o("power", None, Required, Free),
    o("prefer", None, Required, Free),
    o("priority", None, Required, Free),
    o("profile", None, Required, Free),
    o("propagate", None, Optional, Free),
    o("qos", Some('q'), Required, Free),
    // sbatch --quiet prints no job id, --parsable or not.
    o("quiet", Some('Q'), No, HidesTheJob),
    o("reboot", None, No, Free),
    o("requeue", None, Optional, Free),
    o("reservation", None, Required, Free),
    o("resources", None, Required, Free),
    o("resv-ports", None, Optional, Free),
    o("segment", None, Required, Free),
    o("signal", None, Required, Free),
    o("sockets-per-node", None, Required, Free),
    o("spread-job", None, No, Free),
    o("spread-segments", None, No, Free),
    o("stepmgr", None, No, Free),
    o("switches", None, Required, Free),
    o("tasks-per-node", None, Required, Free),
    o("test-only", None, No, HidesTheJob),
    o("thread-spec", None, Required, Free),
    o("threads-per-core", None, Required, Free),
    o("time", Some('t'), Required, Free),
    o("time-min", None, Required, Free),
    o("tmp", None, Required, Free),
    o("tres-bind", None, Required, Free),
    o("tres-per-task", None, Required, Free),
    o("uid", None, Required, Free),
    o("usage", None, No, HidesTheJob),
    o("use-min-nodes", None, No, Free),
    o("verbose", Some('v'), No, Free),
    o("version", Some('V'), No, HidesTheJob),
    // sbatch --wait returns only when the job has ended.
    o("wait", Some('W'), No, HidesTheJob),
    o("wait-all-nodes", None, Required, Free),
    o("wckey", None, Required, Free),
    o("wrap", None, Required, Dbperfs),
];

/// One option sbatch would take from the words, and the word that named it.
#[derive(Debug, PartialEq, Eq)]
pub struct Taken<'a> {
    pub opt: &'static Opt,
    pub word: &'a str,
}

/// Why the words are refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Why {
    /// An abbreviation several options begin: sbatch refuses it.
    Ambiguous(Vec<&'static str>),
    /// No option of that name (`--name`), or no short option of that letter.
    Unknown(String),
    /// The last word's option still waits for its value: sbatch would take the job script's
    /// path for it.
    NeedsValue(&'static str),
    /// `--opt=value` for an option that takes none.
    TakesNoValue(&'static str),
    /// Not an option: sbatch stops reading options there and takes it for the job script (or a
    /// separator: `:` splits a heterogeneous job, `--` ends the options).
    NotAnOption,
    /// An option dbperf sets itself (`Role::Dbperfs`).
    Dbperfs(&'static str),
    /// An option that hides the job from dbperf (`Role::HidesTheJob`).
    HidesTheJob(&'static str),
    /// An option that sends the jobs elsewhere (`Role::OtherCluster`).
    OtherCluster(&'static str),
}

/// The words refused, the first word at fault and why.
#[derive(Debug, PartialEq, Eq)]
pub struct Refused {
    pub word: String,
    pub why: Why,
}

impl Refused {
    /// Why, in words, for a sentence that names the word first.
    pub fn reason(&self) -> String {
        let list = |names: &[&str]| {
            let shown: Vec<String> = names.iter().take(6).map(|n| format!("--{n}")).collect();
            let more = if names.len() > 6 { ", …" } else { "" };
            format!("{}{more}", shown.join(", "))
        };
        match &self.why {
            Why::Ambiguous(names) => format!(
                "sbatch cannot tell which option that abbreviates ({}); spell the option out",
                list(names)
            ),
            Why::Unknown(what) => format!("sbatch has no option {what}"),
            Why::NeedsValue(name) => format!(
                "--{name} needs a value and nothing follows it, so sbatch would take dbperf's job \
                 script for it; give --{name}=VALUE"
            ),
            Why::TakesNoValue(name) => format!("sbatch's --{name} takes no value"),
            Why::NotAnOption => "it is no option, and sbatch would stop reading options there and \
                 take it for the job script (`:` would split a heterogeneous job, `--` end the \
                 options); give options only"
                .to_string(),
            Why::Dbperfs(name) => format!(
                "it is sbatch's --{name}, and dbperf sets that option of sbatch itself (the \
                 array, the report job's dependency, the logs, a whole node per task); give \
                 partition, time, account and the like"
            ),
            Why::HidesTheJob(name) => format!(
                "it is sbatch's --{name}, with which sbatch submits nothing or does not print the \
                 job's id at once, and dbperf records the id to watch and resubmit the campaign"
            ),
            Why::OtherCluster(name) => format!(
                "it is sbatch's --{name}, which sends the jobs to another cluster, where dbperf's \
                 squeue does not look; submit from that cluster instead"
            ),
        }
    }
}

/// The options sbatch takes from `words`, as its getopt_long reads them (see the module).
pub fn read(words: &[String]) -> Result<Vec<Taken<'_>>, Refused> {
    let mut taken = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = words[i].as_str();
        i += 1;
        let refused = |why| Refused {
            word: word.to_string(),
            why,
        };
        let waits = if word == "--" || !word.starts_with('-') || word == "-" {
            return Err(refused(Why::NotAnOption));
        } else if let Some(long) = word.strip_prefix("--") {
            let (opt, waits) = read_long(long).map_err(refused)?;
            taken.push(Taken { opt, word });
            waits
        } else {
            let (opts, waits) = read_short(&word[1..]).map_err(refused)?;
            taken.extend(opts.into_iter().map(|opt| Taken { opt, word }));
            waits
        };
        if let Some(name) = waits {
            // The next word is the value, whatever it is.
            if i == words.len() {
                return Err(refused(Why::NeedsValue(name)));
            }
            i += 1;
        }
    }
    Ok(taken)
}

/// The words, refused unless every option they set is the user's to choose.
pub fn check(words: &[String]) -> Result<(), Refused> {
    for t in read(words)? {
        let why = match t.opt.role {
            Role::Free => continue,
            Role::Dbperfs => Why::Dbperfs(t.opt.name),
            Role::HidesTheJob => Why::HidesTheJob(t.opt.name),
            Role::OtherCluster => Why::OtherCluster(t.opt.name),
        };
        return Err(Refused {
            word: t.word.to_string(),
            why,
        });
    }
    Ok(())
}

/// `name[=value]` after `--`: the option, and its name when it takes the next word as value.
fn read_long(long: &str) -> Result<(&'static Opt, Option<&'static str>), Why> {
    let (name, value) = match long.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (long, None),
    };
    let opt = match OPTIONS.iter().find(|o| o.name == name) {
        Some(exact) => exact,
        None => {
            let begun: Vec<&'static Opt> = OPTIONS
                .iter()
                .filter(|o| o.name.starts_with(name))
                .collect();
            match begun[..] {
                [] => return Err(Why::Unknown(format!("--{name}"))),
                [one] => one,
                _ => return Err(Why::Ambiguous(begun.iter().map(|o| o.name).collect())),
            }
        }
    };
    match (opt.has_arg, value) {
        (HasArg::No, Some(_)) => Err(Why::TakesNoValue(opt.name)),
        (HasArg::Required, None) => Ok((opt, Some(opt.name))),
        _ => Ok((opt, None)),
    }
}

/// The letters after `-`: the options, and the last one's name when it takes the next word.
fn read_short(letters: &str) -> Result<(Vec<&'static Opt>, Option<&'static str>), Why> {
    let mut opts = Vec::new();
    for (at, c) in letters.char_indices() {
        let Some(opt) = OPTIONS.iter().find(|o| o.short == Some(c)) else {
            return Err(Why::Unknown(format!("-{c}")));
        };
        opts.push(opt);
        let rest = &letters[at + c.len_utf8()..];
        match opt.has_arg {
            HasArg::No => {}
            // The rest of the word is its value, if any.
            HasArg::Optional => return Ok((opts, None)),
            HasArg::Required if rest.is_empty() => return Ok((opts, Some(opt.name))),
            HasArg::Required => return Ok((opts, None)),
        }
    }
    Ok((opts, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    /// The options `line` sets, by name, or the refusal's word and why.
    fn names(line: &str) -> Result<Vec<&'static str>, (String, Why)> {
        let w = words(line);
        read(&w)
            .map(|t| t.iter().map(|t| t.opt.name).collect())
            .map_err(|r| (r.word, r.why))
    }

    #[test]
    fn long_options_are_taken_by_any_abbreviation_only_they_begin() {
        assert_eq!(names("--arr=1"), Ok(vec!["array"]));
        assert_eq!(names("--dep afterok:1"), Ok(vec!["dependency"]));
        assert_eq!(names("--depend=afterok:1"), Ok(vec!["dependency"]));
        assert_eq!(names("--outp=/x"), Ok(vec!["output"]));
        assert_eq!(names("--wra=true"), Ok(vec!["wrap"]));
        assert_eq!(names("--job x"), Ok(vec!["job-name"]));
        assert_eq!(names("--parsab"), Ok(vec!["parsable"]));
        assert_eq!(names("--open=append"), Ok(vec!["open-mode"]));
        // A full name wins over the longer ones it begins.
        assert_eq!(names("--cluster=c"), Ok(vec!["cluster"]));
        assert_eq!(names("--mem=1G"), Ok(vec!["mem"]));
        // Several options begin it: refused, naming them.
        let (w, why) = names("--par=x").unwrap_err();
        assert_eq!(
            (w.as_str(), why),
            ("--par=x", Why::Ambiguous(vec!["parsable", "partition"]))
        );
        assert!(matches!(names("--de=x"), Err((_, Why::Ambiguous(_)))));
        assert!(matches!(names("--=x"), Err((_, Why::Ambiguous(_)))));
        assert_eq!(
            names("--arrays=1"),
            Err(("--arrays=1".into(), Why::Unknown("--arrays".into())))
        );
    }

    #[test]
    fn values_are_taken_as_getopt_takes_them() {
        // A required value is the next word, whatever it is.
        assert_eq!(names("--partition --array=1"), Ok(vec!["partition"]));
        assert_eq!(
            names("-p --array=1 --time=10"),
            Ok(vec!["partition", "time"])
        );
        // An optional one only after `=`: the next word is read as an option.
        assert_eq!(
            names("--exclusive --array=1"),
            Ok(vec!["exclusive", "array"])
        );
        assert_eq!(names("--nice 5").unwrap_err().1, Why::NotAnOption);
        assert_eq!(names("--hold=1").unwrap_err().1, Why::TakesNoValue("hold"));
        // The last option may not wait for a value: it would take the job script.
        assert_eq!(
            names("--time=10 --partition").unwrap_err(),
            ("--partition".into(), Why::NeedsValue("partition"))
        );
        assert_eq!(names("-p").unwrap_err().1, Why::NeedsValue("partition"));
        assert_eq!(names("--partition="), Ok(vec!["partition"]));
    }

    #[test]
    fn short_options_bundle_and_take_the_rest_of_the_word() {
        assert_eq!(names("-Ha1"), Ok(vec!["hold", "array"]));
        assert_eq!(names("-a1"), Ok(vec!["array"]));
        assert_eq!(names("-a 1-4"), Ok(vec!["array"]));
        assert_eq!(names("-vHJx"), Ok(vec!["verbose", "hold", "job-name"]));
        // The rest of the word is the value: -pa is partition "a".
        assert_eq!(names("-pa"), Ok(vec!["partition"]));
        assert_eq!(names("-Hp x"), Ok(vec!["hold", "partition"]));
        // An optional value is the rest of the word only.
        assert_eq!(names("-ka1"), Ok(vec!["no-kill"]));
        assert_eq!(names("-k -a1"), Ok(vec!["no-kill", "array"]));
        assert_eq!(
            names("-Hz").unwrap_err(),
            ("-Hz".into(), Why::Unknown("-z".into()))
        );
        assert_eq!(names("-H -p").unwrap_err().1, Why::NeedsValue("partition"));
    }

    #[test]
    fn words_that_are_no_options_are_refused() {
        for w in ["script.sh", ":", "--", "-", ""] {
            let words = vec!["--time=10".to_string(), w.to_string()];
            let r = read(&words).unwrap_err();
            assert_eq!((r.word.as_str(), r.why), (w, Why::NotAnOption), "{w:?}");
        }
    }

    #[test]
    fn only_the_users_options_pass() {
        for ok in [
            "--partition=x",
            "-p x",
            "--time=10",
            "-t10",
            "--account=a --qos=high -C ssd",
            "--mem=8G --hold",
            "--part=bench",
            // A value that looks like an option is a value.
            "--comment --array=1",
        ] {
            assert_eq!(check(&words(ok)), Ok(()), "{ok}");
        }
        for (bad, word, name) in [
            ("--arr=1", "--arr=1", "array"),
            ("--dep afterok:1", "--dep", "dependency"),
            ("--wra=true", "--wra=true", "wrap"),
            ("-Ha1", "-Ha1", "array"),
            ("-a1", "-a1", "array"),
            ("--parsab", "--parsab", "parsable"),
            ("-p x --outp=/tmp/o", "--outp=/tmp/o", "output"),
            ("--open=truncate", "--open=truncate", "open-mode"),
            ("-Jx", "-Jx", "job-name"),
            ("--exclusive=user", "--exclusive=user", "exclusive"),
            ("-s", "-s", "oversubscribe"),
            ("-Q", "-Q", "quiet"),
            ("--wait", "--wait", "wait"),
            ("--test", "--test", "test-only"),
            ("-M other", "-M", "clusters"),
        ] {
            let r = check(&words(bad)).unwrap_err();
            assert_eq!(r.word, word, "{bad}");
            let set = match r.why {
                Why::Dbperfs(n) | Why::HidesTheJob(n) | Why::OtherCluster(n) => n,
                other => panic!("{bad}: {other:?}"),
            };
            assert_eq!(set, name, "{bad}");
        }
        let r = check(&words("--arr=1")).unwrap_err();
        assert!(
            r.reason()
                .contains("sbatch's --array, and dbperf sets that option of sbatch itself"),
            "{}",
            r.reason()
        );
    }

    #[test]
    fn the_table_is_getopts_own() {
        for (i, a) in OPTIONS.iter().enumerate() {
            assert!(
                OPTIONS[i + 1..]
                    .iter()
                    .all(|b| b.name != a.name && (a.short.is_none() || b.short != a.short)),
                "{} twice",
                a.name
            );
            assert!(
                a.name.bytes().all(|c| c.is_ascii_lowercase() || c == b'-'),
                "{}",
                a.name
            );
        }
    }
}
