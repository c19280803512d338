//! Achieved vs target rate of the open-loop pacer: background inserters at 100, 500 and 1000
//! rows/s in batches of 50 (2, 10 and 20 statements per second, as in qr/qp steps) doing no
//! work, for N seconds (default 60). Run by bench/pacer-accuracy.sh.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use dbperf::runner::{
    run_step, Lifetime, Observer, OpError, OpOutcome, Pace, Role, RoleSpec, SecondRow, StepPlan,
};

const BATCH: u64 = 50;
const RATES: [u64; 3] = [100, 500, 1000];

struct Batch {
    kind: usize,
    left: u64,
}

impl Role for Batch {
    fn op(&mut self) -> Result<OpOutcome, OpError> {
        if self.left == 0 {
            return Ok(OpOutcome::Finished);
        }
        self.left -= 1;
        Ok(OpOutcome::Done {
            kind: self.kind,
            rows: BATCH,
        })
    }
}

/// Worst per-second deviation from the target, per rate, over full seconds.
struct Worst([f64; 3]);

impl Observer for Worst {
    fn on_second(&mut self, row: &SecondRow) {
        if row.interval_s < 1.0 {
            return;
        }
        for (i, r) in RATES.iter().enumerate() {
            let dev = (row.kinds[i].rows as f64 - *r as f64).abs() / *r as f64;
            self.0[i] = self.0[i].max(dev);
        }
    }
}

fn main() {
    let secs: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(60);
    let roles = RATES
        .iter()
        .enumerate()
        .map(|(kind, &rate)| {
            let left = secs * rate / BATCH;
            RoleSpec {
                name: format!("inserter{rate}"),
                pace: Pace::Rate {
                    ops_per_s: rate as f64 / BATCH as f64,
                },
                lifetime: Lifetime::Primary,
                permits_to: None,
                make: Box::new(move || Ok(Box::new(Batch { kind, left }) as Box<dyn Role>)),
            }
        })
        .collect();
    let plan = StepPlan {
        kinds: vec!["r100", "r500", "r1000"],
        roles,
        target_rows_per_s: None,
        paced_kind: None,
    };
    let mut worst = Worst([0.0; 3]);
    let m = run_step(plan, &mut worst, &Arc::new(AtomicBool::new(false)));
    let t = m.duration.as_secs_f64();
    println!("duration: {t:.3} s (nominal {secs} s)");
    for (i, rate) in RATES.iter().enumerate() {
        let achieved = m.kinds[i].rows as f64 / t;
        println!(
            "target {rate:>4} rows/s: achieved {achieved:8.2} rows/s = {:6.2}% of target; worst single second off by {:.1}%; p99 lateness {:.0} us",
            100.0 * achieved / *rate as f64,
            100.0 * worst.0[i],
            m.kinds[i].latency.value_at_quantile(0.99) as f64 / 1000.0
        );
    }
}
