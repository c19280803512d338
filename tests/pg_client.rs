//! dbperf's own PostgreSQL protocol client (src/dbms/pg_wire.rs) against a real PostgreSQL that
//! `dbperf server start` runs: both transports, SCRAM-SHA-256 (dbperf's own superuser), trust and
//! MD5 logins (right and wrong passwords), parameters in binary and text, NULLs, command-tag counts, the error of the
//! second of several statements, a lock timeout counted as transient, a session the server
//! terminates, and a value larger than the read buffer.

use crate::common;

use common::*;
use dbperf::dbms::postgres::{ping, Postgres};
use dbperf::dbms::{Conn, Dbms, Endpoint, Param, Transport};
use dbperf::engines::Engine;

struct Server {
    port: u16,
    socket_dir: std::path::PathBuf,
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
                path: s.socket_dir.join(format!(".s.PGSQL.{}", s.port)),
            }
        },
        user: user.into(),
        password: password.map(str::to_string),
        database: "ib".into(),
    }
}

fn pg(s: &Server, tcp: bool, user: &str, password: Option<&str>) -> Postgres {
    Postgres::new(
        endpoint(s, tcp, user, password),
        Engine::Postgres,
        "default",
        "",
    )
}

fn connect(s: &Server, tcp: bool, user: &str, password: Option<&str>) -> Box<dyn Conn> {
    pg(s, tcp, user, password)
        .connect()
        .unwrap_or_else(|e| panic!("connect as {user} (tcp {tcp}): {e:#}"))
}

#[test]
fn the_protocol_client_on_real_postgres() {
    if !postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pg");
    let o = run(&[
        "server",
        "start",
        "postgres",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let _instance = Instance {
        target: "postgres",
        dir: &dir,
    };
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("server.json")).unwrap()).unwrap();
    let socket: std::path::PathBuf = state["socket"].as_str().unwrap().into();
    let s = Server {
        port: state["port"].as_u64().unwrap() as u16,
        socket_dir: if socket.is_dir() {
            socket.clone()
        } else {
            socket.parent().unwrap().to_path_buf()
        },
    };
    let own = instance_password(&dir);
    let own = Some(own.as_str());
    assert!(ping(&endpoint(&s, true, "dbperf", own)));

    // Password and trust logins: pg_hba.conf rules for three users, ahead of dbperf's.
    let datadir: std::path::PathBuf = state["datadir"].as_str().unwrap().into();
    let hba = datadir.join("pg_hba.conf");
    let old = std::fs::read_to_string(&hba).unwrap();
    std::fs::write(
        &hba,
        format!(
            "local all scram scram-sha-256\nhost all scram 127.0.0.1/32 scram-sha-256\n\
             local all md5u md5\nhost all md5u 127.0.0.1/32 md5\n\
             local all trustu trust\nhost all trustu 127.0.0.1/32 trust\n{old}"
        ),
    )
    .unwrap();
    let mut admin = connect(&s, true, "dbperf", own);
    admin
        .execute_batch(
            "SET password_encryption = 'scram-sha-256'; CREATE ROLE scram LOGIN PASSWORD 's3cret'; \
             SET password_encryption = 'md5'; CREATE ROLE md5u LOGIN PASSWORD 'm5pw'; \
             CREATE ROLE trustu LOGIN; \
             GRANT ALL ON SCHEMA public TO scram, md5u; SELECT pg_reload_conf()",
        )
        .unwrap();
    admin
        .execute_batch(
            "CREATE TABLE t (id bigint PRIMARY KEY, k int, s smallint, c varchar(100), \
             d timestamp, n numeric, b text); GRANT ALL ON t TO scram, md5u",
        )
        .unwrap();

    for tcp in [true, false] {
        let mut c = connect(&s, tcp, "scram", Some("s3cret"));
        assert_eq!(c.query_i64("SELECT 41 + 1").unwrap(), Some(42));
        let mut m = connect(&s, tcp, "md5u", Some("m5pw"));
        assert_eq!(m.query_i64("SELECT 2").unwrap(), Some(2));
        let mut tr = connect(&s, tcp, "trustu", None);
        assert_eq!(tr.query_i64("SELECT 3").unwrap(), Some(3));
        for (user, pw) in [("scram", "wrong"), ("md5u", "wrong")] {
            let err = pg(&s, tcp, user, Some(pw)).connect().err().unwrap();
            let msg = format!("{err:#}");
            assert!(msg.contains("SQLSTATE 28P01"), "{msg}");
            assert!(!msg.contains("wrong"), "the password leaked: {msg}");
        }
        let err = pg(&s, tcp, "scram", None).connect().err().unwrap();
        assert!(format!("{err:#}").contains("password_env"), "{err:#}");

        // Every parameter kind, into columns typed int8, int4, int2, varchar, timestamp, numeric.
        c.execute_batch("DELETE FROM t").unwrap();
        let ins = c
            .prepare("INSERT INTO t (id, k, s, c, d, n) VALUES ($1, $2, $3, $4, $5, $6)")
            .unwrap();
        for id in 1..=5i64 {
            let text = format!("row {id}");
            let n = c
                .execute(
                    ins,
                    &[
                        Param::Int(id),
                        Param::Int(-id),
                        Param::Int(id * 100),
                        Param::Text(&text),
                        Param::DateTime("2024-02-03 04:05:06"),
                        Param::Int(id << 40),
                    ],
                )
                .unwrap();
            assert_eq!(n, 1);
        }
        assert_eq!(
            c.query_i64(
                "SELECT sum(k) + sum(s) FROM t WHERE n > 1000000 AND d = '2024-02-03 04:05:06'"
            )
            .unwrap(),
            Some(-15 + 1500)
        );
        // An int4 placeholder given a value it cannot hold goes as text: the server's own error.
        let err = c
            .execute(
                ins,
                &[
                    Param::Int(9),
                    Param::Int(1 << 40),
                    Param::Int(1),
                    Param::Text("x"),
                    Param::DateTime("2024-02-03 04:05:06"),
                    Param::Int(1),
                ],
            )
            .unwrap_err();
        assert!(err.message.contains("SQLSTATE 22003"), "{}", err.message);
        assert!(!err.transient);

        let sel = c
            .prepare("SELECT id, c, d, b FROM t WHERE id >= $1 ORDER BY id")
            .unwrap();
        assert_eq!(c.query(sel, &[Param::Int(2)]).unwrap(), 4);
        assert_eq!(c.query(sel, &[Param::Int(7)]).unwrap(), 0);
        let up = c.prepare("UPDATE t SET b = $1 WHERE id <= $2").unwrap();
        assert_eq!(
            c.execute(up, &[Param::Text("u"), Param::Int(3)]).unwrap(),
            3
        );
        let del = c.prepare("DELETE FROM t WHERE id > $1").unwrap();
        assert_eq!(c.execute(del, &[Param::Int(3)]).unwrap(), 2);
        assert_eq!(c.query_i64("SELECT NULL::int").unwrap(), None);

        // The second statement's error is returned and the connection stays usable.
        let err = c
            .execute_batch("SELECT 1; SELECT * FROM no_such_table")
            .unwrap_err();
        assert!(err.message.contains("SQLSTATE 42P01"), "{}", err.message);
        assert!(!err.transient);
        assert_eq!(c.query_i64("SELECT 7").unwrap(), Some(7));
    }

    // A lock timeout is transient: counted and retried by the benchmarks, not fatal.
    let mut a = connect(&s, true, "dbperf", own);
    let mut b = connect(&s, false, "dbperf", own);
    a.execute_batch("BEGIN; UPDATE t SET k = 1 WHERE id = 1")
        .unwrap();
    b.execute_batch("SET lock_timeout = '300ms'").unwrap();
    let upd = b.prepare("UPDATE t SET k = 2 WHERE id = $1").unwrap();
    let err = b.execute(upd, &[Param::Int(1)]).unwrap_err();
    assert!(err.transient, "{}", err.message);
    assert!(err.message.contains("SQLSTATE 55P03"), "{}", err.message);
    a.execute_batch("ROLLBACK").unwrap();
    assert_eq!(b.execute(upd, &[Param::Int(1)]).unwrap(), 1);

    // A value larger than the 64 KiB read buffer, both ways.
    let big = "y".repeat(3 * 1024 * 1024 + 1);
    let put = a.prepare("UPDATE t SET b = $1 WHERE id = $2").unwrap();
    assert_eq!(
        a.execute(put, &[Param::Text(&big), Param::Int(2)]).unwrap(),
        1
    );
    let get = a.prepare("SELECT b FROM t WHERE id = $1").unwrap();
    assert_eq!(a.query(get, &[Param::Int(2)]).unwrap(), 1);
    assert_eq!(
        a.query_i64("SELECT length(b) FROM t WHERE id = 2").unwrap(),
        Some(big.len() as i64)
    );

    // A session the server terminates: the server's words, not transient.
    let pid = b.query_i64("SELECT pg_backend_pid()").unwrap().unwrap();
    a.execute_batch(&format!("SELECT pg_terminate_backend({pid})"))
        .unwrap();
    let err = b.execute(upd, &[Param::Int(1)]).unwrap_err();
    assert!(!err.transient, "{}", err.message);
    assert!(
        err.message.contains("57P01") || err.message.contains("lost connection"),
        "{}",
        err.message
    );

    let v = pg(&s, false, "dbperf", own).version().unwrap();
    assert!(v.starts_with("PostgreSQL"), "{v}");
}
