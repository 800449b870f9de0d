// The distributor's task streams (thesis 4.3) on the model's QPE-DRAM: every strategy computes the
// block's exact result, the reuse direction follows equations 4.2/4.3, and the DRAM, host interface and
// ARM operations take the clocks the configuration gives them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "harness/backends/backend.h"
#include "harness/stimulus/block_data.h"
#include "mapper/distributor.h"
#include "mapper/network.h"
#include "mapper/parser.h"
#include "mapper/splitter.h"
#include "model/pe/arm_core.h"
#include "test_networks.h"

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

using test_networks::kSmall;
using test_networks::kSmallResidual;

}  // namespace

TEST(DistributorStreams, StridedResidualAndPoolingBlocksComputeExactResultsOnTheModel) {
  const ParsedNetwork n = parse_text(kSmallResidual);
  const NetworkSplit split = split_network(n, split_rules(Target::Qpe, HwConfig{}));
  int ran = 0;
  for (std::size_t i = 0; i < n.blocks.size(); ++i)
    for (Strategy st : kAllStrategies) {
      std::string why;
      const bool pooling = n.blocks[i].kind == BlockKind::Pooling;
      EXPECT_EQ(distributable(n.blocks[i], split.blocks[i], st, HwConfig{}, &why), !(pooling && st == Strategy::FuseReuse))
          << n.blocks[i].name() << ": " << why;
      if (pooling && st == Strategy::FuseReuse) continue;
      SCOPED_TRACE(n.blocks[i].name() + " " + to_string(st));
      EXPECT_TRUE(runs_exact(n.blocks[i], split.blocks[i], st));
      ++ran;
    }
  EXPECT_EQ(ran, 8 * 3 + 2 * 2);  // eight convolution blocks in three strategies, two pooling blocks in two
}

TEST(DistributorStreams, InputChannelPartsAreAddedBeforeTheElementWiseOperations) {
  const ParsedNetwork n = parse_text(test_networks::kDepthSplit);
  const NetworkSplit split = split_network(n, split_rules(Target::Qpe, HwConfig{}));
  ASSERT_EQ(split.blocks.at(0).d.count(), 2) << "the test needs a split along D";
  for (Strategy st : {Strategy::NofuseNoreuse, Strategy::FuseNoreuse}) {
    SCOPED_TRACE(to_string(st));
    EXPECT_TRUE(runs_exact(n.blocks[0], split.blocks[0], st));
    std::uint64_t adds = 0;
    for (const TaskStream& ts : distribute(n.blocks[0], split.blocks[0], st, HwConfig{}).streams)
      for (const auto& pe : ts.pe)
        for (const StreamCommand& c : pe) adds += c.kind == CommandKind::Arm && c.arm.kind == ArmOpKind::AddInt32;
    EXPECT_EQ(adds, split.blocks[0].pieces / 2);  // one addition per piece pair
  }
  std::string why;
  EXPECT_FALSE(distributable(n.blocks[0], split.blocks[0], Strategy::FuseReuse, HwConfig{}, &why));
  EXPECT_NE(why.find("input-channel"), std::string::npos) << why;
}

TEST(DistributorStreams, StridedConvolutionsSkipTheRowsTheyDoNotNeed) {
  const ParsedNetwork n = parse_text(kSmallResidual);
  const NetworkSplit split = split_network(n, split_rules(Target::Qpe, HwConfig{}));
  auto streams = [&](const std::string& name) {
    for (std::size_t i = 0; i < n.blocks.size(); ++i)
      if (n.blocks[i].name() == name) return distribute(n.blocks[i], split.blocks[i], Strategy::FuseNoreuse, HwConfig{});
    throw std::logic_error(name);
  };
  // 3x3 stride 2: each MLA task reads 3 input rows of the loaded window in place, one task per output row
  std::uint64_t tasks = 0, out_rows = 0;
  const BlockStreams conv1 = streams("CONV_1");  // (a range-for over a temporary's member would dangle)
  for (const auto& pe : conv1.streams.at(0).pe)
    for (const StreamCommand& c : pe)
      if (c.kind == CommandKind::Mla) {
        ++tasks;
        EXPECT_EQ(c.mla.conv.Hi, 3);
        EXPECT_GT(c.mla.b_plane_rows, 3);
        out_rows += static_cast<std::uint64_t>(c.mla.conv.Ho());
      }
  const BlockSplit& s1 = split.blocks.at(0);
  EXPECT_EQ(out_rows, 29u * static_cast<std::uint64_t>(s1.w.count() * s1.c.count()));  // each of the 29 rows once per part
  EXPECT_EQ(tasks, out_rows);
  // 1x1 stride 2: the DMA loads every second row (16-pixel rows, a row stride of 32), and one task computes them
  bool gathered = false;
  const BlockStreams conv3 = streams("CONV_3");
  for (const auto& pe : conv3.streams.at(0).pe)
    for (const StreamCommand& c : pe) {
      if (c.kind == CommandKind::DmaLoad && c.dma.rows > 1) {
        EXPECT_EQ(c.dma.dram_row_stride, 32u);
        gathered = true;
      }
      if (c.kind == CommandKind::Mla) {
        EXPECT_EQ(c.mla.b_plane_rows, 0);
      }
    }
  EXPECT_TRUE(gathered);
}

TEST(DistributorStreams, EveryStrategyComputesTheExactBlockResultOnTheModel) {
  const ParsedNetwork n = parse_text(kSmall);
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

TEST(DistributorStreams, AnFcWithoutReluKeepsItsNegativeResults) {
  // ResNet-50's FC_52 has no ReLU: neither the streams nor the golden block may apply one
  const ParsedNetwork n = parse_text("network f\ninput 1 1 512\nfc 512 64 act=none\n");
  const NetworkSplit s = split_network(n, split_rules(Target::Qpe, HwConfig{}));
  for (Strategy st : {Strategy::NofuseNoreuse, Strategy::FuseNoreuse}) {
    SCOPED_TRACE(to_string(st));
    const BlockStreams bs = distribute(n.blocks[0], s.blocks[0], st, HwConfig{});
    for (const TaskStream& ts : bs.streams)
      for (const auto& pe : ts.pe)
        for (const StreamCommand& c : pe) EXPECT_FALSE(c.kind == CommandKind::Arm && c.arm.kind == ArmOpKind::Relu32);
    EXPECT_TRUE(runs_exact(n.blocks[0], s.blocks[0], st));
    const std::vector<std::uint8_t> image = block_dram_image(n.blocks[0], s.blocks[0], bs, HwConfig{}, 7);
    const std::vector<std::uint8_t> golden = golden_block_output(n.blocks[0], s.blocks[0], bs, HwConfig{}, image);
    EXPECT_GT(std::count_if(golden.begin(), golden.end(), [](std::uint8_t v) { return v >= 0x80; }), 10);
  }
}

// A layer small enough for one H_B part has no FCE stream: ACTI and QUAN then read the FC stream's own
// results (they once read FCE's sums, never written, and the block's output was all zeros; found by the
// PyTorch reference, tests/real_networks_test.cpp).
TEST(DistributorStreams, AnFcOfOneWeightRowPartIsExactWithoutFce) {
  for (const char* act : {"relu", "none"}) {
    SCOPED_TRACE(act);
    const ParsedNetwork n = parse_text((std::string("network f\ninput 16 1 1\nfc 16 10 act=") + act + "\n").c_str());
    const NetworkSplit s = split_network(n, split_rules(Target::Qpe, HwConfig{}));
    ASSERT_EQ(s.blocks[0].h.count(), 1);
    EXPECT_TRUE(runs_exact(n.blocks[0], s.blocks[0], Strategy::NofuseNoreuse));
  }
}

// A layer list's every conv, fc and projection with `bias=seed`: every block in every strategy (strided
// convolutions with one task per row, a split along D, an FC split along H_B with FCE, a projection) gives the
// golden block, the bias added once, before the ReLU and the shift; and the bias changes the result.
TEST(DistributorStreams, BiasesAreAddedOnceInEveryStrategy) {
  auto with_bias = [](std::string text) {
    std::string out, line;
    std::istringstream in(text);
    while (std::getline(in, line)) {
      const bool weighted = line.rfind("conv ", 0) == 0 || line.rfind("fc ", 0) == 0 || line.find("shortcut=projection") != std::string::npos;
      out += line + (weighted ? " bias=seed" : "") + "\n";
    }
    return out;
  };
  int ran = 0, changed = 0;
  for (const char* text : {test_networks::kSmall, test_networks::kSmallResidual, test_networks::kDepthSplit}) {
    const ParsedNetwork n = parse_text(with_bias(text));
    const ParsedNetwork plain = parse_text(text);
    const NetworkSplit split = split_network(n, split_rules(Target::Qpe, HwConfig{}));
    for (std::size_t i = 0; i < n.blocks.size(); ++i) {
      if (n.blocks[i].kind == BlockKind::Pooling) continue;
      ASSERT_NE(n.blocks[i].core_op().bias, nullptr) << n.blocks[i].name();
      for (Strategy st : kAllStrategies) {
        if (!distributable(n.blocks[i], split.blocks[i], st, HwConfig{}, nullptr)) continue;
        SCOPED_TRACE(n.blocks[i].name() + " " + to_string(st));
        EXPECT_TRUE(runs_exact(n.blocks[i], split.blocks[i], st));
        // one pass over the sums carries the bias, each right after the DMA loaded its slice from the
        // block's DRAM image into the SRAM it reads
        const BlockStreams bs = distribute(n.blocks[i], split.blocks[i], st, HwConfig{});
        ASSERT_GT(bs.map.bias_bytes, 0u);
        std::uint64_t biased = 0;
        for (const TaskStream& ts : bs.streams)
          for (const auto& pe : ts.pe)
            for (std::size_t k = 0; k < pe.size(); ++k) {
              if (pe[k].kind != CommandKind::Arm || !pe[k].arm.add_bias) continue;
              ++biased;
              ASSERT_GT(k, 0u);
              const StreamCommand& load = pe[k - 1];
              EXPECT_EQ(load.kind, CommandKind::DmaLoad);
              EXPECT_EQ(load.dma.sram_addr, pe[k].arm.bias_addr);
              EXPECT_GE(load.dma.dram_addr, bs.map.bias);
              EXPECT_LE(load.dma.dram_addr + load.dma.bytes(), bs.map.bias + bs.map.bias_bytes);
            }
        EXPECT_GT(biased, 0u);
        ++ran;
      }
      const BlockStreams bs = distribute(n.blocks[i], split.blocks[i], Strategy::FuseNoreuse, HwConfig{});
      const BlockStreams bp = distribute(plain.blocks[i], split.blocks[i], Strategy::FuseNoreuse, HwConfig{});
      const std::vector<std::uint8_t> image = block_dram_image(n.blocks[i], split.blocks[i], bs, HwConfig{}, 7);
      changed += golden_block_output(n.blocks[i], split.blocks[i], bs, HwConfig{}, image) !=
                 golden_block_output(plain.blocks[i], split.blocks[i], bp, HwConfig{}, image);
    }
  }
  EXPECT_GE(ran, 30);
  EXPECT_GE(changed, 10);
}

// The bias is data in the block's DRAM image, as the weights are: the backend adds what the DMA finds
// there, not what the layer list said. Changing the image's bias changes the backend's output exactly
// as it changes the golden block's.
TEST(DistributorStreams, TheBiasComesFromTheDramImage) {
  const ParsedNetwork n = parse_text("input 12 12 3\nconv 3 3 3 16 pad=same bias=seed\nfc 2304 24 bias=seed\n");
  const NetworkSplit split = split_network(n, split_rules(Target::Qpe, HwConfig{}));
  int ran = 0;
  for (std::size_t i = 0; i < n.blocks.size(); ++i)
    for (Strategy st : {Strategy::NofuseNoreuse, Strategy::FuseNoreuse}) {
      SCOPED_TRACE(n.blocks[i].name() + " " + to_string(st));
      const BlockStreams bs = distribute(n.blocks[i], split.blocks[i], st, HwConfig{});
      const std::vector<std::uint8_t> image = block_dram_image(n.blocks[i], split.blocks[i], bs, HwConfig{}, 7);
      std::vector<std::uint8_t> edited = image;
      ASSERT_GT(bs.map.bias_bytes, 0u);
      for (std::uint64_t j = 0; j < bs.map.bias_bytes; j += 4) edited[bs.map.bias + j + 1] ^= 0x55;  // +-21760 per value
      std::vector<std::uint8_t> dram = edited;
      auto backend = make_model_stream_backend(HwConfig{});
      for (const TaskStream& t : bs.streams) ASSERT_TRUE(backend->run(t, dram, StreamRunOptions{true}).completed);
      const std::vector<std::uint8_t> want = golden_block_output(n.blocks[i], split.blocks[i], bs, HwConfig{}, edited);
      EXPECT_TRUE(std::equal(want.begin(), want.end(), dram.begin() + static_cast<std::ptrdiff_t>(bs.map.output)));
      EXPECT_NE(want, golden_block_output(n.blocks[i], split.blocks[i], bs, HwConfig{}, image));
      ++ran;
    }
  EXPECT_EQ(ran, 4);
}

TEST(ArmOps, BiasIsAddedBeforeTheReluAndTheShiftAndCostsItsClocks) {
  std::vector<std::uint8_t> sram(64, 0);
  const std::int32_t v[4] = {-300, 100, 1000, -5};
  std::memcpy(sram.data(), v, 16);
  const std::int32_t b[3] = {7, 400, 50};  // the bias slice as the DMA left it in SRAM
  std::memcpy(sram.data() + 48, b, 12);
  ArmCommand r;
  r.kind = ArmOpKind::Relu32;
  r.planes = 2;
  r.width = 2;
  r.src_row_stride = 8;
  r.add_bias = true;
  r.bias_addr = 52;
  r.bias_plane_step = 1;  // plane d takes the bias at 52 + 4 d: 400, then 50
  arm_apply(r, sram.data(), sram.size());
  std::int32_t got[4];
  std::memcpy(got, sram.data(), 16);
  EXPECT_EQ(got[0], 100);   // -300 + 400
  EXPECT_EQ(got[1], 500);
  EXPECT_EQ(got[2], 1050);  // 1000 + 50
  EXPECT_EQ(got[3], 45);
  ArmCommand q = r;
  q.kind = ArmOpKind::Quantize;
  q.dst = 32;
  q.dst_row_stride = 2;
  q.shift = 2;
  q.bias_plane_step = 0;
  q.bias_col_step = 1;  // column x takes the bias at 52 + 4 x: 400, 50
  q.saturate_high = 96;  // a ReLU6's quantized 6
  arm_apply(q, sram.data(), sram.size());
  EXPECT_EQ(static_cast<std::int8_t>(sram[32]), 96);   // (100 + 400) >> 2 = 125, clamped at 96
  EXPECT_EQ(static_cast<std::int8_t>(sram[33]), 96);   // (500 + 50) >> 2
  EXPECT_EQ(static_cast<std::int8_t>(sram[34]), 96);   // (1050 + 400) >> 2
  EXPECT_EQ(static_cast<std::int8_t>(sram[35]), 23);   // (45 + 50) >> 2
  ArmOpClocks k;
  k.bias_add_per_pixel = 2.0;
  EXPECT_EQ(arm_op_cycles(q, k), 4u * 8 + 4u * 2);  // QUAN's 8 per pixel and the add's 2
  q.bias_addr = 60;  // its second value would lie past the SRAM: refused, not read out of bounds
  EXPECT_THROW(arm_apply(q, sram.data(), sram.size()), std::out_of_range);
}

// The bytes an ARM operation's loads and stores move (activity counts), worked out by hand per operation.
TEST(ArmOps, CountTheSramBytesTheirLoopsMove) {
  ArmCommand r;
  r.kind = ArmOpKind::Relu32;
  r.planes = 2;
  r.width = 2;
  EXPECT_EQ(arm_op_sram_bytes(r).read, 16u);
  EXPECT_EQ(arm_op_sram_bytes(r).written, 16u);
  r.add_bias = true;
  r.bias_plane_step = 1;  // one bias value per plane, read once each
  EXPECT_EQ(arm_op_sram_bytes(r).read, 16u + 8u);
  ArmCommand q = r;
  q.kind = ArmOpKind::Quantize;
  q.bias_plane_step = 0;
  q.bias_col_step = 1;  // one per column
  EXPECT_EQ(arm_op_sram_bytes(q).read, 16u + 8u);
  EXPECT_EQ(arm_op_sram_bytes(q).written, 4u);
  ArmCommand m;
  m.kind = ArmOpKind::MaxPool8;
  m.height = m.width = 4;
  m.window = 2;  // 2x2 outputs, each reading its 4 bytes
  EXPECT_EQ(arm_op_sram_bytes(m).read, 16u);
  EXPECT_EQ(arm_op_sram_bytes(m).written, 4u);
  m.stride = 1;  // 3x3 outputs
  EXPECT_EQ(arm_op_sram_bytes(m).read, 36u);
  EXPECT_EQ(arm_op_sram_bytes(m).written, 9u);
  ArmCommand pad;
  pad.kind = ArmOpKind::Pad;
  pad.height = pad.width = 5;
  pad.pad_left = pad.pad_right = pad.pad_top = pad.pad_bottom = 1;  // 25 - 9 border bytes, written only
  EXPECT_EQ(arm_op_sram_bytes(pad).read, 0u);
  EXPECT_EQ(arm_op_sram_bytes(pad).written, 16u);
  ArmCommand add;
  add.kind = ArmOpKind::AddInt8;
  add.height = 3;
  add.width = 4;
  EXPECT_EQ(arm_op_sram_bytes(add).read, 24u);
  EXPECT_EQ(arm_op_sram_bytes(add).written, 12u);
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
  c.kind = ArmOpKind::AddInt8;
  EXPECT_EQ(arm_op_cycles(c, k), 240u);
  c.kind = ArmOpKind::Relu8;
  EXPECT_EQ(arm_op_cycles(c, k), 75u);
  c.kind = ArmOpKind::AvgPool8;  // not in Table 5.9: charged as 8-bit max pooling
  EXPECT_EQ(arm_op_cycles(c, k), 360u);
  c.kind = ArmOpKind::Pad;  // a 1-pixel border of a 5x3 plane: 12 bytes per plane, 24 bytes = 6 words
  c.pad_left = c.pad_right = c.pad_top = c.pad_bottom = 1;
  EXPECT_EQ(arm_op_cycles(c, k), 12u);
}

TEST(ArmOps, Int8OperationsSaturateAndPoolWithTheirStride) {
  std::vector<std::uint8_t> sram(64, 0);
  auto i8 = [&](std::size_t a) { return static_cast<int>(static_cast<std::int8_t>(sram[a])); };
  ArmCommand add;
  add.kind = ArmOpKind::AddInt8;
  add.src = 0;
  add.dst = 8;
  add.width = 3;
  add.src_row_stride = add.dst_row_stride = 3;
  const std::int8_t a[3] = {100, -100, 5}, b[3] = {100, -100, -7};
  for (int i = 0; i < 3; ++i) {
    sram[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(a[i]);
    sram[static_cast<std::size_t>(8 + i)] = static_cast<std::uint8_t>(b[i]);
  }
  arm_apply(add, sram.data(), sram.size());
  EXPECT_EQ(i8(8), 127);
  EXPECT_EQ(i8(9), -128);
  EXPECT_EQ(i8(10), -2);
  ArmCommand relu;
  relu.kind = ArmOpKind::Relu8;
  relu.src = 8;
  relu.width = 3;
  relu.src_row_stride = 3;
  arm_apply(relu, sram.data(), sram.size());
  EXPECT_EQ(i8(8), 127);
  EXPECT_EQ(i8(9), 0);
  EXPECT_EQ(i8(10), 0);
  // a 5x5 plane, 3x3 windows every 2 pixels: 2x2 results; the average truncates toward zero
  std::fill(sram.begin(), sram.end(), 0);
  for (int i = 0; i < 25; ++i) sram[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(static_cast<std::int8_t>(i - 12));
  ArmCommand pool;
  pool.kind = ArmOpKind::MaxPool8;
  pool.src = 0;
  pool.dst = 32;
  pool.width = pool.height = 5;
  pool.src_row_stride = 5;
  pool.dst_row_stride = 2;
  pool.window = 3;
  pool.stride = 2;
  arm_apply(pool, sram.data(), sram.size());
  EXPECT_EQ(i8(32), 12 - 12);  // max of rows 0-2, columns 0-2: pixel 12
  EXPECT_EQ(i8(33), 14 - 12);
  EXPECT_EQ(i8(34), 22 - 12);
  EXPECT_EQ(i8(35), 24 - 12);
  pool.kind = ArmOpKind::AvgPool8;
  arm_apply(pool, sram.data(), sram.size());
  EXPECT_EQ(i8(32), (6 - 12));      // mean of pixels 0,1,2,5,6,7,10,11,12 = 6
  EXPECT_EQ(i8(35), (18 - 12));
  // Quantize takes every col_step-th int32 of a row
  std::vector<std::uint8_t> s32(64, 0);
  for (int x = 0; x < 6; ++x) {
    const std::int32_t v = (x % 2 == 0) ? 256 * (x + 1) : 99999;
    std::memcpy(&s32[static_cast<std::size_t>(4 * x)], &v, 4);
  }
  ArmCommand q;
  q.kind = ArmOpKind::Quantize;
  q.src = 0;
  q.dst = 40;
  q.width = 3;
  q.col_step = 2;
  q.src_row_stride = 24;
  q.dst_row_stride = 3;
  q.shift = 8;
  arm_apply(q, s32.data(), s32.size());
  EXPECT_EQ(s32[40], 1);
  EXPECT_EQ(s32[41], 3);
  EXPECT_EQ(s32[42], 5);
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
  // host in (10) + the ARM writes 10 DMA registers + the load's request (its two packets in the DMA's first
  // two clocks) reaches the DRAM (1 + 3) + 10 ops x 2 + DRAM latency (7) + the last line to the PE's SRAM (3) +
  // the DMA going idle (2) + host out (10)
  EXPECT_EQ(a.cycles, 10u + 10 + 1 + 3 + 20 + 7 + 3 + 2 + 10);
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
  wait_long.arm.width = 100;
  s.pe[2].push_back(wait_long);
  for (auto& pe : s.pe) pe.push_back(StreamCommand{});  // Sync
  std::vector<std::uint8_t> dram(16, 0);
  const StreamResult r = backend->run(s, dram, StreamRunOptions{true});
  // the ReLU's counted clocks: the kernel's call, one plane, one row, 100 pixels
  const ArmRowKernelClocks& k = cfg.arm_kernels.relu32;
  const auto relu = static_cast<std::uint64_t>(k.call + k.plane + k.row + 100 * k.pixel);
  // host (10) + PE 2's ReLU + to the host (10) + release (10) + back to the host (10)
  EXPECT_EQ(r.cycles, 10u + relu + 10 + 10 + 10);
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
    check_stream(s, StreamLimits{});
    FAIL() << "expected a rejection";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("PE 1, command 1"), std::string::npos) << e.what();
  }
}

// A stream whose DRAM images would not fit in memory is refused before anything is allocated, naming what it
// would need; one just under the bound passes.
TEST(QpeDramStreams, AStreamBeyondTheMemoryBoundIsRefusedBeforeItRuns) {
  TaskStream s;
  s.name = "huge";
  const StreamLimits lim;  // one DRAM, four PEs of 128 KB
  s.dram_bytes = kMaxStreamMemoryBytes - 4 * 128 * 1024;
  EXPECT_EQ(stream_memory_bytes(s, lim), kMaxStreamMemoryBytes);
  EXPECT_NO_THROW(check_stream(s, lim));
  s.dram_bytes += 1;
  try {
    check_stream(s, lim);
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("stream huge: a run would need about 8192 MiB"), std::string::npos) << e.what();
  }
  s.dram_bytes = ~0ull;  // does not wrap
  EXPECT_EQ(stream_memory_bytes(s, lim), ~0ull);
  EXPECT_THROW(check_stream(s, lim), std::invalid_argument);
}

TEST(DistributorStreams, OtherMacShapesComputeExactResults) {
  // filter parts come in whole groups of the configured MAC rows (2 on 16x2), not a fixed 4
  const ParsedNetwork n = parse_text(kSmall);
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
