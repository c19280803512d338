//! What to run: presets, targets and each suite's parameters (one module per suite, the same
//! shape for each: its overrides from the flags, its presets as data in presets.toml, one
//! function that validates them with errors a user can act on). Nothing here opens a
//! connection.

pub mod bounds;
pub mod campaign;
pub mod config_file;
pub mod ibench;
pub mod listing;
pub mod pgbench;
pub mod presets;
pub mod sysbench;
pub mod target;
pub mod tpcc;

pub use bounds::{check_seconds, DEFAULT_SEED, MAX_STEP_SECONDS, MAX_WAIT_SECONDS};

/// Parses a count with an optional decimal suffix: `30M`, `100k`, `1_000_000`, `2G`.
pub fn parse_count(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    let (num, mult) = match t.chars().last() {
        Some('k') | Some('K') => (&t[..t.len() - 1], 1_000u64),
        Some('m') | Some('M') => (&t[..t.len() - 1], 1_000_000),
        Some('g') | Some('G') => (&t[..t.len() - 1], 1_000_000_000),
        _ => (t.as_str(), 1),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a count (examples: 1000, 100k, 30M)"))?;
    n.checked_mul(mult)
        .ok_or_else(|| format!("'{s}' is too large"))
}

/// Concurrency levels of a sweep: `--clients 1,4`, `--threads 1,2,8` (a campaign's
/// `threads = [1, 2, 8]` arrives comma-joined). Each a whole number of at least 1, none twice, at
/// most `MAX_LEVELS` of them; returned in ascending order, the lowest first (what per-client
/// figures are relative to).
pub fn parse_levels(s: &str) -> Result<Levels, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let p = part.trim();
        if p.is_empty() {
            return Err(format!("'{s}' has an empty level; write levels like 1,2,8"));
        }
        let n: u64 = p
            .parse()
            .map_err(|_| format!("'{p}' is not a whole number of clients or threads"))?;
        if n == 0 {
            return Err(format!("'{s}': a level must be at least 1"));
        }
        if out.contains(&n) {
            return Err(format!("'{s}' names {n} twice"));
        }
        out.push(n);
    }
    if out.len() > MAX_LEVELS {
        return Err(format!("'{s}' has more than {MAX_LEVELS} levels"));
    }
    out.sort_unstable();
    Ok(Levels(out))
}

/// Read-ahead values of a sweep (`--read-ahead-kb 0,128,4096`), in KB: whole numbers, 0 (none)
/// allowed, none twice, at most `MAX_LEVELS` of them, each at most 1 GiB; ascending.
pub fn parse_kb_list(s: &str) -> Result<KbList, String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let mut out = Vec::new();
    for part in parts {
        let n: u64 = part
            .parse()
            .map_err(|_| format!("'{part}' is not a whole number of KB"))?;
        out.push(n);
    }
    kb_list(&out).map_err(|e| format!("'{s}' {e}"))
}

/// Read-ahead values given as a list (a campaign's `read_ahead_kb = [0, 128]`), checked as
/// `parse_kb_list` checks each.
pub fn kb_list(values: &[u64]) -> Result<KbList, String> {
    let mut out = Vec::new();
    for &n in values {
        if n > 1 << 20 {
            return Err(format!("has {n} KB of read-ahead, more than 1 GiB"));
        }
        if out.contains(&n) {
            return Err(format!("names {n} twice"));
        }
        out.push(n);
    }
    if out.len() > MAX_LEVELS {
        return Err(format!("has more than {MAX_LEVELS} values"));
    }
    out.sort_unstable();
    Ok(KbList(out))
}

/// Read-ahead values of a sweep, in KB, ascending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KbList(pub Vec<u64>);

/// I/O scheduler names of a sweep, as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedulers(pub Vec<String>);

/// I/O scheduler names of a sweep (`--io-scheduler none,mq-deadline`): as the kernel names
/// them, none twice, at most `MAX_LEVELS`.
pub fn parse_schedulers(s: &str) -> Result<Schedulers, String> {
    let parts: Vec<String> = s.split(',').map(|p| p.trim().to_string()).collect();
    schedulers(&parts).map_err(|e| format!("'{s}' {e}"))
}

/// I/O scheduler names given as a list (a campaign's `io_scheduler = ["none", "bfq"]`): each
/// one kernel name, so one holding a comma is refused, never split.
pub fn schedulers(values: &[String]) -> Result<Schedulers, String> {
    let mut out: Vec<String> = Vec::new();
    for part in values {
        if part.is_empty()
            || part.len() > 32
            || !part
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        {
            return Err(format!(
                "has {}, which is not an I/O scheduler name (none, mq-deadline, bfq, kyber)",
                crate::untrusted::shown(part)
            ));
        }
        if out.contains(part) {
            return Err(format!("names {part} twice"));
        }
        out.push(part.clone());
    }
    if out.len() > MAX_LEVELS {
        return Err(format!("has more than {MAX_LEVELS} values"));
    }
    Ok(Schedulers(out))
}

/// The most levels one sweep may have.
pub const MAX_LEVELS: usize = 16;

/// Concurrency levels, ascending, at least one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Levels(pub Vec<u64>);

impl Levels {
    pub fn lowest(&self) -> u64 {
        self.0[0]
    }

    pub fn highest(&self) -> u64 {
        *self.0.last().expect("at least one level")
    }
}

/// Parses a size in bytes with an optional binary suffix, as perf's `--max-size` takes it:
/// `2G`, `512M`, `200K`, `4096` (bytes; `B` allowed).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    // `512M`, `512MB` and `512MiB` are one size: binary units, as PostgreSQL and my.cnf read
    // them.
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix("ib"))
        .filter(|x| x.ends_with(|c: char| "kKmMgGtT".contains(c)))
        .or_else(|| {
            t.strip_suffix(['B', 'b'])
                .filter(|x| x.ends_with(|c: char| "kKmMgGtT".contains(c)))
        })
        .unwrap_or(&t)
        .to_string();
    let (num, shift) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 10),
        Some('M') => (&t[..t.len() - 1], 20),
        Some('G') => (&t[..t.len() - 1], 30),
        Some('T') => (&t[..t.len() - 1], 40),
        Some('B') => (&t[..t.len() - 1], 0),
        _ => (t.as_str(), 0),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a size (examples: 2G, 512M, 200K)"))?;
    n.checked_mul(1u64 << shift)
        .filter(|b| *b > 0)
        .ok_or_else(|| format!("'{s}' is not a size from 1 byte up (examples: 2G, 512M)"))
}

/// The smallest `--server-memory`: below it a managed server does not start with any config
/// dbperf writes (the MySQL family's own buffers and a connection's memory take tens of MiB).
pub const MIN_SERVER_MEMORY: u64 = 64 << 20;

/// `--server-memory`: a size as `parse_size` takes it, at least `MIN_SERVER_MEMORY`, and no more
/// than a cgroup limit can say.
pub fn parse_server_memory(s: &str) -> Result<u64, String> {
    let b = parse_size(s)?;
    if b < MIN_SERVER_MEMORY {
        return Err(format!(
            "'{s}' is less than the {} MiB a managed server needs to start",
            MIN_SERVER_MEMORY >> 20
        ));
    }
    if b > 1 << 50 {
        return Err(format!("'{s}' is more than a memory cap can be (1024T)"));
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_sorted_and_bad_lists_refused() {
        assert_eq!(parse_levels("8, 1,2").unwrap(), Levels(vec![1, 2, 8]));
        assert_eq!(parse_levels("4").unwrap().lowest(), 4);
        for bad in ["", "1,,2", "0", "1,0", "2,2", "a", "-1", "1.5"] {
            assert!(parse_levels(bad).is_err(), "{bad}");
        }
        let many: Vec<String> = (1..=17).map(|i| i.to_string()).collect();
        assert!(parse_levels(&many.join(",")).is_err());
    }

    #[test]
    fn a_server_memory_cap_is_a_size_a_server_can_start_in() {
        assert_eq!(parse_server_memory("256M"), Ok(256 << 20));
        assert_eq!(parse_server_memory("256MB"), Ok(256 << 20));
        assert_eq!(parse_server_memory("256MiB"), Ok(256 << 20));
        assert_eq!(parse_server_memory("1T"), Ok(1 << 40));
        assert!(parse_server_memory("1025T").unwrap_err().contains("1024T"));
        assert_eq!(parse_server_memory("64M"), Ok(64 << 20));
        assert!(parse_server_memory("63M").unwrap_err().contains("64 MiB"));
        assert!(parse_server_memory("2P").is_err());
        assert!(parse_server_memory("lots").is_err());
    }

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("200k"), Ok(200 << 10));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("1B"), Ok(1));
        for bad in ["0", "-1M", "x", "99999999999G"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn counts_take_suffixes() {
        assert_eq!(parse_count("30M"), Ok(30_000_000));
        assert_eq!(parse_count("100k"), Ok(100_000));
        assert_eq!(parse_count("1_000"), Ok(1000));
        assert!(parse_count("-5").is_err());
        assert!(parse_count("x").is_err());
    }
}
