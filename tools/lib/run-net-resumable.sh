# shellcheck shell=bash
# Sourced by tools/design-report.sh and tools/regress-networks.sh: one run-net run that survives interruptions,
# and a few of them at a time.
#
#   run_net_resumable LABEL BASE S2COSIM RUN-NET ARGS...
#
# Runs `S2COSIM run-net RUN-NET ARGS --json BASE.json`, its console into BASE.txt. Kept when BASE.json is there
# (a finished run), resumed from BASE.json.jsonl when only the journal is (an interrupted one). Exit 1 of
# run-net (a block run did not pass) is a result: the report is written and says which. Returns 1, after saying
# so on stderr as LABEL, when run-net failed otherwise (and removes a partial BASE.json).
run_net_resumable() {
  local label=$1 base=$2 s2=$3
  shift 3
  if [ -s "$base.json" ]; then echo "$label: kept ($base.json)"; return 0; fi
  local resume=()
  [ -s "$base.json.jsonl" ] && resume=(--resume "$base.json.jsonl")
  echo "$label: running (console in $base.txt)"
  local rc=0
  "$s2" run-net "$@" --json "$base.json" "${resume[@]}" > "$base.txt" 2>&1 || rc=$?
  if [ $rc -gt 1 ] || [ ! -s "$base.json" ]; then
    echo "$label: run-net exited $rc (see $base.txt); run the script again to resume" >&2
    rm -f "$base.json"
    return 1
  fi
}

# At most J runs at a time, each in the background:
#   start_job J COMMAND ARGS...   waits while J of the jobs started here run, then starts COMMAND
#   wait_jobs                     waits for every job started; returns 1 if any failed
job_pids=()
start_job() {
  local j=$1
  shift
  while [ "$(jobs -rp | wc -l)" -ge "$j" ]; do sleep 1; done
  "$@" &
  job_pids+=($!)
}
wait_jobs() {
  local p failed=0
  for p in "${job_pids[@]}"; do wait "$p" || failed=1; done
  job_pids=()
  return $failed
}
