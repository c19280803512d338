//! Each suite's part of a report behind one trait: its section, which per-second series its
//! headline is the rate of (the verdict's seconds), and its payload over a campaign's rounds.
//! The shared sections (summary tables, hardware, latency, devices, scaling, rounds) call the
//! suite through `of`, whose `match` is where the compiler asks a new suite for its part.

use super::context::Ctx;
use super::model::Section;
use super::target::StepView;
use crate::results::Payload;
use crate::suites::Suite;

pub(super) trait SuiteReport: Sync {
    /// The suite's section of the report, over the targets of `ctx` that ran it.
    fn section(&self, ctx: &Ctx) -> Section;

    /// The kind of the per-second series whose rate the step's headline is (`insert`,
    /// `query`, `event`, `new_order`); None where the headline is no such rate.
    fn headline_kind(&self, step: &StepView) -> Option<&'static str>;

    /// The step's payload over the rounds where it succeeded (`ok`), `rep` being the round
    /// nearest the median: by default the representative round's, whose texts and counts are
    /// a real run's.
    fn merge_rounds(&self, rep: &StepView, _ok: &[&StepView]) -> Option<Payload> {
        rep.payload.clone()
    }

    /// Rows a step loaded, for the scaling section's table of a sweep that loads per level;
    /// None for suites whose load does not grow with the level.
    fn loaded_rows(&self, _step: &StepView) -> Option<f64> {
        None
    }
}

/// The report's part for `suite`.
pub(super) fn of(suite: Suite) -> &'static dyn SuiteReport {
    match suite {
        Suite::Ibench => &super::ibench::Report,
        Suite::Sysbench => &super::sysbench::Report,
        Suite::Tpcc => &super::tpcc::Report,
    }
}
