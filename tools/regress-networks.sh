#!/usr/bin/env bash
# Every block of VGG-16 and ResNet-50 in every strategy on the chip, on both backends, in one command:
#   bash tools/regress-networks.sh [--out DIR] [--net NET ...] [--preset P] [--backend B] [--shards N] [--jobs J]
#                                  [--slurm] [-- MORE RUN-NET ARGS]
# Defaults: DIR network-regress/, nets vgg16 resnet50, preset prototype, backend both, N 1, J 1.
# Each network's block runs (run-net without --whole: every block in nofuse_noreuse, fuse_noreuse and fuse_reuse)
# are dealt round robin into N shards (run-net --shard I/N), J shards at a time on this machine; each shard is
# kept when its report is there and resumed from its journal when interrupted (run the script again to go on);
# then the shards are merged (s2cosim merge) into DIR/NET.json, .html, .xml and a table of every block run's
# wall time per backend goes to DIR/NET-wall-times.md (read with python3).
# --slurm: submits each network as a Slurm job array of N shards and a merge job instead (tools/slurm/submit.sh
# --run-net DIR/NET --shards N); run the script again without --slurm once they are done for the tables.
# Each shard's chip RTL uses --threads (default: every core); with J > 1 give e.g. `-- --threads 1`.
# Needs build/s2cosim (bash tools/build.sh). VGG-16 on both backends took 77 min on a 2-core machine with
# `--net vgg16 --shards 4 --jobs 2 -- --threads 1`; ResNet-50 has about three times as many block runs
# (docs/figures.md, "Every block in every strategy on both backends").
set -euo pipefail
cd "$(dirname "$0")/.."
out=network-regress
nets=()
preset=prototype
backend=both
shards=1
jobs=1
slurm=0
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="${2:?--out needs a directory}"; shift 2 ;;
    --net) nets+=("${2:?--net needs a network}"); shift 2 ;;
    --preset) preset="${2:?--preset needs a chip preset}"; shift 2 ;;
    --backend) backend="${2:?--backend needs model, rtl or both}"; shift 2 ;;
    --shards) shards="${2:?--shards needs a number}"; shift 2 ;;
    --jobs) jobs="${2:?--jobs needs a number}"; shift 2 ;;
    --slurm) slurm=1; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "regress-networks.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#nets[@]} -gt 0 ] || nets=(vgg16 resnet50)
for n in "$shards" "$jobs"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "regress-networks.sh: '$n': expected a number >= 1 (--shards, --jobs)" >&2; exit 2; }
done
s2=build/s2cosim
[ -x $s2 ] || { echo "regress-networks.sh: $s2 not built (bash tools/build.sh)" >&2; exit 2; }
mkdir -p "$out"

run_args() {  # the run-net arguments of network $1
  echo "--net" "$1" "--target" "s2" "--preset" "$preset" "--backend" "$backend"
}
name_of() { local n; n=$(basename "$1"); echo "${n%.*}"; }

if [ $slurm -eq 1 ]; then
  for net in "${nets[@]}"; do
    read -r -a args <<< "$(run_args "$net")"
    tools/slurm/submit.sh --run-net "$out/$(name_of "$net")" --shards "$shards" -- "${args[@]}" "${extra[@]}"
  done
  echo "regress-networks.sh: submitted; once the jobs are done, run the script again without --slurm (same --out, --shards)"
  exit 0
fi

# one shard: NET I; kept when its report is there, resumed when only its journal is
# shellcheck source=tools/lib/run-net-resumable.sh
source tools/lib/run-net-resumable.sh
run_shard() {
  local net=$1 i=$2
  local dir args
  dir="$out/$(name_of "$net")"
  mkdir -p "$dir"
  read -r -a args <<< "$(run_args "$net")"
  run_net_resumable "regress-networks.sh: $net shard $i/$shards" "$dir/shard_$i" "$s2" "${args[@]}" --shard "$i/$shards" \
    --junit "$dir/shard_$i.xml" "${extra[@]}"
}

for net in "${nets[@]}"; do
  for ((i = 1; i <= shards; i++)); do start_job "$jobs" run_shard "$net" "$i"; done
done
wait_jobs || exit 1

status=0
for net in "${nets[@]}"; do
  name=$(name_of "$net")
  dir="$out/$name"
  reports=()
  for ((i = 1; i <= shards; i++)); do reports+=("$dir/shard_$i.json"); done
  rc=0
  $s2 merge --json "$out/$name.json" --html "$out/$name.html" --junit "$out/$name.xml" "${reports[@]}" || rc=$?
  [ $rc -le 1 ] || { echo "regress-networks.sh: merging $name's shards failed ($rc)" >&2; exit $rc; }
  [ $rc -eq 0 ] || status=1
  python3 - "$out/$name.json" "$out/$name-wall-times.md" "$(date -u +%Y-%m-%d)" "$(nproc)" "$(git rev-parse --short HEAD 2>/dev/null || echo '?')" "$jobs" <<'EOF'
import json, sys
report, table, date, cores, commit, jobs = sys.argv[1:7]
j = json.load(open(report))
ops = j["operations"]
rows, model_s, rtl_s = [], 0.0, 0.0
for o in ops:
    m, r = o.get("model_wall_s"), o.get("rtl_wall_s")
    model_s += m or 0
    rtl_s += r or 0
    cell = lambda v: "-" if v is None else f"{v:.1f}"
    rows.append(f"| {o['name']} | {o['strategy']} | {o.get('status', '?')} | {cell(m)} | {cell(r)} |")
sim = j.get("rtl_simulation", {})
title = j.get("results", {}).get("title", j["network"])
with open(table, "w") as f:
    f.write(f"{title}: {len(ops)} block runs, {date}, {cores} cores, {jobs} shard(s) at a time, commit {commit}"
            f"{', chip RTL on ' + str(sim.get('threads')) + ' thread(s), eval ' + str(sim.get('eval')) if sim else ''}\n\n")
    f.write("| block | strategy | status | model s | RTL s |\n| --- | --- | --- | ---: | ---: |\n")
    f.write("\n".join(rows) + "\n")
    f.write(f"| all | | | {model_s:.0f} | {rtl_s:.0f} |\n")
print(f"{j['network']}: {len(ops)} block runs, model {model_s:.0f} s, RTL {rtl_s:.0f} s wall (summed over the shards); "
      f"table in {table}")
EOF
done
exit $status
