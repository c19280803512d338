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

pub fn is_bad_input(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.downcast_ref::<BadInput>().is_some())
}
