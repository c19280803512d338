//! Every suite's presets as `dbperf run --list-presets` shows them.

use super::presets::Listing;
use super::{ibench, pgbench, sysbench, tpcc};
use crate::suites::Suite;

/// A suite's presets as `dbperf run --list-presets` shows them, for a run capped at `cap`.
pub fn of(suite: Suite, cap: Option<u64>) -> Listing {
    match suite {
        Suite::Ibench => ibench::listing(cap),
        Suite::Sysbench => sysbench::listing(cap),
        Suite::Tpcc => tpcc::listing(),
        Suite::Pgbench => pgbench::listing(),
    }
}
