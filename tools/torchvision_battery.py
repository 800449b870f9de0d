#!/usr/bin/python3
"""torchvision's own model definitions through s2cosim, as a new user brings them (issue 45's measurement).

For each network: torchvision's definition with random weights (--seed, 0), BatchNorm running statistics drawn
as a trained network has them (running_mean ~ N(0, 0.1), running_var ~ U(0.5, 1.5)), eval mode, exported with
torch.onnx.export(opset 13, do_constant_folding=True) as docs/real_networks.md says (export_torchvision.py's
build and export, its other draws off); a float input drawn from N(0, 1) and PyTorch's float output as the
reference. Then

    s2cosim check net.onnx
    s2cosim run-net --net net.onnx --target s2 --whole --backend model --input net_input.npy --reference net_output.npy   # the prototype chip

and, with --both SIZE NET..., the named networks exported again at SIZE pixels and run whole on the mini chip on
both backends (`--target s2 --preset mini --whole --backend both`): every block bit-exact and the model within 2%
of the RTL.

Run it with Debian's Python (python3-torch and python3-torchvision; not used by the build or CI):

    /usr/bin/python3 tools/torchvision_battery.py [--out DIR] [--s2cosim PATH] [--size N] [--seed N] [--timeout S] [NET ...]
    /usr/bin/python3 tools/torchvision_battery.py --both 48 squeezenet1_1 shufflenet_v2_x0_5

Defaults: --out build/torchvision_battery, --s2cosim build/s2cosim, --size 64 (pixels), --timeout 900 (seconds per
run), NET: the networks in NETWORKS. It prints and writes (summary.md, summary.json) per network: check's exit
code, run-net's exit code, the correlation with PyTorch's float output, whether the top class agrees, the wall
time (run-net's, and the model's own from its 'model speed' line); exit 0 if every network passes (check exit 0,
run-net exit 0: r >= 0.98 and the same top-1, or a tie below int8 resolution).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_torchvision  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPSET = 13
# the 14 networks issue 45 was measured on, and more of torchvision's families
NETWORKS = ["resnet18", "mobilenet_v2", "regnet_x_400mf", "squeezenet1_0", "squeezenet1_1", "googlenet", "densenet121",
            "shufflenet_v2_x0_5", "shufflenet_v2_x1_0", "mnasnet0_5", "mnasnet1_0", "efficientnet_b0",
            "mobilenet_v3_small", "mobilenet_v3_large", "regnet_y_400mf"]


def export(name, size, out_dir, seed=0):
    """NAME.onnx, NAME_input.npy (the float input, (1, 3, size, size)) and NAME_output.npy (PyTorch's float output):
    export_torchvision.py's, BatchNorm running statistics drawn, the rest torchvision's initialization."""
    model, gen = export_torchvision.build(name, seed, draw_affine=False)
    base = os.path.join(out_dir, name)
    export_torchvision.export(model, gen, size, base + ".onnx")
    return base


def run(cmd, log, timeout):
    start = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
        rc, text = p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        rc, text = "timeout", (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
    with open(log, "w") as f:
        f.write(" ".join(cmd) + "\n" + text + f"\nexit {rc}\n")
    return rc, text, time.time() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("nets", nargs="*")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "torchvision_battery"))
    ap.add_argument("--s2cosim", default=os.path.join(ROOT, "build", "s2cosim"))
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--seed", type=int, default=0, help="the weights' and the input's seed")
    ap.add_argument("--both", type=int, metavar="SIZE", help="run the networks at SIZE pixels on the mini chip on both backends")
    a = ap.parse_args()
    nets = a.nets or NETWORKS
    os.makedirs(a.out, exist_ok=True)
    rows, failed = [], []
    for name in nets:
        size = a.both or a.size
        tag = f"{name}_{size}"
        base = export(name, size, a.out, a.seed)
        check_rc, _, _ = run([a.s2cosim, "check", base + ".onnx"], os.path.join(a.out, tag + "_check.log"), a.timeout)
        cmd = [a.s2cosim, "run-net", "--net", base + ".onnx", "--target", "s2", "--whole", "--input", base + "_input.npy",
               "--reference", base + "_output.npy", "--json", os.path.join(a.out, tag + ".json")]
        cmd += ["--preset", "mini", "--backend", "both"] if a.both else ["--backend", "model"]
        rc, text, wall = run(cmd, os.path.join(a.out, tag + "_run.log"), a.timeout)
        m = re.search(r"correlation ([0-9.]+), max error ([0-9.]+) output steps, top-1 (agrees|DIFFERS|is a tie)", text)
        model_wall = re.search(r"in ([0-9.]+) s wall inside the model", text)
        row = dict(network=name, size=size, check=check_rc, run=rc, correlation=float(m.group(1)) if m else None,
                   max_error_steps=float(m.group(2)) if m else None, top1=m.group(3) if m else None,
                   wall_s=round(wall, 1), model_wall_s=float(model_wall.group(1)) if model_wall else None,
                   targets=[t.strip() for t in re.findall(r"^\s*\[(?:met |MISS)\].*$", text, re.M)])
        rows.append(row)
        if check_rc != 0 or rc != 0:
            failed.append(name)
        print(f"{name:22} {size:4}px  check {check_rc}  run-net {rc}  r {row['correlation']}  top-1 {row['top1']}  "
              f"wall {row['wall_s']} s (model {row['model_wall_s']} s)", flush=True)
    lines = ["| network | pixels | check | run-net | r | max error (steps) | top-1 | run-net wall (s) | model wall (s) |",
             "|" + " --- |" * 9]
    for r in rows:
        lines.append(f"| {r['network']} | {r['size']} | {r['check']} | {r['run']} | {r['correlation']} | "
                     f"{r['max_error_steps']} | {r['top1']} | {r['wall_s']} | {r['model_wall_s']} |")
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(dict(torch=torch.__version__, torchvision=torchvision.__version__, seed=a.seed, rows=rows), f, indent=1)
    print("\n".join(lines))
    if failed:
        print("failed: " + " ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
