//! Reading files dbperf did not just write (result directories, the campaign journal, config
//! files, counters a user collected): whatever they are, they decide no allocation, no wait and
//! no path unchecked. One way in for all of them: the file is opened without blocking (a FIFO
//! does not hang the open), must be a regular file (not a FIFO, a device such as /dev/zero, a
//! directory), its size is checked against a cap before reading and the cap is enforced while
//! reading (a file that grows under the reader stops at the cap). Inside result directories the
//! last component is not followed when it is a symbolic link: a name planted there cannot make
//! dbperf read a file elsewhere. Names that files give for other files must be plain names
//! (`plain_name`), so they stay in their directory. Errors are one sentence of bad input naming
//! the file and never quote its content.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::error::BadInput;

/// Whether the last component of the path may be a symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Files inside a result directory: a symbolic link there is refused.
    Refuse,
    /// Files the user names on the command line or in dbperf.toml (a config kept in a dotfiles
    /// repository is often a link); what it points to is still checked.
    Follow,
}

/// What a file is and the most dbperf reads of it.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    /// Bytes.
    pub max: u64,
    /// What the file should be, for the error sentence ("a result file").
    pub what: &'static str,
    pub links: Links,
}

/// The file opened for reading, checked to be a regular file of at most `limit.max` bytes, and
/// its size then. Reads through it should still be bounded (`take`): see `read`.
pub fn open(path: &Path, limit: Limit) -> anyhow::Result<(File, u64)> {
    use crate::safe_fs::NotOpened;
    // Looked at through a handle that opens nothing, then opened from that handle: a device
    // is never opened (opening one can itself do something, a tty, a watchdog), however fast
    // another user swaps it in for the file.
    let (f, st) = match crate::safe_fs::open_checked(path, limit.links == Links::Follow) {
        Ok(x) => x,
        Err(NotOpened::Link) => {
            return Err(BadInput(format!(
                "{} is a symbolic link, not {}; dbperf does not follow links inside result \
                 directories",
                path.display(),
                limit.what
            ))
            .into())
        }
        Err(NotOpened::Kind(t)) => {
            return Err(BadInput(format!(
                "{} is {}, not {}",
                path.display(),
                kind(t),
                limit.what
            ))
            .into())
        }
        Err(NotOpened::Io(e)) => {
            return Err(BadInput(format!("cannot read {}: {e}", path.display())).into())
        }
    };
    if kernel_interface(&f) {
        return Err(BadInput(format!(
            "{} is a kernel interface (/proc, /sys or alike), not {}",
            path.display(),
            limit.what
        ))
        .into());
    }
    let len = st.st_size.max(0) as u64;
    if len > limit.max {
        return Err(too_large(path, limit).into());
    }
    Ok((f, len))
}

/// Whether the open file lives on one of the kernel's own filesystems (procfs, sysfs, debugfs,
/// tracefs, securityfs, cgroup, configfs, efivarfs, bpf, pstore), whose "regular files" are
/// the kernel's state: /proc/self/environ holds root's secrets, and no result or config of
/// dbperf's is ever there. Told by the filesystem's magic number, so a link or a bind mount
/// does not hide it.
fn kernel_interface(f: &File) -> bool {
    const MAGICS: [i64; 10] = [
        0x9fa0,     // proc
        0x62656572, // sysfs
        0x64626720, // debugfs
        0x74726163, // tracefs
        0x73636673, // securityfs
        0x27e0eb,   // cgroup
        0x63677270, // cgroup2
        0x62656570, // configfs
        0xde5e81e4, // efivarfs
        0xcafe4a11, // bpf
    ];
    const PSTORE: i64 = 0x6165676c;
    rustix::fs::fstatfs(f).is_ok_and(|st| {
        // f_type is a C long on most Linux targets and an unsigned int on some (s390x).
        #[allow(clippy::unnecessary_cast)]
        let t = st.f_type as i64;
        MAGICS.contains(&t) || t == PSTORE
    })
}

/// The whole file, at most `limit.max` bytes (see `open`).
pub fn read(path: &Path, limit: Limit) -> anyhow::Result<Vec<u8>> {
    let (f, len) = open(path, limit)?;
    read_opened(f, len, path, limit)
}

/// The whole file as text, as [`read_text`] reads it, when it is a record that drives an action
/// (what `what` names): refused unless the user running dbperf owns it and nobody else can
/// change it (`safe_fs::acting_record`, checked on the file opened).
pub fn read_record_text(path: &Path, limit: Limit, what: &str) -> anyhow::Result<String> {
    let (f, len) = open(path, limit)?;
    let m = f
        .metadata()
        .map_err(|e| BadInput(format!("cannot read {}: {e}", path.display())))?;
    crate::safe_fs::acting_record::check(path, &m, what)?;
    as_text(read_opened(f, len, path, limit)?, path, limit)
}

fn read_opened(f: File, len: u64, path: &Path, limit: Limit) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(len as usize);
    f.take(limit.max + 1)
        .read_to_end(&mut out)
        .map_err(|e| BadInput(format!("cannot read {}: {e}", path.display())))?;
    if out.len() as u64 > limit.max {
        return Err(too_large(path, limit).into());
    }
    Ok(out)
}

/// The whole file as text (UTF-8), at most `limit.max` bytes.
pub fn read_text(path: &Path, limit: Limit) -> anyhow::Result<String> {
    as_text(read(path, limit)?, path, limit)
}

fn as_text(bytes: Vec<u8>, path: &Path, limit: Limit) -> anyhow::Result<String> {
    String::from_utf8(bytes).map_err(|_| {
        BadInput(format!(
            "{} is not text (it is not UTF-8), so it is not {}",
            path.display(),
            limit.what
        ))
        .into()
    })
}

fn too_large(path: &Path, limit: Limit) -> BadInput {
    BadInput(format!(
        "{} is larger than {}, more than {} may be",
        path.display(),
        size(limit.max),
        limit.what
    ))
}

/// `16 MiB`, `1 MiB`, `512 KiB`.
pub fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

fn kind(t: rustix::fs::FileType) -> &'static str {
    use rustix::fs::FileType;
    match t {
        FileType::Directory => "a directory",
        FileType::Fifo => "a FIFO",
        FileType::CharacterDevice | FileType::BlockDevice => "a device",
        FileType::Socket => "a socket",
        _ => "not a regular file",
    }
}

/// A name a file gives for another file in the same directory (a step's series, a profile's
/// folded stacks, a cell's directory): not empty, no `/`, not starting with `.` (so neither `.`
/// nor `..`), no NUL, at most 255 bytes (one directory entry).
pub fn plain_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 255 && !name.starts_with('.') && !name.contains(['/', '\0'])
}

/// Text from outside (a name from a file, a value a server sent, a binary's output), fit to
/// quote in one line of an error: in quotes, control characters escaped (a newline would split
/// the sentence) and at most 60 characters (the sender chose its length).
pub fn shown(text: &str) -> String {
    const MAX: usize = 60;
    let mut s: String = text.chars().take(MAX).collect();
    if text.chars().nth(MAX).is_some() {
        s.push_str("...");
    }
    format!("{s:?}")
}

/// Whether `c` can change what a reader sees beyond itself: a control character (a tab and a
/// newline aside: ESC starts terminal sequences, CR overwrites a line) or one of Unicode's
/// bidirectional overrides and isolates (which reorder the text around them).
fn unprintable(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Text from outside (a server's version string, a status report, a name from a result file)
/// for a terminal or a text file: what `unprintable` finds is written as a visible escape
/// (`\u{1b}`), so those bytes cannot move the cursor, clear the screen or reorder the text.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(unprintable) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unprintable(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// What is wrong with JSON that did not parse, in dbperf's words and with where it is: serde's
/// own message quotes the value it met (a 1 MiB string, a line of a file that is no result).
pub fn json_error(e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let what = match e.classify() {
        Category::Io => "it cannot be read",
        Category::Syntax => "it is not valid JSON",
        Category::Data => "a value is not what the format says",
        Category::Eof => "it ends early",
    };
    format!("{what} (line {}, column {})", e.line(), e.column())
}

/// What a server's error says (its message, detail, state), as dbperf keeps it: at most
/// `MAX_SERVER_TEXT` characters (the server chose its length) on one line (a line break would
/// start a line of dbperf's own output), unprintable characters escaped.
pub fn server_text(bytes: &[u8]) -> String {
    const MAX_SERVER_TEXT: usize = 1000;
    let text = String::from_utf8_lossy(bytes);
    let mut out: String = text
        .chars()
        .take(MAX_SERVER_TEXT)
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    if text.chars().nth(MAX_SERVER_TEXT).is_some() {
        out.push_str("...");
    }
    printable(&out).into_owned()
}

/// `printable`, with line breaks escaped too: text from outside that must stay on its line (a
/// value read from a history database, shown in a table or a line of the terminal).
pub fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| unprintable(c) || c == '\n') {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(printable(text).replace('\n', "\\n"))
}

/// One CSV field of text from outside: `printable`, quoted when it holds a comma, a quote or a
/// line break, and read as text by a spreadsheet: a field that is not a number and starts
/// with `=`, `+`, `-`, `@` or a tab (a formula to Excel, LibreOffice and Google Sheets) gets a
/// leading `'`.
pub fn csv_field(text: &str) -> String {
    let s = printable(text);
    let formula = s.starts_with(['=', '+', '-', '@', '\t']) && s.trim().parse::<f64>().is_err();
    let s = if formula {
        format!("'{s}")
    } else {
        s.into_owned()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: Limit = Limit {
        max: 16,
        what: "a test file",
        links: Links::Refuse,
    };

    fn sentence(e: anyhow::Error) -> String {
        assert!(crate::error::is_bad_input(&e), "{e}");
        let s = e.to_string();
        assert!(!s.contains('\n'), "{s}");
        s
    }

    #[test]
    fn only_regular_files_within_the_cap_are_read() {
        let d = tempfile::tempdir().unwrap();
        let ok = d.path().join("ok");
        std::fs::write(&ok, "hello").unwrap();
        assert_eq!(read_text(&ok, LIMIT).unwrap(), "hello");
        let big = d.path().join("big");
        std::fs::write(&big, [b'x'; 17]).unwrap();
        assert!(sentence(read(&big, LIMIT).unwrap_err()).contains("larger than 16 bytes"));
        let s = sentence(read(Path::new("/dev/zero"), LIMIT).unwrap_err());
        assert!(s.contains("is a device"), "{s}");
        let follow = Limit {
            links: Links::Follow,
            max: 1 << 20,
            ..LIMIT
        };
        for k in [
            "/proc/self/environ",
            "/proc/self/status",
            "/sys/kernel/mm/transparent_hugepage/enabled",
        ] {
            if Path::new(k).exists() {
                let s = sentence(read(Path::new(k), follow).unwrap_err());
                assert!(s.contains("kernel interface"), "{s}");
            }
        }
        let s = sentence(read(d.path(), LIMIT).unwrap_err());
        assert!(s.contains("is a directory"), "{s}");
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string and a mode.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let s = sentence(read(&fifo, LIMIT).unwrap_err());
        assert!(s.contains("is a FIFO"), "{s}");
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&ok, &link).unwrap();
        let s = sentence(read(&link, LIMIT).unwrap_err());
        assert!(s.contains("symbolic link"), "{s}");
        let follow = Limit {
            links: Links::Follow,
            ..LIMIT
        };
        assert_eq!(read_text(&link, follow).unwrap(), "hello");
        std::fs::write(&ok, [0xff, 0xfe]).unwrap();
        assert!(sentence(read_text(&ok, LIMIT).unwrap_err()).contains("not UTF-8"));
    }

    #[test]
    fn json_errors_say_where_not_what() {
        let big = format!("{{\"status\": \"{}\nerror: FAKE\"}}", "x".repeat(1 << 20));
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct S {
            status: u32,
        }
        let e = serde_json::from_str::<S>(&big).unwrap_err();
        let s = json_error(&e);
        assert!(s.len() < 100 && !s.contains("FAKE"), "{s}");
        assert_eq!(one_line("a\nb\u{1b}"), "a\\nb\\u{1b}");
    }

    #[test]
    fn a_servers_error_is_one_clipped_line() {
        assert_eq!(
            server_text(b"relation \"t\" does not exist"),
            "relation \"t\" does not exist"
        );
        assert_eq!(
            server_text(b"a\nerror: FAKE\x1b[2J"),
            "a error: FAKE\\u{1b}[2J"
        );
        let long = server_text(&vec![b'x'; 13 << 20]);
        assert_eq!(long.len(), 1003);
    }

    #[test]
    fn outside_text_is_shown_and_never_obeyed() {
        assert_eq!(printable("PostgreSQL 16.4\tx\n"), "PostgreSQL 16.4\tx\n");
        assert_eq!(printable("a\u{1b}[2Jb\rc"), "a\\u{1b}[2Jb\\u{d}c");
        assert_eq!(printable("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(csv_field("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(csv_field("+1+cmd"), "'+1+cmd");
        assert_eq!(csv_field("-3.25"), "-3.25");
        assert_eq!(csv_field("-inf"), "-inf");
        assert_eq!(csv_field("\u{1b}[31mred"), "\\u{1b}[31mred");
    }

    #[test]
    fn plain_names_stay_in_their_directory() {
        for good in ["l.i0.series.csv", "qr100.json", "r1", "sqlite.wal-normal"] {
            assert!(plain_name(good), "{good}");
        }
        for bad in [
            "",
            ".",
            "..",
            "../x.csv",
            "a/b",
            "/etc/passwd",
            ".hidden",
            "a\0b",
        ] {
            assert!(!plain_name(bad), "{bad:?}");
        }
        assert!(!plain_name(&"x".repeat(256)));
        assert_eq!(shown("a\nb"), "\"a\\nb\"");
        assert!(shown(&"y".repeat(500)).len() < 80);
        assert_eq!(shown("plain"), "\"plain\"");
        assert!(!shown("a\r\u{0}b").contains(['\r', '\0']));
    }
}
