#!/usr/bin/env python3
"""Runs the README's report commands with two builds of s2cosim and compares their JSON reports.

For refactoring: every report must stay the same apart from wall times and speeds (which this drops) and the
binary's path in rerun lines (which it normalises). Usage, from the clone's root:

    python3 tools/compare_reports.py BEFORE_BINARY AFTER_BINARY [OUT_DIR]

e.g. with a copy of build/s2cosim made before the change. Prints one line per command and exits 1 if any
report differs; the reports stay in OUT_DIR (default /tmp/s2cosim-compare) as before/ and after/.
"""
import json
import os
import subprocess
import sys

# name -> arguments (each writes --json OUT/name.json)
COMMANDS = {
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
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    before, after = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    out = sys.argv[3] if len(sys.argv) == 4 else "/tmp/s2cosim-compare"
    codes = [run(before, os.path.join(out, "before")), run(after, os.path.join(out, "after"))]
    differ = 0
    for name in COMMANDS:
        reports = []
        for side in ("before", "after"):
            with open(os.path.join(out, side, name + ".json")) as f:
                reports.append(stable(json.load(f), (before, after)))
        same = reports[0] == reports[1] and codes[0][name] == codes[1][name]
        differ += not same
        print(f"{name:<16} exit {codes[0][name]} / {codes[1][name]}  {'same' if same else 'DIFFERENT'}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
