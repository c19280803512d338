#!/usr/bin/env bash
# A one-node Slurm cluster whose every file lives under DIR, for trying `dbperf run --slurm` on
# one machine and for dbperf's own test of it (tests/slurm.rs). Debian 12's slurm-wlm and munge
# (scripts/install-test-deps.sh installs them); nothing of a system Slurm or munge is used or
# touched: its own munge key and munged (own socket), its own slurm.conf (clients need only
# SLURM_CONF=DIR/slurm.conf), state, spool, pid and log files under DIR, the ports it is given.
# Several can run side by side, and beside a system cluster.
#
#   slurm-cluster.sh up DIR PORT1 PORT2   # DIR absolute; slurmctld on PORT1, slurmd on PORT2
#   slurm-cluster.sh down DIR             # cancel jobs, stop slurmd, slurmctld, munged by pid
#   slurm-cluster.sh status DIR
#   export SLURM_CONF=DIR/slurm.conf      # then sbatch, squeue, dbperf run --slurm use it
#
# Root only (slurmd runs jobs as the users who submit them). Every wait is bounded; a daemon is
# signalled only after /proc/PID/comm says it is still the one started.
#
# Knobs (environment, read by `up` when it writes slurm.conf):
#   CLUSTER_MIN_JOB_AGE (300)  MinJobAge: seconds a finished job stays visible to squeue
#   CLUSTER_KILL_WAIT (10)     KillWait: seconds between SIGTERM and SIGKILL on scancel
#   CLUSTER_MSG_TIMEOUT (10)   MessageTimeout (also how long clients try a dead slurmctld)
set -euo pipefail

log() { printf '[slurm-cluster %s] %s\n' "$(date +%T.%3N)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# wait_for SECONDS WHAT COMMAND...: poll every 0.2 s until COMMAND succeeds, else die.
wait_for() {
    local limit=$1 what=$2; shift 2
    local end=$(( $(date +%s) + limit ))
    until "$@" >/dev/null 2>&1; do
        [ "$(date +%s)" -lt "$end" ] || die "timed out after ${limit}s waiting for ${what}"
        sleep 0.2
    done
}

# pid_of FILE COMM: print the pid in FILE if that process runs and is COMM.
pid_of() {
    local f=$1 comm=$2 pid
    [ -s "$f" ] || return 1
    pid=$(tr -dc 0-9 <"$f")
    [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ] || return 1
    echo "$pid"
}

setup_paths() {
    [ -n "${1:-}" ] || die "usage: $0 up|down|status DIR"
    case "$1" in /*) ;; *) die "DIR must be an absolute path: $1" ;; esac
    case "$1" in *[[:space:]]*|*'#'*) die "DIR must not contain spaces or '#': $1" ;; esac
    D=${1%/}
    CONF=$D/slurm.conf
    MUNGE_DIR=$D/munge
    MSOCK=$MUNGE_DIR/munge.sock
    RUN=$D/run
    LOGD=$D/log
    export SLURM_CONF=$CONF
}

# Every daemon we start carries this marker in its environment (and slurmstepd inherits it
# from slurmd): `down` uses it to find leftovers that belong to this DIR only.
marker() { echo "SLURM_CLUSTER_DIR=$D"; }

start_munged() {
    local pid
    if pid=$(pid_of "$MUNGE_DIR/munged.pid" munged); then log "munged already running (pid $pid)"; return; fi
    install -d -o munge -g munge -m 0755 "$MUNGE_DIR"    # 0755: unprivileged clients reach the socket
    if [ ! -s "$MUNGE_DIR/munge.key" ]; then
        mungekey --create --keyfile="$MUNGE_DIR/munge.key"
    fi
    chown munge:munge "$MUNGE_DIR/munge.key"; chmod 0600 "$MUNGE_DIR/munge.key"
    rm -f "$MUNGE_DIR/munged.pid" "$MSOCK" "$MSOCK.lock"
    # As the munge user (least privilege); no --force needed: /tmp is sticky, DIR is 0755.
    env "$(marker)" runuser -u munge -- /usr/sbin/munged \
        --socket="$MSOCK" --key-file="$MUNGE_DIR/munge.key" \
        --pid-file="$MUNGE_DIR/munged.pid" --log-file="$MUNGE_DIR/munged.log" \
        --seed-file="$MUNGE_DIR/munged.seed" </dev/null >>"$LOGD/munged.stdout" 2>&1 \
        || die "munged failed to start: $(tail -3 "$MUNGE_DIR/munged.log" 2>/dev/null)"
    wait_for 10 "munged pid file" pid_of "$MUNGE_DIR/munged.pid" munged
    wait_for 10 "a munge credential on $MSOCK" \
        bash -c "munge -S '$MSOCK' -n | unmunge -S '$MSOCK'"
    log "munged started (pid $(pid_of "$MUNGE_DIR/munged.pid" munged))"
}

write_conf() {
    local hw cpus sockets cores threads mem cport dport
    hw=$(slurmd -C | head -1)
    cpus=$(sed -n 's/.* CPUs=\([0-9]*\).*/\1/p' <<<"$hw")
    sockets=$(sed -n 's/.* SocketsPerBoard=\([0-9]*\).*/\1/p' <<<"$hw")
    cores=$(sed -n 's/.* CoresPerSocket=\([0-9]*\).*/\1/p' <<<"$hw")
    threads=$(sed -n 's/.* ThreadsPerCore=\([0-9]*\).*/\1/p' <<<"$hw")
    mem=$(sed -n 's/.* RealMemory=\([0-9]*\).*/\1/p' <<<"$hw")
    [ -n "$cpus" ] && [ -n "$mem" ] || die "could not parse 'slurmd -C': $hw"
    cport=$PORT1; dport=$PORT2
    cat >"$CONF.tmp" <<EOF
# Written by slurm-cluster.sh: a one-node cluster, every file under $D
ClusterName=dbperf-test
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$cport
SlurmdPort=$dport
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MSOCK
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$LOGD/slurmctld.log
SlurmdLogFile=$LOGD/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$D/plugstack.conf
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
# A submission is scheduled at slurmctld's next 1 s tick, not 3 s after its last pass.
SchedulerParameters=batch_sched_delay=0
# With an epilog, slurmd reports a job's end at once and the next task starts without waiting
# for a scheduling pass.
Epilog=/bin/true
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmdTimeout=60
InactiveLimit=0
KillWait=${CLUSTER_KILL_WAIT:-10}
MinJobAge=${CLUSTER_MIN_JOB_AGE:-300}
MessageTimeout=${CLUSTER_MSG_TIMEOUT:-10}
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus Boards=1 SocketsPerBoard=$sockets CoresPerSocket=$cores ThreadsPerCore=$threads RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    mv "$CONF.tmp" "$CONF"; chmod 0644 "$CONF"
    : >"$D/plugstack.conf"     # empty: no SPANK plugins (not /etc/slurm/plugstack.conf)
    log "wrote $CONF (SlurmctldPort=$cport SlurmdPort=$dport CPUs=$cpus RealMemory=$mem)"
}

cmd_up() {
    local t0 pid; t0=$(date +%s%N)
    [ "$(id -u)" = 0 ] || die "run as root"
    mkdir -p "$D"; chmod 0755 "$D"      # traversable: nobody must reach the munge socket
    install -d -m 0755 "$RUN" "$LOGD" "$D/state" "$D/spool"

    start_munged

    # Rewrite the config (new free ports) only while slurmctld is down.
    if ! pid_of "$RUN/slurmctld.pid" slurmctld >/dev/null; then write_conf; fi

    if pid=$(pid_of "$RUN/slurmctld.pid" slurmctld); then
        log "slurmctld already running (pid $pid)"
    else
        rm -f "$RUN/slurmctld.pid"
        env "$(marker)" slurmctld -f "$CONF" </dev/null >>"$LOGD/slurmctld.stdout" 2>&1 \
            || die "slurmctld failed: $(tail -5 "$LOGD/slurmctld.log" 2>/dev/null)"
        wait_for 20 "slurmctld pid file" pid_of "$RUN/slurmctld.pid" slurmctld
        log "slurmctld started (pid $(pid_of "$RUN/slurmctld.pid" slurmctld))"
    fi
    wait_for 30 "slurmctld to answer" timeout 15 scontrol ping

    if pid=$(pid_of "$RUN/slurmd.pid" slurmd); then
        log "slurmd already running (pid $pid)"
    else
        rm -f "$RUN/slurmd.pid"
        env "$(marker)" slurmd -f "$CONF" -N localhost </dev/null >>"$LOGD/slurmd.stdout" 2>&1 \
            || die "slurmd failed: $(tail -5 "$LOGD/slurmd.log" 2>/dev/null)"
        wait_for 20 "slurmd pid file" pid_of "$RUN/slurmd.pid" slurmd
        log "slurmd started (pid $(pid_of "$RUN/slurmd.pid" slurmd))"
    fi
    wait_for 30 "node localhost to be idle" \
        bash -c "timeout 15 sinfo -h -N -n localhost -o %t | grep -qE '^(idle|alloc|mix)\$'"
    log "up in $(( ($(date +%s%N) - t0) / 1000000 )) ms; use: export SLURM_CONF=$CONF"
}

# stop_pid NAME PIDFILE COMM: SIGTERM, wait up to 20 s, then SIGKILL (comm re-checked).
stop_pid() {
    local name=$1 f=$2 comm=$3 pid end
    if ! pid=$(pid_of "$f" "$comm"); then log "$name not running"; rm -f "$f"; return 0; fi
    kill -TERM "$pid" 2>/dev/null || true
    end=$(( $(date +%s) + 20 ))
    while [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ] && [ "$(date +%s)" -lt "$end" ]; do
        sleep 0.2
    done
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ]; then
        log "$name (pid $pid) still there after 20 s: SIGKILL"; kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$f"
    log "$name (pid $pid) stopped"
}

# Processes of this DIR that are not tracked by a pid file (slurmstepd, or a daemon whose pid
# file was lost): comm is one of ours and the environment carries this DIR's marker.
# leftovers [COMM...]: default: the Slurm daemons (munged is stopped last, separately).
leftovers() {
    local p comm m names=" ${*:-slurmstepd slurmd slurmctld slurmscriptd} " found=; m=$(marker)
    for p in /proc/[0-9]*; do
        comm=$(cat "$p/comm" 2>/dev/null) || continue
        case "$names" in *" $comm "*) ;; *) continue ;; esac
        { tr '\0' '\n' <"$p/environ" | grep -qxF "$m"; } 2>/dev/null && found="$found ${p#/proc/}"
    done
    [ -n "$found" ] || return 0
    # plus every descendant (the job processes of a leftover slurmstepd)
    ps -e -o pid=,ppid= | awk -v roots="$found" '
        BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) keep[r[i]] = 1 }
        { parent[$1] = $2 }
        END { do { changed = 0
                   for (p in parent) if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; changed = 1 }
              } while (changed)
              for (p in keep) print p }'
}

cmd_down() {
    local end p left
    [ "$(id -u)" = 0 ] || die "run as root"
    [ -d "$D" ] || die "no such directory: $D"
    if pid_of "$RUN/slurmctld.pid" slurmctld >/dev/null && [ -s "$CONF" ]; then
        if [ -n "$(timeout 15 squeue -h -o %i 2>/dev/null)" ]; then
            log "cancelling jobs still queued or running"
            timeout 15 scancel --partition=debug || true
            end=$(( $(date +%s) + 30 ))
            while [ -n "$(timeout 15 squeue -h -t PD,R,CG,S -o %i 2>/dev/null)" ] \
                  && [ "$(date +%s)" -lt "$end" ]; do sleep 0.5; done
        fi
    fi
    stop_pid slurmd "$RUN/slurmd.pid" slurmd
    stop_pid slurmctld "$RUN/slurmctld.pid" slurmctld
    # Anything of this DIR still there (a slurmstepd whose job outlived the cancel, ...).
    left=$(leftovers)
    if [ -n "$left" ]; then
        log "leftover processes of $D: $(echo $left): SIGTERM"
        kill -TERM $left 2>/dev/null || true
        end=$(( $(date +%s) + 5 ))      # slurmstepd ignores SIGTERM: SIGKILL after 5 s
        while [ -n "$(leftovers)" ] && [ "$(date +%s)" -lt "$end" ]; do sleep 0.2; done
        left=$(leftovers)
        if [ -n "$left" ]; then log "SIGKILL $(echo $left)"; kill -KILL $left 2>/dev/null || true; fi
    fi
    stop_pid munged "$MUNGE_DIR/munged.pid" munged
    rm -f "$MSOCK" "$MSOCK.lock"
    left=$(leftovers slurmstepd slurmd slurmctld slurmscriptd munged)
    [ -z "$left" ] || die "still running after down: $(echo $left)"
    log "down: nothing of $D left running"
}

cmd_status() {
    local pid n
    for n in munged:$MUNGE_DIR/munged.pid slurmctld:$RUN/slurmctld.pid slurmd:$RUN/slurmd.pid; do
        if pid=$(pid_of "${n#*:}" "${n%%:*}"); then echo "${n%%:*}: pid $pid"; else echo "${n%%:*}: not running"; fi
    done
    if pid_of "$RUN/slurmctld.pid" slurmctld >/dev/null; then
        grep -E '^Slurm(ctld|d)Port=' "$CONF"
        timeout 15 sinfo || true; timeout 15 squeue || true
    fi
}

case "${1:-}" in
    up) setup_paths "${2:-}"
        PORT1=${3:?usage: $0 up DIR PORT1 PORT2}; PORT2=${4:?usage: $0 up DIR PORT1 PORT2}
        cmd_up ;;
    down) setup_paths "${2:-}"; cmd_down ;;
    status) setup_paths "${2:-}"; cmd_status ;;
    *) echo "usage: $0 up DIR PORT1 PORT2 | down DIR | status DIR" >&2; exit 2 ;;
esac
