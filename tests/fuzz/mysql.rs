//! The MySQL/MariaDB packet reader: what a hostile or broken server can send to dbperf's client
//! (src/dbms/mysql_wire.rs, src/dbms/mysql_auth.rs over src/dbms/net.rs), from its greeting on.

use dbperf::dbms::mysql::{Mysql, Storage};
use dbperf::dbms::Dbms;
use dbperf::engines::Engine;
use proptest::prelude::*;

use super::wire::{self, Fake};
use super::{config, damage, word, Damage, Watch};

/// A server's public key for caching_sha2_password's full authentication over TCP.
const KEY_PKCS8: &[u8] = b"-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAihma2GKDt0LyZuqOriRn
6CP/tEpW9qwBM42n8/uH3lG11oR60kPx7fkytLh7fGIqA82t2E54r/d7ngK7XCiW
2g0Jjw6d4wMvHtJRrBNCV4v7Fcyvcsnm5jSBT9QXYE5eTwHRvg+x04GtPgZFlGiI
x+a6IPsRwlmuobOqQhbFYFU1/FbuHACFPXwgGV40qnMK5HQlkdUfkZBZf0kNmiVB
nBTou+wg2J6IGGGtBKvo42H6uw/oqkU3ISXNIlECdTDTR5yqR7T3bY4gCf17f8lN
l8sVdY4ep2ttM5fIDmDfsQm5NbxH2g1o3M5iSj4BPQMSTbkhLX2LpZIOzhL+JFzs
KQIDAQAB
-----END PUBLIC KEY-----
";

/// A 512-bit key in PKCS#1 form: valid, and small enough to matter for the padding.
const KEY_PKCS1: &[u8] = b"-----BEGIN RSA PUBLIC KEY-----
MEgCQQDBpmtUtDniy5KOhCAMDOkFRu8kavE9lU98AXMsw68ZQ1rGFvZWznVwt4KP
08Cm7Sbt5+t+Ta8dn/Q5jMB5VZH5AgMBAAE=
-----END RSA PUBLIC KEY-----
";

/// One packet; `len` replaces the true 3-byte length when set.
#[derive(Debug, Clone)]
pub struct Pkt {
    payload: Vec<u8>,
    len: Option<u32>,
}

fn pkt(payload: Vec<u8>) -> Pkt {
    Pkt { payload, len: None }
}

fn cstr(b: &[u8]) -> Vec<u8> {
    let mut v = b.to_vec();
    v.push(0);
    v
}

fn lenenc(v: u64) -> Vec<u8> {
    if v < 251 {
        vec![v as u8]
    } else if v < 1 << 16 {
        let mut b = vec![0xFC];
        b.extend_from_slice(&(v as u16).to_le_bytes());
        b
    } else if v < 1 << 24 {
        let mut b = vec![0xFD];
        b.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        b
    } else {
        let mut b = vec![0xFE];
        b.extend_from_slice(&v.to_le_bytes());
        b
    }
}

/// A length-encoded string: true length mostly, else any length (up to 8 bytes wide).
fn lenenc_str() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => word().prop_map(|w| [lenenc(w.len() as u64), w].concat()),
        1 => (any::<u64>(), word()).prop_map(|(n, w)| [lenenc(n), w].concat()),
        1 => prop::sample::select(vec![0xFBu8, 0xFF]).prop_map(|b| vec![b]),
    ]
}

const PLUGINS: &[&str] = &[
    "mysql_native_password",
    "caching_sha2_password",
    "mysql_clear_password",
    "auth_gssapi_client",
    "",
];

fn plugin() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => prop::sample::select(PLUGINS).prop_map(|p| p.as_bytes().to_vec()),
        1 => word(),
    ]
}

/// The protocol-10 greeting, with its fields varied.
fn greeting() -> impl Strategy<Value = Pkt> {
    let good_caps: u32 = (1 << 9) | (1 << 15) | (1 << 19) | (1 << 21) | (1 << 24) | 1 | (1 << 3);
    (
        prop_oneof![8 => Just(10u8), 1 => any::<u8>()],
        prop_oneof![4 => Just(good_caps), 1 => Just(good_caps & !(1 << 24)), 1 => any::<u32>()],
        any::<u8>(),
        prop::collection::vec(any::<u8>(), 0..24),
        plugin(),
        any::<bool>(),
    )
        .prop_map(|(version, caps, data_len, nonce2, plugin, short)| {
            pkt(greeting_payload(
                version, caps, data_len, &nonce2, &plugin, short,
            ))
        })
}

fn greeting_payload(
    version: u8,
    caps: u32,
    data_len: u8,
    nonce2: &[u8],
    plugin: &[u8],
    short: bool,
) -> Vec<u8> {
    let mut g = vec![version];
    g.extend(cstr(b"10.11.0-fake"));
    g.extend_from_slice(&1u32.to_le_bytes());
    g.extend_from_slice(b"abcdefgh\0");
    g.extend_from_slice(&(caps as u16).to_le_bytes());
    if !short {
        g.push(45);
        g.extend_from_slice(&2u16.to_le_bytes());
        g.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
        g.push(data_len);
        g.extend_from_slice(&[0; 10]);
        g.extend(cstr(nonce2));
        g.extend(cstr(plugin));
    }
    g
}

fn ok() -> impl Strategy<Value = Vec<u8>> {
    (any::<u64>(), any::<u64>(), any::<u16>(), any::<bool>()).prop_map(|(aff, id, st, eof)| {
        let mut p = vec![if eof { 0xFE } else { 0x00 }];
        p.extend(lenenc(aff));
        p.extend(lenenc(id));
        p.extend_from_slice(&st.to_le_bytes());
        p.extend_from_slice(&[0, 0]);
        p
    })
}

fn err() -> impl Strategy<Value = Vec<u8>> {
    (any::<u16>(), any::<bool>(), word()).prop_map(|(code, state, msg)| {
        let mut p = vec![0xFF];
        p.extend_from_slice(&code.to_le_bytes());
        if state {
            p.extend_from_slice(b"#40001");
        }
        p.extend(msg);
        p
    })
}

/// A public key: valid, damaged, or not a key at all.
fn key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(KEY_PKCS8.to_vec()),
        Just(KEY_PKCS1.to_vec()),
        (Just(KEY_PKCS8.to_vec()), damage()).prop_map(|(k, d)| d.apply(k)),
        word(),
    ]
}

/// The server's replies during the login.
fn auth_reply() -> impl Strategy<Value = Pkt> {
    prop_oneof![
        3 => Just(vec![0, 0, 0, 2, 0, 0, 0]),
        1 => err(),
        2 => (plugin(), prop::collection::vec(any::<u8>(), 0..24)).prop_map(|(p, n)| {
            let mut b = vec![0xFE];
            b.extend(cstr(&p));
            b.extend(cstr(&n));
            b
        }),
        2 => prop::sample::select(vec![3u8, 4, 9]).prop_map(|s| vec![1, s]),
        2 => key().prop_map(|k| [vec![1], k].concat()),
        1 => prop::collection::vec(any::<u8>(), 0..8),
    ]
    .prop_map(pkt)
}

/// A column definition (protocol 4.1) of any type.
fn column() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(lenenc_str(), 6),
        prop_oneof![4 => Just(0x0Cu8), 1 => any::<u8>()],
        prop_oneof![
            3 => prop::sample::select(vec![1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 17, 18, 19, 253, 252, 254, 15]),
            1 => any::<u8>(),
        ],
        any::<bool>(),
    )
        .prop_map(|(names, fixed, ty, short)| {
            let mut p = names.concat();
            p.push(fixed);
            p.extend_from_slice(&45u16.to_le_bytes());
            p.extend_from_slice(&100u32.to_le_bytes());
            if !short {
                p.push(ty);
                p.extend_from_slice(&[0, 0, 0, 0, 0]);
            }
            p
        })
}

/// A row: text (length-encoded values, 0xFB for NULL) or binary (0x00, NULL bitmap, values).
fn row() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(lenenc_str(), 0..5).prop_map(|v| v.concat()),
        (
            prop::collection::vec(any::<u8>(), 0..2),
            prop::collection::vec(
                prop_oneof![
                    prop::collection::vec(any::<u8>(), 0..9),
                    lenenc_str(),
                    (0u8..12, prop::collection::vec(any::<u8>(), 0..11)).prop_map(|(n, b)| [
                        vec![n],
                        b
                    ]
                    .concat()),
                ],
                0..5,
            ),
        )
            .prop_map(|(bitmap, vals)| [vec![0], bitmap, vals.concat()].concat()),
    ]
}

/// A COM_STMT_PREPARE reply: id, column and parameter counts (small mostly).
fn prepare_ok() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<u32>(),
        prop_oneof![4 => 0u16..4, 1 => any::<u16>()],
        prop_oneof![4 => 0u16..4, 1 => any::<u16>()],
    )
        .prop_map(|(id, cols, params)| {
            let mut p = vec![0];
            p.extend_from_slice(&id.to_le_bytes());
            p.extend_from_slice(&cols.to_le_bytes());
            p.extend_from_slice(&params.to_le_bytes());
            p.extend_from_slice(&[0, 0, 0]);
            p
        })
}

/// Any packet dbperf may meet after logging in (and some it never should).
fn packet() -> impl Strategy<Value = Pkt> {
    let column_count = prop_oneof![
        4 => (1u64..5).prop_map(lenenc),
        1 => any::<u64>().prop_map(lenenc),
    ];
    let p = prop_oneof![
        3 => ok(),
        1 => err(),
        2 => column_count,
        3 => column(),
        4 => row(),
        1 => prepare_ok(),
        1 => Just(vec![0xFB]),
        1 => (any::<u16>(), any::<u16>()).prop_map(|(w, s)| {
            let mut b = vec![0xFE];
            b.extend_from_slice(&w.to_le_bytes());
            b.extend_from_slice(&s.to_le_bytes());
            b
        }),
        1 => prop::collection::vec(any::<u8>(), 0..24),
    ];
    let len = prop_oneof![
        12 => Just(None),
        1 => prop::sample::select(vec![0u32, 1, 0xFF_FFFE, 0xFF_FFFF]).prop_map(Some),
        1 => (0u32..0x100_0000).prop_map(Some),
    ];
    (p, len).prop_map(|(payload, len)| Pkt { payload, len })
}

#[derive(Debug, Clone)]
pub enum Script {
    Bytes(Vec<u8>),
    Packets {
        greeting: Pkt,
        auth: Vec<Pkt>,
        after: Vec<Pkt>,
        damage: Damage,
    },
}

impl Script {
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Script::Bytes(b) => b.clone(),
            Script::Packets {
                greeting,
                auth,
                after,
                damage,
            } => {
                let mut out = Vec::new();
                for (seq, p) in std::iter::once(greeting)
                    .chain(auth)
                    .chain(after)
                    .enumerate()
                {
                    let len = p.len.unwrap_or(p.payload.len() as u32);
                    out.extend_from_slice(&len.to_le_bytes()[..3]);
                    out.push(seq as u8);
                    out.extend_from_slice(&p.payload);
                }
                damage.apply(out)
            }
        }
    }
}

fn script() -> impl Strategy<Value = Script> {
    let auth = prop_oneof![
        4 => Just(vec![pkt(vec![0, 0, 0, 2, 0, 0, 0])]),
        3 => prop::collection::vec(auth_reply(), 1..5),
        // caching_sha2_password's full authentication: over TCP the server sends its key.
        2 => (key(), any::<bool>()).prop_map(|(k, ok)| {
            let mut switch = vec![0xFE];
            switch.extend(cstr(b"caching_sha2_password"));
            switch.extend(cstr(b"abcdefghijklmnopqrst"));
            let mut v = vec![pkt(switch), pkt(vec![1, 4]), pkt([vec![1], k].concat())];
            if ok {
                v.push(pkt(vec![0, 0, 0, 2, 0, 0, 0]));
            }
            v
        }),
        1 => (1usize..24).prop_map(|n| {
            let mut p = vec![0xFE];
            p.extend(cstr(b"mysql_native_password"));
            p.extend(cstr(b"abcdefghijklmnopqrst"));
            vec![pkt(p); n]
        }),
    ];
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..256).prop_map(Script::Bytes),
        6 => (greeting(), auth, prop::collection::vec(packet(), 0..16), damage())
            .prop_map(|(greeting, auth, after, damage)| Script::Packets { greeting, auth, after, damage }),
    ]
}

/// Connects to a fake server sending `bytes` and, once logged in, uses every kind of call
/// dbperf makes: text queries, prepared statements with 0-3 parameters.
pub fn exercise(bytes: Vec<u8>, tcp: bool) -> Result<(), TestCaseError> {
    let fake = Fake::start(bytes, tcp, "mysql.sock");
    let my = Mysql::new(
        fake.endpoint.clone(),
        Engine::MariaDb,
        Storage::InnoDb,
        "fuzz",
        "",
    )
    .with_timeouts(wire::QUICK);
    wire::exercise(fake, &my, "SELECT ?")
}

proptest! {
    #![proptest_config(config(3000))]

    #[test]
    fn mysql_reader_survives_any_server(s in script(), tcp in prop::bool::weighted(0.3)) {
        exercise(s.bytes(), tcp)?;
    }
}

fn packets(ps: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for (seq, p) in ps.iter().enumerate() {
        out.extend_from_slice(&(p.len() as u32).to_le_bytes()[..3]);
        out.push(seq as u8);
        out.extend_from_slice(p);
    }
    out
}

/// A plain greeting: protocol 4.1, mysql_native_password, no DEPRECATE_EOF.
fn default_greeting() -> Vec<u8> {
    let caps: u32 = (1 << 9) | (1 << 15) | (1 << 19) | (1 << 21) | 1 | (1 << 3);
    greeting_payload(
        10,
        caps,
        21,
        b"ijklmnopqrst",
        b"mysql_native_password",
        false,
    )
}

/// The harness itself: a well-formed login and result reach the calls, so a case that ends in
/// errors does so because of what it sent.
#[test]
fn a_well_formed_server_is_understood() {
    let mut col = Vec::new();
    for s in ["def", "", "", "", "x", ""] {
        col.extend(lenenc(s.len() as u64));
        col.extend_from_slice(s.as_bytes());
    }
    col.push(0x0C);
    col.extend_from_slice(&45u16.to_le_bytes());
    col.extend_from_slice(&20u32.to_le_bytes());
    col.push(253);
    col.extend_from_slice(&[0; 5]);
    let eof = vec![0xFE, 0, 0, 2, 0];
    let bytes = packets(&[
        default_greeting(),
        vec![0, 0, 0, 2, 0, 0, 0],
        vec![1],
        col,
        eof.clone(),
        [lenenc(2), b"42".to_vec()].concat(),
        eof,
    ]);
    let fake = Fake::start(bytes, false, "mysql.sock");
    let my = Mysql::new(
        fake.endpoint.clone(),
        Engine::MariaDb,
        Storage::InnoDb,
        "f",
        "",
    )
    .with_timeouts(wire::QUICK);
    let mut c = my.connect().unwrap();
    assert_eq!(c.query_i64("SELECT 42").unwrap(), Some(42));
    let e = c.run_text("SELECT 1").unwrap_err();
    assert!(e.message.contains("lost connection"), "{}", e.message);
    drop(c);
    fake.finish();
}

/// Found by fuzzing: a server answering caching_sha2_password's key request with an empty (or
/// damaged) key made mysql_common panic inside the login; now it is an error sentence.
#[test]
fn an_empty_server_key_is_an_error_sentence() {
    let mut switch = vec![0xFE];
    switch.extend(cstr(b"caching_sha2_password"));
    switch.extend(cstr(b"abcdefghijklmnopqrst"));
    for key in [vec![1], [vec![1], KEY_PKCS8[..60].to_vec()].concat()] {
        let bytes = packets(&[default_greeting(), switch.clone(), vec![1, 4], key]);
        let fake = Fake::start(bytes, true, "");
        let my = Mysql::new(
            fake.endpoint.clone(),
            Engine::MariaDb,
            Storage::InnoDb,
            "f",
            "",
        )
        .with_timeouts(wire::QUICK);
        let watch = Watch::start();
        let e = format!("{:#}", my.connect().err().expect("the login fails"));
        assert!(
            e.contains("public key for caching_sha2_password is not usable"),
            "{e}"
        );
        watch.no_panic().unwrap();
        fake.finish();
    }
}
