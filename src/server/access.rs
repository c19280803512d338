//! Who can log in to a server dbperf just started: dbperf with the instance's password, and
//! nobody without it, over TCP or the unix socket. A config that brings its own authentication
//! (`hba_file`, `skip_grant_tables`, an init file of its own) would leave the server open to
//! every local user; such a start fails here, before anything is measured on it.

use std::time::{Duration, Instant};

use super::{Kind, Running};
use crate::dbms::mysql_auth;
use crate::dbms::mysql_wire::WireError;
use crate::dbms::{Endpoint, Timeouts};

/// One login attempt's deadline: the server already answers, so this is room for a busy host.
const LOGIN: Duration = Duration::from_secs(10);

/// The database a login goes to before the benchmark's exists.
fn admin_database(kind: Kind) -> &'static str {
    kind.facts().admin_database
}

fn timeouts() -> Timeouts {
    Timeouts {
        connect: LOGIN,
        statement: LOGIN,
        ddl: LOGIN,
        stop: None,
    }
}

/// A login attempt: Ok when the server let `ep` in; for the MySQL family the error tells a
/// refusal (the server's ERR packet) from a server that is not answering yet.
fn login(kind: Kind, ep: &Endpoint) -> Result<(), Refusal> {
    match kind {
        Kind::Postgres => crate::dbms::postgres::PgConn::connect_with(ep, timeouts())
            .map(|_| ())
            .map_err(|e| Refusal::Refused(e.message)),
        Kind::MariaDb | Kind::MySql => match mysql_auth::connect(ep, timeouts()) {
            Ok(_) => Ok(()),
            Err(e @ WireError::Server { .. }) => Err(Refusal::Refused(e.to_string())),
            Err(e) => Err(Refusal::NotYet(e.to_string())),
        },
    }
}

enum Refusal {
    Refused(String),
    /// No answer yet: mysqld runs its init file before it greets its first connection.
    NotYet(String),
}

/// Checks that `r` lets dbperf in with its password (waiting until `deadline` for a server
/// that is still running its init file) and refuses a login without one on both transports.
pub fn check(r: &mut Running, deadline: Instant) -> anyhow::Result<()> {
    let db = admin_database(r.kind);
    let with = r.endpoint(false, db);
    loop {
        match login(r.kind, &with) {
            Ok(()) => break,
            // A server that aborts after opening its port (an unknown option is read late)
            // is not worth waiting for.
            Err(Refusal::NotYet(_)) if !r.alive() => anyhow::bail!(
                "{} exited during start-up; the end of its log ({}):\n{}",
                r.kind.name(),
                r.log.display(),
                r.log_tail(25)
            ),
            Err(Refusal::NotYet(_)) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(Refusal::Refused(e) | Refusal::NotYet(e)) => anyhow::bail!(
                "{} refused dbperf's login as {} with the instance's password: {}; the end of \
                 its log ({}):\n{}",
                r.kind.name(),
                with.user,
                r.redact(&e),
                r.log.display(),
                r.log_tail(15)
            ),
        }
    }
    for socket in [false, true] {
        let mut without = r.endpoint(socket, db);
        without.password = None;
        if login(r.kind, &without).is_ok() {
            anyhow::bail!(
                "{} let {} in without a password ({}): the config must leave authentication to \
                 dbperf (no hba_file, skip_grant_tables or init_file), or every local user could \
                 log in",
                r.kind.name(),
                without.user,
                without.describe()
            );
        }
    }
    Ok(())
}
