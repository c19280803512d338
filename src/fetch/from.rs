//! Any engine from an official binary tarball the user has or can download: `dbperf fetch mysql
//! 8.0.36 --from FILE_OR_URL` (MariaDB bintars, MySQL generic Linux tarballs, PostgreSQL binary
//! archives). A URL is downloaded with the user's curl (its proxy settings apply); the layout is
//! recognised as `--target ENGINE@PATH` would (src/server/layout.rs).

use std::fs::File;
use std::path::{Path, PathBuf};

use super::{
    archive, client, now_rfc3339, Build, BuildInfo, Cache, FetchRequest, Progress, SourceRecord,
    Staging, BUILD_SCHEMA,
};
use crate::error::bad_input;
use crate::safe_fs::tree::Rel;
use crate::server::{layout, ServerEngine};

fn is_url(s: &str) -> bool {
    s.starts_with("http://") || s.starts_with("https://")
}

pub fn fetch(
    cache: &Cache,
    req: &FetchRequest,
    from: &str,
    p: &mut dyn Progress,
) -> anyhow::Result<Build> {
    let (kind, expected) = checked(cache, req)?;
    let key = req.want.version.to_string();
    let local = (!is_url(from)).then(|| PathBuf::from(from));
    let opened = match &local {
        Some(f) => Some(open_local(f, from)?),
        None => None,
    };
    let staging = cache.staging(&format!("{}-{key}", req.engine))?;
    let file = match opened {
        Some(f) => f,
        None => download(from, &staging, p)?,
    };
    let shown = crate::untrusted::shown(from);
    let mut u = archive::Unpacker::new(&staging.build, archive::Absolute::Refuse);
    let digest = u.tarball(file, &Rel::root(), &format!("--from {shown}"))?;
    if let Some(want) = &expected {
        if *want != digest.sha256 {
            anyhow::bail!(
                "{from} has sha256 {}, not the {want} given with --sha256; nothing was cached",
                digest.sha256
            );
        }
    }
    let unpacked = u.finish(archive::Top::SingleDirectory)?;
    if unpacked.entries == 0 {
        return bad_input(format!("{from} holds no files"));
    }
    let top = unpacked.top;
    let build = staging.build.path().join(top.to_path());
    let l = recognised(kind, &build, from, req)?;
    super::check_runs(&l.server, &key)?;
    let info = BuildInfo {
        schema: BUILD_SCHEMA,
        engine: req.engine.name().into(),
        version: key.clone(),
        family: format!("tarball {}", from.rsplit('/').next().unwrap_or_default()),
        source: source_record(from, local.as_deref()),
        sha256: digest.sha256,
        size: digest.size,
        fetched_at: now_rfc3339(),
        basedir: basedir_within(&l.basedir, &build),
        loader: None,
        library_path: None,
        notes: Vec::new(),
    };
    let b = cache.install(&staging, &top, &key, &info)?;
    p.say(&format!(
        "{} {key} from {from}: {}",
        req.engine,
        b.dir.display()
    ));
    Ok(b)
}

/// The request's own refusals, before anything is read or downloaded: the engine must be a
/// server, the digest 64 hex digits, the version not cached yet. The engine's server kind and
/// the expected digest (lower case) when given.
fn checked(cache: &Cache, req: &FetchRequest) -> anyhow::Result<(ServerEngine, Option<String>)> {
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
    let Some(kind) = ServerEngine::of(req.engine) else {
        return bad_input(format!(
            "{} is embedded: it has no builds to fetch",
            req.engine
        ));
    };
    let key = req.want.version.to_string();
    if cache.cached(req.engine, &key)?.is_some() {
        return bad_input(format!(
            "{} {key} is in the build cache already ({}); remove it first with `dbperf fetch --remove {} {key}`",
            req.engine,
            cache.dir(req.engine, &key).display(),
            req.engine
        ));
    }
    Ok((kind, expected))
}

/// The user's file, opened once: it is hashed and unpacked in one pass from this open file,
/// so a file swapped in its directory meanwhile changes nothing. A FIFO, a device or a
/// directory is refused.
fn open_local(f: &Path, from: &str) -> anyhow::Result<File> {
    if std::fs::metadata(f).is_err() {
        return bad_input(format!(
            "--from {from}: no such file (or give an http:// or https:// URL)"
        ));
    }
    let limit = crate::untrusted::Limit {
        max: archive::MAX_ARCHIVE,
        what: "a build archive",
        links: crate::untrusted::Links::Follow,
    };
    let (file, _) = crate::untrusted::open(f, limit)
        .map_err(|e| crate::error::BadInput(format!("--from {from}: {e:#}")))?;
    Ok(file)
}

/// The unpacked tree's layout, as `--target ENGINE@PATH` would find it; the sentence names the
/// tarball's top directory, which the user knows, not the temporary one.
fn recognised(
    kind: ServerEngine,
    build: &Path,
    from: &str,
    req: &FetchRequest,
) -> anyhow::Result<layout::Layout> {
    layout::find(kind, Some(build), false).map_err(|e| {
        let why = e
            .to_string()
            .replace(&build.display().to_string(), "the tarball's top directory");
        crate::error::BadInput(format!(
            "{from} is not a {} build dbperf recognises: {why}",
            req.engine
        ))
        .into()
    })
}

/// The basedir relative to the build's top (`.` for the top itself).
fn basedir_within(basedir: &Path, build: &Path) -> String {
    match basedir.strip_prefix(build) {
        Ok(r) if !r.as_os_str().is_empty() => r.display().to_string(),
        _ => ".".to_string(),
    }
}

/// Where the build came from: the user's file (its absolute path) or the URL curl fetched.
fn source_record(from: &str, local: Option<&Path>) -> SourceRecord {
    SourceRecord {
        client: if local.is_some() { "file" } else { "curl" }.into(),
        package: None,
        package_version: None,
        release: None,
        url: local.is_none().then(|| from.to_string()),
        file: local.map(|f| {
            std::path::absolute(f)
                .unwrap_or(f.to_path_buf())
                .display()
                .to_string()
        }),
        packages: Vec::new(),
    }
}

/// Downloads `from` with the user's curl into the staging directory, and opens what it wrote.
/// Deadlines that also fire on a trickle: 30 s to connect, and the transfer stops when it stays
/// below 1 KiB/s for a minute.
fn download(from: &str, staging: &Staging, p: &mut dyn Progress) -> anyhow::Result<File> {
    let name = "download";
    let out = staging.path().join(name);
    p.say(&format!("curl {from} ..."));
    let mut c = client("curl", "curl")?;
    // --fail: an HTTP error is an error, not a saved error page; curl itself refuses a body
    // shorter than its Content-Length.
    c.args(["--fail", "--silent", "--show-error", "--location"])
        .args(["--proto", "=http,https", "--proto-redir", "=http,https"])
        .args([
            "--connect-timeout",
            "30",
            "--speed-limit",
            "1024",
            "--speed-time",
            "60",
        ])
        .args(["--max-filesize", &archive::MAX_ARCHIVE.to_string()])
        .arg("--output")
        .arg(&out)
        .arg(from);
    super::output(c, &format!("curl {from}"))?;
    Ok(crate::safe_fs::open_regular(&out)?)
}
