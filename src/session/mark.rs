//! The campaign journal's record of a process (results::campaign::ProcessMark) made from the one
//! notion of process identity dbperf has, `server::identity::Identity`: a pid can be reused, so
//! its start time, the boot it belongs to, its owner and its command line are kept with it.

use crate::results::campaign::ProcessMark;
use crate::server::identity::Identity;

fn mark(id: &Identity) -> ProcessMark {
    ProcessMark {
        pid: id.pid,
        start_ticks: id.start_time_ticks,
        boot_id: id.boot_id.clone(),
        uid: Some(id.uid),
        cmdline: Some(id.cmdline.clone()),
    }
}

/// Whether `now` is the process `m` recorded: same pid, boot and start time, and, where the
/// mark has them (journals before them do not), the same owner and command line.
fn same(m: &ProcessMark, now: &Identity) -> bool {
    m.pid == now.pid
        && m.start_ticks == now.start_time_ticks
        && m.boot_id == now.boot_id
        && m.uid.is_none_or(|u| u == now.uid)
        && m.cmdline.as_ref().is_none_or(|c| *c == now.cmdline)
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
        uid: None,
        cmdline: None,
    })
}

/// The very process `m` names, when it still runs (same boot, start time, owner and command
/// line).
pub fn now(m: &ProcessMark) -> Option<Identity> {
    Identity::of(m.pid).filter(|now| same(m, now))
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
        let mut rebooted = me.clone();
        rebooted.boot_id = "another boot".into();
        assert!(!alive(&rebooted));
        let mut other_owner = me.clone();
        other_owner.uid = Some(other_owner.uid.unwrap() + 1);
        assert!(!alive(&other_owner), "same start, another owner: not it");
        let mut other_command = me.clone();
        other_command.cmdline = Some(vec!["sleep".into(), "100".into()]);
        assert!(!alive(&other_command));
        let older = ProcessMark {
            uid: None,
            cmdline: None,
            ..me
        };
        assert!(
            alive(&older),
            "a journal from before owners and command lines"
        );
    }
}
