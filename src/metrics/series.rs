//! Per-second host samples during a step, `steps/<step>.host.csv`: the same /proc sources as
//! the step totals, differenced between consecutive samples (columns: docs/results.md).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use super::proc::{self, USER_HZ};
use super::{Snapshot, Sources};

pub const HEADER: &str = "unix_s,interval_s,busy_pct,user_pct,system_pct,iowait_pct,steal_pct,\
cs_per_s,reads_per_s,read_kb_per_s,writes_per_s,write_kb_per_s,client_cpu_pct,server_cpu_pct,\
server_rss_kb";

pub struct HostSeries {
    out: BufWriter<File>,
    last: Snapshot,
}

fn f(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{x:.3}"))
}

impl HostSeries {
    pub fn create(dir: &Path, step: &str, s: &Sources) -> std::io::Result<HostSeries> {
        let path = dir.join(format!("{step}.host.csv"));
        let mut out = BufWriter::new(crate::results::create_fresh(&path)?);
        writeln!(out, "{HEADER}")?;
        Ok(HostSeries {
            out,
            last: Snapshot::take(s),
        })
    }

    /// Takes a sample and writes the row for the time since the previous one.
    pub fn sample(&mut self, s: &Sources) -> std::io::Result<()> {
        let now = Snapshot::take(s);
        let a = &self.last;
        let secs = now.at.duration_since(a.at).as_secs_f64();
        if secs < 0.05 {
            return Ok(());
        }
        let (mut busy, mut user, mut sys, mut iow, mut steal, mut cs) =
            (None, None, None, None, None, None);
        if let (Some(x), Some(y)) = (a.host, now.host) {
            let t = y.total().saturating_sub(x.total()).max(1) as f64;
            let d = |f: fn(&proc::HostCpu) -> u64| f(&y).saturating_sub(f(&x)) as f64 / t * 100.0;
            busy = Some(d(|c| c.busy()));
            user = Some(d(|c| c.user + c.nice));
            sys = Some(d(|c| c.system + c.irq + c.softirq));
            iow = Some(d(|c| c.iowait));
            steal = Some(d(|c| c.steal));
            cs = Some(y.ctxt.saturating_sub(x.ctxt) as f64 / secs);
        }
        let io = (!s.devices.is_empty()).then(|| {
            let (x, y) = (proc::total(&a.disk), proc::total(&now.disk));
            [
                y.reads.saturating_sub(x.reads) as f64 / secs,
                y.read_bytes.saturating_sub(x.read_bytes) as f64 / 1024.0 / secs,
                y.writes.saturating_sub(x.writes) as f64 / secs,
                y.write_bytes.saturating_sub(x.write_bytes) as f64 / 1024.0 / secs,
            ]
        });
        // Percent of one CPU.
        let client = match (&a.client, &now.client) {
            (Some(x), Some(y)) => Some(
                (y.utime + y.stime).saturating_sub(x.utime + x.stime) as f64 / 1e6 / secs * 100.0,
            ),
            _ => None,
        };
        let (server, rss) = match (&a.server, &now.server) {
            (Some(x), Some(y)) => {
                let d = y.delta(x);
                (
                    Some((d.utime + d.stime) as f64 / USER_HZ / secs * 100.0),
                    Some(d.rss_kb as f64),
                )
            }
            _ => (None, None),
        };
        let unix = now
            .wall
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        writeln!(
            self.out,
            "{unix:.3},{secs:.3},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            f(busy),
            f(user),
            f(sys),
            f(iow),
            f(steal),
            f(cs),
            f(io.map(|v| v[0])),
            f(io.map(|v| v[1])),
            f(io.map(|v| v[2])),
            f(io.map(|v| v[3])),
            f(client),
            f(server),
            rss.map_or(String::new(), |r| format!("{r:.0}")),
        )?;
        self.last = now;
        Ok(())
    }

    pub fn finish(mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}
