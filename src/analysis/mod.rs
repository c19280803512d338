//! Analysis of measured results: statistics over numbers and histograms that say whether a
//! difference is real and why a result looks the way it does. Reads nothing itself and builds
//! no table; `report` and `history` hand it the values (docs/statistics.md).
//!
//! - `rounds`: a campaign's repeats as one number, the median over rounds.
//! - `interval`: the 95% interval of a ratio target / base, and the mean and quantile it uses.
//! - `welch`: Welch's t-interval over figures measured once a round.
//! - `bootstrap`: the moving-block bootstrap of per-second rates over rounds (throughput).
//! - `latency`: intervals of latency percentiles from HDR histograms.
//! - `permutation`: the block permutation test of per-second figures.
//! - `residency`: whether a step ran in memory or was IO-bound, from its disk reads per operation.
//! - `summary`: mean, median, min, max and deviation of a set of values.
//! - `variance`, `changepoint`: the spread of per-second rates, and change points in a history.

pub mod bootstrap;
pub mod changepoint;
pub mod interval;
pub mod latency;
pub mod permutation;
pub mod residency;
pub mod rounds;
pub mod summary;
pub mod variance;
pub mod welch;
