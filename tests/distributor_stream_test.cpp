// The distributor's task streams (thesis 4.3) on the model's QPE-DRAM: every strategy computes the
// block's exact result, the reuse direction follows equations 4.2/4.3, and the DRAM, host interface and
// ARM operations take the clocks the configuration gives them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/backend.h"
#include "mapper/distributor.h"
#include "mapper/network.h"
#include "mapper/parser.h"
#include "mapper/splitter.h"
#include "model/arm_core.h"

using namespace s2;
using namespace s2::mapper;

namespace {

ParsedNetwork parse_text(const std::string& text) { return parse_network(parse_layer_list(text, "test.net")); }

// Runs every stream of `b` in `strategy` on the model; returns whether the output equals the golden block.
bool runs_exact(const OperationBlock& b, const BlockSplit& s, Strategy strategy, Reuse* reuse = nullptr,
                const HwConfig& cfg = HwConfig{}) {
  const BlockStreams bs = distribute(b, s, strategy, cfg);
  if (reuse) *reuse = bs.reuse;
  const std::vector<std::uint8_t> image = block_dram_image(b, s, bs, cfg, 7);
  std::vector<std::uint8_t> dram = image;
  auto backend = make_model_stream_backend(cfg);
  for (const TaskStream& st : bs.streams) {
    const StreamResult r = backend->run(st, dram, StreamRunOptions{true});
    EXPECT_TRUE(r.completed) << st.name;
    EXPECT_GT(r.cycles, 0u) << st.name;
  }
  const std::vector<std::uint8_t> golden = golden_block_output(b, s, bs, cfg, image);
  return std::equal(golden.begin(), golden.end(), dram.begin() + static_cast<std::ptrdiff_t>(bs.map.output));
}

const char* kNet =
    "network small\n"
    "input 36 20 3\n"
    "conv 3 3 3 12 pad=same act=relu\n"   // CONV_1: padding, 3 filter parts
    "conv 3 3 12 8 pad=same act=relu\n"   // CONV_2 + POOL_3 (fused)
    "pool max 2 2 stride=2\n"
    "conv 1 1 8 8 act=relu\n"             // CONV_4: no padding
    "fc 1440 40 act=relu\n";              // FC_5: split along H_B (partial sums, FCE_5)

}  // namespace

TEST(DistributorStreams, EveryStrategyComputesTheExactBlockResultOnTheModel) {
  const ParsedNetwork n = parse_text(kNet);
  const NetworkSplit split = split_network(n, split_rules(Target::Qpe, HwConfig{}));
  int ran = 0;
  for (std::size_t i = 0; i < n.blocks.size(); ++i)
    for (Strategy st : kAllStrategies) {
      if (!distributable(n.blocks[i], split.blocks[i], st, HwConfig{}, nullptr)) continue;
      SCOPED_TRACE(n.blocks[i].name() + " " + to_string(st));
      EXPECT_TRUE(runs_exact(n.blocks[i], split.blocks[i], st));
      ++ran;
    }
  EXPECT_EQ(ran, 3 * 3 + 2);  // three conv blocks in three strategies, the FC in two
}

TEST(DistributorStreams, ReuseFollowsEquations42And43) {
  // few input parts, many filter parts: keep the feature map (4.2 is smaller)
  const ParsedNetwork a = parse_text("network a\ninput 30 10 16\nconv 3 3 16 64 pad=valid act=relu\n");
  const NetworkSplit sa = split_network(a, split_rules(Target::Qpe, HwConfig{}));
  Reuse ra = Reuse::None;
  EXPECT_TRUE(runs_exact(a.blocks[0], sa.blocks[0], Strategy::FuseReuse, &ra));
  EXPECT_EQ(ra, Reuse::Ifmap);
  // a big input in many parts and only 4 small filters: keep the filters (4.3 is smaller)
  const ParsedNetwork b = parse_text("network b\ninput 224 224 16\nconv 3 3 16 4 pad=valid act=relu\n");
  const NetworkSplit sb = split_network(b, split_rules(Target::Qpe, HwConfig{}));
  const BlockStreams bs = distribute(b.blocks[0], sb.blocks[0], Strategy::FuseReuse, HwConfig{});
  EXPECT_LT(bs.filter_reuse_bytes, bs.fmap_reuse_bytes);
  Reuse rb = Reuse::None;
  EXPECT_TRUE(runs_exact(b.blocks[0], sb.blocks[0], Strategy::FuseReuse, &rb));
  EXPECT_EQ(rb, Reuse::Filter);
}

TEST(DistributorStreams, MmBlocksHaveNoReuseStrategy) {
  const ParsedNetwork n = parse_text("network f\ninput 1 1 512\nfc 512 64 act=relu\n");
  const NetworkSplit s = split_network(n, split_rules(Target::Qpe, HwConfig{}));
  std::string why;
  EXPECT_FALSE(distributable(n.blocks[0], s.blocks[0], Strategy::FuseReuse, HwConfig{}, &why));
  EXPECT_NE(why.find("no data reuse"), std::string::npos);
  EXPECT_THROW(distribute(n.blocks[0], s.blocks[0], Strategy::FuseReuse, HwConfig{}), std::invalid_argument);
}

TEST(ArmOps, CostTheClocksOfThesisTable59) {
  const ArmOpClocks k;
  ArmCommand c;
  c.planes = 2;
  c.height = 3;
  c.width = 5;  // 30 pixels
  c.kind = ArmOpKind::Relu32;
  EXPECT_EQ(arm_op_cycles(c, k), 240u);
  c.kind = ArmOpKind::Quantize;
  EXPECT_EQ(arm_op_cycles(c, k), 240u);
  c.kind = ArmOpKind::MaxPool8;
  EXPECT_EQ(arm_op_cycles(c, k), 360u);
  c.kind = ArmOpKind::AddInt32;
  EXPECT_EQ(arm_op_cycles(c, k), 240u);
  c.kind = ArmOpKind::Pad;  // a 1-pixel border of a 5x3 plane: 12 bytes per plane, 24 bytes = 6 words
  c.pad_left = c.pad_right = c.pad_top = c.pad_bottom = 1;
  EXPECT_EQ(arm_op_cycles(c, k), 12u);
}

TEST(QpeDramTiming, DramTakesTwoClocksPerSixteenByteOperation) {
  const HwConfig cfg;
  auto backend = make_model_stream_backend(cfg);
  auto one_load = [&](std::uint32_t bytes) {
    TaskStream s;
    s.name = "load";
    s.dram_bytes = 4096;
    StreamCommand c;
    c.kind = CommandKind::DmaLoad;
    c.operation = "LOAD";
    c.dma.row_bytes = bytes;
    s.pe[0].push_back(c);
    std::vector<std::uint8_t> dram(4096, 1);
    return backend->run(s, dram, StreamRunOptions{});
  };
  const StreamResult a = one_load(160), b = one_load(320), c = one_load(161);
  EXPECT_EQ(a.dram_ops, 10u);
  EXPECT_EQ(b.dram_ops, 20u);
  EXPECT_EQ(c.dram_ops, 11u);  // a partial 16-byte word is a whole operation
  EXPECT_EQ(b.cycles - a.cycles, 20u);
  // host in (10) + the ARM writes 10 DMA registers + the row request, sent in the DMA's first clock, reaches
  // the DRAM (3) + 10 ops x 2 + DRAM latency (7) + the last line to the PE's SRAM (3) + the DMA going idle (2)
  // + host out (10)
  EXPECT_EQ(a.cycles, 10u + 10 + 3 + 20 + 7 + 3 + 2 + 10);
}

TEST(QpeDramTiming, SyncWaitsForTheLastPeThroughTheHost) {
  const HwConfig cfg;
  auto backend = make_model_stream_backend(cfg);
  TaskStream s;
  s.name = "sync";
  s.dram_bytes = 16;
  StreamCommand wait_long;
  wait_long.kind = CommandKind::Arm;
  wait_long.operation = "ACTI";
  wait_long.arm.kind = ArmOpKind::Relu32;
  wait_long.arm.width = 100;  // 800 clocks
  s.pe[2].push_back(wait_long);
  for (auto& pe : s.pe) pe.push_back(StreamCommand{});  // Sync
  std::vector<std::uint8_t> dram(16, 0);
  const StreamResult r = backend->run(s, dram, StreamRunOptions{true});
  // host (10) + PE 2's 800 clocks + to the host (10) + release (10) + back to the host (10)
  EXPECT_EQ(r.cycles, 10u + 800 + 10 + 10 + 10);
  const StreamResult free_arm = backend->run(s, dram, StreamRunOptions{false});
  EXPECT_EQ(free_arm.cycles, 40u);
}

TEST(QpeDramStreams, MalformedCommandsAreRejectedWithPeAndIndex) {
  TaskStream s;
  s.name = "bad";
  s.dram_bytes = 64;
  StreamCommand c;
  c.kind = CommandKind::DmaLoad;
  c.operation = "CONV_1";
  c.dma.dram_addr = 60;
  c.dma.row_bytes = 16;
  s.pe[1].push_back(StreamCommand{});
  s.pe[1].push_back(c);
  try {
    check_stream(s, 128 * 1024);
    FAIL() << "expected a rejection";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("PE 1, command 1"), std::string::npos) << e.what();
  }
}

TEST(DistributorStreams, OtherMacShapesComputeExactResults) {
  // filter parts come in whole groups of the configured MAC rows (2 on 16x2), not a fixed 4
  const ParsedNetwork n = parse_text(kNet);
  for (const char* shape : {"16x2", "8x4"}) {
    HwConfig cfg;
    set_mac_shape(cfg, shape);
    const NetworkSplit split = split_network(n, split_rules(Target::Qpe, cfg));
    int ran = 0;
    for (std::size_t i = 0; i < n.blocks.size(); ++i)
      for (Strategy st : kAllStrategies) {
        std::string why;
        if (!distributable(n.blocks[i], split.blocks[i], st, cfg, &why)) {
          EXPECT_EQ(why.find("MAC-row"), std::string::npos) << shape << " " << n.blocks[i].name() << ": " << why;
          continue;
        }
        SCOPED_TRACE(std::string(shape) + " " + n.blocks[i].name() + " " + to_string(st));
        EXPECT_TRUE(runs_exact(n.blocks[i], split.blocks[i], st, nullptr, cfg));
        ++ran;
      }
    EXPECT_GE(ran, 8) << shape;
  }
}
