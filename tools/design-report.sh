#!/usr/bin/env bash
# The thesis's question (5.4) in one command: runs each network whole on the chip model in each MAC shape and
# all three strategies with energy (run-net --whole --energy), synthesizes the PE per shape (tools/synth.sh,
# if Yosys is installed), and puts it all side by side (s2cosim design-report: table, JSON, CSV, HTML).
#   bash tools/design-report.sh [--out DIR] [--net NET ...] [--mac SHAPE ...] [--preset P] [--jobs N] [--energy TABLE]
# Defaults: DIR design-report/, nets vgg16 resnet50, shapes 16x4 16x2 8x4, preset prototype, N = cores.
# Run it again to go on: a finished run is kept, an interrupted one resumes from its journal (DIR/NET-SHAPE.json.jsonl).
# Needs build/s2cosim (bash tools/build.sh). The six runs take about 100 CPU-minutes, an hour on 2 cores (docs/figures.md).
set -euo pipefail
cd "$(dirname "$0")/.."
out=design-report
nets=()
macs=()
preset=prototype
jobs=$(nproc)
energy=default
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="${2:?--out needs a directory}"; shift 2 ;;
    --net) nets+=("${2:?--net needs a network}"); shift 2 ;;
    --mac) macs+=("${2:?--mac needs COLSxROWS}"); shift 2 ;;
    --preset) preset="${2:?--preset needs a chip preset}"; shift 2 ;;
    --jobs) jobs="${2:?--jobs needs a number}"; shift 2 ;;
    --energy) energy="${2:?--energy needs a table (default or a JSON file)}"; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "design-report.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#nets[@]} -gt 0 ] || nets=(vgg16 resnet50)
[ ${#macs[@]} -gt 0 ] || macs=(16x4 16x2 8x4)
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "design-report.sh: --jobs $jobs: expected a number >= 1" >&2; exit 2; }
s2=build/s2cosim
[ -x $s2 ] || { echo "design-report.sh: $s2 not built (bash tools/build.sh)" >&2; exit 2; }
mkdir -p "$out"

# one run: NET SHAPE; kept when its report is there, resumed when only its journal is
# shellcheck source=tools/lib/run-net-resumable.sh
source tools/lib/run-net-resumable.sh
run_one() {
  local net=$1 mac=$2
  local name
  name=$(basename "$net")
  # vgg16-16x4, or tiny_cnn-8x4 for vectors/nets/tiny_cnn.onnx
  run_net_resumable "design-report.sh: $net $mac" "$out/${name%.*}-$mac" "$s2" --net "$net" --target s2 --preset "$preset" \
    --whole --strategy nofuse_noreuse,fuse_noreuse,fuse_reuse --mac "$mac" --energy="$energy"
}

for net in "${nets[@]}"; do
  for mac in "${macs[@]}"; do start_job "$jobs" run_one "$net" "$mac"; done
done
wait_jobs || exit 1

synth=()
if [ -s "$out/synth.json" ]; then
  synth=(--synth "$out/synth.json")
elif command -v yosys > /dev/null; then
  shape_args=()
  for mac in "${macs[@]}"; do shape_args+=(--shape "$mac"); done
  bash tools/synth.sh --json "$out/synth.json" "${shape_args[@]}" > "$out/synth.txt"
  synth=(--synth "$out/synth.json")
else
  echo "design-report.sh: yosys not installed: no area (bash tools/install-deps.sh yosys)" >&2
fi
reports=()
for net in "${nets[@]}"; do
  name=$(basename "$net")
  for mac in "${macs[@]}"; do reports+=("$out/${name%.*}-$mac.json"); done
done
$s2 design-report "${reports[@]}" "${synth[@]}" --json "$out/design.json" --csv "$out/design.csv" --html "$out/design.html"
