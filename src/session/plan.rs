//! The order of a campaign's cells. Repeats interleave: round 1 runs every (target, suite) once,
//! round 2 the same list rotated by one, and so on, so a slow drift of the host spreads over
//! every target instead of biasing whichever ran last (never AAA BBB). Shards take every Nth
//! cell of that order, a split that depends only on the plan.

use std::collections::BTreeMap;

use crate::results::campaign::Shard;

#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Also the cell's directory under the run directory.
    pub id: String,
    pub target: usize,
    pub suite: usize,
    /// Which of the host settings it runs under (`read_ahead_kb`, `io_scheduler`).
    pub host: usize,
    /// 1-based.
    pub round: u32,
    /// Position in the whole plan, 0-based.
    pub order: usize,
    /// Its values of the run's swept axes: the suite's, then the host setting's.
    pub axes: Axes,
}

/// Values of swept axes by name (`clients` = `4`).
pub type Axes = BTreeMap<String, String>;

impl Cell {
    /// Whether this shard runs the cell.
    pub fn in_shard(&self, shard: Option<Shard>) -> bool {
        match shard {
            None => true,
            Some(s) => self.order % s.count as usize == (s.index - 1) as usize,
        }
    }
}

/// Every cell in order: targets (each at its value of a swept setting) x suites (each at its
/// sweep level) x host settings, repeated
/// `rounds` times. A cell's directory is the target's name, with the suite when there are
/// several, the axes' values (`crate::results::axes_label`) when there are any, and
/// `r<round>` below it when there are repeats.
pub fn cells(
    targets: &[(String, Axes)],
    suites: &[(&str, Axes)],
    hosts: &[Axes],
    rounds: u32,
) -> Vec<Cell> {
    let mut names: Vec<&str> = suites.iter().map(|s| s.0).collect();
    names.sort_unstable();
    names.dedup();
    let no_host = [Axes::new()];
    let hosts = if hosts.is_empty() {
        &no_host[..]
    } else {
        hosts
    };
    let mut base: Vec<(usize, usize, usize)> = Vec::new();
    for t in 0..targets.len() {
        for s in 0..suites.len() {
            for h in 0..hosts.len() {
                base.push((t, s, h));
            }
        }
    }
    let mut out = Vec::new();
    for r in 0..rounds {
        for j in 0..base.len() {
            let (t, s, h) = base[(j + r as usize) % base.len()];
            let mut axes = targets[t].1.clone();
            axes.extend(suites[s].1.clone());
            axes.extend(hosts[h].clone());
            let mut id = targets[t].0.clone();
            if names.len() > 1 {
                id.push('-');
                id.push_str(suites[s].0);
            }
            if !axes.is_empty() {
                id.push('.');
                id.push_str(&crate::results::axes_label(&axes));
            }
            if rounds > 1 {
                id.push_str(&format!("/r{}", r + 1));
            }
            out.push(Cell {
                id,
                target: t,
                suite: s,
                host: h,
                round: r + 1,
                order: out.len(),
                axes,
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

    fn names(n: &[&str]) -> Vec<(String, Axes)> {
        n.iter().map(|s| (s.to_string(), Axes::new())).collect()
    }

    fn ids(c: &[Cell]) -> Vec<&str> {
        c.iter().map(|c| c.id.as_str()).collect()
    }

    #[test]
    fn rounds_rotate_so_no_target_always_runs_last() {
        let t = names(&["a", "b", "c"]);
        let c = cells(&t, &[("ibench", Axes::new())], &[], 3);
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
        let t = names(&["sqlite.wal-normal", "postgres.default"]);
        assert_eq!(
            ids(&cells(&t, &[("ibench", Axes::new())], &[], 1)),
            ["sqlite.wal-normal", "postgres.default"]
        );
        assert_eq!(
            ids(&cells(
                &t[..1],
                &[("ibench", Axes::new()), ("sysbench", Axes::new())],
                &[],
                1
            )),
            ["sqlite.wal-normal-ibench", "sqlite.wal-normal-sysbench"]
        );
    }

    #[test]
    fn a_sweep_names_each_level_in_the_cell() {
        let t = names(&["pg.default"]);
        let level = |n: &str| Axes::from([("clients".to_string(), n.to_string())]);
        let c = cells(
            &t,
            &[("ibench", level("1")), ("ibench", level("4"))],
            &[],
            2,
        );
        assert_eq!(
            ids(&c),
            [
                "pg.default.c1/r1",
                "pg.default.c4/r1",
                "pg.default.c4/r2",
                "pg.default.c1/r2"
            ]
        );
        assert_eq!(c[1].axes["clients"], "4");
    }

    #[test]
    fn shards_split_the_plan_without_overlap() {
        let t: Vec<(String, Axes)> = (0..5).map(|i| (format!("t{i}"), Axes::new())).collect();
        let c = cells(&t, &[("ibench", Axes::new())], &[], 2);
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
