//! CPU cost of dbperf's per-second host sampler (metrics::series): takes N samples back to back
//! against a data directory and, optionally, a server's process tree, and prints the CPU time
//! per sample and what one sample per second costs as a share of one core. Run by
//! bench/sampler-overhead.sh.
//!
//! ```sh
//! cargo run --release --example sampler_cost -- /var/lib/postgresql 1234 2000
//! ```

fn cpu_s() -> f64 {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    s(ru.ru_utime) + s(ru.ru_stime)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(args.get(1).map_or(".", |s| s.as_str()));
    let pid: Option<u32> = args.get(2).and_then(|p| p.parse().ok()).filter(|&p| p > 0);
    let n: u32 = args.get(3).and_then(|p| p.parse().ok()).unwrap_or(2000);
    let sources = dbperf::metrics::Sources::new(Some(&dir), &[], pid);
    let tmp = std::env::temp_dir().join(format!("dbperf-sampler-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut series = dbperf::metrics::series::HostSeries::create(&tmp, "bench", &sources).unwrap();
    let processes = std::fs::read_dir("/proc")
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .ok()
                .and_then(|e| e.file_name().to_str().map(|s| s.parse::<u32>().is_ok()))
                .unwrap_or(false)
        })
        .count();
    let c0 = cpu_s();
    for _ in 0..n {
        // The series skips samples closer than 50 ms; the snapshot is what costs.
        let _ = dbperf::metrics::Snapshot::take(&sources);
    }
    let per = (cpu_s() - c0) / n as f64;
    series.sample(&sources).unwrap();
    series.finish().unwrap();
    std::fs::remove_dir_all(&tmp).ok();
    println!(
        "{{\"samples\": {n}, \"devices\": {:?}, \"server_pid\": {}, \"processes_on_host\": {processes}, \
         \"cpu_us_per_sample\": {:.1}, \"share_of_one_core_at_1_hz_pct\": {:.4}}}",
        sources.devices,
        pid.map_or("null".into(), |p| p.to_string()), // JSON's null, not an engine's name
        per * 1e6,
        per * 100.0
    );
}
