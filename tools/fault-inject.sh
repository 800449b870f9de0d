#!/usr/bin/env bash
# Fault injection (issue 32): runs `regress` and `run-net` under random SIGTERM, SIGKILL and SIGPIPE timings
# and file-size limits (a full disk), resumes each from its journal until it finishes (exit 0 or 1), and
# checks that the final report equals an uninterrupted run's apart from wall times and the resume tally.
#   bash tools/fault-inject.sh [ROUNDS [SEED]]     (default 12 rounds, seed 32; build/s2cosim or $S2COSIM)
# Prints one line per round and "fault-inject: N rounds, seed S: all reports equal" (exit 0), or what
# differed (exit 1).
set -euo pipefail
rounds=${1:-12}
seed=${2:-32}
cd "$(dirname "$0")/.."
bin=$(realpath "${S2COSIM:-build/s2cosim}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
RANDOM=$seed

# the two runs, uninterrupted: the smoke tasks on both backends, and a small network's blocks on QPE-DRAM
cat > "$work/small.net" <<'EOF'
network fault_small
input 16 16 4
conv 3 3 4 8 pad=same act=relu
conv 3 3 8 8 pad=same act=relu
pool max 2 2 stride=2
conv 1 1 8 8 act=relu
fc 512 10
EOF
run() {  # run KIND JSON [more options]: one run, exec'd (a signal sent to a background run reaches s2cosim)
  local kind=$1 json=$2
  shift 2
  if [[ $kind == regress ]]; then
    exec "$bin" regress vectors/smoke.csv --backend both -q --json "$json" "$@"
  else
    exec "$bin" run-net --net "$work/small.net" --backend both --json "$json" "$@"
  fi
}
for kind in regress run-net; do
  rc=0
  (run "$kind" "$work/ref_$kind.json" > /dev/null 2>&1) || rc=$?
  if (( rc > 1 )); then echo "fault-inject: the uninterrupted $kind failed (exit $rc)"; exit 1; fi
done

same() {  # same A B: the reports equal apart from wall times and the resume tally
  python3 - "$1" "$2" <<'EOF'
import json, sys
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items()
                if not (k.endswith("wall_s") or k.endswith("clocks_per_s") or k in ("speed_ratio", "resume"))}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
a, b = (strip(json.load(open(p))) for p in sys.argv[1:3])
sys.exit(0 if a == b else 1)
EOF
}

failed=0
for ((round = 1; round <= rounds; ++round)); do
  kind=$([[ $((RANDOM % 2)) == 0 ]] && echo regress || echo run-net)
  json="$work/r$round.json"
  journal="$json.jsonl"
  faults=""
  bad=""
  rc=0
  for ((attempt = 1; attempt <= 40; ++attempt)); do
    resume=()
    [[ -s $journal ]] && resume=(--resume "$journal")
    rc=0
    if ((attempt > 4)); then  # enough faults: let it finish
      (run "$kind" "$json" "${resume[@]}" > /dev/null 2>&1) || rc=$?
      faults+=" clean:$rc"
    else
      fault=$((RANDOM % 4))
      delay=$(printf '0.%03d' $((RANDOM % 900)))
      case $fault in
        0 | 1)
          sig=$([[ $fault == 0 ]] && echo TERM || echo KILL)
          (run "$kind" "$json" "${resume[@]}" > /dev/null 2>&1) &
          pid=$!
          sleep "$delay"
          kill -s "$sig" "$pid" 2> /dev/null || true
          { wait "$pid"; } 2> /dev/null || rc=$?  # (bash's "Killed" notice)
          faults+=" $sig@${delay}s:$rc"
          ;;
        2)  # standard output's reader leaves after the delay
          set +o pipefail
          rm -f "$work/rc"
          {
            r=0
            (run "$kind" "$json" "${resume[@]}" 2> /dev/null) || r=$?
            echo "rc=$r" > "$work/rc"
          } | {
            sleep "$delay"
            true
          }
          set -o pipefail
          rc=$(sed 's/rc=//' "$work/rc")
          faults+=" PIPE@${delay}s:$rc"
          ;;
        3)  # a full disk: files may grow to a few KB
          kb=$((2 + RANDOM % 24))
          (ulimit -f "$kb"; run "$kind" "$json" "${resume[@]}" > /dev/null 2>&1) || rc=$?
          faults+=" FSIZE${kb}K:$rc"
          ;;
      esac
    fi
    # a resume is never bad input, and nothing aborts: 0, 1, 3 (an output not written) or 128 + a signal
    case $rc in 0 | 1 | 3 | 129 | 130 | 137 | 141 | 143) ;; *) bad+=" exit $rc" ;; esac
    if [[ -n ${FAULT_DEBUG:-} ]]; then
      echo "attempt $attempt rc=$rc: $(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r.get('stopped_by_signal'), r.get('results',{}).get('stopped_by_signal'))" "$json" 2>&1 | tail -1)" >&2
    fi
    if ((rc == 0 || rc == 1)) && [[ -s $json ]] && python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(1 if r.get('stopped_by_signal') or r.get('results',{}).get('stopped_by_signal') else 0)" "$json" 2> /dev/null; then
      break
    fi
  done
  if [[ -n $bad ]]; then
    echo "round $round ($kind):$faults: unexpected$bad"
    failed=$((failed + 1))
  elif same "$work/ref_$kind.json" "$json"; then
    echo "round $round ($kind):$faults: equal"
  else
    echo "round $round ($kind):$faults: DIFFERS from the uninterrupted run"
    failed=$((failed + 1))
  fi
done
if ((failed)); then
  echo "fault-inject: $rounds rounds, seed $seed: $failed reports differ"
  exit 1
fi
echo "fault-inject: $rounds rounds, seed $seed: all reports equal"
