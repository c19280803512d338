//! A server's version as the published configs need it: which settings it has, which variant of
//! a config applies. Read from a fetched build's build.json or from the binary's `--version`.

use std::fmt;

/// major.minor.patch; PostgreSQL 16.4 is 16.4.0 (its second number is the release), a version
/// given without its last numbers has them 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl Version {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Version {
        Version {
            major,
            minor,
            patch,
        }
    }

    /// The first version-looking word of `text`: `16.4`, `10.11.6-MariaDB-0+deb12u1`,
    /// `postgres (PostgreSQL) 15.13 (Debian 15.13-0+deb12u1)`, `mysqld  Ver 8.0.36 for Linux`,
    /// `18beta1` (18.0.0). None when no word starts with a digit.
    pub fn find(text: &str) -> Option<Version> {
        text.split(|c: char| c.is_whitespace() || c == '(' || c == ')')
            .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))
            .and_then(Version::parse)
    }

    /// `16.4`, `8.0.36`, `10.11.6-MariaDB`: the leading numbers joined by dots.
    fn parse(word: &str) -> Option<Version> {
        let numeric: String = word
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let mut parts = numeric.split('.').filter(|p| !p.is_empty());
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next().map_or(Some(0), |p| p.parse().ok())?;
        let patch = parts.next().map_or(Some(0), |p| p.parse().ok())?;
        Some(Version::new(major, minor, patch))
    }
}

impl fmt::Display for Version {
    /// As the engines write it: `8.0.36`, `10.11.6`; PostgreSQL's two numbers as `16.4`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.major >= 10 && self.major < 100 && self.patch == 0 && self.minor < 100 {
            write!(f, "{}.{}", self.major, self.minor)
        } else {
            write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_found_in_what_the_binaries_print() {
        for (text, want) in [
            ("16.4", Version::new(16, 4, 0)),
            (
                "postgres (PostgreSQL) 15.13 (Debian 15.13-0+deb12u1)",
                Version::new(15, 13, 0),
            ),
            (
                "mariadbd  Ver 10.11.6-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64",
                Version::new(10, 11, 6),
            ),
            (
                "/x/mysqld  Ver 9.7.4-2 for Linux on x86_64 ((Debian))",
                Version::new(9, 7, 4),
            ),
            ("mysqld  Ver 8.0.36 for Linux", Version::new(8, 0, 36)),
            ("postgres (PostgreSQL) 18beta1", Version::new(18, 0, 0)),
            ("13", Version::new(13, 0, 0)),
        ] {
            assert_eq!(Version::find(text), Some(want), "{text}");
        }
        assert_eq!(Version::find("no version here"), None);
        assert!(Version::new(8, 0, 30) > Version::new(8, 0, 29));
        assert!(Version::new(10, 11, 0) > Version::new(10, 6, 99));
    }

    #[test]
    fn versions_are_shown_as_the_engines_write_them() {
        assert_eq!(Version::new(16, 4, 0).to_string(), "16.4");
        assert_eq!(Version::new(8, 0, 30).to_string(), "8.0.30");
        assert_eq!(Version::new(10, 11, 6).to_string(), "10.11.6");
        assert_eq!(Version::new(11, 0, 0).to_string(), "11.0");
    }
}
