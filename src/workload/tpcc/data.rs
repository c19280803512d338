//! The random values of TPC-C (clause 4.3.2 and 2.1.6): uniform numbers, NURand for customers
//! and items, the syllables of customer last names, and the strings of the load. Every draw
//! comes from the stream's own seeded generator, so the same seed gives the same data.

use crate::workload::common::rand::{below, Rand};

/// Uniform in [lo, hi].
#[inline]
pub fn uniform(rng: &mut Rand, lo: u64, hi: u64) -> u64 {
    lo + below(rng, hi - lo + 1)
}

/// The constants C of NURand (clause 2.1.6), drawn once per connection as sysbench-tpcc does.
#[derive(Debug, Clone, Copy)]
pub struct NuConstants {
    pub c255: u64,
    pub c1023: u64,
    pub c8191: u64,
}

impl NuConstants {
    pub fn draw(rng: &mut Rand) -> NuConstants {
        NuConstants {
            c255: uniform(rng, 0, 255),
            c1023: uniform(rng, 0, 1023),
            c8191: uniform(rng, 0, 8191),
        }
    }

    /// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
    pub fn nurand(&self, rng: &mut Rand, a: u64, x: u64, y: u64) -> u64 {
        let c = match a {
            255 => self.c255,
            1023 => self.c1023,
            _ => self.c8191,
        };
        (((uniform(rng, 0, a) | uniform(rng, x, y)) + c) % (y - x + 1)) + x
    }
}

const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The last name of number `n` in [0, 999]: its three digits' syllables (clause 4.3.2.3).
pub fn last_name(n: u64, out: &mut String) {
    out.clear();
    for d in [n / 100 % 10, n / 10 % 10, n % 10] {
        out.push_str(SYLLABLES[d as usize]);
    }
}

const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// `len` random letters and digits appended to `out` (a-string, clause 4.3.2.2).
pub fn push_alnum(rng: &mut Rand, len: u64, out: &mut String) {
    for _ in 0..len {
        out.push(ALNUM[below(rng, ALNUM.len() as u64) as usize] as char);
    }
}

/// `len` random digits appended to `out` (n-string).
pub fn push_digits(rng: &mut Rand, len: u64, out: &mut String) {
    for _ in 0..len {
        out.push((b'0' + below(rng, 10) as u8) as char);
    }
}

/// A random a-string of a length uniform in [lo, hi].
pub fn alnum(rng: &mut Rand, lo: u64, hi: u64) -> String {
    let mut s = String::new();
    let n = uniform(rng, lo, hi);
    push_alnum(rng, n, &mut s);
    s
}

/// A zip code: four random digits and "11111" (clause 4.3.2.7).
pub fn zip(rng: &mut Rand) -> String {
    let mut s = String::with_capacity(9);
    push_digits(rng, 4, &mut s);
    s.push_str("11111");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::common::rand::rng;

    #[test]
    fn last_names_are_three_syllables() {
        let mut s = String::new();
        last_name(0, &mut s);
        assert_eq!(s, "BARBARBAR");
        last_name(371, &mut s);
        assert_eq!(s, "PRICALLYOUGHT");
        last_name(999, &mut s);
        assert_eq!(s, "EINGEINGEING");
    }

    #[test]
    fn nurand_stays_in_range_and_is_not_uniform() {
        let mut r = rng(7);
        let c = NuConstants::draw(&mut r);
        let mut counts = vec![0u32; 3000];
        for _ in 0..300_000 {
            let v = c.nurand(&mut r, 1023, 1, 3000);
            assert!((1..=3000).contains(&v));
            counts[(v - 1) as usize] += 1;
        }
        let max = *counts.iter().max().unwrap();
        // Uniform would give about 100 each; NURand's OR skews some values far above.
        assert!(max > 250, "{max}");
        assert!(uniform(&mut r, 5, 5) == 5);
    }
}
