# Sourced by run.sh and speed.sh: a venv under /tmp with the pinned comparison detectors (not
# dependencies of dbperf), and the dbperf binary to score, built from this checkout unless
# DBPERF names one. Sets $python and $dbperf; leaves the working directory at the repository root.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -n "${DBPERF:-}" ]; then  # relative to where the user typed it
    DBPERF="$(cd "$(dirname "$DBPERF")" && pwd)/$(basename "$DBPERF")"
fi
cd "$here/../.."
venv="${CP_VENV:-${OTAVA_VENV:-/tmp/dbperf-bench-changepoints}}"
if [ ! -x "$venv/bin/pip" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check "apache-otava==0.8.0" "ruptures==1.1.9"
python="$venv/bin/python"
if [ -n "${DBPERF:-}" ]; then
    dbperf="$DBPERF"
else
    nice cargo build --release --quiet
    target="${CARGO_TARGET_DIR:-target}"
    case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
    dbperf="$target/release/dbperf"
fi
