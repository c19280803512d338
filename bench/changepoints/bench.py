"""Scorecard of change-point detectors on synthetic series with known change points.

Three detectors, each run on the same seeded series, printed side by side:
  dbperf   `dbperf history detect --stdin` (the binary is --dbperf, so any build can be scored):
           its defaults are the headline; `--alpha 0.01` is a second column when the option parses
  Otava    Apache Otava 0.8.0, `otava.analysis.compute_change_points` with the options of its CLI
           (`otava.series.AnalysisOptions()`: window_len 50, max_pvalue 0.001, min_magnitude 0)
  PELT     ruptures `Pelt(model="l2", min_size=3, jump=1)`, penalty 2 * sigma^2 * ln(n) (BIC for a
           mean shift in Gaussian noise), sigma = 1.4826 * MAD(first differences) / sqrt(2), a
           robust noise estimate that steps barely move. jump=1 makes every index a candidate, as
           for the other two (ruptures' default jump=5 allows only multiples of 5)

Series, all around a level of 100 (so a % of the level is the same number in value units).
Today's kinds (the generator and seed of the first version of this bench, so the table in
docs/performance.md stays comparable), lengths 60-120:
  step          one or two steps of 2-30% in white noise of sd 1-10%
  spread        the noise's sd triples or drops to a third at one point, the mean stays
  outlier       white noise plus one or two single points 40-80% off: no change
  drift         the level moves 10-20% linearly over the series: no change
  noise         white noise of sd 1-10%: no change
Stress kinds, lengths 60-200, a step at least 15 points from either end, random sign:
  ar03, ar06, ar09            AR(1) noise, phi 0.3 / 0.6 / 0.9, marginal sd 2% (innovations sd
                              2 * sqrt(1 - phi^2)), started in its stationary law: no change
  ar03_step .. ar09_step      the same noise with one step of 5-20%
  trend_linear                a linear trend of 10-30% plus white noise of sd 1-2%: no change
  trend_curved                a monotone curve of 10-30% (half saturating, 1 - exp(-t/T), half
                              accelerating, t^2) plus white noise of sd 1-2%: no change
  seasonal                    a sine of amplitude 3-8% and period 7-30 points plus noise 1-2%:
                              no change
  random_walk                 a cumulative sum of N(0, 0.5-1%) steps: no change
  trend_step                  a linear trend of 10-20% plus one step of 10-20%, noise 1-2%
  t3_step                     Student t noise, 3 degrees of freedom, sd 2% (scale 2 / sqrt(3)),
                              plus one step of 10-20%
  white_step10                white noise of sd 2% plus one step of exactly 10%
  ar06_step10                 AR(1) noise phi 0.6, marginal sd 2%, plus one step of exactly 10%
Dip kinds (a regression fixed some runs later: the level drops by a share of it for L runs and
comes back), lengths 200-480, every dip at least 20 points from either end and from the other
dips, each kind its own generator seeded from (seed, kind) like the stress kinds. The truth of
a dip is both its edges: its first point and the first point after it. The noise is AR(1) with
the marginal sd given (phi 0 is white noise), started in its stationary law; "xF" multiplies it
by F inside the dips (the spread changes with the level). Percentages are of the level of 100
outside the dips, so they are value units:
  dipD_L_arP                  one dip of D% for L points in AR(1) noise phi 0.P, sd 2%:
                              dip10_6_ar0, dip10_12_ar0, dip10_12_ar03, dip10_12_ar06,
                              dip10_25_ar06, dip10_50_ar06, dip10_12_ar08, dip30_6_ar06,
                              dip30_12_ar08, dip30_50_ar08
  dip50_40_ar08_x4            one dip of 50% for 40 points, AR(1) phi 0.8 of sd 1.5%, 6 inside
  dip10_25_ar03_x3            one dip of 10% for 25 points, AR(1) phi 0.3 of sd 2%, 6 inside
  dip10_12_ar0_x3             one dip of 10% for 12 points, white noise of sd 2%, 6 inside
  dip30_25_ar06_x3            one dip of 30% for 25 points, AR(1) phi 0.6 of sd 2%, 6 inside
  dips2_30_arP, dips3_30_arP  two / three dips of 30%, each 12-50 points long, AR(1) phi 0.P
                              of sd 2% (two: phi 0.3 and 0.6; three: 0.6 and 0.8); lengths
                              200-480 / 300-480
  dips2_80_ar08               the series of issue 38, halved: 480 points at 100 with two dips to
                              20 (-80%) of 23 and 90 points in either order, AR(1) phi 0.8 noise
                              of sd 2.5 throughout (2.5% of the level of 100 outside, 12.5% of
                              the level of 20 inside)
  dips2_80_ar08_x5            the same with the sd five times larger inside (12.5 there)
  dips3_80_ar08               the same as dips2_80_ar08 with three dips, of 23, 40 and 90 points

Metrics. A detection within TOL (5) points of a true change is a hit; each true change is
matched at most once, the closest pairs first; every other detection is a false alarm. Per kind
and detector: precision = hits / detections, recall = hits / true changes, F1 = 2 hits /
(detections + true changes), false alarms per 1000 points, and on change-free kinds the share of
series with at least one alarm. Pooled over the stress kinds: the same from summed counts. On
the dip kinds also "all edges found": the share of series in which every true change (both
edges of every dip) is a hit; pooled over them as **dips**. The goals of issue 38 are printed
for dbperf: all edges found in at least 90% of dip10_12_ar06 and 95% of dip50_40_ar08_x4.
Today's kinds are also printed with a 3-point tolerance in the table format of
docs/performance.md. Seconds are wall time per detector for all series of a group (dbperf's
include starting the process).

--speed times `history detect --stdin` on 100 series of 10,000 points (white noise of sd 2% with
three steps of 5-20%), and the same penalized-l2 PELT through ruptures' C implementation
(KernelCPD with a linear kernel, which solves the same problem as Pelt(model="l2")).
"""

import argparse
import importlib.metadata
import math
import random
import subprocess
import sys
import time
import warnings

TOL = 5
OLD_TOL = 3
LEVEL = 100.0
OLD_KINDS = ["step", "spread", "outlier", "drift", "noise"]
OLD_FREE = ["outlier", "drift", "noise"]
STRESS_FREE = ["ar03", "ar06", "ar09", "trend_linear", "trend_curved", "seasonal", "random_walk"]
STRESS_STEP = ["ar03_step", "ar06_step", "ar09_step", "trend_step", "t3_step", "white_step10", "ar06_step10"]
STRESS_KINDS = STRESS_FREE + STRESS_STEP
DIP_SINGLE = [
    "dip10_6_ar0", "dip10_12_ar0", "dip10_12_ar03", "dip10_12_ar06", "dip10_25_ar06", "dip10_50_ar06",
    "dip10_12_ar08", "dip30_6_ar06", "dip30_12_ar08", "dip30_50_ar08",
]
DIP_SPREAD = ["dip50_40_ar08_x4", "dip10_25_ar03_x3", "dip10_12_ar0_x3", "dip30_25_ar06_x3"]
DIP_MULTI = [
    "dips2_30_ar03", "dips2_30_ar06", "dips3_30_ar06", "dips3_30_ar08",
    "dips2_80_ar08", "dips2_80_ar08_x5", "dips3_80_ar08",
]
DIP_KINDS = DIP_SINGLE + DIP_SPREAD + DIP_MULTI
DIP_GOALS = [("dip10_12_ar06", 0.90), ("dip50_40_ar08_x4", 0.95)]  # issue 38: all edges found


class Series:
    def __init__(self, kind, values, truth, label=""):
        self.kind = kind
        self.values = values
        self.truth = truth
        self.label = label


# ---------------------------------------------------------------- today's kinds (unchanged)


def gauss_series(rng, n, level, sd_pct):
    return [level + rng.gauss(0, sd_pct / 100 * level) for _ in range(n)]


def make_old(per_kind, seed=20261124):
    """Today's kinds, drawn exactly as in the first version of this bench."""
    rng = random.Random(seed)
    out = []
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
        for c in cps:
            sign = rng.choice([-1, 1])
            new_level = level * (1 + sign * step / 100)
            for j in range(c, n):
                x[j] += new_level - level
            level = new_level
        out.append(Series("step", x, cps, f"{step}% in {sd}%"))
    for _ in range(per_kind):
        n = rng.choice([60, 80, 100])
        c = rng.randrange(20, n - 20)
        sd = rng.choice([1, 2, 5])
        f = rng.choice([3.0, 1 / 3])
        x = [100 + rng.gauss(0, sd * (f if j >= c else 1)) for j in range(n)]
        out.append(Series("spread", x, [c], f"sd x{f:.2f}"))
    for _ in range(per_kind):
        n = rng.choice([60, 80, 100])
        sd = rng.choice([1, 2, 5])
        x = gauss_series(rng, n, 100, sd)
        for j in rng.sample(range(n), rng.choice([1, 2])):
            x[j] *= 1 + rng.choice([-1, 1]) * rng.uniform(0.4, 0.8)
        out.append(Series("outlier", x, []))
    for _ in range(per_kind):
        n = rng.choice([60, 80, 100])
        sd = rng.choice([1, 2, 5])
        total = rng.choice([-20, -10, 10, 20])
        x = [100 * (1 + total / 100 * j / (n - 1)) + rng.gauss(0, sd) for j in range(n)]
        out.append(Series("drift", x, [], f"{total}%"))
    for _ in range(per_kind):
        n = rng.choice([60, 80, 100])
        out.append(Series("noise", gauss_series(rng, n, 100, rng.choice([1, 5, 10])), []))
    return out


# ---------------------------------------------------------------- stress kinds
# Each kind has its own generator seeded from (seed, kind), so adding a kind changes no other.
# A generator returns the deviation from LEVEL (in % of it) and the true changes.


def sign(rng):
    return rng.choice([-1, 1])


def white(rng, n, sd):
    return [rng.gauss(0, sd) for _ in range(n)]


def ar1(rng, n, phi, sd=2.0):
    """AR(1) noise with marginal sd `sd`, started in its stationary law."""
    innov = sd * math.sqrt(1 - phi * phi)
    x = [rng.gauss(0, sd)]
    for _ in range(n - 1):
        x.append(phi * x[-1] + rng.gauss(0, innov))
    return x


def student_t3(rng, n, sd=2.0):
    """Student t with 3 degrees of freedom scaled to sd (its variance is 3 * scale^2)."""
    scale = sd / math.sqrt(3)
    return [scale * rng.gauss(0, 1) / math.sqrt(rng.gammavariate(1.5, 2) / 3) for _ in range(n)]


def add_step(rng, x, pct):
    """One step of pct (random sign) at least 15 points from either end; returns its index."""
    c = rng.randint(15, len(x) - 15)
    s = sign(rng) * pct
    for j in range(c, len(x)):
        x[j] += s
    return [c]


def linear(n, total):
    return [total * j / (n - 1) for j in range(n)]


def curve(rng, n, total, saturating):
    if saturating:
        tau = rng.uniform(0.15, 0.5) * n
        norm = 1 - math.exp(-(n - 1) / tau)
        return [total * (1 - math.exp(-j / tau)) / norm for j in range(n)]
    return [total * (j / (n - 1)) ** 2 for j in range(n)]


def plus(a, b):
    return [u + v for u, v in zip(a, b)]


def gen_ar(phi, step):
    def gen(rng, n, i):
        x = ar1(rng, n, phi)
        return x, add_step(rng, x, rng.uniform(5, 20)) if step else []

    return gen


def gen_trend_linear(rng, n, i):
    return plus(linear(n, sign(rng) * rng.uniform(10, 30)), white(rng, n, rng.uniform(1, 2))), []


def gen_trend_curved(rng, n, i):
    c = curve(rng, n, sign(rng) * rng.uniform(10, 30), saturating=i % 2 == 0)
    return plus(c, white(rng, n, rng.uniform(1, 2))), []


def gen_seasonal(rng, n, i):
    amp, period, phase = rng.uniform(3, 8), rng.uniform(7, 30), rng.uniform(0, 2 * math.pi)
    s = [amp * math.sin(2 * math.pi * j / period + phase) for j in range(n)]
    return plus(s, white(rng, n, rng.uniform(1, 2))), []


def gen_random_walk(rng, n, i):
    sd, x, v = rng.uniform(0.5, 1), [], 0.0
    for _ in range(n):
        v += rng.gauss(0, sd)
        x.append(v)
    return x, []


def gen_trend_step(rng, n, i):
    x = plus(linear(n, sign(rng) * rng.uniform(10, 20)), white(rng, n, rng.uniform(1, 2)))
    return x, add_step(rng, x, rng.uniform(10, 20))


def gen_t3_step(rng, n, i):
    x = student_t3(rng, n)
    return x, add_step(rng, x, rng.uniform(10, 20))


def gen_white_step10(rng, n, i):
    x = white(rng, n, 2.0)
    return x, add_step(rng, x, 10.0)


def gen_ar06_step10(rng, n, i):
    x = ar1(rng, n, 0.6)
    return x, add_step(rng, x, 10.0)


GENERATORS = {
    "ar03": gen_ar(0.3, False),
    "ar06": gen_ar(0.6, False),
    "ar09": gen_ar(0.9, False),
    "trend_linear": gen_trend_linear,
    "trend_curved": gen_trend_curved,
    "seasonal": gen_seasonal,
    "random_walk": gen_random_walk,
    "ar03_step": gen_ar(0.3, True),
    "ar06_step": gen_ar(0.6, True),
    "ar09_step": gen_ar(0.9, True),
    "trend_step": gen_trend_step,
    "t3_step": gen_t3_step,
    "white_step10": gen_white_step10,
    "ar06_step10": gen_ar06_step10,
}


def make_stress(per_kind, seed=20261127):
    out = []
    for kind in STRESS_KINDS:
        rng = random.Random(f"{seed}-{kind}")
        for i in range(per_kind):
            n = rng.randint(60, 200)
            dev, truth = GENERATORS[kind](rng, n, i)
            out.append(Series(kind, [LEVEL + d for d in dev], truth))
    return out


# ---------------------------------------------------------------- dip kinds
# A dip generator returns the deviation from LEVEL (in % of it) and both edges of every dip.

DIP_GAP = 20  # points between a dip and either end of the series or another dip, at least


def place_dips(rng, n, lengths):
    """(start, end) of dips of these lengths, in this order, DIP_GAP apart and from the ends."""
    free = n - sum(lengths) - DIP_GAP * (len(lengths) + 1)
    assert free >= 0, (n, lengths)
    cuts = sorted(rng.randint(0, free) for _ in lengths)
    out, before = [], 0
    for j, (length, cut) in enumerate(zip(lengths, cuts)):
        start = DIP_GAP * (j + 1) + cut + before
        out.append((start, start + length))
        before += length
    return out


def gen_dips(depth, lengths, phi, sd=2.0, inside=1.0, n_range=(200, 480)):
    """Dips of depth% with these lengths (a (low, high) pair is drawn per dip) in random order,
    AR(1) noise phi of marginal sd `sd`, multiplied by `inside` within the dips."""

    def gen(rng, i):
        n = rng.randint(*n_range)
        ls = [rng.randint(*length) if isinstance(length, tuple) else length for length in lengths]
        rng.shuffle(ls)
        dips = place_dips(rng, n, ls)
        x = ar1(rng, n, phi, sd)
        for start, end in dips:
            for j in range(start, end):
                x[j] = x[j] * inside - depth
        return x, [edge for dip in dips for edge in dip]

    return gen


DIP_GENERATORS = {
    "dip10_6_ar0": gen_dips(10, [6], 0.0),
    "dip10_12_ar0": gen_dips(10, [12], 0.0),
    "dip10_12_ar03": gen_dips(10, [12], 0.3),
    "dip10_12_ar06": gen_dips(10, [12], 0.6),
    "dip10_25_ar06": gen_dips(10, [25], 0.6),
    "dip10_50_ar06": gen_dips(10, [50], 0.6),
    "dip10_12_ar08": gen_dips(10, [12], 0.8),
    "dip30_6_ar06": gen_dips(30, [6], 0.6),
    "dip30_12_ar08": gen_dips(30, [12], 0.8),
    "dip30_50_ar08": gen_dips(30, [50], 0.8),
    "dip50_40_ar08_x4": gen_dips(50, [40], 0.8, sd=1.5, inside=4.0),
    "dip10_25_ar03_x3": gen_dips(10, [25], 0.3, inside=3.0),
    "dip10_12_ar0_x3": gen_dips(10, [12], 0.0, inside=3.0),
    "dip30_25_ar06_x3": gen_dips(30, [25], 0.6, inside=3.0),
    "dips2_30_ar03": gen_dips(30, [(12, 50)] * 2, 0.3),
    "dips2_30_ar06": gen_dips(30, [(12, 50)] * 2, 0.6),
    "dips3_30_ar06": gen_dips(30, [(12, 50)] * 3, 0.6, n_range=(300, 480)),
    "dips3_30_ar08": gen_dips(30, [(12, 50)] * 3, 0.8, n_range=(300, 480)),
    "dips2_80_ar08": gen_dips(80, [23, 90], 0.8, sd=2.5, n_range=(480, 480)),
    "dips2_80_ar08_x5": gen_dips(80, [23, 90], 0.8, sd=2.5, inside=5.0, n_range=(480, 480)),
    "dips3_80_ar08": gen_dips(80, [23, 40, 90], 0.8, sd=2.5, n_range=(480, 480)),
}


def make_dips(per_kind, seed=20261128):
    out = []
    for kind in DIP_KINDS:
        rng = random.Random(f"{seed}-{kind}")
        for i in range(per_kind):
            dev, truth = DIP_GENERATORS[kind](rng, i)
            out.append(Series(kind, [LEVEL + d for d in dev], truth))
    return out


# ---------------------------------------------------------------- detectors


def series_text(series):
    return "\n".join(",".join(f"{v:.6f}" for v in s.values) for s in series) + "\n"


def dbperf_run(binary, series, args, timeout=None, text=None):
    # The text is made before the clock starts where it is timed: formatting a million
    # numbers in Python takes longer than dbperf's whole answer.
    text = text or series_text(series)
    p = subprocess.run(
        [binary, "history", "detect", "--stdin", *args],
        input=text, capture_output=True, text=True, timeout=timeout,
    )
    if p.returncode != 0:
        sys.exit(f"dbperf history detect {' '.join(args)} failed: {p.stderr.strip()}")
    lines = p.stdout.split("\n")
    if len(lines) < len(series) or any(lines[len(series):]):
        sys.exit(f"dbperf printed {len(lines)} lines for {len(series)} series")
    return [[int(v) for v in line.split(",") if v.strip()] for line in lines[: len(series)]]


def dbperf_accepts(binary, args):
    """Whether this build of dbperf accepts the options (the detector is being rewritten)."""
    p = subprocess.run(
        [binary, "history", "detect", "--stdin", *args], input="1,2,3\n", capture_output=True, text=True
    )
    return p.returncode == 0


def otava_options():
    from otava.series import AnalysisOptions

    o = AnalysisOptions()  # what the otava CLI starts from; its flags default to the same
    return {"window_len": o.window_len, "max_pvalue": o.max_pvalue, "min_magnitude": o.min_magnitude}


def otava_run(series):
    from otava.analysis import compute_change_points

    opts = otava_options()
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in series:
            cps, _ = compute_change_points(s.values, **opts)
            out.append([int(c.index) for c in cps])
    return out


def robust_sigma(x):
    import numpy as np

    d = np.diff(x)
    return 1.4826 * float(np.median(np.abs(d - np.median(d)))) / math.sqrt(2)


def pelt_penalty(x):
    return 2 * max(robust_sigma(x), 1e-12) ** 2 * math.log(len(x))


def pelt_run(series, fast=False):
    """ruptures' PELT with the l2 cost; fast uses its C implementation (same optimum)."""
    import numpy as np
    import ruptures as rpt

    out = []
    for s in series:
        x = np.asarray(s.values, dtype=float)
        if fast:
            algo = rpt.KernelCPD(kernel="linear", min_size=3, jump=1)
        else:
            algo = rpt.Pelt(model="l2", min_size=3, jump=1)
        ends = algo.fit(x).predict(pen=pelt_penalty(x))
        out.append([int(e) for e in ends if e < len(x)])  # segment ends = first index of the next
    return out


# ---------------------------------------------------------------- scoring


def match(truth, found, tol):
    """(hits, false alarms, misses): closest (truth, detection) pairs within tol first."""
    pairs = sorted((abs(f - t), i, k) for i, t in enumerate(truth) for k, f in enumerate(found) if abs(f - t) <= tol)
    used_t, used_f = set(), set()
    for _, i, k in pairs:
        if i not in used_t and k not in used_f:
            used_t.add(i)
            used_f.add(k)
    hits = len(used_t)
    return hits, len(found) - hits, len(truth) - hits


class Tally:
    def __init__(self):
        self.hits = self.alarms = self.misses = self.points = self.series = self.alarmed = 0
        self.changed = self.complete = 0  # series with a true change; those with all of them hit

    def add(self, s, found, tol):
        h, fa, m = match(s.truth, found, tol)
        self.hits += h
        self.alarms += fa
        self.misses += m
        self.points += len(s.values)
        self.series += 1
        self.alarmed += bool(found) and not s.truth
        self.changed += bool(s.truth)
        self.complete += bool(s.truth) and m == 0

    def merge(self, other):
        for k in vars(self):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        return self

    def precision(self):
        d = self.hits + self.alarms
        return self.hits / d if d else None

    def recall(self):
        t = self.hits + self.misses
        return self.hits / t if t else None

    def f1(self):
        t = 2 * self.hits + self.alarms + self.misses
        return 2 * self.hits / t if self.hits + self.misses else None

    def alarms_per_1000(self):
        return 1000 * self.alarms / self.points

    def any_alarm_share(self):
        return self.alarmed / self.series

    def all_found_share(self):
        return self.complete / self.changed if self.changed else None


def tally(series, found, tol):
    per = {}
    for s, f in zip(series, found):
        per.setdefault(s.kind, Tally()).add(s, f, tol)
    return per


def pooled(per, kinds):
    total = Tally()
    for k in kinds:
        total.merge(per[k])
    return total


# ---------------------------------------------------------------- printing


def fmt(v, pct=False):
    if v is None:
        return "–"
    return f"{100 * v:.0f}%" if pct else f"{v:.2f}"


def cell(results, kind, metric, pct=False):
    return " / ".join(fmt(getattr(r["per"][kind], metric)(), pct) for r in results)


def names(results):
    return " / ".join(r["short"] for r in results)


def table_changes(results, kinds, pool_name, tol):
    print(f"| kind | series | changes | F1 {names(results)} | recall | precision | false alarms /1000 pts |")
    print("|---|---|---|---|---|---|---|")
    for k in kinds:
        print(table_changes_row(results, k, k))
    print(table_changes_row(results, pool_name, f"**{pool_name}**"))


def table_changes_row(results, kind, title):
    t = results[0]["per"][kind]
    return (
        f"| {title} | {t.series} | {t.hits + t.misses} | {cell(results, kind, 'f1')} | "
        f"{cell(results, kind, 'recall')} | {cell(results, kind, 'precision')} | "
        f"{cell(results, kind, 'alarms_per_1000')} |"
    )


def table_free(results, kinds):
    print(f"| kind (no change) | series | any-alarm share {names(results)} | false alarms /1000 pts |")
    print("|---|---|---|---|")
    for k in kinds:
        t = results[0]["per"][k]
        print(
            f"| {k} | {t.series} | {cell(results, k, 'any_alarm_share', pct=True)} | "
            f"{cell(results, k, 'alarms_per_1000')} |"
        )


def table_dips(results, kinds, pool_name):
    print(
        f"| kind | series | edges | all edges found {names(results)} | recall | precision | "
        "false alarms /1000 pts |"
    )
    print("|---|---|---|---|---|---|---|")
    for k in kinds + [pool_name]:
        t = results[0]["per"][k]
        title = f"**{k}**" if k == pool_name else k
        print(
            f"| {title} | {t.series} | {t.hits + t.misses} | {cell(results, k, 'all_found_share', pct=True)} | "
            f"{cell(results, k, 'recall')} | {cell(results, k, 'precision')} | {cell(results, k, 'alarms_per_1000')} |"
        )


def old_format_row(name, per, secs):
    """A row in the format of the table in docs/performance.md (today's kinds)."""
    total = pooled(per, OLD_KINDS)
    prec = total.precision() if total.precision() is not None else 1.0
    rec = total.recall()
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    free = pooled(per, OLD_FREE)
    cells = []
    for k in OLD_KINDS:
        t = per[k]
        cells.append(f"{k} R {t.recall():.2f} FP {t.alarms}" if k in ("step", "spread") else f"{k} FP {t.alarms}")
    return (
        f"| {name} | {prec:.3f} | {rec:.3f} | **{f1:.3f}** | {free.alarms_per_1000():.1f} | "
        f"{'; '.join(cells)} | {secs:.1f} |"
    )


def goal_rows(dbperf_results, others):
    """(goal, values per dbperf row, met per dbperf row) for the issue's goals."""
    rows = []
    for k in STRESS_FREE:
        limit = 0.20 if k == "ar09" else 0.05
        vals = [r["per"][k].any_alarm_share() for r in dbperf_results]
        rows.append((f"any-alarm share on {k} <= {limit:.0%}", [f"{v:.0%}" for v in vals], [v <= limit for v in vals]))
    for k, limit in [("white_step10", 0.8), ("ar06_step10", 0.6)]:
        vals = [r["per"][k].recall() for r in dbperf_results]
        rows.append((f"recall on {k} >= {limit}", [f"{v:.2f}" for v in vals], [v >= limit for v in vals]))
    best = max(o["per"]["stress"].f1() for o in others)
    vals = [r["per"]["stress"].f1() for r in dbperf_results]
    who = " and ".join(f"{o['short']} {o['per']['stress'].f1():.2f}" for o in others)
    rows.append((f"pooled stress F1 above {who}", [f"{v:.2f}" for v in vals], [v > best for v in vals]))
    return rows


def print_dip_goals(results):
    dbperf_results = [r for r in results if r["short"].startswith("dbperf")]
    print("| goal (issue 38) | " + " | ".join(r["short"] for r in dbperf_results) + " |")
    print("|---|" + "---|" * len(dbperf_results))
    met = [0] * len(dbperf_results)
    for k, limit in DIP_GOALS:
        cells = []
        for j, r in enumerate(dbperf_results):
            v = r["per"][k].all_found_share()
            met[j] += v >= limit
            cells.append(f"{v:.0%} {'met' if v >= limit else '**not met**'}")
        print(f"| all edges found on {k} >= {limit:.0%} | " + " | ".join(cells) + " |")
    print()
    for j, r in enumerate(dbperf_results):
        print(f"{r['short']}: {met[j]} of {len(DIP_GOALS)} goals met.")


def print_goals(results):
    dbperf_results = [r for r in results if r["short"].startswith("dbperf")]
    others = [r for r in results if not r["short"].startswith("dbperf")]
    rows = goal_rows(dbperf_results, others)
    print("| goal (issue) | " + " | ".join(r["short"] for r in dbperf_results) + " |")
    print("|---|" + "---|" * len(dbperf_results))
    for goal, vals, met in rows:
        print(f"| {goal} | " + " | ".join(f"{v} {'met' if m else '**not met**'}" for v, m in zip(vals, met)) + " |")
    print()
    for j, r in enumerate(dbperf_results):
        print(f"{r['short']}: {sum(m[j] for _, _, m in rows)} of {len(rows)} goals met.")


# ---------------------------------------------------------------- scorecard


def detectors(binary):
    """(short name, description, function of a list of series) of every detector scored."""
    out = [("dbperf", f"`{binary} history detect --stdin` (its defaults)", lambda s: dbperf_run(binary, s, []))]
    if dbperf_accepts(binary, ["--alpha", "0.01"]):
        out.append(("dbperf α0.01", "the same with `--alpha 0.01`", lambda s: dbperf_run(binary, s, ["--alpha", "0.01"])))
    else:
        print("(this dbperf build refuses `--alpha 0.01`: only its defaults are scored)\n")
    o = otava_options()
    out.append((
        "Otava",
        f"Apache Otava {importlib.metadata.version('apache-otava')} `compute_change_points` at the defaults of its "
        f"CLI (AnalysisOptions): window_len {o['window_len']}, max_pvalue {o['max_pvalue']}, "
        f"min_magnitude {o['min_magnitude']}",
        otava_run,
    ))
    out.append((
        "PELT",
        f"ruptures {importlib.metadata.version('ruptures')} `Pelt(model=\"l2\", min_size=3, jump=1)`, "
        "pen = 2·σ²·ln(n), σ = 1.4826·MAD(diff(x))/√2",
        pelt_run,
    ))
    return out


def run_detector(fn, groups):
    """Detections and seconds per group of series."""
    found, secs = {}, {}
    for name, series in groups.items():
        t = time.time()
        found[name] = fn(series)
        secs[name] = time.time() - t
    return found, secs


def scorecard(binary, per_kind):
    groups = {"old": make_old(per_kind), "stress": make_stress(per_kind), "dips": make_dips(per_kind)}
    results = []
    dets = detectors(binary)
    for short, desc, fn in dets:
        found, secs = run_detector(fn, groups)
        per = {
            **tally(groups["old"], found["old"], TOL),
            **tally(groups["stress"], found["stress"], TOL),
            **tally(groups["dips"], found["dips"], TOL),
        }
        per["stress"] = pooled(per, STRESS_KINDS)
        per["dips"] = pooled(per, DIP_KINDS)
        per["today"] = pooled(per, OLD_KINDS)
        per_old3 = tally(groups["old"], found["old"], OLD_TOL)
        results.append({"short": short, "desc": desc, "per": per, "per3": per_old3, "secs": secs})
    print_scorecard(groups, results, per_kind)


def describe(series):
    return (
        f"{len(series)} series, {sum(len(s.values) for s in series)} points, "
        f"{sum(len(s.truth) for s in series)} true changes"
    )


def print_scorecard(groups, results, per_kind):
    print(f"# Change-point scorecard ({per_kind} series per kind)\n")
    for r in results:
        print(f"- **{r['short']}**: {r['desc']}")
    print(f"\nA detection within {TOL} points of a true change is a hit; cells are {names(results)}.\n")
    print(f"## Stress kinds: {describe(groups['stress'])}\n")
    table_changes(results, STRESS_STEP, "stress", TOL)
    print()
    table_free(results, STRESS_FREE)
    print("\n(**stress** pools all 14 stress kinds: the change-free kinds add false alarms, not changes.)\n")
    print(f"## Dip kinds: {describe(groups['dips'])} (both edges of every dip)\n")
    table_dips(results, DIP_KINDS, "dips")
    print(f"\n(all edges found: the share of series in which every true edge is found within {TOL} points.)\n")
    print(f"## Today's kinds: {describe(groups['old'])}\n")
    table_changes(results, ["step", "spread"], "today", TOL)
    print()
    table_free(results, OLD_FREE)
    print(f"\n## Today's kinds, {OLD_TOL}-point tolerance (the table format of docs/performance.md)\n")
    print("| detector | precision | recall | F1 | FP per 1000 change-free points | per kind (R = recall) | seconds |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(old_format_row(r["short"], r["per3"], r["secs"]["old"]))
    print("\n## Goals of the issue (dbperf)\n")
    print_goals(results)
    print("\n## Goals of issue 38: dips (dbperf)\n")
    print_dip_goals(results)
    print("\n## Seconds (wall, all series of the group)\n")
    print("| detector | stress kinds | dip kinds | today's kinds |")
    print("|---|---|---|---|")
    for r in results:
        print(f"| {r['short']} | {r['secs']['stress']:.1f} | {r['secs']['dips']:.1f} | {r['secs']['old']:.1f} |")


# ---------------------------------------------------------------- speed


def make_speed(n_series, n_points, seed=20261128):
    rng = random.Random(seed)
    out = []
    for _ in range(n_series):
        x = white(rng, n_points, 2.0)
        cps = sorted(rng.sample(range(200, n_points - 200, 100), 3))
        for c in cps:
            s = sign(rng) * rng.uniform(5, 20)
            for j in range(c, n_points):
                x[j] += s
        out.append(Series("speed", [LEVEL + v for v in x], cps))
    return out


def quality(series, found):
    t = pooled(tally(series, found, TOL), ["speed"])
    return f"recall {t.recall():.2f}, precision {fmt(t.precision())}"


def time_one(binary, series, timeout):
    """Seconds dbperf takes on one series, None past the timeout."""
    t = time.time()
    try:
        dbperf_run(binary, [series], [], timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return time.time() - t


def speed(binary, n_series, n_points, timeout, pelt_series):
    series = make_speed(n_series, n_points)
    print(f"{n_series} series of {n_points} points (white noise sd 2%, 3 steps of 5-20% each)\n")
    text = series_text(series)
    t, estimate = time.time(), None
    try:
        found = dbperf_run(binary, series, [], timeout=timeout, text=text)
        secs = time.time() - t
        print(f"dbperf history detect --stdin: {secs:.2f} s wall ({quality(series, found)}); goal < 1 s: "
              f"{'met' if secs < 1 else 'not met'}")
    except subprocess.TimeoutExpired:
        secs = None
        print(f"dbperf history detect --stdin: did not finish in {timeout:g} s; goal < 1 s: not met")
        estimate = time_one(binary, series[0], timeout)
        if estimate is None:
            print(f"  one series alone did not finish in {timeout:g} s either")
        else:
            estimate *= n_series
            print(f"  one series alone: {estimate / n_series:.2f} s, so about {estimate:.0f} s for all {n_series}")
    if pelt_series:
        subset = series[:pelt_series]
        t = time.time()
        found = pelt_run(subset, fast=True)
        p = (time.time() - t) * n_series / len(subset)
        scaled = "" if len(subset) == n_series else f" (timed on {len(subset)} series, scaled)"
        print(f"PELT l2 (ruptures KernelCPD linear, C), same data: {p:.2f} s{scaled} "
              f"({quality(subset, found)})")
        if secs:
            print(f"dbperf / PELT time: {secs / p:.2f}")
        elif estimate:
            print(f"dbperf / PELT time: about {estimate / p:.1f} (from the estimate above)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dbperf", required=True, help="path of the dbperf binary to score")
    ap.add_argument("--per-kind", type=int, default=30, help="series per kind (at least 30)")
    ap.add_argument("--speed", action="store_true", help="time history detect on long series instead")
    ap.add_argument("--series", type=int, default=100, help="--speed: series")
    ap.add_argument("--points", type=int, default=10000, help="--speed: points per series")
    ap.add_argument("--timeout", type=float, default=120, help="--speed: seconds before dbperf is stopped")
    ap.add_argument("--pelt-series", type=int, default=100, help="--speed: series timed for PELT (0: none)")
    a = ap.parse_args()
    if a.speed:
        speed(a.dbperf, a.series, a.points, a.timeout, a.pelt_series)
    else:
        if a.per_kind < 30:
            sys.exit("--per-kind: at least 30 series per kind")
        scorecard(a.dbperf, a.per_kind)


if __name__ == "__main__":
    main()
