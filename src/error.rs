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

pub fn is_bad_input(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|e| e.is::<BadInput>() || e.is::<SchemaTooNew>())
}

/// Whether `err` is or wraps a file from a newer dbperf (`SchemaTooNew`).
pub fn is_schema_too_new(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.is::<SchemaTooNew>())
}
