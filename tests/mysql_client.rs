//! dbperf's own MySQL-protocol client (src/dbms/mysql_wire.rs) against a real MariaDB that
//! `dbperf server start` runs: both transports, passwords right and wrong, NULLs in binary and
//! text results, errors from the second of several statements, a lock wait timeout counted as
//! transient, and a value larger than one 16 MiB protocol packet in both directions. And against
//! a real Oracle MySQL 9 (9.7, fetched from Debian sid): caching_sha2_password's full and fast
//! authentication over TCP without TLS (the RSA exchange) and over the socket, with a password
//! and with an empty one, and MySQL's lock wait timeout and deadlock as transient errors.

use crate::common;

use common::*;
use dbperf::dbms::mysql::{Mysql, Storage};
use dbperf::dbms::{Conn, Dbms, Endpoint, Param, Transport};
use dbperf::engines::Engine;

struct Server {
    port: u16,
    socket: std::path::PathBuf,
}

fn endpoint(s: &Server, tcp: bool, user: &str, password: Option<&str>) -> Endpoint {
    Endpoint {
        transport: if tcp {
            Transport::Tcp {
                host: "127.0.0.1".into(),
                port: s.port,
            }
        } else {
            Transport::Socket {
                path: s.socket.clone(),
            }
        },
        user: user.into(),
        password: password.map(str::to_string),
        database: "ib".into(),
    }
}

fn connect(s: &Server, tcp: bool, user: &str, password: Option<&str>) -> Box<dyn Conn> {
    mysql(s, tcp, user, password)
        .connect()
        .unwrap_or_else(|e| panic!("connect as {user} (tcp {tcp}): {e:#}"))
}

fn mysql(s: &Server, tcp: bool, user: &str, password: Option<&str>) -> Mysql {
    mysql_of(Engine::MariaDb, s, tcp, user, password)
}

fn mysql_of(engine: Engine, s: &Server, tcp: bool, user: &str, password: Option<&str>) -> Mysql {
    Mysql::new(
        endpoint(s, tcp, user, password),
        engine,
        Storage::InnoDb,
        "default",
        "",
    )
}

#[test]
fn the_protocol_client_on_real_mariadb() {
    if !mariadb(false) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ma");
    let o = run(&["server", "start", "mariadb", "--dir", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let _instance = Instance {
        target: "mariadb",
        dir: &dir,
    };
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("server.json")).unwrap()).unwrap();
    let s = Server {
        port: state["port"].as_u64().unwrap() as u16,
        socket: state["socket"].as_str().unwrap().into(),
    };

    let own = instance_password(&dir);
    let own = Some(own.as_str());
    let mut root = connect(&s, true, "root", own);
    root.execute_batch(
        "CREATE TABLE t (id bigint primary key, c varchar(100), d datetime, n int, \
         b longblob) engine=innodb; \
         CREATE USER 'pw'@'%' IDENTIFIED BY 's3cret'; \
         CREATE USER 'pw'@'localhost' IDENTIFIED BY 's3cret'; \
         GRANT ALL ON ib.* TO 'pw'@'%'; GRANT ALL ON ib.* TO 'pw'@'localhost'",
    )
    .unwrap();

    for tcp in [true, false] {
        // Passwords: right, then wrong, over both transports.
        let mut c = connect(&s, tcp, "pw", Some("s3cret"));
        assert_eq!(c.query_i64("SELECT 41 + 1").unwrap(), Some(42));
        wrong_password_is_refused(mysql(&s, tcp, "pw", Some("wrong")));

        // Prepared statements with every parameter kind, NULLs among the columns read back.
        c.execute_batch("DELETE FROM t").unwrap();
        let ins = c
            .prepare("INSERT INTO t (id, c, d, n) VALUES (?, ?, ?, NULL)")
            .unwrap();
        for id in 1..=5 {
            let text = format!("row {id}");
            let n = c
                .execute(
                    ins,
                    &[
                        Param::Int(id),
                        Param::Text(&text),
                        Param::DateTime("2024-02-03 04:05:06"),
                    ],
                )
                .unwrap();
            assert_eq!(n, 1);
        }
        // A timestamp that is not in the binary form goes as text and the server parses it.
        c.execute(
            ins,
            &[
                Param::Int(6),
                Param::Text("six"),
                Param::DateTime("2024-02-03"),
            ],
        )
        .unwrap();
        let sel = c
            .prepare("SELECT id, c, d, n, b FROM t WHERE id >= ? ORDER BY id")
            .unwrap();
        assert_eq!(c.query(sel, &[Param::Int(2)]).unwrap(), 5);
        assert_eq!(c.query(sel, &[Param::Int(7)]).unwrap(), 0);
        // The same statement again, after the parameter types were cached.
        assert_eq!(c.query(sel, &[Param::Int(1)]).unwrap(), 6);
        assert_eq!(
            c.query_i64("SELECT count(*) FROM t WHERE d = '2024-02-03 04:05:06' AND n IS NULL")
                .unwrap(),
            Some(5)
        );
        assert_eq!(c.query_i64("SELECT NULL").unwrap(), None);
        let up = c.prepare("UPDATE t SET n = ? WHERE id <= ?").unwrap();
        assert_eq!(c.execute(up, &[Param::Int(9), Param::Int(3)]).unwrap(), 3);

        // The error of the second of two statements is not lost; the connection stays usable.
        let err = c
            .execute_batch("SELECT 1; SELECT * FROM no_such_table")
            .unwrap_err();
        assert!(err.message.contains("ERROR 1146"), "{}", err.message);
        assert!(!err.transient);
        assert_eq!(c.query_i64("SELECT 7").unwrap(), Some(7));
    }

    // A lock wait timeout is transient: counted and retried by the benchmarks, not fatal.
    let mut a = connect(&s, true, "root", own);
    let mut b = connect(&s, false, "root", own);
    lock_wait_times_out_transiently(&mut *a, &mut *b, "t");

    // More than one protocol packet (16 MiB - 1) each way.
    root.execute_batch("SET GLOBAL max_allowed_packet = 64 * 1024 * 1024")
        .unwrap();
    let mut big = connect(&s, true, "root", own);
    let blob = "x".repeat(17 * 1024 * 1024 + 3);
    let put = big.prepare("UPDATE t SET b = ? WHERE id = ?").unwrap();
    assert_eq!(
        big.execute(put, &[Param::Text(&blob), Param::Int(2)])
            .unwrap(),
        1
    );
    assert_eq!(
        big.query_i64("SELECT length(b) FROM t WHERE id = 2")
            .unwrap(),
        Some(blob.len() as i64)
    );
    let get = big
        .prepare("SELECT id, b, n FROM t WHERE id BETWEEN ? AND ? ORDER BY id")
        .unwrap();
    assert_eq!(big.query(get, &[Param::Int(1), Param::Int(3)]).unwrap(), 3);
    // The text protocol reads it too, and the connection is still in step afterwards.
    big.execute_batch("SELECT b FROM t WHERE id = 2").unwrap();
    assert_eq!(big.query_i64("SELECT 5").unwrap(), Some(5));

    let v = mysql(&s, false, "root", own).version().unwrap();
    assert!(v.contains("MariaDB"), "{v}");
}

/// A login with the password "wrong" is refused with MySQL's 1045, which does not repeat it.
fn wrong_password_is_refused(m: Mysql) {
    let err = m.connect().err().expect("a wrong password is refused");
    let msg = format!("{err:#}");
    assert!(msg.contains("ERROR 1045 (28000)"), "{msg}");
    assert!(!msg.contains("wrong"), "the password leaked: {msg}");
}

/// `b` waits for a row `a` holds in `table` (id 1, column n) until innodb_lock_wait_timeout:
/// error 1205, transient; once `a` lets go, the same statement goes through.
fn lock_wait_times_out_transiently(a: &mut dyn Conn, b: &mut dyn Conn, table: &str) {
    a.execute_batch(&format!("BEGIN; UPDATE {table} SET n = 1 WHERE id = 1"))
        .unwrap();
    b.execute_batch("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    let upd = b
        .prepare(&format!("UPDATE {table} SET n = 2 WHERE id = ?"))
        .unwrap();
    let err = b.execute(upd, &[Param::Int(1)]).unwrap_err();
    assert!(err.transient, "{}", err.message);
    assert!(err.message.contains("ERROR 1205"), "{}", err.message);
    a.execute_batch("ROLLBACK").unwrap();
    assert_eq!(b.execute(upd, &[Param::Int(1)]).unwrap(), 1);
}

/// The instance `dbperf server start` made in `dir`: its port and socket (server.json).
fn started(dir: &std::path::Path) -> Server {
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("server.json")).unwrap()).unwrap();
    Server {
        port: state["port"].as_u64().unwrap() as u16,
        socket: state["socket"].as_str().unwrap().into(),
    }
}

#[test]
fn caching_sha2_password_on_real_mysql_9_over_tcp_and_the_socket() {
    if !mysql_9() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("my");
    let cache = fetch_cache();
    let o = run(&[
        "server",
        "start",
        "mysql@9",
        "--dir",
        dir.to_str().unwrap(),
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let _instance = Instance {
        target: "mysql@9",
        dir: &dir,
    };
    let s = started(&dir);
    let own = instance_password(&dir);
    let own = Some(own.as_str());
    let my = |tcp: bool, user: &str, pw: Option<&str>| mysql_of(Engine::MySql, &s, tcp, user, pw);
    let mut root = my(true, "root", own).connect().expect("root over TCP");
    root.execute_batch(
        "CREATE TABLE ib.t (id bigint primary key, n int) engine=innodb; \
         INSERT INTO ib.t VALUES (1, 0), (2, 0); \
         CREATE USER 'pw'@'%' IDENTIFIED BY 's3cret'; \
         CREATE USER 'nopw'@'%' IDENTIFIED BY ''; \
         GRANT ALL ON ib.* TO 'pw'@'%'; GRANT ALL ON ib.* TO 'nopw'@'%'",
    )
    .unwrap();
    assert_eq!(
        root.query_i64(
            "SELECT count(*) FROM mysql.user WHERE user IN ('pw', 'nopw') \
             AND plugin = 'caching_sha2_password'"
        )
        .unwrap(),
        Some(2),
        "MySQL 9's accounts authenticate with caching_sha2_password"
    );
    for tcp in [true, false] {
        // FLUSH PRIVILEGES empties the server's cache of verified passwords: the first login
        // after it takes the full authentication (over TCP without TLS, the password goes
        // encrypted with the server's RSA key), the second the fast one from the cache.
        root.execute_batch("FLUSH PRIVILEGES").unwrap();
        for attempt in ["full", "fast"] {
            let mut c = my(tcp, "pw", Some("s3cret"))
                .connect()
                .unwrap_or_else(|e| panic!("{attempt} auth (tcp {tcp}): {e:#}"));
            assert_eq!(c.query_i64("SELECT 41 + 1").unwrap(), Some(42));
        }
        let mut c = my(tcp, "nopw", None)
            .connect()
            .unwrap_or_else(|e| panic!("empty password (tcp {tcp}): {e:#}"));
        assert_eq!(c.query_i64("SELECT 1").unwrap(), Some(1));
        wrong_password_is_refused(my(tcp, "pw", Some("wrong")));
    }
    // The benchmark's logins never asked for TLS.
    assert_eq!(
        root.query_i64(
            "SELECT CAST(variable_value AS SIGNED) FROM performance_schema.global_status \
             WHERE variable_name = 'Ssl_accepts'"
        )
        .unwrap(),
        Some(0)
    );

    // A lock wait timeout (1205) and a deadlock (1213) are transient: counted and retried.
    let mut a = my(true, "pw", Some("s3cret")).connect().unwrap();
    let mut b = my(false, "pw", Some("s3cret")).connect().unwrap();
    lock_wait_times_out_transiently(&mut *a, &mut *b, "ib.t");
    b.execute_batch("ROLLBACK").unwrap();
    a.execute_batch("BEGIN; UPDATE ib.t SET n = 1 WHERE id = 1")
        .unwrap();
    // The second transaction runs on a thread of its own (a connection is not Send, so it is
    // made there): it holds row 2, then waits for row 1 while `a` asks for row 2.
    let (locked, holds_2) = std::sync::mpsc::channel();
    let (first, second) = std::thread::scope(|sc| {
        // The sender moves into the thread: should it fail before sending, the receiver
        // hears that at once instead of waiting.
        let other = sc.spawn(move || {
            let mut b = my(false, "pw", Some("s3cret")).connect().unwrap();
            b.execute_batch("BEGIN; UPDATE ib.t SET n = 1 WHERE id = 2")
                .unwrap();
            locked.send(()).unwrap();
            let r = b.execute_batch("UPDATE ib.t SET n = 2 WHERE id = 1");
            let _ = b.execute_batch("ROLLBACK");
            r
        });
        holds_2
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the other transaction holds row 2");
        // Give `b` time to start waiting for row 1 (if it has not, `a` waits and `b` is the
        // victim instead: either way one of the two gets 1213).
        std::thread::sleep(std::time::Duration::from_millis(300));
        let first = a.execute_batch("UPDATE ib.t SET n = 2 WHERE id = 2");
        let _ = a.execute_batch("ROLLBACK");
        (first, other.join().unwrap())
    });
    let err = match (first, second) {
        (Err(e), Ok(())) | (Ok(()), Err(e)) => e,
        other => panic!("one of the two is the deadlock's victim: {other:?}"),
    };
    assert!(err.message.contains("ERROR 1213"), "{}", err.message);
    assert!(err.transient, "{}", err.message);

    let v = my(false, "root", own).version().unwrap();
    assert!(v.starts_with("9."), "{v}");
}
