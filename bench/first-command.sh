#!/usr/bin/env bash
# The README's first command as a new user meets it (goal: 3 minutes on two cores, clone to
# report): a fresh clone of this checkout's HEAD and an empty cargo home, so every crate is
# downloaded and built, then the command exactly as the README writes it. Prints the build's
# time (cargo's own "Finished" line), the benchmark's, and the whole. With --timings, also keeps
# cargo's build timing page (which crate took how long) and says where it is.
#   bench/first-command.sh [--timings]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
timings=""
if [ "${1:-}" = "--timings" ]; then
    timings=yes
fi
work=$(mktemp -d /tmp/dbperf-first-command.XXXXXX)
keep=""
cleanup() {
    if [ -z "$keep" ]; then
        rm -rf "$work"
    fi
}
trap cleanup EXIT
# The toolchain stays the machine's (rustup's home); only the crates' cache is new.
export CARGO_HOME="$work/cargo-home"
export CARGO_TARGET_DIR="$work/dbperf/target"

start=$(date +%s.%N)
git clone -q "$src" "$work/dbperf"
cd "$work/dbperf"
command=$(awk '/^```/{n++; next} n==1' README.md | sed -n 1p)
if [ -n "$timings" ]; then
    command="${command/cargo run --release/cargo run --release --timings}"
fi
echo "+ $command   (fresh clone, empty cargo home)"
bash -c "$command" > "$work/out.log" 2>&1 || {
    tail -20 "$work/out.log" >&2
    exit 1
}
end=$(date +%s.%N)
build=$(grep -o 'Finished `release` profile .* in [0-9hms .]*' "$work/out.log" | sed 's/.* in //')
results=$(grep -o '^Results: .*' "$work/out.log" | sed 's/^Results: //')
run_s=""
if [ -n "$results" ] && [ -f "$results/run.json" ]; then
    run_s=$(python3 -c 'import json,sys,datetime as d
r=json.load(open(sys.argv[1]))
f=lambda s: d.datetime.fromisoformat(s.replace("Z","+00:00"))
print(round((f(r["ended_at"])-f(r["started_at"])).total_seconds(),1))' "$results"/*/run.json 2>/dev/null | head -1 || true)
fi
printf 'build: %s\nbenchmark (run.json start to end): %s s\nclone to report: %.0f s\n' \
    "$build" "${run_s:-?}" "$(echo "$end - $start" | bc)"
if [ -n "$timings" ]; then
    keep=yes
    echo "build timings: $(ls "$work"/dbperf/target/cargo-timings/cargo-timing.html)"
fi
