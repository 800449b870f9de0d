// The SNN paper's Dominant/Subordinate deployment (mapper/snn/deployment.h) end to end: layers a PE's budget
// cannot hold, split over the Subordinates of a QPE (neighbour operands) and over a chip's QPEs (DMA copies of
// operand A), on the model and on the RTL, their currents bit-exact against the golden reference; every PE
// within its budget, as few PEs as fit, refusals that say why, and the mm_wide_a flaw striking a Subordinate
// that reads a wide operand A from its Dominant.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/backends/backend.h"
#include "mapper/snn/deployment.h"
#include "mapper/snn/layouts.h"
#include "model/hw_config.h"
#include "model/snn_layer.h"
#include "snn_support.h"
#include "test_support.h"

using namespace s2;
using namespace s2::mapper;

namespace {

HwConfig mini() { return test::preset_config("mini"); }

int subordinates_reading(const SnnPlan& p, bool neighbour) {
  int n = 0;
  for (const SnnPe& pe : p.pes) n += !pe.dominant && pe.neighbour_operand == neighbour;
  return n;
}

}  // namespace

TEST(SnnDeployment, SubordinatesOfOneQpeReadOperandAAsNeighboursBitExactOnBothBackends) {
  // post 33 (16k + 1): the mixed layout's ARM columns too; 5 delays: two row groups of operand A
  const SnnLayer layer = draw_snn_layer({40, 33, 5, 11, 0.3, 0.3, 7});
  const std::vector<SnnPlan> plans = test::run_snn_everywhere(layer, HwConfig{}, 7000, "qpe");
  ASSERT_EQ(plans.size(), std::size(kSnnLayouts));
  for (const SnnPlan& p : plans) {
    EXPECT_GE(p.subordinates(), 1) << to_string(p.layout) << " holds on one PE at 7000 bytes: the test needs a smaller budget";
    EXPECT_LE(p.pes.size(), 4u);
    EXPECT_TRUE(p.pes.front().dominant);
    EXPECT_EQ(p.pes.front().sram.weights, 0u) << "the Dominant holds no weights";
    const bool mla_reads_neighbours = p.layout == SnnLayout::OriginalMac || p.layout == SnnLayout::OperandStack || p.layout == SnnLayout::Echelon;
    if (mla_reads_neighbours) {
      EXPECT_EQ(subordinates_reading(p, true), p.subordinates()) << to_string(p.layout);
    }
  }
}

TEST(SnnDeployment, OneDelayAndSilentAndFullSpikeTrainsOverSubordinates) {
  // post 16 (16k: echelon_mixed is pure echelon), one delay: one MLA row of four per multiplication
  SnnLayer layer = draw_snn_layer({96, 16, 1, 6, 0.3, 0.0, 11});
  ASSERT_EQ(layer.spike_count(), 0u);
  for (const SnnPlan& p : test::run_snn_everywhere(layer, HwConfig{}, 1600, "silent")) EXPECT_GE(p.subordinates(), 2) << to_string(p.layout);
  std::fill(layer.spikes.begin(), layer.spikes.end(), 1);
  test::run_snn_everywhere(layer, HwConfig{}, 1600, "all_spiking");
}

TEST(SnnDeployment, SubordinatesOfOtherQpesCopyOperandABitExactOnAChip) {
  const SnnLayer layer = draw_snn_layer({256, 58, 2, 5, 0.3, 0.3, 8});
  const std::vector<SnnPlan> plans = test::run_snn_everywhere(layer, mini(), 8000, "mini");
  ASSERT_EQ(plans.size(), std::size(kSnnLayouts));
  for (const SnnPlan& p : plans) {
    EXPECT_GT(p.pes.size(), 4u) << to_string(p.layout) << ": the test needs Subordinates beyond the Dominant's QPE";
    EXPECT_GE(subordinates_reading(p, false), 1) << to_string(p.layout);
  }
  // a layer one PE holds runs on the Dominant alone, wherever the chip puts it
  for (const SnnPlan& p : test::run_snn_everywhere(draw_snn_layer({30, 20, 3, 6, 0.3, 0.3, 12}), mini(), 96 * 1024, "mini one PE"))
    EXPECT_EQ(p.pes.size(), 1u) << to_string(p.layout);
}

TEST(SnnDeployment, TakesTheFewestPesThatFitAndMoreAsTheBudgetShrinks) {
  const SnnLayer layer = draw_snn_layer({64, 40, 4, 4, 0.2, 0.2, 9});
  const HwConfig cfg = mini();
  for (SnnLayout l : kSnnLayouts) {
    std::size_t last = 0;
    for (std::uint64_t budget : {96u * 1024, 24000u, 12000u, 8000u}) {
      SnnPlan p;
      try {
        p = plan_snn_layer(layer, l, cfg, budget);
      } catch (const std::invalid_argument&) {
        break;  // this budget holds no split
      }
      EXPECT_GE(p.pes.size(), last) << to_string(l) << " at " << budget;
      last = p.pes.size();
      // a budget one byte below what the largest PE of this plan needs takes more PEs, or none fits
      std::uint64_t largest = 0;
      for (const SnnPe& pe : p.pes) largest = std::max(largest, pe.sram.total());
      EXPECT_LE(largest, budget);
      try {
        EXPECT_GT(plan_snn_layer(layer, l, cfg, largest - 1).pes.size(), p.pes.size()) << to_string(l) << " at " << largest - 1;
      } catch (const std::invalid_argument&) {
      }
    }
  }
}

TEST(SnnDeployment, ABudgetNoSplitFitsIsRefusedSayingWhy) {
  const SnnLayer layer = draw_snn_layer({64, 40, 4, 4, 0.2, 0.2, 9});
  for (SnnLayout l : kSnnLayouts) {
    try {
      plan_snn_layer(layer, l, HwConfig{}, 2000);
      ADD_FAILURE() << to_string(l) << " planned in 2000 bytes";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("within 2000 bytes"), std::string::npos) << what;
      EXPECT_NE(what.find(to_string(l)), std::string::npos) << what;
    }
  }
}

TEST(SnnDeployment, MmWideAHangsASubordinateReadingAWideOperandAFromItsNeighbour) {
  // operand_stack in two slabs of 3 x 128 / 2 = 192 rows: W_A beyond the flaw's limit of 125 (rtl_stubs/README.md)
  const SnnLayer layer = draw_snn_layer({128, 20, 3, 3, 0.3, 0.3, 10});
  HwConfig cfg;
  const SnnPlan p = plan_snn_layer(layer, SnnLayout::OperandStack, cfg, 8000);
  ASSERT_GE(subordinates_reading(p, true), 1);
  int widest = 0;
  for (const auto& cmds : p.stream.pe)
    for (const StreamCommand& c : cmds)
      if (c.kind == CommandKind::Mla && c.mla.a_from_neighbor()) widest = std::max(widest, c.mla.mm.W_A);
  ASSERT_GE(widest, 125) << "the test needs a neighbour read of 125 or more operand-A columns";
  SystemMemory on_model = p.memory;
  const StreamResult m = make_model_stream_backend(cfg)->run(p.stream, on_model, StreamRunOptions{});
  ASSERT_TRUE(m.completed);
  cfg.flaws.mm_wide_a = true;
  SystemMemory mem = p.memory;
  StreamRunOptions ro;
  ro.watchdog_cycles = 2 * m.cycles;  // correct hardware ends by the model's clocks
  const StreamResult r = make_rtl_stream_backend(cfg)->run(p.stream, mem, ro);
  EXPECT_FALSE(r.completed) << "mm_wide_a did not strike";
  // the same layer with every Subordinate copying operand A (echelon_mixed's ARM columns need it) runs through
  const SnnPlan mixed = plan_snn_layer(layer, SnnLayout::EchelonMixed, cfg, 8000);
  ASSERT_EQ(subordinates_reading(mixed, true), 0);
  SystemMemory mem2 = mixed.memory;
  ro.watchdog_cycles = 20 * m.cycles;
  const StreamResult r2 = make_rtl_stream_backend(cfg)->run(mixed.stream, mem2, ro);
  ASSERT_TRUE(r2.completed) << r2.stalled;
  EXPECT_EQ(snn_plan_currents(mixed, layer, mem2), snn_currents(layer));
}
