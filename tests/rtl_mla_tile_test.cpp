// One MLA tile through the whole verilated QPE (rtl_stubs/qpe.sv), driven by the RTL backend
// (harness/backends/rtl/rtl_qpe_adapter.cpp: descriptors through the host port, data through the SRAM backdoor).
//
// Expected clock counts, derived from rtl_stubs/mla.sv, noc_if.sv, noc_router.sv, sram.sv and task_ctrl.sv
// for a task on PE 0 alone (no other traffic). The count is end_cycle - start_cycle: start_cycle is the
// MLA's SETUP clock, end_cycle the clock after its last OUT_WAIT clock, so
//   cycles = tiles x 1 (SETUP) + COMPUTE clocks + OUTPUT and OUT_WAIT clocks (st_output counts both).
//
// mm [W_A=4, H_A=4] x [W_B=16, H_B=4], A from the own SRAM (SRAM master 1), 1 tile, 4 steps, 1 A word:
//   no flaw: C1 A read granted (master 1 beats operand B, master 2); C2 A word arrives (usable the clock it
//   arrives), B row 0 granted; C3..C6 one step per clock, each using the B row read the clock before while the
//   next is granted (fb_row <= row_after lets the next row be requested in the step's clock). COMPUTE = 6
//   (a_wait 1: C1; b_wait 1: C2). OUTPUT: 4 rows x ceil(16/4) = 16 writes, one per clock, + 1 OUT_WAIT clock
//   (the last write completes at the end of its grant clock). Total 1 + 6 + 17 = 24.
//   sram2clk: every access holds the port 2 clocks and its data comes the clock after: C1 A granted, C2 busy,
//   C3 A arrives + B0 granted, C4 busy, C5 step 0 + B1 granted, C6 busy, ..., C11 step 3. COMPUTE = 11
//   (a_wait 2, b_wait 5). OUTPUT: 16 writes every 2 clocks = 31 clocks to the last grant, OUT_WAIT 2 (out_wait
//   covers the busy clock of the last write). Total 1 + 11 + 33 = 45.
// conv [Wi=16, Hi=1, D=4] x [Wf=1, Hf=1, D=4, C=4], 1 tile, 4 steps, 1 A word, 4 B rows, 0 refills. Operand A
//   of a convolution always travels through the NoC, even from the own SRAM (thesis 2.3.2; rtl_stubs/README.md, "Microarchitecture"):
//   no flaw: C1 the A read request is pushed into the PE's outbound request FIFO, B row 0 granted;
//   C2 the router takes the request in the NoC half-clock after the PE edge (B row 0 arrives and is staged);
//   4 NoC clocks = 2 PE clocks later it is in PE 0's inbound request FIFO, so the NoC slave asks for the SRAM
//   in C4 (master 0) and is granted; C5 the line arrives and the read response is pushed; C6 the router
//   takes it; C8 it is in the inbound response FIFO, the MLA uses it as it arrives: step 0 (with the staged
//   B row 0) and B row 1 granted; C9..C11 steps 1..3. COMPUTE = 11 (a_wait 7: C1..C7). OUTPUT 16 + 1.
//   Total 1 + 11 + 17 = 29.
//   sram2clk: B row 0 holds the port C1-C2 and is staged in C3; the NoC slave is granted in C4 and holds the
//   port C4-C5; the response is pushed in C6, the router takes it in C7 and it is used in C9 (step 0, B row 1
//   granted); then one step every 2 clocks: C11, C13, C15. COMPUTE = 15 (a_wait 8, b_wait 3).
//   OUTPUT 31 + 2. Total 1 + 15 + 33 = 49.
// 16x2 and 8x4 builds: the same per-tile timing, but 2 tiles (16x2: 2 filter / row groups of 2 rows; 8x4: 2
//   column tiles of 8) with 8 writes each (2 rows x 4 words | 4 rows x 2 words):
//   mm 2 x (1 + 6 + 9) = 32, conv 2 x (1 + 11 + 9) = 42.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "harness/backends/backend.h"
#include "model/golden.h"
#include "tests/test_support.h"

namespace s2 {
namespace {

using namespace s2::test;

// The tasks (mm_tile, conv_tile, multi_tile_conv, multi_tile_mm) and expect_golden: tests/test_support.h.

TaskTrace run_rtl(const Task& t, const HwConfig& cfg) {
  return run_with_watchdog(*make_rtl_backend(cfg), t, 100000);
}

// The RTL's phase counters add up to the task's clocks.
void expect_timing(const TaskTrace& tr, const ExpectedTiming& e) {
  expect_lone_pe_timing(tr, e);
  if (tr.pes.size() != 1) return;  // already a failure
  const PeTrace& p = tr.pes[0];
  // the phases account for every clock of a lone PE
  EXPECT_EQ(p.tiles + p.phases.compute + p.phases.output, tr.cycles);
}

// A task through the RTL: golden results and the hand-derived clocks.
void expect_tile(const Task& t, const HwConfig& cfg, const ExpectedTiming& e) {
  const TaskTrace tr = run_rtl(t, cfg);
  expect_golden(t, cfg, tr);
  expect_timing(tr, e);
}

// ---------------------------------------------------------------- one tile on the 16x4 build

TEST(RtlMlaTile, MmOneTileGoldenAndCycles) {
  expect_tile(mm_tile(), config("16x4", false), {24, 6, 17, 1, 1, 1, 4});
}

TEST(RtlMlaTile, MmOneTileWithSram2clk) {
  expect_tile(mm_tile(), config("16x4", true), {45, 11, 33, 2, 5, 1, 4});
}

TEST(RtlMlaTile, ConvOneTileGoldenAndCycles) {
  expect_tile(conv_tile(), config("16x4", false), {29, 11, 17, 7, 0, 1, 4});
}

TEST(RtlMlaTile, ConvOneTileWithSram2clk) {
  expect_tile(conv_tile(), config("16x4", true), {49, 15, 33, 8, 3, 1, 4});
}

TEST(RtlMlaTile, ExtremeDataWrapsInTheRtlAsInTheGolden) {
  // the same tile with every operand -128 / 127: small sums, but exercises sign handling of both operands
  for (DataPattern d : {DataPattern::AllMin, DataPattern::AllMax, DataPattern::MinMax}) {
    Task t = conv_tile();
    t.data = d;
    const HwConfig cfg = config("16x4", false);
    expect_golden(t, cfg, run_rtl(t, cfg));
  }
}

// ---------------------------------------------------------------- the other MAC-array builds

TEST(RtlMlaTile, OtherMacShapesAreBitExact) {
  const TaskTrace ref_mm = run_rtl(mm_tile(), config("16x4", false));
  const TaskTrace ref_conv = run_rtl(conv_tile(), config("16x4", false));
  for (const char* shape : {"16x2", "8x4"}) {
    SCOPED_TRACE(shape);
    const HwConfig cfg = config(shape, false);
    const TaskTrace mm = run_rtl(mm_tile(), cfg);
    expect_golden(mm_tile(), cfg, mm);
    ASSERT_EQ(mm.pes.size(), 1u);
    EXPECT_EQ(mm.pes[0].results, ref_mm.pes[0].results);
    expect_timing(mm, {32, 12, 18, 2, 2, 2, 8});
    const TaskTrace conv = run_rtl(conv_tile(), cfg);
    expect_golden(conv_tile(), cfg, conv);
    ASSERT_EQ(conv.pes.size(), 1u);
    EXPECT_EQ(conv.pes[0].results, ref_conv.pes[0].results);
    expect_timing(conv, {42, 22, 18, 14, 0, 2, 8});
  }
}

TEST(RtlMlaTile, MultiTileTasksBitExactOnEveryShapeAndSource) {
  // several tiles, odd sizes, refills (Wf = 5), padded filter groups / rows of A, all 4 PEs, every source
  Task conv = multi_tile_conv(-1);
  Task mm = multi_tile_mm(-1);
  for (const char* shape : {"16x4", "16x2", "8x4"}) {
    for (int shift : {-1, 0, 1, 2, 3}) {
      SCOPED_TRACE(std::string(shape) + " a_src " + std::to_string(shift));
      const HwConfig cfg = config(shape, shift == 2);
      conv.a_src_shift = shift;
      mm.a_src_shift = shift;
      expect_golden(conv, cfg, run_rtl(conv, cfg));
      expect_golden(mm, cfg, run_rtl(mm, cfg));
    }
  }
}

TEST(RtlMlaTile, ResetAfterAnAbortedTaskLeavesNoStaleOperandA) {
  // The backend resets the QPE before every task; a task stopped by the watchdog in the middle of a tile
  // (a hang, or a flaw-limit search) must not disturb the next one.
  const HwConfig cfg = config("16x4", false);
  auto rtl = make_rtl_backend(cfg);
  const Task big = make_mm_task("aborted", MmShape{64, 4, 64, 64}, 0, 3);
  for (std::uint64_t stop : {3u, 5u, 7u, 14u, 25u}) {
    ASSERT_FALSE(run_with_watchdog(*rtl, big, stop).completed);
    expect_golden(mm_tile(), cfg, run_with_watchdog(*rtl, mm_tile(), 100000));
  }
}

}  // namespace
}  // namespace s2
