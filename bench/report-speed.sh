#!/usr/bin/env bash
# Time `dbperf report` on synthetic Insert Benchmark results (goal: 50 targets x 10 steps in
# under 2 s, linear in the number of results). The results are written by
# examples/report_fixture.rs through dbperf's own result writers, with series as long as the
# cached-small preset's (12,430 seconds per target). Best of 3 wall-clock runs per point.
# Usage: bench/report-speed.sh [targets=50] [series-scale=1.0]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-50}
scale=${2:-1.0}
cargo build --release --quiet --bin dbperf --example report_fixture
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
./target/release/examples/report_fixture "$tmp/results" "$n" "$scale" >/dev/null
echo "results: $n targets x 10 steps, $(du -sh "$tmp/results" | cut -f1) on disk"

best() { # best-of-3 seconds for: dbperf report <inputs...> with formats $1
    local formats=$1
    shift
    local b=""
    for _ in 1 2 3; do
        local t0 t1
        t0=$(date +%s.%N)
        ./target/release/dbperf report "$@" --out "$tmp/out" --format "$formats" >/dev/null
        t1=$(date +%s.%N)
        b=$(awk -v a="$t0" -v z="$t1" -v b="$b" 'BEGIN { d = z - a; if (b == "" || d < b) print d; else print b }')
    done
    echo "$b"
}

mapfile -t dirs < <(find "$tmp/results" -mindepth 1 -maxdepth 1 -type d | sort)
for k in $((n / 5)) $((n / 2)) "$n"; do
    [ "$k" -ge 1 ] || continue
    s=$(best html,md "${dirs[@]:0:$k}")
    awk -v k="$k" -v s="$s" 'BEGIN { printf "%3d targets, html+md: %.3f s (%.1f ms per target)\n", k, s, 1000 * s / k }'
done
s=$(best html,md,csv,json "$tmp/results")
awk -v n="$n" -v s="$s" 'BEGIN { printf "%3d targets, html+md+csv+json: %.3f s   (goal: < 2 s)\n", n, s }'
ls -l "$tmp/out" | awk 'NR > 1 { printf "  %-12s %6.1f MB\n", $9, $5 / 1048576 }'
