//! Logging in to MySQL/MariaDB: `mysql_native_password` and `caching_sha2_password` (fast path,
//! and full authentication: the cleartext password over a unix socket, or RSA-encrypted with the
//! server's public key over TCP), following authentication switch requests. The scrambles and
//! the RSA encryption are `mysql_common`'s.

use mysql_common::scramble::{scramble_native, scramble_sha256};

use super::mysql_wire::{parse_err, Handshake, Reader, Wire, WireError};
use super::Endpoint;

const NATIVE: &str = "mysql_native_password";
const SHA2: &str = "caching_sha2_password";
const CLEAR: &str = "mysql_clear_password";

fn scramble(plugin: &str, nonce: &[u8], password: &[u8]) -> Option<Vec<u8>> {
    if password.is_empty() {
        return Some(Vec::new());
    }
    match plugin {
        NATIVE => scramble_native(nonce, password).map(|s| s.to_vec()),
        SHA2 => scramble_sha256(nonce, password).map(|s| s.to_vec()),
        _ => None,
    }
}

fn unsupported(plugin: &str) -> WireError {
    WireError::Io(format!(
        "the server asks for the {plugin} authentication plugin; dbperf's client speaks \
         {NATIVE} and {SHA2} (create the benchmark user with one of those)"
    ))
}

pub(super) fn authenticate(w: &mut Wire, hs: &Handshake, e: &Endpoint) -> Result<(), WireError> {
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
    loop {
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
                        return Err(WireError::Io(format!(
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
                            return Err(WireError::Io(
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
                    return Err(WireError::Io(
                        "unexpected caching_sha2_password reply".into(),
                    ))
                }
            },
            _ => return Err(unsupported(&plugin)),
        }
    }
}

fn nul_terminated(password: &[u8]) -> Vec<u8> {
    let mut v = password.to_vec();
    v.push(0);
    v
}

/// The password (NUL-terminated) XORed with the nonce, RSA-OAEP-encrypted with the server's key.
fn rsa_encrypt(pem: &[u8], nonce: &[u8], password: &[u8]) -> Result<Vec<u8>, WireError> {
    if nonce.is_empty() {
        return Err(WireError::Io("the server sent an empty nonce".into()));
    }
    let mut msg = nul_terminated(password);
    for (i, b) in msg.iter_mut().enumerate() {
        *b ^= nonce[i % nonce.len()];
    }
    let pem = pem.to_vec();
    // mysql_common panics on a key it cannot parse; a bad key is the server's fault, not a
    // reason to take the whole run down.
    std::panic::catch_unwind(move || mysql_common::crypto::encrypt(&msg, &pem)).map_err(|_| {
        WireError::Io("the server's public key for caching_sha2_password is not valid PEM".into())
    })
}
