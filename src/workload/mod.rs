//! Benchmarks: schema, data generation, statements and step definitions. They build roles for the
//! engine and never measure time or read /proc themselves.

pub mod common;
pub mod ibench;
pub mod pgbench;
pub mod sysbench;
pub mod tpcc;
