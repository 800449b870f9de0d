#!/usr/bin/python3
"""Random small networks as layer lists, each run on both backends on every target: shapes nobody tuned the
mapper, the distributor or the model to (odd sizes, non-square kernels, paddings up to 3 whatever the kernel,
strides up to 3, max and average pooling, residual units with identity and projection shortcuts, biases).

    /usr/bin/python3 tools/random_nets.py [--out DIR] [--s2cosim PATH] [--jobs N] [--targets LIST]
                                          [--model-only] SEED [SEED ...]

Each SEED gives DIR/netSEED.net (the same file on every machine) and one `run-net --backend both` per target
(default: qpe, mini, prototype, spinnaker2; `qpe` is QPE-DRAM, the others `--target s2 --preset P`), its
output in DIR/netSEED-TARGET.log. Prints a line per network and exits 1 if any run does not exit 0 (every
block in every strategy bit-exact on both backends, within the comparators' bounds, and no block faster than
its bound, the chip's limits). --model-only runs `run-net --timing-only` on the model instead: the clocks
and the bounds alone, fast (CTest RandomNets.NoBlockBeatsItsBound). Defaults: --out build/random_nets,
--s2cosim build/s2cosim, --jobs 2. Needs Python 3 only (no packages); CI runs it --model-only.
"""
import argparse
import os
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = {"qpe": [], "mini": ["--target", "s2", "--preset", "mini"], "prototype": ["--target", "s2"],
           "spinnaker2": ["--target", "s2", "--preset", "spinnaker2"]}


def network(seed):
    """A layer list (mapper/README.md's format) drawn from seed."""
    r = random.Random(seed)
    W, H, D = r.randint(5, 48), r.randint(5, 48), r.choice([1, 2, 3, 4, 8, 16])
    lines = ["network rnd%d" % seed, "input %d %d %d" % (W, H, D)]
    for _ in range(r.randint(1, 5)):
        kind = r.choice(["conv", "conv", "pool", "residual"])
        if kind == "conv":
            kw = r.choice([1, 2, 3, 5])
            kh = kw if r.random() < 0.8 else r.choice([1, 3])
            s = r.choice([1, 1, 2, 3])
            p = r.choice([0, 0, 1, 2, 3]) if max(kw, kh) > 1 else 0
            C = r.choice([1, 3, 4, 8, 12, 16, 33])
            Wp, Hp = W + 2 * p, H + 2 * p
            if kw > Wp or kh > Hp:
                continue
            extra = (" act=none" if r.random() < 0.2 else "") + (" bias=seed" if r.random() < 0.3 else "")
            lines.append("conv %d %d %d %d stride=%d pad=%d%s" % (kw, kh, D, C, s, p, extra))
            W, H, D = (Wp - kw) // s + 1, (Hp - kh) // s + 1, C
        elif kind == "pool":
            t = r.choice(["max", "avg"])
            k = r.choice([2, 3])
            s = r.choice([1, 2, k])
            p = r.choice([0, 0, 1])
            Wp, Hp = W + 2 * p, H + 2 * p
            if k > Wp or k > Hp:
                continue
            lines.append("pool %s %d %d stride=%d pad=%d" % (t, k, k, s, p))
            W, H = (Wp - k) // s + 1, (Hp - k) // s + 1
        else:
            projection = r.random() < 0.5
            s = r.choice([1, 2]) if projection else 1
            C = r.choice([4, 8, 16]) if projection else D
            Wo, Ho = (W - 1) // s + 1, (H - 1) // s + 1  # a 3x3 with padding 1, and a 1x1, at stride s
            mid = r.choice([4, 8])
            lines += ["residual begin", "conv 3 3 %d %d stride=%d pad=1" % (D, mid, s), "conv 1 1 %d %d act=none" % (mid, C),
                      "residual end shortcut=" + ("projection stride=%d" % s if projection else "identity")]
            W, H, D = Wo, Ho, C
    if r.random() < 0.7:
        lines.append("fc %d %d" % (W * H * D, r.choice([3, 10, 17])))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "random_nets"))
    ap.add_argument("--s2cosim", default=os.path.join(ROOT, "build", "s2cosim"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--model-only", action="store_true", help="run-net --timing-only on the model (clocks and bounds only)")
    ap.add_argument("seeds", nargs="+", type=int)
    a = ap.parse_args()
    targets = a.targets.split(",")
    for t in targets:
        if t not in TARGETS:
            ap.error("target %r: expected one of %s" % (t, ", ".join(TARGETS)))
    os.makedirs(a.out, exist_ok=True)
    jobs = []
    for seed in a.seeds:
        path = os.path.join(a.out, "net%d.net" % seed)
        with open(path, "w") as f:
            f.write(network(seed))
        jobs += [(seed, t, path) for t in targets]

    def run(job):
        seed, t, path = job
        mode = ["--timing-only"] if a.model_only else ["--backend", "both"]
        cmd = [a.s2cosim, "run-net", "--net", path] + mode + TARGETS[t]
        with open(os.path.join(a.out, "net%d-%s.log" % (seed, t)), "w") as log:
            log.write(" ".join(cmd) + "\n")
            log.flush()
            return job, subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT).returncode

    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        codes = {(seed, t): code for (seed, t, _), code in pool.map(run, jobs)}
    failed = 0
    for seed in a.seeds:
        line = " ".join("%s=%d" % (t, codes[(seed, t)]) for t in targets)
        bad = any(codes[(seed, t)] != 0 for t in targets)
        failed += bad
        print("net%-6d %s%s" % (seed, line, "   FAIL (see %s/net%d-*.log)" % (a.out, seed) if bad else ""))
    print("%d networks, %d runs: %s" % (len(a.seeds), len(jobs), "all exit 0" if not failed else "%d networks failed" % failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
