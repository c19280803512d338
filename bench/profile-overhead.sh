#!/usr/bin/env bash
# Cost of `dbperf run --profile` (issue 15: under 3% of throughput at 99 Hz): the same managed
# PostgreSQL Insert Benchmark steps without --profile, with --profile-scope system (every CPU
# sampled, the default as root) and with --profile-scope processes (perf attached to the
# server's processes), in one invocation so all see the same host. The order rotates by round
# (off-system-processes, system-processes-off, ...): a mode that always came last would carry
# any drift of the host (writeback of the previous run's data, a growing page cache) as if it
# were perf's. Prints each round, then per step and mode the median ratio to `off` of
# throughput and of the server's and the client's CPU per operation, and perf's own CPU share.
#   ROUNDS=6 SECONDS_PER_STEP=10 HZ=99 ROWS=1M MODES="off system processes" bench/profile-overhead.sh
# Needs root for `system` (perf record -a).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-6}
ROWS=${ROWS:-1M}
SECS=${SECONDS_PER_STEP:-10}
HZ=${HZ:-99}
STEPS=${STEPS:-l.i0,l.x,qr100,qp100}
read -r -a MODES <<< "${MODES:-off system processes}"
cargo build --release --quiet --bin dbperf
work=$(mktemp -d /tmp/dbperf-profile-overhead.XXXXXX)
chmod 755 "$work"   # the server runs as an unprivileged user that must reach it
trap 'rm -rf "$work"' EXIT
n=${#MODES[@]}
for r in $(seq 1 "$ROUNDS"); do
    for k in $(seq 0 $((n - 1))); do
        mode=${MODES[$(((k + r - 1) % n))]}
        extra=()
        [ "$mode" != off ] && extra=(--profile --profile-hz "$HZ" --profile-scope "$mode" --require-profile)
        ./target/release/dbperf run --target postgres --steps "$STEPS" --rows-l-i0 "$ROWS" \
            --query-seconds "$SECS" --out "$work/$mode.$r" --no-progress "${extra[@]}" >/dev/null
    done
done
python3 - "$work" "$ROUNDS" "${MODES[@]}" <<'PY'
import json, os, statistics, sys
work, rounds, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def step_file(mode, r, step):
    return json.load(open(os.path.join(work, f"{mode}.{r}", "postgres.default", "steps", f"{step}.json")))
def rate(mode, r, step):
    return step_file(mode, r, step)["headline"]["value"]
def per_op(mode, r, step, key):
    return ((step_file(mode, r, step).get("hardware") or {}).get("per_op") or {}).get(key)
def median_ratio(values):
    return round(statistics.median(values), 4) if values else None
steps = [s[:-5] for s in sorted(os.listdir(os.path.join(work, "off.1", "postgres.default", "steps"))) if s.endswith(".json")]
for step in steps:
    for mode in (m for m in modes if m != "off"):
        ratios = []
        for r in range(1, rounds + 1):
            off, on = rate("off", r, step), rate(mode, r, step)
            ratios.append(on / off)
            print(f"round {r} {step} {mode}: without {off:.0f}, with --profile {on:.0f} ({100*(on/off-1):+.1f}%)")
        # CPU per operation with / without: perf's kernel-side cost (taking samples, switching
        # attached events at every context switch) is charged to the processes themselves.
        cpu = {}
        for key in ("server_cpu_us", "client_cpu_us"):
            cpu[key] = median_ratio([per_op(mode, r, step, key) / per_op("off", r, step, key)
                                     for r in range(1, rounds + 1)
                                     if per_op(mode, r, step, key) and per_op("off", r, step, key)])
        # perf's own CPU over the measured time, as a share of the host's.
        shares = [step_file(mode, r, step)["profile"].get("perf_cpu_share") for r in range(1, rounds + 1)]
        shares = [x for x in shares if x is not None]
        print(json.dumps({"step": step, "scope": mode,
                          "median_ratio_with_profile": median_ratio(ratios),
                          "median_server_cpu_per_op_ratio": cpu["server_cpu_us"],
                          "median_client_cpu_per_op_ratio": cpu["client_cpu_us"],
                          "median_perf_cpu_share_pct": round(100 * statistics.median(shares), 4) if shares else None}))
PY
