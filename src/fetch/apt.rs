//! MariaDB (with MyRocks) and PostgreSQL from Debian packages of bullseye, bookworm and
//! trixie, and Oracle MySQL from sid (unstable, the only release that packages it), through `apt-get download` with a private apt configuration, unpacked by src/fetch/archive.rs: its own
//! sources list, lists and cache under the build cache (`.apt/<release>/`). The system's apt
//! configuration is never written, no root is needed, and the mirror is the one the system's
//! own sources name (its apt.conf proxies apply too).
//!
//! Older releases' binaries run on a newer host with the few libraries the host lacks beside
//! them; newer releases' need their own loader and C library. Either way each ELF program of the
//! build is replaced by a small shell wrapper that runs the real one (`.NAME.real`) with the
//! build's libraries, so the build starts from any path with no further setup, and build.json
//! records how.

use crate::engines::Engine;
use std::fs;
use std::path::{Path, PathBuf};

use std::process::Command;
use std::time::{Duration, SystemTime};

use super::apt_build;
use super::version::Version;
use super::{
    archive, client, no_such_version, now_rfc3339, output, Build, BuildInfo, BuildSource, Cache,
    FetchRequest, Offer, Progress, SourceRecord, BUILD_SCHEMA,
};
use crate::error::bad_input;
use crate::safe_fs::tree::Rel;
use crate::safe_fs::{self, Also};

/// A Debian release and the packages that make each engine's build there. An engine it does
/// not name has none there, and the release's lists are never fetched for that engine.
struct Release {
    name: &'static str,
    /// Whether the release has a `-security` suite (sid has none).
    security: bool,
    /// Each engine's packages: the one whose version names the build, then the others of the
    /// set (Oracle MySQL: the server, then its client: mysqladmin, mysqldump; the server needs
    /// none).
    packages: &'static [(Engine, &'static [&'static str])],
}

const RELEASES: &[Release] = &[
    Release {
        name: "bullseye",
        security: true,
        packages: &[
            (
                Engine::MariaDb,
                &[
                    "mariadb-server-core-10.5",
                    "mariadb-server-10.5",
                    "mariadb-client-core-10.5",
                    "mariadb-plugin-rocksdb",
                ],
            ),
            (Engine::Postgres, &["postgresql-13"]),
        ],
    },
    Release {
        name: "bookworm",
        security: true,
        packages: &[
            (
                Engine::MariaDb,
                &[
                    "mariadb-server-core",
                    "mariadb-server",
                    "mariadb-client-core",
                    "mariadb-plugin-rocksdb",
                ],
            ),
            (Engine::Postgres, &["postgresql-15"]),
        ],
    },
    Release {
        name: "trixie",
        security: true,
        packages: &[
            // trixie's install script is in -server-core; my_print_defaults, which it calls, in
            // -client-core.
            (
                Engine::MariaDb,
                &[
                    "mariadb-server-core",
                    "mariadb-client-core",
                    "mariadb-plugin-rocksdb",
                ],
            ),
            (Engine::Postgres, &["postgresql-17"]),
        ],
    },
    // sid moves: the version it offers is the one it has that day (a cached build stays). Its
    // lists are fetched only for MySQL, the one engine no stable release packages.
    Release {
        name: "sid",
        security: false,
        packages: &[(Engine::MySql, &["mysql-server-core", "mysql-client-core"])],
    },
];

impl Release {
    /// The packages of an engine's build; the first is the one whose versions are offered.
    /// Empty: the release has none (every release for an engine Debian does not package).
    fn packages(&self, engine: Engine) -> &'static [&'static str] {
        self.packages
            .iter()
            .find(|(e, _)| *e == engine)
            .map_or(&[], |(_, p)| p)
    }

    /// The releases that package `engine`, oldest first.
    fn with(engine: Engine) -> impl Iterator<Item = &'static Release> {
        RELEASES
            .iter()
            .filter(move |r| !r.packages(engine).is_empty())
    }

    /// "Debian (bullseye, bookworm, trixie)": where `engine`'s builds come from, for messages.
    fn names(engine: Engine) -> String {
        let names: Vec<&str> = Release::with(engine).map(|r| r.name).collect();
        format!("Debian ({})", names.join(", "))
    }
}

/// `engine` when Debian packages it (the registry gives Debian builds to PostgreSQL, MariaDB
/// and MySQL: `fetch::fetch` checks); any other engine is refused here.
fn debian_build(engine: Engine) -> anyhow::Result<Engine> {
    if Release::with(engine).next().is_none() {
        anyhow::bail!("Debian has no {} builds", engine.entry().product)
    }
    Ok(engine)
}

/// The Debian mirrors the system's own apt sources name: (archive, security archive).
fn system_mirrors() -> anyhow::Result<(String, Option<String>)> {
    // The system's own files, read as any file dbperf did not write: regular, capped.
    let read = |p: &Path| {
        let limit = crate::untrusted::Limit {
            max: 1 << 20,
            what: "an apt sources file",
            links: crate::untrusted::Links::Follow,
        };
        crate::untrusted::read_text(p, limit).ok()
    };
    let mut texts = Vec::new();
    if let Some(t) = read(Path::new("/etc/apt/sources.list")) {
        texts.push((false, t));
    }
    if let Ok(rd) = fs::read_dir("/etc/apt/sources.list.d") {
        let mut paths: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            if ext == "list" || ext == "sources" {
                if let Some(t) = read(&p) {
                    texts.push((ext == "sources", t));
                }
            }
        }
    }
    let mut pairs: Vec<(String, String)> = Vec::new();
    for (deb822, t) in texts {
        if deb822 {
            for stanza in t.split("\n\n") {
                let field = |k: &str| {
                    stanza
                        .lines()
                        .find_map(|l| l.strip_prefix(k).map(|v| v.trim().to_string()))
                };
                if field("Types:").is_some_and(|x| !x.split_whitespace().any(|w| w == "deb")) {
                    continue;
                }
                if field("Enabled:").is_some_and(|x| x == "no") {
                    continue;
                }
                if let (Some(uris), Some(suites)) = (field("URIs:"), field("Suites:")) {
                    for u in uris.split_whitespace() {
                        for s in suites.split_whitespace() {
                            pairs.push((u.to_string(), s.to_string()));
                        }
                    }
                }
            }
        } else {
            for l in t.lines() {
                let mut w = l.split_whitespace().peekable();
                if w.next() != Some("deb") {
                    continue;
                }
                if w.peek().is_some_and(|x| x.starts_with('[')) {
                    for x in w.by_ref() {
                        if x.ends_with(']') {
                            break;
                        }
                    }
                }
                if let (Some(u), Some(s)) = (w.next(), w.next()) {
                    pairs.push((u.to_string(), s.to_string()));
                }
            }
        }
    }
    let debian = |u: &str| u.contains("debian");
    let main = pairs
        .iter()
        .find(|(u, s)| debian(u) && !s.contains("security") && !s.contains('/'))
        .map(|(u, _)| u.clone());
    let security = pairs
        .iter()
        .find(|(u, s)| debian(u) && s.contains("security"))
        .map(|(u, _)| u.clone());
    match main {
        Some(m) => Ok((m, security)),
        None => bad_input(
            "the system's apt sources (/etc/apt/sources.list, sources.list.d) name no Debian \
             archive to take packages of other releases from",
        ),
    }
}

/// apt-get and apt-cache with the private configuration of one release.
struct Private {
    dir: PathBuf,
    /// `<cache>/.apt`, and the release's directory in it, open.
    apt: safe_fs::Dir,
    here: safe_fs::Dir,
    release: &'static str,
    /// Whether this call made the release's directory: only then may a failed first update
    /// remove it again.
    made_now: bool,
}

impl Private {
    fn new(cache: &Cache, r: &'static Release) -> anyhow::Result<Private> {
        let release = r.name;
        // Walked one name at a time, never through a link, and owned by root or this user
        // only: a failed update removes what it made here.
        let root = safe_fs::make_dir_all(&cache.root, Also::Nobody)?;
        let apt = root.subdir(".apt", Also::Nobody)?;
        let made_now = !apt.has(release);
        let here = apt.subdir(release, Also::Nobody)?;
        let dir = here.path().to_path_buf();
        for path in [&["lists", "partial"][..], &["cache", "archives", "partial"]] {
            let mut d = here.subdir(path[0], Also::Nobody)?;
            for name in &path[1..] {
                // apt gives its `partial` directories to its own download user (_apt).
                let also = if *name == "partial" {
                    Also::Anyone
                } else {
                    Also::Nobody
                };
                d = d.subdir(name, also)?;
            }
        }
        let (main, security) = system_mirrors()?;
        let keyring = "/usr/share/keyrings/debian-archive-keyring.gpg";
        let signed = if Path::new(keyring).is_file() {
            format!("[signed-by={keyring}] ")
        } else {
            String::new()
        };
        let mut list = format!("deb {signed}{main} {release} main\n");
        if let Some(s) = security.filter(|_| r.security) {
            list.push_str(&format!("deb {signed}{s} {release}-security main\n"));
        }
        here.write_atomic("sources.list", list.as_bytes())?;
        Ok(Private {
            dir,
            apt,
            here,
            release,
            made_now,
        })
    }

    fn options(&self, c: &mut Command) {
        let d = self.dir.display();
        c.env("LC_ALL", "C")
            .arg("-o")
            .arg(format!("Dir::Etc::SourceList={d}/sources.list"))
            .args(["-o", "Dir::Etc::SourceParts=/dev/null"])
            .arg("-o")
            .arg(format!("Dir::State::Lists={d}/lists"))
            .arg("-o")
            .arg(format!("Dir::Cache={d}/cache"))
            .args(["-o", "Acquire::Languages=none"])
            // The system's pinning is for the system's release, not this one.
            .args(["-o", "Dir::Etc::Preferences=/dev/null"])
            .args(["-o", "Dir::Etc::PreferencesParts=/dev/null"]);
    }

    fn apt_get(&self) -> anyhow::Result<Command> {
        let mut c = client("apt-get", "apt")?;
        self.options(&mut c);
        Ok(c)
    }

    fn apt_cache(&self) -> anyhow::Result<Command> {
        let mut c = client("apt-cache", "apt")?;
        self.options(&mut c);
        Ok(c)
    }

    /// Downloads the release's package lists when they are missing or a day old. Lists that
    /// cannot be refreshed but were fetched before are used as they are, and said so.
    fn update(&self, p: &mut dyn Progress) -> anyhow::Result<()> {
        let stamp = "updated";
        let fresh = self
            .here
            .open_file(stamp)
            .and_then(|f| f.metadata())
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age < Duration::from_secs(86_400));
        if fresh {
            return Ok(());
        }
        p.say(&format!(
            "apt-get update of Debian {} (private lists, about 13 MB) ...",
            self.release
        ));
        let mut c = self.apt_get()?;
        // Without it a mirror that cannot be reached is only a warning, apt-get exits 0, and
        // the release would look as if it had no such package.
        c.args(["-o", "APT::Update::Error-Mode=any", "update"]);
        if let Err(e) = output(c, &format!("apt-get update ({})", self.release)) {
            if self.here.has(stamp) {
                p.say(&format!(
                    "{e:#}; using Debian {}'s lists as they were last fetched",
                    self.release
                ));
                return Ok(());
            }
            // Lists never fetched leave nothing behind.
            if self.made_now {
                let _ = self.apt.remove(self.release.as_ref());
                if self.apt.names().is_ok_and(|n| n.is_empty()) {
                    let _ = self.apt.remove_empty();
                }
            }
            return Err(e);
        }
        self.here.write_atomic(stamp, b"")?;
        Ok(())
    }

    /// (version, package version) of `pkg`, newest first.
    fn madison(&self, pkg: &str) -> anyhow::Result<Vec<(Version, String)>> {
        let mut c = self.apt_cache()?;
        c.args(["madison", pkg]);
        let o = output(c, &format!("apt-cache madison {pkg}"))?;
        let mut out: Vec<(Version, String)> = Vec::new();
        for l in String::from_utf8_lossy(&o.stdout).lines() {
            let mut f = l.split('|').map(str::trim);
            let (Some(name), Some(debver)) = (f.next(), f.next()) else {
                continue;
            };
            if name != pkg || out.iter().any(|(_, d)| d == debver) {
                continue;
            }
            if let Some(v) = upstream(debver) {
                out.push((v, debver.to_string()));
            }
        }
        out.sort_by(|a, b| b.0.cmp(&a.0));
        Ok(out)
    }

    /// The library packages `pkgs` need, transitively (the first of each alternative), JIT's
    /// LLVM and Perl modules left out.
    fn library_closure(&self, pkgs: &[String]) -> anyhow::Result<Vec<String>> {
        let mut seen: Vec<String> = Vec::new();
        let mut frontier: Vec<String> = pkgs.to_vec();
        while !frontier.is_empty() {
            let mut c = self.apt_cache()?;
            c.args([
                "depends",
                "--no-recommends",
                "--no-suggests",
                "--no-conflicts",
            ])
            .args(["--no-breaks", "--no-replaces", "--no-enhances"])
            .args(&frontier);
            let o = output(c, "apt-cache depends")?;
            let mut next = Vec::new();
            let mut in_alternative = false;
            for l in String::from_utf8_lossy(&o.stdout).lines() {
                let t = l.trim_start();
                let (alt, rest) = match t.strip_prefix('|') {
                    Some(r) => (true, r),
                    None => (false, t),
                };
                let Some(name) = rest
                    .strip_prefix("Depends:")
                    .or_else(|| rest.strip_prefix("PreDepends:"))
                    .map(str::trim)
                else {
                    continue;
                };
                // Only the first package of `a | b | c` is taken.
                let take = !in_alternative;
                in_alternative = alt;
                if !take || name.starts_with('<') {
                    continue;
                }
                let name = name.split(':').next().unwrap_or(name).to_string();
                let lib = name.starts_with("lib") || name == "zlib1g";
                if !lib
                    || name.ends_with("-perl")
                    || name.starts_with("libllvm")
                    || name.contains("-dev")
                    || seen.contains(&name)
                    || pkgs.contains(&name)
                {
                    continue;
                }
                seen.push(name.clone());
                next.push(name);
            }
            frontier = next;
        }
        seen.sort();
        Ok(seen)
    }
}

/// `1:10.5.23-0+deb11u1` -> 10.5.23; `13.23-0+deb11u4` -> 13.23.
fn upstream(debver: &str) -> Option<Version> {
    let v = debver.split_once(':').map(|x| x.1).unwrap_or(debver);
    let v = v.split(['-', '+', '~']).next()?;
    Version::parse(v)
}

/// Is the package installed on this host (by name)?
fn installed(pkg: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f", "${Status}", pkg])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        .unwrap_or(false)
}

/// Debian version order, by dpkg itself.
fn dpkg_newer(a: &str, b: &str) -> bool {
    Command::new("dpkg")
        .args(["--compare-versions", a, "gt", b])
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

fn host_libc() -> Option<String> {
    let o = Command::new("dpkg-query")
        .args(["-W", "-f", "${Version}", "libc6"])
        .output()
        .ok()?;
    let v = String::from_utf8_lossy(&o.stdout).trim().to_string();
    (!v.is_empty()).then_some(v)
}

pub fn offers(cache: &Cache, engine: Engine, p: &mut dyn Progress) -> anyhow::Result<Vec<Offer>> {
    let (offers, failed) = release_offers(cache, engine, p)?;
    if let (true, Some(e)) = (offers.is_empty(), failed) {
        return Err(e);
    }
    Ok(offers
        .into_iter()
        .map(|(r, v, debver)| Offer {
            version: v,
            source: BuildSource::Debian,
            detail: format!("{} {debver}", r.name),
        })
        .collect())
}

/// What the releases offer, newest first, and the last release whose lists could not be had
/// (skipped, and said so: one release's mirror failing leaves the others usable).
type ReleaseOffers = (
    Vec<(&'static Release, Version, String)>,
    Option<anyhow::Error>,
);

fn release_offers(
    cache: &Cache,
    engine: Engine,
    p: &mut dyn Progress,
) -> anyhow::Result<ReleaseOffers> {
    let build = debian_build(engine)?;
    let mut out = Vec::new();
    let mut failed = Vec::new();
    for r in Release::with(build) {
        let private = Private::new(cache, r)?;
        if let Err(e) = private.update(p) {
            failed.push((r.name, e));
            continue;
        }
        for (v, debver) in private.madison(r.packages(build)[0])? {
            out.push((r, v, debver));
        }
    }
    out.sort_by(|a, b| b.1.cmp(&a.1));
    if !out.is_empty() {
        for (name, e) in &failed {
            p.say(&format!("{e:#}; Debian {name} is left out"));
        }
    }
    Ok((out, failed.pop().map(|f| f.1)))
}

pub fn fetch(cache: &Cache, req: &FetchRequest, p: &mut dyn Progress) -> anyhow::Result<Build> {
    let (all, failed) = release_offers(cache, req.engine, p)?;
    let matching: Vec<&(&Release, Version, String)> = all
        .iter()
        .filter(|(_, v, _)| req.want.version.matches(v))
        .collect();
    if let (true, Some(e)) = (matching.is_empty(), failed) {
        // A release's lists could not be had: the version may well be there. A build of it
        // already in the cache still serves; otherwise this is a failure, not bad input.
        if let Some(b) = cache.find(req.engine, &req.want)? {
            p.say(&format!(
                "{} {} is already cached in {}",
                req.engine,
                b.info.version,
                b.dir.display()
            ));
            return Ok(b);
        }
        return Err(e);
    }
    if matching.is_empty() {
        let have: Vec<Version> = all.iter().map(|o| o.1.clone()).collect();
        return no_such_version(
            req.engine,
            &req.want,
            &Release::names(debian_build(req.engine)?),
            &have,
        );
    }
    // A prefix (`10.5`) may fall back to an older patch when the newest one's files are
    // missing from the archive (bullseye-security lists MariaDB 10.5.29 but serves no plugin).
    let mut last_err = None;
    for (r, v, debver) in matching.iter().take(3) {
        let key = format!("{v}{}", super::suffix(BuildSource::Debian, req.engine));
        if let Some(b) = cache.cached(req.engine, &key)? {
            if b.info.source.client != super::client_of(BuildSource::Debian) {
                return crate::error::bad_input(format!(
                    "{} {v} is in the build cache already from another source ({}); remove it \
                     first with `dbperf fetch --remove {} {v}`",
                    req.engine,
                    b.dir.display(),
                    req.engine
                ));
            }
            p.say(&format!(
                "{} {v} is already cached in {}",
                req.engine,
                b.dir.display()
            ));
            return Ok(b);
        }
        match fetch_one(cache, req.engine, r, v, debver, &key, p) {
            Ok(b) => return Ok(b),
            Err(e) if crate::error::is_bad_input(&e) => return Err(e),
            Err(e) => {
                p.say(&format!("{} {v} from Debian {}: {e:#}", req.engine, r.name));
                last_err = Some(e);
                if req.want.version == *v {
                    break;
                }
            }
        }
    }
    Err(last_err.unwrap_or_else(|| anyhow::anyhow!("no build could be fetched")))
}

/// apt-get downloads the build's packages at `debver` into `debs`, with the libraries the
/// host lacks; whether the build brings its own loader, and those libraries' packages.
fn download_debs(
    private: &Private,
    r: &Release,
    pkgs: &[String],
    debver: &str,
    debs: &Path,
    p: &mut dyn Progress,
) -> anyhow::Result<(bool, Vec<String>)> {
    // A newer release than the host brings its own loader and C library; an older one only
    // the libraries the host does not have.
    let release_libc = private
        .madison("libc6")?
        .first()
        .map(|x| x.1.clone())
        .unwrap_or_default();
    let own_loader = host_libc().is_none_or(|h| dpkg_newer(&release_libc, &h));
    let closure = private.library_closure(pkgs)?;
    let libs: Vec<String> = closure
        .into_iter()
        .filter(|l| own_loader || !installed(l))
        .collect();
    let mut args: Vec<String> = pkgs.iter().map(|n| format!("{n}={debver}")).collect();
    args.extend(libs.iter().cloned());
    p.say(&format!(
        "apt-get download from Debian {}: {} ...",
        r.name,
        args.join(" ")
    ));
    let mut c = private.apt_get()?;
    c.arg("download").args(&args).current_dir(debs);
    output(c, &format!("apt-get download ({})", r.name))?;
    Ok((own_loader, libs))
}

fn fetch_one(
    cache: &Cache,
    engine: Engine,
    r: &'static Release,
    version: &Version,
    debver: &str,
    key: &str,
    p: &mut dyn Progress,
) -> anyhow::Result<Build> {
    let private = Private::new(cache, r)?;
    let staging = cache.staging(&format!("{engine}-{key}"))?;
    let debs_dir = staging.dir.subdir("debs", Also::Nobody)?;
    debs_dir.set_mode(0o755)?;
    let debs = debs_dir.path().to_path_buf();
    let pkgs: Vec<String> = r
        .packages(debian_build(engine)?)
        .iter()
        .map(|s| s.to_string())
        .collect();
    let (own_loader, libs) = download_debs(&private, r, &pkgs, debver, &debs, p)?;
    let tree = &staging.build;
    let build = tree.path().to_path_buf();
    let debs = apt_build::unpack_debs(&debs_dir, tree)?;
    let mut run = apt_build::runtime(tree, r.name, own_loader, &libs)?;
    // Where the build's server is and how its --version names the version: its family's.
    let layout = crate::server::flavor_of(debian_build(engine)?)
        .ok_or_else(|| anyhow::anyhow!("{engine} is embedded: Debian has no server of it"))?
        .debian_layout(engine, &version.to_string());
    let (basedir, server, expect) = (layout.basedir, layout.server, layout.version_text);
    run.notes.extend(layout.note.map(String::from));
    super::check_runs(&build.join(&server), &expect)?;
    let info = BuildInfo {
        schema: BUILD_SCHEMA,
        engine: engine.name().into(),
        version: version.to_string(),
        family: format!("debian {}", r.name),
        source: SourceRecord {
            client: "apt-get".into(),
            package: Some(pkgs[0].clone()),
            package_version: Some(debver.to_string()),
            release: Some(r.name.to_string()),
            url: None,
            file: None,
            packages: debs.records,
        },
        sha256: archive::sha256_bytes(debs.manifest.as_bytes()),
        size: debs.size,
        fetched_at: now_rfc3339(),
        basedir,
        loader: run.loader,
        library_path: run.library_path,
        notes: run.notes,
    };
    let b = cache.install(&staging, &Rel::root(), key, &info)?;
    p.say(&format!(
        "{engine} {version} from Debian {} ({debver}): {}",
        r.name,
        b.dir.display()
    ));
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_with_debian_builds_has_packages_and_no_other_has() {
        for e in crate::engines::REGISTRY {
            let debian = e.builds.contains(&BuildSource::Debian);
            assert_eq!(
                Release::with(e.engine).next().is_some(),
                debian,
                "{}",
                e.name
            );
        }
    }

    #[test]
    fn debian_versions_give_upstream_versions() {
        assert_eq!(upstream("1:10.5.23-0+deb11u1"), Version::parse("10.5.23"));
        assert_eq!(upstream("13.23-0+deb11u4"), Version::parse("13.23"));
        assert_eq!(upstream("1:11.8.9+ds-0+deb13u1"), Version::parse("11.8.9"));
    }
}
