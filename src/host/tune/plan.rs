//! The journal tune builds before it writes anything: every file to write with its value now,
//! in write order, and the files a write changes as a side effect, saved so undo puts them back.

use std::path::PathBuf;

use super::Entry;
use crate::host::sysfs;

/// Builds the journal in write order (see `merge`).
#[derive(Default)]
pub(super) struct Plan {
    pub(super) entries: Vec<Entry>,
}

/// A file already in the journal keeps its first old value. Writing it again moves it to the
/// end: the journal is in write order (a file saved only as a side effect of an earlier write
/// may be written for its own sake later, e.g. no_turbo saved by --governor, written by --boost).
pub(super) fn merge(entries: &mut Vec<Entry>, i: usize, setting: &str, new: Option<String>) {
    if new.is_none() {
        return;
    }
    let mut e = entries.remove(i);
    e.new = new;
    e.setting = setting.into();
    entries.push(e);
}

impl Plan {
    pub(super) fn add(
        &mut self,
        setting: &str,
        what: String,
        path: PathBuf,
        new: Option<String>,
        choice: bool,
    ) {
        let old = {
            let raw = sysfs::read(&path).unwrap_or_default();
            if choice {
                sysfs::bracketed(&raw).map(|(s, _)| s).unwrap_or(raw)
            } else {
                raw
            }
        };
        if let Some(i) = self.entries.iter().position(|e| e.path == path) {
            // Saved as a side effect and already holding the value asked for: nothing to write.
            if self.entries[i].new.is_none() && new.as_ref() == Some(&old) {
                return;
            }
            merge(&mut self.entries, i, setting, new);
            return;
        }
        // Nothing to write, and nothing to save, when the file already holds the value.
        if new.as_ref().is_some_and(|n| *n == old) {
            return;
        }
        self.entries.push(Entry {
            setting: setting.into(),
            what,
            path,
            old,
            new,
            choice,
        });
    }

    /// Saves a file that writing another will change, so undo can put it back.
    pub(super) fn companion(&mut self, setting: &str, what: String, path: PathBuf) {
        if path.exists() {
            self.add(setting, what, path, None, false);
        }
    }
}
