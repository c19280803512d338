//! The byte stream under dbperf's protocol clients (PostgreSQL and MySQL): one TCP or unix socket,
//! one reusable read buffer, whole messages written with one `write`.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::Path;

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

pub struct Net {
    stream: Stream,
    /// Bytes `rbuf[rpos..rend]` have been read and not yet consumed.
    pub rbuf: Vec<u8>,
    pub rpos: usize,
    pub rend: usize,
}

impl Net {
    pub fn tcp(host: &str, port: u16) -> io::Result<Net> {
        let s = TcpStream::connect((host, port))?;
        // Every request is one write; waiting for Nagle would add 40 ms to some of them.
        s.set_nodelay(true)?;
        Ok(Net::new(Stream::Tcp(s)))
    }

    pub fn unix(path: &Path) -> io::Result<Net> {
        Ok(Net::new(Stream::Unix(UnixStream::connect(path)?)))
    }

    fn new(stream: Stream) -> Net {
        Net {
            stream,
            rbuf: vec![0; 64 * 1024],
            rpos: 0,
            rend: 0,
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

    pub fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.stream {
            Stream::Tcp(s) => s.write_all(buf),
            Stream::Unix(s) => s.write_all(buf),
        }
    }

    /// Makes at least `n` bytes available from `rpos`, reading as needed. May move the unread
    /// bytes to the front of the buffer, so offsets must be kept relative to `rpos`.
    pub fn fill(&mut self, n: usize) -> io::Result<()> {
        while self.rend - self.rpos < n {
            if self.rpos == self.rend {
                self.rpos = 0;
                self.rend = 0;
            } else if self.rpos + n > self.rbuf.len() {
                self.rbuf.copy_within(self.rpos..self.rend, 0);
                self.rend -= self.rpos;
                self.rpos = 0;
            }
            if n > self.rbuf.len() {
                self.rbuf.resize(n.next_power_of_two(), 0);
            }
            if self.is_unix() {
                wait_readable(self.fd())?;
            }
            let got = match &mut self.stream {
                Stream::Tcp(s) => s.read(&mut self.rbuf[self.rend..]),
                Stream::Unix(s) => s.read(&mut self.rbuf[self.rend..]),
            };
            match got {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(k) => self.rend += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// Blocks until the socket has input. On a unix socket a blocking read wakes up whenever the
/// server reads our request (the write-space wake-up reaches readers too) and sleeps again: a
/// second context switch per query. poll() is woken only for input, as in libmariadb and libpq.
fn wait_readable(fd: RawFd) -> io::Result<()> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd for the duration of the call.
        let r = unsafe { libc::poll(&mut pfd, 1, -1) };
        if r >= 0 {
            return Ok(());
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

/// One sentence for a broken connection.
pub fn lost(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => {
            "lost connection to the server (it closed the connection)".into()
        }
        _ => format!("lost connection to the server: {e}"),
    }
}
