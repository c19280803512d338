//! `perf record` around a step's measured time. Attaching takes perf a good fraction of a
//! second, which a short step (l.x) would lose, so perf is attached before the step: started
//! with its events off (`-D -1`) so that dbperf knows when it is ready ("Events disabled"), then
//! enabled at once through its control FIFO (a process forked while the events are off would
//! have no name or symbols: perf records forks and mappings only while enabled). Its clock is
//! CLOCK_MONOTONIC, so the samples are cut to the engine's measured start and end when folded.
//! At the end: `disable`, SIGINT (perf writes its file), and a kill after a deadline.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{fold, Profiler};
use crate::results::profile::StepProfile;

/// How long perf may take to write its file after SIGINT.
const STOP_DEADLINE: Duration = Duration::from_secs(60);
/// How long perf may take to attach and acknowledge `enable`, and to acknowledge `disable`.
const ACK_DEADLINE: Duration = Duration::from_secs(10);

/// perf's control FIFO and acknowledgement FIFO, both opened read-write so that opening never
/// waits for perf.
struct Control {
    ctl: File,
    ack: File,
    paths: [PathBuf; 2],
}

impl Control {
    fn create(steps_dir: &Path, step: &str) -> Result<Control, String> {
        let paths = [
            steps_dir.join(format!("{step}.perf.ctl")),
            steps_dir.join(format!("{step}.perf.ack")),
        ];
        for p in &paths {
            let _ = std::fs::remove_file(p);
            let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes())
                .map_err(|_| format!("{} is not a usable path", p.display()))?;
            if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
                return Err(format!(
                    "cannot create {}: {}",
                    p.display(),
                    std::io::Error::last_os_error()
                ));
            }
        }
        let open = |p: &Path| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(p)
                .map_err(|e| format!("cannot open {}: {e}", p.display()))
        };
        Ok(Control {
            ctl: open(&paths[0])?,
            ack: open(&paths[1])?,
            paths,
        })
    }

    /// Sends `enable` or `disable` and waits (bounded) for perf's `ack`.
    fn send(&mut self, what: &str) -> Result<(), String> {
        self.ctl
            .write_all(format!("{what}\n").as_bytes())
            .map_err(|e| format!("telling perf to {what}: {e}"))?;
        let until = Instant::now() + ACK_DEADLINE;
        let mut got = Vec::new();
        while !String::from_utf8_lossy(&got).contains("ack") {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!(
                    "perf did not acknowledge '{what}' within {} s",
                    ACK_DEADLINE.as_secs()
                ));
            }
            let mut pfd = libc::pollfd {
                fd: self.ack.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = left.as_millis().min(i32::MAX as u128) as i32;
            if unsafe { libc::poll(&mut pfd, 1, ms) } > 0 {
                let mut buf = [0u8; 16];
                match self.ack.read(&mut buf) {
                    Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
                    _ => {}
                }
            }
            if got.len() > 64 {
                got.drain(..got.len() - 8);
            }
        }
        Ok(())
    }
}

impl Drop for Control {
    fn drop(&mut self) {
        for p in &self.paths {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// A perf attached to the step's processes.
pub struct Recording {
    child: Option<Child>,
    data: PathBuf,
    log: PathBuf,
    record: StepProfile,
    /// When SIGINT was sent.
    stopping: Option<Instant>,
    control: Option<Control>,
    /// CLOCK_MONOTONIC at the measured start and end, ns.
    window: (Option<u64>, Option<u64>),
    /// perf's CPU time at the measured start and end, ns.
    perf_cpu: (Option<u64>, Option<u64>),
    /// A system-wide recording keeps the samples of this process tree (`fold::perf_data`).
    tree: Option<Vec<u32>>,
}

/// A process's CPU time so far, ns: the sum over its threads of the first field of
/// `/proc/PID/task/TID/schedstat` (time on a CPU; finer than `stat`'s clock ticks, which
/// would round a step's few ms of perf to zero or one tick). None when the process is gone.
fn process_cpu_ns(pid: u32) -> Option<u64> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut total = 0u64;
    let mut any = false;
    for t in tasks.flatten() {
        let Ok(s) = std::fs::read_to_string(t.path().join("schedstat")) else {
            continue;
        };
        if let Some(ns) = s
            .split_whitespace()
            .next()
            .and_then(|f| f.parse::<u64>().ok())
        {
            total = total.saturating_add(ns);
            any = true;
        }
    }
    any.then_some(total)
}

/// CLOCK_MONOTONIC in ns: perf's sample clock with `-k CLOCK_MONOTONIC`.
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Profiler {
    /// Attaches perf to `pids` with sampling off until `enable`; its file is
    /// `<steps_dir>/<step>.perf.data` until folded.
    pub fn attach(&self, pids: &dyn Fn() -> Vec<u32>, steps_dir: &Path, step: &str) -> Recording {
        let data = steps_dir.join(format!("{step}.perf.data"));
        // perf opens its output by name: whatever is there (a killed run's file, a link) goes
        // first (unlinking never follows a link).
        let _ = std::fs::remove_file(&data);
        let log = steps_dir.join(format!("{step}.perf.log"));
        let mut record = StepProfile {
            processes: self.who.name().into(),
            event: self.event.clone(),
            hz: self.hz,
            ..StepProfile::default()
        };
        let mut rec = Recording {
            child: None,
            data,
            log,
            record: empty(),
            stopping: None,
            control: None,
            window: (None, None),
            perf_cpu: (None, None),
            tree: None,
        };
        let control = match Control::create(steps_dir, step) {
            Ok(c) => c,
            Err(e) => {
                record.error = Some(e);
                rec.record = record;
                return rec;
            }
        };
        // A process listed may exit before perf attaches to it (a backend that served the
        // counters query), and perf then refuses them all: list them again and retry.
        let mut last_error = String::new();
        for _ in 0..3 {
            let pids = pids();
            if pids.is_empty() {
                last_error = "no process to sample".into();
                break;
            }
            let args = self.perf_args(&pids, &rec.data, &control);
            record.command = format!("{} {}", self.perf.display(), args.join(" "));
            if self.system_wide {
                rec.tree = Some(pids.clone());
            }
            record.pids = pids;
            let child = self.spawn(&args, &rec.log);
            let mut child = match child {
                Ok(c) => c,
                Err(e) => {
                    last_error = e;
                    break;
                }
            };
            let exited = attached_or_exited(&mut child, &rec.log);
            if !exited {
                rec.child = Some(child);
                last_error.clear();
                break;
            }
            last_error = super::last_line(&crate::safe_fs::read_log_end(
                &rec.log,
                crate::server::process::LOG_READ_MAX,
            ));
        }
        if rec.child.is_none() {
            let _ = std::fs::remove_file(&rec.log);
            record.error = Some(format!("perf could not attach: {last_error}"));
        } else {
            rec.control = Some(control);
            rec.control_send("enable");
        }
        rec.record = record;
        rec
    }

    /// perf record's arguments: sampling `pids` (or the whole system), its output `data`, off
    /// until `enable` on the control fifos.
    fn perf_args(&self, pids: &[u32], data: &Path, control: &Control) -> Vec<String> {
        let pid_list = pids
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(",");
        // -N: no copies of every binary into ~/.debug; perf's messages go to a log, read
        // when something fails.
        let scope: Vec<String> = if self.system_wide {
            vec!["-a".into()]
        } else {
            vec!["-p".into(), pid_list]
        };
        let args: Vec<String> = [
            "record".into(),
            "-N".into(),
            "-g".into(),
            "-F".into(),
            self.hz.to_string(),
            "-e".into(),
            self.event.clone(),
        ]
        .into_iter()
        .chain(scope)
        .chain([
            "-o".into(),
            data.display().to_string(),
            "-k".into(),
            "CLOCK_MONOTONIC".into(),
            "-D".into(),
            "-1".into(),
            // perf's units are binary; kilobytes, rounded up, say any size it is given.
            format!("--max-size={}K", self.max_bytes.div_ceil(1024)),
            "--control".into(),
            format!(
                "fifo:{},{}",
                control.paths[0].display(),
                control.paths[1].display()
            ),
        ])
        .collect();
        args
    }

    /// perf started with `args`, its messages to `log`.
    fn spawn(&self, args: &[String], log: &Path) -> Result<std::process::Child, String> {
        crate::safe_fs::create_replacing(log, 0o600)
            .map_err(|e| format!("cannot create {}: {e}", log.display()))
            .and_then(|f| {
                Command::new(&self.perf)
                    .args(args)
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(f)
                    // Its own process group: a Ctrl-C at the terminal reaches dbperf, which
                    // stops perf itself and still folds what was sampled.
                    .process_group(0)
                    .spawn()
                    .map_err(|e| format!("cannot start perf: {e}"))
            })
    }
}

/// Whether perf exited before it was ready: ready when its log says its events are disabled
/// (attached, waiting for `enable`), or when the deadline passes.
fn attached_or_exited(child: &mut std::process::Child, log: &Path) -> bool {
    // Ready when it says its events are disabled (attached, waiting for `enable`).
    let until = Instant::now() + ACK_DEADLINE;
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            break true;
        }
        let said = crate::safe_fs::read_log_end(log, crate::server::process::LOG_READ_MAX);
        if said.contains("Events disabled") || Instant::now() >= until {
            break false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

impl Recording {
    /// The measured time begins: samples from here on are kept.
    pub fn begin(&mut self) {
        self.window.0 = Some(monotonic_ns());
        self.perf_cpu.0 = self.child.as_ref().and_then(|c| process_cpu_ns(c.id()));
    }

    fn perf_cost(&mut self) {
        let (Some(a), Some(b)) = self.perf_cpu else {
            return;
        };
        let cpu_s = b.saturating_sub(a) as f64 / 1e9;
        self.record.perf_cpu_s = Some(cpu_s);
        if let (Some(s), Some(e)) = self.window {
            // The host's CPUs (as /proc/stat counts them), not the ones dbperf may be pinned to.
            let cpus = crate::metrics::proc::stat_cpus(std::path::Path::new("/proc"))
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
                as f64;
            let host_s = e.saturating_sub(s) as f64 / 1e9 * cpus;
            if host_s > 0.0 {
                self.record.perf_cpu_share = Some(cpu_s / host_s);
            }
        }
    }

    fn control_send(&mut self, what: &str) {
        if self.child.is_none() {
            return;
        }
        if let Some(c) = self.control.as_mut() {
            if let Err(e) = c.send(what) {
                self.record.error.get_or_insert(e);
            }
        }
    }

    /// Stops sampling (the measured time is over) and asks perf to write its file; `finish`
    /// waits for it.
    pub fn stop(&mut self) {
        if self.stopping.is_some() {
            return;
        }
        self.window.1 = Some(monotonic_ns());
        self.perf_cpu.1 = self.child.as_ref().and_then(|c| process_cpu_ns(c.id()));
        self.perf_cost();
        // At its size limit perf has stopped its session and reads no more commands: asking
        // it to disable would wait out the deadline for an acknowledgement that never comes.
        let log = crate::safe_fs::read_log_end(&self.log, crate::server::process::LOG_READ_MAX);
        match size_limit(&log) {
            Some(e) => self.record.error = Some(e),
            None => self.control_send("disable"),
        }
        if let Some(c) = &self.child {
            unsafe {
                libc::kill(c.id() as libc::pid_t, libc::SIGINT);
            }
            self.stopping = Some(Instant::now());
        }
    }

    /// Waits for perf (bounded), folds its samples into `<steps_dir>/<step>.profile.folded` and
    /// removes perf's own file. The record says what went wrong, if anything.
    pub fn finish(mut self, steps_dir: &Path, step: &str) -> StepProfile {
        let Some(mut child) = self.child.take() else {
            let _ = std::fs::remove_file(&self.log);
            return std::mem::replace(&mut self.record, empty());
        };
        if self.stopping.is_none() {
            self.stop();
        }
        let deadline = self.stopping.unwrap_or_else(Instant::now) + STOP_DEADLINE;
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
            }
        };
        let log = crate::safe_fs::read_log_end(&self.log, crate::server::process::LOG_READ_MAX);
        let _ = std::fs::remove_file(&self.log);
        if status.is_none() {
            self.record.error = Some(format!(
                "perf did not stop within {} s and was killed; its samples may be cut short",
                STOP_DEADLINE.as_secs()
            ));
        }
        if let Some(e) = size_limit(&log) {
            // It may have reached the limit just after `stop` looked, and then never
            // acknowledged 'disable': the limit is the cause worth naming.
            let ack = |x: &String| x.starts_with("perf did not acknowledge");
            if self.record.error.as_ref().is_none_or(ack) {
                self.record.error = Some(e);
            }
        }
        // perf exits non-zero after SIGINT on some versions: what counts is its file.
        if !self.data.is_file() {
            self.record.error = Some(format!("perf wrote no samples: {}", super::last_line(&log)));
            return std::mem::replace(&mut self.record, empty());
        }
        let folded_name = format!("{step}.profile.folded");
        match fold::perf_data(
            &self.data,
            self.window,
            self.tree.as_deref(),
            &steps_dir.join(&folded_name),
        ) {
            Ok(stats) => {
                self.record.samples = stats.samples;
                self.record.unresolved_samples = stats.unresolved;
                self.record.folded_file = Some(folded_name);
                if stats.samples == 0 {
                    self.record.error.get_or_insert_with(|| {
                        "perf took no samples (the processes used no CPU, or perf could not \
                         attach)"
                            .into()
                    });
                }
            }
            Err(e) => self.record.error = Some(e),
        }
        let _ = std::fs::remove_file(&self.data);
        std::mem::replace(&mut self.record, empty())
    }
}

/// perf's word that it stopped writing at `--max-size`: the profile then covers the step's
/// first part only.
fn size_limit(log: &str) -> Option<String> {
    log.lines()
        .find(|l| l.contains("size limit reached"))
        .map(|l| {
            format!(
                "perf stopped sampling at its size limit ({}; --profile-max-size) before the step ended: the profile covers the step's first part only",
                l.trim()
                    .trim_start_matches("[ perf record: ")
                    .trim_end_matches(" ]")
                    .trim_end_matches(", stopping session")
            )
        })
}

fn empty() -> StepProfile {
    StepProfile::default()
}

impl Drop for Recording {
    /// A step that panicked or was abandoned leaves no perf behind.
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
            let _ = std::fs::remove_file(&self.data);
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

/// Runs a command to its end or a deadline: (succeeded, stdout, stderr). Killed at the deadline.
pub(crate) fn output_within(
    mut c: Command,
    deadline: Duration,
) -> Result<(bool, String, String), String> {
    let mut child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", c.get_program()))?;
    let pipe = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            if let Some(mut r) = r {
                // Bounded: a chatty child cannot take the process's memory.
                let _ = r.by_ref().take(1 << 20).read_to_end(&mut s);
                let _ = std::io::copy(&mut r, &mut std::io::sink());
            }
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out = pipe(child.stdout.take().map(|r| Box::new(r) as _));
    let err = pipe(child.stderr.take().map(|r| Box::new(r) as _));
    let until = Instant::now() + deadline;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    match status {
        Some(s) => Ok((s.success(), out, err)),
        None => Err(format!(
            "{:?} did not finish within {} s",
            c.get_program(),
            deadline.as_secs()
        )),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn perf_at_its_size_limit_is_a_partial_profile() {
        // As perf 6.1 says it on stderr.
        let log = "[ perf record: perf size limit reached (333 KB), stopping session ]\n\
                   [ perf record: Woken up 1 times to write data ]\n\
                   [ perf record: Captured and wrote 0.364 MB /tmp/pm.data (1696 samples) ]\n";
        let e = super::size_limit(log).unwrap();
        assert!(
            e.starts_with("perf stopped sampling at its size limit (perf size limit reached (333 KB); --profile-max-size)"),
            "{e}"
        );
        assert_eq!(
            super::size_limit("[ perf record: Woken up 1 times ]\n"),
            None
        );
    }
}
