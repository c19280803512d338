//! What a change point changed: its own file, since both the search and its results name it.

use serde::Serialize;

/// What changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    /// The series' level (its mean) moved.
    Level,
    /// The series' spread (its noise) grew or shrank.
    Spread,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Level => "level",
            ChangeKind::Spread => "spread",
        }
    }
}
