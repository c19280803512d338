//! Writes one of the host fixture trees (the fake /sys and /proc the host tests use) into a
//! directory, to look at `dbperf host show` on hardware you do not have:
//!
//!     cargo run --release --example host_fixture -- amd-pstate-epp-active /tmp/fx
//!     dbperf host show --sysfs-root /tmp/fx/sys --procfs-root /tmp/fx/proc --path /data
//!
//! Without arguments it lists the fixtures. The fixtures are test code, outside the program: the
//! `fixtures` feature compiles them, which cargo turns on for examples and tests by itself
//! (Cargo.toml), so the command above needs no flag.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [name, dir] = args.as_slice() else {
        println!(
            "usage: host_fixture NAME DIR\nfixtures: {}",
            dbperf::host::fixture::NAMES.join(", ")
        );
        return;
    };
    let dir = std::path::Path::new(dir);
    if let Err(e) =
        std::fs::create_dir_all(dir).and_then(|_| dbperf::host::fixture::build(name, dir))
    {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}
