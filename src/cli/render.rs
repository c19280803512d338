//! What a person sees while a run goes: the plan, a line per cell, a progress bar per step with
//! live rates (or, without a terminal, a status line a minute), a line per finished step, and
//! notes. Everything here is drawn from the session's events.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::summary::{fmt_ms, fmt_num};
use crate::results::{IbenchStep, Payload, StepFile};
use crate::session::{CellBegins, Display, Events, Note, PlanView, Tick};

/// Seconds between status lines when no progress bar is shown.
const LOG_EVERY_S: u64 = 60;

pub struct Terminal {
    /// Draw progress bars (stderr is a terminal and --no-progress was not given).
    pub bars: bool,
    bar: Option<ProgressBar>,
    step: String,
}

impl Terminal {
    pub fn new(bars: bool) -> Terminal {
        Terminal {
            bars,
            bar: None,
            step: String::new(),
        }
    }

    fn line(&self, text: &str) {
        match &self.bar {
            Some(b) => b.suspend(|| say!("{text}")),
            None => say!("{text}"),
        }
    }
}

/// `5h10m`, `12m30s`, `40s`.
pub fn fmt_duration(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// `  at c4.ra128` after a cell's suite, nothing without a sweep.
fn at_axes(label: &str) -> String {
    match label {
        "" => String::new(),
        l => format!("  at {l}"),
    }
}

impl Events for Terminal {
    fn plan(&mut self, p: &PlanView) {
        let here = p.cells.iter().filter(|c| c.here).count();
        if p.cells.len() <= 1 && p.campaign.is_none() && !p.resumed {
            return;
        }
        let mut head = match &p.campaign {
            Some(n) => format!("campaign {n}: {} cells", p.cells.len()),
            None => format!("{} cells", p.cells.len()),
        };
        if let Some((k, n)) = p.shard {
            head.push_str(&format!(", shard {k}/{n} runs {here}"));
        } else if p.resumed {
            head.push_str(&format!(", resumed: {here} to run"));
        }
        say!("{head}");
        for c in &p.cells {
            let mark = if c.here { ">" } else { " " };
            say!(
                "  {mark} {:>3}  {}  {}{}  round {}/{}  {}",
                c.number,
                c.target,
                c.suite,
                at_axes(&c.axes),
                c.round,
                c.rounds,
                c.state
            );
        }
    }

    fn cell_begins(&mut self, c: &CellBegins) {
        if c.of <= 1 && c.rounds <= 1 {
            return;
        }
        let eta = c
            .eta_s
            .map(fmt_duration)
            .unwrap_or_else(|| "unknown".into());
        let attempt = if c.attempt > 1 {
            format!("  attempt {}", c.attempt)
        } else {
            String::new()
        };
        say!(
            "cell {}/{}  {} {}{}  round {}/{}  ETA {eta}{attempt}",
            c.index,
            c.of,
            c.target,
            c.suite,
            at_axes(&c.axes),
            c.round,
            c.rounds
        );
    }

    fn note(&mut self, target: &str, n: &Note) {
        let text = match n {
            Note::TargetBegins { steps } => {
                format!("== {target} ({} steps: {})", steps.len(), steps.join(" "))
            }
            Note::Host(s) => format!("{:>7} host: {s}", ""),
            Note::ServerStarted {
                binary,
                pid,
                start_s,
                connection,
            } => format!(
                "{:>7} started {binary} (pid {pid}) in {start_s:.1} s; connecting over {connection}",
                ""
            ),
            Note::TargetFailed(e) => format!("error: target {target} could not start: {e}"),
            Note::Warning(w) => format!("{:>7} warning: {w}", ""),
            Note::HostWarning(w) => format!("{:>7} host warning: {w}", ""),
            Note::CleanupWait { budget_s } => {
                format!("{:>7} cleanup and wait (budget {budget_s} s)", "")
            }
            Note::ServerExited { log_tail } => {
                format!("the server had exited; the end of its log:\n{log_tail}")
            }
            Note::Calibration {
                before_ms,
                after_ms,
                drift_pct,
            } => format!(
                "{:>7} host: calibration loop {before_ms:.1} ms before the run, {after_ms:.1} ms after ({drift_pct:+.1}%)",
                ""
            ),
            Note::Pausing { seconds } => format!("pausing {seconds} s before the next target"),
            Note::DataKept(d) => format!("databases kept in {d}"),
            Note::LeftoverStopped(s) => format!("stopped a leftover server: {s}"),
            Note::HostPutBack(s) => format!("host settings left by the killed run: {s}"),
            Note::WriteFailed(w) => format!("error: could not write {w}"),
        };
        self.line(&text);
    }

    fn step_begins(&mut self, s: &crate::session::events::StepBegins) {
        self.step = s.step.clone();
        let bar = match &s.display {
            Display::Spinner { message } => {
                let b = ProgressBar::new_spinner();
                b.set_style(
                    ProgressStyle::with_template("{prefix:>7} {spinner} {elapsed} {msg}").unwrap(),
                );
                if self.bars {
                    b.enable_steady_tick(Duration::from_millis(200));
                }
                b.set_message(message.clone());
                b
            }
            Display::Bar { total } => {
                let b = ProgressBar::new((*total).max(1));
                b.set_style(
                    ProgressStyle::with_template(
                        "{prefix:>7} [{bar:28}] {percent:>3}% {elapsed}/{duration} {msg}",
                    )
                    .unwrap()
                    .progress_chars("=> "),
                );
                b
            }
        };
        if !self.bars {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        bar.set_prefix(s.step.clone());
        self.bar = Some(bar);
    }

    fn second(&mut self, t: &Tick) {
        let Some(bar) = &self.bar else { return };
        let mut msg: Vec<String> = t
            .rates
            .iter()
            .map(|(v, unit)| format!("{} {unit}", fmt_num(*v)))
            .collect();
        if let Some(target) = t.target {
            if let Some(last) = msg.last_mut() {
                last.push_str(&format!(" (target {})", fmt_num(target)));
            }
        }
        if t.warmup {
            msg.push("(warm-up)".into());
        }
        if t.errors > 0 {
            msg.push(format!("{} errors", t.errors));
        }
        let msg = msg.join("  ");
        bar.set_position(t.position);
        if !self.bars && (t.second + 1).is_multiple_of(LOG_EVERY_S) {
            say!("{:>7} {:>5} s  {msg}", self.step, t.second + 1);
        }
        bar.set_message(msg);
    }

    fn step_ends(&mut self, _target: &str, s: &StepFile) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        say!("{}", step_line(s));
    }
}

/// One line per finished step.
pub fn step_line(s: &StepFile) -> String {
    let mut line = match &s.payload {
        Some(Payload::Sysbench(sb)) => {
            let p99 = s
                .ops
                .get("event")
                .map(|o| fmt_ms(o.latency_us.p99))
                .unwrap_or_else(|| "-".into());
            let mut l = format!(
                "{} {:.1} s  {} {}  {} events/s  p99 {p99} ms",
                s.step,
                s.duration_s,
                fmt_num(s.headline.value),
                s.headline.unit,
                fmt_num(sb.events_per_s)
            );
            if sb.errors > 0 {
                l.push_str(&format!("  {} errors", sb.errors));
            }
            l
        }
        Some(Payload::Ibench(_) | Payload::Tpcc(_) | Payload::Pgbench(_)) | None => format!(
            "{:>7} {:>7.1} s  {} {}",
            s.step,
            s.duration_s,
            fmt_num(s.headline.value),
            s.headline.unit
        ),
    };
    if let Some(Payload::Ibench(IbenchStep { sla: Some(sla), .. })) = &s.payload {
        line.push_str(&format!(
            "  background inserts {} of {} rows/s ({})",
            fmt_num(sla.achieved_rows_per_s),
            fmt_num(sla.target_rows_per_s),
            match sla.met {
                Some(true) => "SLA met",
                Some(false) => "SLA MISSED",
                None => "SLA not judged: step incomplete",
            }
        ));
    }
    if s.status != "ok" {
        line.push_str(&format!("  {}", s.status.as_str().to_uppercase()));
        if let Some(e) = &s.error {
            line.push_str(&format!(": {e}"));
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_an_eta() {
        assert_eq!(fmt_duration(18_600.0), "5h10m");
        assert_eq!(fmt_duration(750.0), "12m30s");
        assert_eq!(fmt_duration(40.2), "40s");
    }
}
