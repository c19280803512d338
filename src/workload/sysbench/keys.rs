//! The random values of the sysbench tables and statements: keys drawn uniformly, with a
//! Zipfian distribution, or with sysbench 1.0's "special" distribution (how `prepare` draws `k`
//! when no --rand-type is given), and the `c` and `pad` strings (groups of 11 random digits
//! joined by '-'). Implemented from the distributions' definitions; the RNG is dbperf's own, so
//! values match sysbench's in distribution, not one by one.

use crate::workload::common::rand::{below, Rand};
use rand_core::Rng;

/// A double uniform in [0, 1) with 53 random bits.
#[inline]
pub fn unit(rng: &mut Rand) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// How keys are drawn from [1, n].
#[derive(Debug, Clone)]
pub enum KeyGen {
    Uniform {
        n: u64,
    },
    Zipfian(Zipf),
    /// sysbench 1.0's default distribution with its defaults (--rand-spec-iter=12,
    /// --rand-spec-pct=1, --rand-spec-res=75): 25% of values are the mean of 12 uniform draws
    /// over the whole range, 75% fall in a band of 1% of the range around its middle.
    Special {
        n: u64,
    },
}

impl KeyGen {
    #[inline]
    pub fn next(&self, rng: &mut Rand) -> i64 {
        match self {
            KeyGen::Uniform { n } => 1 + below(rng, *n) as i64,
            KeyGen::Zipfian(z) => z.sample(rng) as i64,
            KeyGen::Special { n } => special(rng, 1, *n) as i64,
        }
    }
}

const SPECIAL_ITER: u32 = 12;
const SPECIAL_PCT: f64 = 1.0;
const SPECIAL_RES: f64 = 75.0;

fn special(rng: &mut Rand, a: u64, b: u64) -> u64 {
    if b <= a {
        return a;
    }
    let t = (b - a) as f64;
    let rnd = unit(rng);
    // The range is stretched so that (100 - res)% of draws land below t: those get the
    // bell-shaped mean of several uniform draws; the others are mapped onto pct% of the range,
    // centred in it.
    let res = rnd * t * (100.0 / (100.0 - SPECIAL_RES));
    if res < t {
        let mut sum = 0.0;
        for _ in 0..SPECIAL_ITER {
            sum += unit(rng);
        }
        return a + (sum * t / SPECIAL_ITER as f64) as u64;
    }
    let d = t * SPECIAL_PCT / 100.0;
    let v = rnd * (d + 1.0) + t / 2.0 - t * SPECIAL_PCT / 200.0;
    a + v as u64
}

/// A bounded Zipf distribution over [1, n]: P(k) proportional to 1 / k^e, sampled by
/// rejection-inversion (W. Hörmann and G. Derflinger, "Rejection-inversion to generate variates
/// from monotone discrete distributions", ACM TOMACS 6(3), 1996), which needs no table of n
/// entries. With e = 0.8, sysbench's default --rand-zipfian-exp, key 1 is the hottest.
#[derive(Debug, Clone)]
pub struct Zipf {
    n: u64,
    e: f64,
    h_x1: f64,
    h_n: f64,
    s: f64,
}

impl Zipf {
    pub fn new(n: u64, e: f64) -> Zipf {
        let n = n.max(1);
        let h_x1 = h_integral(1.5, e) - 1.0;
        let h_n = h_integral(n as f64 + 0.5, e);
        let s = 2.0 - h_integral_inv(h_integral(2.5, e) - h(2.0, e), e);
        Zipf { n, e, h_x1, h_n, s }
    }

    pub fn sample(&self, rng: &mut Rand) -> u64 {
        loop {
            let u = self.h_n + unit(rng) * (self.h_x1 - self.h_n);
            let x = h_integral_inv(u, self.e);
            let k = ((x + 0.5) as u64).clamp(1, self.n);
            let kf = k as f64;
            if kf - x <= self.s || u >= h_integral(kf + 0.5, self.e) - h(kf, self.e) {
                return k;
            }
        }
    }
}

/// The hat function, x^-e.
fn h(x: f64, e: f64) -> f64 {
    (-e * x.ln()).exp()
}

/// Its integral, (x^(1-e) - 1) / (1 - e), written so that e = 1 (the logarithm) needs no
/// special case.
fn h_integral(x: f64, e: f64) -> f64 {
    let lx = x.ln();
    expm1_over_x((1.0 - e) * lx) * lx
}

fn h_integral_inv(x: f64, e: f64) -> f64 {
    let t = (x * (1.0 - e)).max(-1.0);
    (ln1p_over_x(t) * x).exp()
}

/// (e^x - 1) / x, continuous at 0.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

/// ln(1 + x) / x, continuous at 0.
fn ln1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// sysbench's `c` column: 10 groups of 11 random digits joined by '-' (119 characters).
pub const C_GROUPS: usize = 10;
/// sysbench's `pad` column: 5 groups (59 characters).
pub const PAD_GROUPS: usize = 5;

/// Replaces `out` with `groups` groups of 11 uniform random digits joined by '-'.
pub fn digit_groups(rng: &mut Rand, groups: usize, out: &mut String) {
    out.clear();
    let mut buf = [0u8; 11];
    for g in 0..groups {
        if g > 0 {
            out.push('-');
        }
        // One draw per group: uniform over all 10^11 digit strings.
        let mut v = below(rng, 100_000_000_000);
        for d in buf.iter_mut().rev() {
            *d = b'0' + (v % 10) as u8;
            v /= 10;
        }
        out.push_str(std::str::from_utf8(&buf).expect("ASCII digits"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::common::rand::rng;

    #[test]
    fn strings_have_sysbench_formats() {
        let mut r = rng(1);
        let mut s = String::new();
        digit_groups(&mut r, C_GROUPS, &mut s);
        assert_eq!(s.len(), 119);
        let groups: Vec<&str> = s.split('-').collect();
        assert_eq!(groups.len(), 10);
        assert!(groups
            .iter()
            .all(|g| g.len() == 11 && g.bytes().all(|b| b.is_ascii_digit())));
        digit_groups(&mut r, PAD_GROUPS, &mut s);
        assert_eq!(s.len(), 59);
    }

    #[test]
    fn uniform_covers_exactly_one_to_n() {
        let mut r = rng(2);
        let g = KeyGen::Uniform { n: 10 };
        let mut seen = [0u32; 11];
        for _ in 0..10_000 {
            seen[g.next(&mut r) as usize] += 1;
        }
        assert_eq!(seen[0], 0);
        assert!(
            seen[1..].iter().all(|&c| (800..1200).contains(&c)),
            "{seen:?}"
        );
    }

    #[test]
    fn special_puts_three_quarters_in_the_middle_percent() {
        let mut r = rng(3);
        let n = 1_000_000u64;
        let g = KeyGen::Special { n };
        let draws = 100_000;
        let mut middle = 0;
        for _ in 0..draws {
            let v = g.next(&mut r) as u64;
            assert!((1..=n).contains(&v));
            if (495_000..=505_001).contains(&v) {
                middle += 1;
            }
        }
        // 75% land in the 1% band, and a few of the bell-shaped 25% too.
        let share = middle as f64 / draws as f64;
        assert!((0.75..0.80).contains(&share), "{share}");
    }

    #[test]
    fn zipf_follows_its_probabilities() {
        let mut r = rng(4);
        let n = 1000u64;
        let e = 0.8;
        let z = Zipf::new(n, e);
        let draws = 400_000;
        let mut counts = vec![0u64; n as usize + 1];
        for _ in 0..draws {
            let k = z.sample(&mut r);
            assert!((1..=n).contains(&k));
            counts[k as usize] += 1;
        }
        let norm: f64 = (1..=n).map(|k| (k as f64).powf(-e)).sum();
        for k in [1usize, 2, 10, 100] {
            let expected = draws as f64 * (k as f64).powf(-e) / norm;
            let got = counts[k] as f64;
            assert!(
                (got / expected - 1.0).abs() < 0.06,
                "k={k}: {got} vs {expected}"
            );
        }
    }

    #[test]
    fn zipf_of_one_key_is_that_key() {
        let mut r = rng(5);
        let z = Zipf::new(1, 0.8);
        assert!((0..100).all(|_| z.sample(&mut r) == 1));
    }
}
