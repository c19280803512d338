//! dbperf's own client for the MySQL/MariaDB client/server protocol: prepared statements over
//! the binary protocol and plain text queries, nothing else (no TLS, no compression, no cursors,
//! no LOCAL INFILE).
//!
//! Why not a general driver: the client's own CPU per query is part of what dbperf reports and
//! must stay well under sysbench's (libmariadb). The `mysql` crate cost about as much user CPU as
//! all of sysbench per point select (a `Vec<Value>` per execution, a `Row` allocated per row,
//! layers of framing), and it reads right after writing, which on a unix socket costs a second
//! wake-up per query. Here a statement is encoded straight from borrowed parameters into one
//! reused buffer, results are walked in place in one reused read buffer, and a unix socket is
//! polled for input before reading. The authentication crypto (scrambles, RSA) comes from
//! `mysql_common`, the protocol crate under the `mysql` crate.
//!
//! Protocol reference: the MySQL source's "Client/Server Protocol" pages and MariaDB's
//! "clientserver-protocol" knowledge base; both servers speak the subset used here identically.

use super::keep::{Keep, Tally};
use super::mysql_packet::{column_type, datetime, parse_ok, put_lenenc, ty, walk_binary_row};
pub(super) use super::mysql_packet::{parse_err, protocol, Reader};
use super::net::{self, Addr, Net};
use super::{Budget, DbError, Endpoint, Fault, Param, Timeouts, Transport};

mod cap {
    pub const LONG_PASSWORD: u32 = 1;
    pub const LONG_FLAG: u32 = 1 << 2;
    pub const CONNECT_WITH_DB: u32 = 1 << 3;
    pub const PROTOCOL_41: u32 = 1 << 9;
    pub const TRANSACTIONS: u32 = 1 << 13;
    pub const SECURE_CONNECTION: u32 = 1 << 15;
    pub const MULTI_STATEMENTS: u32 = 1 << 16;
    pub const MULTI_RESULTS: u32 = 1 << 17;
    pub const PS_MULTI_RESULTS: u32 = 1 << 18;
    pub const PLUGIN_AUTH: u32 = 1 << 19;
    pub const PLUGIN_AUTH_LENENC_DATA: u32 = 1 << 21;
    pub const DEPRECATE_EOF: u32 = 1 << 24;
}

const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;
const MAX_PAYLOAD: usize = 0xFF_FFFF;
/// No table or result has more columns (MySQL's limit is 4096, MariaDB's too).
const MAX_COLUMNS: u64 = 4096;
/// utf8mb4_general_ci: known to every MariaDB and MySQL 5.5+.
const CHARSET: u8 = 45;

const COM_QUIT: u8 = 0x01;
const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;

pub use super::mysql_packet::{Done, WireError};

/// What dbperf's sessions see of a failure of the MySQL client.
pub fn into_db(e: WireError) -> DbError {
    let (transient, code) = match &e {
        WireError::Server(s) => (is_transient(s.code), Some(s.code.to_string())),
        _ => (false, None),
    };
    DbError {
        message: e.to_string(),
        transient,
        code,
        fault: e.fault(),
        lost: e.lost(),
    }
}

type Result<T> = std::result::Result<T, WireError>;

/// A prepared statement: its server id and the types of the columns it returns.
pub struct Prepared {
    id: u32,
    params: usize,
    /// Parameter types sent with the last execution; the same types need not be sent again.
    sent_types: Vec<u8>,
}

pub struct Wire {
    net: Net,
    out: Vec<u8>,
    seq: u8,
    caps: u32,
    /// Column types of the result being read, reused between results.
    col_types: Vec<u8>,
}

pub(super) struct Handshake {
    pub nonce: Vec<u8>,
    pub plugin: String,
}

fn addr(e: &Endpoint) -> Addr {
    match &e.transport {
        Transport::Tcp { host, port } => Addr::Tcp {
            host: host.clone(),
            port: *port,
        },
        Transport::Socket { path } => Addr::Unix(path.clone()),
    }
}

/// Server error codes worth going on after by default, sysbench's `--mysql-ignore-errors`
/// default: lock wait timeout (1205), deadlock (1213) and "record has changed since last read"
/// (1020, MariaDB 11.6+ on write conflicts under innodb_snapshot_isolation). MyRocks maps its
/// lock timeouts to 1205 and both its deadlocks and its snapshot conflicts to 1213, so nothing
/// engine-specific is needed. Everything else (syntax, lost connection 2006/2013, a full disk)
/// means the step cannot go on.
pub fn is_transient(code: u16) -> bool {
    matches!(code, 1205 | 1213 | 1020)
}

/// Whether the server answers a new connection within `within` (it sends its greeting).
pub fn answers(
    e: &Endpoint,
    within: std::time::Duration,
    stop: Option<&std::sync::atomic::AtomicBool>,
) -> bool {
    net::answers(&addr(e), b"", within, stop)
}

impl Wire {
    /// Connected over exactly the transport the endpoint names, with the server's greeting read;
    /// the login that follows is mysql_auth's (`mysql_auth::connect`).
    pub(super) fn greeted(e: &Endpoint, timeouts: Timeouts) -> Result<(Wire, Handshake)> {
        let addr = addr(e);
        // The server speaks first: its greeting is the sign of life a probe waits for.
        let net = Net::connect(&addr, timeouts, b"").map_err(WireError::unreached)?;
        let mut w = Wire {
            net,
            out: Vec::with_capacity(16 * 1024),
            seq: 0,
            caps: 0,
            col_types: Vec::new(),
        };
        let hs = w.read_handshake()?;
        Ok((w, hs))
    }

    /// The login is over: statements from now on run under their own deadlines.
    pub(super) fn logged_in(&mut self) -> Result<()> {
        self.net.logged_in()?;
        Ok(())
    }

    pub(super) fn is_unix(&self) -> bool {
        self.net.is_unix()
    }

    fn read_handshake(&mut self) -> Result<Handshake> {
        let (s, e) = self.read_packet()?;
        let p = &self.net.rbuf[s..e];
        if p.first() == Some(&0xFF) {
            return Err(parse_err(p, true));
        }
        let mut r = Reader(p);
        if r.u8()? != 10 {
            return Err(protocol("a handshake of a protocol version other than 10"));
        }
        r.nul_str()?; // server version
        r.take(4)?; // connection id
        let mut nonce = r.take(8)?.to_vec();
        r.take(1)?;
        let mut caps = r.u16()? as u32;
        let mut plugin = String::new();
        if !r.0.is_empty() {
            r.take(1)?; // charset
            r.take(2)?; // status
            caps |= (r.u16()? as u32) << 16;
            let data_len = r.u8()? as usize;
            r.take(10)?;
            if caps & cap::SECURE_CONNECTION != 0 {
                let n = data_len.saturating_sub(8).max(13);
                let part = r.take(n.min(r.0.len()))?;
                // The second part ends with a NUL that is not part of the nonce.
                let part = part.strip_suffix(&[0]).unwrap_or(part);
                nonce.extend_from_slice(part);
            }
            if caps & cap::PLUGIN_AUTH != 0 {
                plugin = String::from_utf8_lossy(r.nul_str().unwrap_or(r.0)).into_owned();
            }
        }
        if caps & cap::PROTOCOL_41 == 0 {
            return Err(WireError::Refused(
                "the server predates the MySQL 4.1 protocol, which dbperf needs".into(),
            ));
        }
        let want = cap::LONG_PASSWORD
            | cap::LONG_FLAG
            | cap::CONNECT_WITH_DB
            | cap::PROTOCOL_41
            | cap::TRANSACTIONS
            | cap::SECURE_CONNECTION
            | cap::MULTI_STATEMENTS
            | cap::MULTI_RESULTS
            | cap::PS_MULTI_RESULTS
            | cap::PLUGIN_AUTH
            | cap::PLUGIN_AUTH_LENENC_DATA
            | cap::DEPRECATE_EOF;
        self.caps = caps & want;
        Ok(Handshake { nonce, plugin })
    }

    /// The handshake response (login request), with the first authentication data.
    pub(super) fn send_login(&mut self, e: &Endpoint, plugin: &str, auth: &[u8]) -> Result<()> {
        self.begin(self.seq);
        self.put_u32(self.caps);
        self.put_u32(MAX_PAYLOAD as u32);
        self.out.push(CHARSET);
        self.out.extend_from_slice(&[0; 23]);
        self.out.extend_from_slice(e.user.as_bytes());
        self.out.push(0);
        if self.caps & cap::PLUGIN_AUTH_LENENC_DATA != 0 {
            self.put_lenenc(auth.len() as u64);
        } else {
            self.out.push(auth.len() as u8);
        }
        self.out.extend_from_slice(auth);
        self.out.extend_from_slice(e.database.as_bytes());
        self.out.push(0);
        if self.caps & cap::PLUGIN_AUTH != 0 {
            self.out.extend_from_slice(plugin.as_bytes());
            self.out.push(0);
        }
        self.send()
    }

    /// One packet of authentication data, continuing the login exchange's sequence.
    pub(super) fn send_auth_data(&mut self, data: &[u8]) -> Result<()> {
        self.begin(self.seq);
        self.out.extend_from_slice(data);
        self.send()
    }

    /// The next packet of the login exchange, as a copy (it is small and rare).
    pub(super) fn read_auth_packet(&mut self) -> Result<Vec<u8>> {
        let (s, e) = self.read_packet()?;
        Ok(self.net.rbuf[s..e].to_vec())
    }

    /// Runs SQL text (several statements allowed) and calls `row` for every row of every result,
    /// with the row's columns as text (None for NULL). Stops at the first error. Rows past
    /// `keep` end the statement (`Fault::TooMuch`) and the connection.
    pub fn query_text(
        &mut self,
        sql: &str,
        budget: Budget,
        keep: Keep,
        mut row: impl FnMut(&[Option<&[u8]>]),
    ) -> Result<Done> {
        let mut tally = Tally::new(keep);
        let (_, done) = self.text_results(sql, budget, |p, n| {
            // Text queries through here are setup and maintenance, not the measured path: a Vec
            // per row is fine.
            let mut cols = Vec::with_capacity(n);
            let mut r = Reader(p);
            for _ in 0..n {
                if r.0.first() == Some(&0xFB) {
                    r.take(1)?;
                    cols.push(None);
                } else {
                    cols.push(Some(r.lenenc_bytes()?));
                }
            }
            tally.row(&cols).map_err(|message| WireError::Cut {
                fault: Fault::TooMuch,
                message,
            })?;
            row(&cols);
            Ok(())
        })?;
        Ok(done)
    }

    /// Runs one statement as SQL text (COM_QUERY, not prepared) and walks every value of every
    /// row in place, as `execute` does for prepared statements. Returns rows read and what the
    /// final OK packet said.
    pub fn query_text_walk(&mut self, sql: &str, budget: Budget) -> Result<(u64, Done)> {
        self.text_results(sql, budget, |p, n| {
            let mut r = Reader(p);
            for _ in 0..n {
                if r.0.first() == Some(&0xFB) {
                    r.take(1)?;
                } else {
                    std::hint::black_box(r.lenenc_bytes()?);
                }
            }
            Ok(())
        })
    }

    /// Sends SQL text and reads every result, passing each row packet and its column count to
    /// `row`. Returns rows read and the last OK packet's content.
    fn text_results(
        &mut self,
        sql: &str,
        budget: Budget,
        mut row: impl FnMut(&[u8], usize) -> Result<()>,
    ) -> Result<(u64, Done)> {
        self.begin(0);
        self.out.push(COM_QUERY);
        self.out.extend_from_slice(sql.as_bytes());
        self.net.begin(budget);
        self.send()?;
        let mut rows = 0u64;
        let mut last = Done::default();
        loop {
            let status = match self.read_result_head()? {
                Head::Ok(status, done) => {
                    last = done;
                    status
                }
                Head::Columns(n) => loop {
                    let (s, e) = self.read_packet()?;
                    let p = &self.net.rbuf[s..e];
                    match self.row_or_end(p)? {
                        Some(status) => break status,
                        None => {
                            if let Err(e) = row(p, n) {
                                // Stopped in the middle of the rows: the rest is never read.
                                self.net.abandon(e.to_string(), e.fault());
                                return Err(e);
                            }
                            rows += 1;
                        }
                    }
                },
            };
            if status & SERVER_MORE_RESULTS_EXISTS == 0 {
                return Ok((rows, last));
            }
        }
    }

    pub fn prepare(&mut self, sql: &str, budget: Budget) -> Result<Prepared> {
        self.begin(0);
        self.out.push(COM_STMT_PREPARE);
        self.out.extend_from_slice(sql.as_bytes());
        self.net.begin(budget);
        self.send()?;
        let (s, e) = self.read_packet()?;
        let p = &self.net.rbuf[s..e];
        if p.first() == Some(&0xFF) {
            return Err(parse_err(p, true));
        }
        let mut r = Reader(p);
        if r.u8()? != 0 {
            return Err(protocol("a prepare reply that is neither OK nor an error"));
        }
        let id = r.u32()?;
        let columns = r.u16()? as usize;
        let params = r.u16()? as usize;
        // Parameter and column definitions follow; executions bring their own column types.
        for n in [params, columns] {
            if n > 0 {
                for _ in 0..n {
                    self.read_packet()?;
                }
                if self.caps & cap::DEPRECATE_EOF == 0 {
                    self.read_packet()?;
                }
            }
        }
        Ok(Prepared {
            id,
            params,
            sent_types: Vec::new(),
        })
    }

    /// Executes a prepared statement and walks its rows (each column's bytes handed to
    /// `black_box`, as a client using the values would touch them). Returns rows read and what
    /// the final OK packet said.
    pub fn execute(
        &mut self,
        st: &mut Prepared,
        params: &[Param],
        budget: Budget,
    ) -> Result<(u64, Done)> {
        if params.len() != st.params {
            return Err(WireError::Misuse(format!(
                "the statement takes {} parameters, {} given",
                st.params,
                params.len()
            )));
        }
        self.begin(0);
        self.out.push(COM_STMT_EXECUTE);
        self.put_u32(st.id);
        self.out.push(0); // no cursor
        self.put_u32(1); // iteration count
        if !params.is_empty() {
            // No parameter is ever NULL.
            let bitmap = params.len().div_ceil(8);
            self.out.resize(self.out.len() + bitmap, 0);
            let types_at = self.out.len() + 1;
            self.out.push(1);
            for p in params {
                let t = match p {
                    Param::Int(_) => ty::LONGLONG,
                    Param::Text(_) => ty::VAR_STRING,
                    Param::DateTime(s) if datetime(s).is_some() => ty::DATETIME,
                    Param::DateTime(_) => ty::VAR_STRING,
                };
                self.out.extend_from_slice(&[t, 0]);
            }
            // Types are only resent when they changed (libmariadb does the same after a bind).
            if st.sent_types == self.out[types_at..] {
                self.out.truncate(types_at);
                self.out[types_at - 1] = 0;
            } else {
                st.sent_types.clear();
                st.sent_types.extend_from_slice(&self.out[types_at..]);
            }
            for p in params {
                match *p {
                    Param::Int(v) => self.out.extend_from_slice(&v.to_le_bytes()),
                    Param::Text(s) => self.put_lenenc_bytes(s.as_bytes()),
                    Param::DateTime(s) => match datetime(s) {
                        Some(d) => self.out.extend_from_slice(&d),
                        None => self.put_lenenc_bytes(s.as_bytes()),
                    },
                }
            }
        }
        self.net.begin(budget);
        self.send()?;
        let mut rows = 0u64;
        let mut last = Done::default();
        loop {
            let status = match self.read_result_head()? {
                Head::Ok(status, done) => {
                    last = done;
                    status
                }
                Head::Columns(_) => loop {
                    let (s, e) = self.read_packet()?;
                    let p = &self.net.rbuf[s..e];
                    if let Some(status) = self.row_or_end(p)? {
                        break status;
                    }
                    walk_binary_row(p, &self.col_types)?;
                    rows += 1;
                },
            };
            if status & SERVER_MORE_RESULTS_EXISTS == 0 {
                return Ok((rows, last));
            }
        }
    }

    /// The first packet of a result: OK, an error, or a column count followed by the column
    /// definitions (read here, keeping each column's type).
    fn read_result_head(&mut self) -> Result<Head> {
        let (s, e) = self.read_packet()?;
        let p = &self.net.rbuf[s..e];
        match p.first() {
            Some(0x00) => {
                let (status, done) = parse_ok(p)?;
                Ok(Head::Ok(status, done))
            }
            Some(0xFF) => Err(parse_err(p, true)),
            Some(0xFB) => Err(WireError::Refused(
                "the server asked for a LOCAL INFILE, which dbperf does not send".into(),
            )),
            _ => {
                let n = Reader(p).lenenc()?;
                if n > MAX_COLUMNS {
                    return Err(protocol(&format!("a result of {n} columns")));
                }
                let n = n as usize;
                self.col_types.clear();
                for _ in 0..n {
                    let (s, e) = self.read_packet()?;
                    let t = column_type(&self.net.rbuf[s..e])?;
                    self.col_types.push(t);
                }
                if self.caps & cap::DEPRECATE_EOF == 0 {
                    self.read_packet()?;
                }
                Ok(Head::Columns(n))
            }
        }
    }

    /// None for a row; the server status for the packet that ends the rows; the error for an
    /// ERR packet.
    fn row_or_end(&self, p: &[u8]) -> Result<Option<u16>> {
        match p.first() {
            Some(0xFF) => Err(parse_err(p, true)),
            // A row can start with 0xFE only as the 8-byte length of a value over 16 MiB, so a
            // short packet starting with 0xFE is the end.
            Some(0xFE) if p.len() < MAX_PAYLOAD => {
                if self.caps & cap::DEPRECATE_EOF != 0 {
                    Ok(Some(parse_ok(p)?.0))
                } else {
                    let mut r = Reader(&p[1..]);
                    r.u16()?; // warnings
                    Ok(Some(r.u16()?))
                }
            }
            _ => Ok(None),
        }
    }

    // ---- framing ----

    /// Starts a packet with sequence number `seq`; the header is filled in by `send`.
    fn begin(&mut self, seq: u8) {
        self.out.clear();
        self.out.extend_from_slice(&[0, 0, 0, seq]);
    }

    fn put_u32(&mut self, v: u32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    fn put_lenenc(&mut self, v: u64) {
        put_lenenc(&mut self.out, v);
    }

    fn put_lenenc_bytes(&mut self, b: &[u8]) {
        self.put_lenenc(b.len() as u64);
        self.out.extend_from_slice(b);
    }

    /// Writes the packet begun with `begin`, split into 16 MiB pieces when it is larger.
    fn send(&mut self) -> Result<()> {
        let len = self.out.len() - 4;
        let seq = self.out[3];
        if len < MAX_PAYLOAD {
            self.out[..3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
            self.seq = seq.wrapping_add(1);
            return self.write_out();
        }
        let payload = self.out.split_off(4);
        self.out.clear();
        let mut seq = seq;
        let mut chunks = payload.chunks(MAX_PAYLOAD).peekable();
        while let Some(c) = chunks.next() {
            self.out
                .extend_from_slice(&(c.len() as u32).to_le_bytes()[..3]);
            self.out.push(seq);
            self.out.extend_from_slice(c);
            seq = seq.wrapping_add(1);
            if chunks.peek().is_none() && c.len() == MAX_PAYLOAD {
                // A payload of an exact multiple of 16 MiB ends with an empty packet.
                self.out.extend_from_slice(&[0, 0, 0, seq]);
                seq = seq.wrapping_add(1);
            }
        }
        self.seq = seq;
        self.write_out()
    }

    fn write_out(&mut self) -> Result<()> {
        Ok(self.net.write_all(&self.out)?)
    }

    /// Reads one whole packet (joining 16 MiB pieces) into the read buffer; returns its
    /// payload's range there, valid until the next read.
    fn read_packet(&mut self) -> Result<(usize, usize)> {
        // Offsets are kept from `rpos` (the packet's first header), which `fill` may move.
        self.net.fill(4)?;
        let mut len = self.header(self.net.rpos);
        let mut total = 0;
        loop {
            if total + len > net::MAX_MESSAGE {
                return Err(protocol(&format!(
                    "a packet of over {} MiB, more than dbperf accepts",
                    net::MAX_MESSAGE >> 20
                )));
            }
            self.net.fill(4 + total + len)?;
            total += len;
            if len < MAX_PAYLOAD {
                break;
            }
            // The next piece's header is cut out so the payload is contiguous.
            self.net.fill(4 + total + 4)?;
            let at = self.net.rpos + 4 + total;
            len = self.header(at);
            self.net.rbuf.copy_within(at + 4..self.net.rend, at);
            self.net.rend -= 4;
        }
        let start = self.net.rpos + 4;
        self.net.rpos = start + total;
        Ok((start, start + total))
    }

    /// The payload length of the packet header at `at`; notes its sequence number.
    fn header(&mut self, at: usize) -> usize {
        let h = &self.net.rbuf[at..at + 4];
        self.seq = h[3].wrapping_add(1);
        u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        self.begin(0);
        self.out.push(COM_QUIT);
        let _ = self.send();
    }
}

enum Head {
    Ok(u16, Done),
    Columns(usize),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbms::wire_error::MyServer;
    use crate::dbms::Lost;
    use std::io;

    #[test]
    fn only_lock_timeouts_and_deadlocks_are_transient() {
        assert!(is_transient(1205));
        assert!(is_transient(1213));
        assert!(
            is_transient(1020),
            "MariaDB 11.6+ write conflicts, as sysbench"
        );
        // syntax, server gone, lost connection, unknown table, duplicate key, error during commit
        for code in [1064, 2006, 2013, 1146, 1062, 1180] {
            assert!(!is_transient(code), "{code}");
        }
    }

    fn endpoint(port: u16) -> Endpoint {
        Endpoint {
            transport: Transport::Tcp {
                host: "127.0.0.1".into(),
                port,
            },
            user: "u".into(),
            password: None,
            database: "d".into(),
        }
    }

    fn connect_error(port: u16) -> WireError {
        match super::super::mysql_auth::connect(&endpoint(port), Timeouts::default()) {
            Ok(_) => panic!("connected to port {port}"),
            Err(e) => e,
        }
    }

    #[test]
    fn a_reset_during_the_login_is_the_servers_fault_by_its_kind() {
        let e = connect_error(net::resetting());
        assert!(
            matches!(
                e,
                WireError::Io {
                    kind: io::ErrorKind::ConnectionReset,
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(e.lost_at_login(), Some(Lost::ServerFault));
        assert_eq!(into_db(e).lost, Some(Lost::ServerFault));
    }

    #[test]
    fn nothing_listening_is_a_refusal() {
        let e = connect_error(net::nothing_listens());
        assert!(matches!(e, WireError::Unreached(_)), "{e:?}");
        assert!(e
            .to_string()
            .starts_with("nothing accepts connections there"));
        assert_eq!(e.lost_at_login(), Some(Lost::Refused));
    }

    #[test]
    fn each_kind_says_whose_fault_a_failed_connection_is() {
        let server = WireError::Server(MyServer {
            code: 1045,
            state: "28000".into(),
            message: "Access denied".into(),
        });
        // An error to a statement says nothing of the connection; to a login it is a refusal.
        assert_eq!(server.lost(), None);
        assert_eq!(server.lost_at_login(), Some(Lost::Refused));
        assert_eq!(protocol("junk").lost(), Some(Lost::ServerFault));
        assert_eq!(
            WireError::Refused("an unknown plugin".into()).lost_at_login(),
            Some(Lost::Refused)
        );
        let silent = WireError::from(io::Error::new(
            io::ErrorKind::TimedOut,
            net::Cut {
                fault: Fault::NoAnswer,
                message: super::super::no_answer(std::time::Duration::from_secs(1)),
            },
        ));
        assert_eq!(silent.lost(), Some(Lost::ServerFault));
        let d = into_db(silent);
        assert_eq!(
            (d.fault, d.lost),
            (Some(Fault::NoAnswer), Some(Lost::ServerFault))
        );
        let eof = WireError::from(io::Error::from(io::ErrorKind::UnexpectedEof));
        assert_eq!(
            eof.to_string(),
            "lost connection to the server (it closed the connection)"
        );
        assert_eq!(eof.lost(), Some(Lost::ServerFault));
    }
}
