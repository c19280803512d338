//! A published config's memory sizes, scaled to this host's RAM by one rule (docs/configs.md):
//! the published size × this host's RAM / the published host's RAM, rounded down to a whole
//! GiB when that is 2 GiB or more, else to a multiple of 128 MiB, and never below 128 MiB.
//! The host's RAM is MemTotal rounded to a whole GiB, up when it is at most 6% short of the
//! next one (the kernel keeps part of the installed memory for itself, so a 32 GiB machine shows
//! about 31.3 GiB and counts as 32), else down (a VM with 1.4 GiB counts as 1, not 2).

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// The smallest size a scaled setting gets, whatever the host.
pub const FLOOR: u64 = 128 * MIB;

/// This host's RAM (or the server's memory cap) against the published host's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub host_gib: u64,
    pub published_gib: u64,
    /// A memory cap (`--server-memory`), in MiB: sizes scale to it instead of the host, to the
    /// MiB, and may go below [`FLOOR`] (to [`CAP_FLOOR`]).
    pub cap_mib: Option<u64>,
}

/// The smallest size a setting scaled to a memory cap gets.
pub const CAP_FLOOR: u64 = 16 * MIB;

impl Scale {
    /// The scale for a host whose /proc/meminfo says `memory_kb` (MemTotal).
    pub fn for_host(memory_kb: u64, published_gib: u64) -> Scale {
        let up = memory_kb.div_ceil(1 << 20);
        let short_kb = (up << 20).saturating_sub(memory_kb);
        let host_gib = if short_kb.saturating_mul(100) <= (up << 20).saturating_mul(6) {
            up
        } else {
            memory_kb >> 20
        };
        Scale {
            host_gib: host_gib.max(1),
            published_gib,
            cap_mib: None,
        }
    }

    /// The scale for a server capped at `cap_bytes` (`--server-memory`), whatever the host.
    pub fn for_cap(cap_bytes: u64, published_gib: u64) -> Scale {
        Scale {
            host_gib: cap_bytes >> 30,
            published_gib,
            cap_mib: Some((cap_bytes >> 20).max(1)),
        }
    }

    /// The memory sizes are multiplied by, in MiB: half the cap, else the host's whole GiB. A
    /// published config gives its buffer pool about three quarters of the host's RAM; under a
    /// cap that counts the server's page cache too (its logs' dirty pages, the files it reads)
    /// so much leaves too little, and MariaDB with a pool of 69% of a 256 MiB cap was killed
    /// by the kernel during its load. Half the cap stands for the RAM.
    fn memory_mib(&self) -> u64 {
        match self.cap_mib {
            Some(cap) => (cap / 2).max(1),
            None => self.host_gib << 10,
        }
    }

    pub fn factor(&self) -> f64 {
        self.memory_mib() as f64 / (self.published_gib << 10).max(1) as f64
    }

    /// `value` (a size such as `23GB` or `20G`) scaled, written in the same style; None when it
    /// is not a size.
    pub fn apply(&self, value: &str) -> Option<String> {
        let (bytes, style) = parse_size(value)?;
        let scaled = (u128::from(bytes) * u128::from(self.memory_mib())
            / u128::from((self.published_gib << 10).max(1))) as u64;
        Some(format_size(rounded(scaled, self.cap_mib.is_some()), style))
    }
}

/// Rounded down to a whole GiB from 2 GiB up, else to 128 MiB; at least [`FLOOR`]. Under a cap,
/// below 256 MiB to 16 MiB, at least [`CAP_FLOOR`].
fn rounded(bytes: u64, capped: bool) -> u64 {
    let unit = match bytes {
        b if b >= 2 * GIB => GIB,
        b if b >= 256 * MIB || !capped => 128 * MIB,
        _ => 16 * MIB,
    };
    (bytes / unit * unit).max(if capped { CAP_FLOOR } else { FLOOR })
}

/// A size of dbperf's own default configs under a cap: `share` of the cap, never more than the
/// default's `bytes`, rounded as a scaled setting is.
pub fn under_cap(bytes: u64, cap_bytes: u64, share: u64) -> u64 {
    rounded((cap_bytes / share.max(1)).min(bytes), true)
}

/// How a size's unit is written: PostgreSQL's `GB` / `MB`, or my.cnf's `G` / `M`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Style {
    Bytes,
    Letter,
}

fn parse_size(value: &str) -> Option<(u64, Style)> {
    let digits: String = value.chars().take_while(char::is_ascii_digit).collect();
    let n: u64 = digits.parse().ok()?;
    let unit = &value[digits.len()..];
    let (letter, style) = match unit.strip_suffix('B') {
        Some(l) => (l, Style::Bytes),
        None => (unit, Style::Letter),
    };
    let factor = match letter.to_ascii_uppercase().as_str() {
        "K" => 1 << 10,
        "M" => MIB,
        "G" => GIB,
        "T" => GIB << 10,
        _ => return None,
    };
    Some((n.checked_mul(factor)?, style))
}

fn format_size(bytes: u64, style: Style) -> String {
    let b = match style {
        Style::Bytes => "B",
        Style::Letter => "",
    };
    if bytes.is_multiple_of(GIB) {
        format!("{}G{b}", bytes / GIB)
    } else {
        format!("{}M{b}", bytes / MIB)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_count_in_whole_gib_rounded_up_when_just_short() {
        // This 24 GiB machine, a 32 GiB one, a tiny one.
        assert_eq!(Scale::for_host(24_683_652, 32).host_gib, 24);
        assert_eq!(Scale::for_host(32_818_000, 32).host_gib, 32);
        assert_eq!(Scale::for_host(1_000_000, 32).host_gib, 1);
        assert_eq!(Scale::for_host(0, 32).host_gib, 1);
        // 1.4 GiB is not counted as 2: that would give a buffer pool of most of its RAM.
        assert_eq!(Scale::for_host(1_468_006, 32).host_gib, 1);
        assert!(Scale::for_host(u64::MAX, 32).host_gib >= u64::MAX >> 20);
    }

    #[test]
    fn a_cap_scales_to_the_mib() {
        // Half of 256 MiB against a 32 GiB host: x 1/256.
        let cap = Scale::for_cap(256 << 20, 32);
        assert_eq!(cap.factor(), 1.0 / 256.0);
        // 23 GiB / 256 = 92 MiB: to 16 MiB steps under 256 MiB.
        assert_eq!(cap.apply("23G").as_deref(), Some("80M"));
        assert_eq!(cap.apply("1G").as_deref(), Some("16M"));
        assert_eq!(under_cap(512 << 20, 256 << 20, 4), 64 << 20);
        assert_eq!(under_cap(512 << 20, 8 << 30, 4), 512 << 20);
    }

    #[test]
    fn sizes_scale_by_the_stated_rule() {
        let at24 = Scale::for_host(24_683_652, 32);
        assert_eq!(at24.factor(), 0.75);
        // 23 × 0.75 = 17.25 GiB: rounded down to a whole GiB.
        assert_eq!(at24.apply("23GB").as_deref(), Some("17GB"));
        assert_eq!(at24.apply("23G").as_deref(), Some("17G"));
        assert_eq!(at24.apply("20G").as_deref(), Some("15G"));
        let at32 = Scale::for_host(32_818_000, 32);
        assert_eq!(at32.apply("23GB").as_deref(), Some("23GB"));
        // A 2 GiB host: 1.4375 GiB, to 128 MiB steps.
        let at2 = Scale::for_host(2 << 20, 32);
        assert_eq!(at2.apply("23G").as_deref(), Some("1408M"));
        // A 1 GiB host: 736 MiB -> 640 MiB; the floor holds below.
        let at1 = Scale::for_host(900_000, 32);
        assert_eq!(at1.apply("23GB").as_deref(), Some("640MB"));
        assert_eq!(at1.apply("2G").as_deref(), Some("128M"));
        assert_eq!(at1.apply("256MB").as_deref(), Some("128MB"));
        // A larger host scales up.
        let at64 = Scale::for_host(64 << 20, 32);
        assert_eq!(at64.apply("23G").as_deref(), Some("46G"));
        assert_eq!(at24.apply("off"), None);
        assert_eq!(at24.apply("23X"), None);
    }
}
