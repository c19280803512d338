#!/usr/bin/env bash
# CPU cost of the per-second host sampler (issue 4: under 0.5% of one core), with and without
# a managed PostgreSQL's process tree to walk. Prints one JSON line per case.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --example sampler_cost --bin dbperf
work=$(mktemp -d /tmp/dbperf-sampler.XXXXXX)
chmod 755 "$work"   # the server runs as an unprivileged user that must reach it
cleanup() { ./target/release/dbperf server stop postgres --dir "$work/pg" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
echo "no server (SQLite-like target):"
./target/release/examples/sampler_cost "$work" 0 2000
if [ -x /usr/lib/postgresql/15/bin/postgres ] || ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    ./target/release/dbperf server start postgres --dir "$work/pg" >/dev/null
    pid=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['pid'])" "$work/pg/server.json")
    datadir=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['datadir'])" "$work/pg/server.json")
    echo "managed PostgreSQL (postmaster $pid and its children):"
    ./target/release/examples/sampler_cost "$datadir" "$pid" 2000
fi
