#!/usr/bin/env bash
# Tests submit.sh, regress-array.sbatch and merge.sbatch against a real single-node Slurm cluster on this
# machine, which the script starts and stops itself:
#
#   tools/slurm/test-slurm.sh [VECTORS.csv] [--shards N] [--timeout S] [--keep] [-- EXTRA REGRESS ARGS...]
#
# Defaults: vectors/smoke.csv, 3 shards, a 900 s limit for the jobs, and `--backend model` as the extra
# regress arguments (give `--` alone for none, or e.g. `-- --backend both`).
#
# 1. Installs what is missing with apt-get (Debian 12: slurmctld slurmd slurm-client munge jq), with a
#    temporary policy-rc.d so that the packages' init scripts start nothing.
# 2. Makes a temporary directory holding everything: a munge key, munged's socket, slurm.conf, the state and
#    spool directories, the logs, the reports. Starts munged, slurmctld and slurmd on it (SLURM_CONF points
#    there; free ports from 6817 up) and waits until sinfo shows the node idle.
# 3. Runs submit.sh VECTORS OUT --shards N -- EXTRA, waits for the merge job, then runs the same vectors
#    unsharded (same binary, same arguments, same directory) and compares merged.json with unsharded.json
#    after deleting with jq every key named *wall_s, speed_ratio, model_clocks_per_s or rtl_clocks_per_s (the
#    wall times and what is made of them). Also checks that each shard holds the tasks k with k % N == I-1.
#    Then the same for run-net (submit.sh --run-net, 3 shards): vectors/mini_chip.net on the mini chip's model.
# 4. Prints PASS or FAIL (with a diff), stops every daemon it started (trap on EXIT) and deletes the
#    temporary directory (kept on failure or with --keep), prints how long it took; exits 0 or 1.
#
# Environment: S2COSIM (default build/s2cosim), TMPDIR (where the temporary directory goes).
set -euo pipefail

t0=$SECONDS
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

usage() {
  sed -n '5,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

vectors=vectors/smoke.csv
shards=3
timeout=900
keep=0
extra=(--backend model)
while (( $# > 0 )); do
  case $1 in
    --shards) (( $# >= 2 )) || usage; shards=$2; shift 2 ;;
    --timeout) (( $# >= 2 )) || usage; timeout=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) usage ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "test-slurm.sh: unknown option $1" >&2; usage ;;
    *) vectors=$1; shift ;;
  esac
done

cd "$repo"
export S2COSIM=${S2COSIM:-$repo/build/s2cosim}
[[ -x "$S2COSIM" ]] || { echo "test-slurm.sh: $S2COSIM is not an executable (build it, or set S2COSIM)" >&2; exit 1; }
[[ -f "$vectors" ]] || { echo "test-slurm.sh: no vectors file $vectors" >&2; exit 1; }

log() { printf '[test-slurm %4ds] %s\n' $(( SECONDS - t0 )) "$*"; }

# --- state the EXIT trap undoes -------------------------------------------------------------------------
tmp=
policy_rc_created=0
munged_pid='' ctld_pid='' slurmd_pid=''
user=$(id -un)
result=FAIL

# shellcheck disable=SC2317  # called from the EXIT trap
stop_pid() {  # stop_pid PID NAME: TERM, up to 10 s, then KILL
  local pid=$1 name=$2 i
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  log "$name ($pid) did not stop on TERM: KILL"
  kill -KILL "$pid" 2>/dev/null || true
}

# Our processes that outlived the daemons (a job's slurmstepd and its script, if the job could not be
# cancelled in time): every process but this shell whose environment holds our SLURM_CONF.
# shellcheck disable=SC2317  # called from the EXIT trap
leftover_pids() {
  local p env
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [[ "$p" == "$$" || "$p" == "$BASHPID" ]] && continue
    env=$(tr '\0' '\n' 2>/dev/null < "/proc/$p/environ") || continue
    grep -qxF "SLURM_CONF=$tmp/slurm.conf" <<< "$env" && echo "$p"
  done
  return 0
}

# shellcheck disable=SC2317  # the EXIT trap
cleanup() {
  local rc=$? i pids
  set +e
  if (( policy_rc_created )); then rm -f /usr/sbin/policy-rc.d; fi
  if [[ -n "$ctld_pid" ]] && kill -0 "$ctld_pid" 2>/dev/null; then
    if [[ -n "$(timeout 5 squeue -h -o %i 2>/dev/null)" ]]; then
      log "cancelling the jobs still queued or running"
      timeout 10 scancel --user="$user" 2>/dev/null
      for ((i = 0; i < 30; i++)); do
        [[ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ]] && break
        sleep 1
      done
    fi
    timeout 10 scontrol shutdown > /dev/null 2>&1
  fi
  stop_pid "$slurmd_pid" slurmd
  stop_pid "$ctld_pid" slurmctld
  stop_pid "$munged_pid" munged
  if [[ -n "$tmp" ]]; then
    mapfile -t pids < <(leftover_pids)
    if (( ${#pids[@]} > 0 )); then
      log "stopping leftover job processes ${pids[*]}"
      kill -TERM "${pids[@]}" 2>/dev/null
      sleep 2
      mapfile -t pids < <(leftover_pids)
      (( ${#pids[@]} == 0 )) || kill -KILL "${pids[@]}" 2>/dev/null
    fi
  fi
  if [[ -n "$tmp" && -d "$tmp" ]]; then
    if (( rc == 0 && ! keep )); then rm -rf "$tmp"; else echo "test-slurm.sh: kept $tmp (logs in $tmp/log, reports in $tmp/out)"; fi
  fi
  echo "test-slurm.sh: $result, took $(( SECONDS - t0 )) s"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- 1. packages ------------------------------------------------------------------------------------------
need=()
for pair in slurmctld:slurmctld slurmd:slurmd sbatch:slurm-client squeue:slurm-client munged:munge munge:munge jq:jq; do
  command -v "${pair%%:*}" > /dev/null || need+=("${pair#*:}")
done
if (( ${#need[@]} > 0 )); then
  mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
  (( EUID == 0 )) || { echo "test-slurm.sh: missing ${need[*]}; run as root to install them with apt-get" >&2; exit 1; }
  log "installing ${need[*]}"
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then  # the packages' init scripts must start no daemon
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    policy_rc_created=1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" > /dev/null
  if (( policy_rc_created )); then rm -f /usr/sbin/policy-rc.d; policy_rc_created=0; fi
  log "installed"
fi

# No setting of an outer cluster (or of a job this runs in) may leak into the test's commands.
while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^(SLURM|SBATCH|SALLOC|SRUN|SQUEUE|SINFO)_' || true)

# --- 2. a one-node cluster in a temporary directory -----------------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/s2cosim-slurm.XXXXXX")
chmod 755 "$tmp"  # munged wants its socket's directories searchable by all
mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/log"
chmod 755 "$tmp/munge"
sock=$tmp/munge/munge.socket

if command -v mungekey > /dev/null; then
  mungekey --create --keyfile="$tmp/munge/munge.key"
else
  dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
fi
chmod 600 "$tmp/munge/munge.key"
munged --foreground --socket="$sock" --key-file="$tmp/munge/munge.key" --log-file="$tmp/log/munged.log" \
  --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/munged.seed" < /dev/null > "$tmp/log/munged.out" 2>&1 &
munged_pid=$!
for ((i = 0; ; i++)); do
  munge --socket="$sock" --no-input 2>/dev/null | unmunge --socket="$sock" > /dev/null 2>&1 && break
  if (( i >= 100 )) || ! kill -0 "$munged_pid" 2>/dev/null; then
    echo "test-slurm.sh: munged did not come up:" >&2; cat "$tmp/log/munged.out" "$tmp/log/munged.log" >&2; exit 1
  fi
  sleep 0.1
done
log "munged up ($munged_pid), socket $sock"

port_free() { ! (exec 3<> "/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=6817
while ! port_free "$port" || ! port_free $(( port + 1 )); do
  port=$(( port + 2 ))
  (( port < 6900 )) || { echo "test-slurm.sh: no two free ports in 6817..6900" >&2; exit 1; }
done

node=$(hostname -s 2>/dev/null || uname -n)
node=${node%%.*}
hw=$(slurmd -C 2>/dev/null | head -1 || true)
cpus=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<< "$hw")
mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<< "$hw")
cpus=${cpus:-$(nproc)}
mem=${mem:-1024}
(( mem > 1024 )) && mem=1024  # MB the node offers: any value <= the real memory; memory is not scheduled (CR_CPU)

export SLURM_CONF=$tmp/slurm.conf
cat > "$SLURM_CONF" <<EOF
# written by tools/slurm/test-slurm.sh: a single-node cluster with every file under $tmp
ClusterName=s2cosimtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$(( port + 1 ))
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool/slurmd.%n
SlurmctldPidFile=$tmp/state/slurmctld.pid
SlurmdPidFile=$tmp/spool/slurmd.%n.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# no cgroups: they are not there (or not ours) in a container, and nothing here needs them
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
MinJobAge=3600
KillWait=5
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
mkdir -p "$tmp/spool/slurmd.$node"

slurmctld -D -f "$SLURM_CONF" < /dev/null > "$tmp/log/slurmctld.out" 2>&1 &
ctld_pid=$!
slurmd -D -f "$SLURM_CONF" < /dev/null > "$tmp/log/slurmd.out" 2>&1 &
slurmd_pid=$!
state=
for ((i = 0; ; i++)); do
  state=$(timeout 5 sinfo -h -N -n "$node" -o %T 2>/dev/null || true)
  [[ "$state" == idle ]] && break
  if (( i >= 60 )) || ! kill -0 "$ctld_pid" 2>/dev/null || ! kill -0 "$slurmd_pid" 2>/dev/null; then
    echo "test-slurm.sh: node $node is not idle after ${i} s (state '${state}')" >&2
    sinfo -R 2>&1 >&2 || true
    tail -n 20 "$tmp"/log/slurm*.log "$tmp"/log/slurm*.out >&2 || true
    exit 1
  fi
  sleep 1
done
log "slurmctld ($ctld_pid) and slurmd ($slurmd_pid) up on ports $port/$(( port + 1 )): node $node idle, $cpus CPUs"

# --- 3. each sharded run through submit.sh, then unsharded, and the comparison ------------------------
job_state() { timeout 10 scontrol -o show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -1; }

out=
fail() {
  echo "FAIL: $*"
  for f in "$out"/logs/*.out; do echo "--- $f"; tail -n 30 "$f"; done
  exit 1
}

strip='walk(if type == "object" then with_entries(select(.key | (endswith("wall_s") or . == "speed_ratio"
  or . == "model_clocks_per_s" or . == "rtl_clocks_per_s") | not))
  else . end)'

# sharded_equals_unsharded NAME SUBMIT ARGS... :: UNSHARDED S2COSIM ARGS...: submit.sh SUBMIT ARGS (their
# OUTDIR is $tmp/NAME), wait for the merge job, run s2cosim UNSHARDED ARGS --json $tmp/NAME.unsharded.json, and
# compare the merged report with it, wall times deleted; also each shard's round-robin share of the checks.
sharded_equals_unsharded() {
  local name=$1
  shift
  local submit_args=() unsharded=()
  while (( $# > 0 )) && [[ $1 != :: ]]; do submit_args+=("$1"); shift; done
  shift
  unsharded=("$@")
  out=$tmp/$name
  log "$name: submit.sh ${submit_args[*]}"
  "$here/submit.sh" "${submit_args[@]}"
  # shellcheck source=/dev/null
  source "$out/submit.env"
  shards=${SHARDS:?}

  local last='' deadline=$(( SECONDS + timeout )) state queue
  while :; do
    state=$(job_state "$MERGE_JOB_ID")
    case $state in
      COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|BOOT_FAIL|DEADLINE) break ;;
    esac
    queue=$(timeout 10 squeue -h -o '%i:%t' 2>/dev/null | tr '\n' ' ' || true)
    [[ "$queue" != "$last" ]] && log "queue: ${queue:-(empty)}"
    last=$queue
    if (( SECONDS > deadline )); then
      echo "test-slurm.sh: the jobs did not finish within $timeout s" >&2
      state=TIMEOUT_WAITING
      break
    fi
    sleep 1
  done
  log "$name: merge job $MERGE_JOB_ID: $state"
  timeout 10 scontrol -o show job "$ARRAY_JOB_ID" 2>/dev/null |
    sed -n 's/.*ArrayTaskId=\([^ ]*\).*JobState=\([A-Z_]*\).*ExitCode=\([0-9:]*\).*/  shard \1: \2, exit \3/p' | sort -n -k2 || true

  [[ "$state" == COMPLETED ]] || fail "$name: merge job $MERGE_JOB_ID ended $state"
  local f i
  for f in merged.json merged.html merged.xml; do [[ -s "$out/$f" ]] || fail "$name: no $out/$f"; done
  for ((i = 1; i <= shards; i++)); do
    for f in "shard_$i.json" "shard_$i.xml"; do [[ -s "$out/$f" ]] || fail "$name: no $out/$f"; done
  done

  local single=$tmp/$name.unsharded.json rc=0
  log "$name: unsharded: $S2COSIM ${unsharded[*]} --json $single"
  "$S2COSIM" "${unsharded[@]}" --json "$single" > "$tmp/log/$name.unsharded.out" 2>&1 || rc=$?
  (( rc <= 1 )) || { cat "$tmp/log/$name.unsharded.out"; fail "$name: unsharded run exited $rc"; }
  jq -S "$strip" "$out/merged.json" > "$tmp/$name.merged.stripped.json"
  jq -S "$strip" "$single" > "$tmp/$name.unsharded.stripped.json"

  # Round robin: shard I holds the tasks k with k % N == I-1 of the unsharded run, in order (checked when the
  # reports list their tasks as .tasks[].id or .results.checks[].name).
  local ids='[(.tasks // .results.checks // [])[] | (.id // .name)]' all want got
  all=$(jq -c "$ids" "$single")
  if [[ "$all" != "[]" ]]; then
    for ((i = 1; i <= shards; i++)); do
      want=$(jq -c --argjson i "$i" --argjson n "$shards" '[to_entries[] | select(.key % $n == $i - 1) | .value]' <<< "$all")
      got=$(jq -c "$ids" "$out/shard_$i.json")
      [[ "$got" == "$want" ]] || fail "$name: shard $i/$shards holds $got, round robin wants $want"
    done
    log "$name: each shard holds its round-robin share of the $(jq length <<< "$all") checks"
  fi
  if ! diff -u "$tmp/$name.unsharded.stripped.json" "$tmp/$name.merged.stripped.json" > "$tmp/$name.diff.txt"; then
    echo "FAIL: $name: merged.json differs from the unsharded run's (- unsharded, + merged; wall times deleted):"
    head -n 200 "$tmp/$name.diff.txt"
    exit 1
  fi
  echo "$name: the merged report of $shards shards equals the unsharded run's (wall times aside)"
}

sharded_equals_unsharded regress "$vectors" "$tmp/regress" --shards "$shards" -- "${extra[@]}" \
  :: regress "$vectors" -q "${extra[@]}"
# run-net's block runs through the same array and merge jobs (submit.sh --run-net): a small network on the mini chip
net_args=(--net vectors/mini_chip.net --target s2 --preset mini --backend model)
sharded_equals_unsharded run-net --run-net "$tmp/run-net" --shards 3 -- "${net_args[@]}" :: run-net "${net_args[@]}"
result=PASS
echo "PASS: every merged report equals its unsharded run's (wall times aside)"
exit 0
