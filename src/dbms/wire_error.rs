//! The failure of a connection or of a server, by kind, for both of dbperf's protocol clients
//! (`pg_wire`, `mysql_wire`): what decides whose fault a failed connection is (`lost`), never
//! the sentence. Only the server's own error differs between the protocols, so it is the one
//! type parameter: PostgreSQL's ErrorResponse (`PgServer`), MySQL's ERR packet (`MyServer`).

use std::io;

use super::net;
use super::{Fault, Lost};

#[derive(Debug)]
pub enum WireError<S> {
    /// The server's own error.
    Server(S),
    /// Connecting failed: nothing listens there, the name has no address, no route to it, no
    /// connection accepted in time.
    Unreached(String),
    /// The connection broke; `kind` is the io error's, which says how (`net::lost_by`).
    Io {
        kind: io::ErrorKind,
        message: String,
    },
    /// The server sent what the protocol does not allow.
    Protocol(String),
    /// The server asks for what dbperf's client will not or cannot do: a login method it does
    /// not speak, the password in clear over TCP, a public key it cannot use, a LOCAL INFILE;
    /// or that login failed on the client's side (SCRAM).
    Refused(String),
    /// dbperf asked wrongly (a statement given the wrong number of parameters): the connection
    /// is fine.
    Misuse(String),
    /// dbperf itself ended the statement (a deadline, a cap on what it reads).
    Cut { fault: Fault, message: String },
}

/// PostgreSQL's ErrorResponse; `fatal` when the server ended the session with it.
#[derive(Debug, Clone)]
pub struct PgServer {
    pub severity: String,
    pub code: String,
    pub message: String,
    pub detail: String,
    pub fatal: bool,
}

impl std::fmt::Display for PgServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:  {}", self.severity, self.message)?;
        if !self.detail.is_empty() {
            write!(f, "\nDETAIL:  {}", self.detail)?;
        }
        write!(f, " (SQLSTATE {})", self.code)
    }
}

/// MySQL's and MariaDB's ERR packet.
#[derive(Debug, Clone)]
pub struct MyServer {
    pub code: u16,
    pub state: String,
    pub message: String,
}

impl std::fmt::Display for MyServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ERROR {} ({}): {}", self.code, self.state, self.message)
    }
}

impl<S: std::fmt::Display> std::fmt::Display for WireError<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Server(s) => s.fmt(f),
            WireError::Unreached(m)
            | WireError::Io { message: m, .. }
            | WireError::Protocol(m)
            | WireError::Refused(m)
            | WireError::Misuse(m)
            | WireError::Cut { message: m, .. } => f.write_str(m),
        }
    }
}

impl<S> From<io::Error> for WireError<S> {
    fn from(e: io::Error) -> Self {
        match net::cut_of(&e) {
            Some(c) => WireError::Cut {
                fault: c.fault,
                message: c.message,
            },
            None => WireError::Io {
                kind: e.kind(),
                message: net::lost(&e),
            },
        }
    }
}

impl<S> WireError<S> {
    pub fn fault(&self) -> Option<Fault> {
        match self {
            WireError::Cut { fault, .. } => Some(*fault),
            _ => None,
        }
    }

    /// Whose fault it is when the connection failed (`Lost`); None for the server's errors to a
    /// statement and for failures that say neither.
    pub fn lost(&self) -> Option<Lost> {
        match self {
            WireError::Server(_) | WireError::Misuse(_) => None,
            WireError::Unreached(_) | WireError::Refused(_) => Some(Lost::Refused),
            WireError::Io { kind, .. } => net::lost_by(*kind),
            WireError::Protocol(_) => Some(Lost::ServerFault),
            WireError::Cut { fault, .. } => net::lost_by_cut(*fault),
        }
    }

    /// `lost` for a failed login, where the server's own error is its refusal (a wrong
    /// password, an unknown database, too many connections, a server starting up or shutting
    /// down).
    pub fn lost_at_login(&self) -> Option<Lost> {
        match self {
            WireError::Server(_) => Some(Lost::Refused),
            _ => self.lost(),
        }
    }

    /// Connecting failed: the server was never reached, or it took the connection and broke
    /// it at once (`net::reached`), which is the server's doing.
    pub fn unreached(e: io::Error) -> Self {
        if net::reached(&e) {
            return e.into();
        }
        WireError::Unreached(net::lost(&e))
    }

    /// The protocol was broken by the server: it sent `what`.
    pub fn protocol(what: &str) -> Self {
        WireError::Protocol(format!("protocol error: the server sent {what}"))
    }
}
