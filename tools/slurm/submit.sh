#!/usr/bin/env bash
# Runs a regression as a Slurm job array of N shards plus a merge job that waits for all of them.
#
#   tools/slurm/submit.sh VECTORS.csv OUTDIR [--shards N] [--force] [-- EXTRA REGRESS ARGS...]
#   tools/slurm/submit.sh --run-net OUTDIR [--shards N] [--force] -- RUN-NET ARGS...
#
# e.g. tools/slurm/submit.sh vectors/random_suite.csv runs/rs1 --shards 16 -- --backend both --flaw sram2clk
#      tools/slurm/submit.sh --run-net runs/vgg16 --shards 32 -- --net vgg16 --target s2 --backend both
# (--run-net: shard I runs `s2cosim run-net --shard I/N ... RUN-NET ARGS`, the block runs k with k % N == I-1;
# N defaults to 8 and is not cut: a shard with no block run reports none.)
#
# Shard I of N runs the task indices k with k % N == I-1 (round robin) and writes OUTDIR/shard_I.json and
# OUTDIR/shard_I.xml; the merge job writes OUTDIR/merged.json, merged.html and merged.xml. Job logs go to
# OUTDIR/logs/. N defaults to 8 and is cut to the number of tasks in VECTORS.csv.
#
# Environment:
#   S2COSIM               the s2cosim binary (default: build/s2cosim of this repository); must be reachable
#                         from the compute nodes under the same path (a shared file system)
#   S2COSIM_ARGS          more regress arguments, split on whitespace (put before the ones after --)
#   S2COSIM_SBATCH_FLAGS  extra sbatch flags for both jobs, split on whitespace (e.g. "--time=1:00:00 --qos=short")
#   SBATCH_PARTITION, SBATCH_ACCOUNT, SBATCH_TIMELIMIT, ...   read by sbatch itself, for both jobs
# Relative paths (VECTORS.csv, S2COSIM) are taken from the current directory, which is also the jobs'
# working directory; the reports record the vectors path as given.
#
# Prints the two job ids and where the merged report will be, and writes them to OUTDIR/submit.env.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

usage() {
  sed -n '2,4p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  echo "see the comment at the top of $0, or tools/slurm/README.md" >&2
  exit 2
}

positional=()
shards=
force=0
command=regress
extra=()
while (( $# > 0 )); do
  case $1 in
    --shards) (( $# >= 2 )) || usage; shards=$2; shift 2 ;;
    --shards=*) shards=${1#--shards=}; shift ;;
    --force) force=1; shift ;;
    --run-net) command=run-net; shift ;;
    -h|--help) usage ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "submit.sh: unknown option $1 (regress arguments go after --)" >&2; usage ;;
    *) positional+=("$1"); shift ;;
  esac
done
if [[ $command == run-net ]]; then
  (( ${#positional[@]} == 1 )) || usage
  (( ${#extra[@]} > 0 )) || { echo "submit.sh: --run-net needs run-net's arguments after -- (at least --net)" >&2; exit 2; }
  vectors=
  out=${positional[0]}
else
  (( ${#positional[@]} == 2 )) || usage
  vectors=${positional[0]}
  out=${positional[1]}
  [[ -f "$vectors" ]] || { echo "submit.sh: no vectors file $vectors" >&2; exit 2; }
fi
s2cosim=${S2COSIM:-$repo/build/s2cosim}
[[ -x "$s2cosim" ]] || { echo "submit.sh: $s2cosim is not an executable (build it, or set S2COSIM)" >&2; exit 2; }
command -v sbatch > /dev/null || { echo "submit.sh: sbatch not found: not on a Slurm cluster?" >&2; exit 2; }

# Tasks: the CSV's rows less comments, blank lines and the header (run-net: not known before it runs).
ntasks=0
if [[ -n "$vectors" ]]; then
  ntasks=$(grep -cvE '^[[:space:]]*(#|$)' "$vectors" || true)
  ntasks=$(( ntasks > 0 ? ntasks - 1 : 0 ))
fi
if [[ -z "$shards" ]]; then
  shards=8
fi
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: --shards wants a positive integer, not '$shards'" >&2; exit 2; }
if (( ntasks > 0 && shards > ntasks )); then
  echo "submit.sh: $vectors has $ntasks tasks: using $ntasks shards, not $shards"
  shards=$ntasks
fi

mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
shopt -s nullglob
old=("$out"/shard_*.json "$out"/shard_*.xml "$out"/shard_*.rc "$out"/shard_*.json.jsonl "$out"/merged.*)
shopt -u nullglob
if (( ${#old[@]} > 0 )); then
  if (( force )); then
    rm -f -- "${old[@]}"
  else
    echo "submit.sh: $out already holds reports of a run (${old[0]} ...): use another OUTDIR, or --force to delete them" >&2
    exit 2
  fi
fi

read -r -a sbatch_flags <<< "${S2COSIM_SBATCH_FLAGS:-}"
# The jobs get this environment (sbatch's default --export=ALL).
export S2COSIM=$s2cosim S2COSIM_VECTORS=$vectors S2COSIM_OUT=$out S2COSIM_REPO=$repo S2COSIM_SHARDS=$shards
export S2COSIM_COMMAND=$command
export S2COSIM_ARGS=${S2COSIM_ARGS:-}

array_id=$(sbatch --parsable --array="1-$shards" --chdir="$PWD" --job-name="s2cosim-$command" \
  --output="$out/logs/regress_%A_%a.out" "${sbatch_flags[@]}" "$here/regress-array.sbatch" "${extra[@]}")
array_id=${array_id%%;*}
merge_id=$(sbatch --parsable --dependency="afterany:$array_id" --kill-on-invalid-dep=yes --chdir="$PWD" \
  --job-name=s2cosim-merge --output="$out/logs/merge_%j.out" "${sbatch_flags[@]}" "$here/merge.sbatch")
merge_id=${merge_id%%;*}

cat > "$out/submit.env" <<ENV
ARRAY_JOB_ID=$array_id
MERGE_JOB_ID=$merge_id
SHARDS=$shards
VECTORS=$vectors
COMMAND=$command
ENV
what=${vectors:-run-net ${extra[*]}}
echo "$command array job: $array_id ($shards shards of $what; logs $out/logs/regress_${array_id}_*.out)"
echo "merge job:         $merge_id (after the array ends; log $out/logs/merge_$merge_id.out)"
echo "merged report:     $out/merged.json, $out/merged.html, $out/merged.xml"
echo "watch: squeue -j $array_id,$merge_id"
