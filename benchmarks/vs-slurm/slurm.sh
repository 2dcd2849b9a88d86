# Sourced by run.sh: a throw-away Slurm 22.05 on loopback (munged, slurmctld, 4 x
# `slurmd -N nX`), all in one temporary folder, no accounting. slurm_up starts it and
# records each daemon's PID; slurm_down stops exactly those.

# Debian's Slurm and munge, and gnuplot for the plot, when missing.
slurm_install() {
    local missing=""
    for b in slurmctld slurmd sbatch munged; do
        command -v "$b" >/dev/null || missing="$missing $b"
    done
    command -v gnuplot >/dev/null || missing="$missing gnuplot"
    if [ -n "$missing" ]; then
        echo "installing Slurm (missing:$missing)"
        apt-get update >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y slurm-wlm slurmctld slurmd \
            slurm-client munge gnuplot-nox >/dev/null
    fi
}

# slurm_up DIR PORT: Slurm's controller on PORT, its nodes on PORT+1..PORT+4.
slurm_up() {
    SLURM_DIR=$1
    local port=$2 host cpus mem nodes="" i
    mkdir -p "$SLURM_DIR"/etc "$SLURM_DIR"/state "$SLURM_DIR"/log "$SLURM_DIR"/munge
    chmod 700 "$SLURM_DIR/munge"
    host=$(hostname -s)
    cpus=$(nproc)
    mem=$(awk '/^MemTotal/ { print int($2 / 1024 / 8) }' /proc/meminfo)
    for i in 1 2 3 4; do
        mkdir -p "$SLURM_DIR/spool/n$i" "$SLURM_DIR/tmp/n$i"
        nodes="${nodes}NodeName=n$i NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port + i))"
        nodes="$nodes CPUs=$cpus RealMemory=$mem State=UNKNOWN
"
    done
    # config_overrides: the four names share this host's CPUs without being drained.
    cat > "$SLURM_DIR/etc/slurm.conf" <<CONF
ClusterName=vsslurm
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$SLURM_DIR/munge/munge.socket.2
CredType=cred/munge
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool/%n
TmpFS=$SLURM_DIR/tmp/%n
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd-%n.pid
SlurmctldLogFile=$SLURM_DIR/log/slurmctld.log
SlurmdLogFile=$SLURM_DIR/log/slurmd-%n.log
SlurmdParameters=config_overrides
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
MaxJobCount=200000
MaxArraySize=1001
MinJobAge=30
KillWait=5
InactiveLimit=0
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
$nodes
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
    export SLURM_CONF="$SLURM_DIR/etc/slurm.conf"
    : > "$SLURM_DIR/pids"
    dd if=/dev/urandom of="$SLURM_DIR/munge/munge.key" bs=1024 count=1 status=none
    chmod 400 "$SLURM_DIR/munge/munge.key"
    munged --foreground --force --key-file="$SLURM_DIR/munge/munge.key" \
        --socket="$SLURM_DIR/munge/munge.socket.2" --pid-file="$SLURM_DIR/munge/munged.pid" \
        --log-file="$SLURM_DIR/log/munged.log" --seed-file="$SLURM_DIR/munge/seed" \
        >/dev/null 2>&1 &
    echo $! >> "$SLURM_DIR/pids"
    for _ in $(seq 50); do [ -S "$SLURM_DIR/munge/munge.socket.2" ] && break; sleep 0.1; done
    slurmctld -D -i -f "$SLURM_CONF" >"$SLURM_DIR/log/slurmctld.out" 2>&1 &
    echo $! >> "$SLURM_DIR/pids"
    SLURMCTLD_PID=$!
    for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.2; done
    for i in 1 2 3 4; do
        slurmd -D -N "n$i" -f "$SLURM_CONF" >"$SLURM_DIR/log/slurmd-n$i.out" 2>&1 &
        echo $! >> "$SLURM_DIR/pids"
    done
    local idle=0
    for _ in $(seq 150); do
        idle=$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
        [ "$idle" -ge 4 ] && return 0
        sleep 0.2
    done
    echo "slurm: only $idle of 4 nodes idle; see $SLURM_DIR/log" >&2
    return 1
}

slurm_down() {
    [ -n "${SLURM_DIR:-}" ] && [ -f "$SLURM_DIR/pids" ] || return 0
    local pid
    for pid in $(cat "$SLURM_DIR/pids"); do kill "$pid" 2>/dev/null || true; done
    for pid in $(cat "$SLURM_DIR/pids"); do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    : > "$SLURM_DIR/pids"
}
