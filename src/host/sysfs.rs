//! Reading and writing the one-value files of sysfs and procfs. A file that is missing or
//! unreadable is `None`, never an error: most of these files exist only with some drivers,
//! kernels or machines, and their absence is itself what the caller reports.

use std::fs;
use std::io::Write;
use std::path::Path;

/// The file's content without surrounding whitespace; `None` when it cannot be read.
pub fn read(p: &Path) -> Option<String> {
    fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

pub fn read_u64(p: &Path) -> Option<u64> {
    read(p)?.parse().ok()
}

/// A `0`/`1` switch.
pub fn read_bool(p: &Path) -> Option<bool> {
    match read(p)?.as_str() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

pub fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

/// A choice file such as `always [madvise] never`: the selected word and every choice. A file
/// without brackets (a single word) selects that word.
pub fn bracketed(s: &str) -> Option<(String, Vec<String>)> {
    let mut selected = None;
    let mut choices = Vec::new();
    for w in s.split_whitespace() {
        if let Some(inner) = w.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            selected = Some(inner.to_string());
            choices.push(inner.to_string());
        } else {
            choices.push(w.to_string());
        }
    }
    match (selected, choices.len()) {
        (Some(s), _) => Some((s, choices)),
        (None, 1) => Some((choices[0].clone(), choices)),
        _ => None,
    }
}

pub fn read_bracketed(p: &Path) -> Option<(String, Vec<String>)> {
    bracketed(&read(p)?)
}

/// Writes `value` as `echo value > file` does. Never creates a file: a kernel file that does
/// not exist is a control this kernel does not offer.
pub fn write(p: &Path, value: &str) -> std::io::Result<()> {
    let mut f = fs::OpenOptions::new().write(true).truncate(true).open(p)?;
    // One write call: sysfs takes the first write of an open file as the whole value.
    f.write_all(format!("{value}\n").as_bytes())
}

/// The names in a sysfs directory, sorted; none when it cannot be read.
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Whether the kernel lets the owner write the file (sysfs marks a read-only attribute 0444).
pub fn writable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o200 != 0)
}

/// CPU numbers from a list such as `0-3,8` (cpulist files) or `0 1 2` (`affected_cpus`).
pub fn cpu_list(s: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in s.split([',', ' ', '\n']).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.parse::<u32>().ok()),
        }
    }
    out
}

/// Compact form of CPU numbers for people: `0-3,8`.
pub fn cpu_ranges(cpus: &[u32]) -> String {
    let mut v = cpus.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    out.join(",")
}

/// (major, minor) of a kernel release such as `6.8.0-45-generic`.
pub fn kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut it = release.split(|c: char| !c.is_ascii_digit());
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    Some((major, minor))
}

/// Subdirectory names of `dir` that are `prefix` followed by a number, in numeric order.
pub fn numbered(dir: &Path, prefix: &str) -> Vec<(u32, String)> {
    let mut v: Vec<(u32, String)> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n = name.strip_prefix(prefix)?.parse().ok()?;
            Some((n, name))
        })
        .collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_choice_files() {
        assert_eq!(
            bracketed("always [madvise] never"),
            Some((
                "madvise".into(),
                vec!["always".into(), "madvise".into(), "never".into()]
            ))
        );
        assert_eq!(
            bracketed("none [mq-deadline] kyber bfq").unwrap().0,
            "mq-deadline"
        );
        assert_eq!(bracketed("never").unwrap().0, "never");
        assert_eq!(bracketed("a b"), None);
    }

    #[test]
    fn parses_cpu_lists_and_versions() {
        assert_eq!(cpu_list("0-3,8\n"), vec![0, 1, 2, 3, 8]);
        assert_eq!(cpu_list("0 16"), vec![0, 16]);
        assert_eq!(cpu_ranges(&[3, 0, 1, 2, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(kernel_version("6.8.0-45-generic"), Some((6, 8)));
        assert_eq!(kernel_version("6.18.44-fc-v595"), Some((6, 18)));
        assert_eq!(kernel_version("weird"), None);
    }
}
