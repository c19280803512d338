//! Row generation (spec §1.4), deterministic for a given seed: every role draws from its own
//! xoshiro256++ stream derived from (seed, step, client, role), so runs with the same seed insert
//! the same values in the same order whatever the thread timing.

use std::sync::Arc;

use rand_core::Rng;

use crate::workload::common::rand::{below, rng, stream_seed, Rand};

/// The original draws the random part of `data` from base64 of 4 MiB of urandom. A random read
/// into 4 MiB misses the cache and TLB once per row, which was a fifth of dbperf's client CPU in
/// l.i0; 256 KiB stays in L2 and still makes repeated substrings within a 16 KB page unlikely
/// (~0.1 expected per page), so the data compresses the same.
const BUFFER_LEN: usize = 256 << 10;
const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/// 2024-01-01 00:00:00 UTC: the logical clock's origin (see `RowGen::timestamp`).
const TIME_ORIGIN: i64 = 1_704_067_200;
/// The logical clock advances one second per this many rows of a client.
const ROWS_PER_SECOND: u64 = 1000;

#[derive(Debug, Clone)]
pub struct DataParams {
    pub len_min: u64,
    pub len_max: u64,
    pub random_pct: u64,
    pub cashregisters: u64,
    pub products: u64,
    pub customers: u64,
    pub max_price: u64,
}

/// The pool random `data` substrings are cut from: base64 characters, derived from the seed.
pub fn random_buffer(seed: u64) -> Arc<[u8]> {
    let mut r = rng(stream_seed(seed, u64::MAX, 0, 0));
    let mut buf = Vec::with_capacity(BUFFER_LEN);
    while buf.len() < BUFFER_LEN {
        let mut x = r.next_u64();
        for _ in 0..10 {
            buf.push(BASE64[(x & 63) as usize]);
            x >>= 6;
        }
    }
    buf.truncate(BUFFER_LEN);
    buf.into()
}

/// A batch of generated rows; its strings are reused from batch to batch.
#[derive(Default)]
pub struct Batch {
    pub dateandtime: String,
    /// (cashregisterid, customerid, productid, price) per row.
    pub cols: Vec<[i64; 4]>,
    pub data: Vec<String>,
    tails: Vec<Tail>,
}

/// Where one row's `data` comes from: `a_len` 'a's, then `rand_len` pool bytes from `off`.
#[derive(Clone, Copy)]
struct Tail {
    a_len: u32,
    off: u32,
    rand_len: u32,
}

/// Asks the CPU to bring the cache line at the start of `s` closer; a hint only.
#[inline]
fn prefetch(s: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: prefetch never faults, whatever the address; SSE is baseline on x86_64.
        #[allow(unused_unsafe)]
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(s.as_ptr() as *const i8)
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = s;
}

pub struct RowGen {
    rng: Rand,
    buf: Arc<[u8]>,
    p: DataParams,
    step_day: i64,
    rows_made: u64,
    ts_second: i64,
}

impl RowGen {
    pub fn new(seed: u64, buf: Arc<[u8]>, p: DataParams, step_index: u64) -> RowGen {
        RowGen {
            rng: rng(seed),
            buf,
            p,
            step_day: step_index as i64,
            rows_made: 0,
            ts_second: i64::MIN,
        }
    }

    /// Fills `b` with `n` rows. All rows of a batch share one dateandtime, as in the original.
    ///
    /// Two passes: the first draws every row's numbers (in the same order as one pass would, so
    /// a seed still gives the same rows) and prefetches the pool line each row's random tail
    /// starts in; the second copies the tails. One pass stalled on a cache miss per row at the
    /// pool read, the largest single cost of l.i0 on the client (docs/performance.md).
    pub fn fill(&mut self, b: &mut Batch, n: usize) {
        self.timestamp(&mut b.dateandtime);
        b.cols.clear();
        b.tails.clear();
        if b.data.len() < n {
            b.data
                .resize_with(n, || String::with_capacity(self.p.len_max as usize));
        }
        for _ in 0..n {
            let cashregisterid = below(&mut self.rng, self.p.cashregisters) as i64;
            let productid = below(&mut self.rng, self.p.products) as i64;
            let customerid = below(&mut self.rng, self.p.customers) as i64;
            let price = below(&mut self.rng, self.p.max_price) as i64;
            b.cols.push([cashregisterid, customerid, productid, price]);
            let tail = self.draw_data();
            prefetch(&self.buf[tail.off as usize..]);
            b.tails.push(tail);
        }
        for (out, t) in b.data.iter_mut().zip(&b.tails) {
            out.clear();
            for _ in 0..t.a_len {
                out.push('a');
            }
            let (off, len) = (t.off as usize, t.rand_len as usize);
            out.push_str(std::str::from_utf8(&self.buf[off..off + len]).expect("base64 is ASCII"));
        }
        self.rows_made += n as u64;
    }

    /// One `data` value: `(L - r)` copies of 'a' then `r` random base64 characters, L uniform in
    /// [min, max] and r = floor(L * 0.75 * pct / 100): the 0.75 is the original's allowance for
    /// base64 carrying 6 bits per character, so pct=50 makes about half of the value
    /// incompressible. Returns where in the pool the random part comes from.
    fn draw_data(&mut self) -> Tail {
        let span = self.p.len_max - self.p.len_min + 1;
        let len = self.p.len_min + below(&mut self.rng, span);
        let rand_len = (len as f64 * 0.75 * self.p.random_pct as f64 / 100.0) as usize;
        let off = below(&mut self.rng, (self.buf.len() - rand_len + 1) as u64) as usize;
        Tail {
            a_len: (len as usize - rand_len) as u32,
            off: off as u32,
            rand_len: rand_len as u32,
        }
    }

    /// The original stamps each batch with the wall clock, which no seed can reproduce. dbperf
    /// uses a logical clock instead: step N starts on day N after 2024-01-01 and the time moves
    /// one second per 1000 rows of this client, so dateandtime still grows with the PK.
    fn timestamp(&mut self, out: &mut String) {
        let t = TIME_ORIGIN + self.step_day * 86_400 + (self.rows_made / ROWS_PER_SECOND) as i64;
        if t == self.ts_second {
            return;
        }
        self.ts_second = t;
        let dt = time::OffsetDateTime::from_unix_timestamp(t).expect("in range");
        let fmt =
            time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
        out.clear();
        out.push_str(&dt.format(&fmt).expect("formats"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> DataParams {
        DataParams {
            len_min: 10,
            len_max: 20,
            random_pct: 50,
            cashregisters: 1000,
            products: 10_000,
            customers: 100_000,
            max_price: 500,
        }
    }

    fn generate(seed: u64, rounds: usize) -> Vec<(String, [i64; 4], String)> {
        let buf = random_buffer(seed);
        let mut g = RowGen::new(stream_seed(seed, 0, 1, 0), buf, params(), 0);
        let mut b = Batch::default();
        let mut out = Vec::new();
        for _ in 0..rounds {
            g.fill(&mut b, 100);
            for i in 0..100 {
                out.push((b.dateandtime.clone(), b.cols[i], b.data[i].clone()));
            }
        }
        out
    }

    #[test]
    fn same_seed_same_rows_other_seed_other_rows() {
        let a = generate(42, 30);
        assert_eq!(a, generate(42, 30));
        assert_ne!(a, generate(43, 30));
    }

    #[test]
    fn values_stay_in_their_domains() {
        let rows = generate(7, 100);
        let mut lens = std::collections::BTreeSet::new();
        for (ts, [cr, cust, prod, price], data) in &rows {
            assert!((0..1000).contains(cr) && (0..100_000).contains(cust));
            assert!((0..10_000).contains(prod) && (0..500).contains(price));
            assert!((10..=20).contains(&data.len()));
            let r = (data.len() as f64 * 0.375) as usize;
            assert!(data[..data.len() - r].bytes().all(|c| c == b'a'), "{data}");
            assert_eq!(ts.len(), 19);
            lens.insert(data.len());
        }
        assert_eq!(lens.len(), 11, "every length 10..=20 occurs");
        // 10,000 rows, one logical second per 1000: 10 distinct timestamps, increasing.
        let ts: std::collections::BTreeSet<_> = rows.iter().map(|r| r.0.clone()).collect();
        assert_eq!(ts.len(), 10);
        assert_eq!(ts.iter().next().unwrap(), "2024-01-01 00:00:00");
    }

    #[test]
    fn about_half_of_the_data_is_incompressible_material() {
        let rows = generate(9, 50);
        let total: usize = rows.iter().map(|r| r.2.len()).sum();
        let random: usize = rows
            .iter()
            .map(|r| r.2.bytes().filter(|&c| c != b'a').count())
            .sum();
        let share = random as f64 / total as f64;
        // 0.375 of the characters are random base64 (6 bits each): ~0.28 of the bits, the same
        // mix the original calls 50%.
        assert!((0.30..0.38).contains(&share), "random share {share}");
    }

    #[test]
    fn uniform_draws_cover_the_range() {
        let mut r = rng(1);
        let mut seen = [0u32; 10];
        for _ in 0..100_000 {
            seen[below(&mut r, 10) as usize] += 1;
        }
        for c in seen {
            assert!((9_000..11_000).contains(&c), "{seen:?}");
        }
    }
}
