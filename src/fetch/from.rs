//! Any engine from an official binary tarball the user has or can download: `dbperf fetch mysql
//! 8.0.36 --from FILE_OR_URL` (MariaDB bintars, MySQL generic Linux tarballs, PostgreSQL binary
//! archives). A URL is downloaded with the user's curl (its proxy settings apply); the layout is
//! recognised as `--target ENGINE@PATH` would (src/server/layout.rs).

use std::path::{Path, PathBuf};

use super::{
    archive, client, now_rfc3339, Build, BuildInfo, Cache, FetchRequest, Progress, SourceRecord,
    BUILD_SCHEMA,
};
use crate::error::bad_input;
use crate::server::{layout, Kind};

fn is_url(s: &str) -> bool {
    s.starts_with("http://") || s.starts_with("https://")
}

pub fn fetch(
    cache: &Cache,
    req: &FetchRequest,
    from: &str,
    p: &mut dyn Progress,
) -> anyhow::Result<Build> {
    if req.want.source.is_some() {
        return bad_input(
            "--from names the build's source itself; drop --source or the -family suffix",
        );
    }
    let expected = match req.sha256 {
        Some(h) if h.len() == 64 && h.chars().all(|c| c.is_ascii_hexdigit()) => {
            Some(h.to_ascii_lowercase())
        }
        Some(h) => return bad_input(format!("--sha256 {h} is not 64 hexadecimal digits")),
        None => None,
    };
    let Some(kind) = Kind::of(req.engine) else {
        return bad_input(format!(
            "{} is embedded: it has no builds to fetch",
            req.engine
        ));
    };
    let key = req.want.version.to_string();
    let dest = cache.dir(req.engine, &key);
    if dest.exists() {
        return bad_input(format!(
            "{} {key} is in the build cache already ({}); remove it first with `dbperf fetch --remove {} {key}`",
            req.engine,
            dest.display(),
            req.engine
        ));
    }
    let local = (!is_url(from)).then(|| PathBuf::from(from));
    if let Some(f) = &local {
        if !f.is_file() {
            return bad_input(format!(
                "--from {from}: no such file (or give an http:// or https:// URL)"
            ));
        }
    }
    let staging = cache.staging(&format!("{}-{key}", req.engine))?;
    let file = match &local {
        Some(f) => f.clone(),
        None => {
            let name = from
                .rsplit('/')
                .next()
                .filter(|n| !n.is_empty() && archive::safe_relative(Path::new(n)).is_some())
                .unwrap_or("download");
            let out = staging.dir.join(name);
            p.say(&format!("curl {from} ..."));
            let mut c = client("curl", "curl")?;
            // --fail: an HTTP error is an error, not a saved error page; curl itself refuses a
            // body shorter than its Content-Length.
            c.args(["--fail", "--silent", "--show-error", "--location"])
                .args(["--proto", "=http,https", "--output"])
                .arg(&out)
                .arg(from);
            super::output(c, &format!("curl {from}"))?;
            out
        }
    };
    let (sha256, size) = archive::sha256_file(&file)?;
    if let Some(want) = &expected {
        if *want != sha256 {
            anyhow::bail!(
                "{from} has sha256 {sha256}, not the {want} given with --sha256; nothing was cached"
            );
        }
    }
    let build = staging.dir.join("build");
    let top = top_dir(&file)?;
    let n = archive::unpack(&file, top.as_deref().unwrap_or(Path::new("")), &build)?;
    if n == 0 {
        anyhow::bail!("{from} holds no files");
    }
    let l = layout::find(kind, Some(&build), false).map_err(|e| {
        // The sentence names the temporary directory; the user knows it as the tarball's top.
        let why = e
            .to_string()
            .replace(&build.display().to_string(), "the tarball's top directory");
        crate::error::BadInput(format!(
            "{from} is not a {} build dbperf recognises: {why}",
            req.engine
        ))
    })?;
    let basedir = l
        .basedir
        .strip_prefix(&build)
        .map(|r| {
            if r.as_os_str().is_empty() {
                ".".to_string()
            } else {
                r.display().to_string()
            }
        })
        .unwrap_or_else(|_| ".".into());
    super::check_runs(&l.server, &key)?;
    let file_name = file
        .file_name()
        .map(|f| f.to_string_lossy().to_string())
        .unwrap_or_default();
    let info = BuildInfo {
        schema: BUILD_SCHEMA,
        engine: req.engine.name().into(),
        version: key.clone(),
        family: format!("tarball {file_name}"),
        source: SourceRecord {
            client: if local.is_some() { "file" } else { "curl" }.into(),
            package: None,
            package_version: None,
            release: None,
            url: (local.is_none()).then(|| from.to_string()),
            file: local.as_ref().map(|f| {
                std::path::absolute(f)
                    .unwrap_or(f.clone())
                    .display()
                    .to_string()
            }),
            packages: Vec::new(),
        },
        sha256,
        size,
        fetched_at: now_rfc3339(),
        basedir,
        loader: None,
        library_path: None,
        notes: Vec::new(),
    };
    let b = cache.install(&build, &key, &info)?;
    p.say(&format!(
        "{} {key} from {from}: {}",
        req.engine,
        b.dir.display()
    ));
    Ok(b)
}

/// The one directory every entry of the tarball is under (`mysql-8.0.36-linux-glibc2.28-x86_64/`),
/// to be left out when unpacking; None when the files are at the top.
fn top_dir(tarball: &Path) -> anyhow::Result<Option<PathBuf>> {
    let names: Vec<PathBuf> = archive::entry_names(tarball)?
        .iter()
        .filter_map(|n| archive::safe_relative(n))
        .collect();
    let first = |n: &PathBuf| n.components().next().map(|c| PathBuf::from(c.as_os_str()));
    let Some(top) = names.first().and_then(first) else {
        return Ok(None);
    };
    let shared = names.iter().all(|n| first(n).as_ref() == Some(&top));
    let deeper = names.iter().any(|n| n.components().count() > 1);
    Ok((shared && deeper).then_some(top))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_top_directory_is_stripped() {
        let d = tempfile::tempdir().unwrap();
        let make = |name: &str, files: &[&str]| {
            let p = d.path().join(name);
            let gz = flate2::write::GzEncoder::new(
                std::fs::File::create(&p).unwrap(),
                flate2::Compression::fast(),
            );
            let mut b = tar::Builder::new(gz);
            for f in files {
                let mut h = tar::Header::new_gnu();
                h.set_size(1);
                h.set_cksum();
                b.append_data(&mut h, f, &b"x"[..]).unwrap();
            }
            b.into_inner().unwrap().finish().unwrap();
            p
        };
        let t = make(
            "a.tgz",
            &["mysql-8.0.36/bin/mysqld", "mysql-8.0.36/share/x"],
        );
        assert_eq!(top_dir(&t).unwrap(), Some(PathBuf::from("mysql-8.0.36")));
        let t = make("b.tgz", &["bin/mysqld", "share/x"]);
        assert_eq!(top_dir(&t).unwrap(), None);
    }
}
