#!/usr/bin/env bash
# A single-node Slurm cluster on this machine for the sharding test:
# `slurm.sh start [DIR]` starts munged, slurmctld and slurmd from Debian's
# packages (slurmctld, slurmd, slurm-client, munge) and prints the
# slurm.conf path on stdout -- the only thing it prints there, so callers
# export it as SLURM_CONF; `slurm.sh stop [DIR]` stops them; `slurm.sh
# status [DIR]` exits 0 when all three run. Run as root; start and stop are
# safe to run again (a running cluster is left as it is, a stopped one
# stays stopped).
#
# Several users at once (two test suites on one machine): `slurm.sh hold
# PID [DIR]` starts the cluster if it is down and records process PID as
# one of its holders, printing the slurm.conf path as start does; `slurm.sh
# release PID [DIR]` removes that holder and stops the cluster once no
# holder is alive -- only when a hold started it, so a cluster that ran
# before anyone held it keeps running. Holders are kept by pid and start
# time (a reused pid is not a holder), and a holder that died without
# releasing is dropped at the next hold or release; both take a lock in DIR.
#
# All its state is under DIR (default /run/fslab-slurm): the slurm.conf of
# one node named after `hostname -s` (reached at 127.0.0.1, whatever the
# name resolves to) with this machine's CPUs and memory as `slurmd -C`
# reads them, a munge key of its own, munged's socket, Slurm's
# state, spool and logs, and the pid of every daemon it started. The
# machine's own /etc/slurm and /etc/munge are never read or written, and
# the daemons are stopped by the pids recorded here, never by name. Its
# ports are 6917 and 6918 (FSLAB_SLURMCTLD_PORT and FSLAB_SLURMD_PORT give
# others), not Slurm's 6817 and 6818, so a machine that is also a node of a
# real cluster keeps it. A start checks them before it starts anything (a
# port another program listens on is exit 3, naming it), and a start that
# fails stops every daemon it started, so nothing is left half up. No
# cgroup plugin is used (a machine may mount only some cgroup v1
# controllers): processes are tracked by parent (proctrack/linuxproc), and
# no accounting daemon is needed (jobs are waited for with `sbatch --wait`
# or `squeue`).
set -euo pipefail

usage() {
    echo "slurm: usage: slurm.sh start|stop|status [DIR], or slurm.sh hold|release PID [DIR] (DIR defaults to /run/fslab-slurm)" >&2
    exit 2
}
[ $# -ge 1 ] || usage
action=$1
shift
holder=
case "$action" in
    start | stop | status) ;;
    hold | release)
        [ $# -ge 1 ] || usage
        holder=$1
        shift
        if ! [[ "$holder" =~ ^[1-9][0-9]*$ ]] || [ ! -d "/proc/$holder" ]; then
            echo "slurm: '$holder' is not the id of a running process (hold and release take the holder's pid)" >&2
            exit 2
        fi
        ;;
    *) usage ;;
esac
[ $# -le 1 ] || usage
dir=${1:-/run/fslab-slurm}
ctld_port=${FSLAB_SLURMCTLD_PORT:-6917}
slurmd_port=${FSLAB_SLURMD_PORT:-6918}
for port in "$ctld_port" "$slurmd_port"; do
    if ! [[ "$port" =~ ^[0-9]{1,5}$ ]] || [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; then
        echo "slurm: '$port' is not a TCP port (FSLAB_SLURMCTLD_PORT, FSLAB_SLURMD_PORT: 1 to 65535)" >&2
        exit 2
    fi
done
if [ "$ctld_port" = "$slurmd_port" ]; then
    echo "slurm: FSLAB_SLURMCTLD_PORT and FSLAB_SLURMD_PORT are both $ctld_port; give two ports" >&2
    exit 2
fi
[[ "$dir" = /* ]] || { echo "slurm: DIR must be an absolute path, not '$dir'" >&2; exit 2; }
if [ "$(id -u)" -ne 0 ]; then
    echo "slurm: run as root (the daemons run as root and jobs run as their submitter)" >&2
    exit 3
fi

# DIR holds keys and runs daemons as root: it must be root's own folder,
# not a link, nobody else may write in it, and its parent must be root's
# and closed to others too (or sticky, as /var/tmp), so nobody can swap it.
closed() {
    local path=$1 mode
    mode=0$(stat -c %a "$path")
    [ "$(stat -c %u "$path")" = 0 ] && { [ $((mode & 022)) -eq 0 ] || [ $((mode & 01000)) -ne 0 ]; }
}
own_folder() {
    local path=$1
    if [ -L "$path" ] || { [ -e "$path" ] && [ ! -d "$path" ]; }; then
        echo "slurm: $path is not a folder (a link or a file); remove it or give another DIR" >&2
        exit 2
    fi
    if { [ "$action" = start ] || [ "$action" = hold ]; } && [ ! -d "$path" ]; then
        mkdir -m 0755 "$path"
    fi
    if [ -d "$path" ] && { [ "$(stat -c %u "$path")" != 0 ] || [ $((0$(stat -c %a "$path") & 022)) -ne 0 ]; }; then
        echo "slurm: $path is not root's own folder (owner uid $(stat -c %u "$path"), mode $(stat -c %a "$path")); give another DIR" >&2
        exit 2
    fi
}
parent=$(dirname "$dir")
if ! closed "$parent"; then
    echo "slurm: $dir is in $parent, which is not root's or is open to others (owner uid $(stat -c %u "$parent"), mode $(stat -c %a "$parent")); give a DIR in a folder only root may change" >&2
    exit 2
fi
own_folder "$dir"

# The pid recorded in FILE when that process is still the daemon started
# (its command line names this DIR's config or socket), else nothing.
running() {
    local file=$dir/pids/$1 pid
    [ -f "$file" ] || return 1
    pid=$(cat "$file")
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$dir/" || return 1
    echo "$pid"
}

# Stop one daemon by its recorded pid: TERM, then KILL after 20 s.
stop_one() {
    local name=$1 pid
    if pid=$(running "$name"); then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 200); do
            [ -d "/proc/$pid" ] || break
            sleep 0.1
        done
        if [ -d "/proc/$pid" ]; then
            echo "slurm: $name (pid $pid) did not stop on TERM in 20 s; killing it" >&2
            kill -KILL "$pid" 2>/dev/null || true
        fi
        echo "slurm: stopped $name (pid $pid)" >&2
    fi
    rm -f "$dir/pids/$name"
}

# The daemons this start started, in order: a start that fails stops them.
started=()

# Start one daemon in the foreground of its own session, its output to its
# log, and record its pid.
start_one() {
    local name=$1
    shift
    if running "$name" >/dev/null; then
        return 0
    fi
    setsid "$@" </dev/null >>"$dir/log/$name.out" 2>&1 &
    echo $! >"$dir/pids/$name"
    started+=("$name")
}

# On a failed start, stop what it started, newest first.
undo_start() {
    local status=$? i
    [ "$status" -ne 0 ] && [ ${#started[@]} -gt 0 ] || return 0
    echo "slurm: the start failed; stopping what it started (${started[*]})" >&2
    for ((i = ${#started[@]} - 1; i >= 0; i--)); do stop_one "${started[i]}"; done
}

# Wait up to 30 s for a check to pass, while the daemon WHAT runs; when it
# exits or the time is up, show the end of its log and fail.
await() {
    local what=$1 log=$2 pid
    shift 2
    pid=$(cat "$dir/pids/$what" 2>/dev/null || true)
    for _ in $(seq 300); do
        "$@" >/dev/null 2>&1 && return 0
        if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
            echo "slurm: $what exited at start; the end of its output and $log:" >&2
            tail -n 20 "$dir/log/$what.out" "$log" >&2 2>/dev/null || true
            exit 3
        fi
        sleep 0.1
    done
    echo "slurm: $what not ready after 30 s; the end of $log:" >&2
    tail -n 20 "$log" >&2 || true
    exit 3
}

# Fail (exit 3) when another program listens on PORT, naming it.
port_free() {
    local port=$1 what=$2 who
    if command -v ss >/dev/null 2>&1; then
        who=$(ss -Hltnp "( sport = :$port )" 2>/dev/null | awk '{ print $4, $6 }' | head -n 3 | paste -sd ' ' -)
    elif (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        who="something on 127.0.0.1:$port"
    fi
    if [ -n "${who:-}" ]; then
        echo "slurm: port $port ($what) is taken: $who; stop that program, or give other ports with FSLAB_SLURMCTLD_PORT and FSLAB_SLURMD_PORT" >&2
        exit 3
    fi
}

write_conf() {
    local node host
    host=$(hostname -s)
    # "NodeName=HOST CPUs=2 Boards=1 ... RealMemory=24105"
    node=$(slurmd -C | head -n 1)
    if ! [[ "$node" =~ ^NodeName=[^[:space:]]+\ .*RealMemory=[0-9]+ ]]; then
        echo "slurm: slurmd -C did not describe this node, but said: $node" >&2
        exit 3
    fi
    : >"$dir/plugstack.conf"
    cat >"$dir/slurm.conf.new" <<EOF
# A single-node cluster written by scripts/slurm.sh; everything it keeps is under $dir.
ClusterName=fslab
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
PlugStackConfig=$dir/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
$node NodeAddr=127.0.0.1
PartitionName=fslab Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
    mv "$dir/slurm.conf.new" "$dir/slurm.conf"
}

# A process's start time (clock ticks after boot, field 22 of its stat):
# with the pid, it names one process, not whoever reuses the pid later.
started_at() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    # After "pid (comm) ", field 3 is the first; the start time is field 22.
    awk '{ print $20 }' <<<"$stat"
}

# Drop holders that are gone; exit 0 when one is still alive.
holders_alive() {
    local file pid alive=1
    for file in "$dir"/holders/*; do
        [ -f "$file" ] || continue
        pid=${file##*/}
        if [[ "$pid" =~ ^[0-9]+$ ]] && [ "$(started_at "$pid" || true)" = "$(cat "$file")" ]; then
            alive=0
        else
            rm -f "$file"
        fi
    done
    return $alive
}

if [ "$action" = release ] && [ ! -d "$dir" ]; then
    exit 0
fi
if [ "$action" = hold ] || [ "$action" = release ]; then
    own_folder "$dir/holders"
    exec 9>>"$dir/holders.lock"
    flock 9
    if [ "$action" = hold ]; then
        # A cluster up before the first hold is not ours to stop; one a
        # hold started is, once its last holder releases.
        if ! bash "$0" status "$dir"; then
            holders_alive || true
            : >"$dir/started-by-hold"
        fi
        when=$(started_at "$holder")
        # The daemons must not inherit the lock: it would be held while they run.
        conf=$(bash "$0" start "$dir" 9>&-)
        echo "$when" >"$dir/holders/$holder"
        echo "$conf"
    else
        rm -f "$dir/holders/$holder"
        if holders_alive; then
            echo "slurm: left running for its other holders ($(ls "$dir/holders" | grep -E '^[0-9]+$' | paste -sd ' ' -))" >&2
        elif [ -f "$dir/started-by-hold" ]; then
            bash "$0" stop "$dir" 9>&-
            rm -f "$dir/started-by-hold"
        fi
    fi
    exit 0
fi

if [ "$action" = status ]; then
    running munged >/dev/null && running slurmctld >/dev/null && running slurmd >/dev/null
    exit
fi

if [ "$action" = stop ]; then
    if [ -d "$dir/pids" ]; then
        # Jobs still running belong to this cluster: cancel them so their
        # steps end with slurmd.
        if running slurmctld >/dev/null; then
            SLURM_CONF=$dir/slurm.conf scancel --full --quiet --user=root 2>/dev/null || true
        fi
        stop_one slurmd
        stop_one slurmctld
        stop_one munged
    fi
    exit 0
fi

for tool in munged mungekey slurmctld slurmd sbatch; do
    if ! command -v "$tool" >/dev/null 2>&1 && ! [ -x "/usr/sbin/$tool" ]; then
        echo "slurm: $tool is missing (apt-get install slurmctld slurmd slurm-client munge, or scripts/setup.sh --tests)" >&2
        exit 3
    fi
done
export PATH=$PATH:/usr/sbin:/sbin

# The ports of the daemons this start would start, before anything is
# made or started (a running daemon of this DIR holds its own).
running slurmctld >/dev/null || port_free "$ctld_port" SlurmctldPort
running slurmd >/dev/null || port_free "$slurmd_port" SlurmdPort
trap undo_start EXIT

{
    for sub in pids log state spool run munge; do own_folder "$dir/$sub"; done
    if [ ! -s "$dir/munge/munge.key" ]; then
        mungekey --create --keyfile="$dir/munge/munge.key"
    fi
    start_one munged munged --foreground --force \
        --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
        --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
        --seed-file="$dir/munge/munged.seed"
    await munged "$dir/log/munged.log" munge --socket="$dir/munge/munge.socket" --no-input

    if ! running slurmctld >/dev/null; then
        write_conf
    fi
    export SLURM_CONF=$dir/slurm.conf
    start_one slurmctld slurmctld -D -f "$dir/slurm.conf"
    await slurmctld "$dir/log/slurmctld.log" scontrol ping
    start_one slurmd slurmd -D -f "$dir/slurm.conf"
    # The node is up once it takes jobs: idle, mixed or allocated.
    await slurmd "$dir/log/slurmd.log" \
        bash -c 'sinfo -h -N -o %t | grep -qE "^(idle|mix|alloc)"'
    echo "slurm: cluster up on $(hostname -s) ($(sinfo -h -N -o '%c CPUs, %m MB')), SLURM_CONF=$dir/slurm.conf"
} >&2
echo "$dir/slurm.conf"
