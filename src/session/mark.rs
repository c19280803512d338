//! The campaign journal's record of a process (results::campaign::ProcessMark) made from the one
//! notion of process identity dbperf has, `server::identity::Identity`: a pid can be reused, so
//! its start time and the boot it belongs to are kept with it.

use crate::results::campaign::ProcessMark;
use crate::server::identity::Identity;

fn mark(id: &Identity) -> ProcessMark {
    ProcessMark {
        pid: id.pid,
        start_ticks: id.start_time_ticks,
        boot_id: id.boot_id.clone(),
    }
}

/// The process `pid` as it is now, if it exists.
pub fn of(pid: u32) -> Option<ProcessMark> {
    Identity::of(pid).as_ref().map(mark)
}

pub fn current() -> ProcessMark {
    of(std::process::id()).unwrap_or(ProcessMark {
        pid: std::process::id(),
        start_ticks: 0,
        boot_id: String::new(),
    })
}

/// The very process `m` names, when it still runs (same boot, same start time).
pub fn now(m: &ProcessMark) -> Option<Identity> {
    Identity::of(m.pid).filter(|now| mark(now) == *m)
}

pub fn alive(m: &ProcessMark) -> bool {
    now(m).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_recognised_and_a_reused_pid_is_not() {
        let me = current();
        assert!(me.start_ticks > 0 && !me.boot_id.is_empty());
        assert!(alive(&me));
        let mut other = me.clone();
        other.start_ticks += 1;
        assert!(
            !alive(&other),
            "same pid, another start time: another process"
        );
        let mut rebooted = me;
        rebooted.boot_id = "another boot".into();
        assert!(!alive(&rebooted));
    }
}
