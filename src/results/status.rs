//! How a step and a target ended, as the result files say it (`"ok"`, `"failed"`, ...).

use std::fmt;

use serde::{Deserialize, Serialize};

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    #[default]
    Ok,
    Failed,
    Interrupted,
}

/// How a target's run stands: `running` until it ends (a file left `running` means dbperf was
/// killed), then as its steps ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    #[default]
    Running,
    Ok,
    Failed,
    Interrupted,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Interrupted => "interrupted",
        }
    }

    /// The worse of two: failed over interrupted over ok.
    pub fn worst(self, other: Status) -> Status {
        match (self, other) {
            (Status::Failed, _) | (_, Status::Failed) => Status::Failed,
            (Status::Interrupted, _) | (_, Status::Interrupted) => Status::Interrupted,
            _ => Status::Ok,
        }
    }
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Ok => "ok",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

impl From<Status> for RunStatus {
    fn from(s: Status) -> RunStatus {
        match s {
            Status::Ok => RunStatus::Ok,
            Status::Failed => RunStatus::Failed,
            Status::Interrupted => RunStatus::Interrupted,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

// Compared with the words the files hold, so checks read as the files do (`status == "ok"`).
impl PartialEq<&str> for Status {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<&str> for RunStatus {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_the_files_words() {
        assert_eq!(
            serde_json::to_string(&Status::Interrupted).unwrap(),
            "\"interrupted\""
        );
        let r: RunStatus = serde_json::from_str("\"running\"").unwrap();
        assert_eq!(r, RunStatus::Running);
        assert!(Status::Failed == "failed");
        assert_eq!(Status::Ok.worst(Status::Interrupted), Status::Interrupted);
        assert!(serde_json::from_str::<Status>("\"maybe\"").is_err());
    }
}
