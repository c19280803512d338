#!/usr/bin/env bash
# Runs the README's test command while spinning processes keep the CPUs busy, as on a developer's
# laptop or a shared CI host: every test must pass there too, because a test asserts that dbperf
# computed its figures right, never that the machine was fast (docs/performance.md, "Tests").
#
#   scripts/test-under-load.sh            # two spinners (both cores of the 2-core test machine)
#   SPINNERS=4 scripts/test-under-load.sh
#
# The spinners are plain busy loops at the tests' own priority; they are stopped when the
# command ends, however it ends. Prints the command's wall time and exits with its status.
set -euo pipefail
cd "$(dirname "$0")/.."

spinners=${SPINNERS:-2}
# The second line of the README's first fenced block: the test command, exactly as written there.
command=$(awk '/^```/{n++; next} n==1' README.md | sed -n 2p)
if [ -z "$command" ]; then
    echo "test-under-load: README.md's first code block has no second command" >&2
    exit 2
fi

pids=()
stop_spinners() {
    if [ ${#pids[@]} -gt 0 ]; then
        kill "${pids[@]}" 2>/dev/null || true
        wait "${pids[@]}" 2>/dev/null || true
    fi
}
trap stop_spinners EXIT
for _ in $(seq "$spinners"); do
    bash -c 'while :; do :; done' &
    pids+=($!)
done

echo "+ $command   (beside $spinners spinning processes)"
start=$(date +%s)
status=0
bash -c "$command" || status=$?
echo "test-under-load: exit $status after $(( $(date +%s) - start )) s beside $spinners spinning processes"
exit "$status"
