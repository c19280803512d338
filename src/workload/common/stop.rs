//! When a role of a timed step stops: a time with a warm-up before it, or a count of events.
//! Any suite may use it.

use std::time::Duration;

/// What a runner does until it stops.
#[derive(Debug, Clone, Copy)]
pub enum Stop {
    /// Events for `warmup` (recorded as WARMUP), then for `run` (recorded as EVENT), counted
    /// from the runner's first event.
    Time { warmup: Duration, run: Duration },
    /// This many events, all recorded as EVENT.
    Events(u64),
}
