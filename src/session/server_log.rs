//! The part of a managed server's log written during a failed step: kept whole (bounded) beside
//! the step file, and its last lines quoted in the step's error. The log's start-up lines, which
//! say nothing about the step, are never quoted for it.

use std::path::Path;

use crate::server::process::LogPart;
use crate::server::Running;

/// At most this many of the part's last lines are quoted in an error, and at most
/// [`QUOTED_BYTES`] of them: the error is shown in the terminal, run.json and the report.
const QUOTED_LINES: usize = 8;
const QUOTED_BYTES: usize = 1536;
/// A quoted line longer than this is cut (PostgreSQL logs a waiting statement whole), so one
/// insert batch does not crowd out the lines that say why.
const LINE_BYTES: usize = 200;

/// What a failed step records of its server's log.
pub(super) struct StepLog {
    /// Appended to the step's error: the last lines written during the step, or that there
    /// were none.
    pub sentence: String,
    /// The file beside the step file holding the whole part, when written.
    pub file: Option<String>,
    /// "file: why" when the file could not be written.
    pub not_written: Option<String>,
}

/// The log `running` wrote from `offset` (taken at the step's start) on, written to
/// `<step>.server-log.txt` in `steps_dir`.
pub(super) fn during_step(running: &Running, offset: u64, steps_dir: &Path, step: &str) -> StepLog {
    let Some(part) = running.log_since(offset) else {
        return StepLog {
            sentence: "; the server's log could not be read".into(),
            file: None,
            not_written: None,
        };
    };
    if part.text.trim().is_empty() {
        return StepLog {
            sentence: "; the server wrote nothing to its log during the step".into(),
            file: None,
            not_written: None,
        };
    }
    let file = format!("{step}.server-log.txt");
    // The server wrote it: its control characters are shown, not obeyed, by whoever cats it.
    let text = crate::untrusted::printable(&part.text);
    let (file, not_written) =
        match crate::results::write_atomic(&steps_dir.join(&file), text.as_bytes()) {
            Ok(()) => (Some(file), None),
            Err(e) => (None, Some(format!("{file}: {e}"))),
        };
    let place = file
        .as_ref()
        .map_or(String::new(), |f| format!(", all of it in {f}"));
    StepLog {
        sentence: format!(
            "; the server's log during the step ({} bytes{place}) ends:\n{}",
            part.bytes,
            quote(&part)
        ),
        file,
        not_written,
    }
}

fn cut_line(l: &str) -> String {
    if l.len() <= LINE_BYTES {
        return l.to_string();
    }
    let mut cut = LINE_BYTES;
    while !l.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{} [cut]", &l[..cut])
}

/// The last lines of `part` for an error: at most [`QUOTED_LINES`] and [`QUOTED_BYTES`].
pub(super) fn quote(part: &LogPart) -> String {
    let lines: Vec<String> = part
        .text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(cut_line)
        .collect();
    let mut kept: Vec<&str> = Vec::new();
    let mut bytes = 0;
    for l in lines.iter().rev().take(QUOTED_LINES) {
        if bytes + l.len() > QUOTED_BYTES && !kept.is_empty() {
            break;
        }
        bytes += l.len() + 1;
        kept.push(l.as_str());
    }
    kept.reverse();
    let mut out = kept.join("\n");
    if out.len() > QUOTED_BYTES {
        let mut cut = QUOTED_BYTES;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push_str(" [cut]");
    }
    crate::untrusted::printable(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quote_is_the_last_lines_bounded() {
        let text: String = (0..20).map(|i| format!("line {i}\n")).collect();
        let q = quote(&LogPart {
            bytes: text.len() as u64,
            text,
        });
        assert_eq!(q.lines().count(), QUOTED_LINES);
        assert!(q.starts_with("line 12\n") && q.ends_with("line 19"), "{q}");
        let long = "x".repeat(10_000);
        let q = quote(&LogPart {
            bytes: 10_000,
            text: format!("short\n{long}\n"),
        });
        assert!(q.starts_with("short\nxxx"), "{q}");
        assert!(q.len() <= 6 + LINE_BYTES + 6, "{}", q.len());
        assert!(q.ends_with("[cut]"));
    }
}
