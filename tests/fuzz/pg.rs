//! PostgreSQL's message reader: what a hostile or broken server can send to dbperf's client
//! (src/dbms/pg_wire.rs over src/dbms/net.rs), from the first byte of the login on.

use dbperf::dbms::postgres::Postgres;
use dbperf::dbms::Dbms;
use dbperf::engines::Engine;
use proptest::prelude::*;

use super::wire::{self, Fake};
use super::{config, damage, word, Damage};

/// One backend message; `len` replaces the true length field when set.
#[derive(Debug, Clone)]
pub struct Msg {
    ty: u8,
    body: Vec<u8>,
    len: Option<i32>,
}

impl Msg {
    fn new(ty: u8, body: Vec<u8>) -> Msg {
        Msg {
            ty,
            body,
            len: None,
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.ty);
        let len = self.len.unwrap_or(self.body.len() as i32 + 4);
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&self.body);
    }
}

fn cstr(b: &[u8]) -> Vec<u8> {
    let mut v = b.to_vec();
    v.push(0);
    v
}

fn i32s(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_be_bytes()).collect()
}

/// A length field: the true one mostly, else one that lies (negative, under 4, just over the
/// limit, or anything).
fn length() -> impl Strategy<Value = Option<i32>> {
    let max = dbperf::dbms::MAX_MESSAGE as i32;
    prop_oneof![
        12 => Just(None),
        1 => prop::sample::select(vec![-1, 0, 3, 5, 100, max + 1, max + 5, i32::MAX, i32::MIN]).prop_map(Some),
        // Within the limit but far beyond what follows: the client allocates, then meets EOF.
        1 => (4i32..=max).prop_map(Some),
    ]
}

/// Error and notice fields: type byte and value, then the terminating NUL (sometimes missing).
fn fields() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(
            (prop::sample::select(b"SVCMDHPWFLRsx".to_vec()), word()),
            0..6,
        ),
        any::<bool>(),
    )
        .prop_map(|(fs, end)| {
            let mut b = Vec::new();
            for (t, v) in fs {
                b.push(t);
                b.extend(cstr(&v));
            }
            if end {
                b.push(0);
            }
            b
        })
}

/// One column value of a DataRow: NULL, a value with its true length, or a lying length.
fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(i32s(&[-1])),
        word().prop_map(|w| {
            let mut b = i32s(&[w.len() as i32]);
            b.extend(w);
            b
        }),
        (any::<i32>(), word()).prop_map(|(n, w)| {
            let mut b = i32s(&[n]);
            b.extend(w);
            b
        }),
    ]
}

/// A column count: the true one mostly, else any i16.
fn count(n: usize) -> impl Strategy<Value = i16> {
    prop_oneof![4 => Just(n as i16), 1 => any::<i16>()]
}

fn data_row() -> impl Strategy<Value = Msg> {
    prop::collection::vec(value(), 0..5)
        .prop_flat_map(|vs| (count(vs.len()), Just(vs)))
        .prop_map(|(n, vs)| {
            let mut b = n.to_be_bytes().to_vec();
            b.extend(vs.concat());
            Msg::new(b'D', b)
        })
}

/// A command tag: a real one, one with a huge count, or any word.
fn tag() -> impl Strategy<Value = Msg> {
    prop_oneof![
        prop::sample::select(vec![
            "SELECT 1",
            "INSERT 0 100",
            "DELETE 5",
            "CREATE TABLE",
            "UPDATE 18446744073709551615",
            "SELECT 99999999999999999999999999999",
        ])
        .prop_map(|t| t.as_bytes().to_vec()),
        "[A-Z]{1,8} [0-9]{0,30}".prop_map(String::into_bytes),
        word(),
    ]
    .prop_flat_map(|t| (Just(t), any::<bool>()))
    .prop_map(|(t, nul)| Msg::new(b'C', if nul { cstr(&t) } else { t }))
}

/// ParameterDescription: a count and type OIDs (the integer types mostly).
fn param_types() -> impl Strategy<Value = Msg> {
    prop::collection::vec(
        prop_oneof![Just(20), Just(21), Just(23), Just(25), any::<i32>()],
        0..4,
    )
    .prop_flat_map(|ts| (count(ts.len()), Just(ts)))
    .prop_map(|(n, ts)| {
        let mut b = n.to_be_bytes().to_vec();
        b.extend(i32s(&ts));
        Msg::new(b't', b)
    })
}

/// RowDescription: a count and, per column, a name and 18 bytes of attributes.
fn row_description() -> impl Strategy<Value = Msg> {
    prop::collection::vec((word(), prop::collection::vec(any::<u8>(), 18)), 0..4)
        .prop_flat_map(|cs| (count(cs.len()), Just(cs)))
        .prop_map(|(n, cs)| {
            let mut b = n.to_be_bytes().to_vec();
            for (name, attrs) in cs {
                b.extend(cstr(&name));
                b.extend(attrs);
            }
            Msg::new(b'T', b)
        })
}

fn ready() -> impl Strategy<Value = Msg> {
    prop_oneof![
        4 => prop::sample::select(b"ITE".to_vec()).prop_map(|s| Msg::new(b'Z', vec![s])),
        1 => prop::collection::vec(any::<u8>(), 0..3).prop_map(|b| Msg::new(b'Z', b)),
    ]
}

/// An authentication request: ok, cleartext, MD5 (with its salt or short of it), SASL (with a
/// mechanism list), SASL continue/final with junk, or a method dbperf does not speak.
fn auth() -> impl Strategy<Value = Msg> {
    let req = |code: i32, rest: Vec<u8>| {
        let mut b = i32s(&[code]);
        b.extend(rest);
        Msg::new(b'R', b)
    };
    prop_oneof![
        Just(req(0, vec![])),
        Just(req(3, vec![])),
        prop::collection::vec(any::<u8>(), 0..6).prop_map(move |s| req(5, s)),
        prop::collection::vec(
            prop_oneof![
                Just(b"SCRAM-SHA-256".to_vec()),
                Just(b"SCRAM-SHA-256-PLUS".to_vec()),
                word()
            ],
            0..3
        )
        .prop_map(move |ms| {
            let mut b = Vec::new();
            for m in ms {
                b.extend(cstr(&m));
            }
            b.push(0);
            req(10, b)
        }),
        (prop::sample::select(vec![11, 12]), word()).prop_map(move |(c, w)| req(c, w)),
        (
            prop::sample::select(vec![11, 12]),
            Just(b"r=abc,s=c2FsdA==,i=4096".to_vec())
        )
            .prop_map(move |(c, w)| req(c, w)),
        any::<i32>().prop_map(move |c| req(c, vec![])),
    ]
}

/// Any backend message dbperf may meet after logging in (and some it never should).
fn message() -> impl Strategy<Value = Msg> {
    let any_msg =
        (any::<u8>(), prop::collection::vec(any::<u8>(), 0..24)).prop_map(|(t, b)| Msg::new(t, b));
    let m = prop_oneof![
        4 => data_row(),
        2 => tag(),
        2 => ready(),
        1 => param_types(),
        1 => row_description(),
        1 => fields().prop_map(|b| Msg::new(b'E', b)),
        1 => fields().prop_map(|b| Msg::new(b'N', b)),
        1 => (word(), word()).prop_map(|(k, v)| Msg::new(b'S', [cstr(&k), cstr(&v)].concat())),
        1 => prop::sample::select(b"123nsI".to_vec()).prop_map(|t| Msg::new(t, vec![])),
        1 => auth(),
        1 => any_msg,
    ];
    (m, length()).prop_map(|(mut m, len)| {
        m.len = len;
        m
    })
}

/// The login: authentication requests (sometimes endless), an error, or a plain trust login.
fn login() -> impl Strategy<Value = Vec<Msg>> {
    let trust = (
        prop::collection::vec((word(), word()), 0..3),
        prop::option::of(prop::collection::vec(any::<u8>(), 8)),
    )
        .prop_map(|(params, key)| {
            let mut v = vec![Msg::new(b'R', i32s(&[0]))];
            for (k, val) in params {
                v.push(Msg::new(b'S', [cstr(&k), cstr(&val)].concat()));
            }
            if let Some(k) = key {
                v.push(Msg::new(b'K', k));
            }
            v.push(Msg::new(b'Z', b"I".to_vec()));
            v
        });
    prop_oneof![
        6 => trust,
        2 => prop::collection::vec(auth(), 1..4).prop_flat_map(|mut a| {
            a.push(Msg::new(b'R', i32s(&[0])));
            a.push(Msg::new(b'Z', b"I".to_vec()));
            Just(a)
        }),
        1 => (1usize..40).prop_map(|n| vec![Msg::new(b'R', i32s(&[3])); n]),
        1 => fields().prop_map(|b| vec![Msg::new(b'E', b)]),
    ]
}

/// What the fake server sends: arbitrary bytes, or a login and messages, damaged.
#[derive(Debug, Clone)]
pub enum Script {
    Bytes(Vec<u8>),
    Messages {
        login: Vec<Msg>,
        after: Vec<Msg>,
        damage: Damage,
    },
}

impl Script {
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Script::Bytes(b) => b.clone(),
            Script::Messages {
                login,
                after,
                damage,
            } => {
                let mut out = Vec::new();
                for m in login.iter().chain(after) {
                    m.encode(&mut out);
                }
                damage.apply(out)
            }
        }
    }
}

fn script() -> impl Strategy<Value = Script> {
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..256).prop_map(Script::Bytes),
        6 => (login(), prop::collection::vec(message(), 0..16), damage())
            .prop_map(|(login, after, damage)| Script::Messages { login, after, damage }),
    ]
}

/// Connects to a fake server sending `bytes` and, once logged in, uses every kind of call
/// dbperf makes: text queries, prepared statements with 0-3 parameters.
pub fn exercise(bytes: Vec<u8>, tcp: bool) -> Result<(), TestCaseError> {
    let fake = Fake::start(bytes, tcp, ".s.PGSQL.");
    let pg = Postgres::new(fake.endpoint.clone(), Engine::Postgres, "fuzz", "")
        .with_timeouts(wire::QUICK);
    wire::exercise(fake, &pg, "SELECT $1")
}

proptest! {
    #![proptest_config(config(3000))]

    #[test]
    fn postgres_reader_survives_any_server(s in script(), tcp in prop::bool::weighted(0.2)) {
        exercise(s.bytes(), tcp)?;
    }
}

/// The harness itself: a well-formed login and answers reach the calls as results, so a case
/// that ends in errors does so because of what it sent.
#[test]
fn a_well_formed_server_is_understood() {
    let mut out = Vec::new();
    let ready = || Msg::new(b'Z', b"I".to_vec());
    let row = |v: &[u8]| {
        let mut b = 1i16.to_be_bytes().to_vec();
        b.extend(i32s(&[v.len() as i32]));
        b.extend_from_slice(v);
        Msg::new(b'D', b)
    };
    for m in [
        Msg::new(b'R', i32s(&[0])),
        ready(),
        row(b"42"),
        Msg::new(b'C', cstr(b"SELECT 1")),
        ready(),
    ] {
        m.encode(&mut out);
    }
    let fake = Fake::start(out, false, ".s.PGSQL.");
    let pg = Postgres::new(fake.endpoint.clone(), Engine::Postgres, "fuzz", "")
        .with_timeouts(wire::QUICK);
    let mut c = pg.connect().unwrap();
    assert_eq!(c.query_i64("SELECT 42").unwrap(), Some(42));
    let e = c.run_text("SELECT 1").unwrap_err();
    assert!(e.message.contains("lost connection"), "{}", e.message);
    drop(c);
    fake.finish();
}

/// Found by fuzzing: a command tag with more digits than a u64 holds overflowed.
#[test]
fn a_command_tag_beyond_u64_is_read() {
    let mut out = Vec::new();
    for m in [
        Msg::new(b'R', i32s(&[0])),
        Msg::new(b'Z', b"I".to_vec()),
        Msg::new(b'C', cstr(b"A 6886012978347533906 2")),
        Msg::new(b'Z', b"I".to_vec()),
        Msg::new(b'C', cstr(b"INSERT 0 99999999999999999999999")),
        Msg::new(b'Z', b"I".to_vec()),
    ] {
        m.encode(&mut out);
    }
    let fake = Fake::start(out, false, ".s.PGSQL.");
    let pg = Postgres::new(fake.endpoint.clone(), Engine::Postgres, "fuzz", "")
        .with_timeouts(wire::QUICK);
    let mut c = pg.connect().unwrap();
    assert_eq!(c.run_text("SELECT 1").unwrap(), 2);
    assert_eq!(c.run_text("INSERT").unwrap(), u64::MAX);
    drop(c);
    fake.finish();
}
