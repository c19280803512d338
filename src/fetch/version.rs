//! Version numbers as users write them (`16.4`, `13`, `10.11.18`): a request matches every
//! version it is a prefix of, the newest wins, and a request nothing matches is answered with
//! the nearest versions there are.

use std::cmp::Ordering;
use std::fmt;

/// A dotted version, compared numerically (`10.11` > `10.5`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Version(pub Vec<u32>);

impl Version {
    pub fn parse(s: &str) -> Option<Version> {
        let parts: Option<Vec<u32>> = s.split('.').map(|p| p.parse().ok()).collect();
        parts.filter(|p| !p.is_empty() && p.len() <= 4).map(Version)
    }

    /// `13` matches 13.23, `16.4` matches 16.4 (and 16.4.x), never 16.40.
    pub fn matches(&self, candidate: &Version) -> bool {
        candidate.0.len() >= self.0.len() && candidate.0[..self.0.len()] == self.0[..]
    }
}

impl Ord for Version {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.cmp(&o.0)
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s: Vec<String> = self.0.iter().map(u32::to_string).collect();
        f.write_str(&s.join("."))
    }
}

/// The newest of `have` that `want` matches.
pub fn newest<'a, T>(want: &Version, have: &'a [(Version, T)]) -> Option<&'a (Version, T)> {
    have.iter()
        .filter(|(v, _)| want.matches(v))
        .max_by(|a, b| a.0.cmp(&b.0))
}

/// Up to `n` versions of `have` closest to `want`: same major first, then by distance.
pub fn nearest(want: &Version, have: &[Version], n: usize) -> Vec<Version> {
    let key = |v: &Version| -> (usize, u64) {
        // Shared leading components first (more is nearer), then numeric distance.
        let common = want.0.iter().zip(&v.0).take_while(|(a, b)| a == b).count();
        let flat = |x: &Version| {
            x.0.iter()
                .chain(std::iter::repeat(&0))
                .take(3)
                .fold(0u64, |acc, c| acc * 10_000 + u64::from(*c))
        };
        (usize::MAX - common, flat(want).abs_diff(flat(v)))
    };
    let mut all: Vec<Version> = have.to_vec();
    all.sort();
    all.dedup();
    all.sort_by_key(key);
    all.truncate(n);
    all.sort();
    all
}

pub fn join(vs: &[Version]) -> String {
    vs.iter()
        .map(Version::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn prefixes_match_whole_components() {
        assert!(v("13").matches(&v("13.23")));
        assert!(v("16.4").matches(&v("16.4")));
        assert!(!v("16.4").matches(&v("16.40")));
        assert!(!v("16.4").matches(&v("16")));
        assert!(v("10.11") > v("10.5"));
        assert!(Version::parse("16.x").is_none() && Version::parse("").is_none());
    }

    #[test]
    fn newest_and_nearest() {
        let have: Vec<(Version, ())> = ["13.20", "13.23", "14.1", "16.4"]
            .iter()
            .map(|s| (v(s), ()))
            .collect();
        assert_eq!(newest(&v("13"), &have).unwrap().0, v("13.23"));
        assert!(newest(&v("15"), &have).is_none());
        let list: Vec<Version> = have.iter().map(|x| x.0.clone()).collect();
        assert_eq!(nearest(&v("13.99"), &list, 2), vec![v("13.20"), v("13.23")]);
        assert_eq!(nearest(&v("15"), &list, 2), vec![v("14.1"), v("16.4")]);
    }
}
