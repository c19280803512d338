//! Seeded random streams: every role draws from its own xoshiro256++ stream derived from (seed,
//! step, client, role), so runs with the same seed draw the same values in the same order
//! whatever the thread timing. Any suite may use them.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

pub type Rand = Xoshiro256PlusPlus;

/// Mixes the run seed with a stream's coordinates (splitmix64 finaliser), so neighbouring
/// streams are unrelated.
pub fn stream_seed(seed: u64, step: u64, client: u64, role: u64) -> u64 {
    let mut z = seed
        ^ step.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ client.wrapping_mul(0xBF58_476D_1CE4_E5B9)
        ^ role.wrapping_mul(0x94D0_49BB_1331_11EB);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

pub fn rng(seed: u64) -> Rand {
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// Uniform in [0, n) by multiply-shift (bias below n / 2^64, i.e. none measurable here).
#[inline]
pub fn below(rng: &mut Rand, n: u64) -> u64 {
    ((rng.next_u64() as u128 * n as u128) >> 64) as u64
}
