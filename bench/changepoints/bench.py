"""Synthetic series with known change points, scored for dbperf's detector and Apache Otava.

Kinds of series (values around 100, Gaussian noise, seeded so every run sees the same series):
  step      one or two steps of 2-30% in noise of 1-10% (sd as % of the level)
  spread    the noise's sd triples or drops to a third, the mean stays (a change in spread)
  outlier   pure noise plus one or two single points 40-80% off: not changes
  drift     the level moves 10-20% linearly over the whole series: no step, not a change
  noise     pure noise: no change

A detection within TOL points of a true change is a true positive (each true change matched
once); every other detection is a false positive. Printed per detector and setting: precision,
recall, F1 over all series, false positives per 1000 points in the change-free kinds, and the
same per kind.
"""

import argparse
import random
import subprocess
import sys
import time

TOL = 3


def gauss_series(rng, n, level, sd_pct):
    return [level + rng.gauss(0, sd_pct / 100 * level) for _ in range(n)]


def make(per_kind, seed=20261124):
    rng = random.Random(seed)
    out = []  # (kind, values, true change indices, label)
    for i in range(per_kind * 2):
        n = rng.choice([60, 80, 100, 120])
        step = rng.choice([2, 5, 10, 20, 30])
        sd = rng.choice([1, 2, 5, 10])
        two = i % 2 == 1
        cps = sorted(rng.sample(range(15, n - 15), 2 if two else 1))
        if two and cps[1] - cps[0] < 12:
            cps = [cps[0]]
        x = gauss_series(rng, n, 100, sd)
        level = 100.0
        for k, c in enumerate(cps):
            sign = rng.choice([-1, 1])
            new_level = level * (1 + sign * step / 100)
            for j in range(c, n):
                x[j] += new_level - level
            level = new_level
        out.append(("step", x, cps, f"{step}% in {sd}%"))
    for _ in range(per_kind):
        n = rng.choice([60, 80, 100])
        c = rng.randrange(20, n - 20)
        sd = rng.choice([1, 2, 5])
        f = rng.choice([3.0, 1 / 3])
        x = [100 + rng.gauss(0, sd * (f if j >= c else 1)) for j in range(n)]
        out.append(("spread", x, [c], f"sd x{f:.2f}"))
    for _ in range(per_kind):
        n = rng.choice([60, 80, 100])
        sd = rng.choice([1, 2, 5])
        x = gauss_series(rng, n, 100, sd)
        for j in rng.sample(range(n), rng.choice([1, 2])):
            x[j] *= 1 + rng.choice([-1, 1]) * rng.uniform(0.4, 0.8)
        out.append(("outlier", x, [], ""))
    for _ in range(per_kind):
        n = rng.choice([60, 80, 100])
        sd = rng.choice([1, 2, 5])
        total = rng.choice([-20, -10, 10, 20])
        x = [100 * (1 + total / 100 * j / (n - 1)) + rng.gauss(0, sd) for j in range(n)]
        out.append(("drift", x, [], f"{total}%"))
    for _ in range(per_kind):
        n = rng.choice([60, 80, 100])
        out.append(("noise", gauss_series(rng, n, 100, rng.choice([1, 5, 10])), [], ""))
    return out


def score(truth, found):
    tp = 0
    used = set()
    for t in truth:
        best = None
        for k, f in enumerate(found):
            if k not in used and abs(f - t) <= TOL and (best is None or abs(f - t) < abs(found[best] - t)):
                best = k
        if best is not None:
            used.add(best)
            tp += 1
    return tp, len(found) - tp, len(truth) - tp


def dbperf_detect(binary, series, alpha, min_runs):
    text = "\n".join(",".join(f"{v:.6f}" for v in x) for _, x, _, _ in series) + "\n"
    p = subprocess.run(
        [binary, "history", "detect", "--stdin", "--alpha", str(alpha), "--min-runs", str(min_runs)],
        input=text, capture_output=True, text=True, check=True,
    )
    lines = p.stdout.split("\n")[: len(series)]
    return [[int(v) for v in line.split(",") if v] for line in lines]


def otava_detect(series, max_pvalue):
    from otava.analysis import compute_change_points

    out = []
    for _, x, _, _ in series:
        cps, _ = compute_change_points(x, window_len=50, max_pvalue=max_pvalue)
        out.append([c.index for c in cps])
    return out


def report(name, series, found, secs):
    kinds = ["step", "spread", "outlier", "drift", "noise"]
    total = [0, 0, 0]
    per = {k: [0, 0, 0, 0] for k in kinds}  # tp, fp, fn, points
    for (kind, x, truth, _), f in zip(series, found):
        tp, fp, fn = score(truth, f)
        total = [total[0] + tp, total[1] + fp, total[2] + fn]
        p = per[kind]
        per[kind] = [p[0] + tp, p[1] + fp, p[2] + fn, p[3] + len(x)]
    tp, fp, fn = total
    prec = tp / (tp + fp) if tp + fp else 1.0
    rec = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    free_fp = sum(per[k][1] for k in ["outlier", "drift", "noise"])
    free_pts = sum(per[k][3] for k in ["outlier", "drift", "noise"])
    cells = []
    for k in kinds:
        t, f_, n, _ = per[k]
        if k in ("step", "spread"):
            cells.append(f"{k} R {t / (t + n):.2f} FP {f_}")
        else:
            cells.append(f"{k} FP {f_}")
    print(
        f"| {name} | {prec:.3f} | {rec:.3f} | **{f1:.3f}** | {1000 * free_fp / free_pts:.1f} | "
        f"{'; '.join(cells)} | {secs:.1f} |"
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dbperf", required=True)
    ap.add_argument("--per-kind", type=int, default=30)
    a = ap.parse_args()
    series = make(a.per_kind)
    true_total = sum(len(t) for _, _, t, _ in series)
    print(
        f"{len(series)} series, {sum(len(x) for _, x, _, _ in series)} points, {true_total} true changes; "
        f"a detection within {TOL} points of a true change counts"
    )
    print()
    print("| detector | precision | recall | F1 | FP per 1000 change-free points | per kind (R = recall) | seconds |")
    print("|---|---|---|---|---|---|---|")
    for alpha in [0.05, 0.01]:
        t = time.time()
        found = dbperf_detect(a.dbperf, series, alpha, 3)
        report(f"dbperf alpha {alpha}", series, found, time.time() - t)
    for p in [0.05, 0.01, 0.001]:
        t = time.time()
        found = otava_detect(series, p)
        report(f"Otava 0.8.0 max_pvalue {p}", series, found, time.time() - t)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
