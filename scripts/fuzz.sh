#!/usr/bin/env bash
# Runs dbperf's fuzzing targets (tests/fuzz.rs) for a given time instead of CI's short budget:
# each round runs every target (or those of the module FILTER: mysql, pg, results, spec, writeamp) with
# DBPERF_FUZZ_CASES cases and a fresh random seed, until the time is up or a case fails.
# Overflow checks and debug assertions are on, so arithmetic overflow counts as a crash (release
# builds would wrap silently); the build goes to its own target directory.
#
#   scripts/fuzz.sh [MINUTES] [FILTER]      e.g. scripts/fuzz.sh 60 mysql
#
# A failure is shrunk and its seed added to tests/fuzz/<target>.proptest-regressions (replayed
# first on every later run): commit that file and add the input as a named test beside the
# target, then fix the parser.
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=${1:-10}
filter=${2:-}
export DBPERF_FUZZ_CASES=${DBPERF_FUZZ_CASES:-20000}
export CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS=true
export CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}/fuzz

# The targets are the `fuzz::` tests of the integration-test binary (tests/main.rs).
cargo test --release --test integration --no-run
end=$(( $(date +%s) + minutes * 60 ))
round=0
while [ "$(date +%s)" -lt "$end" ]; do
    round=$((round + 1))
    echo "round $round: $DBPERF_FUZZ_CASES cases per target"
    cargo test --release --test integration -- "fuzz::$filter"
done
echo "no failure in $round rounds"
