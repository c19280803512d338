//! A connection reset mid-step by a TCP proxy between dbperf and a server.

use super::*;

/// A TCP proxy on 127.0.0.1 in front of a server: forwards both ways, and once armed resets
/// (RST) each connection after the server has sent it another `after` bytes, as a middlebox or
/// a peer that crashed mid-reply does.
pub struct Proxy {
    port: u16,
    armed: Arc<AtomicBool>,
    resets: Arc<AtomicUsize>,
    /// Connections being relayed now.
    open: Arc<AtomicUsize>,
}

pub fn proxy(upstream: u16, after: usize) -> Proxy {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let armed = Arc::new(AtomicBool::new(false));
    let resets = Arc::new(AtomicUsize::new(0));
    let open = Arc::new(AtomicUsize::new(0));
    let (a, r, o) = (armed.clone(), resets.clone(), open.clone());
    thread::spawn(move || {
        for client in l.incoming().flatten() {
            let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                continue;
            };
            let (a, r, o) = (a.clone(), r.clone(), o.clone());
            o.fetch_add(1, Ordering::SeqCst);
            thread::spawn(move || {
                relay(client, server, &a, &r, after);
                o.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
    Proxy {
        port,
        armed,
        resets,
        open,
    }
}

pub fn relay(
    client: TcpStream,
    server: TcpStream,
    armed: &AtomicBool,
    resets: &AtomicUsize,
    after: usize,
) {
    let dead = Arc::new(AtomicBool::new(false));
    for s in [&client, &server] {
        s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        s.set_nodelay(true).unwrap();
    }
    // Client to server, on its own thread, until either side ends.
    let up = {
        let (mut from, mut to, dead) = (
            client.try_clone().unwrap(),
            server.try_clone().unwrap(),
            dead.clone(),
        );
        thread::spawn(move || copy(&mut from, &mut to, &dead, &mut |_| true))
    };
    let (mut from, mut to) = (server.try_clone().unwrap(), client.try_clone().unwrap());
    let mut since_armed = 0usize;
    let reset = copy(&mut from, &mut to, &dead, &mut |n| {
        if armed.load(Ordering::SeqCst) {
            since_armed += n;
        }
        since_armed < after || !armed.load(Ordering::SeqCst)
    });
    dead.store(true, Ordering::SeqCst);
    let _ = up.join();
    if reset {
        // SO_LINGER 0: closing the last descriptor sends RST instead of FIN.
        let linger = libc::linger {
            l_onoff: 1,
            l_linger: 0,
        };
        // SAFETY: a valid socket and a linger struct of the size given.
        unsafe {
            libc::setsockopt(
                client.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_LINGER,
                &linger as *const libc::linger as *const libc::c_void,
                std::mem::size_of::<libc::linger>() as libc::socklen_t,
            )
        };
        resets.fetch_add(1, Ordering::SeqCst);
    }
    drop(from);
    drop(to);
    drop(client);
}

/// Copies until EOF, an error, `dead`, or `go_on` (told each chunk's size) says stop; true in
/// the last case (the connection is to be reset).
pub fn copy(
    from: &mut TcpStream,
    to: &mut TcpStream,
    dead: &AtomicBool,
    go_on: &mut dyn FnMut(usize) -> bool,
) -> bool {
    let mut buf = [0u8; 16 * 1024];
    loop {
        if dead.load(Ordering::SeqCst) {
            return false;
        }
        match from.read(&mut buf) {
            Ok(0) => return false,
            Ok(n) => {
                if !go_on(n) {
                    return true;
                }
                if to.write_all(&buf[..n]).is_err() {
                    return false;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return false,
        }
    }
}

pub fn reset(name: &str, e: Engine) -> Row {
    let mut row = Row::new(
        name,
        "l.i1 failed with one sentence (connection reset), l.i0 and l.x kept, exit 1; the \
         server (dbperf server start) stops",
        10,
    );
    if !e.installed() {
        return row.skip("server not installed");
    }
    let mut l = Launch::new();
    let dir = l.tmp.path().join("server");
    let o = run(&[
        "server",
        "start",
        e.target(),
        "--dir",
        dir.to_str().unwrap(),
    ]);
    let _instance = Instance {
        target: e.target(),
        dir: &dir,
    };
    if o.status.code() != Some(0) {
        row.check(false, format!("server start: {}", text(&o)));
        return row;
    }
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("server.json")).unwrap()).unwrap();
    let port = state["port"].as_u64().unwrap() as u16;
    l.server = tree(state["pid"].as_i64().unwrap() as i32);
    let p = proxy(port, 4096);
    let toml = l.tmp.path().join("dbperf.toml");
    let user = if e == Engine::Postgres {
        "dbperf"
    } else {
        "root"
    };
    std::fs::write(
        &toml,
        format!(
            "[target.proxied]\nengine = \"{}\"\nhost = \"127.0.0.1\"\nport = {}\nuser = \"{user}\"\ndatabase = \"ib\"\npassword_env = \"DBPERF_TEST_SERVER_PASSWORD\"\n",
            e.target(),
            p.port
        ),
    )
    .unwrap();
    l.env.push((
        "DBPERF_TEST_SERVER_PASSWORD".into(),
        instance_password(&dir),
    ));
    let out = l.out.to_str().unwrap().to_string();
    l.start(&[
        "run",
        "--config-file",
        toml.to_str().unwrap(),
        "--target",
        "proxied",
        "--steps",
        "l.i0,l.x,l.i1",
        "--rows-l-i0",
        "5k",
        "--rows-l-i1",
        "50M",
        "--statement-timeout",
        "3",
        "--out",
        &out,
        "--no-progress",
    ]);
    if l.wait_for(60, |l| l.step("proxied", "l.x").exists())
        .is_none()
    {
        let ended = l.end(5);
        row.check(
            false,
            format!("l.x did not end: {}", short(&ended.stderr, 300)),
        );
        return row;
    }
    // Armed once l.i1's two connections (inserter, deleter) are relayed and logged in: dbperf's
    // counters connect, read and close before the step, and a reset during a login would be a
    // failure to connect, not the mid-step reset this case is about.
    if l.wait_for(60, |_| p.open.load(Ordering::SeqCst) >= 2)
        .is_none()
    {
        let ended = l.end(5);
        row.check(
            false,
            format!("l.i1 did not connect: {}", short(&ended.stderr, 300)),
        );
        return row;
    }
    thread::sleep(Duration::from_millis(300));
    p.armed.store(true, Ordering::SeqCst);
    let fault = Instant::now();
    let failed = l.wait_for(60, |l| l.step("proxied", "l.i1").exists());
    let ended = l.end(60);
    row.time_to_fail = failed.unwrap_or(ended.at).duration_since(fault);
    let (status, error) = step_status(&l, "proxied", "l.i1");
    row.observed = format!(
        "{}; connections reset: {}; l.i1 {}: \"{}\"",
        exit(ended.code),
        p.resets.load(Ordering::SeqCst),
        status_name(status),
        short(&error, 90)
    );
    row.check(ended.code == Some(1), "exit 1");
    row.check(status == Some(Status::Failed), "l.i1 failed");
    row.check(
        (error.contains("reset by peer") || error.contains("lost connection"))
            && !error.contains('\n'),
        "one sentence saying the connection was lost",
    );
    let (n, what) = steps_lost(&l.out, "proxied", &["l.i0", "l.x"]);
    row.steps_lost = n;
    row.check(what.is_empty(), format!("lost: {what:?}"));
    row.panics = panics(&ended.stderr);
    // The external server is the user's: dbperf leaves it running; `server stop` ends it.
    drop(_instance);
    let (n, what) = processes_left(&l.server, l.tmp.path());
    row.processes_left = n;
    row.check(what.is_empty(), format!("left: {what:?}"));
    row
}
