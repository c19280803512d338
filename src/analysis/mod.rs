//! Analysis of measured results: numbers derived from a result that say *why* it looks the way it
//! does. Reads nothing itself; `report` hands it the values.

pub mod changepoint;
pub mod rounds;
pub mod variance;
