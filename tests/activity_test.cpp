// Activity counts (model/activity.h) on both backends, each from what it did: the MLA's MACs and padding
// MACs, the SRAM's bytes by port, the ARM's clocks and bytes, the PEs' busy and idle clocks. Exact values on
// directed tasks and streams, then model against RTL count by count on random tasks.
#include <gtest/gtest.h>

#include <algorithm>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/backends/backend.h"
#include "harness/stimulus/chip_random.h"
#include "harness/stimulus/random_vectors.h"
#include "model/pe/arm_ops.h"
#include "model/sram_layout.h"

using namespace s2;

namespace {

struct Both {
  TaskTrace model, rtl;
};

Both run_task(const Task& t, const HwConfig& cfg = {}) {
  RunOptions opt;
  opt.watchdog_cycles = 2'000'000;
  return {make_model_backend(cfg)->run(t, opt), make_rtl_backend(cfg)->run(t, opt)};
}

Task mm_task(int h_a, int w_a, int w_b) {
  Task t;
  t.id = "mm";
  t.op = Op::Mm;
  t.pe = 0;
  t.mm = {w_a, h_a, w_b, w_a};
  return t;
}

// Both backends' counts of a PE, and each equal to `want` but the clocks (equal to each other).
void expect_counts(const Activity& model, const Activity& rtl, const Activity& want, const std::string& what) {
  for (const auto& f : Activity::fields()) {
    const std::string name = f.name;
    if (name == "pe_busy_cycles" || name == "pe_idle_cycles") {
      EXPECT_EQ(model.*f.member, rtl.*f.member) << what << ": " << name;
      continue;
    }
    EXPECT_EQ(model.*f.member, want.*f.member) << what << ": model " << name;
    EXPECT_EQ(rtl.*f.member, want.*f.member) << what << ": rtl " << name;
  }
}

}  // namespace

// MM on PE 0, 16x4: A 6 x 10 (two row groups, 4 and 2 rows), B 10 x 20 (two column tiles, 16 and 4 columns),
// operand A in its own SRAM: four tiles of 10 steps.
TEST(Activity, MatrixMultiplicationCountsItsTilesOnBothBackends) {
  const Both r = run_task(mm_task(6, 10, 20));
  ASSERT_TRUE(r.model.completed && r.rtl.completed);
  ASSERT_EQ(r.model.pes.size(), 1u);
  ASSERT_EQ(r.rtl.pes.size(), 1u);
  Activity want;
  want.mac_ops = 10 * (4 * 16 + 4 * 4 + 2 * 16 + 2 * 4);  // = H_A x W_A x W_B = 1200
  want.mac_padding_ops = 4 * 10 * 64 - want.mac_ops;
  want.sram_read_bytes_mla_a = 4 * 3 * 16;                // 3 words of 10 steps x 4 bytes per tile
  want.sram_read_bytes_mla_b = 4 * 10 * 16;               // a row-start word per step
  want.sram_write_bytes_mla_out = 2 * (16 + 4) * 16;      // per row group 4 x ceil(16/4) + 4 x ceil(4/4) writes
  expect_counts(r.model.pes[0].activity, r.rtl.pes[0].activity, want, "PE 0");
  const PeTrace& pt = r.rtl.pes[0];
  EXPECT_EQ(pt.activity.pe_busy_cycles, pt.end_cycle - pt.start_cycle);
  EXPECT_EQ(pt.activity.pe_idle_cycles, 0u);
  EXPECT_EQ(r.model.activity.mac_ops, want.mac_ops);
  EXPECT_EQ(r.rtl.activity.mac_ops, want.mac_ops);
  EXPECT_TRUE(r.rtl.activity_unavailable.empty());
  // the model's tile schedule keeps no router count (noc_dram_activity_test.cpp); every other count it has
  EXPECT_EQ(r.model.activity_unavailable, (std::vector<std::string>{"noc_packets", "noc_packet_hops"}));
}

// The same MM with operand A in PE 1's SRAM: read through PE 1's NoC slave, a PE not running the task.
TEST(Activity, OperandAFromANeighbourIsCountedAtItsSram) {
  Task t = mm_task(6, 10, 20);
  t.a_src_shift = 1;
  const Both r = run_task(t);
  ASSERT_TRUE(r.model.completed && r.rtl.completed);
  for (const TaskTrace* tr : {&r.model, &r.rtl}) {
    EXPECT_EQ(tr->pes[0].activity.sram_read_bytes_mla_a, 0u) << tr->backend;
    EXPECT_EQ(tr->pes[0].activity.sram_read_bytes_dma, 0u) << tr->backend;
    EXPECT_EQ(tr->activity.sram_read_bytes_dma, 4u * 3 * 16) << tr->backend;
    EXPECT_EQ(tr->activity.mac_ops, 1200u) << tr->backend;
  }
}

// Convolution on PE 0: 18x3x2 input, five 3x3x2 filters (two filter groups, 4 and 1), one output row of 16
// pixels. Operand A travels through the NoC from PE 0's own SRAM: its NoC slave's reads.
TEST(Activity, ConvolutionCountsOperandAAtTheNocSlave) {
  Task t;
  t.id = "conv";
  t.op = Op::Conv;
  t.pe = 0;
  t.conv.Wi = 18;
  t.conv.Hi = 3;
  t.conv.D = 2;
  t.conv.Wf = 3;
  t.conv.Hf = 3;
  t.conv.C = 5;
  const Both r = run_task(t);
  ASSERT_TRUE(r.model.completed && r.rtl.completed);
  Activity want;
  want.mac_ops = 18 * (4 * 16 + 1 * 16);  // 18 steps per tile = C x Wo x D x Hf x Wf
  want.mac_padding_ops = 2 * 18 * 64 - want.mac_ops;
  want.sram_read_bytes_dma = 2 * 5 * 16;   // ceil(18 x 4 / 16) = 5 words per tile
  want.sram_read_bytes_mla_b = 2 * 6 * 2 * 16;  // D x Hf = 6 rows, each a row-start and a refill word
  want.sram_write_bytes_mla_out = 2 * 4 * 4 * 16;
  expect_counts(r.model.pes[0].activity, r.rtl.pes[0].activity, want, "PE 0");
}

// A stream on QPE-DRAM: PE 0 loads 100 bytes, ReLUs 40 int32 values, stores 100 bytes from an odd address.
TEST(Activity, DmaAndArmOnBothStreamBackends) {
  const HwConfig cfg;
  TaskStream s;
  s.dram_bytes = 8192;
  StreamCommand load;
  load.kind = CommandKind::DmaLoad;
  load.dma.dram_addr = 1000;
  load.dma.sram_addr = 259;
  load.dma.row_bytes = 100;
  StreamCommand relu;
  relu.kind = CommandKind::Arm;
  relu.arm.kind = ArmOpKind::Relu32;
  relu.arm.src = 1024;
  relu.arm.width = 40;
  StreamCommand store = load;
  store.kind = CommandKind::DmaStore;
  store.dma.dram_addr = 4096;
  s.pe[0] = {load, relu, store};
  std::vector<std::uint8_t> model_dram(8192, 7), rtl_dram(8192, 7);
  StreamRunOptions opt;
  opt.watchdog_cycles = 100000;
  const StreamResult m = make_model_stream_backend(cfg)->run(s, model_dram, opt);
  const StreamResult r = make_rtl_stream_backend(cfg)->run(s, rtl_dram, opt);
  ASSERT_TRUE(m.completed && r.completed);
  ASSERT_GE(m.pe_activity.size(), 1u);
  ASSERT_GE(r.pe_activity.size(), 1u);
  Activity want;
  want.sram_write_bytes_dma = 100;  // the load's bytes, each enabled once
  want.sram_read_bytes_dma = 7 * 16;  // the store reads the 7 lines bytes 259..358 touch
  want.sram_read_bytes_arm = want.sram_write_bytes_arm = 160;
  // the 32-bit ReLU's kernel, counted: its call, one plane, one row, 40 pixels
  const ArmRowKernelClocks& relu32 = HwConfig{}.arm_kernels.relu32;
  want.arm_cycles = static_cast<std::uint64_t>(relu32.call + relu32.plane + relu32.row + 40 * relu32.pixel);
  expect_counts(m.pe_activity[0], r.pe_activity[0], want, "PE 0");
  EXPECT_GT(r.pe_activity[0].pe_busy_cycles, 0u);
  EXPECT_EQ(r.pe_activity[0].pe_busy_cycles + r.pe_activity[0].pe_idle_cycles, r.pe_end_cycle[0]);
  EXPECT_TRUE(r.activity_unavailable.empty());
  EXPECT_EQ(m.activity.arm_cycles, want.arm_cycles);
  EXPECT_EQ(r.activity.arm_cycles, want.arm_cycles);
}

// Random tasks of the seeded suite, on the 16x4 array and with the 2-clock SRAM: every count of every PE the
// same on both backends (the clocks within the model's accuracy on contended tasks).
TEST(Activity, ModelEqualsRtlOnRandomTasks) {
  for (bool sram2clk : {false, true}) {
    HwConfig cfg;
    cfg.flaws.sram2clk = sram2clk;
    std::vector<Task> tasks = random_suite_tasks(2026, 40, cfg);
    int ran = 0;
    for (const Task& t : tasks) {
      if (mla_work_cycles(t, cfg) > 20000 || ran == 6) continue;
      ++ran;
      const Both r = run_task(t, cfg);
      ASSERT_TRUE(r.model.completed && r.rtl.completed) << t.id;
      ASSERT_EQ(r.model.pes.size(), r.rtl.pes.size());
      for (const auto& f : Activity::fields()) {
        const std::string name = f.name;
        const std::uint64_t m = r.model.activity.*f.member, x = r.rtl.activity.*f.member;
        const auto& unavailable = r.model.activity_unavailable;
        if (std::find(unavailable.begin(), unavailable.end(), name) != unavailable.end()) continue;  // the model's task NoC counts
        if (name == "pe_busy_cycles" || name == "pe_idle_cycles")
          EXPECT_LE(m > x ? m - x : x - m, x / 50 + 2) << t.id << (sram2clk ? " sram2clk " : " ") << name;
        else
          EXPECT_EQ(m, x) << t.id << (sram2clk ? " sram2clk " : " ") << name;
      }
    }
    EXPECT_EQ(ran, 6);
  }
}

// Random chip streams (DMA between DRAMs and SRAMs of every shape, MLA tasks, ARM operations, Syncs) on
// QPE-DRAM and the mini chip: every count of every PE the same on both backends, the clocks too (the
// streams are clock-exact on both).
TEST(Activity, ModelEqualsRtlOnRandomStreams) {
  Activity total;  // the streams do MLA tasks, DMA loads and ARM operations between them
  for (const std::string sys : {"1x1", "mini"}) {
    const HwConfig cfg = chip_random_config(sys);
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const TaskStream s = random_chip_stream(cfg, seed);
      SystemMemory mm = random_chip_memory(cfg, s, seed), mr = mm;
      StreamRunOptions opt;
      opt.watchdog_cycles = 2'000'000;
      const StreamResult m = make_model_stream_backend(cfg)->run(s, mm, opt);
      const StreamResult r = make_rtl_stream_backend(cfg)->run(s, mr, opt);
      ASSERT_TRUE(m.completed && r.completed) << sys << " seed " << seed;
      ASSERT_EQ(m.pe_activity.size(), r.pe_activity.size());
      total += r.activity;
      for (std::size_t p = 0; p < m.pe_activity.size(); ++p)
        for (const auto& f : Activity::fields())
          EXPECT_EQ(m.pe_activity[p].*f.member, r.pe_activity[p].*f.member) << sys << " seed " << seed << " PE " << p << " " << f.name;
    }
  }
  EXPECT_GT(total.mac_ops, 0u);
  EXPECT_GT(total.sram_read_bytes_dma, 0u);
  EXPECT_GT(total.sram_write_bytes_dma, 0u);
  EXPECT_GT(total.arm_cycles, 0u);
  EXPECT_GT(total.pe_busy_cycles, 0u);
}

