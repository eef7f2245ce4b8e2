#!/bin/sh
# tests/dse/slurm-cluster.sh start|stop|status DIR - a one-node Slurm
# cluster on this machine, from Debian 12's slurmctld, slurmd and munge,
# run as root without systemd (docs/dse.md, "A one-node test cluster").
#
#   start   writes DIR/slurm.conf (this host, its CPU count, partition
#           `loom`), a fresh MUNGE key, and starts munged, slurmctld and
#           slurmd with their sockets, state, logs and PID files all in
#           DIR; waits until the node is idle.  Prints the SLURM_CONF to use.
#   stop    stops slurmd, slurmctld and munged (by their PID files in DIR);
#           safe to call again, or after a failed start.
#   status  sinfo through DIR's configuration.
#
# What makes it work without systemd or cgroups: ProctrackType
# proctrack/linuxproc (tracks a job's processes by parent PID, no cgroup),
# TaskPlugin task/none, no accounting, SlurmUser/SlurmdUser root (the
# daemons already run as root, so no slurm user and no chown of state
# directories), and munged with --force and its own socket and key in DIR,
# given to Slurm by AuthInfo=socket=..., so it never touches /run/munge or
# /etc/munge.  Ports 6917/6918 (not the default 6817/6818), so it does not
# meet a real Slurm on the same host.  Debian's packages install the
# daemons but do not start them here (no systemd): nothing else runs.
set -eu
cmd=${1:-}
D=${2:-}
[ -n "$cmd" ] && [ -n "$D" ] || { echo "usage: $0 start|stop|status DIR" >&2; exit 2; }
export SLURM_CONF="$D/slurm.conf"
host=$(hostname)

need() {
  for t in munged slurmctld slurmd sbatch sinfo scontrol; do
    command -v "$t" > /dev/null 2>&1 || PATH=$PATH:/usr/sbin
    command -v "$t" > /dev/null 2>&1 ||
      { echo "slurm-cluster: $t not found: install slurmctld slurmd slurm-client munge (scripts/install-deps.sh)" >&2; exit 1; }
  done
  [ "$(id -u)" = 0 ] || { echo "slurm-cluster: the daemons must start as root" >&2; exit 1; }
}

config() {
  cat > "$SLURM_CONF" <<EOF
# One-node test cluster of tests/dse/slurm-cluster.sh (docs/dse.md).
ClusterName=loomtest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.socket
SlurmctldPort=6917
SlurmdPort=6918
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=loom Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

stop_pid() { # stop_pid FILE NAME
  [ -f "$1" ] || return 0
  pid=$(cat "$1")
  if kill "$pid" 2> /dev/null; then
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2> /dev/null || break; sleep 1; done
    kill -9 "$pid" 2> /dev/null || true
  fi
  rm -f "$1"
}

case $cmd in
  start)
    need
    mkdir -p "$D/munge" "$D/state" "$D/spool"
    chmod 755 "$D/munge"
    dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 2> /dev/null
    chmod 600 "$D/munge/munge.key"
    config
    munged --force --socket="$D/munge/munge.socket" --key-file="$D/munge/munge.key" \
      --log-file="$D/munge/munged.log" --pid-file="$D/munge/munged.pid" --seed-file="$D/munge/munged.seed"
    slurmctld -c -i # -c: no old state; -i: ignore unreadable state
    slurmd -c
    for _ in $(seq 60); do
      state=$(sinfo -h -o %T 2> /dev/null || true)
      case $state in idle*) echo "SLURM_CONF=$SLURM_CONF"; exit 0 ;; esac
      sleep 1
    done
    echo "slurm-cluster: the node did not become idle in 60 s (state '$state'); logs in $D" >&2
    tail -n 5 "$D/slurmctld.log" "$D/slurmd.log" >&2 || true
    exit 1 ;;
  stop)
    stop_pid "$D/slurmd.pid"
    stop_pid "$D/slurmctld.pid"
    stop_pid "$D/munge/munged.pid" ;;
  status)
    sinfo ;;
  *)
    echo "usage: $0 start|stop|status DIR" >&2
    exit 2 ;;
esac
