#!/usr/bin/env python3
"""Runs a set of report commands with two builds of s2cosim and compares their JSON reports.

For refactoring: every report must stay the same apart from wall times and speeds (which this drops) and the
binary's path in rerun lines (which it normalises). Usage, from the clone's root:

    python3 tools/compare_reports.py [--set readme|model] BEFORE_BINARY AFTER_BINARY [OUT_DIR]

e.g. with a copy of build/s2cosim made before the change. Prints one line per command and exits 1 if any
report differs; the reports stay in OUT_DIR (default /tmp/s2cosim-compare) as before/ and after/.
  readme (default): the README's report commands, both backends where they have them.
  model: the chip model alone, for a change to its speed that must move nothing - the random chip suite's 240
    streams (every stream's clocks), the reference nets on the prototype and mini chips and the whole VGG-16
    (every block's clocks ARM free and ARM timed, its activity counts, where its time went), about 15 minutes.
"""
import json
import os
import subprocess
import sys

# name -> arguments (each writes --json OUT/name.json)
README_COMMANDS = {
    "regress": ["regress", "vectors/smoke.csv"],
    "run-net-qpe": ["run-net", "--net", "vectors/mini_chip.net", "--target", "qpe", "--layers", "CONV_1,CONV_2",
                    "--backend", "both"],
    "run-net-s2": ["run-net", "--net", "vectors/mini_chip.net", "--split", "vectors/mini_chip_split.txt", "--target",
                   "s2", "--preset", "mini", "--layers", "CONV_1", "--backend", "both"],
    "run-net-vgg16": ["run-net", "--net", "vgg16", "--layers", "CONV_1", "--backend", "model"],
    "run-net-silicon": ["run-net", "--net", "vectors/octopus_mlp.net", "--target", "s2", "--preset", "spinnaker2",
                        "--strategy", "fuse_noreuse", "--whole", "--backend", "model"],
    "flaw-limit": ["flaw-limit", "mm_wide_a"],
    "bench": ["bench", "--shard", "1/30"],
    "map": ["map", "--net", "vgg16"],
}
MODEL_COMMANDS = {"chip-random": ["chip-regress", "vectors/chip_random_suite.csv", "--backend", "model", "-q"]}
for _net in ("mlp", "tiny_cnn", "res_cnn", "stride_cnn"):
    for _preset in ("prototype", "mini"):
        MODEL_COMMANDS[f"net-{_net}-{_preset}"] = [
            "run-net", "--net", f"vectors/nets/{_net}_qdq.onnx", "--input", f"vectors/nets/{_net}_input.npy", "--target",
            "s2", "--preset", _preset, "--whole", "--backend", "model"]
MODEL_COMMANDS["vgg16-whole"] = ["run-net", "--target", "s2", "--whole", "--backend", "model"]
SETS = {"readme": README_COMMANDS, "model": MODEL_COMMANDS}
COMMANDS = README_COMMANDS
# fields that measure the machine, not the hardware
VOLATILE = {"time", "speed_ratio", "peak_memory_mb", "peak_rss_mb"}


def stable(x, binaries):
    if isinstance(x, dict):
        return {k: stable(v, binaries) for k, v in x.items()
                if "wall" not in k and k not in VOLATILE and not k.endswith("_per_s")}
    if isinstance(x, list):
        return [stable(v, binaries) for v in x]
    if isinstance(x, str):
        for b in sorted(binaries, key=len, reverse=True):  # the longer first: one path may begin the other
            x = x.replace(b, "S2COSIM")
        return x
    return x


def run(binary, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    codes = {}
    for name, args in COMMANDS.items():
        with open(os.path.join(out_dir, name + ".txt"), "w") as console:
            codes[name] = subprocess.call([binary] + args + ["--json", os.path.join(out_dir, name + ".json")],
                                          stdout=console, stderr=subprocess.STDOUT)
    return codes


def main():
    global COMMANDS
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "--set":
        if args[1] not in SETS:
            sys.exit(f"compare_reports: --set {args[1]}: expected one of {', '.join(SETS)}")
        COMMANDS = SETS[args[1]]
        args = args[2:]
    if len(args) not in (2, 3):
        sys.exit(__doc__)
    before, after = os.path.abspath(args[0]), os.path.abspath(args[1])
    out = args[2] if len(args) == 3 else "/tmp/s2cosim-compare"
    codes = [run(before, os.path.join(out, "before")), run(after, os.path.join(out, "after"))]
    differ = 0
    for name in COMMANDS:
        reports = []
        for side in ("before", "after"):
            path = os.path.join(out, side, name + ".json")
            if not os.path.exists(path):  # (the command failed before writing one: its .txt says why)
                reports.append(None)
                continue
            with open(path) as f:
                reports.append(stable(json.load(f), (before, after)))
        same = None not in reports and reports[0] == reports[1] and codes[0][name] == codes[1][name]
        differ += not same
        missing = " (no report: " + ", ".join(side for side, r in zip(("before", "after"), reports) if r is None) + ")" if None in reports else ""
        print(f"{name:<16} exit {codes[0][name]} / {codes[1][name]}  {'same' if same else 'DIFFERENT'}{missing}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
