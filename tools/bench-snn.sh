#!/usr/bin/env bash
# SNN synaptic processing as a reference (issue 29's targets): the SNN paper's balanced random cortex-like
# network (800 pre, 200 post, density 0.1, delays 0..3, budget 122880 bytes per PE) in every layout on the
# prototype chip, on both backends; and the Figure 9 sweep. Prints each target with the figure measured, the
# date, the machine and the commit.
#   bash tools/bench-snn.sh [OUT_DIR] [SNN OPTIONS...]
# Extra options go to the cortex run (e.g. --timesteps 8 for a shorter one, --preset spinnaker2).
# Needs build/s2cosim (tools/build.sh) and python3 (to read the JSON reports). About 35 minutes (the RTL, one core).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-bench-snn-$(date +%Y%m%d-%H%M%S)}"
[[ $# -gt 0 ]] && shift
mkdir -p "$out"
s2=build/s2cosim
[[ -x $s2 ]] || { echo "bench-snn: $s2 not built (bash tools/build.sh)" >&2; exit 2; }
echo "bench-snn: reports in $out/"
# a deviation or mismatch exits 1: the figures say it
$s2 snn --pre 800 --post 200 --delays 4 --density 0.1 --rate 0.1 --timesteps 16 --seed 1 --budget-bytes 122880 \
  --target s2 --backend both --json "$out/cortex.json" --html "$out/cortex.html" "$@" > "$out/cortex.txt" 2>&1 || true
$s2 snn --sweep fig9 --json "$out/fig9.json" > "$out/fig9.txt" 2>&1 || true

python3 - "$out" <<'PY'
import json, os, subprocess, sys, datetime, platform
out = sys.argv[1]
def line(ok, what, figure):
    print(f"  [{'met ' if ok else 'MISS'}] {what}: {figure}")
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
mem = next((l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal")), "?")
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
print(f"\nbench-snn, {datetime.datetime.now().isoformat(timespec='seconds')}, commit {commit}")
print(f"machine: {os.cpu_count()} cores, {cpu}, {int(mem) // 1024} MB")
p = os.path.join(out, "cortex.json")
if not os.path.exists(p):
    print("cortex network: no report (see cortex.txt)"); sys.exit(1)
j = json.load(open(p))
L = j["layouts"]
checks = {c["name"]: c for c in j["results"]["checks"]}
print(f"cortex network, {j['layer']['pre']} x {j['layer']['post']}, {j['layer']['delays']} delays, {j['layer']['timesteps']} steps, "
      f"{j['layer']['synapses']} synapses, on {j['system']}, budget {j['budget_bytes']} bytes per PE:")
print(f"    {'layout':<14} {'PEs':>9} {'SRAM B':>8} {'%orig':>6} {'model/step':>11} {'RTL/step':>11} {'delta':>8} {'%serial':>8} {'model s':>8} {'RTL s':>8}")
for l in L:
    c = checks.get(l["layout"], {})
    f = lambda v, fmt: format(v, fmt) if isinstance(v, (int, float)) else "-"
    pes = f"{l.get('pes', '-')} (1+{l.get('pes_subordinate', '-')})"
    print(f"    {l['layout']:<14} {pes:>9} {f(l.get('memory_bytes'), 'd'):>8} {f(l.get('memory_percent_of_original_mac'), '.1f'):>6} "
          f"{f(l.get('model_cycles_per_timestep'), '.1f'):>11} {f(l.get('rtl_cycles_per_timestep'), '.1f'):>11} "
          f"{f(100 * l['delta'] if l.get('delta') is not None else None, '+.2f'):>7}% {f(l.get('time_percent_of_serial_arm'), '.1f'):>8} "
          f"{f(c.get('model_wall_s'), '.2f'):>8} {f(c.get('rtl_wall_s'), '.1f'):>8}")
deltas = [abs(l["delta"]) for l in L if l.get("delta") is not None]
line(len(deltas) == len(L) and max(deltas) <= 0.02, "cycles per timestep within 2%, model against RTL, every layout",
     f"worst {100 * max(deltas):.2f}% ({len(deltas)} of {len(L)} layouts compared)" if deltas else "none compared")
match = [l for l in L if l.get("data_match")]
line(len(match) == len(L), "currents bit-exact on both backends, every layout", f"{len(match)} of {len(L)}")
mw = sum(c.get("model_wall_s") or 0 for c in checks.values()); rw = sum(c.get("rtl_wall_s") or 0 for c in checks.values())
line(mw > 0 and rw / mw >= 100, "the model at least 100x the RTL (wall time, all layouts)", f"{rw / mw:.0f}x ({rw:.0f} s RTL, {mw:.2f} s model)" if mw > 0 else "-")
p = os.path.join(out, "fig9.json")
if os.path.exists(p):
    rows = json.load(open(p))["figure9"]
    print(f"Figure 9 sweep: {len(rows)} points (pre 50; post 30, 31, 32; delays 1..16; pure and mixed) in fig9.txt / fig9.json")
PY
