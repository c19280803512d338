//! A step's memory cap as the kernel held it (`--server-memory`): the step file's `memory_cap`
//! (docs/results.md). The cap is read back from the server's cgroup at the end of each step, so
//! a step whose server was not held to the cap run.json reports says so, in this field, in the
//! step's warnings and in the report.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StepMemoryCap {
    /// The cap asked for, in bytes (run.json's `target.server.memory_cap.bytes`).
    pub bytes: u64,
    /// The limit the cgroup had at the end of the step (`memory.max`, `memory.limit_in_bytes`);
    /// null when it could not be read, the cgroup was gone, or the limit was `max` (none).
    pub limit_bytes: Option<u64>,
    /// The most the cgroup held from when it was made (the server's start) to the end of the
    /// step (`memory.peak`, `memory.max_usage_in_bytes`); null where the kernel offers neither.
    pub peak_bytes: Option<u64>,
    /// Whether the server was held to the cap: its cgroup was still the one dbperf made, its
    /// limit was the cap asked (less a part of a page the kernel rounds off), and the server's
    /// process was in it.
    pub held: bool,
    /// Why not, one clause per thing found wrong; null when held.
    pub why_not: Option<String>,
}

impl StepMemoryCap {
    /// The warning a step that was not held to its cap gets; None when it was held.
    pub fn warning(&self) -> Option<String> {
        if self.held {
            return None;
        }
        let why = self.why_not.as_deref().unwrap_or("no reason recorded");
        Some(format!(
            "the server was not held to its {} MiB memory cap (--server-memory) by the end of \
             the step: {why}; its numbers are not those of a capped server",
            self.bytes >> 20
        ))
    }
}
