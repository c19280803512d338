//! pgbench's pseudo-random numbers (PostgreSQL's src/common/pg_prng.c): xoroshiro128** seeded
//! by splitmix64, with its bitmask-rejection ranges and 52-bit doubles. `permute` seeds one of
//! these from its seed argument, so its results are pgbench's to the bit; every client also
//! draws `random()` and its kin from one, seeded from dbperf's (seed, step, client) stream.

/// The generator's 128 bits of state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgPrng {
    s0: u64,
    s1: u64,
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut v = *state;
    v = (v ^ (v >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    v = (v ^ (v >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    v ^ (v >> 31)
}

impl PgPrng {
    /// pg_prng_seed: both words from splitmix64, never all zeroes.
    pub fn seed(seed: u64) -> PgPrng {
        let mut s = seed;
        let s0 = splitmix64(&mut s);
        let s1 = splitmix64(&mut s);
        if s0 == 0 && s1 == 0 {
            return PgPrng {
                s0: 0x5851_F42D_4C95_7F2D,
                s1: 0x1405_7B7E_F767_814F,
            };
        }
        PgPrng { s0, s1 }
    }

    /// One xoroshiro128** output.
    pub fn next_u64(&mut self) -> u64 {
        let s0 = self.s0;
        let sx = self.s1 ^ s0;
        let val = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        self.s0 = s0.rotate_left(24) ^ sx ^ (sx << 16);
        self.s1 = sx.rotate_left(37);
        val
    }

    /// pg_prng_uint64_range: uniform in [rmin, rmax] by bitmask rejection; rmin when empty.
    pub fn range(&mut self, rmin: u64, rmax: u64) -> u64 {
        if rmax <= rmin {
            return rmin;
        }
        let range = rmax - rmin;
        let shift = range.leading_zeros();
        loop {
            let v = self.next_u64() >> shift;
            if v <= range {
                return rmin + v;
            }
        }
    }

    /// pg_prng_double: uniform in [0, 1) from the top 52 bits.
    pub fn double(&mut self) -> f64 {
        (self.next_u64() >> 12) as f64 * (-52f64).exp2()
    }

    /// pg_prng_double_normal: Box-Muller on two draws in (0, 1].
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.double();
        let u2 = 1.0 - self.double();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).sin()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_stay_inside_and_reach_both_ends() {
        let mut r = PgPrng::seed(42);
        let (mut lo, mut hi) = (false, false);
        for _ in 0..10_000 {
            let v = r.range(3, 9);
            assert!((3..=9).contains(&v));
            lo |= v == 3;
            hi |= v == 9;
        }
        assert!(lo && hi);
        assert_eq!(r.range(5, 5), 5);
        assert_eq!(r.range(6, 5), 6);
        let d = r.double();
        assert!((0.0..1.0).contains(&d));
    }

    #[test]
    fn the_same_seed_draws_the_same_values() {
        let (mut a, mut b) = (PgPrng::seed(7), PgPrng::seed(7));
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_ne!(PgPrng::seed(7), PgPrng::seed(8));
    }
}
