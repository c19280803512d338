//! Parts any suite may use, below the suites: seeded random streams, the stop rule of a timed
//! role, the cleanup and wait after a write-heavy step, rates over a step's seconds. This room
//! imports no suite, so a suite can be removed without breaking another.

pub mod cleanup;
pub mod rand;
pub mod rates;
pub mod stop;
