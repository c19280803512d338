//! The byte stream under dbperf's protocol clients (PostgreSQL and MySQL): one TCP or unix socket,
//! one reusable read buffer, whole messages written with one `write`.

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{Budget, Fault, Lost, Timeouts};

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

/// How long one blocking wait on a socket lasts before dbperf looks at the run's stop flag and
/// the wait's deadline again: short enough that Ctrl-C stops a statement the server is slow to
/// answer at once, long enough that a waiting connection wakes only a few times a second. A wait
/// that gets its bytes returns as soon as they arrive, so the slices cost nothing while the
/// server answers.
const SLICE: Duration = Duration::from_millis(200);

impl Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }

    fn set_read_timeout(&self, d: Duration) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(Some(d)),
            Stream::Unix(s) => s.set_read_timeout(Some(d)),
        }
    }

    fn set_write_timeout(&self, d: Duration) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(Some(d)),
            Stream::Unix(s) => s.set_write_timeout(Some(d)),
        }
    }
}

/// Where a server listens, kept so a stalled connection can check whether the server still
/// answers a new one.
#[derive(Debug, Clone)]
pub enum Addr {
    Tcp { host: String, port: u16 },
    Unix(PathBuf),
}

/// Why dbperf itself ended a wait on the server. Carried inside the `io::Error` so that its
/// `Fault` reaches the protocol client's error, and from there `DbError::fault`, as a type.
#[derive(Debug, Clone)]
pub struct Cut {
    pub fault: Fault,
    pub message: String,
}

impl std::fmt::Display for Cut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Cut {}

impl Cut {
    fn into_io(self) -> io::Error {
        io::Error::new(io::ErrorKind::TimedOut, self)
    }
}

/// The `Cut` inside an error of this module, if dbperf itself ended the wait.
pub fn cut_of(e: &io::Error) -> Option<Cut> {
    e.get_ref()?.downcast_ref::<Cut>().cloned()
}

/// Every wait on the server is bounded: while logging in by one deadline for the whole login,
/// afterwards by the statement's deadline (`begin`) and by the statement timeout per silent wait
/// (extended only while the server proves it is alive by answering a new connection).
enum Phase {
    Login { until: Instant },
    Statements,
}

pub struct Net {
    stream: Stream,
    /// Bytes `rbuf[rpos..rend]` have been read and not yet consumed.
    pub rbuf: Vec<u8>,
    pub rpos: usize,
    pub rend: usize,
    addr: Addr,
    timeouts: Timeouts,
    phase: Phase,
    /// What a liveness probe sends for the server to answer (PostgreSQL waits for the client,
    /// MySQL speaks first: empty).
    hello: &'static [u8],
    /// Why the connection can no longer be used: a wait failed part way through a message, or
    /// the reply was abandoned (`abandon`).
    broken: Option<Broken>,
    /// When the current wait's first slice ran out without a byte moving (None while bytes
    /// move): the statement timeout counts from here.
    blocked_since: Option<Instant>,
    /// The statement under way: by when it must be done, whatever the server sends meanwhile.
    deadline: Option<Deadline>,
}

struct Broken {
    kind: io::ErrorKind,
    message: String,
    fault: Option<Fault>,
}

#[derive(Clone, Copy)]
struct Deadline {
    at: Instant,
    budget: Budget,
}

/// A read buffer grown past this for a large message is given back once the message is read.
const KEEP_BUFFER: usize = 1 << 20;
const INITIAL_BUFFER: usize = 64 * 1024;

/// The longest message or packet dbperf accepts from a server, whatever its length field says:
/// far above any row the benchmarks read (a few KiB), far below what would hurt the host.
pub const MAX_MESSAGE: usize = 64 * 1024 * 1024;

impl Net {
    /// Connects within `timeouts.connect`; the login that follows must finish by the same
    /// deadline, then `logged_in` switches to statement waits.
    pub fn connect(addr: &Addr, timeouts: Timeouts, hello: &'static [u8]) -> io::Result<Net> {
        let connect = timeouts.connect;
        let until = super::later(Instant::now(), connect);
        let stream = open(addr, connect)?;
        let n = Net {
            stream,
            rbuf: vec![0; INITIAL_BUFFER],
            rpos: 0,
            rend: 0,
            addr: addr.clone(),
            timeouts,
            phase: Phase::Login { until },
            hello,
            broken: None,
            blocked_since: None,
            deadline: None,
        };
        n.set_timeouts(connect)?;
        Ok(n)
    }

    /// The login is over: from now on each wait is bounded by the statement timeout, and the
    /// socket's own timeout is one slice for good.
    pub fn logged_in(&mut self) -> io::Result<()> {
        self.phase = Phase::Statements;
        self.set_timeouts(self.timeouts.statement)
    }

    /// A statement is sent now: from here it has until its budget's deadline (the statement
    /// timeout for a benchmark statement, --ddl-timeout for a long one), however the server
    /// trickles its bytes.
    pub fn begin(&mut self, budget: Budget) {
        let within = match budget {
            Budget::Operation => self.timeouts.statement,
            Budget::Long => self.timeouts.ddl,
        };
        self.deadline = Some(Deadline {
            at: super::later(Instant::now(), within),
            budget,
        });
        self.blocked_since = None;
        if self.rpos == self.rend && self.rbuf.len() > KEEP_BUFFER {
            // A large message of the last statement is not kept for the connection's life.
            self.rpos = 0;
            self.rend = 0;
            self.rbuf = vec![0; INITIAL_BUFFER];
        }
    }

    /// The reply under way is given up (a protocol client stopped reading it): the connection
    /// is somewhere in its middle and is not used again.
    pub fn abandon(&mut self, message: String, fault: Option<Fault>) {
        if self.broken.is_none() {
            self.broken = Some(Broken {
                kind: io::ErrorKind::InvalidData,
                message,
                fault,
            });
        }
    }

    pub fn is_unix(&self) -> bool {
        matches!(self.stream, Stream::Unix(_))
    }

    fn fd(&self) -> RawFd {
        match &self.stream {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        }
    }

    /// Sets the socket's timeouts to one slice of a wait of at most `d`.
    fn set_timeouts(&self, d: Duration) -> io::Result<()> {
        let d = d.min(SLICE).max(Duration::from_millis(1));
        // Reads on a unix socket wait in poll(), which takes its own timeout.
        if !self.is_unix() {
            self.stream.set_read_timeout(d)?;
        }
        self.stream.set_write_timeout(d)
    }

    fn stopping(&self) -> bool {
        self.timeouts
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// A slice of a wait ran out with nothing moved: Ok to wait another slice, or the error that
    /// ends the wait (the run is stopping, the login's deadline passed, the statement timeout
    /// passed and the server does not answer a new connection).
    fn waited_a_slice(&mut self) -> io::Result<()> {
        if self.stopping() {
            return Err(self.break_with(io::Error::new(
                io::ErrorKind::Interrupted,
                super::STOPPED_WAITING,
            )));
        }
        let now = Instant::now();
        match self.phase {
            Phase::Login { until } if now >= until => {
                let e = self.login_timeout();
                Err(self.break_with(e))
            }
            Phase::Login { .. } => Ok(()),
            Phase::Statements => {
                self.check_deadline()?;
                if self.deadline.is_some_and(|d| d.budget == Budget::Operation) {
                    // Its deadline is the statement timeout: no silence can outlast it.
                    return Ok(());
                }
                let since = *self.blocked_since.get_or_insert(now);
                // The first slice ran out before `since` was taken.
                if now - since + SLICE.min(self.timeouts.statement) < self.timeouts.statement {
                    return Ok(());
                }
                self.blocked_since = None;
                self.waited_too_long()
            }
        }
    }

    fn break_with(&mut self, e: io::Error) -> io::Error {
        self.broken = Some(Broken {
            kind: e.kind(),
            message: e.to_string(),
            fault: cut_of(&e).map(|c| c.fault),
        });
        e
    }

    /// The statement's error once its deadline has passed, whether bytes still arrive or not.
    fn check_deadline(&mut self) -> io::Result<()> {
        let Some(d) = self.deadline else {
            return Ok(());
        };
        if !matches!(self.phase, Phase::Statements) || Instant::now() < d.at {
            return Ok(());
        }
        let cut = match d.budget {
            Budget::Operation => Cut {
                fault: Fault::NoAnswer,
                message: super::no_answer(self.timeouts.statement),
            },
            Budget::Long => Cut {
                fault: Fault::LongStatement,
                message: super::long_statement(self.timeouts.ddl),
            },
        };
        Err(self.break_with(cut.into_io()))
    }

    /// How long the next wait may take, or the error when the login's deadline has passed.
    fn wait_budget(&self) -> io::Result<Duration> {
        match self.phase {
            Phase::Statements => Ok(self.timeouts.statement),
            Phase::Login { until } => {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    Err(self.login_timeout())
                } else {
                    Ok(left)
                }
            }
        }
    }

    fn login_timeout(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "the server did not complete the login within {}",
                super::seconds(self.timeouts.connect)
            ),
        )
    }

    /// A statement waited its whole timeout. The server is asked for a sign of life on a new
    /// connection: Ok to wait again when it answers (it is busy with this statement), the
    /// statement timeout's error when it does not.
    fn waited_too_long(&mut self) -> io::Result<()> {
        let left = self.deadline.map_or(Duration::MAX, |d| {
            d.at.saturating_duration_since(Instant::now())
        });
        let within = self
            .timeouts
            .statement
            .min(self.timeouts.connect)
            .min(left.max(Duration::from_millis(1)));
        let stop = self.timeouts.stop.clone();
        let alive = answers(&self.addr, self.hello, within, stop.as_deref());
        if self.stopping() {
            return self.waited_a_slice();
        }
        if alive {
            return self.check_deadline();
        }
        let cut = Cut {
            fault: Fault::NoAnswer,
            message: super::no_answer(self.timeouts.statement),
        };
        Err(self.break_with(cut.into_io()))
    }

    fn check_usable(&self) -> io::Result<()> {
        match &self.broken {
            Some(b) => Err(match b.fault {
                Some(fault) => io::Error::new(
                    b.kind,
                    Cut {
                        fault,
                        message: b.message.clone(),
                    },
                ),
                None => io::Error::new(b.kind, b.message.clone()),
            }),
            None => Ok(()),
        }
    }

    pub fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.check_usable()?;
        let mut off = 0;
        while off < buf.len() {
            if let Phase::Login { .. } = self.phase {
                self.set_timeouts(self.wait_budget()?)?;
            }
            // A server that takes the request a byte at a time does not extend it.
            self.check_deadline()?;
            match self.stream.write(&buf[off..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(k) => {
                    off += k;
                    self.blocked_since = None;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if timed_out(&e) => self.waited_a_slice()?,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Makes at least `n` bytes available from `rpos`, reading as needed. May move the unread
    /// bytes to the front of the buffer, so offsets must be kept relative to `rpos`. `n` is
    /// refused above `MAX_MESSAGE`, so no length a server sends decides an allocation.
    pub fn fill(&mut self, n: usize) -> io::Result<()> {
        self.check_usable()?;
        if n > MAX_MESSAGE + 64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "protocol error: the server announced a message of {n} bytes, over the \
                     {} MiB dbperf accepts",
                    MAX_MESSAGE >> 20
                ),
            ));
        }
        while self.rend - self.rpos < n {
            // Bytes that trickle in do not move the statement's deadline.
            self.check_deadline()?;
            if self.rpos == self.rend {
                self.rpos = 0;
                self.rend = 0;
            } else if self.rpos + n > self.rbuf.len() {
                self.rbuf.copy_within(self.rpos..self.rend, 0);
                self.rend -= self.rpos;
                self.rpos = 0;
            }
            if self.rend == self.rbuf.len() {
                // Grown as the bytes arrive, doubling, not to what a length field announces: a
                // server that announces 60 MiB and sends nothing costs nothing.
                let want = n.next_power_of_two().min(MAX_MESSAGE + 64).max(n);
                let to = (self.rbuf.len() * 2).min(want);
                // Exactly that: resize alone may double the capacity past the bound.
                self.rbuf.reserve_exact(to - self.rbuf.len());
                self.rbuf.resize(to, 0);
            }
            let budget = self.wait_budget()?;
            if self.is_unix() {
                if !wait_readable(self.fd(), budget.min(SLICE))? {
                    self.waited_a_slice()?;
                    continue;
                }
            } else if let Phase::Login { .. } = self.phase {
                self.set_timeouts(budget)?;
            }
            match self.stream.read(&mut self.rbuf[self.rend..]) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(k) => {
                    self.rend += k;
                    self.blocked_since = None;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if timed_out(&e) => self.waited_a_slice()?,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// A socket timeout (SO_RCVTIMEO, SO_SNDTIMEO) shows as EAGAIN.
fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

fn open(addr: &Addr, within: Duration) -> io::Result<Stream> {
    match addr {
        Addr::Tcp { host, port } => {
            let mut last = io::Error::new(
                io::ErrorKind::NotFound,
                format!("{host} has no address to connect to"),
            );
            for a in (host.as_str(), *port).to_socket_addrs()? {
                match TcpStream::connect_timeout(&a, within) {
                    Ok(s) => {
                        // Every request is one write; waiting for Nagle would add 40 ms to some
                        // of them.
                        s.set_nodelay(true)?;
                        return Ok(Stream::Tcp(s));
                    }
                    Err(e) if timed_out(&e) => {
                        last = io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!(
                                "the server did not accept the connection within {}",
                                super::seconds(within)
                            ),
                        )
                    }
                    Err(e) => last = e,
                }
            }
            Err(last)
        }
        // A local connect does not wait on the server (a full backlog is refused at once).
        Addr::Unix(p) => Ok(Stream::Unix(UnixStream::connect(p)?)),
    }
}

/// Whether the server answers a new connection within `within`: it accepts it and sends a
/// byte, by itself (MySQL's greeting) or in reply to `hello` (PostgreSQL's SSLRequest, which
/// needs no login). A stopped or hung server accepts (the kernel does) but never answers. Once
/// `stop` is set the question is dropped and the answer is yes: a run that is stopping judges
/// no server.
pub fn answers(addr: &Addr, hello: &[u8], within: Duration, stop: Option<&AtomicBool>) -> bool {
    let until = super::later(Instant::now(), within);
    let Ok(mut stream) = open(addr, within) else {
        return false;
    };
    let mut one = [0u8; 1];
    let mut sent = 0;
    loop {
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return true;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let slice = left.min(SLICE);
        if stream.set_read_timeout(slice).is_err() || stream.set_write_timeout(slice).is_err() {
            return false;
        }
        let r = if sent < hello.len() {
            stream.write(&hello[sent..]).inspect(|&k| sent += k)
        } else {
            match stream.read(&mut one) {
                Ok(1) => return true,
                other => other,
            }
        };
        match r {
            Ok(0) => return false,
            Ok(_) => {}
            Err(e) if timed_out(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// Waits up to `within` for the socket to have input; false when it has none by then. On a
/// unix socket a blocking read wakes up whenever the server reads our request (the write-space
/// wake-up reaches readers too) and sleeps again: a second context switch per query. poll() is
/// woken only for input, as in libmariadb and libpq.
fn wait_readable(fd: RawFd, within: Duration) -> io::Result<bool> {
    let ms = within.as_millis().clamp(1, i32::MAX as u128) as i32;
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd for the duration of the call.
        let r = unsafe { libc::poll(&mut pfd, 1, ms) };
        if r >= 0 {
            return Ok(r > 0);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Splits `n` bytes off the front of a message being parsed; None when it is shorter.
pub fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if b.len() < n {
        return None;
    }
    let (head, rest) = b.split_at(n);
    *b = rest;
    Some(head)
}

/// Splits a NUL-terminated string off the front, without its NUL; None when there is no NUL.
pub fn take_nul<'a>(b: &mut &'a [u8]) -> Option<&'a [u8]> {
    let end = b.iter().position(|&c| c == 0)?;
    let s = &b[..end];
    *b = &b[end + 1..];
    Some(s)
}

/// Whether a connection that failed while being opened had reached a server: one that took
/// it and reset it at once (the kernel may report that before the connect call returns, or on
/// the first call after it, as a busy host schedules), as opposed to nothing listening or no
/// route. Such a failure is the server's, not a refusal.
pub fn reached(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted
    )
}

/// Whose fault a connection that was made and then broke is, by how it broke: the server hung
/// up (`UnexpectedEof`), reset it (`ConnectionReset`, the kernel's ECONNRESET), sent what the
/// protocol does not allow (`InvalidData`: a length past `MAX_MESSAGE`, a reply given up part
/// way) or went silent through the login (`TimedOut`: `login_timeout`; a statement cut by a
/// deadline carries its `Cut` instead). Any other way (a stop, a broken pipe) says neither.
pub fn lost_by(kind: io::ErrorKind) -> Option<Lost> {
    match kind {
        io::ErrorKind::UnexpectedEof
        | io::ErrorKind::ConnectionReset
        | io::ErrorKind::InvalidData
        | io::ErrorKind::TimedOut => Some(Lost::ServerFault),
        _ => None,
    }
}

/// Whose fault a statement cut by dbperf is: a server that stopped answering is the server's.
pub fn lost_by_cut(fault: Fault) -> Option<Lost> {
    (fault == Fault::NoAnswer).then_some(Lost::ServerFault)
}

/// One sentence for a broken connection.
pub fn lost(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => {
            "lost connection to the server (it closed the connection)".into()
        }
        // Only connecting meets it: there was never a connection to lose.
        io::ErrorKind::ConnectionRefused => format!("nothing accepts connections there: {e}"),
        // Timeouts, protocol errors and a stop carry their own sentence.
        io::ErrorKind::TimedOut | io::ErrorKind::InvalidData | io::ErrorKind::Interrupted => {
            e.to_string()
        }
        _ => format!("lost connection to the server: {e}"),
    }
}

/// A listener on 127.0.0.1 that resets (RST, by SO_LINGER 0) the first connection it accepts;
/// its port.
#[cfg(test)]
pub(super) fn resetting() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        let linger = libc::linger {
            l_onoff: 1,
            l_linger: 0,
        };
        // SAFETY: a valid socket and a linger struct of the size given.
        let r = unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_LINGER,
                (&linger as *const libc::linger).cast(),
                std::mem::size_of::<libc::linger>() as libc::socklen_t,
            )
        };
        assert_eq!(r, 0, "{}", io::Error::last_os_error());
        drop(s);
    });
    port
}

/// A port on 127.0.0.1 where nothing listens (it did a moment ago).
#[cfg(test)]
pub(super) fn nothing_listens() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::sync::Arc;

    /// A listener that accepts and never says anything; its port, and the accepted sockets kept
    /// open (dropped with the test).
    fn silent() -> (u16, std::thread::JoinHandle<()>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let h = std::thread::spawn(move || {
            let mut held = Vec::new();
            l.set_nonblocking(true).unwrap();
            let until = Instant::now() + Duration::from_secs(10);
            while Instant::now() < until {
                if let Ok((s, _)) = l.accept() {
                    held.push(s);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        (port, h)
    }

    fn stop_after(ms: u64) -> Arc<AtomicBool> {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(ms));
            s.store(true, Ordering::SeqCst);
        });
        stop
    }

    fn addr(port: u16) -> Addr {
        Addr::Tcp {
            host: "127.0.0.1".into(),
            port,
        }
    }

    #[test]
    fn a_stop_ends_a_statement_wait_long_before_its_timeout() {
        let (port, _h) = silent();
        let timeouts = Timeouts {
            statement: Duration::from_secs(60),
            stop: Some(stop_after(300)),
            ..Timeouts::default()
        };
        let mut n = Net::connect(&addr(port), timeouts, b"").unwrap();
        n.logged_in().unwrap();
        let t = Instant::now();
        let e = n.fill(1).unwrap_err();
        assert_eq!(e.to_string(), crate::dbms::STOPPED_WAITING);
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        assert!(lost(&e).starts_with("stopped waiting"), "{}", lost(&e));
        // The connection is not used again part way through a reply.
        assert!(n.fill(1).is_err());
    }

    #[test]
    fn a_stop_ends_a_login_wait_and_a_liveness_probe() {
        let (port, _h) = silent();
        let timeouts = Timeouts {
            stop: Some(stop_after(300)),
            ..Timeouts::default()
        };
        let stop = timeouts.stop.clone().unwrap();
        let mut n = Net::connect(&addr(port), timeouts, b"").unwrap();
        let t = Instant::now();
        assert!(n.fill(1).is_err());
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        // A stopping run judges no server: the probe says yes at once.
        let t = Instant::now();
        assert!(answers(
            &addr(port),
            b"",
            Duration::from_secs(30),
            Some(&stop)
        ));
        assert!(t.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn a_silent_server_still_fails_the_statement_at_its_timeout() {
        let (port, _h) = silent();
        let timeouts = Timeouts {
            statement: Duration::from_millis(700),
            stop: Some(Arc::new(AtomicBool::new(false))),
            ..Timeouts::default()
        };
        let mut n = Net::connect(&addr(port), timeouts, b"").unwrap();
        n.logged_in().unwrap();
        let t = Instant::now();
        let e = n.fill(1).unwrap_err();
        assert!(e.to_string().contains("did not answer within 0.7 s"), "{e}");
        // The wait (0.7 s in slices) and the probe (another 0.7 s at most): no sooner; later
        // only by what a busy host adds, far from a wait that did not end.
        let took = t.elapsed();
        assert!(
            took >= Duration::from_millis(1300) && took < Duration::from_secs(6),
            "{took:?}"
        );
    }

    /// A listener whose first connection gets `first` and every later one (the liveness
    /// probes) one byte: a server that answers new connections whatever the first one does.
    fn serving(first: fn(std::net::TcpStream)) -> u16 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let mut conns = l.incoming().flatten();
            if let Some(s) = conns.next() {
                std::thread::spawn(move || first(s));
            }
            for mut s in conns {
                std::thread::spawn(move || {
                    let _ = s.write_all(b"N");
                    std::thread::sleep(Duration::from_secs(10));
                });
            }
        });
        port
    }

    /// One byte every 100 ms for 10 s: never silent for a statement timeout.
    fn trickle(mut s: std::net::TcpStream) {
        for _ in 0..100 {
            if s.write_all(b"x").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn hold(s: std::net::TcpStream) {
        std::thread::sleep(Duration::from_secs(10));
        drop(s);
    }

    fn statements(port: u16, statement_ms: u64, ddl_ms: u64) -> Net {
        let timeouts = Timeouts {
            statement: Duration::from_millis(statement_ms),
            ddl: Duration::from_millis(ddl_ms),
            stop: Some(Arc::new(AtomicBool::new(false))),
            ..Timeouts::default()
        };
        let mut n = Net::connect(&addr(port), timeouts, b"").unwrap();
        n.logged_in().unwrap();
        n
    }

    #[test]
    fn a_trickle_does_not_hold_a_benchmark_statement_past_its_deadline() {
        let mut n = statements(serving(trickle), 700, 60_000);
        n.begin(Budget::Operation);
        let t = Instant::now();
        let e = n.fill(1 << 20).unwrap_err();
        let took = t.elapsed();
        assert_eq!(
            e.to_string(),
            crate::dbms::no_answer(Duration::from_millis(700))
        );
        assert_eq!(cut_of(&e).map(|c| c.fault), Some(Fault::NoAnswer));
        // Bytes arrived all along: only the deadline from the start can have ended it. Later
        // than 0.7 s only by what a busy host adds, far from a wait that goes on.
        assert!(n.rend > 0, "the trickle reached the client");
        assert!(
            took >= Duration::from_millis(700) && took < Duration::from_secs(5),
            "{took:?}"
        );
        // The connection is not used again, and says why with the same kind.
        let again = n.fill(1).unwrap_err();
        assert_eq!(cut_of(&again).map(|c| c.fault), Some(Fault::NoAnswer));
    }

    #[test]
    fn a_long_statement_waits_past_silence_while_the_server_answers_until_its_cap() {
        let mut n = statements(serving(hold), 300, 1_500);
        n.begin(Budget::Long);
        let t = Instant::now();
        let e = n.fill(1).unwrap_err();
        let took = t.elapsed();
        // Silent for five statement timeouts, kept waiting by the probes' answers, then cut
        // by --ddl-timeout.
        assert_eq!(
            e.to_string(),
            crate::dbms::long_statement(Duration::from_millis(1_500))
        );
        assert_eq!(cut_of(&e).map(|c| c.fault), Some(Fault::LongStatement));
        assert!(
            took >= Duration::from_millis(1_500) && took < Duration::from_secs(8),
            "{took:?}"
        );
    }

    #[test]
    fn a_trickle_does_not_hold_a_long_statement_past_its_cap() {
        let mut n = statements(serving(trickle), 300, 1_000);
        n.begin(Budget::Long);
        let t = Instant::now();
        let e = n.fill(1 << 20).unwrap_err();
        assert_eq!(cut_of(&e).map(|c| c.fault), Some(Fault::LongStatement));
        let took = t.elapsed();
        assert!(
            took >= Duration::from_secs(1) && took < Duration::from_secs(6),
            "{took:?}"
        );
    }

    #[test]
    fn the_read_buffer_grows_with_the_bytes_that_arrive_not_with_the_length_announced() {
        let mut n = statements(serving(trickle), 500, 60_000);
        n.begin(Budget::Operation);
        assert!(n.fill(MAX_MESSAGE).is_err());
        // A few bytes arrived of the 64 MiB asked for: the buffer is still its first size.
        assert!(n.rend < 100, "{}", n.rend);
        assert_eq!(n.rbuf.len(), INITIAL_BUFFER);
    }

    #[test]
    fn a_large_message_buffer_is_given_back_at_the_next_statement() {
        fn big(mut s: std::net::TcpStream) {
            let _ = s.write_all(&vec![7u8; 3 << 20]);
            std::thread::sleep(Duration::from_secs(10));
        }
        let mut n = statements(serving(big), 5_000, 60_000);
        n.begin(Budget::Operation);
        n.fill(3 << 20).unwrap();
        assert!(n.rbuf.len() >= 3 << 20);
        n.rpos = n.rend;
        n.begin(Budget::Operation);
        assert_eq!(n.rbuf.len(), INITIAL_BUFFER);
    }

    #[test]
    fn a_reset_connection_is_told_by_its_kind_and_is_the_servers_fault() {
        // The reset may arrive while the connection is being opened or at the first read,
        // as the host schedules the two threads: either way it is a reset.
        let e = match Net::connect(&addr(resetting()), Timeouts::default(), b"") {
            Ok(mut n) => n.fill(1).unwrap_err(),
            Err(e) => e,
        };
        assert!(reached(&e), "{e}");
        assert_eq!(e.kind(), io::ErrorKind::ConnectionReset, "{e}");
        assert_eq!(lost_by(e.kind()), Some(Lost::ServerFault));
    }

    #[test]
    fn how_a_connection_broke_says_whose_fault_it_is() {
        use io::ErrorKind::*;
        for kind in [UnexpectedEof, ConnectionReset, InvalidData, TimedOut] {
            assert_eq!(lost_by(kind), Some(Lost::ServerFault), "{kind:?}");
        }
        // A stop is nobody's fault; a broken pipe was never told apart.
        for kind in [Interrupted, BrokenPipe, WriteZero] {
            assert_eq!(lost_by(kind), None, "{kind:?}");
        }
        assert_eq!(lost_by_cut(Fault::NoAnswer), Some(Lost::ServerFault));
        assert_eq!(lost_by_cut(Fault::LongStatement), None);
        assert_eq!(lost_by_cut(Fault::TooMuch), None);
    }

    #[test]
    fn deadlines_from_huge_durations_do_not_overflow() {
        let now = Instant::now();
        assert!(crate::dbms::later(now, Duration::MAX) > now);
    }
}
