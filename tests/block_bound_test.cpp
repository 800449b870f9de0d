// The chip's limits (mapper/block_bound.h): each term is the block's work over the hardware's rate, worked out
// here by hand from the configuration; maps between blocks may stay in the storage QPEs, the network's ends
// may not; and no run of a reference network beats its bound (run-net holds every block run to it and fails
// a run below it: that check is tested too).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/commands/net_block_run.h"
#include "harness/commands/net_runner.h"
#include "mapper/block_bound.h"
#include "mapper/network.h"
#include "mapper/parser.h"
#include "model/pe/arm_ops.h"
#include "test_networks.h"

using namespace s2;

namespace {

mapper::ParsedNetwork parse(const char* text) { return mapper::parse_network(mapper::parse_layer_list(text, "bound_test.net")); }

std::uint64_t up(double x, double rate) { return static_cast<std::uint64_t>(std::ceil(x / rate)); }

}  // namespace

TEST(BlockBound, EachTermIsTheBlocksWorkOverTheChipsRate) {
  // one padded 3x3 convolution with a fused 2x2 pooling on QPE-DRAM: the network's input and output, in DRAM
  const mapper::ParsedNetwork n = parse("input 20 12 8\nconv 3 3 8 16 pad=same\npool max 2 2\n");
  ASSERT_EQ(n.blocks.size(), 1u);
  HwConfig cfg;
  const mapper::BlockBound b = mapper::block_bound(n.blocks[0], mapper::block_ends(n, n.blocks[0]), cfg);
  const std::uint64_t macs = 20ull * 12 * 16 * 3 * 3 * 8;
  EXPECT_EQ(b.work.mac_ops, macs);
  EXPECT_EQ(b.macs_cycles, up(double(macs), 4.0 * 64));  // 4 PEs of 16x4 MACs
  const std::uint64_t weights = 3 * 3 * 8 * 16, input = 20 * 12 * 8, output = 10 * 6 * 16;
  EXPECT_EQ(b.dram_bytes, weights + input + output);
  EXPECT_EQ(b.storage_bytes, 0u);
  EXPECT_EQ(b.dram_cycles, up(double(weights + input + output), 16.0 / 2));  // one DRAM, 16 bytes per 2 clocks
  // one router takes every packet, one per NoC clock: two per PE clock
  EXPECT_EQ(b.links_cycles, up(double(weights + input + output), 2.0 * 16));
  // the ARM: every result quantized, every pooling window walked, over 4 PEs; no ReLU, no padding; the pooling
  // folded into the quantization's pass (QuantizeMaxPool) where that costs less, as here
  const ArmKernelClocks& k = cfg.arm_kernels;
  const double quantize = k.quantize.call + k.quantize.plane + k.quantize.row + 20.0 * 12 * 16 * k.quantize.pixel;
  const auto pool_of = [](const ArmPoolKernelClocks& p) {
    return p.call + 16 * (p.plane + 6 * (p.output_row + 10 * (p.output + 2 * (p.window_row + 2 * p.window_pixel))));
  };
  const double apart = quantize + pool_of(k.maxpool8), folded = pool_of(k.quantize_maxpool);
  EXPECT_LT(folded, apart);
  EXPECT_DOUBLE_EQ(b.arm_clocks_all_pes, folded);
  EXPECT_EQ(b.arm_cycles, up(folded, 4));
  HwConfig dear = cfg;  // a folded kernel dearer than the two passes: the two passes
  dear.arm_kernels.quantize_maxpool.window_pixel = 1000;
  EXPECT_DOUBLE_EQ(mapper::block_bound(n.blocks[0], mapper::block_ends(n, n.blocks[0]), dear).arm_clocks_all_pes, apart);
  EXPECT_EQ(b.host_cycles, 2u * cfg.host_latency_cycles);  // the host's start to the PE and its end back
  const std::uint64_t work = std::max({b.macs_cycles, b.dram_cycles, b.links_cycles, b.arm_cycles});
  EXPECT_EQ(b.cycles(), b.host_cycles + work);
  EXPECT_EQ(b.bound_by(), work == b.macs_cycles ? mapper::BoundTerm::Macs : work == b.dram_cycles ? mapper::BoundTerm::Dram : mapper::BoundTerm::Arm);

  // Table 5.9's averages charge the ARM term as they charge the runs
  HwConfig averages = cfg;
  averages.arm_clock_model = "table5.9";
  const mapper::BlockBound t = mapper::block_bound(n.blocks[0], mapper::block_ends(n, n.blocks[0]), averages);
  EXPECT_NE(t.arm_clocks_all_pes, b.arm_clocks_all_pes);
  EXPECT_EQ(t.macs_cycles, b.macs_cycles);
}

TEST(BlockBound, MapsBetweenBlocksMayStayInTheStorageQpesButNotTheNetworksEnds) {
  const mapper::ParsedNetwork n = parse(
      "input 16 16 8\n"
      "conv 3 3 8 8 pad=same\n"    // CONV_1: reads the network's input
      "conv 3 3 8 8 pad=same\n"    // CONV_2: between two blocks
      "conv 3 3 8 8 pad=same\n");  // CONV_3: writes the network's output
  HwConfig cfg;
  apply_preset(cfg, "mini");
  std::vector<mapper::BlockBound> b;
  for (const mapper::OperationBlock& blk : n.blocks) b.push_back(mapper::block_bound(blk, mapper::block_ends(n, blk), cfg));
  ASSERT_EQ(b.size(), 3u);
  const std::uint64_t map = 16 * 16 * 8, weights = 3 * 3 * 8 * 8;
  EXPECT_FALSE(b[0].input_in_storage);
  EXPECT_TRUE(b[0].output_in_storage);
  EXPECT_TRUE(b[1].input_in_storage && b[1].output_in_storage);
  EXPECT_EQ(b[1].dram_bytes, weights);
  EXPECT_EQ(b[1].storage_bytes, 2 * map);
  EXPECT_FALSE(b[2].output_in_storage);
  EXPECT_EQ(b[2].dram_bytes, weights + map);
  // the links term: the storage QPEs' routers take what they keep, the DRAMs' routers what the DRAMs move
  std::set<int> storage, dram_routers;
  for (const DoubleQpeBlock& db : cfg.chip.double_qpe_blocks) storage.insert(cfg.chip.qpe_index(db.storage_qpe));
  for (const DramPort& d : cfg.chip.drams)
    for (QpeCoord q : d.attach) dram_routers.insert(cfg.chip.qpe_index(q));
  EXPECT_EQ(b[1].links_cycles, std::max(up(double(2 * map), double(storage.size()) * 32), up(double(weights), double(dram_routers.size()) * 32)));

  // a map larger than the storage QPEs' SRAM goes through the DRAMs
  HwConfig small = cfg;
  small.chip.storage_pe_bytes = 128;  // 1 KB in all, half a map
  const mapper::BlockBound tight = mapper::block_bound(n.blocks[1], mapper::block_ends(n, n.blocks[1]), small);
  EXPECT_FALSE(tight.input_in_storage && tight.output_in_storage);
  EXPECT_EQ(tight.dram_bytes, weights + 2 * map);
  // QPE-DRAM has no storage QPEs
  HwConfig qpe;
  const mapper::BlockBound none = mapper::block_bound(n.blocks[1], mapper::block_ends(n, n.blocks[1]), qpe);
  EXPECT_EQ(none.storage_bytes, 0u);
  EXPECT_EQ(none.dram_bytes, weights + 2 * map);
}

TEST(BlockBound, ARunBelowItsBoundIsAFindingThatFailsIt) {
  const mapper::ParsedNetwork n = parse("input 20 12 8\nconv 3 3 8 16 pad=same\n");
  const mapper::BlockBound bound = mapper::block_bound(n.blocks[0], mapper::block_ends(n, n.blocks[0]), HwConfig{});
  BlockRun r;
  r.block = "CONV_1";
  r.arm_timed = true;
  r.model.emplace();
  r.model->data_match = true;
  r.model->block_cycles_arm_timed = r.model->block_cycles = bound.cycles();
  check_block_bound(r, bound, 0.02);
  EXPECT_TRUE(r.activity_findings.empty());
  EXPECT_EQ(r.status, Status::Pass);
  r.model->block_cycles_arm_timed = r.model->block_cycles = bound.cycles() - 1;
  check_block_bound(r, bound, 0.02);
  ASSERT_EQ(r.activity_findings.size(), 1u);
  EXPECT_NE(r.activity_findings[0].find(kBelowBound), std::string::npos) << r.activity_findings[0];
  EXPECT_NE(r.status, Status::Pass);
}

// Every reference network, every block in every strategy it has, on QPE-DRAM and the mini chip: no run is
// below its bound (timing only: the clocks are those of the runs with data, run_net_test holds them equal).
TEST(BlockBound, NoRunOfAReferenceNetworkBeatsItsBound) {
  std::vector<std::string> nets;
  for (const char* text : {test_networks::kSmall, test_networks::kSmallResidual, test_networks::kNonSquareGlobalPool,
                           test_networks::kDepthSplit}) {
    const std::string path = ::testing::TempDir() + "bound_net" + std::to_string(nets.size()) + ".net";
    std::ofstream(path) << text;
    nets.push_back(path);
  }
  for (const auto& e : std::filesystem::directory_iterator(std::string(S2_SOURCE_DIR) + "/vectors/nets"))
    if (e.path().extension() == ".net") nets.push_back(e.path().string());
  nets.push_back(std::string(S2_SOURCE_DIR) + "/vectors/graph_cnn.net");
  int runs = 0;
  for (const std::string& net : nets)
    for (const char* preset : {"", "mini"}) {
      RunNetRequest req;
      req.net = net;
      if (*preset) req.target = "s2", req.preset = preset;
      req.timing_only = true;
      req.json_out = ::testing::TempDir() + "bound.json";
      std::ostringstream out, err;
      EXPECT_EQ(run_net(req, out, err), 0) << net << " " << preset << "\n" << err.str() << out.str();
      nlohmann::json j;
      std::ifstream(req.json_out) >> j;
      for (const auto& op : j["operations"]) {
        if (!op.contains("bound")) continue;
        ++runs;
        EXPECT_GE(op["bound"]["block_cycles"].get<std::uint64_t>(), op["bound"]["cycles"].get<std::uint64_t>())
            << net << " " << preset << " " << op["name"] << " " << op["strategy"];
      }
    }
  EXPECT_GT(runs, 300);
}
