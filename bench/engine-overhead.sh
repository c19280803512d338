#!/usr/bin/env bash
# Engine overhead per operation with a no-op target (goal: under 1 µs). Usage: bench/engine-overhead.sh [ops]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release --quiet --example engine_overhead -- "${1:-10000000}"
