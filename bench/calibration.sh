#!/usr/bin/env bash
# Calibration of the report's verdicts (docs/statistics.md, "Calibration"): a campaign of two
# identical targets (A/A) and one slowed on purpose (SQLite: its own defaults, a rollback journal
# fsynced and deleted at every commit, against WAL; PostgreSQL: a 10 ms commit_delay; MariaDB: an
# 8 MB buffer pool), in interleaved rounds. Prints how many A/A cells were called a difference,
# out of how many with an interval, and the slowed target's throughput verdicts. A figure of the
# method on this host, so a benchmark, not a test (tests/confidence.rs checks the computation on
# scripted figures).
#   ENGINE=postgres ROUNDS=3 bench/calibration.sh
#   ENGINE=sqlite ROUNDS=4 bench/calibration.sh     # about 10 minutes on 2 cores
set -euo pipefail
cd "$(dirname "$0")/.."
ENGINE=${ENGINE:-postgres}
ROUNDS=${ROUNDS:-3}
cargo build --release --quiet --bin dbperf
work=$(mktemp -d /tmp/dbperf-calibration.XXXXXX)
chmod 755 "$work"   # the server runs as an unprivileged user that must reach it
trap 'rm -rf "$work"' EXIT
# The slowed target's config is the built-in `default` plus one setting (`extends`,
# docs/targets.md); the A/A pair runs the built-in `default` itself.
case "$ENGINE" in
sqlite) ;;
postgres)
    # Every commit waits 10 ms before its WAL flush.
    slower='commit_delay = 10000
commit_siblings = 0' ;;
mariadb)
    # A buffer pool far smaller than the tables.
    slower='innodb_buffer_pool_size = 8M' ;;
*) echo "ENGINE must be sqlite, postgres or mariadb" >&2; exit 2 ;;
esac
if [ "$ENGINE" = sqlite ]; then
    # l.i1 long enough for three full seconds on a machine twice as fast as the 2-core VM.
    sizes=(--rows-l-i0 30k --rows-l-i1 150k --rows-l-i2 10k --query-seconds 4)
    cat > "$work/dbperf.toml" <<TOML
[target.a]
engine = "sqlite"
config = "wal-normal"
[target.b]
engine = "sqlite"
config = "wal-normal"
[target.slow]
engine = "sqlite"
config = "delete-full"
TOML
else
    sizes=(--rows-l-i0 100k --rows-l-i1 50k --rows-l-i2 20k --query-seconds 10)
    cat > "$work/dbperf.toml" <<TOML
[config.slowed]
engine = "$ENGINE"
extends = "default"
text = """
$slower
"""
[target.a]
engine = "$ENGINE"
[target.b]
engine = "$ENGINE"
[target.slow]
engine = "$ENGINE"
config = "slowed"
TOML
fi
./target/release/dbperf run --config-file "$work/dbperf.toml" --target a --target b --target slow \
    --repeats "$ROUNDS" --steps l.i0,l.x,l.i1,l.i2,qr100,qp100 "${sizes[@]}" --rates 100 \
    --out "$work/r" --no-progress >/dev/null
./target/release/dbperf report "$work/r" --format json --out "$work/rep" >/dev/null
python3 - "$work/rep/report.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
n = called = unconfirmed = 0
for t in j["tables"]:
    if t["kind"] != "relative":
        continue
    for r in t["rows"]:
        if r["label"] != "b":
            continue
        for c, cell in enumerate(r["cells"]):
            if "95% interval" not in (cell.get("note") or ""):
                continue
            n += 1
            if cell["mark"] in ("worse", "better"):
                called += 1
                print("A/A called:", t["id"], t["columns"][c]["key"], cell["note"])
            # ROUNDS=1: beyond a threshold within one run, which the report does not call.
            unconfirmed += cell["mark"].startswith("unconfirmed")
print(f"A/A: {called} of {n} cells with an interval called a difference ({100*(n-called)/max(n,1):.1f}% no difference), {unconfirmed} unconfirmed")
tput = next(t for t in j["tables"] if t["id"] == "ibench-tput-rel")
slow = next(r for r in tput["rows"] if r["label"] == "slow")
for col, cell in zip(tput["columns"], slow["cells"]):
    print(f"slow {col['key']}: {cell['text']} {cell.get('note') or ''}")
PY
