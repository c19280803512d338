//! What the engine costs per operation with a target that does nothing: pacing, two clock
//! reads, two HDR records, the ibench bucket, the per-second slot, and the loop itself.
//! Run by bench/engine-overhead.sh.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use dbperf::runner::{run_step, Lifetime, OpError, OpOutcome, Pace, Role, RoleSpec, StepPlan};

struct NoOp {
    left: u64,
}

impl Role for NoOp {
    #[inline]
    fn op(&mut self) -> Result<OpOutcome, OpError> {
        if self.left == 0 {
            return Ok(OpOutcome::Finished);
        }
        self.left -= 1;
        Ok(OpOutcome::Done { kind: 0, rows: 1 })
    }
}

fn measure(ops: u64, pace: fn() -> Pace) -> f64 {
    let plan = StepPlan {
        kinds: vec!["noop"],
        roles: vec![RoleSpec {
            name: "noop".into(),
            pace: pace(),
            lifetime: Lifetime::Primary,
            permits_to: None,
            make: Box::new(move || Ok(Box::new(NoOp { left: ops }) as Box<dyn Role>)),
        }],
        target_rows_per_s: None,
        paced_kind: None,
    };
    let m = run_step(plan, &mut (), &Arc::new(AtomicBool::new(false)));
    assert_eq!(m.kinds[0].ops, ops);
    m.duration.as_nanos() as f64 / ops as f64
}

fn main() {
    let ops: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000_000);
    // The bare loop without the engine, for reference.
    let t = Instant::now();
    let mut r = NoOp { left: ops };
    while let Ok(OpOutcome::Done { .. }) = std::hint::black_box(r.op()) {}
    let bare = t.elapsed().as_nanos() as f64 / ops as f64;
    let closed = measure(ops, || Pace::Closed);
    // A rate no loop can reach keeps the pacer on its catch-up path: due-time arithmetic on
    // every operation, never a sleep.
    let paced = measure(ops, || Pace::Rate { ops_per_s: 1e12 });
    println!("operations per run:            {ops}");
    println!("bare role call:                {bare:.1} ns/op");
    println!("engine, closed loop:           {closed:.1} ns/op");
    println!("engine, open loop (paced):     {paced:.1} ns/op");
    println!(
        "engine overhead (paced - bare): {:.1} ns/op  (goal < 1000 ns)",
        paced - bare
    );
}
