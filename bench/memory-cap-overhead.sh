#!/usr/bin/env bash
# Cost of `--server-memory` when the data fits (issue 34: within noise): a managed PostgreSQL's
# sysbench point queries and read-only transactions on a table much smaller than the cap, with
# and without the cap (a cgroup v1/v2 memory limit on the server), in one invocation so both
# see the same host. The order alternates by round (off-cap, cap-off, ...) so drift of the host
# is not charged to either. Prints each round, then per test the median ratio capped/uncapped of
# throughput and of the server's CPU per query. Needs root (a cgroup per server).
#   ROUNDS=5 SECONDS_PER_TEST=10 ROWS=200k CAP=2G bench/memory-cap-overhead.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
ROWS=${ROWS:-200k}
SECS=${SECONDS_PER_TEST:-10}
CAP=${CAP:-2G}
TESTS=${TESTS:-point-query,read-only_range=100}
cargo build --release --quiet --bin dbperf
work=$(mktemp -d /tmp/dbperf-cap-overhead.XXXXXX)
chmod 755 "$work"   # the server runs as an unprivileged user that must reach it
trap 'rm -rf "$work"' EXIT
for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then order="off cap"; else order="cap off"; fi
    for mode in $order; do
        extra=()
        [ "$mode" = cap ] && extra=(--server-memory "$CAP")
        ./target/release/dbperf run --suite sysbench --target postgres --tests "$TESTS" \
            --rows "$ROWS" --read-seconds "$SECS" --warmup-seconds 2 --no-progress \
            --out "$work/$mode.$r" "${extra[@]}" >/dev/null
    done
done
python3 - "$work" "$ROUNDS" <<'PY'
import json, os, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
def step(mode, r, name):
    return json.load(open(os.path.join(work, f"{mode}.{r}", "postgres.default", "steps", f"{name}.json")))
names = [s[:-5] for s in sorted(os.listdir(os.path.join(work, "off.1", "postgres.default", "steps")))
         if s.endswith(".json") and s != "load.json"]
for name in names:
    rate, cpu = [], []
    for r in range(1, rounds + 1):
        off, cap = step("off", r, name), step("cap", r, name)
        a, b = off["headline"]["value"], cap["headline"]["value"]
        rate.append(b / a)
        ca = off["hardware"]["per_op"].get("server_cpu_us")
        cb = cap["hardware"]["per_op"].get("server_cpu_us")
        if ca and cb:
            cpu.append(cb / ca)
        reads = cap["hardware"]["per_op"].get("reads")
        print(f"round {r} {name}: uncapped {a:.0f}, capped {b:.0f} ({100*(b/a-1):+.1f}%), capped disk reads/query {reads:.4f}")
    print(f"{name}: median capped/uncapped throughput {statistics.median(rate):.3f} "
          f"(rounds {min(rate):.3f}-{max(rate):.3f}); server CPU per query "
          f"{statistics.median(cpu):.3f}" if cpu else "")
PY
