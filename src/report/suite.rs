//! What the loading and the shared sections need to know of a step's suite, one `match`
//! on the suite or its payload each, where the compiler asks a new suite for its answer: which per-second
//! series the headline is the rate of (the verdict's seconds), the part over a campaign's
//! rounds, and the rows a sweep's level loaded. The suites' sections themselves are chosen in
//! `report::build`.

use super::target::StepView;
use crate::results::Payload;
use crate::suites::Suite;

/// The kind of the per-second series whose rate the step's headline is (`insert`, `query`,
/// `event`, `new_order`); None where the headline is no such rate (a suite's load, l.x).
pub fn headline_kind(s: &StepView) -> Option<&'static str> {
    // By the step's suite, which every step has (a schema-1 file or a fixture may carry no
    // part): the question is what the suite's headline measures, not what its part holds.
    match s.suite {
        Suite::Ibench if s.name.starts_with("l.i") => Some("insert"),
        Suite::Ibench if s.name.starts_with("qr") || s.name.starts_with("qp") => Some("query"),
        Suite::Ibench => None,
        Suite::Sysbench => Some("event"),
        Suite::Tpcc => Some("new_order"),
        // Its transactions are per script (script1, ...): one script's are the headline's; the
        // sum of several is no one series (the verdict then rests on the rounds).
        Suite::Pgbench => match &s.payload {
            Some(Payload::Pgbench(p)) => p
                .run
                .as_ref()
                .filter(|r| r.scripts.len() == 1)
                .map(|_| crate::results::pgbench::FIRST_KIND),
            _ => None,
        },
    }
}

/// The step's part over the rounds where it succeeded (`ok`), `rep` being the round nearest
/// the median: the representative round's (a real run's texts and counts), with the Insert
/// Benchmark's SLA as the median of the rounds'.
pub fn merge_rounds(rep: &StepView, ok: &[&StepView]) -> Option<Payload> {
    match rep.payload.as_ref()? {
        Payload::Ibench(p) => {
            let mut part = p.clone();
            part.sla = p.sla.as_ref().map(|r| {
                let items: Vec<&crate::results::Sla> = ok
                    .iter()
                    .filter_map(|s| match &s.payload {
                        Some(Payload::Ibench(x)) => x.sla.as_ref(),
                        _ => None,
                    })
                    .collect();
                crate::analysis::rounds::sla(r, &items)
            });
            Some(Payload::Ibench(part))
        }
        other @ (Payload::Sysbench(_) | Payload::Tpcc(_) | Payload::Pgbench(_)) => {
            Some(other.clone())
        }
    }
}

/// The step whose rows grow with the level of the suite's sweep (the Insert Benchmark's l.i0:
/// a table per client), for the scaling section's table of rows loaded; None for suites that
/// load once.
pub fn loading_step(suite: crate::suites::Suite) -> Option<&'static str> {
    match suite {
        crate::suites::Suite::Ibench => Some("l.i0"),
        crate::suites::Suite::Sysbench
        | crate::suites::Suite::Tpcc
        | crate::suites::Suite::Pgbench => None,
    }
}

/// Rows a step loaded, from its part.
pub fn loaded_rows(s: &StepView) -> Option<f64> {
    match s.payload.as_ref()? {
        Payload::Ibench(p) => Some(p.planned_rows as f64),
        Payload::Sysbench(_) | Payload::Tpcc(_) | Payload::Pgbench(_) => None,
    }
}
