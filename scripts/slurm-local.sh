#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for testing `headroom sweep --slurm` against
# the real scheduler: munged, slurmctld and slurmd from the distribution's packages
# (Debian: munge slurmctld slurmd slurm-client), with their state, logs and configuration
# in DIR. Run as root (slurmd starts jobs as their submitting user).
#
#   scripts/slurm-local.sh start DIR   starts the daemons and waits until the node is idle;
#                                      prints the SLURM_CONF to export for sbatch/squeue
#   scripts/slurm-local.sh stop DIR    stops them (munged is left running: others may use it)
#
# The ports (6917, 6918) are not Slurm's defaults, so that a real cluster on the machine is
# not disturbed.
set -euo pipefail
cmd="${1:-}"
dir="${2:-}"
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop DIR" >&2
  exit 2
fi
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
conf="$dir/slurm.conf"

stop() {
  for d in slurmd slurmctld; do
    if [ -s "$dir/$d.pid" ]; then
      kill "$(cat "$dir/$d.pid")" 2>/dev/null || true
    fi
  done
  for _ in $(seq 50); do
    alive=0
    for d in slurmd slurmctld; do
      if [ -s "$dir/$d.pid" ] && kill -0 "$(cat "$dir/$d.pid")" 2>/dev/null; then alive=1; fi
    done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  rm -f "$dir/slurmd.pid" "$dir/slurmctld.pid"
}

case "$cmd" in
  stop)
    stop
    exit 0
    ;;
  start) ;;
  *)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac

for tool in munged slurmctld slurmd sbatch squeue sinfo; do
  if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$tool" ]; then
    echo "$tool is missing (Debian: apt-get install munge slurmctld slurmd slurm-client)" >&2
    exit 1
  fi
done
export PATH="$PATH:/usr/sbin"

# munge: the key the package made, a socket directory, the daemon as user munge.
if ! munge -n >/dev/null 2>&1; then
  if [ ! -s /etc/munge/munge.key ]; then
    mungekey --create >/dev/null 2>&1 || create-munge-key >/dev/null 2>&1
    chown munge:munge /etc/munge/munge.key
  fi
  mkdir -p /run/munge && chown munge:munge /run/munge
  runuser -u munge -- munged
  for _ in $(seq 50); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n >/dev/null
fi

stop
node="$(hostname -s)"
cpus="$(nproc)"
mem_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 9 / 10 ))
mkdir -p "$dir/state" "$dir/spool" "$dir/log"
cat > "$conf" <<EOF
ClusterName=headroom-local
SlurmctldHost=$node
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=6917
SlurmdPort=6918
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=none
MinJobAge=600
DefMemPerCPU=512
NodeName=$node CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$conf"
slurmctld -f "$conf"
slurmd -f "$conf"
for _ in $(seq 100); do
  if sinfo --noheader --format=%t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
    echo "SLURM_CONF=$conf"
    exit 0
  fi
  sleep 0.2
done
echo "the node did not become idle; logs in $dir/log" >&2
sinfo >&2 || true
exit 1
