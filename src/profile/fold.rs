//! From perf's file to folded stacks (`frame;frame;leaf count`, root first), the text every
//! flame-graph tool reads: `perf script` prints the samples with their symbols, inferno's
//! collapse-perf folds them.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use inferno::collapse::perf::{Folder, Options};
use inferno::collapse::Collapse;

/// `perf script` resolves symbols; with debug information that takes a while, but not longer.
const SCRIPT_DEADLINE: Duration = Duration::from_secs(300);

/// A folded file larger than this is refused rather than read into memory.
pub const MAX_FOLDED_BYTES: u64 = 256 << 20;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub samples: u64,
    /// Samples whose leaf frame has no function name (`[unknown]`, or `[library]`).
    pub unresolved: u64,
}

/// Folds `data` (perf.data) into `out`.
/// `window`: CLOCK_MONOTONIC ns of the measured start and end; samples outside are left out.
/// `tree`: for a system-wide recording (`perf record -a`), the processes whose samples are
/// kept: these pids and every process forked from them while perf recorded.
pub fn perf_data(
    data: &Path,
    window: (Option<u64>, Option<u64>),
    tree: Option<&[u32]>,
    out: &Path,
) -> Result<Stats, String> {
    let script = data.with_extension("script");
    let kept = data.with_extension("kept");
    let r = run_script(data, window, tree.is_some(), &script).and_then(|()| {
        let names = thread_names(&script)?;
        keep_samples(&script, &kept, tree, window, &names)?;
        let source = &kept;
        let mut folded = Vec::new();
        Folder::from(Options::default())
            .collapse_file(Some(source), &mut folded)
            .map_err(|e| format!("folding perf's samples: {e}"))?;
        crate::safe_fs::write_new(out, &folded).map_err(|e| format!("{}: {e}", out.display()))?;
        Ok(stats(&parse(&String::from_utf8_lossy(&folded))))
    });
    let _ = std::fs::remove_file(&script);
    let _ = std::fs::remove_file(&kept);
    r
}

/// What a line of `perf script` output starts, when it is not a stack frame.
#[derive(Debug, PartialEq)]
enum Header {
    /// `comm PID/TID TIME: PERF_RECORD_FORK(CHILD:TID):(PARENT:TID)`
    Fork { child: u32, parent: u32 },
    /// `comm PID/TID TIME: event:`: a sample, its stack on the lines that follow.
    Sample { pid: u32, ns: u64 },
    /// Any other task event (COMM, EXIT).
    Other,
}

/// The task a header line names: `comm PID/TID TIME:`, read from its right because the comm
/// may hold spaces.
struct Task<'a> {
    comm: &'a str,
    pid: u32,
    tid: u32,
    /// The line from the `PID/TID` token on.
    rest: &'a str,
}

fn task(line: &str) -> Option<Task<'_>> {
    let tokens: Vec<(usize, &str)> = line
        .split_whitespace()
        // split_whitespace yields slices of `line`: their offsets into it.
        .map(|t| (t.as_ptr() as usize - line.as_ptr() as usize, t))
        .collect();
    let i = (0..tokens.len().saturating_sub(1)).find(|&i| {
        let (p, t) = (tokens[i].1, tokens[i + 1].1);
        p.split_once('/')
            .is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok())
            && t.strip_suffix(':')
                .is_some_and(|t| t.parse::<f64>().is_ok())
    })?;
    let (pid, tid) = tokens[i].1.split_once('/')?;
    let at = tokens[i].0;
    Some(Task {
        comm: line[..at].trim(),
        pid: pid.parse().ok()?,
        tid: tid.parse().ok()?,
        rest: &line[at..],
    })
}

/// Reads a header line from its right: the comm before `PID/TID` may hold spaces.
fn header(line: &str) -> Option<Header> {
    let t = task(line)?;
    let tokens: Vec<&str> = t.rest.split_whitespace().collect();
    let rest = tokens[2..].join(" ");
    if let Some(f) = rest.strip_prefix("PERF_RECORD_FORK(") {
        // CHILD:TID):(PARENT:TID)
        let (child, more) = f.split_once(':')?;
        let parent = more.split_once(":(")?.1.split_once(':')?.0;
        return Some(Header::Fork {
            child: child.parse().ok()?,
            parent: parent.parse().ok()?,
        });
    }
    if rest.starts_with("PERF_RECORD_") {
        return Some(Header::Other);
    }
    let time = tokens[1].trim_end_matches(':');
    let (secs, frac) = time.split_once('.').unwrap_or((time, "0"));
    let frac = format!("{frac:0<9}");
    let ns = secs.parse::<u64>().ok()?.checked_mul(1_000_000_000)?
        + frac.get(..9)?.parse::<u64>().ok()?;
    Some(Header::Sample { pid: t.pid, ns })
}

/// perf's name for a thread whose name it never learnt (`:TID`): a busy host loses events, and
/// with them the COMM event of a thread started while perf recorded.
fn unnamed(comm: &str) -> bool {
    comm.strip_prefix(':')
        .is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
}

/// The name of each process in `script`: its main thread's (TID = PID), else the first named
/// thread's. An unnamed thread's samples take it, so they are drawn under their process rather
/// than as a root of their own.
fn thread_names(script: &Path) -> Result<std::collections::HashMap<u32, String>, String> {
    use std::io::{BufRead, BufReader};
    let input = std::fs::File::open(script).map_err(|e| format!("{}: {e}", script.display()))?;
    let mut names = std::collections::HashMap::new();
    let mut main = std::collections::HashSet::new();
    for line in BufReader::new(input).split(b'\n') {
        let line = line.map_err(|e| format!("{}: {e}", script.display()))?;
        if line.first() == Some(&b'\t') {
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let Some(t) = task(&text) else { continue };
        if t.comm.is_empty() || unnamed(t.comm) || main.contains(&t.pid) {
            continue;
        }
        if t.tid == t.pid {
            main.insert(t.pid);
            names.insert(t.pid, t.comm.to_string());
        } else {
            names.entry(t.pid).or_insert_with(|| t.comm.to_string());
        }
    }
    Ok(names)
}

/// Copies from `script` to `kept` the samples to fold, each under its process's name when perf
/// did not know its thread's (`names`). A task recording is already cut to the window by perf;
/// a system-wide one (`tree`, the server's pids) holds every process on the host, so only the
/// samples of the tree rooted there taken inside `window` are kept. The tree grows as FORK
/// events name a parent already in it, so backends forked during the step are kept.
fn keep_samples(
    script: &Path,
    kept: &Path,
    tree: Option<&[u32]>,
    window: (Option<u64>, Option<u64>),
    names: &std::collections::HashMap<u32, String>,
) -> Result<(), String> {
    use std::io::{BufRead, BufReader, BufWriter, Write};
    let input = std::fs::File::open(script).map_err(|e| format!("{}: {e}", script.display()))?;
    let output = crate::safe_fs::create_replacing(kept, 0o600)
        .map_err(|e| format!("{}: {e}", kept.display()))?;
    let mut out = BufWriter::new(output);
    let mut members: std::collections::HashSet<u32> =
        tree.unwrap_or_default().iter().copied().collect();
    let inside = |ns: u64| window.0.is_none_or(|a| ns >= a) && window.1.is_none_or(|b| ns <= b);
    let mut keeping = false;
    let mut line = Vec::new();
    let mut reader = BufReader::new(input);
    let failed = |e: std::io::Error| format!("{}: {e}", kept.display());
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("{}: {e}", script.display()))?;
        if n == 0 {
            break;
        }
        let text = String::from_utf8_lossy(&line);
        // Frames start with a tab; a blank line ends a sample; anything else is a header.
        if text.starts_with('\t') || text.trim().is_empty() {
            if keeping {
                out.write_all(&line).map_err(failed)?;
            }
            continue;
        }
        keeping = false;
        match header(&text) {
            Some(Header::Fork { child, parent }) => {
                if members.contains(&parent) {
                    members.insert(child);
                }
            }
            Some(Header::Sample { pid, ns }) => {
                keeping = tree.is_none() || (members.contains(&pid) && inside(ns));
            }
            Some(Header::Other) | None => {}
        }
        if !keeping {
            continue;
        }
        match task(&text).filter(|t| unnamed(t.comm)).and_then(|t| {
            let name = names.get(&t.pid)?;
            Some(format!("{name} {}", t.rest))
        }) {
            Some(named) => out.write_all(named.as_bytes()).map_err(failed)?,
            None => out.write_all(&line).map_err(failed)?,
        }
    }
    out.flush().map_err(failed)
}

fn run_script(
    data: &Path,
    window: (Option<u64>, Option<u64>),
    system_wide: bool,
    script: &Path,
) -> Result<(), String> {
    let f = crate::safe_fs::create_replacing(script, 0o600)
        .map_err(|e| format!("{}: {e}", script.display()))?;
    let perf = super::which("perf").unwrap_or_else(|| "perf".into());
    // --no-inline: resolving inlined frames through addr2line takes minutes per step with
    // debug information; the functions that were not inlined are what the flame graph needs.
    let mut child = Command::new(perf)
        .arg("script")
        .arg("--no-inline")
        // Without the period: every sample counts one, so the folded counts are samples (with
        // the period they would be nanoseconds or cycles, which differ between events).
        .args(["-F", "comm,pid,tid,time,event,ip,sym,dso"])
        .args(script_scope(window, system_wide))
        .arg("-i")
        .arg(data)
        .stdin(Stdio::null())
        .stdout(f)
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start perf script: {e}"))?;
    let until = Instant::now() + SCRIPT_DEADLINE;
    loop {
        match child.try_wait() {
            Ok(Some(s)) if s.success() => return Ok(()),
            Ok(Some(s)) => return Err(format!("perf script failed ({s})")),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "perf script did not finish within {} s",
                    SCRIPT_DEADLINE.as_secs()
                ));
            }
        }
    }
}

/// A task recording is cut to the window by perf itself. A system-wide one keeps every event,
/// with the forks and exits among them, for `keep_tree` to follow the tree and cut the window:
/// a backend forked just before the measured start must still be known as the server's.
fn script_scope(window: (Option<u64>, Option<u64>), system_wide: bool) -> Vec<String> {
    if system_wide {
        vec!["--show-task-events".into()]
    } else {
        vec![format!("--time={},{}", secs(window.0), secs(window.1))]
    }
}

/// perf's `--time` bound: seconds.nanoseconds, empty for open.
fn secs(ns: Option<u64>) -> String {
    ns.map(|n| format!("{}.{:09}", n / 1_000_000_000, n % 1_000_000_000))
        .unwrap_or_default()
}

/// Folded stacks: (frames root first, samples). Lines that are not `stack count` are skipped.
pub fn parse(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter_map(|l| {
            let (stack, n) = l.trim_end().rsplit_once(' ')?;
            let n: u64 = n.parse().ok()?;
            (!stack.is_empty()).then(|| (stack.to_string(), n))
        })
        .collect()
}

/// Reads a folded file, refusing one too large to be a profile.
pub fn read(path: &Path) -> Result<Vec<(String, u64)>, String> {
    let limit = crate::untrusted::Limit {
        max: MAX_FOLDED_BYTES,
        what: "a profile dbperf reads",
        links: crate::untrusted::Links::Refuse,
    };
    let text = crate::untrusted::read_text(path, limit).map_err(|e| e.to_string())?;
    Ok(parse(&text))
}

/// A frame perf could not name: `[unknown]`, or only its library (`[libc.so.6]`).
pub fn unresolved(frame: &str) -> bool {
    frame.starts_with('[') && frame.ends_with(']')
}

pub fn stats(stacks: &[(String, u64)]) -> Stats {
    let mut s = Stats::default();
    for (stack, n) in stacks {
        s.samples += n;
        if unresolved(stack.rsplit(';').next().unwrap_or("")) {
            s.unresolved += n;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_of_perf_script_are_read_from_their_right() {
        assert_eq!(
            header("bash 12364/12364 21116.597137: PERF_RECORD_FORK(12366:12366):(12364:12364)\n"),
            Some(Header::Fork {
                child: 12366,
                parent: 12364
            })
        );
        assert_eq!(
            header("ib io 2/3 worker 12/15 7.5: cpu-clock: \n"),
            Some(Header::Sample {
                pid: 12,
                ns: 7_500_000_000
            })
        );
        assert_eq!(
            header("seq 12367/12367 21116.598859: PERF_RECORD_EXIT(12367:12367):(12366:12366)"),
            Some(Header::Other)
        );
        assert_eq!(header("\t  7f0 main (/bin/x)"), None);
    }

    #[test]
    fn a_system_wide_recording_keeps_the_tree_inside_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let (script, kept) = (dir.path().join("s"), dir.path().join("k"));
        std::fs::write(
            &script,
            "swapper 0/0 1.0: cpu-clock: \n\tffff idle ([kernel.kallsyms])\n\n\
             postgres 10/10 1.1: PERF_RECORD_FORK(11:11):(10:10)\n\
             other 20/20 1.2: PERF_RECORD_FORK(21:21):(20:20)\n\
             postgres 11/11 1.5: cpu-clock: \n\t1 ExecInsert (/pg)\n\t2 PostgresMain (/pg)\n\n\
             other 21/21 1.6: cpu-clock: \n\t1 work (/x)\n\n\
             postgres 11/11 3.5: cpu-clock: \n\t1 late (/pg)\n\n\
             postgres 10/10 0.5: cpu-clock: \n\t1 early (/pg)\n\n",
        )
        .unwrap();
        keep_samples(
            &script,
            &kept,
            Some(&[10]),
            (Some(1_000_000_000), Some(3_000_000_000)),
            &thread_names(&script).unwrap(),
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(&kept).unwrap(),
            "postgres 11/11 1.5: cpu-clock: \n\t1 ExecInsert (/pg)\n\t2 PostgresMain (/pg)\n\n"
        );
    }

    #[test]
    fn a_thread_perf_could_not_name_is_drawn_under_its_process() {
        let dir = tempfile::tempdir().unwrap();
        let (script, kept) = (dir.path().join("s"), dir.path().join("k"));
        std::fs::write(
            &script,
            "ib worker 9/12 1.0: cpu-clock: \n\t1 task (/m)\n\n\
             mariadbd 9/9 1.1: cpu-clock: \n\t1 main (/m)\n\n\
             :9419 9/9419 1.2: cpu-clock: \n\t1 execute (/m)\n\n\
             :77 77/77 1.3: cpu-clock: \n\t1 lone (/x)\n\n",
        )
        .unwrap();
        keep_samples(
            &script,
            &kept,
            None,
            (None, None),
            &thread_names(&script).unwrap(),
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(&kept).unwrap(),
            "ib worker 9/12 1.0: cpu-clock: \n\t1 task (/m)\n\n\
             mariadbd 9/9 1.1: cpu-clock: \n\t1 main (/m)\n\n\
             mariadbd 9/9419 1.2: cpu-clock: \n\t1 execute (/m)\n\n\
             :77 77/77 1.3: cpu-clock: \n\t1 lone (/x)\n\n"
        );
    }

    #[test]
    fn folded_lines_are_parsed_and_unresolved_leaves_counted() {
        let s = parse("postgres;main;PostgresMain;ExecutorRun 7\npostgres;main;[unknown] 3\nbad\n");
        assert_eq!(s.len(), 2);
        assert_eq!(
            stats(&s),
            Stats {
                samples: 10,
                unresolved: 3
            }
        );
    }
}
