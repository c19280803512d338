//! Errors a user causes (bad flags, unknown names, unusable paths) must end in one clear sentence
//! and exit code 2; everything else that fails a run is exit 1. `BadInput` marks the first kind
//! so it survives `anyhow` context chains and the CLI can tell them apart.

use std::fmt;

#[derive(Debug)]
pub struct BadInput(pub String);

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// Shorthand for returning a bad-input error from any room.
pub fn bad_input<T>(msg: impl Into<String>) -> anyhow::Result<T> {
    Err(BadInput(msg.into()).into())
}

/// A file written by a newer dbperf (a result schema past this one's): bad input like
/// `BadInput`, and told from it by its type, since a reader that skips a damaged file must
/// still stop at this one (its numbers could mean something else).
#[derive(Debug)]
pub struct SchemaTooNew(pub String);

impl fmt::Display for SchemaTooNew {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SchemaTooNew {}

/// A record that drives an action (safe_fs::acting_record) that the user running dbperf did not
/// write: bad input like `BadInput`, and told from it by its type, since a sweep that skips a
/// damaged record says so differently of one it would not obey.
#[derive(Debug)]
pub struct NotOwnRecord(pub String);

impl fmt::Display for NotOwnRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotOwnRecord {}

pub fn is_bad_input(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|e| e.is::<BadInput>() || e.is::<SchemaTooNew>() || e.is::<NotOwnRecord>())
}

/// Whether `err` is or wraps a record the user running dbperf did not write (`NotOwnRecord`).
pub fn is_not_own_record(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.is::<NotOwnRecord>())
}

/// Whether `err` is or wraps a file from a newer dbperf (`SchemaTooNew`).
pub fn is_schema_too_new(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.is::<SchemaTooNew>())
}
