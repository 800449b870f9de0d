#!/usr/bin/env python3
"""Counts the Cortex-M4F clocks of the PE's ARM kernels from their compiled code.

Compiles model/pe/arm_kernels/arm_kernels.c with arm-none-eabi-gcc (-mcpu=cortex-m4 -mfloat-abi=hard -mthumb
-O2), disassembles it, finds each kernel's loops (backward branches) and sums the Cortex-M4 Technical Reference
Manual's instruction timings (Table 3-1 and its load/store pairing rules; docs/arm_clocks.md says which and
how) over each path through each loop's own code, per iteration, and over each kernel's code outside its loops,
per call. The loops are named by a manifest (KERNELS below) that states each kernel's loop nest; a compiled
nest of another shape is an error, not a guess.

  python3 tools/arm_clocks.py --out vectors/arm_clocks.json   # count and write the committed data
  python3 tools/arm_clocks.py --check vectors/arm_clocks.json # count and compare with it (exit 1 if they differ)
  python3 tools/arm_clocks.py --listing s2k_quantize          # the kernel's code, each instruction's clocks
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "model", "pe", "arm_kernels", "arm_kernels.c")
CC = "arm-none-eabi-gcc"
OBJDUMP = "arm-none-eabi-objdump"
# -ffreestanding -fno-tree-loop-distribute-patterns: the PE has no C library, so a loop stays a loop rather than
# becoming a call to memset or memcpy (whose code is not ours to count); -falign-functions=4: each kernel starts
# on a word, so where its branch targets fall (a 32-bit target at a halfword costs a refill clock more) depends
# on its own code only, not on the kernels compiled before it
FLAGS = ["-mcpu=cortex-m4", "-mfloat-abi=hard", "-mthumb", "-O2", "-ffreestanding",
         "-fno-tree-loop-distribute-patterns", "-falign-functions=4", "-std=c11"]

# Each kernel's loop nest, outermost first, children in code order: (name, [children]). What a loop iterates
# over is what its name says; model/pe/arm_ops.cpp charges each loop's clocks per iteration that many times.
def L(name, *children):
    return (name, list(children))

KERNELS = {
    "zero_span": [L("head_byte"), L("word"), L("tail_byte")],
    "s2k_pad": [L("plane", L("top_row"), L("side_row", L("left_byte"), L("right_byte")), L("bottom_row"))],
    "s2k_relu32": [L("plane", L("row", L("pixel")))],
    "s2k_relu32_bias": [L("plane", L("row", L("pixel")))],
    "s2k_quantize": [L("plane", L("row", L("pixel")))],
    "s2k_quantize_bias": [L("plane", L("row", L("pixel")))],
    "s2k_quantize_shift": [L("plane", L("row", L("pixel")))],
    "s2k_quantize_bias_shift": [L("plane", L("row", L("pixel")))],
    "s2k_quantize_relu": [L("plane", L("row", L("pixel")))],
    "s2k_quantize_bias_relu": [L("plane", L("row", L("pixel")))],
    "s2k_quantize_shift_relu": [L("plane", L("row", L("pixel")))],
    "s2k_quantize_bias_shift_relu": [L("plane", L("row", L("pixel")))],
    "s2k_maxpool8": [L("plane", L("output_row", L("output", L("window_row", L("window_pixel")))))],
    "s2k_maxpool32": [L("plane", L("output_row", L("output", L("window_row", L("window_pixel")))))],
    "s2k_avgpool8": [L("plane", L("output_row", L("output", L("window_row", L("window_pixel")))))],
    "s2k_quantize_maxpool": [L("plane", L("output_row", L("output", L("window_row", L("window_pixel")))))],
    "s2k_quantize_maxpool_bias": [L("plane", L("output_row", L("output", L("window_row", L("window_pixel")))))],
    "s2k_quantize_maxpool_shift": [L("plane", L("output_row", L("output", L("window_row", L("window_pixel")))))],
    "s2k_quantize_maxpool_bias_shift": [L("plane", L("output_row", L("output", L("window_row", L("window_pixel")))))],
    "s2k_quantize_maxpool_relu": [L("plane", L("output_row", L("output", L("window_row", L("window_pixel")))))],
    "s2k_quantize_maxpool_bias_relu": [L("plane", L("output_row", L("output", L("window_row", L("window_pixel")))))],
    "s2k_quantize_maxpool_shift_relu": [L("plane", L("output_row", L("output", L("window_row", L("window_pixel")))))],
    "s2k_quantize_maxpool_bias_shift_relu": [L("plane", L("output_row", L("output", L("window_row", L("window_pixel")))))],
    "s2k_add_int32": [L("plane", L("row", L("pixel")))],
    "s2k_add_int8": [L("plane", L("row", L("pixel")))],
    "s2k_add_int8_relu": [L("plane", L("row", L("pixel")))],
    "s2k_quantize_add": [L("plane", L("row", L("pixel")))],
    "s2k_quantize_add_bias": [L("plane", L("row", L("pixel")))],
    "s2k_quantize_add_shift": [L("plane", L("row", L("pixel")))],
    "s2k_quantize_add_bias_shift": [L("plane", L("row", L("pixel")))],
    "s2k_quantize_add_relu": [L("plane", L("row", L("pixel")))],
    "s2k_quantize_add_bias_relu": [L("plane", L("row", L("pixel")))],
    "s2k_quantize_add_shift_relu": [L("plane", L("row", L("pixel")))],
    "s2k_quantize_add_bias_shift_relu": [L("plane", L("row", L("pixel")))],
    "s2k_relu8": [L("plane", L("row", L("pixel")))],
    "s2k_mac_int8": [L("row", L("value", L("plane", L("weight"))))],
    "s2k_permute_words": [L("plane", L("clear_word"), L("entry", L("moved_word")))],
    "s2k_copy8": [L("plane", L("row", L("pixel")), L("column_byte"))],
    "s2k_table8": [L("plane", L("row", L("pixel")))],
    "s2k_affine8": [L("plane", L("row", L("pixel")))],
    "s2k_add_scaled8": [L("plane", L("row", L("pixel")))],
    "s2k_mul8": [L("plane", L("row", L("pixel")))],
    "s2k_channel_mul8": [L("plane", L("row", L("pixel")))],
}

# The configuration's fields (model/hw_config.h, ArmKernelClocks) from the counts: per kernel, per field, the
# loop whose iteration it is ("call": the code outside the loops; "loop/skipping": an iteration entering none of
# the loop's inner loops). s2k_maxpool32 is counted for Table 5.9 only: no operation of the model runs it.
def model_fields(kernel, loops):
    if kernel == "s2k_maxpool32":
        return None
    out = {"call": "call"}
    for name in loops:
        if kernel == "s2k_mac_int8" and name == "value":
            out.update(value_spike="value", value_no_spike="value/skipping")
        elif kernel == "s2k_permute_words" and name == "entry":
            out.update(entry_cycle_start="entry", entry_placed="entry/skipping")
        elif kernel == "s2k_copy8" and name == "plane":
            out.update(plane="plane/through:row", column_plane="plane/through:column_byte")
        else:
            out[name] = name
    return out


COND = "eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al"


class Insn:
    def __init__(self, addr, size, mnem, ops, target):
        self.addr, self.size, self.mnem, self.ops, self.target = addr, size, mnem, ops, target
        m = mnem.split(".")[0]
        self.kind = classify(m)
        self.text = f"{mnem} {ops}".strip()

    def end(self):
        return self.addr + self.size

    # registers in the address of a load or store: [rN, rM] (post-indexed [rN], #i too)
    def address_regs(self):
        m = re.search(r"\[([^\]]*)\]", self.ops)
        return set(re.findall(r"\b(r\d+|sl|fp|ip|sp|lr)\b", m.group(1))) if m else set()

    def written_regs(self):
        if self.kind in ("store", "store_double", "store_multiple", "branch", "cond_branch", "it", "compare_branch"):
            regs = set()
        elif self.kind in ("load_multiple",):
            regs = set(re.findall(r"\b(r\d+|sl|fp|ip|lr|pc)\b", self.ops.split("{", 1)[-1]))
        elif re.match(r"^(cmp|cmn|tst|teq)", self.mnem):  # flags only
            regs = set()
        else:
            first = re.match(r"\s*(r\d+|sl|fp|ip|lr|sp)\b", self.ops)
            regs = {first.group(1)} if first else set()
            if self.kind == "load_double":
                regs |= set(re.findall(r"^\s*\w+,\s*(r\d+|sl|fp|ip|lr)", self.ops))
        if "!" in self.ops or re.search(r"\],\s*#", self.ops):  # base writeback
            base = re.search(r"\[(r\d+|sl|fp|ip|sp|lr)", self.ops)
            if base:
                regs.add(base.group(1))
        return regs


def classify(m):
    if re.fullmatch(rf"b({COND})", m):
        return "cond_branch"
    if re.fullmatch(r"b|bl|blx|bx", m):
        return "branch"
    if m in ("cbz", "cbnz"):
        return "compare_branch"
    if m in ("tbb", "tbh"):
        return "table_branch"
    if re.fullmatch(r"it[te]{0,3}", m):
        return "it"
    if re.fullmatch(rf"(ldr|ldrb|ldrh|ldrsb|ldrsh)({COND})?", m):
        return "load"
    if re.fullmatch(rf"ldrd({COND})?", m):
        return "load_double"
    if re.fullmatch(rf"(str|strb|strh)({COND})?", m):
        return "store"
    if re.fullmatch(rf"strd({COND})?", m):
        return "store_double"
    if re.fullmatch(rf"(ldm|ldmia|ldmdb|pop)({COND})?", m):
        return "load_multiple"
    if re.fullmatch(rf"(stm|stmia|stmdb|push)({COND})?", m):
        return "store_multiple"
    if re.fullmatch(rf"(sdiv|udiv)({COND})?", m):
        return "divide"
    if m.startswith("v"):
        return "fpu"
    return "data"


def compile_and_disassemble(cc, objdump):
    with tempfile.TemporaryDirectory() as tmp:
        obj = os.path.join(tmp, "arm_kernels.o")
        subprocess.run([cc, *FLAGS, "-c", SOURCE, "-o", obj], check=True)
        text = subprocess.run([objdump, "-d", obj], check=True, capture_output=True, text=True).stdout
    version = subprocess.run([cc, "--version"], check=True, capture_output=True, text=True).stdout.splitlines()[0]
    functions, name = {}, None
    for line in text.splitlines():
        m = re.match(r"^([0-9a-f]+) <([\w.]+)>:$", line)
        if m:
            name = m.group(2)
            functions[name] = []
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+([0-9a-f]{4})(?: ([0-9a-f]{4}))?\s+(\S+)\s*(.*)$", line)
        if m and name:
            addr = int(m.group(1), 16)
            size = 4 if m.group(3) else 2
            ops = m.group(5).split("@")[0].strip()
            t = re.search(r"\b([0-9a-f]+) <([\w.]+)(?:\+0x[0-9a-f]+)?>", ops)
            target = (int(t.group(1), 16), t.group(2)) if t else None
            functions[name].append(Insn(addr, size, m.group(4), ops, target))
    return version, functions


# Clocks: the TRM's Table 3-1 with its P (pipeline refill), and the load/store rules of its section 3.3.2.
VARIANTS = {
    # P: 1, or 2 where the target is a 32-bit instruction at a halfword address (two fetches); IT: 1 clock;
    # a division: 12 (its worst case)
    "nominal": dict(p_aligned=1, p_unaligned=2, it=1, divide=12),
    # the fastest the TRM allows: P 1, an IT folded into the instruction before it, a division in 2
    "low": dict(p_aligned=1, p_unaligned=1, it=0, divide=2),
    # the slowest: P 3 everywhere
    "high": dict(p_aligned=3, p_unaligned=3, it=1, divide=12),
}


def refill(insns_by_addr, target_addr, v):
    t = insns_by_addr.get(target_addr)
    return v["p_unaligned"] if t is not None and t.size == 4 and target_addr % 4 == 2 else v["p_aligned"]


def clocks(ins, prev, taken, by_addr, v):
    """One instruction's clocks after `prev` on the path; `taken`: a branch is taken."""
    k = ins.kind
    if k in ("cond_branch", "compare_branch"):
        return 1 + refill(by_addr, ins.target[0], v) if taken else 1
    if k == "branch":
        tgt = ins.target[0] if ins.target else None
        return 1 + (refill(by_addr, tgt, v) if tgt is not None else v["p_aligned"])
    if k == "table_branch":
        return 2 + v["p_aligned"]
    if k == "it":
        return v["it"]
    if k in ("load_multiple", "store_multiple"):
        n = len(re.findall(r"\b(r\d+|sl|fp|ip|lr|pc)\b", ins.ops.split("{", 1)[-1]))
        return 1 + n + (v["p_aligned"] if "pc" in ins.ops else 0)
    if k in ("load_double", "store_double"):
        return 3  # 1 + N, N = 2; never pipelined with a neighbour
    if k == "divide":
        return v["divide"]
    if k == "fpu":
        raise SystemExit(f"arm_clocks: FPU instruction {ins.text} at {ins.addr:#x}: no timing rule for it here")
    c = 1
    if k == "load":
        c = 2
        # a load after a single load whose result does not form this address: pipelined, one clock less
        if prev is not None and prev.kind == "load" and not (prev.written_regs() & ins.address_regs()):
            c = 1
    # stores: STR Rx,[Ry,#imm] always one clock (the write buffer); a register offset the same here
    if k in ("load", "store") and prev is not None and prev.kind == "data":
        if prev.written_regs() & ins.address_regs():
            c += 1  # the address needs the result of the instruction before: no forwarding path
    return c


def successors(ins):
    """(address, taken) pairs control may go to after `ins`; a return has none."""
    k = ins.kind
    if k == "load_multiple" and "pc" in ins.ops or (k == "branch" and ins.mnem.startswith("bx")):
        return []
    if k == "branch" and not ins.mnem.startswith("bl"):
        return [(ins.target[0], True)]
    if k in ("cond_branch", "compare_branch"):
        return [(ins.target[0], True), (ins.end(), False)]
    return [(ins.end(), False)]


def find_loops(insns):
    """Natural loops (a back edge u -> h where h dominates u; the body: h and what reaches u without passing
    h), nested by their bodies. A loop entered in its middle has its header there, as the code runs."""
    addrs = [i.addr for i in insns]
    preds = {a: set() for a in addrs}
    for i in insns:
        for t, _ in successors(i):
            if t in preds:
                preds[t].add(i.addr)
    entry = addrs[0]
    dom = {a: set(addrs) for a in addrs}
    dom[entry] = {entry}
    changed = True
    while changed:
        changed = False
        for a in addrs[1:]:
            ps = [dom[p] for p in preds[a]]
            d = set.intersection(*ps) | {a} if ps else {a}
            if d != dom[a]:
                dom[a], changed = d, True
    bodies = {}
    for i in insns:
        for t, _ in successors(i):
            if t in dom and t in dom[i.addr]:
                body = bodies.setdefault(t, {t})
                work = [i.addr]
                while work:
                    n = work.pop()
                    if n not in body:
                        body.add(n)
                        work.extend(preds[n])
    loops = [{"head": h, "body": b, "children": []} for h, b in bodies.items()]
    loops.sort(key=lambda l: -len(l["body"]))
    roots = []
    for lp in loops:
        parents = [o for o in loops if o is not lp and lp["body"] < o["body"]]
        if parents:
            min(parents, key=lambda o: len(o["body"]))["children"].append(lp)
        else:
            roots.append(lp)

    def order(ls):
        ls.sort(key=lambda l: min(l["body"]))
        for l in ls:
            order(l["children"])
    order(roots)
    return roots


def paths(insns, by_addr, start, stop_at, region, children, v):
    """Every path from `start` through the code of `region` (a set of addresses), children's code skipped:
    each ends at an edge back to `stop_at` ("iteration"), or leaving the region ("exit", with its target), or
    at a return. Returns [(clocks, kind, children passed, exit target)]."""
    out = []

    def walk(addr, prev, total, passed, depth):
        if depth > 400:
            raise SystemExit("arm_clocks: a path too long to be a loop body")
        child = next((c for c in children if c["head"] == addr), None)
        if child is not None:
            if child["id"] in passed:
                raise SystemExit("arm_clocks: a path enters a loop twice")
            for extra, target, last in child["exits"]:
                step(target, last, total + extra, passed + (child["id"],), depth)
            return
        if any(addr in c["body"] for c in children):
            raise SystemExit(f"arm_clocks: a jump into the middle of a loop at {addr:#x}")
        ins = by_addr[addr]
        succ = successors(ins)
        if not succ:
            out.append((total + clocks(ins, prev, True, by_addr, v), "return", passed, None))
            return
        for t, taken in succ:
            step(t, ins, total + clocks(ins, prev, taken, by_addr, v), passed, depth)

    def step(dest, prev, total, passed, depth):
        if dest == stop_at:
            out.append((total, "iteration", passed, None))
        elif dest not in region:
            out.append((total, "exit", passed, dest))
        else:
            walk(dest, prev, total, passed, depth + 1)

    walk(start, None, 0, (), 0)
    return out


def match_level(loops, entries):
    """Assigns the manifest's entries, in order, to loops of the same nest (recursively); loops left over are
    ones the compiler made for a degenerate case (an empty row, say), which a run of the full shape never
    enters. Returns [(loop, entry, the nested assignments)], or None; more than one
    way is an error."""
    from itertools import combinations
    found = []
    for chosen in combinations(range(len(loops)), len(entries)):
        pairs = []
        for i, e in zip(chosen, entries):
            sub = match_level(loops[i]["children"], e[1])
            if sub is None:
                break
            pairs.append((loops[i], e, sub))
        else:
            found.append(pairs)
    if len(found) > 1:
        raise SystemExit(f"arm_clocks: the manifest's loops {[e[0] for e in entries]} match the code in "
                         f"{len(found)} ways")
    return found[0] if found else None


def count_function(name, insns, v, manifest):
    by_addr = {i.addr: i for i in insns}
    roots = find_loops(insns)
    top = match_level(roots, manifest)
    if top is None:
        raise SystemExit(f"arm_clocks: {name}: the compiled loops do not nest as the manifest says "
                         f"({manifest}): the kernel or the compiler changed")

    def assign(pairs):
        for lp, e, sub in pairs:
            lp["name"] = e[0]
            lp["matched"] = [c for c, _, _ in sub]
            assign(sub)
    assign(top)
    ids = iter(range(1000))

    def analyse(lp):
        lp["id"] = f"L{next(ids)}"
        for c in lp["children"]:
            analyse(c)
        ps = paths(insns, by_addr, lp["head"], lp["head"], lp["body"], lp["children"], v)
        iters = [p for p in ps if p[1] == "iteration"]
        exits = [p for p in ps if p[1] == "exit"]
        if not iters:
            raise SystemExit(f"arm_clocks: {name}: loop at {lp['head']:#x} has no path back to its head")
        full = tuple(c["id"] for c in lp.get("matched", lp["children"]))
        through_all = [p[0] for p in iters if p[2] == full]
        lp["paths"] = sorted({(p[0], p[2]) for p in iters})
        lp["iteration"] = max(through_all) if through_all else max(p[0] for p in iters)
        # an iteration that enters none of the inner loops: a value without a spike, a word already placed (the
        # kernels test the data first, so the shortest such path is the data's; longer ones skip an empty loop)
        skipping = [p[0] for p in iters if not p[2]]
        lp["skipping"] = min(skipping) if skipping and full else None
        # an iteration through one inner loop alone (a kernel that takes one of two loops by the command's shape)
        lp["through_one"] = {c: max(p[0] for p in iters if p[2] == (c,)) for c in {p[2][0] for p in iters if len(p[2]) == 1}}
        # a run of n iterations costs n x iteration + (exit - iteration): what the last one saves or adds
        lp["exits"] = []
        for target in sorted({p[3] for p in exits}):
            last = [p[0] for p in exits if p[3] == target and p[2] == full] or [p[0] for p in exits if p[3] == target]
            src = [i for i in insns if any(t == target for t, _ in successors(i)) and i.addr in lp["body"]]
            lp["exits"].append((max(last) - lp["iteration"], target, src[0] if src else None))

    for r in roots:
        analyse(r)
    ps = paths(insns, by_addr, insns[0].addr, None, set(by_addr), roots, v)
    rets = [p for p in ps if p[1] == "return"]
    full = tuple(lp["id"] for lp, _, _ in top)
    call = max(p[0] for p in rets if p[2] == full)
    named = []

    def collect(lp):
        if "name" in lp:
            named.append(lp)
        for c in lp["children"]:
            collect(c)
    for r in roots:
        collect(r)
    return named, call


def count(cc, objdump):
    version, functions = compile_and_disassemble(cc, objdump)
    result = {"compiler": version, "flags": FLAGS, "kernels": {}}
    for kernel, manifest in KERNELS.items():
        if kernel not in functions:
            raise SystemExit(f"arm_clocks: {kernel} not in the compiled code")
        entry = {}
        for vname, v in VARIANTS.items():
            named, call = count_function(kernel, functions[kernel], v, manifest)
            by_id = {l["id"]: l.get("name", "degenerate") for l in named}
            e = {"call": call, "loops": {}}
            for lp in named:
                e["loops"][lp["name"]] = {
                    "iteration": lp["iteration"],
                    **({"iteration_skipping_inner": lp["skipping"]} if lp["skipping"] is not None else {}),
                    **({"iteration_through_one": {by_id.get(c, "degenerate"): v for c, v in sorted(lp["through_one"].items())}}
                       if len(lp["through_one"]) > 1 else {}),
                    # the loop's own code on each path back to its head, with the inner loops it passes
                    "paths": [{"clocks": c, "through": [by_id.get(i, "degenerate") for i in through]}
                              for c, through in lp["paths"]],
                    # the last iteration against a full one (charged once per run of the loop)
                    "last_iteration_delta": [d for d, _, _ in lp["exits"]],
                }
            entry[vname] = e
        e = entry["nominal"]
        e["range"] = {"call": [entry["low"]["call"], entry["high"]["call"]],
                      **{n: [entry["low"]["loops"][n]["iteration"], entry["high"]["loops"][n]["iteration"]]
                         for n in e["loops"]}}
        e["code"] = f"{functions[kernel][0].addr:#x}-{functions[kernel][-1].end():#x}"
        result["kernels"][kernel] = e
    result["model_fields"] = {}
    for kernel, e in result["kernels"].items():
        fields = model_fields(kernel, e["loops"])
        if fields is None:
            continue
        values = {}
        for field, src in fields.items():
            if src == "call":
                values[field] = e["call"]
            elif src.endswith("/skipping"):
                values[field] = e["loops"][src.split("/")[0]]["iteration_skipping_inner"]
            elif "/through:" in src:
                loop, child = src.split("/through:")
                values[field] = e["loops"][loop]["iteration_through_one"][child]
            else:
                values[field] = e["loops"][src]["iteration"]
        result["model_fields"][kernel.removeprefix("s2k_")] = values
    return result


# Thesis Table 5.9's seven averages against the counts: per unit, the innermost loop's iteration (a pooling: a
# 2x2 window at stride 2, per input pixel: an output's own code, its two window rows and four window pixels,
# over four), what long rows tend to; the rows', planes' and call's clocks come on top (docs/arm_clocks.md).
TABLE_5_9 = [
    ("padding, per 32-bit word", 2.0, "zero_span", lambda l: l["word"]),
    ("quantization, per input pixel", 8.0, "s2k_quantize", lambda l: l["pixel"]),
    ("ReLU 32-bit, per input pixel", 8.0, "s2k_relu32", lambda l: l["pixel"]),
    ("ReLU 8-bit, per input pixel", 2.5, "s2k_relu8", lambda l: l["pixel"]),
    ("max pooling 32-bit, per input pixel", 18.75, "s2k_maxpool32",
     lambda l: (l["output"] + 2 * l["window_row"] + 4 * l["window_pixel"]) / 4),
    ("max pooling 8-bit, per input pixel", 12.0, "s2k_maxpool8",
     lambda l: (l["output"] + 2 * l["window_row"] + 4 * l["window_pixel"]) / 4),
    ("element-wise addition, per input pixel", 8.0, "s2k_add_int8", lambda l: l["pixel"]),
]


def table_5_9(result):
    rows = []
    for name, thesis, kernel, per_unit in TABLE_5_9:
        e = result["kernels"][kernel]
        nominal = per_unit({n: l["iteration"] for n, l in e["loops"].items()})
        low = per_unit({n: r[0] for n, r in e["range"].items() if n != "call"})
        high = per_unit({n: r[1] for n, r in e["range"].items() if n != "call"})
        rows.append((name, thesis, kernel, nominal, low, high, nominal / thesis - 1))
    return rows


def listing(kernel, cc, objdump):
    _, functions = compile_and_disassemble(cc, objdump)
    insns = functions[kernel]
    by_addr = {i.addr: i for i in insns}
    prev = None
    for i in insns:
        c = clocks(i, prev, i.kind in ("branch",) or i.kind in ("cond_branch",) and i.target and i.target[0] <= i.addr,
                   by_addr, VARIANTS["nominal"])
        print(f"{i.addr:6x}  {c:2d}  {i.text}")
        prev = i


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cc", default=CC)
    ap.add_argument("--objdump", default=OBJDUMP)
    ap.add_argument("--out", help="write the counts (JSON) here")
    ap.add_argument("--check", help="compare the counts with this file; exit 1 if they differ")
    ap.add_argument("--listing", metavar="KERNEL", help="print a kernel's code with each instruction's clocks")
    ap.add_argument("--cxx", action="store_true", help="print the configuration's defaults as C++ initialisers")
    ap.add_argument("--table-5-9", action="store_true", help="print thesis Table 5.9 against the counts")
    a = ap.parse_args()
    if a.listing:
        listing(a.listing, a.cc, a.objdump)
        return 0
    result = count(a.cc, a.objdump)
    if a.table_5_9:
        print(f"{'operation (thesis Table 5.9)':40} {'thesis':>7} {'counted':>8} {'TRM range':>13} {'vs thesis':>9}  kernel")
        for name, thesis, kernel, nominal, low, high, dev in table_5_9(result):
            rng = f"{low:g}-{high:g}"
            print(f"{name:40} {thesis:7g} {nominal:8g} {rng:>13} {dev:+9.0%}  {kernel}")
        return 0
    if a.cxx:
        for k, fields in result["model_fields"].items():
            print(f"  {k}: " + ", ".join(f"{f} = {v}" for f, v in fields.items()))
        return 0
    text = json.dumps(result, indent=1) + "\n"
    if a.check:
        with open(a.check) as f:
            committed = json.load(f)
        if committed != json.loads(text):
            for k in result["kernels"]:
                if committed.get("kernels", {}).get(k) != result["kernels"][k]:
                    print(f"arm_clocks: {k}: counted clocks differ from {a.check}", file=sys.stderr)
            if committed.get("compiler") != result["compiler"]:
                print(f"arm_clocks: compiler {result['compiler']!r}, the data's {committed.get('compiler')!r}",
                      file=sys.stderr)
            return 1
        print(f"arm_clocks: {len(result['kernels'])} kernels counted, equal to {a.check}")
        return 0
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
