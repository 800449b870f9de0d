#!/usr/bin/env bash
# The chip model as a reference: runs what its accuracy and speed targets are judged on, on both backends,
# and prints each target with the figure measured, the date, the machine and the commit.
#   bash tools/bench-chip.sh [--quick] [--speed] [--baseline BINARY] [--jobs J] [OUT_DIR]
# --quick leaves out the whole VGG-16 on both backends (about 35 minutes on 2 cores) and so its targets.
# --speed leaves out the accuracy runs (the random chip suite, the reference nets, ResNet-50's blocks): only the
# runs that issue 46's speed targets are judged on.
# --baseline: an older build of s2cosim (e.g. decbd85's, issue 46's reference) run beside build/s2cosim on the
# whole VGG-16 on the model and on VGG-16 CONV_9 fuse_reuse on the chip RTL (one thread), for the speed-ups;
# this machine's speed wanders by half from day to day, so a speed-up is only measured side by side.
# --jobs J: this build's whole-VGG-16 runs (model, and both backends) in J worker processes (run-net --jobs;
# the baseline runs as it can, in one).
# Needs build/s2cosim and build/noc_fabric_bench (tools/build.sh) and python3 (to read the JSON reports).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
speed=0
baseline=""
jobs=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --speed) speed=1; shift ;;
    --baseline) baseline=$(realpath "$2"); shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    *) break ;;
  esac
done
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "bench-chip: --jobs '$jobs': expected a number >= 1" >&2; exit 2; }
jobsarg=()
[[ $jobs -gt 1 ]] && jobsarg=(--jobs "$jobs")
out="${1:-bench-chip-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$out"
s2=build/s2cosim
[[ -x $s2 ]] || { echo "bench-chip: $s2 not built (bash tools/build.sh)" >&2; exit 2; }

run() {  # NAME, then the command; its JSON report goes to $out/NAME.json, its console to $out/NAME.txt
  local name=$1; shift
  local t0; t0=$(date +%s%N)
  "$@" --json "$out/$name.json" > "$out/$name.txt" 2>&1 || true  # a deviation exits 1: the figures say it
  echo "$name $(( ($(date +%s%N) - t0) / 1000000 ))" >> "$out/wall.txt"
  echo "  ran $name"
}
: > "$out/wall.txt"
echo "bench-chip: reports in $out/"
if [[ $speed == 0 ]]; then
  run random $s2 chip-regress vectors/chip_random_suite.csv -q
  for net in mlp tiny_cnn res_cnn stride_cnn; do
    for preset in prototype mini; do
      run "net_${net}_${preset}" $s2 run-net --net "vectors/nets/${net}_qdq.onnx" --input "vectors/nets/${net}_input.npy" \
        --target s2 --preset "$preset" --whole --backend both
    done
  done
  run resnet50_fuse_reuse $s2 run-net --net resnet50 --target s2 --strategy fuse_reuse --backend both \
    --layers CONV_5,CONV_7,CONV_19,CONV_25,CONV_26,CONV_42,CONV_43
fi
run vgg16_model $s2 run-net --target s2 --whole "${jobsarg[@]}"
run vgg16_model_core $s2 run-net --target s2 --whole --core-clocks "${jobsarg[@]}"
if [[ -n $baseline ]]; then
  run vgg16_model_baseline "$baseline" run-net --target s2 --whole
  conv9=(run-net --net vgg16 --target s2 --layers CONV_9 --strategy fuse_reuse --backend rtl --threads 1)
  run conv9_rtl "$s2" "${conv9[@]}"
  run conv9_rtl_baseline "$baseline" "${conv9[@]}"
fi
if [[ $quick == 0 ]]; then run vgg16_both $s2 run-net --target s2 --whole --backend both "${jobsarg[@]}"; fi
[[ -x build/noc_fabric_bench ]] && build/noc_fabric_bench > "$out/noc_fabric_bench.txt" 2>&1 || true

python3 - "$out" "$quick" "$jobs" <<'EOF'
import json, os, statistics, subprocess, sys, datetime, platform
out, quick, jobs = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3])
in_jobs = f", --jobs {jobs}" if jobs > 1 else ""
wall = {k: int(v) / 1000 for k, v in (l.split() for l in open(os.path.join(out, "wall.txt")))}  # seconds
def checks(name):
    p = os.path.join(out, name + ".json")
    if not os.path.exists(p): return None
    j = json.load(open(p))
    return j, [c for c in j["results"]["checks"] if c.get("rtl_cycles") is not None and c.get("model_cycles") is not None]
def line(ok, what, figure):
    print(f"  [{'met ' if ok else 'MISS'}] {what}: {figure}")
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
mem = next((l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal")), "?")
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
print(f"\nbench-chip, {datetime.datetime.now().isoformat(timespec='seconds')}, commit {commit}")
print(f"machine: {os.cpu_count()} cores, {cpu}, {int(mem) // 1024} MB")
def within(cs): return sum(1 for c in cs if abs(c["delta"]) <= 0.02)
def exact(cs): return sum(1 for c in cs if c["status"] not in ("mismatch", "early_stop", "hang", "error"))
r = checks("random")
if r:
    cs = r[1]
    d = [abs(c["delta"]) for c in cs]
    worst = max(d) if d else float("nan")
    print(f"random chip suite ({len(cs)} streams, {float(wall['random']):.0f} s):")
    line(len(cs) >= 200, "at least 200 streams", len(cs))
    line(worst <= 0.02, "worst |delta| <= 2%", f"{100 * worst:.2f}% ({within(cs)} of {len(cs)} within 2%)")
    line(statistics.median(d) <= 0.005, "median |delta| <= 0.5%", f"{100 * statistics.median(d):.2f}%")
    line(exact(cs) == len(cs), "bit-exact", f"{exact(cs)} of {len(cs)}")
nets = [n for n in sorted(wall) if n.startswith("net_")]
if nets:
    total = ok = 0
    worst = ("", 0.0)
    for n in nets:
        cs = checks(n)[1]
        total += len(cs); ok += within(cs)
        for c in cs:
            if abs(c["delta"]) > abs(worst[1]): worst = (f"{n[4:]} {c['name']}", c["delta"])
    print(f"reference nets, prototype and mini, --whole --backend both:")
    line(ok == total and total > 0, "every block within 2%", f"{ok} of {total}; worst {worst[0]} {100 * worst[1]:+.1f}%")
if "resnet50_fuse_reuse" in wall:
    cs = checks("resnet50_fuse_reuse")[1]
    print(f"ResNet-50 fuse_reuse CONV_5, 7, 19, 25, 26, 42, 43 ({float(wall['resnet50_fuse_reuse']) / 60:.0f} min):")
    line(within(cs) == len(cs) == 7, "within 2%", ", ".join(f"{c['labels']['block']} {100 * c['delta']:+.1f}%" for c in cs))
if not (r or nets):
    print("accuracy runs: not run (--speed)")
j = checks("vgg16_model")[0]
print(f"VGG-16 whole, model only{in_jobs}:")
line(float(wall["vgg16_model"]) < 20, "under 20 s wall", f"{float(wall['vgg16_model']):.1f} s ({j['model_clocks_per_s']:.3g} clocks/s)")
if "vgg16_model_baseline" in wall:
    base = float(wall["vgg16_model_baseline"])
    print(f"  baseline build (the same run, ARM free and ARM timed): {base:.1f} s wall")
    line(base / float(wall["vgg16_model"]) >= 6, "at least 6x faster than the baseline",
         f"{base / float(wall['vgg16_model']):.2f}x")
    line(base / float(wall["vgg16_model_core"]) >= 4, "at least 4x faster with the ARM-free run kept (--core-clocks)",
         f"{base / float(wall['vgg16_model_core']):.2f}x ({float(wall['vgg16_model_core']):.1f} s)")
    a, b = checks("conv9_rtl")[0], checks("conv9_rtl_baseline")[0]
    print("VGG-16 CONV_9 fuse_reuse on the chip RTL, one thread:")
    line(a["rtl_clocks_per_s"] >= 1.5 * b["rtl_clocks_per_s"], "at least 1.5x the baseline's clocks per second",
         f"{a['rtl_clocks_per_s']:.3g} against {b['rtl_clocks_per_s']:.3g} ({a['rtl_clocks_per_s'] / b['rtl_clocks_per_s']:.2f}x)")
fab = os.path.join(out, "noc_fabric_bench.txt")
if os.path.exists(fab):
    print("the model's NoC fabric (build/noc_fabric_bench, VGG-16 CONV_9 fuse_reuse, prototype, ARM timed):")
    for l in open(fab):
        if l.startswith("  "): print("  " + l.strip())
if not quick:
    j, cs = checks("vgg16_both")
    print(f"VGG-16 whole on both backends{in_jobs} ({float(wall['vgg16_both']) / 60:.0f} min):")
    line(within(cs) == len(cs) == 16, "16 of 16 blocks within 2%", f"{within(cs)} of {len(cs)}; " +
         ", ".join(f"{c['labels']['block']} {100 * c['delta']:+.1f}%" for c in cs if abs(c["delta"]) > 0.02))
    ratio = j["model_clocks_per_s"] / j["rtl_clocks_per_s"] if j.get("rtl_clocks_per_s") else 0
    line(ratio >= 100, "model at least 100x the RTL's clocks per second", f"{ratio:.0f}x")
    line(float(wall["vgg16_both"]) < 600, "under 10 minutes wall", f"{float(wall['vgg16_both']) / 60:.1f} min")
else:
    print("VGG-16 whole on both backends: not run (--quick)")
EOF
