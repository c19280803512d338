//! Defaults and bounds every suite's parameters share.

use crate::error::bad_input;

/// The original's default seed (iibench.py --seed).
pub const DEFAULT_SEED: u64 = 3_221_223_452;

/// The longest a measured step, a warm-up or a cleanup budget may be (30 days): far beyond any
/// benchmark's, and small enough that no clock arithmetic on it can overflow.
pub const MAX_STEP_SECONDS: u64 = 30 * 86_400;
/// The longest a pause between cells or a server's start may take (a day).
pub const MAX_WAIT_SECONDS: u64 = 86_400;

/// A duration option (a flag or a campaign field, named as the user wrote it), checked against
/// its bound: one sentence, exit 2, never a panic further on.
pub fn check_seconds(name: &str, v: u64, max: u64) -> anyhow::Result<u64> {
    if v > max {
        let days = match max / 86_400 {
            1 => "a day".to_string(),
            n => format!("{n} days"),
        };
        return bad_input(format!(
            "{name} {v} is more than {max} seconds ({days}), the most dbperf takes"
        ));
    }
    Ok(v)
}
