//! The MySQL/MariaDB client/server protocol's payload formats: length-encoded integers and
//! strings, column definitions, binary result rows, OK and ERR packets, read by a bounds-checked
//! cursor. Pure functions of bytes, apart from the connection (`mysql_wire`) that carries them.

use super::net;
use super::wire_error::MyServer;

/// The MySQL client's failures: the shared kinds, with the server's ERR packet.
pub type WireError = super::wire_error::WireError<MyServer>;

type Result<T> = std::result::Result<T, WireError>;

/// What a statement that returns no rows reports.
#[derive(Debug, Default, Clone, Copy)]
pub struct Done {
    pub affected: u64,
}

pub(super) fn protocol(what: &str) -> WireError {
    WireError::protocol(what)
}

/// Column types of the binary protocol.
pub(super) mod ty {
    pub const TINY: u8 = 1;
    pub const SHORT: u8 = 2;
    pub const LONG: u8 = 3;
    pub const FLOAT: u8 = 4;
    pub const DOUBLE: u8 = 5;
    pub const NULL: u8 = 6;
    pub const TIMESTAMP: u8 = 7;
    pub const LONGLONG: u8 = 8;
    pub const INT24: u8 = 9;
    pub const DATE: u8 = 10;
    pub const TIME: u8 = 11;
    pub const DATETIME: u8 = 12;
    pub const YEAR: u8 = 13;
    pub const NEWDATE: u8 = 14;
    pub const TIMESTAMP2: u8 = 17;
    pub const DATETIME2: u8 = 18;
    pub const TIME2: u8 = 19;
    pub const VAR_STRING: u8 = 253;
}

pub(super) fn put_lenenc(out: &mut Vec<u8>, v: u64) {
    if v < 251 {
        out.push(v as u8);
    } else if v < 1 << 16 {
        out.push(0xFC);
        out.extend_from_slice(&(v as u16).to_le_bytes());
    } else if v < 1 << 24 {
        out.push(0xFD);
        out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
    } else {
        out.push(0xFE);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Reads the type byte of a column definition (protocol 4.1): six length-encoded strings, the
/// length of the fixed fields, charset, column length, then the type.
pub(super) fn column_type(p: &[u8]) -> Result<u8> {
    let mut r = Reader(p);
    for _ in 0..6 {
        r.lenenc_bytes()?;
    }
    r.lenenc()?;
    r.take(2 + 4)?;
    r.u8()
}

/// Steps over every value of a binary row, handing each to `black_box`.
pub(super) fn walk_binary_row(p: &[u8], types: &[u8]) -> Result<()> {
    let n = types.len();
    let bitmap_len = (n + 7 + 2) / 8;
    let mut r = Reader(p);
    r.take(1)?;
    let bitmap = r.take(bitmap_len)?;
    for (i, &t) in types.iter().enumerate() {
        let bit = i + 2;
        if bitmap[bit / 8] & (1 << (bit % 8)) != 0 {
            continue;
        }
        let v = match t {
            ty::NULL => &[][..],
            ty::TINY => r.take(1)?,
            ty::SHORT | ty::YEAR => r.take(2)?,
            ty::LONG | ty::INT24 | ty::FLOAT => r.take(4)?,
            ty::LONGLONG | ty::DOUBLE => r.take(8)?,
            ty::DATE
            | ty::NEWDATE
            | ty::DATETIME
            | ty::DATETIME2
            | ty::TIMESTAMP
            | ty::TIMESTAMP2
            | ty::TIME
            | ty::TIME2 => {
                let len = r.u8()? as usize;
                r.take(len)?
            }
            _ => r.lenenc_bytes()?,
        };
        std::hint::black_box(v);
    }
    Ok(())
}

/// `YYYY-MM-DD HH:MM:SS` as a binary-protocol DATETIME (length 7, then the fields).
pub(super) fn datetime(s: &str) -> Option<[u8; 8]> {
    let b = s.as_bytes();
    if b.len() != 19
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b' '
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let n = |r: std::ops::Range<usize>| -> Option<u16> {
        let d = &b[r];
        d.iter()
            .all(u8::is_ascii_digit)
            .then(|| d.iter().fold(0u16, |acc, c| acc * 10 + u16::from(c - b'0')))
    };
    let y = n(0..4)?.to_le_bytes();
    Some([
        7,
        y[0],
        y[1],
        n(5..7)? as u8,
        n(8..10)? as u8,
        n(11..13)? as u8,
        n(14..16)? as u8,
        n(17..19)? as u8,
    ])
}

/// OK packet (header 0x00, or 0xFE where it ends rows): affected rows, last insert id, status.
pub(super) fn parse_ok(p: &[u8]) -> Result<(u16, Done)> {
    let mut r = Reader(&p[1..]);
    let affected = r.lenenc()?;
    r.lenenc()?;
    let status = r.u16()?;
    Ok((status, Done { affected }))
}

pub(super) fn parse_err(p: &[u8], protocol_41: bool) -> WireError {
    let mut r = Reader(&p[1..]);
    let code = r.u16().unwrap_or(0);
    let mut state = String::from("HY000");
    if protocol_41 && r.0.first() == Some(&b'#') && r.0.len() >= 6 {
        state = String::from_utf8_lossy(&r.0[1..6]).into_owned();
        r.0 = &r.0[6..];
    }
    WireError::Server(MyServer {
        code,
        state: crate::untrusted::server_text(state.as_bytes()),
        message: crate::untrusted::server_text(r.0),
    })
}

/// A cursor over a packet's payload; every read checks the length.
pub(super) struct Reader<'a>(pub &'a [u8]);

impl<'a> Reader<'a> {
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        net::take(&mut self.0, n).ok_or_else(|| protocol("a packet shorter than its fields"))
    }

    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    pub fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn lenenc(&mut self) -> Result<u64> {
        let first = self.u8()?;
        let n = match first {
            0xFC => 2,
            0xFD => 3,
            0xFE => 8,
            0xFB | 0xFF => return Err(protocol("a NULL or 0xFF where a length belongs")),
            v => return Ok(v as u64),
        };
        let b = self.take(n)?;
        let mut v = [0u8; 8];
        v[..n].copy_from_slice(b);
        Ok(u64::from_le_bytes(v))
    }

    pub fn lenenc_bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.lenenc()?;
        self.take(usize::try_from(n).map_err(|_| protocol("a value larger than memory"))?)
    }

    /// A NUL-terminated string, without its NUL.
    pub fn nul_str(&mut self) -> Result<&'a [u8]> {
        net::take_nul(&mut self.0).ok_or_else(|| protocol("a string without its terminating NUL"))
    }
}

#[cfg(test)]
mod tests {
    use super::super::mysql_wire::into_db;
    use super::*;

    #[test]
    fn lengths_round_trip_through_every_width() {
        for v in [
            0u64,
            250,
            251,
            65_535,
            65_536,
            (1 << 24) - 1,
            1 << 24,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_lenenc(&mut out, v);
            let mut r = Reader(&out);
            assert_eq!(r.lenenc().unwrap(), v, "{v}");
            assert!(r.0.is_empty());
        }
    }

    #[test]
    fn datetimes_travel_as_seven_bytes() {
        assert_eq!(
            datetime("2024-01-02 03:04:05"),
            Some([7, 0xE8, 0x07, 1, 2, 3, 4, 5])
        );
        assert_eq!(datetime("2024-01-02"), None);
        assert_eq!(datetime("2024-01-02 03:04:0x"), None);
    }

    #[test]
    fn binary_rows_are_walked_by_type_and_null_bitmap() {
        // Columns: LONGLONG, VAR_STRING, DATETIME, LONG; the string is NULL (bit 1 + 2 = 3).
        let types = [ty::LONGLONG, ty::VAR_STRING, ty::DATETIME, ty::LONG];
        let mut row = vec![0x00, 0b0000_1000];
        row.extend_from_slice(&7i64.to_le_bytes());
        row.extend_from_slice(&[7, 0xE8, 0x07, 1, 2, 3, 4, 5]);
        row.extend_from_slice(&9i32.to_le_bytes());
        walk_binary_row(&row, &types).unwrap();
        // Cut short: an error, not a panic.
        assert!(walk_binary_row(&row[..row.len() - 1], &types).is_err());
    }

    #[test]
    fn server_errors_keep_code_state_and_message() {
        let mut p = vec![0xFF];
        p.extend_from_slice(&1213u16.to_le_bytes());
        p.extend_from_slice(b"#40001Deadlock found");
        let e = parse_err(&p, true);
        assert_eq!(e.to_string(), "ERROR 1213 (40001): Deadlock found");
        assert!(into_db(e).transient);
    }

    #[test]
    fn column_definitions_yield_their_type() {
        let mut p = Vec::new();
        for s in ["def", "ib", "t", "t", "c", "c"] {
            p.push(s.len() as u8);
            p.extend_from_slice(s.as_bytes());
        }
        p.push(0x0C);
        p.extend_from_slice(&45u16.to_le_bytes());
        p.extend_from_slice(&100u32.to_le_bytes());
        p.push(ty::VAR_STRING);
        p.extend_from_slice(&[0, 0, 0, 0, 0]);
        assert_eq!(column_type(&p).unwrap(), ty::VAR_STRING);
        assert!(column_type(&p[..10]).is_err());
    }
}
