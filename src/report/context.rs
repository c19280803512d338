//! What the builders of a suite's section are given: every target read, their labels, which of
//! them ran the suite, the base and the options that change the tables.

use super::model::TargetLabel;
use super::rules::Thresholds;
use super::target::TargetResult;

/// What the builders of one suite's section share.
pub struct Ctx<'a> {
    pub all: &'a [TargetResult],
    pub labels: &'a [TargetLabel],
    /// The targets of this suite, in the order given.
    pub idx: Vec<usize>,
    /// The base chosen for the whole report (index into `all`).
    pub base: usize,
    pub thresholds: Thresholds,
    pub cv_flag_pct: f64,
    /// More than one target: relative tables make sense.
    pub relative: bool,
    pub show_pre: bool,
}

impl Ctx<'_> {
    /// The base of this suite: the report's base when it ran this suite, else the suite's first.
    pub fn suite_base(&self) -> usize {
        if self.idx.contains(&self.base) {
            return self.base;
        }
        // A target that ran both suites is two results with one name: the base of each suite.
        let name = self.all[self.base].name();
        self.idx
            .iter()
            .copied()
            .find(|i| self.all[*i].name() == name)
            .unwrap_or(self.idx[0])
    }

    pub fn base_name(&self) -> &str {
        self.all[self.suite_base()].name()
    }
}
