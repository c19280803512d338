#!/usr/bin/env bash
# Open-loop pacer: achieved vs target at 100, 500 and 1000 rows/s (goal: within 1% over 60 s).
# Usage: bench/pacer-accuracy.sh [seconds] [--loaded]
# --loaded keeps every core busy with a spinning process meanwhile, as a busy DBMS would.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --example pacer_accuracy
secs=${1:-60}
pids=()
if [ "${2:-}" = "--loaded" ]; then
    for _ in $(seq "$(nproc)"); do
        (while :; do :; done) &
        pids+=($!)
    done
    trap 'kill "${pids[@]}" 2>/dev/null' EXIT
    echo "load: $(nproc) spinning processes"
fi
./target/release/examples/pacer_accuracy "$secs"
