//! Ctrl-C (SIGINT) and SIGTERM: a request to stop. The first sets a flag the work checks (a run
//! stops its step, writes what was measured and stops its servers; `server start` stops what it
//! started); a second one kills the servers dbperf started and exits at once. Either way dbperf
//! exits 130, for SIGTERM too: one code means "stopped on request". SIGHUP keeps its usual
//! meaning (a run under `nohup` goes on after logout; otherwise dbperf ends and its servers
//! with it, through their parent-death signal).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use super::EXIT_INTERRUPTED;
use crate::session;

/// The stop flag, with the handler installed on first use; `what` says what a first request
/// does.
pub fn stop_flag(what: &'static str) -> Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        // The signals are turned into messages on a thread of their own, so the handling is
        // ordinary code (printing, stopping servers), not code run inside a signal handler.
        match Signals::new([SIGINT, SIGTERM]) {
            Ok(mut signals) => {
                let spawned = std::thread::Builder::new()
                    .name("dbperf-signals".into())
                    .spawn(move || {
                        for sig in signals.forever() {
                            let name = if sig == SIGTERM { "SIGTERM" } else { "Ctrl-C" };
                            if f.swap(true, Ordering::SeqCst) {
                                say!(
                                    "\n{name} again: killing the servers dbperf started and exiting"
                                );
                                session::kill_servers();
                                std::process::exit(EXIT_INTERRUPTED);
                            }
                            say!("\n{name}: {what} (again to quit now)");
                        }
                    });
                if let Err(e) = spawned {
                    say!("warning: Ctrl-C and SIGTERM will end dbperf at once: {e}");
                }
            }
            Err(e) => say!("warning: Ctrl-C and SIGTERM will end dbperf at once: {e}"),
        }
        flag
    })
    .clone()
}
