#!/usr/bin/env python3
"""The table (and JSON) of tools/synth.sh from Yosys's `stat -json -tech cmos` per MAC-array shape.

Environment: WORK (the directory with <shape>.json and <shape>.seconds), SHAPES (space-separated), JSON
(a file to write, or empty), COMMIT, VERSION (yosys -V). Blocks are pe.sv's instances, each with the
modules below it; the SRAM's four banks (memory cells) are left out of every count."""
import datetime
import json
import os
import re
import sys

BLOCKS = [("mla", "mla"), ("dma", "dma"), ("noc_if", "noc_if"), ("task_ctrl", "task_ctrl"),
          ("sram port logic", "sram")]
# the cells Yosys 0.23's CMOS table costs (kernel/cost.h); anything else would make its estimate partial
COSTED = {"$_BUF_", "$_NOT_", "$_AND_", "$_NAND_", "$_OR_", "$_NOR_", "$_ANDNOT_", "$_ORNOT_", "$_XOR_",
          "$_XNOR_", "$_AOI3_", "$_OAI3_", "$_AOI4_", "$_OAI4_", "$_MUX_", "$_NMUX_", "$_DFF_P_", "$_DFF_N_"}
# flip-flops with an asynchronous reset: not in the table, costed as its plain flip-flop
ASYNC_FLOPS = {"$_DFF_PN0_", "$_DFF_PN1_"}
PLAIN_FLOP_TRANSISTORS = 16  # the table's $_DFF_P_
MEMORY = "$mem_v2"
SRAM_BANKS = 4
NOTE = ("generic-cell estimate (Yosys's generic gates, its CMOS transistor table; no technology library, "
        "the 128 KB SRAM's storage a black box, not counted): for ratios between shapes, not absolute mm^2")


def base_name(module):
    """pe, or mla from $paramod$<hash>\\mla / $paramod\\noc_if\\PE_ID=2'00."""
    return module.split("\\")[1] if module.startswith("$paramod") else module


def fail(message):
    sys.exit(f"synth.sh: {message}")


def own_figures(name, stat, module_names):
    """A module's own cells (memory cells apart), flip-flops and transistors, and its submodules."""
    cells = flops = memories = 0
    children = {}
    async_flops = 0
    for cell_type, count in stat["num_cells_by_type"].items():
        if cell_type == MEMORY:
            memories += count
        elif cell_type in module_names:
            children[cell_type] = count
        elif cell_type in COSTED or cell_type in ASYNC_FLOPS:
            cells += count
            if cell_type.startswith("$_DFF"):
                flops += count
            if cell_type in ASYNC_FLOPS:
                async_flops += count
        else:
            fail(f"module {name} has {count} cells of type {cell_type}, which the CMOS table does not cost")
    estimate = re.fullmatch(r"(\d+)\+?", str(stat["estimated_num_transistors"]))
    if not estimate:
        fail(f"module {name}: no transistor estimate ({stat['estimated_num_transistors']})")
    transistors = int(estimate.group(1)) + PLAIN_FLOP_TRANSISTORS * async_flops
    return {"cells": cells, "flops": flops, "transistors": transistors}, children, memories


def load_stat(path):
    """Yosys 0.23's `stat -json`, mended: it prints the design hierarchy's text into the JSON (dropped here:
    no JSON line starts with anything but a quote or a brace) and names public modules \\name in its keys
    but name in the cell types that instantiate them."""
    with open(path) as f:
        text = "".join(line for line in f if re.match(r"\s*[\"{}]", line))
    modules = json.loads(text)["modules"]
    return {name[1:] if name.startswith("\\") else name: stat for name, stat in modules.items()}


def shape_figures(modules):
    own, children, memories = {}, {}, {}
    for name, stat in modules.items():
        own[name], children[name], memories[name] = own_figures(name, stat, modules.keys())
    banks = {name: n for name, n in memories.items() if n}
    if list(map(base_name, banks)) != ["sram"] or sum(banks.values()) != SRAM_BANKS:
        fail(f"expected the SRAM's {SRAM_BANKS} banks as the only memory cells, found {banks}")

    def total(name):
        t = dict(own[name])
        for child, count in children[name].items():
            for key, value in total(child).items():
                t[key] += count * value
        return t

    top = [name for name in modules if base_name(name) == "pe"]
    if len(top) != 1:
        fail(f"expected one pe module, found {top}")
    pe = top[0]
    by_base = {base_name(child): child for child in children[pe]}
    blocks = {}
    for label, module in BLOCKS:
        if module not in by_base:
            fail(f"pe has no {module} instance (its instances: {sorted(by_base)})")
        blocks[label] = total(by_base[module])
    blocks["pe glue"] = own[pe]  # pe.sv's own logic: the register-write and statistics multiplexers
    return total(pe), blocks


def main():
    work, shapes = os.environ["WORK"], os.environ["SHAPES"].split()
    result = {"yosys": os.environ["VERSION"], "date": datetime.date.today().isoformat(),
              "commit": os.environ["COMMIT"], "note": NOTE, "shapes": {}}
    for shape in shapes:
        pe, blocks = shape_figures(load_stat(os.path.join(work, shape + ".json")))
        with open(os.path.join(work, shape + ".seconds")) as f:
            seconds = int(f.read())
        result["shapes"][shape] = dict(pe, blocks=blocks, seconds=seconds)

    first = shapes[0]
    print(f"One PE's logic per MAC-array shape (COLS x ROWS), {result['yosys']}, {result['date']}, commit {result['commit']}")
    print(f"Area: {NOTE}.")
    print(f"{'shape':<6} {'block':<16} {'cells':>9} {'flip-flops':>10} {'transistors':>12} {'vs ' + first:>8}")
    for shape in shapes:
        s = result["shapes"][shape]
        rows = list(s["blocks"].items()) + [("pe total", s)]
        for i, (label, fig) in enumerate(rows):
            ref = (result["shapes"][first]["blocks"].get(label) if label != "pe total" else result["shapes"][first])
            ratio = f"{fig['transistors'] / ref['transistors']:.2f}" if ref and ref["transistors"] else "-"
            print(f"{shape if i == 0 else '':<6} {label:<16} {fig['cells']:>9} {fig['flops']:>10} "
                  f"{fig['transistors']:>12} {ratio:>8}")
    print("Time per shape: " + ", ".join(f"{sh} {result['shapes'][sh]['seconds']} s" for sh in shapes))
    if os.environ.get("JSON"):
        with open(os.environ["JSON"], "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
