//! Hostile servers on 127.0.0.1 (absurd lengths, truncated messages, silence, endless
//! authentication) and an absent one, through the dbperf binary.

use super::*;

#[derive(Clone, Copy)]
pub enum Hostile {
    /// PostgreSQL: a message length near 2 GiB; MySQL: 16 MiB packet pieces that never end.
    AbsurdLength,
    Truncated,
    Silence,
    EndlessAuth,
    /// Not hostile, absent: the port has no listener. The target is described wrongly (or its
    /// server is down): bad input.
    NothingListens,
}

/// A fake server on 127.0.0.1 that treats every connection with `script`.
pub fn fake(script: fn(TcpStream)) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    thread::spawn(move || {
        for s in l.incoming().flatten() {
            thread::spawn(move || script(s));
        }
    });
    port
}

pub fn read_some(s: &mut TcpStream) {
    let mut b = [0u8; 4096];
    let _ = s.read(&mut b);
}

pub fn hold(s: TcpStream) {
    thread::sleep(Duration::from_secs(60));
    drop(s);
}

pub fn pg_msg(t: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![t];
    m.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
    m.extend_from_slice(body);
    m
}

pub fn my_packet(seq: u8, payload: &[u8]) -> Vec<u8> {
    let mut p = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    p.push(seq);
    p.extend_from_slice(payload);
    p
}

/// A protocol-10 greeting offering mysql_native_password.
pub fn greeting() -> Vec<u8> {
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

pub fn script(h: Hostile, e: Engine) -> fn(TcpStream) {
    match (h, e) {
        (Hostile::Silence, _) => hold,
        (Hostile::NothingListens, _) => unreachable!("no server to script"),
        (Hostile::AbsurdLength, Engine::Postgres) => |mut s| {
            read_some(&mut s);
            let mut m = vec![b'R'];
            m.extend_from_slice(&0x7FFF_FFF0i32.to_be_bytes());
            let _ = s.write_all(&m);
            hold(s);
        },
        (Hostile::Truncated, Engine::Postgres) => |mut s| {
            read_some(&mut s);
            let mut m = vec![b'R'];
            m.extend_from_slice(&100i32.to_be_bytes());
            m.extend_from_slice(&[0; 10]);
            let _ = s.write_all(&m);
        },
        (Hostile::EndlessAuth, Engine::Postgres) => |mut s| {
            let ask = pg_msg(b'R', &3i32.to_be_bytes());
            for _ in 0..1000 {
                read_some(&mut s);
                if s.write_all(&ask).is_err() {
                    return;
                }
            }
        },
        (Hostile::AbsurdLength, Engine::Mariadb) => |mut s| {
            // A greeting in 16 MiB pieces, each announcing another.
            let mut piece = vec![0xFF, 0xFF, 0xFF, 0];
            piece.extend(vec![1u8; 0xFF_FFFF]);
            for seq in 0..10u8 {
                piece[3] = seq;
                if s.write_all(&piece).is_err() {
                    return;
                }
            }
            hold(s);
        },
        (Hostile::Truncated, Engine::Mariadb) => |mut s| {
            let _ = s.write_all(&[100, 0, 0, 0, 10, b'1', b'0']);
        },
        (Hostile::EndlessAuth, Engine::Mariadb) => |mut s| {
            if s.write_all(&greeting()).is_err() {
                return;
            }
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
    }
}

pub fn hostile(name: &str, h: Hostile, e: Engine) -> Row {
    let (what, bound, code) = match h {
        Hostile::AbsurdLength => ("protocol error", 10, 1),
        Hostile::Truncated => ("lost connection to the server", 10, 1),
        // The login has one deadline (--connect-timeout 5 below), whatever the statement
        // timeout.
        Hostile::Silence => ("did not complete the login within 5 s", 20, 1),
        Hostile::EndlessAuth => ("more than 16 authentication requests", 10, 1),
        Hostile::NothingListens => ("nothing accepts connections there", 10, 2),
    };
    let mut row = Row::new(
        name,
        &format!("one sentence (\"{what}\"), exit {code}, no panic"),
        bound,
    );
    let mut l = Launch::new();
    let port = match h {
        Hostile::NothingListens => {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        }
        _ => fake(script(h, e)),
    };
    let toml = l.tmp.path().join("dbperf.toml");
    std::fs::write(
        &toml,
        format!(
            "[target.fake]\nengine = \"{}\"\nhost = \"127.0.0.1\"\nport = {port}\nuser = \"u\"\ndatabase = \"d\"\npassword_env = \"DBPERF_FAKE_PASSWORD\"\n",
            e.target()
        ),
    )
    .unwrap();
    let out = l.out.to_str().unwrap().to_string();
    let fault = Instant::now();
    l.start(&[
        "run",
        "--config-file",
        toml.to_str().unwrap(),
        "--target",
        "fake",
        "--steps",
        "l.i0",
        "--statement-timeout",
        "2",
        "--connect-timeout",
        "5",
        "--out",
        &out,
        "--no-progress",
    ]);
    let ended = l.end(bound + 20);
    row.time_to_fail = ended.at.duration_since(fault);
    let errors: Vec<&str> = ended
        .stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    // The sentence after the connection's description (host, port, user, database).
    let why = errors
        .first()
        .map(|e| {
            e.rsplit_once("database d")
                .map_or(*e, |(_, t)| t.trim_start_matches([')', ':', ' ']))
        })
        .unwrap_or_default();
    row.observed = format!(
        "{}; \"error: target fake: cannot connect to … : {}\"",
        exit(ended.code),
        short(why, 100)
    );
    row.check(ended.code == Some(code), format!("exit {code}"));
    row.check(
        errors.len() == 1 && errors[0].contains(what),
        format!("one sentence with \"{what}\": {}", ended.stderr.trim()),
    );
    row.panics = panics(&ended.stderr);
    row.steps_lost = corrupt_files(&l.out).len();
    let (n, what) = processes_left(&[], l.tmp.path());
    row.processes_left = n;
    row.check(what.is_empty(), format!("left: {what:?}"));
    row
}
