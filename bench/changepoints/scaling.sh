#!/usr/bin/env bash
# How the time of `dbperf history detect --stdin` grows with the series' length: one series of
# 20,000, 100,000 and 1,000,000 points with a change every 20, three kinds (the docstring of
# scaling.py), and `history changes` on a 100,000-run history of one series. Goals (issue 45):
# 100,000 points in at most 10 times the time of 20,000, and 10^6 points in under 10 s. Needs
# Python 3 only (no venv); dbperf is built from this checkout (DBPERF=PATH times another build).
# Usage: bench/changepoints/scaling.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -n "${DBPERF:-}" ]; then  # relative to where the user typed it
    dbperf="$(cd "$(dirname "$DBPERF")" && pwd)/$(basename "$DBPERF")"
else
    cd "$here/../.."
    nice cargo build --release --quiet
    target="${CARGO_TARGET_DIR:-target}"
    case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
    dbperf="$target/release/dbperf"
fi
python3 "$here/scaling.py" --dbperf "$dbperf"
