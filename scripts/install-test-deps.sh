#!/usr/bin/env bash
# Installs what dbperf's tests need on Debian 12: PostgreSQL, MariaDB with MyRocks, sysbench
# (fidelity checks), sysstat and procps (iostat and vmstat truth checks), Chromium (renders
# report.html headless), npm and curl (tests/fetch.rs gets PostgreSQL builds from the npm
# registry and a tarball over HTTP), linux-perf (tests/profiles.rs samples servers with perf),
# Slurm and munge (tests/slurm.rs submits campaigns to a one-node cluster of its own,
# scripts/slurm-cluster.sh).
# Run as root (or with sudo).
#
# dbperf starts its own private server instances, so the packaged services are kept from starting
# while the packages install (policy-rc.d answers "not allowed" to invoke-rc.d).
set -euo pipefail

packages=(postgresql mariadb-server mariadb-plugin-rocksdb sysbench sysstat procps chromium curl linux-perf
          slurm-wlm slurmctld slurmd slurm-client munge)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm is wanted as a command, not as a Debian package: a machine whose Node.js comes from
# elsewhere (NodeSource's nodejs bundles npm) already has it, and Debian's npm package conflicts
# with that nodejs, so apt refuses the whole install ("held broken packages").
if ! command -v npm >/dev/null 2>&1; then
    missing+=(npm)
fi
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-test-deps: all of ${packages[*]} already installed"
    exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi

created_policy=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
    $sudo chmod 755 /usr/sbin/policy-rc.d
    created_policy=yes
fi
cleanup() {
    if [ -n "$created_policy" ]; then
        $sudo rm -f /usr/sbin/policy-rc.d
    fi
}
trap cleanup EXIT

echo "install-test-deps: installing ${missing[*]}"
$sudo apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-test-deps: done"
