//! `dbperf bisect --between`: two targets `ENGINE@VERSION[:CONFIG]` made the list of every
//! release the build source has from the first to the last (docs/bisect.md).

use super::run_args::RunArgs;
use crate::error::bad_input;
use crate::fetch::version::Version;
use crate::fetch::{self, BuildSource, Want};

/// A target spec around its version: `postgres` `@` `16.1` (`-npm`) `:cx9a2`.
#[derive(Debug, Clone, PartialEq)]
struct Around {
    engine: String,
    want: Want,
    /// What follows the version: `:CONFIG`, or nothing.
    rest: String,
}

fn split(spec: &str) -> anyhow::Result<Around> {
    let refuse = || {
        bad_input(format!(
            "--between takes targets ENGINE@VERSION[:CONFIG] (postgres@16.1), not {spec}"
        ))
    };
    let Some((engine, after)) = spec.split_once('@') else {
        return refuse();
    };
    let (version, rest) = match after.split_once(':') {
        Some((v, c)) => (v, format!(":{c}")),
        None => (after, String::new()),
    };
    if !crate::spec::target::is_version(version) {
        return refuse();
    }
    Ok(Around {
        engine: engine.to_string(),
        want: Want::parse(version)?,
        rest,
    })
}

/// The releases strictly between `lo` and `hi` in `offered`, oldest first, once each: none of
/// the two ends' own series (`16.1` is not between 16.1 and 16.4, nor is 10.5.19 between 10.5
/// and 10.11).
fn between(lo: &Version, hi: &Version, offered: &[Version]) -> Vec<Version> {
    let mut v: Vec<Version> = offered
        .iter()
        .filter(|v| *v > lo && *v < hi && !lo.matches(v) && !hi.matches(v))
        .cloned()
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The first and last target with every release between them that their build source offers.
pub(super) fn expand(a: &RunArgs, specs: &[String]) -> anyhow::Result<Vec<String>> {
    let [first, last] = specs else {
        return bad_input(format!(
            "--between takes two targets, the first and the last release; {} given",
            specs.len()
        ));
    };
    let (lo, hi) = (split(first)?, split(last)?);
    if lo.engine != hi.engine || lo.rest != hi.rest || lo.want.source != hi.want.source {
        return bad_input(format!(
            "--between needs two releases of one engine, build family and config: {first} and {last} differ"
        ));
    }
    if lo.want.version >= hi.want.version {
        return bad_input(format!(
            "--between: {first} must be an older release than {last}"
        ));
    }
    let engine = fetch::parse_engine(lo.engine.split('+').next().unwrap_or_default())?;
    let Some(source) = lo.want.source.or(fetch::default_source(engine)) else {
        return bad_input(format!("no package source has {engine} builds to list"));
    };
    let cache = fetch::Cache::locate(a.cache_dir.as_deref())?;
    let offered = fetch::offers(&cache, engine, &mut |l: &str| say!("{l}"))
        .into_iter()
        .find(|(s, _)| *s == source)
        .map(|(_, o)| o);
    let offers = match offered {
        Some(Ok(o)) => o,
        Some(Err(e)) => anyhow::bail!(
            "cannot list {engine}'s releases from {}: {e:#}",
            source.name()
        ),
        None => return bad_input(format!("{} has no {engine} builds", source.name())),
    };
    let versions: Vec<Version> = offers.into_iter().map(|o| o.version).collect();
    let family = match lo.want.source {
        Some(s) => format!("-{}", s.name()),
        None => String::new(),
    };
    let mut out = vec![first.clone()];
    for v in between(&lo.want.version, &hi.want.version, &versions) {
        out.push(format!("{}@{v}{family}{}", lo.engine, lo.rest));
    }
    out.push(last.clone());
    say!(
        "bisect: {} builds from {}: {}",
        out.len(),
        source_words(source),
        out.join(", ")
    );
    Ok(out)
}

fn source_words(s: BuildSource) -> &'static str {
    match s {
        BuildSource::Npm => "npm",
        BuildSource::Debian => "Debian",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn the_releases_between_are_those_the_source_has() {
        // npm has no 16.0 or 16.3.
        let npm: Vec<Version> = ["15.8", "16.1", "16.2", "16.4", "16.6", "17.0"]
            .iter()
            .map(|s| v(s))
            .collect();
        assert_eq!(between(&v("16.1"), &v("16.4"), &npm), vec![v("16.2")]);
        assert_eq!(
            between(&v("16.1"), &v("17"), &npm),
            vec![v("16.2"), v("16.4"), v("16.6")]
        );
        // Debian's MariaDB, one series each release, twice over.
        let deb: Vec<Version> = ["10.5.19", "10.11.6", "10.11.6", "11.8.2"]
            .iter()
            .map(|s| v(s))
            .collect();
        assert_eq!(between(&v("10.5"), &v("11.8"), &deb), vec![v("10.11.6")]);
    }

    #[test]
    fn a_spec_splits_around_its_version() {
        let a = split("postgres@16.1-debian:cx9a2").unwrap();
        assert_eq!((a.engine.as_str(), a.rest.as_str()), ("postgres", ":cx9a2"));
        assert_eq!(a.want.source, Some(BuildSource::Debian));
        for bad in ["postgres", "postgres@/opt/pg", "sqlite:wal-full"] {
            assert!(split(bad).is_err(), "{bad}");
        }
    }
}
