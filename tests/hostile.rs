//! dbperf's protocol clients against a deliberately hostile fake server on 127.0.0.1 (a test
//! listener, not a DBMS): absurd lengths, truncated messages, silence, endless authentication.
//! Each must end the connection with one sentence, in bounded time, without a panic or an
//! allocation the server decided. And a server that is slow but alive must not be cut off.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use dbperf::dbms::mysql::{Flavor, Mysql, Storage};
use dbperf::dbms::postgres::Postgres;
use dbperf::dbms::{Dbms, Endpoint, Timeouts, Transport};

const QUICK: Timeouts = Timeouts {
    connect: Duration::from_secs(2),
    statement: Duration::from_secs(1),
    ddl: Duration::from_secs(4),
    stop: None,
};

/// A listener on a free loopback port: the first connection gets `script`, later ones (the
/// client's liveness probes) get `probe`. Returns the port.
fn fake(script: impl FnOnce(TcpStream) + Send + 'static, probe: Option<fn(TcpStream)>) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        thread::spawn(move || script(s));
        let Some(probe) = probe else {
            // Keep the listener open without accepting: connections wait in the backlog.
            thread::sleep(Duration::from_secs(60));
            return;
        };
        for s in l.incoming().flatten() {
            thread::spawn(move || probe(s));
        }
    });
    port
}

fn endpoint(port: u16) -> Endpoint {
    Endpoint {
        transport: Transport::Tcp {
            host: "127.0.0.1".into(),
            port,
        },
        user: "u".into(),
        password: Some("p".into()),
        database: "d".into(),
    }
}

fn pg(port: u16) -> Postgres {
    Postgres::new(endpoint(port), "fake", "").with_timeouts(QUICK)
}

fn my(port: u16) -> Mysql {
    Mysql::new(endpoint(port), Flavor::MariaDb, Storage::InnoDb, "fake", "").with_timeouts(QUICK)
}

/// Connects, expecting a failure that says `what` within `secs`.
fn connect_fails(d: &dyn Dbms, what: &str, secs: u64) {
    let t = Instant::now();
    let e = match d.connect() {
        Ok(_) => panic!("connected to a hostile server"),
        Err(e) => format!("{e:#}"),
    };
    assert!(e.contains(what), "expected '{what}' in: {e}");
    assert!(!e.contains('\n'), "one sentence: {e}");
    assert!(
        t.elapsed() < Duration::from_secs(secs),
        "{:?}: {e}",
        t.elapsed()
    );
}

fn read_some(s: &mut TcpStream) {
    let mut b = [0u8; 4096];
    let _ = s.read(&mut b);
}

fn hold(s: TcpStream) {
    thread::sleep(Duration::from_secs(30));
    drop(s);
}

// ---- PostgreSQL ----

fn pg_msg(t: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![t];
    m.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
    m.extend_from_slice(body);
    m
}

/// Trust login: AuthenticationOk and ReadyForQuery.
fn pg_login(s: &mut TcpStream) {
    read_some(s);
    let mut m = pg_msg(b'R', &0i32.to_be_bytes());
    m.extend(pg_msg(b'Z', b"I"));
    s.write_all(&m).unwrap();
}

fn pg_probe(mut s: TcpStream) {
    let mut b = [0u8; 8];
    if s.read_exact(&mut b).is_ok() {
        let _ = s.write_all(b"N");
    }
    hold(s);
}

#[test]
fn postgres_absurd_length_is_a_protocol_error() {
    let port = fake(
        |mut s| {
            read_some(&mut s);
            let mut m = vec![b'R'];
            m.extend_from_slice(&0x7FFF_FFF0i32.to_be_bytes());
            let _ = s.write_all(&m);
            hold(s);
        },
        None,
    );
    connect_fails(&pg(port), "protocol error", 5);
}

#[test]
fn postgres_negative_length_is_a_protocol_error() {
    let port = fake(
        |mut s| {
            read_some(&mut s);
            let mut m = vec![b'R'];
            m.extend_from_slice(&(-5i32).to_be_bytes());
            let _ = s.write_all(&m);
            hold(s);
        },
        None,
    );
    connect_fails(&pg(port), "protocol error", 5);
}

#[test]
fn postgres_truncated_message_is_a_lost_connection() {
    let port = fake(
        |mut s| {
            read_some(&mut s);
            let mut m = vec![b'R'];
            m.extend_from_slice(&100i32.to_be_bytes());
            m.extend_from_slice(&[0; 10]);
            let _ = s.write_all(&m);
        },
        None,
    );
    connect_fails(&pg(port), "lost connection to the server", 5);
}

#[test]
fn postgres_silence_ends_the_login_at_its_deadline() {
    let port = fake(hold, None);
    connect_fails(&pg(port), "did not complete the login within 2 s", 6);
}

#[test]
fn postgres_endless_authentication_is_cut_off() {
    let port = fake(
        |mut s| {
            // Asks for a cleartext password again and again.
            let ask = pg_msg(b'R', &3i32.to_be_bytes());
            for _ in 0..1000 {
                read_some(&mut s);
                if s.write_all(&ask).is_err() {
                    return;
                }
            }
        },
        None,
    );
    connect_fails(&pg(port), "more than 16 authentication requests", 5);
}

#[test]
fn postgres_silence_after_a_query_fails_the_statement() {
    let port = fake(
        |mut s| {
            pg_login(&mut s);
            read_some(&mut s);
            hold(s);
        },
        None,
    );
    let mut c = pg(port).connect().unwrap();
    let t = Instant::now();
    let e = c.run_text("SELECT 1").unwrap_err().message;
    assert!(
        e.contains("the server did not answer within 1 s (--statement-timeout)"),
        "{e}"
    );
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    // The connection is not used again mid-message.
    let e = c.run_text("SELECT 1").unwrap_err().message;
    assert!(e.contains("did not answer"), "{e}");
}

#[test]
fn postgres_slow_but_alive_server_is_waited_for() {
    let port = fake(
        |mut s| {
            pg_login(&mut s);
            read_some(&mut s);
            thread::sleep(Duration::from_millis(2500));
            let mut m = pg_msg(b'C', b"SELECT 0\0");
            m.extend(pg_msg(b'Z', b"I"));
            let _ = s.write_all(&m);
            hold(s);
        },
        Some(pg_probe),
    );
    let mut c = pg(port).connect().unwrap();
    let t = Instant::now();
    assert_eq!(c.run_text("SELECT pg_sleep(2.5)").unwrap(), 0);
    assert!(t.elapsed() >= Duration::from_secs(2));
}

// ---- MySQL / MariaDB ----

fn my_packet(seq: u8, payload: &[u8]) -> Vec<u8> {
    let mut p = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    p.push(seq);
    p.extend_from_slice(payload);
    p
}

/// A protocol-10 greeting offering mysql_native_password.
fn greeting() -> Vec<u8> {
    let mut g = vec![10];
    g.extend_from_slice(b"10.11.0-fake\0");
    g.extend_from_slice(&1u32.to_le_bytes());
    g.extend_from_slice(b"abcdefgh\0");
    let caps: u32 = (1 << 9) | (1 << 15) | (1 << 19) | (1 << 21) | (1 << 24) | 1 | (1 << 3);
    g.extend_from_slice(&(caps as u16).to_le_bytes());
    g.push(45);
    g.extend_from_slice(&2u16.to_le_bytes());
    g.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    g.push(21);
    g.extend_from_slice(&[0; 10]);
    g.extend_from_slice(b"ijklmnopqrst\0");
    g.extend_from_slice(b"mysql_native_password\0");
    my_packet(0, &g)
}

fn my_login(s: &mut TcpStream) {
    s.write_all(&greeting()).unwrap();
    read_some(s);
    s.write_all(&my_packet(2, &[0, 0, 0, 2, 0, 0, 0])).unwrap();
}

#[test]
fn mysql_packet_joining_is_bounded() {
    let port = fake(
        |mut s| {
            my_login(&mut s);
            read_some(&mut s);
            // 16 MiB pieces, each announcing another, for ever.
            let piece = vec![1u8; 0xFF_FFFF];
            for seq in 1..=10u8 {
                let mut h = vec![0xFF, 0xFF, 0xFF, seq];
                h.extend_from_slice(&piece);
                if s.write_all(&h).is_err() {
                    return;
                }
            }
            hold(s);
        },
        None,
    );
    let mut c = my(port).connect().unwrap();
    let t = Instant::now();
    let e = c.run_text("SELECT 1").unwrap_err().message;
    assert!(e.contains("protocol error") && e.contains("MiB"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(10));
}

#[test]
fn mysql_absurd_column_count_is_a_protocol_error() {
    let port = fake(
        |mut s| {
            my_login(&mut s);
            read_some(&mut s);
            let mut p = vec![0xFE];
            p.extend_from_slice(&u64::MAX.to_le_bytes());
            let _ = s.write_all(&my_packet(1, &p));
            hold(s);
        },
        None,
    );
    let mut c = my(port).connect().unwrap();
    let e = c.run_text("SELECT 1").unwrap_err().message;
    assert!(e.contains("protocol error") && e.contains("columns"), "{e}");
}

#[test]
fn mysql_truncated_greeting_is_a_lost_connection() {
    let port = fake(
        |mut s| {
            let mut p = vec![100, 0, 0, 0];
            p.extend_from_slice(&[10, b'1', b'0']);
            let _ = s.write_all(&p);
        },
        None,
    );
    connect_fails(&my(port), "lost connection to the server", 5);
}

#[test]
fn mysql_silence_ends_the_login_at_its_deadline() {
    let port = fake(hold, None);
    connect_fails(&my(port), "did not complete the login within 2 s", 6);
}

#[test]
fn mysql_endless_authentication_is_cut_off() {
    let port = fake(
        |mut s| {
            s.write_all(&greeting()).unwrap();
            // Switches the plugin after every answer.
            let mut seq = 2u8;
            for _ in 0..1000 {
                read_some(&mut s);
                let mut p = vec![0xFE];
                p.extend_from_slice(b"mysql_native_password\0abcdefghijklmnopqrst\0");
                if s.write_all(&my_packet(seq, &p)).is_err() {
                    return;
                }
                seq = seq.wrapping_add(2);
            }
        },
        None,
    );
    connect_fails(&my(port), "more than 16 authentication requests", 5);
}

#[test]
fn mysql_silence_after_a_query_fails_the_statement() {
    let port = fake(
        |mut s| {
            my_login(&mut s);
            read_some(&mut s);
            hold(s);
        },
        None,
    );
    let mut c = my(port).connect().unwrap();
    let t = Instant::now();
    let e = c.run_text("SELECT 1").unwrap_err().message;
    assert!(
        e.contains("the server did not answer within 1 s (--statement-timeout)"),
        "{e}"
    );
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
}
