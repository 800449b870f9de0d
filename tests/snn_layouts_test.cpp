// SNN synaptic processing end to end on one PE: each layout (mapper/snn/layouts.h) of small layers run on the
// model and on the RTL, its currents bit-exact against the golden reference straight from the synapse list,
// the model's clocks against the RTL's. Shapes around the MAC array's edges: post 16k - 1, 16k, 16k + 1, one
// delay, more delays than MAC rows, empty spike trains and every neuron spiking.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "harness/backends/backend.h"
#include "harness/commands/snn_runner.h"
#include "mapper/snn/echelon.h"
#include "mapper/snn/layouts.h"
#include "model/hw_config.h"
#include "model/snn_layer.h"
#include "snn_support.h"
#include "test_support.h"

using namespace s2;
using namespace s2::mapper;

namespace {

struct Case {
  const char* name;
  SnnDraw draw;
};

void run_everywhere(const SnnLayer& layer, const std::string& what) {
  const HwConfig cfg;  // QPE-DRAM
  for (const SnnPlan& p : test::run_snn_everywhere(layer, cfg, std::uint64_t(cfg.sram_mla_budget_bytes), what))
    EXPECT_EQ(p.pes.size(), 1u) << what << " " << to_string(p.layout) << ": one PE holds these layers";
}

}  // namespace

TEST(SnnLayouts, SmallLayersAreBitExactOnBothBackendsInEveryLayout) {
  const Case cases[] = {
      {"post15", {13, 15, 2, 7, 0.3, 0.3, 1}},
      {"post16", {9, 16, 1, 5, 0.5, 0.4, 2}},
      {"post17", {21, 17, 3, 8, 0.2, 0.3, 3}},
      {"delays6", {10, 33, 6, 9, 0.25, 0.3, 4}},
  };
  for (const Case& c : cases) run_everywhere(draw_snn_layer(c.draw), c.name);
}

TEST(SnnLayouts, EmptyAndFullSpikeTrains) {
  SnnLayer l = draw_snn_layer({12, 20, 3, 6, 0.4, 0.0, 5});
  ASSERT_EQ(l.spike_count(), 0u);
  run_everywhere(l, "silent");
  std::fill(l.spikes.begin(), l.spikes.end(), 1);
  run_everywhere(l, "all_spiking");
}

TEST(SnnLayouts, ALayerTooLargeForOnePeGoesToSubordinates) {
  const SnnLayer l = draw_snn_layer({800, 200, 4, 2, 0.1, 0.1, 6});
  HwConfig cfg;
  apply_preset(cfg, "prototype");
  const SnnPlan p = plan_snn_layer(l, SnnLayout::OperandStack, cfg, 96 * 1024);
  EXPECT_GT(p.subordinates(), 4) << "the weight-delay map's 3200 x 208 bytes in 96 KB slabs";
  EXPECT_THROW(plan_snn_layer(l, SnnLayout::OperandStack, HwConfig{}, 96 * 1024), std::invalid_argument) << "QPE-DRAM has 4 PEs";
}

TEST(SnnEchelon, BandsEncloseEveryWeightInAlignedRectangles) {
  // random layers of every remainder: each echelon row's non-zero weights lie inside its band's columns, bands
  // are multiples of 4 rows and start on 16-column stripes, rows outside the bands have no weight in the MLA's
  // columns, and the table is the inverse of the order
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const SnnLayer l = draw_snn_layer({int(7 + 5 * seed), int(3 + 7 * seed), int(1 + seed % 5), 1, 0.15, 0.0, seed});
    for (bool mixed : {false, true}) {
      const int blue = mixed ? l.post / 16 * 16 : (l.post + 15) / 16 * 16;
      const EchelonMap e = echelon_reorder(l, blue);
      const int n = l.delays * l.pre;
      ASSERT_EQ(int(e.source.size()), n);
      for (int r = 0; r < n; ++r) EXPECT_EQ(e.target[std::size_t(e.source[std::size_t(r)])], r);
      std::vector<int> band_of(std::size_t(n) + 4, -1);
      int line = 0;
      for (std::size_t k = 0; k < e.bands.size(); ++k) {
        const EchelonBand& b = e.bands[k];
        EXPECT_EQ(b.first_row, line) << "bands are contiguous";
        EXPECT_EQ(b.rows % 4, 0);
        EXPECT_EQ(b.first_col % 16, 0);
        EXPECT_LT(b.first_col, blue);
        for (int r = b.first_row; r < b.first_row + b.rows && r < n; ++r) band_of[std::size_t(r)] = int(k);
        line += b.rows;
      }
      for (int r = 0; r < n; ++r)
        for (int j = 0; j < std::min(blue, l.post); ++j) {
          if (weight_delay(l, e.source[std::size_t(r)], j) == 0) continue;
          ASSERT_GE(band_of[std::size_t(r)], 0) << "seed " << seed << ": echelon row " << r << " has a weight at " << j << " but no band";
          EXPECT_GE(j, e.bands[std::size_t(band_of[std::size_t(r)])].first_col) << "seed " << seed << " row " << r;
        }
      // rows sorted by their first weight: the enclosed weights never exceed the aligned map's
      EXPECT_LE(e.band_weights(), std::uint64_t((n + 3) / 4 * 4) * std::uint64_t((l.post + 15) / 16 * 16));
    }
  }
}

TEST(SnnCommand, ReportsEveryLayoutWithItsMemoryAndClocksPerTimestep) {
  const test::TempDir dir;
  SnnRequest req;
  req.draw = {30, 20, 3, 9, 0.3, 0.2, 11};
  req.json_out = dir.path("snn.json");
  req.junit_out = dir.path("snn.xml");
  std::ostringstream out, err;
  EXPECT_EQ(snn(req, out, err), 0) << err.str() << out.str();
  const nlohmann::json j = test::read_json(req.json_out);
  ASSERT_EQ(j["layouts"].size(), 5u);
  for (const auto& l : j["layouts"]) {
    EXPECT_EQ(l["status"], "pass") << l.dump();
    EXPECT_TRUE(l["data_match"].get<bool>());
    EXPECT_EQ(l["pes"], 1);
    EXPECT_EQ(l["pes_dominant"], 1);
    EXPECT_EQ(l["pes_subordinate"], 0);
    EXPECT_GT(l["memory_bytes"].get<std::uint64_t>(), 0u);
    EXPECT_GT(l["model_cycles_per_timestep"].get<double>(), 0.0);
    EXPECT_EQ(l["model_cycles_per_timestep"], l["rtl_cycles_per_timestep"]);
    EXPECT_EQ(l["delta"].get<double>(), 0.0);
  }
  EXPECT_EQ(j["layouts"][0]["layout"], "serial_arm");
  EXPECT_DOUBLE_EQ(j["layouts"][0]["time_percent_of_serial_arm"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(j["layouts"][1]["memory_percent_of_original_mac"].get<double>(), 100.0);
  EXPECT_EQ(j["results"]["checks"].size(), 5u);
}

TEST(SnnCommand, BadInputIsRefusedWithExitCode2AndNothingRun) {
  const test::TempDir dir;
  auto refused = [&](SnnRequest req, const std::string& says) {
    req.json_out = dir.path("never.json");
    std::ostringstream out, err;
    EXPECT_EQ(snn(req, out, err), 2) << says;
    EXPECT_NE(err.str().find(says), std::string::npos) << err.str();
    EXPECT_FALSE(std::filesystem::exists(req.json_out));
  };
  SnnRequest r;
  r.draw = {30, 20, 3, 9, 0.3, 0.2, 11};
  SnnRequest bad = r;
  bad.layout = "zigzag";
  refused(bad, "--layout zigzag");
  bad = r;
  bad.draw.density = 2;
  refused(bad, "density is 2");
  bad = r;
  bad.draw.post = 0;
  refused(bad, "post is 0");
  bad = r;
  bad.target = "s3";
  refused(bad, "--target s3");
  bad = r;
  bad.preset = "mini";
  refused(bad, "a chip preset needs --target s2");
  bad = r;
  bad.budget_bytes = 600;  // not one slice of any layout (nor the Dominant's spike window and operand A)
  refused(bad, "within 600 bytes of SRAM per PE");
  bad.target = "s2";
  bad.preset = "zigzag";
  refused(bad, "zigzag");
}

TEST(SnnEchelon, MemoryOptimizationRateBehavesAsThePaperDescribes) {
  // section 4.1: the rate rises with the delay range; mixed never below pure, equal when post is a multiple of 16
  for (int post : {30, 31, 32}) {
    double first = 0, last = 0;
    for (int delays = 1; delays <= 16; ++delays) {
      const SnnLayer l = draw_snn_layer({50, post, delays, 1, 0.1, 0.0, 3});
      const EchelonMemory pure = echelon_memory(l, false), mixed = echelon_memory(l, true);
      EXPECT_EQ(pure.aligned_weights, std::uint64_t((delays * 50 + 3) / 4 * 4) * 32u);
      EXPECT_LE(mixed.enclosed_weights, pure.enclosed_weights) << post << " " << delays;
      if (post == 32) {
        EXPECT_EQ(mixed.enclosed_weights, pure.enclosed_weights);
      }
      EXPECT_GE(pure.optimization_rate(), 0.0);
      if (delays == 1) first = pure.optimization_rate();
      last = pure.optimization_rate();
    }
    EXPECT_GT(last, first + 0.2) << post;
  }
}

TEST(SnnCommand, ALayerSavedIsRunFromItsFilesWithTheSameResultAndItsCurrentsWritten) {
  const test::TempDir dir;
  SnnRequest drawn;
  drawn.draw = {25, 18, 2, 7, 0.3, 0.25, 21};
  drawn.save_layer_dir = dir.path("layer");
  drawn.json_out = dir.path("drawn.json");
  drawn.backend = "model";
  std::ostringstream out, err;
  ASSERT_EQ(snn(drawn, out, err), 0) << err.str();
  SnnRequest files = drawn;
  files.save_layer_dir.clear();
  files.weights_file = dir.path("layer/weights.npy");
  files.spikes_file = dir.path("layer/spikes.npy");
  files.currents_out = dir.path("I.npy");
  files.json_out = dir.path("files.json");
  ASSERT_EQ(snn(files, out, err), 0) << err.str();
  const nlohmann::json a = test::read_json(drawn.json_out), b = test::read_json(files.json_out);
  ASSERT_EQ(a["layouts"].size(), b["layouts"].size());
  for (std::size_t i = 0; i < a["layouts"].size(); ++i)
    EXPECT_EQ(a["layouts"][i]["model_cycles_per_timestep"], b["layouts"][i]["model_cycles_per_timestep"]);
  EXPECT_EQ(a["layer"]["synapses"], b["layer"]["synapses"]);
  // int32 (7, 18) after the .npy header: 7 x 18 x 4 bytes of data
  const std::string bytes = test::read_text(files.currents_out);
  ASSERT_GT(bytes.size(), 7u * 18u * 4u);
  EXPECT_NE(bytes.find("'descr': '<i4'"), std::string::npos);
  EXPECT_NE(bytes.find("(7, 18)"), std::string::npos);
}

TEST(SnnLayouts, OtherMacArraysRunTheStackedMapAndRefuseEchelonsWordPermutation) {
  HwConfig cfg = build_hw_config("", "16x2", {});
  const SnnLayer l = draw_snn_layer({21, 19, 5, 7, 0.3, 0.3, 8});
  EXPECT_THROW(plan_snn_layer(l, SnnLayout::Echelon, cfg, 98304), std::invalid_argument);
  EXPECT_THROW(plan_snn_layer(l, SnnLayout::EchelonMixed, cfg, 98304), std::invalid_argument);
  auto rtl = make_rtl_stream_backend(cfg);
  for (SnnLayout layout : {SnnLayout::SerialArm, SnnLayout::OriginalMac, SnnLayout::OperandStack}) {
    const SnnPlan plan = plan_snn_layer(l, layout, cfg, 98304);
    SystemMemory mem = plan.memory;
    const StreamResult r = rtl->run(plan.stream, mem, StreamRunOptions{});
    ASSERT_TRUE(r.completed) << to_string(layout);
    EXPECT_EQ(snn_plan_currents(plan, l, mem), snn_currents(l)) << to_string(layout);
  }
}
