// Random task suites in contract-1 form (CSV, version 1), deterministic for a seed on every machine.
//
// A suite mixes convolutions and matrix multiplications of every kind the QPE accepts, chosen so that
// together they cover the corners that break hardware and models: widths that are not a multiple of 16
// (Wi for conv, W_B for mm), channel counts that are not a multiple of 4 (C for conv, H_A for mm), every
// filter size 1x1 .. 9x9 (and a few non-square ones), inputs that fill the SRAM budget (> 90 %), extreme
// data (min, max, minmax) including convolutions whose 29-bit accumulators wrap, every operand-A source
// (local, neighbor:0 .. neighbor:3), and single-PE tasks next to pe=all. The header comment of the CSV states
// how the suite was made (seed, count, command) and how many tasks cover each corner.
//
// Every task fits cfg.sram_mla_budget_bytes after alignment (sram_layout) and has W_A = H_B. Tasks are kept
// small: a suite of 240 needs a few tens of millions of PE clocks on the RTL with the sram2clk flaw on.
// Coverage of every corner is guaranteed for count >= 40: the generator deals tasks from a 40-slot pattern and
// cycles filter sizes, operand-A sources, data patterns and single PEs round-robin; only whether a width or a
// channel count is a multiple of 16 / 4 is drawn at random (about half of the tasks each).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/hw_config.h"
#include "model/task.h"

namespace s2 {

// The tasks of the suite, in the order random_suite_csv writes them.
std::vector<Task> random_suite_tasks(std::uint64_t seed, int count, const HwConfig& cfg);

// The suite as contract-1 CSV text: header comment, column header, one row per task. Besides the contract
// columns (and `data`), two informative columns that readers ignore: sram_bytes (footprint in one PE after
// alignment) and est_clocks_sram2clk (estimate_pe_clocks_sram2clk).
std::string random_suite_csv(std::uint64_t seed, int count, const HwConfig& cfg);

// A rough estimate of the QPE clocks of `t` with the sram2clk flaw on (every SRAM access occupies the port for
// 2 PE clocks), per MLA tile: 1 setup clock; compute clocks: max(steps, 2 x (operand-B reads + operand-A
// reads)) and, for conv, D*Hf*(Wf + 1 + [Wf > 1]) + 1.5 x operand-A reads (the operand-B stalls at each input
// row), plus about 10 clocks of operand-A latency; 2 clocks per 128-bit result write plus 1.
// Used to keep suites small; not a timing model (within about 20 % of the RTL of rtl_stubs/ per task).
std::uint64_t estimate_pe_clocks_sram2clk(const Task& t, const HwConfig& cfg);

// Whether the 29-bit accumulators of `t` wrap, known exactly only for the extreme data patterns (every
// product is the same: min 16384, max 16129, minmax -16256; the sum over a window is product x window).
// Random data: false (not computed).
bool extreme_data_wraps(const Task& t, const HwConfig& cfg);

}  // namespace s2
