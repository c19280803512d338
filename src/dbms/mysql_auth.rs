//! Logging in to MySQL/MariaDB: `mysql_native_password` and `caching_sha2_password` (fast path,
//! and full authentication: the cleartext password over a unix socket, or RSA-encrypted with the
//! server's public key over TCP), following authentication switch requests. The scrambles are
//! two hashes each, written here on the `sha1` and `sha2` crates (the protocol crate
//! `mysql_common` once gave them, with a regex engine and a bignum library dbperf never used); the
//! RSA encryption is the `rsa` crate's (it refuses a bad key with an error where `mysql_common`
//! panics).

use sha2::Digest;

use super::mysql_wire::{parse_err, protocol, Handshake, Reader, Wire, WireError};
use super::{Endpoint, Timeouts};

const NATIVE: &str = "mysql_native_password";
const SHA2: &str = "caching_sha2_password";
const CLEAR: &str = "mysql_clear_password";
/// More exchanges than any plugin needs (a switch, then caching_sha2's key and password): a
/// server that keeps asking is not logging anyone in.
const MAX_AUTH_ROUNDS: usize = 16;

fn scramble(plugin: &str, nonce: &[u8], password: &[u8]) -> Option<Vec<u8>> {
    if password.is_empty() {
        return Some(Vec::new());
    }
    match plugin {
        NATIVE => Some(scramble_native(nonce, password)),
        SHA2 => Some(scramble_sha256(nonce, password)),
        _ => None,
    }
}

/// Connects and logs in over exactly the transport the endpoint names.
pub fn connect(e: &Endpoint, timeouts: Timeouts) -> Result<Wire, WireError> {
    let (mut w, hs) = Wire::greeted(e, timeouts)?;
    authenticate(&mut w, &hs, e)?;
    w.logged_in()?;
    Ok(w)
}

/// mysql_native_password: SHA1(password) XOR SHA1(nonce, SHA1(SHA1(password))).
fn scramble_native(nonce: &[u8], password: &[u8]) -> Vec<u8> {
    let once = sha1::Sha1::digest(password);
    let twice = sha1::Sha1::digest(once);
    let salted = sha1::Sha1::new()
        .chain_update(nonce)
        .chain_update(twice)
        .finalize();
    xor(&once, &salted)
}

/// caching_sha2_password's fast path: SHA256(password) XOR SHA256(SHA256(SHA256(password)), nonce).
fn scramble_sha256(nonce: &[u8], password: &[u8]) -> Vec<u8> {
    let once = sha2::Sha256::digest(password);
    let twice = sha2::Sha256::digest(once);
    let salted = sha2::Sha256::new()
        .chain_update(twice)
        .chain_update(nonce)
        .finalize();
    xor(&once, &salted)
}

fn xor(a: &[u8], b: &[u8]) -> Vec<u8> {
    a.iter().zip(b).map(|(x, y)| x ^ y).collect()
}

fn unsupported(plugin: &str) -> WireError {
    WireError::Refused(format!(
        "the server asks for the {} authentication plugin; dbperf's client speaks \
         {NATIVE} and {SHA2} (create the benchmark user with one of those)",
        crate::untrusted::shown(plugin)
    ))
}

fn authenticate(w: &mut Wire, hs: &Handshake, e: &Endpoint) -> Result<(), WireError> {
    let password = e.password.as_deref().unwrap_or("").as_bytes();
    // A server default this client cannot answer is met with a native-password attempt; the
    // server then switches to what the account really uses.
    let mut plugin = match hs.plugin.as_str() {
        SHA2 => SHA2.to_string(),
        _ => NATIVE.to_string(),
    };
    let mut nonce = hs.nonce.clone();
    let first = scramble(&plugin, &nonce, password).unwrap_or_default();
    w.send_login(e, &plugin, &first)?;
    for _ in 0..MAX_AUTH_ROUNDS {
        let p = w.read_auth_packet()?;
        match p.first() {
            Some(0x00) => return Ok(()),
            Some(0xFF) => return Err(parse_err(&p, true)),
            Some(0xFE) => {
                // Authentication switch: another plugin and a fresh nonce.
                let mut r = Reader(&p[1..]);
                let name = r.nul_str()?;
                plugin = String::from_utf8_lossy(name).into_owned();
                let data = r.0;
                nonce = data.strip_suffix(&[0]).unwrap_or(data).to_vec();
                let reply = match plugin.as_str() {
                    NATIVE | SHA2 => scramble(&plugin, &nonce, password).unwrap_or_default(),
                    CLEAR if w.is_unix() => nul_terminated(password),
                    CLEAR => {
                        return Err(WireError::Refused(format!(
                            "the server asks for {CLEAR} over TCP, which would send the \
                             password unencrypted; connect over the unix socket instead"
                        )))
                    }
                    other => return Err(unsupported(other)),
                };
                w.send_auth_data(&reply)?;
            }
            Some(0x01) if plugin == SHA2 => match p.get(1) {
                // Fast authentication succeeded; the OK packet follows.
                Some(3) => {}
                // Full authentication: the server has no cached hash for this account.
                Some(4) => {
                    if w.is_unix() {
                        w.send_auth_data(&nul_terminated(password))?;
                    } else {
                        w.send_auth_data(&[2])?; // request the public key
                        let key = w.read_auth_packet()?;
                        if key.first() != Some(&0x01) {
                            return Err(WireError::Refused(
                                "the server did not send its public key for \
                                 caching_sha2_password"
                                    .into(),
                            ));
                        }
                        let enc = rsa_encrypt(&key[1..], &nonce, password)?;
                        w.send_auth_data(&enc)?;
                    }
                }
                _ => {
                    return Err(WireError::Refused(
                        "unexpected caching_sha2_password reply".into(),
                    ))
                }
            },
            _ => return Err(unsupported(&plugin)),
        }
    }
    Err(protocol(&format!(
        "more than {MAX_AUTH_ROUNDS} authentication requests"
    )))
}

fn nul_terminated(password: &[u8]) -> Vec<u8> {
    let mut v = password.to_vec();
    v.push(0);
    v
}

/// The password (NUL-terminated) XORed with the nonce, RSA-OAEP-encrypted (SHA-1, as MySQL's
/// `RSA_PKCS1_OAEP_PADDING`) with the server's key, a PEM public key in either form.
fn rsa_encrypt(pem: &[u8], nonce: &[u8], password: &[u8]) -> Result<Vec<u8>, WireError> {
    use rsa::pkcs1::DecodeRsaPublicKey;
    use rsa::pkcs8::DecodePublicKey;

    if nonce.is_empty() {
        return Err(WireError::Refused("the server sent an empty nonce".into()));
    }
    let mut msg = nul_terminated(password);
    for (i, b) in msg.iter_mut().enumerate() {
        *b ^= nonce[i % nonce.len()];
    }
    // The server's key is not trusted: `rsa` refuses one that is malformed, or whose size
    // (1024 to 8192 bits, exponent under 2^33) would make the encryption slow.
    let invalid = |why: String| {
        WireError::Refused(format!(
            "the server's public key for caching_sha2_password is not usable: {why}"
        ))
    };
    let pem = std::str::from_utf8(pem).map_err(|_| invalid("it is not text".into()))?;
    let key = rsa::PublicKey::from_public_key_pem(pem)
        .or_else(|_| rsa::PublicKey::from_pkcs1_pem(pem))
        .map_err(|e| invalid(e.to_string()))?;
    key.encrypt(&mut getrandom::SysRng, rsa::Oaep::<sha1::Sha1>::new(), &msg)
        .map_err(|e| invalid(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A throwaway 1024-bit key made for this test (openssl genrsa 1024), never used elsewhere.
    const PRIVATE: &str = "-----BEGIN PRIVATE KEY-----
MIICdwIBADANBgkqhkiG9w0BAQEFAASCAmEwggJdAgEAAoGBALXnZpysmXU5ApUI
iUe+SBr5YSjRJWjVjmuLj3IvP6GjpMLTRWkVs1ev5ZKPlixu7dfnSfBbX5yIEtUA
rlDl2xsbQBeufPviM3sybv1sRklPcIp00VSTyF3Uyw1Bfzne+NvhDtiWDSADvxzn
KKcYcoFUFn5vi3qcVldATHxN6IcTAgMBAAECgYEAjBTQU5UjdD9b+rMhLOufEY68
QLeXTH0w+Sb3Z6J1KSAhUJtsV3mLq9pcO5pxtnQSm3KU4REstxmfDwNAOjJYoOEK
IJ1FA3lVNSGub85jPoXTlx9WTVUgY15z0xAqwpbqfeZHF9MEwHTJ2crS4nQLzuDF
Zypliv8lTPY0au7f+GECQQDn1RXhtv/QUVcS0/bp/bm/lUqMFyBpK0XKKdLiSyJx
PpWl0VhIApbPvNFrY29FZ3PuJrBTcOtjGH2YDbWx+HpxAkEAyN3frkelrLSVVdt3
0pb5za20YzBL5eyhzJPw06/8k63XwAvgjvxKSYUAzH6ZMea0KUY0N/fRA7StG9A2
KQrzwwJAEc6yUZYm7C9zSsTxUGPm4qprAXu9R5bFU5QG2M8ApEY0ZHpCF7XrM6XD
SEZpA6HAq+hY3u/rhL8a1pUnAbaeYQJAR+mfVj7SYqV4PXfISz3AC1HgHg7BbXyt
ZJemhbMg4yI+9sOJzscmNXIHmi7M29+zqn823L69Nu1teGKvsTv5jwJBAKNGHiOp
KN+EYkRO27P3VGVh1EMGi4Me4Uwx1g7WUgVV6uNGAxrZBgA8eJ78mB/a66X8oTeN
a07aELU58mWvjhA=
-----END PRIVATE KEY-----
";
    const PUBLIC: &[u8] = b"-----BEGIN PUBLIC KEY-----
MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC152acrJl1OQKVCIlHvkga+WEo
0SVo1Y5ri49yLz+ho6TC00VpFbNXr+WSj5Ysbu3X50nwW1+ciBLVAK5Q5dsbG0AX
rnz74jN7Mm79bEZJT3CKdNFUk8hd1MsNQX853vjb4Q7Ylg0gA78c5yinGHKBVBZ+
b4t6nFZXQEx8TeiHEwIDAQAB
-----END PUBLIC KEY-----
";

    /// Vectors from an independent implementation (Python's hashlib, the formulas in MySQL's
    /// sql/auth/ sources); the real servers in tests/servers.rs check the same logins end to end.
    #[test]
    fn scrambles_match_the_reference_formulas() {
        let hex = |v: Vec<u8>| v.iter().map(|b| format!("{b:02x}")).collect::<String>();
        let nonce = b"abcdefghijklmnopqrst";
        assert_eq!(
            hex(scramble(NATIVE, nonce, b"secret").unwrap()),
            "8817c50fa779daef010ee7577825b0847df9842e"
        );
        assert_eq!(
            hex(scramble(SHA2, nonce, b"secret").unwrap()),
            "c76e2898612a4cf042c77fa8c4702c4c64c0c2c557c53c4d75595aaa6abae809"
        );
        assert_eq!(scramble(SHA2, nonce, b""), Some(Vec::new()));
    }

    #[test]
    fn the_password_is_encrypted_for_the_servers_key() {
        use rsa::pkcs8::DecodePrivateKey;
        let nonce = b"abcdefghijklmnopqrst";
        let enc = rsa_encrypt(PUBLIC, nonce, b"secret").unwrap();
        let key = rsa::PrivateKey::from_pkcs8_pem(PRIVATE).unwrap();
        let plain = key.decrypt(rsa::Oaep::<sha1::Sha1>::new(), &enc).unwrap();
        let want: Vec<u8> = b"secret\0"
            .iter()
            .zip(nonce.iter())
            .map(|(p, n)| p ^ n)
            .collect();
        assert_eq!(plain, want);
    }

    /// Found by tests/fuzz.rs: a server sending an empty or damaged key made mysql_common panic
    /// (caught, but printed); a huge key would have kept the login computing.
    #[test]
    fn a_bad_server_key_is_an_error_sentence() {
        let mut huge = b"-----BEGIN RSA PUBLIC KEY-----\n".to_vec();
        huge.extend(std::iter::repeat_n(b'A', 40_000));
        huge.extend_from_slice(b"\n-----END RSA PUBLIC KEY-----\n");
        let mut damaged = PUBLIC.to_vec();
        damaged[40] ^= 0x20;
        for key in [&b""[..], b"\xff\xfe", &PUBLIC[..100], &damaged, &huge] {
            let e = rsa_encrypt(key, b"abcdefgh", b"secret").unwrap_err();
            let m = e.to_string();
            assert!(m.contains("public key") && !m.contains('\n'), "{m}");
        }
    }
}
