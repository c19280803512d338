//! Who can log in to a server dbperf just started: dbperf with the instance's password, and
//! nobody without it, over TCP or the unix socket. A config that brings its own authentication
//! (`hba_file`, `skip_grant_tables`, an init file of its own) would leave the server open to
//! every local user; such a start fails here, before anything is measured on it.

use std::time::{Duration, Instant};

use super::flavor::Refusal;
use super::{Running, ServerEngine};
use crate::dbms::{Endpoint, Timeouts};

/// One login attempt's deadline: the server already answers, so this is room for a busy host.
const LOGIN: Duration = Duration::from_secs(10);

/// The database a login goes to before the benchmark's exists.
fn admin_database(server: ServerEngine) -> &'static str {
    server.facts.admin_database
}

fn timeouts() -> Timeouts {
    Timeouts {
        connect: LOGIN,
        statement: LOGIN,
        ddl: LOGIN,
        stop: None,
    }
}

/// A login attempt: Ok when the server let `ep` in; the flavor tells a refusal from a server
/// that is not answering yet.
fn login(server: ServerEngine, ep: &Endpoint) -> Result<(), Refusal> {
    server.flavor.login(ep, timeouts())
}

/// Checks that `r` lets dbperf in with its password (waiting until `deadline` for a server
/// that is still running its init file) and refuses a login without one on both transports.
pub fn check(r: &mut Running, deadline: Instant) -> anyhow::Result<()> {
    let db = admin_database(r.server);
    let with = r.endpoint(false, db);
    loop {
        match login(r.server, &with) {
            Ok(()) => break,
            // A server that aborts after opening its port (an unknown option is read late)
            // is not worth waiting for.
            Err(Refusal::NotYet(_)) if !r.alive() => anyhow::bail!(
                "{} exited during start-up; the end of its log ({}):\n{}",
                r.server.engine.name(),
                r.log.display(),
                r.log_tail(25)
            ),
            Err(Refusal::NotYet(_)) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(Refusal::Refused(e) | Refusal::NotYet(e)) => anyhow::bail!(
                "{} refused dbperf's login as {} with the instance's password: {}; the end of \
                 its log ({}):\n{}",
                r.server.engine.name(),
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
        if login(r.server, &without).is_ok() {
            anyhow::bail!(
                "{} let {} in without a password ({}): the config must leave authentication to \
                 dbperf (no hba_file, skip_grant_tables or init_file), or every local user could \
                 log in",
                r.server.engine.name(),
                without.user,
                without.describe()
            );
        }
    }
    Ok(())
}
