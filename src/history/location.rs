//! Where the history lives: a SQLite file (the default, `dbperf-history.sqlite`) or a PostgreSQL
//! database named by a connection URL, which a team can share.

use std::path::{Path, PathBuf};

use crate::dbms::{Endpoint, Transport};
use crate::error::BadInput;

/// The history database's login when neither the location nor PGUSER names one.
const DEFAULT_USER: &str = "postgres"; // a PostgreSQL role, not an engine's name

pub const DEFAULT_FILE: &str = "dbperf-history.sqlite";

#[derive(Debug, Clone, PartialEq)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(Endpoint),
}

impl Location {
    /// `--db` as given: a `postgres://` or `postgresql://` URL, else a SQLite file path.
    pub fn parse(s: &str) -> anyhow::Result<Location> {
        for scheme in ["postgres://", "postgresql://"] {
            if let Some(rest) = s.strip_prefix(scheme) {
                return parse_url(rest).map(Location::Postgres);
            }
        }
        if s.contains("://") {
            return Err(BadInput(format!(
                "--db {s}: give a SQLite file path or a postgres:// URL"
            ))
            .into());
        }
        if s.is_empty() {
            return Err(BadInput(
                "--db is empty: give a SQLite file path or a postgres:// URL".into(),
            )
            .into());
        }
        Ok(Location::Sqlite(PathBuf::from(s)))
    }

    /// For messages: never the password.
    pub fn describe(&self) -> String {
        match self {
            Location::Sqlite(p) => format!("SQLite {}", p.display()),
            Location::Postgres(ep) => format!("PostgreSQL {}", ep.describe()),
        }
    }
}

/// `[user[:password]@][host][:port][/database][?host=/socket/dir&port=N&user=U&password=P]`,
/// as libpq reads it (percent-encoded parts decoded). The password may also come from
/// PGPASSWORD; it is never printed.
fn parse_url(rest: &str) -> anyhow::Result<Endpoint> {
    let bad = |why: &str| -> anyhow::Error {
        BadInput(format!(
            "the PostgreSQL URL is not usable ({why}); write postgres://USER@HOST:PORT/DATABASE"
        ))
        .into()
    };
    let (main, query) = match rest.split_once('?') {
        Some((m, q)) => (m, Some(q)),
        None => (rest, None),
    };
    let (authority, database) = match main.split_once('/') {
        Some((a, d)) => (a, decode(d).ok_or_else(|| bad("bad percent-encoding"))?),
        None => (main, String::new()),
    };
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let mut user = None;
    let mut password = None;
    if let Some(u) = userinfo {
        let (name, pw) = match u.split_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (u, None),
        };
        user = Some(decode(name).ok_or_else(|| bad("bad percent-encoding"))?);
        if let Some(p) = pw {
            password = Some(decode(p).ok_or_else(|| bad("bad percent-encoding"))?);
        }
    }
    let (mut host, mut port) = split_host_port(hostport).ok_or_else(|| bad("bad port"))?;
    let mut socket_dir: Option<PathBuf> = None;
    if let Some(q) = query {
        for pair in q.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| bad("a parameter without ="))?;
            let v = decode(v).ok_or_else(|| bad("bad percent-encoding"))?;
            match k {
                "host" if v.starts_with('/') => socket_dir = Some(PathBuf::from(v)),
                "host" => host = Some(v),
                "port" => port = Some(v.parse().map_err(|_| bad("bad port"))?),
                "user" => user = Some(v),
                "password" => password = Some(v),
                "dbname" => return Ok(finish(host, port, socket_dir, user, password, v)),
                "sslmode" if v == "disable" || v == "prefer" || v == "allow" => {}
                other => return Err(bad(&format!("parameter {other} is not supported"))),
            }
        }
    }
    if let Some(h) = &host {
        if h.starts_with('/') {
            socket_dir = Some(PathBuf::from(h));
        }
    }
    Ok(finish(host, port, socket_dir, user, password, database))
}

fn finish(
    host: Option<String>,
    port: Option<u16>,
    socket_dir: Option<PathBuf>,
    user: Option<String>,
    password: Option<String>,
    database: String,
) -> Endpoint {
    let port = port.unwrap_or(5432);
    let transport = match socket_dir {
        Some(d) => Transport::Socket {
            path: Path::new(&d).join(format!(".s.PGSQL.{port}")),
        },
        None => Transport::Tcp {
            host: host
                .filter(|h| !h.is_empty())
                .unwrap_or_else(|| "127.0.0.1".into()),
            port,
        },
    };
    let user = user
        .filter(|u| !u.is_empty())
        .or_else(|| std::env::var("PGUSER").ok())
        .unwrap_or_else(|| DEFAULT_USER.into());
    Endpoint {
        transport,
        password: password.or_else(|| std::env::var("PGPASSWORD").ok()),
        database: if database.is_empty() {
            user.clone()
        } else {
            database
        },
        user,
    }
}

/// (host, port); `[::1]:5433` for IPv6.
fn split_host_port(s: &str) -> Option<(Option<String>, Option<u16>)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p.parse().ok()?),
            None if after.is_empty() => None,
            None => return None,
        };
        return Some((Some(h.to_string()), port));
    }
    match s.rsplit_once(':') {
        Some((h, p)) => Some((
            (!h.is_empty()).then(|| decode(h)).flatten(),
            Some(p.parse().ok()?),
        )),
        None => Some(((!s.is_empty()).then(|| decode(s)).flatten(), None)),
    }
}

fn decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_paths() {
        assert_eq!(
            Location::parse("h.sqlite").unwrap(),
            Location::Sqlite("h.sqlite".into())
        );
        let Location::Postgres(ep) =
            Location::parse("postgres://dbperf:s%40cret@127.0.0.1:5433/ib").unwrap()
        else {
            panic!()
        };
        assert_eq!(
            ep.transport,
            Transport::Tcp {
                host: "127.0.0.1".into(),
                port: 5433
            }
        );
        assert_eq!(ep.user, "dbperf");
        assert_eq!(ep.password.as_deref(), Some("s@cret"));
        assert_eq!(ep.database, "ib");
        let Location::Postgres(ep) =
            Location::parse("postgresql://u@/hist?host=/tmp/sock&port=5555").unwrap()
        else {
            panic!()
        };
        assert_eq!(
            ep.transport,
            Transport::Socket {
                path: "/tmp/sock/.s.PGSQL.5555".into()
            }
        );
        assert!(Location::parse("mysql://x").is_err());
        assert!(Location::parse("postgres://h:notaport/x").is_err());
        assert!(Location::parse("postgres://h/x?frobnicate=1").is_err());
    }
}
