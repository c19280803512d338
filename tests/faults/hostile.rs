//! Hostile servers on 127.0.0.1 (absurd lengths, truncated messages, silence, endless
//! authentication, endless rows, a trickle during a benchmark statement) and an absent one,
//! through the dbperf binary.

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
pub fn fake(script: impl Fn(TcpStream) + Send + Sync + 'static) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let script = Arc::new(script);
    thread::spawn(move || {
        for s in l.incoming().flatten() {
            let script = script.clone();
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

/// Runs l.i0 against the fake server on `port` as an external target named `fake`, with a
/// statement timeout of 2 s and a login deadline of 5 s.
fn start_against(l: &mut Launch, port: u16, e: Engine) {
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
    let fault = Instant::now();
    start_against(&mut l, port, e);
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

// ---- fake servers that follow the protocol far enough to reach a benchmark statement ----

/// What a fake server does once it gets that far.
#[derive(Clone, Copy, PartialEq)]
pub enum Act {
    /// Every query that returns rows gets rows without end (the first is `SELECT version()`).
    EndlessRows,
    /// Setup queries get an empty answer; the first benchmark statement (an insert batch, as
    /// SQL text or prepared) gets a message that announces 1000 bytes and one byte every 0.5 s.
    Trickle,
}

/// When the trickle began, set by the fake server.
pub type Began = Arc<Mutex<Option<Instant>>>;

/// The start of a message announcing 1000 bytes, then one byte every 0.5 s for 60 s: never a
/// silence as long as the statement timeout.
fn trickle_from(s: &mut TcpStream, head: &[u8], began: &Began) {
    *began.lock().unwrap() = Some(Instant::now());
    if s.write_all(head).is_err() {
        return;
    }
    for _ in 0..120 {
        thread::sleep(Duration::from_millis(500));
        if s.write_all(b"x").is_err() {
            return;
        }
    }
}

fn read_exactly(s: &mut TcpStream, n: usize) -> Option<Vec<u8>> {
    // The client's largest message here is an insert batch's Bind (well under 16 MiB).
    if n > 16 << 20 {
        return None;
    }
    let mut b = vec![0; n];
    s.read_exact(&mut b).ok()?;
    Some(b)
}

/// One PostgreSQL frontend message: its type and body.
fn pg_read(s: &mut TcpStream) -> Option<(u8, Vec<u8>)> {
    let head = read_exactly(s, 5)?;
    let len = i32::from_be_bytes([head[1], head[2], head[3], head[4]]);
    Some((
        head[0],
        read_exactly(s, usize::try_from(len).ok()?.checked_sub(4)?)?,
    ))
}

/// Parameters of a statement: one per `$`.
fn placeholders(sql: &[u8], mark: u8) -> usize {
    sql.iter().filter(|&&c| c == mark).count()
}

/// A PostgreSQL server enough for dbperf's setup and l.i0: trust login, an empty answer to
/// every simple query, prepared statements typed int8, and `act`.
pub fn pg_fake(mut s: TcpStream, act: Act, began: &Began) {
    let Some(len) = read_exactly(&mut s, 4) else {
        return;
    };
    let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
    let Some(startup) = read_exactly(&mut s, len.saturating_sub(4)) else {
        return;
    };
    if startup.starts_with(&80877103u32.to_be_bytes()) {
        // A liveness probe's SSLRequest: answered, as a live server does.
        let _ = s.write_all(b"N");
        return hold(s);
    }
    let mut login = pg_msg(b'R', &0i32.to_be_bytes());
    login.extend(pg_msg(b'Z', b"I"));
    if s.write_all(&login).is_err() {
        return;
    }
    let mut params = 0;
    while let Some((t, body)) = pg_read(&mut s) {
        let reply = match t {
            b'Q' if act == Act::EndlessRows => return pg_endless_rows(&mut s),
            b'Q' if body.starts_with(b"INSERT") => {
                return trickle_from(&mut s, &[b'N', 0, 0, 3, 0xE8], began)
            }
            b'Q' => {
                let mut m = pg_msg(b'C', b"SELECT 0\0");
                m.extend(pg_msg(b'Z', b"I"));
                m
            }
            b'P' => {
                params = placeholders(&body, b'$');
                continue;
            }
            b'S' => {
                let mut desc = (params as i16).to_be_bytes().to_vec();
                for _ in 0..params {
                    desc.extend_from_slice(&20u32.to_be_bytes());
                }
                let mut m = pg_msg(b'1', b"");
                m.extend(pg_msg(b't', &desc));
                m.extend(pg_msg(b'n', b""));
                m.extend(pg_msg(b'Z', b"I"));
                m
            }
            b'E' => return trickle_from(&mut s, &[b'N', 0, 0, 3, 0xE8], began),
            b'X' => return,
            _ => continue,
        };
        if s.write_all(&reply).is_err() {
            return;
        }
    }
}

/// One text column, then the same row until the client hangs up.
fn pg_endless_rows(s: &mut TcpStream) {
    let mut desc = 1i16.to_be_bytes().to_vec();
    desc.extend_from_slice(b"version\0");
    desc.extend_from_slice(&[0; 6]);
    desc.extend_from_slice(&25i32.to_be_bytes());
    desc.extend_from_slice(&(-1i16).to_be_bytes());
    desc.extend_from_slice(&(-1i32).to_be_bytes());
    desc.extend_from_slice(&0i16.to_be_bytes());
    let value = b"PostgreSQL 99 (fake)";
    let mut row = 1i16.to_be_bytes().to_vec();
    row.extend_from_slice(&(value.len() as i32).to_be_bytes());
    row.extend_from_slice(value);
    let batch = pg_msg(b'D', &row).repeat(1000);
    if s.write_all(&pg_msg(b'T', &desc)).is_ok() {
        while s.write_all(&batch).is_ok() {}
    }
}

/// One MySQL packet's payload.
fn my_read(s: &mut TcpStream) -> Option<Vec<u8>> {
    let h = read_exactly(s, 4)?;
    read_exactly(s, u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize)
}

const MY_OK: [u8; 7] = [0, 0, 0, 2, 0, 0, 0];

/// A MariaDB server enough for dbperf's setup and l.i0: any login, an OK to every query,
/// prepared statements with their parameters, and `act`.
pub fn my_fake(mut s: TcpStream, act: Act, began: &Began) {
    if s.write_all(&greeting()).is_err() || my_read(&mut s).is_none() {
        return;
    }
    if s.write_all(&my_packet(2, &MY_OK)).is_err() {
        return;
    }
    while let Some(p) = my_read(&mut s) {
        let reply = match p.first() {
            Some(0x01) | None => return,
            Some(0x03) if act == Act::EndlessRows => return my_endless_rows(&mut s),
            Some(0x03) if p[1..].starts_with(b"INSERT") => {
                return trickle_from(&mut s, &[0xE8, 0x03, 0, 1], began)
            }
            Some(0x16) => {
                let n = placeholders(&p[1..], b'?') as u16;
                let mut ok = vec![0];
                ok.extend_from_slice(&1u32.to_le_bytes());
                ok.extend_from_slice(&0u16.to_le_bytes());
                ok.extend_from_slice(&n.to_le_bytes());
                ok.extend_from_slice(&[0, 0, 0]);
                let mut m = my_packet(1, &ok);
                for i in 0..n {
                    m.extend(my_packet((i as u8).wrapping_add(2), b"\x03def"));
                }
                m
            }
            Some(0x17) => return trickle_from(&mut s, &[0xE8, 0x03, 0, 1], began),
            Some(_) => my_packet(1, &MY_OK),
        };
        if s.write_all(&reply).is_err() {
            return;
        }
    }
}

/// One text column, then the same row until the client hangs up.
fn my_endless_rows(s: &mut TcpStream) {
    let mut def = Vec::new();
    for f in ["def", "", "", "", "version()", ""] {
        def.push(f.len() as u8);
        def.extend_from_slice(f.as_bytes());
    }
    def.push(0x0C);
    def.extend_from_slice(&45u16.to_le_bytes());
    def.extend_from_slice(&80u32.to_le_bytes());
    def.extend_from_slice(&[253, 0, 0, 0, 0, 0]);
    let mut head = my_packet(1, &[1]);
    head.extend(my_packet(2, &def));
    let batch: Vec<u8> = (0..1000u32)
        .flat_map(|i| my_packet((3 + i) as u8, b"\x0c10.11.0-fake"))
        .collect();
    if s.write_all(&head).is_ok() {
        while s.write_all(&batch).is_ok() {}
    }
}

fn serve_act(e: Engine, act: Act, began: &Began) -> u16 {
    let began = began.clone();
    fake(move |s| match e {
        Engine::Postgres => pg_fake(s, act, &began),
        Engine::Mariadb => my_fake(s, act, &began),
    })
}

/// The peak memory dbperf may reach against a server that streams rows without end: what it
/// keeps of one query is capped (100 000 rows, 32 MiB), and it otherwise needs tens of MiB.
/// Without the caps it grew by about 150 MiB a second until the host ran out.
const ENDLESS_ROWS_PEAK_MIB: u64 = 200;

pub fn endless_rows(name: &str, e: Engine) -> Row {
    let what = "the server sent more than 100000 rows";
    let mut row = Row::new(
        name,
        &format!(
            "one sentence (\"{what}\"), exit 1, peak memory under {ENDLESS_ROWS_PEAK_MIB} MiB, \
             no panic"
        ),
        20,
    );
    let mut l = Launch::new();
    let port = serve_act(e, Act::EndlessRows, &Began::default());
    let fault = Instant::now();
    start_against(&mut l, port, e);
    let (ended, peak_kib) = l.end_with_peak_rss(40);
    row.time_to_fail = ended.at.duration_since(fault);
    let errors: Vec<&str> = ended
        .stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    let peak_mib = peak_kib.map(|k| k >> 10);
    row.observed = format!(
        "{}; peak {} MiB; \"{}\"",
        exit(ended.code),
        peak_mib.map_or("unknown".into(), |m| m.to_string()),
        short(errors.first().copied().unwrap_or_default(), 100)
    );
    row.check(ended.code == Some(1), "exit 1");
    row.check(
        errors.len() == 1 && errors[0].contains(what) && !errors[0].contains('\n'),
        format!(
            "one sentence with \"{what}\": {}",
            short(&ended.stderr, 300)
        ),
    );
    row.check(
        peak_mib.is_some_and(|m| m < ENDLESS_ROWS_PEAK_MIB),
        format!("peak memory {peak_mib:?} MiB"),
    );
    row.panics = panics(&ended.stderr);
    row.steps_lost = corrupt_files(&l.out).len();
    let (n, left) = processes_left(&[], l.tmp.path());
    row.processes_left = n;
    row.check(left.is_empty(), format!("left: {left:?}"));
    row
}

/// The statement timeout `start_against` gives.
const TRICKLE_STATEMENT_TIMEOUT: Duration = Duration::from_secs(2);

pub fn trickle(name: &str, e: Engine) -> Row {
    let what = "the server did not answer within 2 s (--statement-timeout)";
    let mut row = Row::new(
        name,
        &format!(
            "l.i0 failed with \"{what}\" at the statement timeout though bytes arrive, exit 1, \
             no panic"
        ),
        // Three statement timeouts, from the first byte of the trickle to the step's file.
        3 * TRICKLE_STATEMENT_TIMEOUT.as_secs(),
    );
    let mut l = Launch::new();
    let began = Began::default();
    let port = serve_act(e, Act::Trickle, &began);
    start_against(&mut l, port, e);
    let step = |l: &Launch| find_step(&l.out, "l.i0");
    let written = l.wait_for(60, |l| step(l).is_some());
    let ended = l.end(30);
    let began = *began.lock().unwrap();
    row.time_to_fail = match (began, written) {
        (Some(b), Some(w)) => w.saturating_duration_since(b),
        _ => ended.at.duration_since(began.unwrap_or(ended.at)) + row.bound,
    };
    let (status, error) = match step(&l).and_then(|p| std::fs::read_to_string(p).ok()) {
        Some(text) => {
            let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
            (
                v["status"].as_str().unwrap_or_default().to_string(),
                v["error"].as_str().unwrap_or_default().to_string(),
            )
        }
        None => ("missing".into(), String::new()),
    };
    row.observed = format!(
        "{}; l.i0 {status}: \"{}\"",
        exit(ended.code),
        short(&error, 90)
    );
    row.check(began.is_some(), "the fake server got as far as the insert");
    row.check(ended.code == Some(1), "exit 1");
    row.check(status == "failed", "l.i0 failed");
    row.check(
        error.contains(what),
        format!("the no-answer sentence: {error}"),
    );
    row.panics = panics(&ended.stderr);
    row.steps_lost = corrupt_files(&l.out).len();
    let (n, left) = processes_left(&[], l.tmp.path());
    row.processes_left = n;
    row.check(left.is_empty(), format!("left: {left:?}"));
    row
}

/// `<out>/<cell>/steps/<step>.json`, whatever the cell is named.
fn find_step(out: &Path, step: &str) -> Option<PathBuf> {
    std::fs::read_dir(out)
        .ok()?
        .flatten()
        .map(|c| c.path().join("steps").join(format!("{step}.json")))
        .find(|p| p.is_file())
}
