//! dbperf's own client for the PostgreSQL frontend/backend protocol 3.0: the extended query
//! protocol for prepared statements and simple queries for setup, nothing else (no TLS, no COPY,
//! no cursors).
//!
//! Why not libpq: its per-query work (a `PGresult` allocated and freed per execution, parameter
//! arrays rebuilt, its input state machine) cost 0.6-0.9x sysbench's user CPU per point select,
//! against a goal of 0.7x. Here Bind/Execute/Sync are encoded straight from borrowed parameters
//! into one reused buffer and sent with one write, and rows are walked in place in the read
//! buffer. Authentication (MD5 and SCRAM-SHA-256) uses the `postgres-protocol` crate.
//!
//! Protocol reference: PostgreSQL documentation, "Frontend/Backend Protocol" (message flow and
//! formats).

use postgres_protocol::authentication::{md5_hash, sasl};

use super::keep::{Keep, Tally};
use super::net::{self, Addr, Net};
use super::wire_error::{PgServer, WireError};
use super::{Budget, Endpoint, Fault, Param, Timeouts, Transport};

/// SSLRequest: the one message a PostgreSQL server answers (with one byte) before any login,
/// which makes it the liveness probe of a connection that stopped getting answers.
const SSL_REQUEST: &[u8] = &[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];

/// More authentication exchanges than any method needs (SCRAM takes three): a server that
/// keeps asking is not logging anyone in.
const MAX_AUTH_ROUNDS: usize = 16;

pub const INT2: u32 = 21;
pub const INT4: u32 = 23;
pub const INT8: u32 = 20;

/// The PostgreSQL client's failures: the shared kinds, with the server's ErrorResponse.
pub type PgError = WireError<PgServer>;

fn protocol(what: &str) -> PgError {
    PgError::protocol(what)
}

type Result<T> = std::result::Result<T, PgError>;

/// A statement prepared on the server: its name and the parameter types the server inferred.
pub struct Prepared {
    name: String,
    pub types: Vec<u32>,
}

pub struct PgWire {
    net: Net,
    out: Vec<u8>,
    /// Where the message being encoded starts in `out`.
    msg_at: usize,
    named: usize,
}

/// The unix socket file for an endpoint's path: `.s.PGSQL.<port>` itself, or a directory with
/// the default port's file in it.
fn socket_file(path: &std::path::Path) -> std::path::PathBuf {
    let is_file = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(".s.PGSQL."));
    if is_file {
        path.to_path_buf()
    } else {
        path.join(".s.PGSQL.5432")
    }
}

fn addr(ep: &Endpoint) -> Addr {
    match &ep.transport {
        Transport::Tcp { host, port } => Addr::Tcp {
            host: host.clone(),
            port: *port,
        },
        Transport::Socket { path } => Addr::Unix(socket_file(path)),
    }
}

/// Whether the server answers a new connection within `within` (it replies to an SSLRequest
/// before any login).
pub fn answers(
    ep: &Endpoint,
    within: std::time::Duration,
    stop: Option<&std::sync::atomic::AtomicBool>,
) -> bool {
    net::answers(&addr(ep), SSL_REQUEST, within, stop)
}

impl PgWire {
    pub fn connect(ep: &Endpoint, timeouts: Timeouts) -> Result<PgWire> {
        let addr = addr(ep);
        let net = Net::connect(&addr, timeouts, SSL_REQUEST).map_err(PgError::unreached)?;
        let mut w = PgWire {
            net,
            out: Vec::with_capacity(16 * 1024),
            msg_at: 0,
            named: 0,
        };
        w.startup(ep)?;
        w.net.logged_in()?;
        Ok(w)
    }

    fn startup(&mut self, ep: &Endpoint) -> Result<()> {
        self.out.clear();
        self.out.extend_from_slice(&[0; 4]);
        self.out.extend_from_slice(&196_608i32.to_be_bytes()); // protocol 3.0
        for (k, v) in [
            ("user", ep.user.as_str()),
            ("database", ep.database.as_str()),
            ("application_name", "dbperf"),
            ("client_encoding", "UTF8"),
        ] {
            self.put_cstr(k);
            self.put_cstr(v);
        }
        self.out.push(0);
        let len = self.out.len() as i32;
        self.out[..4].copy_from_slice(&len.to_be_bytes());
        self.net.write_all(&self.out)?;
        self.authenticate(ep)?;
        // ParameterStatus, BackendKeyData, notices: then ready.
        self.until_ready(|_, _| Ok(()))
    }

    fn authenticate(&mut self, ep: &Endpoint) -> Result<()> {
        let mut scram: Option<sasl::ScramSha256> = None;
        let password = || {
            ep.password.as_deref().map(str::as_bytes).ok_or_else(|| {
                PgError::Refused(
                    "the server asks for a password and none was given (password_env in \
                     dbperf.toml)"
                        .into(),
                )
            })
        };
        for _ in 0..MAX_AUTH_ROUNDS {
            let (t, s, e) = self.read_message()?;
            let body = self.net.rbuf[s..e].to_vec();
            match t {
                b'E' => return Err(parse_error(&body, true)),
                b'R' => {}
                _ => return Err(protocol("something other than an authentication request")),
            }
            let mut r = Reader(&body);
            match r.i32()? {
                0 => return Ok(()),
                3 => {
                    let pw = password()?.to_vec();
                    self.begin(b'p');
                    self.out.extend_from_slice(&pw);
                    self.out.push(0);
                    self.finish_send()?;
                }
                5 => {
                    let salt: [u8; 4] = r.take(4)?.try_into().expect("4 bytes");
                    let hash = md5_hash(ep.user.as_bytes(), password()?, salt);
                    self.begin(b'p');
                    self.put_cstr(&hash);
                    self.finish_send()?;
                }
                10 => {
                    let mut offered = false;
                    while let Ok(m) = r.cstr() {
                        if m.is_empty() {
                            break;
                        }
                        offered |= m == sasl::SCRAM_SHA_256.as_bytes();
                    }
                    if !offered {
                        return Err(PgError::Refused(
                            "the server offers no SASL mechanism dbperf speaks (SCRAM-SHA-256)"
                                .into(),
                        ));
                    }
                    let s =
                        sasl::ScramSha256::new(password()?, sasl::ChannelBinding::unsupported());
                    self.begin(b'p');
                    self.put_cstr(sasl::SCRAM_SHA_256);
                    self.out
                        .extend_from_slice(&(s.message().len() as i32).to_be_bytes());
                    self.out.extend_from_slice(s.message());
                    self.finish_send()?;
                    scram = Some(s);
                }
                11 => {
                    let s = scram
                        .as_mut()
                        .ok_or_else(|| protocol("a SASL continuation before SASL began"))?;
                    s.update(r.0).map_err(|e| {
                        PgError::Refused(format!("SCRAM authentication failed: {e}"))
                    })?;
                    let msg = s.message().to_vec();
                    self.begin(b'p');
                    self.out.extend_from_slice(&msg);
                    self.finish_send()?;
                }
                12 => {
                    let mut s = scram
                        .take()
                        .ok_or_else(|| protocol("a SASL final message before SASL began"))?;
                    s.finish(r.0).map_err(|e| {
                        PgError::Refused(format!("SCRAM authentication failed: {e}"))
                    })?;
                }
                other => {
                    return Err(PgError::Refused(format!(
                        "the server asks for authentication method {other} (Kerberos, GSSAPI or \
                         SSPI); dbperf speaks trust, password, md5 and scram-sha-256"
                    )))
                }
            }
        }
        Err(protocol(&format!(
            "more than {MAX_AUTH_ROUNDS} authentication requests"
        )))
    }

    /// Runs SQL text (several statements allowed) and calls `row` for every row, columns as
    /// text (None for NULL). Reads to the end even after an error, which it then returns. Rows
    /// past `keep` end the statement (`Fault::TooMuch`) and the connection.
    pub fn simple_query(
        &mut self,
        sql: &str,
        budget: Budget,
        keep: Keep,
        mut row: impl FnMut(&[Option<&[u8]>]),
    ) -> Result<()> {
        self.begin(b'Q');
        self.put_cstr(sql);
        self.net.begin(budget);
        self.finish_send()?;
        let mut tally = Tally::new(keep);
        self.until_ready(|t, body| {
            if t == b'D' {
                // Setup and maintenance only: a Vec per row is fine here.
                let mut r = Reader(body);
                let n = r.i16()?.max(0) as usize;
                let mut cols = Vec::with_capacity(n);
                for _ in 0..n {
                    cols.push(r.value()?);
                }
                tally.row(&cols).map_err(|message| PgError::Cut {
                    fault: Fault::TooMuch,
                    message,
                })?;
                row(&cols);
            }
            Ok(())
        })
    }

    /// Runs one statement as SQL text (simple query protocol, not prepared) and walks every
    /// value of every row in place, as `execute` does. Returns (rows read, the command tag's
    /// count).
    pub fn simple_query_walk(&mut self, sql: &str, budget: Budget) -> Result<(u64, u64)> {
        self.begin(b'Q');
        self.put_cstr(sql);
        self.net.begin(budget);
        self.finish_send()?;
        self.walk_rows()
    }

    /// Prepares `sql` as a named statement and learns the parameter types the server inferred.
    pub fn prepare(&mut self, sql: &str, budget: Budget) -> Result<Prepared> {
        let name = format!("dbperf{}", self.named);
        self.named += 1;
        self.begin(b'P');
        self.put_cstr(&name);
        self.put_cstr(sql);
        self.out.extend_from_slice(&0i16.to_be_bytes());
        self.end_message();
        self.add(b'D');
        self.out.push(b'S');
        self.put_cstr(&name);
        self.end_message();
        self.add(b'S');
        self.end_message();
        self.net.begin(budget);
        self.flush()?;
        let mut types = Vec::new();
        self.until_ready(|t, body| {
            if t == b't' {
                let mut r = Reader(body);
                let n = r.i16()?.max(0);
                for _ in 0..n {
                    types.push(r.i32()? as u32);
                }
            }
            Ok(())
        })?;
        Ok(Prepared { name, types })
    }

    /// Binds and executes a prepared statement, walking every value of every row (handed to
    /// `black_box`, as a client using them would touch them). Returns (rows read, the count in
    /// the command tag: rows inserted, updated, deleted or selected).
    pub fn execute(
        &mut self,
        st: &Prepared,
        params: &[Param],
        budget: Budget,
    ) -> Result<(u64, u64)> {
        if params.len() != st.types.len() {
            return Err(PgError::Misuse(format!(
                "the statement takes {} parameters, {} given",
                st.types.len(),
                params.len()
            )));
        }
        self.begin(b'B');
        self.out.push(0); // unnamed portal
        self.put_cstr(&st.name);
        // Integers travel in binary where the server typed the placeholder as an integer that
        // holds the value; everything else as text, which the server parses by the type.
        let n = params.len() as i16;
        self.out.extend_from_slice(&n.to_be_bytes());
        for (p, &ty) in params.iter().zip(&st.types) {
            let binary = binary_int(p, ty).is_some();
            self.out.extend_from_slice(&(binary as i16).to_be_bytes());
        }
        self.out.extend_from_slice(&n.to_be_bytes());
        for (p, &ty) in params.iter().zip(&st.types) {
            let at = self.out.len();
            self.out.extend_from_slice(&[0; 4]);
            match (*p, binary_int(p, ty)) {
                (_, Some((bytes, len))) => self.out.extend_from_slice(&bytes[8 - len..]),
                (Param::Int(v), None) => self.out.extend_from_slice(itoa_buf(v).as_slice()),
                (Param::Text(s) | Param::DateTime(s), None) => {
                    self.out.extend_from_slice(s.as_bytes())
                }
            }
            let len = (self.out.len() - at - 4) as i32;
            self.out[at..at + 4].copy_from_slice(&len.to_be_bytes());
        }
        self.out.extend_from_slice(&0i16.to_be_bytes()); // results as text
        self.end_message();
        self.add(b'E');
        self.out.push(0);
        self.out.extend_from_slice(&0i32.to_be_bytes());
        self.end_message();
        self.add(b'S');
        self.end_message();
        self.net.begin(budget);
        self.flush()?;
        self.walk_rows()
    }

    /// Reads a result to ReadyForQuery, handing every value of every row to `black_box` (as a
    /// client using them would touch them); returns (rows, the command tag's count).
    fn walk_rows(&mut self) -> Result<(u64, u64)> {
        let mut rows = 0u64;
        let mut count = 0u64;
        self.until_ready(|t, body| {
            match t {
                b'D' => {
                    let mut r = Reader(body);
                    let n = r.i16()?;
                    for _ in 0..n {
                        std::hint::black_box(r.value()?);
                    }
                    rows += 1;
                }
                b'C' => count = tag_count(body),
                _ => {}
            }
            Ok(())
        })?;
        Ok((rows, count))
    }

    /// Reads messages up to ReadyForQuery, passing the others to `f`. An ErrorResponse is kept
    /// and returned once the server is ready again (the connection stays usable); if the server
    /// closes the connection after it (a FATAL error), that error is returned, not the EOF.
    fn until_ready(&mut self, mut f: impl FnMut(u8, &[u8]) -> Result<()>) -> Result<()> {
        let mut error: Option<PgError> = None;
        loop {
            let (t, s, e) = match self.read_message() {
                Ok(m) => m,
                Err(io) => {
                    return Err(match error {
                        Some(PgError::Server(server)) => PgError::Server(PgServer {
                            fatal: true,
                            ..server
                        }),
                        _ => io,
                    })
                }
            };
            let body = &self.net.rbuf[s..e];
            match t {
                b'Z' => return error.map_or(Ok(()), Err),
                b'E' => {
                    if error.is_none() {
                        error = Some(parse_error(body, false));
                    }
                }
                // Notices, parameter changes, notifications: nothing dbperf acts on.
                b'N' | b'S' | b'A' | b'K' => {}
                _ if error.is_some() => {}
                _ => {
                    if let Err(e) = f(t, body) {
                        // Stopped in the middle of the reply: the rest is never read.
                        self.net.abandon(e.to_string(), e.fault());
                        return Err(e);
                    }
                }
            }
        }
    }

    // ---- framing ----

    /// Starts the only message of a request.
    fn begin(&mut self, t: u8) {
        self.out.clear();
        self.add(t);
    }

    /// Starts another message of the same request; its length is set by `end_message`.
    fn add(&mut self, t: u8) {
        self.msg_at = self.out.len();
        self.out.push(t);
        self.out.extend_from_slice(&[0; 4]);
    }

    /// Sets the length of the message started last.
    fn end_message(&mut self) {
        let at = self.msg_at;
        let len = (self.out.len() - at - 1) as i32;
        self.out[at + 1..at + 5].copy_from_slice(&len.to_be_bytes());
    }

    fn finish_send(&mut self) -> Result<()> {
        self.end_message();
        self.flush()
    }

    fn flush(&mut self) -> Result<()> {
        Ok(self.net.write_all(&self.out)?)
    }

    fn put_cstr(&mut self, s: &str) {
        self.out.extend_from_slice(s.as_bytes());
        self.out.push(0);
    }

    /// Reads one whole message; returns its type and its body's range in the read buffer, valid
    /// until the next read.
    fn read_message(&mut self) -> Result<(u8, usize, usize)> {
        self.net.fill(5)?;
        let h = &self.net.rbuf[self.net.rpos..self.net.rpos + 5];
        let t = h[0];
        let len = i32::from_be_bytes([h[1], h[2], h[3], h[4]]);
        if len < 4 {
            return Err(protocol("a message length under 4"));
        }
        if len as usize > net::MAX_MESSAGE {
            return Err(protocol(&format!(
                "a message of {len} bytes, over the {} MiB dbperf accepts",
                net::MAX_MESSAGE >> 20
            )));
        }
        let len = len as usize - 4;
        self.net.fill(5 + len)?;
        let start = self.net.rpos + 5;
        self.net.rpos = start + len;
        Ok((t, start, start + len))
    }
}

impl Drop for PgWire {
    fn drop(&mut self) {
        self.begin(b'X');
        self.end_message();
        let _ = self.flush();
    }
}

/// The value in big-endian bytes and its width, when `p` is an integer and the server typed the
/// placeholder as an integer wide enough for it.
fn binary_int(p: &Param, ty: u32) -> Option<([u8; 8], usize)> {
    let Param::Int(v) = *p else { return None };
    let width = match ty {
        INT8 => 8,
        INT4 if i32::try_from(v).is_ok() => 4,
        INT2 if i16::try_from(v).is_ok() => 2,
        _ => return None,
    };
    // The low `width` bytes of a two's-complement i64 are the same value at that width.
    Some((v.to_be_bytes(), width))
}

/// Decimal text of an integer, without allocating.
struct Itoa {
    buf: [u8; 20],
    start: usize,
}

impl Itoa {
    fn as_slice(&self) -> &[u8] {
        &self.buf[self.start..]
    }
}

fn itoa_buf(v: i64) -> Itoa {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let neg = v < 0;
    let mut n = v.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if neg {
        i -= 1;
        buf[i] = b'-';
    }
    Itoa { buf, start: i }
}

/// The row count at the end of a command tag: "INSERT 0 100", "DELETE 5", "SELECT 1".
fn tag_count(body: &[u8]) -> u64 {
    let tag = body.strip_suffix(&[0]).unwrap_or(body);
    let digits = tag.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    // A count too large for u64 (a server can send any digits) saturates rather than wraps.
    tag[tag.len() - digits..].iter().fold(0u64, |n, d| {
        n.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    })
}

fn parse_error(body: &[u8], fatal: bool) -> PgError {
    let (mut severity, mut code, mut message, mut detail) = (
        String::from("ERROR"),
        String::new(),
        String::new(),
        String::new(),
    );
    let mut r = Reader(body);
    while let Ok(field) = r.u8() {
        if field == 0 {
            break;
        }
        let Ok(v) = r.cstr() else { break };
        let v = crate::untrusted::server_text(v);
        match field {
            b'V' => severity = v,
            b'S' if severity == "ERROR" => severity = v,
            b'C' => code = v,
            b'M' => message = v,
            b'D' => detail = v,
            _ => {}
        }
    }
    let fatal = fatal || severity == "FATAL" || severity == "PANIC";
    PgError::Server(PgServer {
        severity,
        code,
        message,
        detail,
        fatal,
    })
}

/// A cursor over a message body; every read checks the length.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        net::take(&mut self.0, n).ok_or_else(|| protocol("a message shorter than its fields"))
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn i16(&mut self) -> Result<i16> {
        let b = self.take(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self) -> Result<i32> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A column value of a DataRow: length, -1 for NULL.
    fn value(&mut self) -> Result<Option<&'a [u8]>> {
        let n = self.i32()?;
        if n < 0 {
            return Ok(None);
        }
        Ok(Some(self.take(n as usize)?))
    }

    fn cstr(&mut self) -> Result<&'a [u8]> {
        net::take_nul(&mut self.0).ok_or_else(|| protocol("a string without its terminating NUL"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbms::Lost;
    use std::io;

    fn connect_error(port: u16) -> PgError {
        let ep = Endpoint {
            transport: Transport::Tcp {
                host: "127.0.0.1".into(),
                port,
            },
            user: "u".into(),
            password: None,
            database: "d".into(),
        };
        match PgWire::connect(&ep, Timeouts::default()) {
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
                PgError::Io {
                    kind: io::ErrorKind::ConnectionReset,
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(e.lost_at_login(), Some(Lost::ServerFault));
    }

    #[test]
    fn nothing_listening_is_a_refusal() {
        let e = connect_error(net::nothing_listens());
        assert!(matches!(e, PgError::Unreached(_)), "{e:?}");
        assert!(e
            .to_string()
            .starts_with("nothing accepts connections there"));
        assert_eq!(e.lost_at_login(), Some(Lost::Refused));
    }

    #[test]
    fn each_kind_says_whose_fault_a_failed_connection_is() {
        // A FATAL error to a login (a wrong password) is a refusal; to a statement, nothing.
        let refused = parse_error(b"SFATAL\0C28P01\0Mpassword authentication failed\0\0", true);
        assert_eq!(refused.lost(), None);
        assert_eq!(refused.lost_at_login(), Some(Lost::Refused));
        assert_eq!(protocol("junk").lost_at_login(), Some(Lost::ServerFault));
        assert_eq!(
            PgError::Refused("no password".into()).lost(),
            Some(Lost::Refused)
        );
        assert_eq!(PgError::Misuse("3 given".into()).lost(), None);
    }

    #[test]
    fn command_tags_give_their_count() {
        assert_eq!(tag_count(b"INSERT 0 100\0"), 100);
        assert_eq!(tag_count(b"DELETE 5\0"), 5);
        assert_eq!(tag_count(b"SELECT 1\0"), 1);
        assert_eq!(tag_count(b"CREATE TABLE\0"), 0);
    }

    /// Found by tests/fuzz.rs: a tag with more digits than a u64 holds overflowed (a panic with
    /// overflow checks, a wrapped count without).
    #[test]
    fn command_tag_counts_beyond_u64_saturate() {
        assert_eq!(tag_count(b"A 6886012978347533906 2\0"), 2);
        assert_eq!(tag_count(b"A 68860129783475339062\0"), u64::MAX);
        assert_eq!(tag_count(b"SELECT 18446744073709551615\0"), u64::MAX);
    }

    #[test]
    fn integers_are_binary_only_where_the_type_holds_them() {
        assert_eq!(binary_int(&Param::Int(-2), INT8).unwrap().1, 8);
        let (b, w) = binary_int(&Param::Int(-2), INT4).unwrap();
        assert_eq!(&b[8 - w..], &(-2i32).to_be_bytes());
        assert!(binary_int(&Param::Int(1 << 40), INT4).is_none());
        assert!(binary_int(&Param::Int(70_000), INT2).is_none());
        assert!(
            binary_int(&Param::Int(1), 1700).is_none(),
            "numeric goes as text"
        );
        assert!(binary_int(&Param::Text("1"), INT8).is_none());
    }

    #[test]
    fn integers_as_text() {
        for v in [0i64, 7, -7, 1234567890, i64::MIN, i64::MAX] {
            assert_eq!(itoa_buf(v).as_slice(), v.to_string().as_bytes());
        }
    }

    #[test]
    fn error_responses_keep_severity_code_message_and_detail() {
        let body = b"SERROR\0VERROR\0C40P01\0Mdeadlock detected\0DProcess 1 waits\0\0";
        let e = parse_error(body, false);
        assert_eq!(
            e.to_string(),
            "ERROR:  deadlock detected\nDETAIL:  Process 1 waits (SQLSTATE 40P01)"
        );
        assert!(matches!(e, PgError::Server(PgServer { fatal: false, .. })));
        let e = parse_error(b"SFATAL\0VFATAL\0C57P01\0Mterminating\0\0", false);
        assert!(matches!(e, PgError::Server(PgServer { fatal: true, .. })));
    }

    #[test]
    fn socket_paths_name_the_file_or_its_directory() {
        assert_eq!(
            socket_file("/run/pg/.s.PGSQL.5544".as_ref()),
            std::path::PathBuf::from("/run/pg/.s.PGSQL.5544")
        );
        assert_eq!(
            socket_file("/var/run/postgresql".as_ref()),
            std::path::PathBuf::from("/var/run/postgresql/.s.PGSQL.5432")
        );
    }
}
