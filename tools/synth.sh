#!/usr/bin/env bash
# Synthesizes one PE of the QPE stand-in (rtl_stubs/pe.sv: MLA, DMA, NoC interface, task controller, the
# SRAM's port logic) with Yosys's generic flow, once per MAC-array shape (COLSxROWS, as the verilated
# models are named), and prints one table: cells, flip-flops and a CMOS transistor estimate per block.
# The SRAM's storage (four 8192 x 32-bit banks, 128 KB) is a macro, not logic: it stays four memory cells,
# counted nowhere. Generic cells, no technology library: the figures compare shapes, they are not mm^2.
#   tools/synth.sh [--json FILE] [--shape 16x4 ...]     (default shapes: 16x4 16x2 8x4)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rtl="$root/rtl_stubs"
json=""
shapes=()
while [ $# -gt 0 ]; do
  case "$1" in
    --json) json="${2:?--json needs a file}"; shift 2 ;;
    --shape) shapes+=("${2:?--shape needs COLSxROWS, e.g. 16x4}"); shift 2 ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "synth.sh: unknown argument '$1' (--json FILE, --shape COLSxROWS)" >&2; exit 2 ;;
  esac
done
[ ${#shapes[@]} -gt 0 ] || shapes=(16x4 16x2 8x4)
for s in "${shapes[@]}"; do
  [[ "$s" =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || { echo "synth.sh: shape '$s' is not COLSxROWS (e.g. 16x4)" >&2; exit 2; }
done
command -v yosys > /dev/null || { echo "synth.sh: yosys not found (tools/install-deps.sh installs it)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# the PE's files; s2_pkg.svh first (every file includes it, guarded)
sources="s2_pkg.svh fifo.sv clocks_while.sv sram.sv noc_if.sv task_ctrl.sv dma_realigner.sv dma_peer.sv dma.sv mla.sv pe.sv"

for s in "${shapes[@]}"; do
  cols=${s%x*}
  rows=${s#*x}
  # Yosys's `synth` up to its fine stage (proc, opt, fsm, alumacc, share, memory -nomap), then its fine
  # stage without memory_map: the SRAM banks stay memory cells (the macro's place; the check below makes
  # sure nothing else does). The hierarchy is kept, so that stat counts each block.
  # dfflegalize: Yosys 0.23's CMOS table costs only plain flip-flops ($_DFF_P_, 16 transistors), so
  # enables and synchronous resets become the gates they are (costed), and the flip-flops with an
  # asynchronous reset, which the table does not know, are added at the plain flip-flop's cost (below).
  cat > "$work/$s.ys" <<EOF
read_verilog -sv -noautowire -I$rtl $(for f in $sources; do printf '%s ' "$rtl/$f"; done)
chparam -set ROWS $rows -set COLS $cols pe
synth -top pe -run begin:fine
opt -fast -full
opt -full
techmap
opt -fast
abc -fast
opt -fast
dfflegalize -cell \$_DFF_P_ x -cell \$_DFF_PN0_ x -cell \$_DFF_PN1_ x
opt_clean
hierarchy -check
tee -q -o $work/$s.json stat -json -tech cmos
EOF
  start=$(date +%s)
  if ! yosys -q -l "$work/$s.log" -s "$work/$s.ys" > /dev/null 2>&1; then
    echo "synth.sh: yosys failed on shape $s:" >&2
    grep -m5 "ERROR" "$work/$s.log" >&2 || tail -5 "$work/$s.log" >&2
    exit 1
  fi
  echo "$(( $(date +%s) - start ))" > "$work/$s.seconds"
  echo "synth.sh: $s synthesized in $(cat "$work/$s.seconds") s" >&2
done

commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
if ! git -C "$root" diff --quiet HEAD -- rtl_stubs 2>/dev/null; then commit="$commit+local changes in rtl_stubs"; fi
WORK="$work" SHAPES="${shapes[*]}" JSON="$json" COMMIT="$commit" VERSION="$(yosys -V)" \
  python3 "$root/tools/synth_report.py"
