#!/usr/bin/env bash
# Peak RSS of dbperf while l.i0 inserts 1M and then 10M rows into SQLite (goal: under 100 MB and no
# growth between them). Reads client_peak_rss_kb (VmHWM) from run.json.
# Usage: bench/memory.sh [small-rows] [large-rows]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
small=${1:-1M}
large=${2:-10M}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
peak() {
    ./target/release/dbperf run --steps l.i0 --rows-l-i0 "$1" --out "$tmp/$1" --no-progress >/dev/null 2>&1
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['client_peak_rss_kb'])" "$tmp/$1/sqlite.wal-normal/run.json"
}
a=$(peak "$small")
b=$(peak "$large")
awk -v s="$small" -v l="$large" -v a="$a" -v b="$b" 'BEGIN {
    printf "peak RSS, l.i0 %s rows: %.1f MB\n", s, a / 1024
    printf "peak RSS, l.i0 %s rows: %.1f MB\n", l, b / 1024
    printf "growth: %+.1f MB (%+.1f%%)  (goal: < 100 MB, no growth)\n", (b - a) / 1024, 100 * (b - a) / a
}'
