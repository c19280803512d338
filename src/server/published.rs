//! The published configs, built in: the server settings of Mark Callaghan's Insert Benchmark
//! and sysbench studies (smalldatum.blogspot.com), as the repository mdcallag/mytools keeps
//! them under bench/conf/ (each config names the files it was taken from, per version). Only
//! data here: which settings, on which versions, and why one is not given as published;
//! render.rs writes the text a server gets. docs/configs.md says how to use them. This file
//! holds the types and the ways a setting is taken; each family's configs are in
//! published_postgres.rs and published_mysql.rs, and `configs::published_all` lists them.

use super::version::Version;
use crate::engines::Engine;

/// The host a config was published for; its memory settings are sized for it.
#[derive(Debug)]
pub struct Host {
    /// The studies' name: c8r32 is 8 cores and 32 GiB of RAM.
    pub name: &'static str,
    pub cores: u32,
    pub memory_gib: u64,
}

pub const C8R32: Host = Host {
    name: "c8r32",
    cores: 8,
    memory_gib: 32,
};

/// What becomes of a published setting.
#[derive(Debug, Clone, Copy)]
pub enum How {
    /// Given as published.
    Kept,
    /// A memory size: scaled to the host's RAM (scale.rs).
    Memory,
    /// Given only on versions in [from, before); on the others a comment says why not.
    Versions {
        from: Option<Version>,
        before: Option<Version>,
        why: &'static str,
    },
    /// Never given, with why (a path dbperf sets itself, a setting the engine ignores).
    Dropped(&'static str),
    /// Given with another value, with why.
    Changed(&'static str, &'static str),
    /// Not in the published file: given because of why (it stands for dropped settings).
    Added(&'static str),
}

#[derive(Debug, Clone, Copy)]
pub struct Setting {
    pub name: &'static str,
    /// As published; empty for a switch written without a value (`skip-innodb`).
    pub value: &'static str,
    pub how: How,
}

/// A file of mytools a config was taken from, and the first version it stands for.
#[derive(Debug)]
pub struct Source {
    pub from: Version,
    pub path: &'static str,
}

/// One published config for one engine (and storage engine).
#[derive(Debug)]
pub struct Published {
    /// The studies' short name (`cx9a2`, `cz11a`).
    pub name: &'static str,
    pub engine: Engine,
    pub rocksdb: bool,
    pub host: &'static Host,
    /// The versions it is built in for: [from, before).
    pub from: Version,
    pub before: Version,
    /// The same in words: `12 to 18`.
    pub versions: &'static str,
    /// Sorted by version: a server takes the last one at or below its version.
    pub sources: &'static [Source],
    /// Its settings in the published files' order, in parts several configs share.
    pub parts: &'static [&'static [Setting]],
}

impl Published {
    pub fn settings(&self) -> impl Iterator<Item = &'static Setting> {
        self.parts.iter().flat_map(|p| p.iter())
    }

    /// The published file that stands for `v`: the last one at or below it, else the first.
    pub fn source(&self, v: Version) -> &'static Source {
        self.sources
            .iter()
            .rev()
            .find(|s| s.from <= v)
            .unwrap_or(&self.sources[0])
    }
}

/// The mytools repository the paths are in.
pub const REPOSITORY: &str = "github.com/mdcallag/mytools";

pub const fn kept(name: &'static str, value: &'static str) -> Setting {
    Setting {
        name,
        value,
        how: How::Kept,
    }
}

pub const fn memory(name: &'static str, value: &'static str) -> Setting {
    Setting {
        name,
        value,
        how: How::Memory,
    }
}

pub const fn from(
    name: &'static str,
    value: &'static str,
    v: Version,
    why: &'static str,
) -> Setting {
    Setting {
        name,
        value,
        how: How::Versions {
            from: Some(v),
            before: None,
            why,
        },
    }
}

pub const fn before(
    name: &'static str,
    value: &'static str,
    v: Version,
    why: &'static str,
) -> Setting {
    Setting {
        name,
        value,
        how: How::Versions {
            from: None,
            before: Some(v),
            why,
        },
    }
}

pub const fn between(
    name: &'static str,
    value: &'static str,
    (a, b): (Version, Version),
    why: &'static str,
) -> Setting {
    Setting {
        name,
        value,
        how: How::Versions {
            from: Some(a),
            before: Some(b),
            why,
        },
    }
}

pub const fn dropped(name: &'static str, value: &'static str, why: &'static str) -> Setting {
    Setting {
        name,
        value,
        how: How::Dropped(why),
    }
}

pub const fn added(name: &'static str, value: &'static str, why: &'static str) -> Setting {
    Setting {
        name,
        value,
        how: How::Added(why),
    }
}

pub const fn v(major: u32, minor: u32, patch: u32) -> Version {
    Version::new(major, minor, patch)
}
