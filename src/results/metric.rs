//! One name for each hardware figure of a step file, shared by the report and the history: its
//! key (the string reports and history write), how a report column shows it, and a typed read of
//! the `Hardware` field that holds it. A field renamed in `hardware.rs` fails to compile here
//! instead of leaving an empty column (definitions: docs/metrics.md).

use super::hardware::Hardware;

/// A figure of a step's `hardware` object that a report column or a history row names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Metric {
    Rps,
    Rmbps,
    Wps,
    Wmbps,
    Rpq,
    Rkbpq,
    Wpi,
    Wkbpi,
    Csps,
    Cpups,
    Cspq,
    Cpupq,
    ClientCpuUsPerOp,
    ServerCpuUsPerOp,
    Dbgb1,
    Dbgb2,
    RssGb,
    UtilPct,
    AquSz,
    RAwaitMs,
    WAwaitMs,
    CpuPerOp,
    /// The report's sysbench `cs/o` and the history's `cs_per_op`: one figure. The report read
    /// it from `sysbench_row.cs_o`, the history from `per_op.cs`; the metrics room writes the
    /// first as a copy of the second, so both read `per_op.cs` now.
    CsPerOp,
    RPerOp,
    RkbPerOp,
    WkbPerOp,
    /// History only: host CPU per op from the busy time (the report's `cpupq` is the original's
    /// formula from the CPU percentages, another figure).
    HostCpuUsPerOp,
    /// History only: the same figure as `RkbPerOp` and `Rkbpq` under the name history has
    /// always stored it by.
    ReadKbPerOp,
    /// History only: the same figure as `WkbPerOp`, under history's name.
    WriteKbPerOp,
}

/// Which way a figure is better when two targets are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
    /// Describes the machine over the step rather than the DBMS's cost: shown, never judged.
    Neither,
}

/// How a figure is written as text; the report maps each to one of its number styles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A rate per second, read against other rates.
    Rate,
    /// Any other quantity, to significant digits.
    Sig,
}

/// How a report column shows a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    pub label: &'static str,
    pub unit: &'static str,
    /// What the number is, shown on hover and in the legend.
    pub definition: &'static str,
    pub better: Better,
}

impl Metric {
    pub const ALL: [Metric; 29] = [
        Metric::Rps,
        Metric::Rmbps,
        Metric::Wps,
        Metric::Wmbps,
        Metric::Rpq,
        Metric::Rkbpq,
        Metric::Wpi,
        Metric::Wkbpi,
        Metric::Csps,
        Metric::Cpups,
        Metric::Cspq,
        Metric::Cpupq,
        Metric::ClientCpuUsPerOp,
        Metric::ServerCpuUsPerOp,
        Metric::Dbgb1,
        Metric::Dbgb2,
        Metric::RssGb,
        Metric::UtilPct,
        Metric::AquSz,
        Metric::RAwaitMs,
        Metric::WAwaitMs,
        Metric::CpuPerOp,
        Metric::CsPerOp,
        Metric::RPerOp,
        Metric::RkbPerOp,
        Metric::WkbPerOp,
        Metric::HostCpuUsPerOp,
        Metric::ReadKbPerOp,
        Metric::WriteKbPerOp,
    ];

    /// Where the metric stands in `ALL`.
    pub const fn index(self) -> usize {
        let mut i = 0;
        while i < Metric::ALL.len() {
            if Metric::ALL[i] as u8 == self as u8 {
                return i;
            }
            i += 1;
        }
        panic!("every metric is in Metric::ALL")
    }

    /// The metrics of `ALL` from `first` to `last`, both included: a report table's columns,
    /// which `ALL` lists together in the table's order, so no table re-lists them.
    pub const fn span(first: Metric, last: Metric) -> &'static [Metric] {
        Metric::ALL
            .split_at(last.index() + 1)
            .0
            .split_at(first.index())
            .1
    }

    /// The name reports (JSON, CSV column keys) and the history store the figure under.
    pub fn key(self) -> &'static str {
        use Metric::*;
        match self {
            Rps => "rps",
            Rmbps => "rmbps",
            Wps => "wps",
            Wmbps => "wmbps",
            Rpq => "rpq",
            Rkbpq => "rkbpq",
            Wpi => "wpi",
            Wkbpi => "wkbpi",
            Csps => "csps",
            Cpups => "cpups",
            Cspq => "cspq",
            Cpupq => "cpupq",
            ClientCpuUsPerOp => "client_cpu_us_per_op",
            ServerCpuUsPerOp => "server_cpu_us_per_op",
            Dbgb1 => "dbgb1",
            Dbgb2 => "dbgb2",
            RssGb => "rss_gb",
            UtilPct => "util_pct",
            AquSz => "aqu_sz",
            RAwaitMs => "r_await_ms",
            WAwaitMs => "w_await_ms",
            CpuPerOp => "cpu_per_op",
            CsPerOp => "cs_per_op",
            RPerOp => "r_per_op",
            RkbPerOp => "rkb_per_op",
            WkbPerOp => "wkb_per_op",
            HostCpuUsPerOp => "host_cpu_us_per_op",
            ReadKbPerOp => "read_kb_per_op",
            WriteKbPerOp => "write_kb_per_op",
        }
    }

    /// The metric stored under `key`, if any.
    pub fn from_key(key: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.key() == key)
    }

    /// How a report column shows it; None for a figure only the history keeps.
    pub fn column(self) -> Option<Column> {
        use Better::*;
        use Metric::*;
        let c = |label, unit, definition, better| {
            Some(Column {
                label,
                unit,
                definition,
                better,
            })
        };
        match self {
            Rps => c("rps", "/s", "device reads per second", Neither),
            Rmbps => c("rmbps", "MB/s", "device MB read per second", Neither),
            Wps => c("wps", "/s", "device writes per second", Neither),
            Wmbps => c("wmbps", "MB/s", "device MB written per second", Neither),
            Rpq => c("rpq", "reads/op", "device reads per operation", Lower),
            Rkbpq => c("rkbpq", "KB/op", "KB read per operation", Lower),
            Wpi => c(
                "wpi",
                "writes/insert",
                "device writes per inserted row",
                Lower,
            ),
            Wkbpi => c("wkbpi", "KB/insert", "KB written per inserted row", Lower),
            Csps => c("csps", "/s", "context switches per second (host)", Neither),
            Cpups => c(
                "cpups",
                "%",
                "host CPU busy, user + system, % of all CPUs",
                Neither,
            ),
            Cspq => c("cspq", "cs/op", "context switches per operation", Lower),
            Cpupq => c(
                "cpupq",
                "µs/op",
                "host CPU µs per operation, all processes",
                Lower,
            ),
            ClientCpuUsPerOp => c(
                "client cpu",
                "µs/op",
                "CPU of the dbperf client per operation",
                Lower,
            ),
            ServerCpuUsPerOp => c(
                "server cpu",
                "µs/op",
                "CPU of the DBMS processes per operation",
                Lower,
            ),
            Dbgb1 => c("dbgb1", "GB", "database size as the DBMS reports it", Lower),
            Dbgb2 => c(
                "dbgb2",
                "GB",
                "size of the database directory on disk",
                Lower,
            ),
            RssGb => c("rss", "GB", "resident memory of the DBMS", Lower),
            // iostat's extended columns (the original saves them per step; dbperf shows them).
            // They describe the device over the step, which every other process on it shares
            // (and await counts in whole milliseconds), not what the DBMS asked of it per
            // operation: shown, not ranked better or worse, so no verdict is called on them.
            UtilPct => c(
                "%util",
                "%",
                "share of the time the data devices had a request in flight (iostat %util)",
                Neither,
            ),
            AquSz => c(
                "aqu-sz",
                "",
                "mean requests in flight on the data devices (iostat aqu-sz)",
                Neither,
            ),
            RAwaitMs => c(
                "r_await",
                "ms",
                "mean time per completed read, queue included (iostat r_await)",
                Neither,
            ),
            WAwaitMs => c(
                "w_await",
                "ms",
                "mean time per completed write, queue included (iostat w_await)",
                Neither,
            ),
            CpuPerOp => c(
                "cpu/o",
                "",
                "CPU per operation: (user + system %) / o/s",
                Lower,
            ),
            CsPerOp => c("cs/o", "", "context switches per operation", Lower),
            RPerOp => c("r/o", "", "device reads per operation", Lower),
            RkbPerOp => c("rKB/o", "KB", "KB read per operation", Lower),
            WkbPerOp => c("wKB/o", "KB", "KB written per operation", Lower),
            HostCpuUsPerOp | ReadKbPerOp | WriteKbPerOp => None,
        }
    }

    /// How its number is written: the original rounds its per-second IO and context switch
    /// columns as rates.
    pub fn style(self) -> Style {
        match self {
            Metric::Rps | Metric::Wps | Metric::Csps => Style::Rate,
            _ => Style::Sig,
        }
    }

    /// The figure in `hw`: None when the section holding it is absent (no `io`: no device was
    /// found), Some(None) when it was not measured. A number JSON cannot hold (NaN, infinite)
    /// is not measured, as the step file would write it (null).
    pub fn read(self, hw: &Hardware) -> Option<Option<f64>> {
        use Metric::*;
        let (row, per_op, sb) = (&hw.ibench_row, &hw.per_op, &hw.sysbench_row);
        let io = || hw.io.as_ref();
        let v = match self {
            Rps => row.rps,
            Rmbps => row.rmbps,
            Wps => row.wps,
            Wmbps => row.wmbps,
            Rpq => row.rpq,
            Rkbpq => row.rkbpq,
            Wpi => row.wpi,
            Wkbpi => row.wkbpi,
            Csps => row.csps,
            Cpups => row.cpups,
            Cspq => row.cspq,
            Cpupq => row.cpupq,
            ClientCpuUsPerOp => per_op.client_cpu_us,
            ServerCpuUsPerOp => per_op.server_cpu_us,
            Dbgb1 => row.dbgb1,
            Dbgb2 => row.dbgb2,
            RssGb => row.rss,
            UtilPct => io()?.util_pct,
            AquSz => io()?.aqu_sz,
            RAwaitMs => io()?.r_await_ms,
            WAwaitMs => io()?.w_await_ms,
            CpuPerOp => sb.cpu_o,
            CsPerOp => per_op.cs,
            RPerOp => sb.r_o,
            RkbPerOp => sb.rkb_o,
            WkbPerOp => sb.wkb_o,
            HostCpuUsPerOp => per_op.host_cpu_us,
            ReadKbPerOp => per_op.read_kb,
            WriteKbPerOp => per_op.write_kb,
        };
        Some(v.filter(|x| x.is_finite()))
    }

    /// The figure in `hw`, when it was measured.
    pub fn value(self, hw: &Hardware) -> Option<f64> {
        self.read(hw).flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::Metric::{self, *};
    use crate::results::hardware::{Hardware, IbenchRow, IoRates, PerOp, SysbenchRow};

    /// A step's hardware figures, each a different number, so a metric that read another field
    /// than it claims would show it.
    fn distinct() -> Hardware {
        Hardware {
            interval_s: 100.0,
            measured_s: Some(100.0),
            op: "insert".into(),
            op_count: 1000.0,
            cpus: 4,
            devices: vec!["sda".into()],
            host: None,
            io: Some(IoRates {
                reads_per_s: 1.0,
                read_kb_per_s: 2.0,
                writes_per_s: 3.0,
                write_kb_per_s: 4.0,
                flushes_per_s: 5.0,
                r_await_ms: Some(6.0),
                w_await_ms: Some(7.0),
                aqu_sz: Some(8.0),
                util_pct: Some(9.0),
            }),
            per_device: Vec::new(),
            client: None,
            server: None,
            per_op: PerOp {
                host_cpu_us: Some(10.0),
                client_cpu_us: Some(11.0),
                server_cpu_us: Some(12.0),
                cs: Some(13.0),
                reads: Some(14.0),
                read_kb: Some(15.0),
                writes: Some(16.0),
                write_kb: Some(17.0),
            },
            per_insert: None,
            data_dir_bytes: None,
            ibench_row: IbenchRow {
                ips: Some(18.0),
                qps: Some(19.0),
                rps: Some(20.0),
                rmbps: Some(21.0),
                wps: Some(22.0),
                wmbps: Some(23.0),
                rpq: Some(24.0),
                rkbpq: Some(25.0),
                wpi: Some(26.0),
                wkbpi: Some(27.0),
                csps: Some(28.0),
                cpups: Some(29.0),
                cspq: Some(30.0),
                cpupq: Some(31.0),
                dbgb1: Some(32.0),
                dbgb2: Some(33.0),
                rss: Some(34.0),
            },
            sysbench_row: SysbenchRow {
                cpu_o: Some(35.0),
                cs_o: Some(40.0),
                r_o: Some(36.0),
                rkb_o: Some(37.0),
                wkb_o: Some(38.0),
                o_s: 39.0,
            },
            missing: Vec::new(),
        }
    }

    /// Each metric with the number `distinct` puts in the field it claims to read.
    const CLAIMS: [(Metric, f64); 29] = [
        (Rps, 20.0),
        (Rmbps, 21.0),
        (Wps, 22.0),
        (Wmbps, 23.0),
        (Rpq, 24.0),
        (Rkbpq, 25.0),
        (Wpi, 26.0),
        (Wkbpi, 27.0),
        (Csps, 28.0),
        (Cpups, 29.0),
        (Cspq, 30.0),
        (Cpupq, 31.0),
        (ClientCpuUsPerOp, 11.0),
        (ServerCpuUsPerOp, 12.0),
        (Dbgb1, 32.0),
        (Dbgb2, 33.0),
        (RssGb, 34.0),
        (UtilPct, 9.0),
        (AquSz, 8.0),
        (RAwaitMs, 6.0),
        (WAwaitMs, 7.0),
        (CpuPerOp, 35.0),
        (CsPerOp, 13.0),
        (RPerOp, 36.0),
        (RkbPerOp, 37.0),
        (WkbPerOp, 38.0),
        (HostCpuUsPerOp, 10.0),
        (ReadKbPerOp, 15.0),
        (WriteKbPerOp, 17.0),
    ];

    #[test]
    fn every_key_is_unique_and_names_its_metric() {
        for m in Metric::ALL {
            let same: Vec<Metric> = Metric::ALL
                .into_iter()
                .filter(|o| o.key() == m.key())
                .collect();
            assert_eq!(same, [m], "key {}", m.key());
            assert_eq!(Metric::from_key(m.key()), Some(m));
        }
        assert_eq!(Metric::from_key("no such metric"), None);
    }

    #[test]
    fn each_metric_reads_the_field_it_claims() {
        let hw = distinct();
        let claimed: Vec<Metric> = CLAIMS.iter().map(|c| c.0).collect();
        assert_eq!(
            claimed,
            Metric::ALL,
            "every metric is claimed once, in order"
        );
        for (m, want) in CLAIMS {
            assert_eq!(m.value(&hw), Some(want), "{m:?}");
        }
    }

    #[test]
    fn a_span_is_the_metrics_between_its_ends() {
        for (i, m) in Metric::ALL.into_iter().enumerate() {
            assert_eq!(m.index(), i);
        }
        assert_eq!(Metric::span(Rps, Rps), [Rps]);
        assert_eq!(
            Metric::span(Cspq, ClientCpuUsPerOp),
            [Cspq, Cpupq, ClientCpuUsPerOp]
        );
        assert_eq!(Metric::span(Rps, WriteKbPerOp), Metric::ALL);
    }

    #[test]
    fn no_io_section_is_absent_and_nan_is_not_measured() {
        let mut hw = distinct();
        hw.io = None;
        hw.ibench_row.rps = Some(f64::NAN);
        hw.per_op.cs = Some(f64::INFINITY);
        hw.ibench_row.wps = None;
        assert_eq!(UtilPct.read(&hw), None);
        assert_eq!(RAwaitMs.read(&hw), None);
        assert_eq!(Rps.read(&hw), Some(None));
        assert_eq!(CsPerOp.read(&hw), Some(None));
        assert_eq!(Wps.read(&hw), Some(None));
        assert_eq!(Rmbps.read(&hw), Some(Some(21.0)));
    }
}
