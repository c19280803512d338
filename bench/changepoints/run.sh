#!/usr/bin/env bash
# Scorecard of change-point detectors: dbperf's (`dbperf history detect --stdin`), Apache Otava
# 0.8.0 at its defaults and ruptures' PELT, side by side on the same seeded synthetic series
# (kinds and metrics: the docstring of bench.py). Otava and ruptures are installed from PyPI into
# a venv under /tmp (CP_VENV=DIR to choose it); dbperf is built from this checkout
# (DBPERF=PATH scores another build instead).
# Usage: bench/changepoints/run.sh [series per kind, default 30, at least 30]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
"$python" "$here/bench.py" --dbperf "$dbperf" --per-kind "${1:-30}"
