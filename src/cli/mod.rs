//! Command line: parsing, exit codes, and what a person sees. Exit 0 = success, 1 = a benchmark
//! or DBMS failure (finished steps are kept), 2 = bad input, 130 = interrupted by Ctrl-C or
//! SIGTERM (cli/signals.rs).

/// Like println!, but a closed stdout (`dbperf host show | head`) does not panic: Rust ignores
/// SIGPIPE, so the write fails with EPIPE, and the rest of the output is dropped quietly while
/// the command goes on (a run still stops its servers and keeps its results).
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write;
        let line = format!($($arg)*);
        let _ = writeln!(std::io::stdout().lock(), "{}", crate::untrusted::printable(&line));
    }};
}

/// Like eprintln!, with what `out!` does to outside text: a server's bytes in a message cannot
/// move the cursor or clear the screen (`untrusted::printable`). A closed stderr (`2>&1 | head`)
/// does not panic either: the message is lost, the run and its exit code are not.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write;
        let line = format!($($arg)*);
        let _ = writeln!(std::io::stderr().lock(), "{}", crate::untrusted::printable(&line));
    }};
}

mod bisect;
mod bisect_between;
mod fetch;
mod flags;
mod given;
mod history;
mod host;
mod ibench;
mod pgbench;
mod profile;
mod render;
mod report;
mod run;
mod run_args;
mod server;
mod signals;
mod slurm;
mod summary;
mod sysbench;
mod tpcc;
mod what;
mod writeamp;

use std::ffi::OsString;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

pub use run_args::RunArgs;

pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_BAD_INPUT: i32 = 2;
pub const EXIT_INTERRUPTED: i32 = 130;

#[derive(Parser, Debug)]
#[command(
    name = "dbperf",
    version = concat!(env!("CARGO_PKG_VERSION"), " (git ", env!("DBPERF_GIT_REV"), ")"),
    about = "Benchmark harness for database performance engineers: the Insert Benchmark and \
             the sysbench microbenchmarks on SQLite (embedded), PostgreSQL and MariaDB/MySQL, \
             with latency histograms, per-second series and SLA checks.",
    after_help = "Start with `dbperf run` (the quick Insert Benchmark on SQLite), then \
                  `dbperf run --help` for every option."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a benchmark suite against one or more targets and write a result directory.
    Run(Box<RunArgs>),
    /// Find the build that changed a step's figure in an ordered list of builds (releases,
    /// local builds of successive commits, configs): noise-aware, resumable (docs/bisect.md).
    Bisect(Box<bisect::BisectArgs>),
    /// Start or stop a private server instance to look at by hand.
    #[command(subcommand)]
    Server(server::ServerCommand),
    /// Show, tune and exactly undo the host settings that make results vary.
    #[command(subcommand)]
    Host(host::HostCommand),
    /// Write amplification of finished steps, or of DBMS counters collected by hand.
    Writeamp(writeamp::WriteampArgs),
    /// Turn result directories into a report: what got faster or slower, and why.
    Report(report::ReportArgs),
    /// Get a server build (PostgreSQL, MariaDB, MySQL) into the build cache without compiling,
    /// with where it came from; then name it as `--target postgres@16.4`.
    Fetch(fetch::FetchArgs),
    /// Keep results in a history database (SQLite, or a shared PostgreSQL) and find where each
    /// metric changed over time.
    #[command(subcommand)]
    History(history::HistoryCommand),
    /// CPU profiles taken with `dbperf run --profile`: compare two steps' profiles.
    #[command(subcommand)]
    Profile(profile::ProfileCommand),
}

/// Parses a command line, program name first. `dbperf run`'s arguments also keep which options
/// the line gave (`Given`) and its words, which its journal records for `--resume`. Every
/// command line goes through here: the process's, a resumed run's and a campaign's suites'.
pub fn parse<T: Into<OsString> + Clone>(
    argv: impl IntoIterator<Item = T>,
) -> Result<Cli, clap::Error> {
    let argv: Vec<OsString> = argv.into_iter().map(Into::into).collect();
    let mut cmd = Cli::command();
    let m = cmd.try_get_matches_from_mut(&argv)?;
    let mut cli = Cli::from_arg_matches(&m)?;
    let (r, name, rm) = match (&mut cli.command, m.subcommand()) {
        (Command::Run(r), Some(("run", rm))) => (&mut **r, "run", rm),
        (Command::Bisect(b), Some(("bisect", bm))) => (&mut b.run, "bisect", bm),
        _ => return Ok(cli),
    };
    let sub = cmd
        .find_subcommand(name)
        .expect("the subcommand is declared");
    r.given = given::Given::of(sub, rm);
    r.argv = argv
        .iter()
        .skip(1)
        .map(|w| w.to_str().map(str::to_string))
        .collect::<Option<_>>()
        // A raw error: one sentence, without the usage clap adds to a mistyped option.
        .ok_or_else(|| {
            clap::Error::raw(
                clap::error::ErrorKind::InvalidUtf8,
                format!(
                    "dbperf {name}'s arguments must be UTF-8 text: its journal keeps them to \
                     resume it\n"
                ),
            )
        })?;
    Ok(cli)
}

/// Entry point of the binary; returns the process exit code. The only reader of the process's
/// arguments.
pub fn main() -> i32 {
    let cli = match parse(std::env::args_os()) {
        Ok(c) => c,
        Err(e) => {
            // clap prints help/version to stdout with exit 0, usage errors with exit 2.
            let _ = e.print();
            return if e.use_stderr() {
                EXIT_BAD_INPUT
            } else {
                EXIT_OK
            };
        }
    };
    let result = match cli.command {
        // Handed to Slurm instead of run here.
        Command::Run(args) if args.slurm.is_some() => slurm::submit(&args),
        Command::Run(args) => run::run(*args),
        Command::Bisect(args) => bisect::run(*args),
        Command::Server(cmd) => server::run(cmd),
        Command::Host(cmd) => host::run(cmd),
        Command::Writeamp(a) => writeamp::run(a),
        Command::Report(args) => report::run(args),
        Command::Fetch(a) => fetch::run(a),
        Command::History(c) => history::run(c),
        Command::Profile(c) => profile::run(c),
    };
    match result {
        Ok(code) => code,
        Err(e) if crate::error::is_bad_input(&e) => {
            say!("error: {e}");
            EXIT_BAD_INPUT
        }
        Err(e) => {
            say!("error: {e:#}");
            EXIT_FAILED
        }
    }
}

#[cfg(test)]
mod tests {
    /// clap checks its declarations (two groups of one id, a flag in a group that does not
    /// exist) only when asked; the suites' groups are declared in three files.
    #[test]
    fn the_command_line_declarations_are_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
