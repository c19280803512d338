//! Live view of a step: a progress bar with ops/s, fed once a second by the engine, and the
//! per-second series file written from the same rows.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::engine::{Observer, SecondRow};
use crate::results::series::SeriesWriter;
use crate::workload::ibench::{StepDef, DELETE, INSERT, QUERY};

pub struct StepProgress {
    bar: ProgressBar,
    series: Option<SeriesWriter>,
    series_error: Option<std::io::Error>,
    def: StepDef,
    rows_done: u64,
    /// Without a visible bar (no terminal), print a status line this often instead.
    log_every: Option<u64>,
}

/// Seconds between status lines when no progress bar is shown.
const LOG_EVERY_S: u64 = 60;

impl StepProgress {
    pub fn new(def: &StepDef, series: SeriesWriter, show: bool) -> StepProgress {
        let name = def.name.to_string();
        let bar = if def.name == crate::workload::ibench::StepName::Lx {
            let b = ProgressBar::new_spinner();
            b.set_style(
                ProgressStyle::with_template("{prefix:>7} {spinner} {elapsed} {msg}").unwrap(),
            );
            b.enable_steady_tick(Duration::from_millis(200));
            b.set_message("inserting one batch, then building the secondary indexes");
            b
        } else {
            let b = ProgressBar::new(def.planned_rows());
            b.set_style(
                ProgressStyle::with_template(
                    "{prefix:>7} [{bar:28}] {percent:>3}% {elapsed}/{duration} {msg}",
                )
                .unwrap()
                .progress_chars("=> "),
            );
            b
        };
        if !show {
            b_hide(&bar);
        }
        bar.set_prefix(name);
        StepProgress {
            bar,
            series: Some(series),
            series_error: None,
            def: def.clone(),
            rows_done: 0,
            log_every: (!show).then_some(LOG_EVERY_S),
        }
    }

    /// Finishes the bar and the series file (renamed into place).
    pub fn finish(mut self) -> std::io::Result<()> {
        self.bar.finish_and_clear();
        if let Some(e) = self.series_error.take() {
            return Err(e);
        }
        if let Some(s) = self.series.take() {
            s.finish()?;
        }
        Ok(())
    }
}

fn b_hide(b: &ProgressBar) {
    b.set_draw_target(ProgressDrawTarget::hidden());
}

fn rate(v: f64) -> String {
    crate::cli::summary::fmt_num(v)
}

impl Observer for StepProgress {
    fn on_second(&mut self, row: &SecondRow) {
        if let Some(s) = self.series.as_mut() {
            if let Err(e) = s.row(row) {
                self.series_error = Some(e);
                self.series = None;
            }
        }
        let secs = row.interval_s.max(1e-9);
        let k = &row.kinds;
        self.rows_done += k[INSERT].rows;
        if self.def.name == crate::workload::ibench::StepName::Lx {
            return;
        }
        self.bar
            .set_position(self.rows_done.min(self.bar.length().unwrap_or(u64::MAX)));
        let mut msg = format!("{} ins/s", rate(k[INSERT].rows as f64 / secs));
        if self.def.deletes {
            msg.push_str(&format!("  {} del/s", rate(k[DELETE].rows as f64 / secs)));
        }
        if self.def.queries.is_some() {
            msg = format!("{} q/s  {msg}", rate(k[QUERY].ops as f64 / secs));
        }
        if let Some(t) = row.target_rows_per_s {
            msg.push_str(&format!(" (target {})", rate(t)));
        }
        let errors: u64 = k.iter().map(|x| x.errors).sum();
        if errors > 0 {
            msg.push_str(&format!("  {errors} errors"));
        }
        if let Some(n) = self.log_every {
            if (row.index + 1) % n == 0 {
                eprintln!(
                    "{:>7} {:>5} s  {}/{} rows  {msg}",
                    self.def.name.to_string(),
                    row.index + 1,
                    self.rows_done,
                    self.def.planned_rows()
                );
            }
        }
        self.bar.set_message(msg);
    }
}
