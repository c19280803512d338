//! dbperf: a benchmark harness for database performance engineers.
//!
//! Data flows one way: `spec` (what to run) -> `workload` builds roles over a `dbms` adapter ->
//! `runner` runs them on threads and measures -> `results` writes them -> `report` reads them.

pub mod analysis;
pub mod bisect;
pub mod cli;
pub mod dbms;
pub mod engines;
pub mod error;
pub mod fetch;
pub mod history;
pub mod host;
pub(crate) mod json;
pub mod metrics;
pub mod profile;
pub mod report;
pub mod results;
pub mod runner;
pub mod safe_fs;
pub mod server;
pub mod session;
pub mod spec;
pub mod suites;
pub mod untrusted;
pub mod workload;

/// Version and git revision of this build, as `dbperf --version` prints them.
pub fn version_string() -> String {
    format!("{} ({})", env!("CARGO_PKG_VERSION"), git_revision())
}

pub fn git_revision() -> &'static str {
    env!("DBPERF_GIT_REV")
}
