//! Where an archive's links lead: each one followed through all the others, as the kernel will
//! follow them once they exist, within a budget of names followed (a chain of links with deep
//! targets must not make the check itself take minutes).

use std::collections::{BTreeMap, HashMap};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::safe_fs::tree::Rel;

/// Links followed resolving one link (the kernel's own limit).
const MAX_HOPS: usize = 40;
/// Names followed checking one link, and all of a build's links.
const MAX_STEPS_PER_LINK: usize = 4096;
const MAX_STEPS: usize = 4_000_000;
/// Directories deep a path followed may get (twice the deepest entry a build may have).
const MAX_DEPTH: usize = 2 * super::MAX_DEPTH;

/// What a check of a link found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leads {
    Inside,
    /// Above the build's root, or deeper or through more links than a build's may go.
    Outside,
    /// The build's links took more checking than any real build's: refused as a whole.
    TooComplex,
}

/// A path being followed: its names joined with `/`, and where each name starts.
#[derive(Default)]
struct Cursor {
    bytes: Vec<u8>,
    starts: Vec<usize>,
}

impl Cursor {
    fn push(&mut self, name: &[u8]) {
        self.starts.push(self.bytes.len());
        if !self.bytes.is_empty() {
            self.bytes.push(b'/');
        }
        self.bytes.extend_from_slice(name);
    }

    fn pop(&mut self) -> bool {
        match self.starts.pop() {
            Some(s) => {
                self.bytes.truncate(s);
                true
            }
            None => false,
        }
    }
}

/// Every link of a build, by its path, for following.
pub struct Links<'a> {
    map: HashMap<Vec<u8>, &'a Path>,
    steps: usize,
}

impl<'a> Links<'a> {
    pub fn new(links: &'a BTreeMap<Rel, PathBuf>) -> Links<'a> {
        let map = links
            .iter()
            .map(|(at, t)| (at.to_path().as_os_str().as_bytes().to_vec(), t.as_path()))
            .collect();
        Links { map, steps: 0 }
    }

    /// Whether the link `at` -> `target` leads inside the build.
    pub fn check(&mut self, at: &Rel, target: &Path) -> Leads {
        let mut cur = Cursor::default();
        let mut budget = Budget { hops: 0, steps: 0 };
        let parent = at.parent().unwrap_or_default().to_path();
        let inside = self.follow(&mut cur, &parent, &mut budget)
            && self.follow(&mut cur, target, &mut budget);
        self.steps += budget.steps;
        if self.steps > MAX_STEPS {
            return Leads::TooComplex;
        }
        if inside {
            Leads::Inside
        } else {
            Leads::Outside
        }
    }

    /// Follows `target` from `cur`, substituting links; false when it leaves the build or goes
    /// past the budget.
    fn follow(&self, cur: &mut Cursor, target: &Path, b: &mut Budget) -> bool {
        for c in target.components() {
            b.steps += 1;
            if b.steps > MAX_STEPS_PER_LINK {
                return false;
            }
            match c {
                Component::CurDir => {}
                Component::ParentDir => {
                    if !cur.pop() {
                        return false;
                    }
                }
                Component::Normal(n) => {
                    cur.push(n.as_bytes());
                    if cur.starts.len() > MAX_DEPTH {
                        return false;
                    }
                    if let Some(next) = self.map.get(&cur.bytes[..]) {
                        b.hops += 1;
                        if b.hops > MAX_HOPS {
                            return false;
                        }
                        cur.pop();
                        if !self.follow(cur, next, b) {
                            return false;
                        }
                    }
                }
                Component::RootDir | Component::Prefix(_) => return false,
            }
        }
        true
    }
}

struct Budget {
    hops: usize,
    steps: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(links: &[(&str, &str)], at: &str) -> Leads {
        let map: BTreeMap<Rel, PathBuf> = links
            .iter()
            .map(|(a, t)| (Rel::parse(Path::new(a)).unwrap(), PathBuf::from(t)))
            .collect();
        let mut l = Links::new(&map);
        let at = Rel::parse(Path::new(at)).unwrap();
        let target = map[&at].clone();
        l.check(&at, &target)
    }

    #[test]
    fn links_are_followed_through_each_other() {
        assert_eq!(check(&[("a/l", "../b")], "a/l"), Leads::Inside);
        assert_eq!(check(&[("a/l", "../..")], "a/l"), Leads::Outside);
        // Each looks inside; together they climb.
        let chain = [("d/l", ".."), ("d/l/x", "..")];
        assert_eq!(check(&chain, "d/l/x"), Leads::Outside);
        assert_eq!(
            check(&[("a", "b/.."), ("b", "c/.."), ("c", "..")], "a"),
            Leads::Outside
        );
        assert_eq!(
            check(&[("a", "b"), ("b", "a")], "a"),
            Leads::Outside,
            "a loop"
        );
        assert_eq!(check(&[("a", "/etc")], "a"), Leads::Outside);
    }

    #[test]
    fn deep_targets_end_at_the_budget() {
        let deep = vec!["x"; 5000].join("/");
        assert_eq!(check(&[("a", &deep)], "a"), Leads::Outside);
        let deep = vec!["x"; MAX_DEPTH + 1].join("/");
        assert_eq!(check(&[("a", &deep)], "a"), Leads::Outside);
    }
}
