//! dbperf's integration tests, one binary: its tests share one harness and run side by side
//! (`cargo test` runs test binaries one after another, and links each against the whole crate),
//! and share what is costly to set up. Each module is one subject; `common` holds the helpers.

mod common;

mod architecture;
mod bisect;
mod campaigns;
mod cli;
mod confidence;
mod devices;
mod error_classes;
mod failed_steps;
mod faults;
mod fetch;
mod fuzz;
mod golden;
mod history;
mod host;
mod hostile;
mod ibench_sqlite;
mod memory_cap;
mod mysql_client;
mod orphans;
mod pg_client;
mod pgbench;
mod profiles;
mod readme;
mod report;
mod report_sweeps;
mod sbatch_options;
mod security_fetch;
mod security_files;
mod security_fs;
mod security_history;
mod security_servers;
mod servers;
mod slurm;
mod stalls;
mod sweeps;
mod sysbench;
mod sysbench_sqlite;
mod tpcc;
