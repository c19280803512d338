#!/usr/bin/env bash
# Precision, recall and F1 of dbperf's change-point detector (`dbperf history changes`) against
# Apache Otava on the same synthetic series with known change points (docs/performance.md,
# "Change points"). Otava is installed from PyPI into a venv under /tmp; it is not a dependency
# of dbperf. Usage: bench/changepoints/run.sh [series per kind, default 30]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
venv="${OTAVA_VENV:-/tmp/dbperf-bench-otava}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check "apache-otava==0.8.0"
nice cargo build --release --quiet
"$venv/bin/python" "$here/bench.py" --dbperf target/release/dbperf --per-kind "${1:-30}"
