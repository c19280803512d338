//! What differs between the families of servers dbperf manages, behind one trait: how a data
//! directory is made, the server's command line, when it answers, its config's syntax and
//! where a build keeps its binaries. One implementation per family (postgres.rs,
//! mysql_family.rs); what differs between the engines of one family is their registry entry's
//! (`engines::MySqlFacts`). A new family is a new implementation, and every decision it needs
//! fails to compile until it is made; a new engine of a family is one registry entry.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::configs::Fit;
use super::layout::{DebianLayout, Layout};
use super::secret::{ClientFile, Password, Reach, Scratch};
use super::{Plan, Running};
use crate::dbms::{Endpoint, Timeouts};
use crate::engines::Engine;

/// Where a server being started keeps its things.
pub struct Places<'a> {
    pub datadir: &'a Path,
    /// The socket's directory (its pid file's too, for the MySQL family).
    pub rundir: &'a Path,
    pub log: &'a Path,
    pub port: u16,
}

/// Why a login did not get in.
pub enum Refusal {
    Refused(String),
    /// No answer yet: mysqld runs its init file before it greets its first connection.
    NotYet(String),
}

pub trait Flavor: Sync + std::fmt::Debug {
    /// The binaries of `engine` in `path` (a bin directory or a basedir), or the installed ones.
    fn find_layout(&self, engine: Engine, path: Option<&Path>) -> anyhow::Result<Layout>;

    /// Where a Debian build of `engine` at `version` keeps its server, and how its `--version`
    /// states the version.
    fn debian_layout(&self, engine: Engine, version: &str) -> DebianLayout;

    /// How many numbers a release's version has (PostgreSQL's two since 10, the MySQL
    /// family's three): a shorter one is only a prefix.
    fn version_parts(&self) -> usize;

    /// Makes the data directory `datadir`, its superuser with the instance's password.
    fn initialise(
        &self,
        plan: &Plan,
        datadir: &Path,
        rundir: &Path,
        pw: &Password,
    ) -> anyhow::Result<()>;

    /// Whether a failed initialisation of a fresh data directory is tried once more.
    fn retries_initialise(&self, engine: Engine) -> bool;

    /// Whether a config may give options to the initialisation (PostgreSQL's initdb).
    fn takes_init_options(&self) -> bool;

    /// The initialisation options the data directory got, for run.json; None where a config
    /// gives none.
    fn init_record(&self, plan: &Plan) -> Option<Vec<String>>;

    /// The server's unix socket in `rundir`.
    fn socket(&self, rundir: &Path, port: u16) -> PathBuf;

    /// A file the first start runs before any login (sets the password where initialisation
    /// could not); None when initialisation did.
    fn first_start_file(
        &self,
        plan: &Plan,
        rundir: &Path,
        pw: &Password,
    ) -> anyhow::Result<Option<Scratch>>;

    /// The server's command line (`cgroup`: the memory cap's cgroup it joins before it runs).
    fn command(&self, plan: &Plan, at: &Places, cgroup: Option<CString>) -> Command;

    /// Whether the started server answers yet.
    fn answers(&self, plan: &Plan, r: &Running) -> bool;

    /// One login at `ep`: Ok when the server let it in.
    fn login(&self, ep: &Endpoint, timeouts: Timeouts) -> Result<(), Refusal>;

    /// The client's password or option file for a person connecting by hand.
    fn client_file(&self, pw: &Password, reach: &Reach) -> ClientFile;

    /// The shell command that connects to the benchmark database `database` by hand, the
    /// client file given as one shell word.
    fn connect_command(
        &self,
        engine: Engine,
        client_file: &str,
        reach: &Reach,
        database: &str,
    ) -> String;

    /// The names of the built-in configs that are not published ones (`default` first).
    fn builtin_names(&self) -> &'static [&'static str];

    /// The text of such a built-in config; None for another name.
    fn builtin(&self, engine: Engine, rocksdb: bool, name: &str) -> Option<String>;

    /// A built-in config's text with its memory sizes fitted to a cap (`--server-memory`).
    fn fit_to_cap(&self, engine: Engine, rocksdb: bool, text: String, fit: &Fit) -> String;

    /// The unit of a memory size in the config (PostgreSQL refuses M).
    fn size_unit(&self) -> &'static str;

    /// The first setting of the config `text` that is dbperf's own, however it is spelt.
    fn owned_setting(&self, text: &str) -> Option<String>;

    /// The connections a server takes when its config does not say.
    fn default_max_connections(&self) -> u64;

    /// A setting as a config line (`value` empty: a switch without one).
    fn setting_line(&self, name: &str, value: &str) -> String;
}
