//! The order of a campaign's cells. Repeats interleave: round 1 runs every (target, suite) once,
//! round 2 the same list rotated by one, and so on, so a slow drift of the host spreads over
//! every target instead of biasing whichever ran last (never AAA BBB). Shards take every Nth
//! cell of that order, a split that depends only on the plan.

use crate::results::campaign::Shard;

#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Also the cell's directory under the run directory.
    pub id: String,
    pub target: usize,
    pub suite: usize,
    /// 1-based.
    pub round: u32,
    /// Position in the whole plan, 0-based.
    pub order: usize,
}

impl Cell {
    /// Whether this shard runs the cell.
    pub fn in_shard(&self, shard: Option<Shard>) -> bool {
        match shard {
            None => true,
            Some(s) => self.order % s.count as usize == (s.index - 1) as usize,
        }
    }
}

/// Every cell in order. `targets` and `suites` are names; a cell's directory is the target's
/// name, with the suite when there are several, and `r<round>` below it when there are repeats.
pub fn cells(targets: &[String], suites: &[&str], rounds: u32) -> Vec<Cell> {
    let mut base: Vec<(usize, usize)> = Vec::new();
    for t in 0..targets.len() {
        for s in 0..suites.len() {
            base.push((t, s));
        }
    }
    let mut out = Vec::new();
    for r in 0..rounds {
        for j in 0..base.len() {
            let (t, s) = base[(j + r as usize) % base.len()];
            let mut id = targets[t].clone();
            if suites.len() > 1 {
                id.push('-');
                id.push_str(suites[s]);
            }
            if rounds > 1 {
                id.push_str(&format!("/r{}", r + 1));
            }
            out.push(Cell {
                id,
                target: t,
                suite: s,
                round: r + 1,
                order: out.len(),
            });
        }
    }
    out
}

/// `K/N` with 1 <= K <= N.
pub fn parse_shard(s: &str) -> Result<Shard, String> {
    let bad = || format!("--shard {s} is not K/N with 1 <= K <= N (e.g. 2/4)");
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let (k, n) = (
        k.trim().parse::<u32>().map_err(|_| bad())?,
        n.trim().parse::<u32>().map_err(|_| bad())?,
    );
    if k == 0 || n == 0 || k > n {
        return Err(bad());
    }
    Ok(Shard { index: k, count: n })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(c: &[Cell]) -> Vec<&str> {
        c.iter().map(|c| c.id.as_str()).collect()
    }

    #[test]
    fn rounds_rotate_so_no_target_always_runs_last() {
        let t = vec!["a".to_string(), "b".into(), "c".into()];
        let c = cells(&t, &["ibench"], 3);
        assert_eq!(
            ids(&c),
            ["a/r1", "b/r1", "c/r1", "b/r2", "c/r2", "a/r2", "c/r3", "a/r3", "b/r3"]
        );
        // Every target takes every position once over three rounds.
        for target in 0..3 {
            let mut pos: Vec<usize> = c
                .iter()
                .filter(|x| x.target == target)
                .map(|x| x.order % 3)
                .collect();
            pos.sort();
            assert_eq!(pos, [0, 1, 2]);
        }
    }

    #[test]
    fn one_round_keeps_todays_directories() {
        let t = vec!["sqlite.wal-normal".to_string(), "postgres.default".into()];
        assert_eq!(
            ids(&cells(&t, &["ibench"], 1)),
            ["sqlite.wal-normal", "postgres.default"]
        );
        assert_eq!(
            ids(&cells(&t[..1], &["ibench", "sysbench"], 1)),
            ["sqlite.wal-normal-ibench", "sqlite.wal-normal-sysbench"]
        );
    }

    #[test]
    fn shards_split_the_plan_without_overlap() {
        let t: Vec<String> = (0..5).map(|i| format!("t{i}")).collect();
        let c = cells(&t, &["ibench"], 2);
        let mut seen = vec![0; c.len()];
        for k in 1..=3 {
            let s = parse_shard(&format!("{k}/3")).unwrap();
            for x in c.iter().filter(|x| x.in_shard(Some(s))) {
                seen[x.order] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
        for bad in ["0/2", "3/2", "1", "a/b", "1/0"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }
}
