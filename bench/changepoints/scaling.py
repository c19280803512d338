"""How the change-point search's time grows with the series' length (issue 45).

One series per run of `dbperf history detect --stdin`, a change every 20 points, of three kinds:
  exact     the level alternates between 100 and 110, no noise: every p-value is 0, the kind
            that made the search quadratic (issue 45: 0.46 s for 20,000 points, 11.8 s for
            100,000, 10^6 killed after 120 s)
  noisy     the same with white noise of sd 2 (2% of the level)
  growing   steps growing from 3.5 to 5 along the series, in one pattern of noise of sd 1
            repeated every 40 points, so that every step's p-value follows its size and the
            surest is always the last
at 20,000, 100,000 and 1,000,000 points. The text is made before the clock starts; the times of
20,000 and 100,000 points are the best of three (the machine is shared). Goals: 100,000 points in
at most 10 times the time of 20,000 (the exact kind) and 10^6 points in under 10 s. Printed per
kind and length: wall and CPU seconds, changes found, the share of the true changes found within
5 points, and whether dbperf said its search stopped at its budget.

Then `dbperf history changes --format json` on a SQLite history of 100,000 runs of one series
(the exact kind), made in a private temporary directory (issue 45: 6.7 s).
"""

import argparse
import os
import random
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time

EVERY = 20
TOL = 5
SIZES = [20_000, 100_000, 1_000_000]
KINDS = ["exact", "noisy", "growing"]
RATIO_GOAL = 10.0
MILLION_GOAL_S = 10.0


def series(kind, n):
    rng = random.Random(f"45-{kind}-{n}")
    shape = random.Random("45-pattern")
    pattern = [shape.gauss(0, 1) for _ in range(2 * EVERY)]
    blocks = n // EVERY
    out = []
    for i in range(n):
        b = i // EVERY
        up = b % 2 == 1
        if kind == "exact":
            v = 100.0 + (10.0 if up else 0.0)
        elif kind == "noisy":
            v = 100.0 + (10.0 if up else 0.0) + rng.gauss(0, 2)
        else:
            v = 100.0 + ((3.5 + 1.5 * b / blocks) if up else 0.0) + pattern[i % (2 * EVERY)]
        out.append(v)
    return out


def found_share(n, found):
    """The share of the true changes (every multiple of EVERY) with a detection within TOL."""
    hit = set()
    for c in found:
        t = round(c / EVERY) * EVERY
        if 0 < t < n and abs(c - t) <= TOL:
            hit.add(t)
    return len(hit) / (n // EVERY - 1)


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(cmd, text):
    """(wall s, CPU s, stdout, stderr) of one run."""
    c, t = cpu_children(), time.time()
    p = subprocess.run(cmd, input=text, capture_output=True, text=True)
    wall, cpu = time.time() - t, cpu_children() - c
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed (exit {p.returncode}): {p.stderr.strip()}")
    return wall, cpu, p.stdout, p.stderr


def detect(binary, kind, n):
    text = ",".join(f"{v:.6f}" for v in series(kind, n)) + "\n"
    best = None
    for _ in range(1 if n > 100_000 else 3):
        r = run([binary, "history", "detect", "--stdin"], text)
        if best is None or r[0] < best[0]:
            best = r
    wall, cpu, out, err = best
    found = [int(v) for v in out.strip().split(",") if v]
    return wall, cpu, found, "budget" in err


def history(binary, n):
    d = tempfile.mkdtemp(prefix="dbperf-scaling-")  # mode 0700: dbperf refuses a shared one
    db = os.path.join(d, "history.sqlite")
    try:
        make_history(db, series("exact", n))
        wall, cpu, out, _ = run([binary, "history", "changes", "--db", db, "--format", "json"], "")
        return wall, cpu, out.count('"index"')
    finally:
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))
        os.rmdir(d)


def make_history(db, values):
    """The tables of src/history/mod.rs with one run per value, a day apart."""
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE dbperf_history_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO dbperf_history_meta VALUES ('schema', '1');
        CREATE TABLE dbperf_runs (run_id TEXT PRIMARY KEY, target TEXT NOT NULL, engine TEXT NOT NULL,
            version TEXT NOT NULL, build TEXT NOT NULL, config_name TEXT NOT NULL,
            host_fingerprint TEXT NOT NULL, hostname TEXT, suite TEXT NOT NULL, preset TEXT NOT NULL,
            campaign TEXT, round INTEGER, started_at TEXT NOT NULL, ended_at TEXT, status TEXT NOT NULL,
            tool_version TEXT NOT NULL, tool_revision TEXT NOT NULL, source TEXT NOT NULL,
            imported_at TEXT NOT NULL);
        CREATE TABLE dbperf_measurements (run_id TEXT NOT NULL REFERENCES dbperf_runs (run_id),
            target TEXT NOT NULL, step TEXT NOT NULL, op TEXT NOT NULL, metric TEXT NOT NULL,
            value DOUBLE PRECISION NOT NULL, unit TEXT NOT NULL, PRIMARY KEY (run_id, step, op, metric));
        CREATE INDEX dbperf_measurements_series ON dbperf_measurements (target, step, op, metric);
    """)
    runs, rows = [], []
    for i, v in enumerate(values):
        rid = f"run{i:07d}"
        started = f"{2000 + i // 360:04d}-{1 + i // 30 % 12:02d}-{1 + i % 30:02d}T00:00:00.000000000Z"
        runs.append((rid, "sqlite.wal-normal", "sqlite", "3.50", f"b{i}", "wal-normal", "h", "host", "iibench",
                     "quick", None, None, started, started, "ok", "0", "r", "/dev/null", started))
        rows.append((rid, "sqlite.wal-normal", "l.i0", "", "headline", v, "rows/s"))
    con.executemany(f"INSERT INTO dbperf_runs VALUES ({','.join('?' * 19)})", runs)
    con.executemany("INSERT INTO dbperf_measurements VALUES (?,?,?,?,?,?,?)", rows)
    con.commit()
    con.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dbperf", required=True, help="path of the dbperf binary to time")
    a = ap.parse_args()
    print(f"history detect --stdin, one series, a change every {EVERY} points\n")
    print("| kind | points | wall s | CPU s | changes found | true changes found | stopped at budget |")
    print("|---|---|---|---|---|---|---|")
    times = {}
    for kind in KINDS:
        for n in SIZES:
            wall, cpu, found, cut = detect(a.dbperf, kind, n)
            times[kind, n] = (wall, cpu)
            print(f"| {kind} | {n} | {wall:.2f} | {cpu:.2f} | {len(found)} | {found_share(n, found):.3f} | "
                  f"{'yes' if cut else 'no'} |", flush=True)
    print()
    for kind in KINDS:
        (w20, c20), (w100, c100) = times[kind, 20_000], times[kind, 100_000]
        wm = times[kind, 1_000_000][0]
        goal = "met" if w100 <= RATIO_GOAL * w20 else "not met"
        print(f"{kind}: 100,000 / 20,000 points: {w100 / w20:.1f}x wall, {c100 / max(c20, 1e-3):.1f}x CPU "
              f"(goal <= {RATIO_GOAL:g}x: {goal}); 10^6 points {wm:.2f} s (goal < {MILLION_GOAL_S:g} s: "
              f"{'met' if wm < MILLION_GOAL_S else 'not met'})")
    wall, cpu, count = history(a.dbperf, 100_000)
    print(f"\nhistory changes --format json, a SQLite history of 100,000 runs of one series (exact kind): "
          f"{wall:.2f} s wall, {cpu:.2f} s CPU, {count} changes")


if __name__ == "__main__":
    main()
