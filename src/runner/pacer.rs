//! Open-loop pacing. Operations are due on a fixed timeline (`start + n / rate`); a role that falls
//! behind runs its overdue operations at once instead of skipping them, and every operation's
//! latency is measured from when it was due, not from when it happened to start. This is what
//! avoids coordinated omission: a stall shows up in the latency of everything queued behind it.
//!
//! Time is a `Duration` since the step started so the same code runs against the real clock and
//! the simulated one the tests use.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub trait Clock {
    /// Time since the step started.
    fn now(&self) -> Duration;
    /// Sleep until `t` or until `stop` is set; returns false if stopped first.
    fn sleep_until(&self, t: Duration, stop: &dyn Fn() -> bool) -> bool;
}

/// Fixed-rate timeline of due times.
#[derive(Debug, Clone)]
pub struct Pacer {
    period_ns: f64,
    next: u64,
}

impl Pacer {
    pub fn new(ops_per_s: f64) -> Pacer {
        assert!(ops_per_s > 0.0, "pacer rate must be positive");
        Pacer {
            period_ns: 1e9 / ops_per_s,
            next: 0,
        }
    }

    /// Due time of the next operation; advances the timeline by one.
    pub fn next_due(&mut self) -> Duration {
        let due = Duration::from_nanos((self.next as f64 * self.period_ns).round() as u64);
        self.next += 1;
        due
    }

    /// Wait for the next operation's due time. Returns the due time (the intended start that
    /// latency is measured from), or None if `stop` fired while waiting.
    pub fn wait_next(&mut self, clock: &dyn Clock, stop: &dyn Fn() -> bool) -> Option<Duration> {
        let due = self.next_due();
        if clock.now() < due && !clock.sleep_until(due, stop) {
            return None;
        }
        Some(due)
    }
}

/// The wall clock, relative to a step's start.
pub struct RealClock {
    pub start: Instant,
}

/// Longest single sleep, so a sleeping role notices a stop request quickly.
const SLEEP_SLICE: Duration = Duration::from_millis(20);

impl Clock for RealClock {
    fn now(&self) -> Duration {
        self.start.elapsed()
    }

    fn sleep_until(&self, t: Duration, stop: &dyn Fn() -> bool) -> bool {
        loop {
            if stop() {
                return false;
            }
            let now = self.now();
            if now >= t {
                return true;
            }
            std::thread::sleep((t - now).min(SLEEP_SLICE));
        }
    }
}

/// Linux rounds sleeps up by the thread's timer slack (50 µs by default). That delay would be
/// charged to every paced operation's latency, so paced threads ask for 1 ns.
pub fn tighten_timer_slack() {
    #[cfg(target_os = "linux")]
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// A stop predicate from a set of flags.
pub fn any_set(flags: &[&AtomicBool]) -> bool {
    flags.iter().any(|f| f.load(Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A clock that only moves when told to: sleeping jumps straight to the deadline.
    struct SimClock {
        now: Cell<Duration>,
    }

    impl SimClock {
        fn advance(&self, d: Duration) {
            self.now.set(self.now.get() + d);
        }
    }

    impl Clock for SimClock {
        fn now(&self) -> Duration {
            self.now.get()
        }
        fn sleep_until(&self, t: Duration, stop: &dyn Fn() -> bool) -> bool {
            if stop() {
                return false;
            }
            if t > self.now.get() {
                self.now.set(t);
            }
            true
        }
    }

    /// Runs `n` paced operations whose service times come from `service`; returns
    /// (latency, service) per op and the end time.
    fn simulate(
        rate: f64,
        n: usize,
        service: impl Fn(usize) -> Duration,
    ) -> (Vec<(Duration, Duration)>, Duration) {
        let clock = SimClock {
            now: Cell::new(Duration::ZERO),
        };
        let mut pacer = Pacer::new(rate);
        let mut out = Vec::new();
        for i in 0..n {
            let due = pacer.wait_next(&clock, &|| false).unwrap();
            let begin = clock.now();
            clock.advance(service(i));
            let end = clock.now();
            out.push((end - due, end - begin));
        }
        (out, clock.now())
    }

    #[test]
    fn fast_operations_run_exactly_on_the_timeline() {
        let (ops, end) = simulate(20.0, 200, |_| Duration::from_millis(3));
        for (lat, svc) in &ops {
            assert_eq!(lat, svc, "no queueing when the target keeps up");
        }
        // 200 ops at 20/s: the last is due at 9.95 s and takes 3 ms.
        assert_eq!(end, Duration::from_millis(9950 + 3));
    }

    #[test]
    fn a_stall_is_charged_to_every_operation_queued_behind_it() {
        // 10 ops/s; op 10 stalls for 2 s, everything else takes 1 ms.
        let (ops, end) = simulate(10.0, 100, |i| {
            if i == 10 {
                Duration::from_secs(2)
            } else {
                Duration::from_millis(1)
            }
        });
        // Op 11 was due at 1.1 s but could start only at 3.0 s: latency ~1.9 s, service 1 ms.
        let (lat11, svc11) = ops[11];
        assert_eq!(svc11, Duration::from_millis(1));
        assert_eq!(lat11, Duration::from_millis(3000 + 1 - 1100));
        // Catch-up: overdue ops run back to back, so the schedule is met again by the end and
        // the achieved rate over the whole run equals the target.
        assert_eq!(end, Duration::from_millis(9900 + 1));
        let achieved = 100.0 / end.as_secs_f64();
        assert!((achieved - 10.0).abs() / 10.0 < 0.01, "achieved {achieved}");
    }

    #[test]
    fn a_target_that_cannot_keep_up_misses_the_rate() {
        // Target 100/s but each op takes 20 ms: at most 50/s.
        let (ops, end) = simulate(100.0, 500, |_| Duration::from_millis(20));
        let achieved = 500.0 / end.as_secs_f64();
        assert!((achieved - 50.0).abs() < 0.5, "achieved {achieved}");
        // Latency from the intended start keeps growing: the last op waited ~5 s.
        assert!(ops[499].0 > Duration::from_secs(4));
        assert_eq!(ops[499].1, Duration::from_millis(20));
    }

    #[test]
    fn stop_interrupts_a_wait() {
        let clock = SimClock {
            now: Cell::new(Duration::ZERO),
        };
        let mut pacer = Pacer::new(1.0);
        assert!(
            pacer.wait_next(&clock, &|| true).is_some(),
            "op 0 is due at once"
        );
        assert!(pacer.wait_next(&clock, &|| true).is_none());
    }

    #[test]
    fn fractional_rates_keep_exact_spacing() {
        let mut p = Pacer::new(2.0 / 3.0); // one op every 1.5 s
        let d: Vec<_> = (0..4).map(|_| p.next_due()).collect();
        assert_eq!(d[3], Duration::from_millis(4500));
    }
}
