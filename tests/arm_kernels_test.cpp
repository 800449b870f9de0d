// The ARM kernels (model/pe/arm_kernels/): their host build against arm_apply on random commands of every
// operation, the configuration's counted clocks against vectors/arm_clocks.json, and arm_op_cycles's counted
// formula on commands worked out by hand. (The count itself against the committed data, where the cross
// compiler is installed: the CTest test ArmClocks.CountEqualsTheData.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/hw_config.h"
#include "model/pe/arm_ops.h"
#include "model/splitmix64.h"

using namespace s2;

namespace {

constexpr std::size_t kSram = 64 * 1024;

struct Random {
  SplitMix64 g;
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(g.next() % n); }
  std::uint32_t in(std::uint32_t lo, std::uint32_t hi) { return lo + below(hi - lo + 1); }
  bool coin() { return g.next() & 1; }
};

// A random command of kind k with every region in the SRAM's first 48 KB (arm_apply checks the rest); planes,
// rows and pixels small, strides at least a row, the regions where they fall (overlaps included: both run the
// values in the same order), except where the kernel's contract excludes it (arm_kernels.h).
ArmCommand random_command(ArmOpKind k, Random& r) {
  ArmCommand c;
  c.kind = k;
  c.planes = r.in(1, 3);
  c.height = r.in(1, 6);
  c.width = r.in(1, 9);
  const std::uint32_t elem = (k == ArmOpKind::Relu32 || k == ArmOpKind::Quantize || k == ArmOpKind::AddInt32 || k == ArmOpKind::QuantizeAdd) ? 4 : 1;
  c.col_step = elem == 4 && r.coin() ? r.in(1, 3) : 1;
  c.src_row_stride = c.width * elem * c.col_step + r.in(0, 7);
  c.dst_row_stride = c.width * elem * c.col_step + r.in(0, 7);
  if (r.coin()) c.src_plane_stride = c.height * c.src_row_stride + r.in(0, 16);
  if (r.coin()) c.dst_plane_stride = c.height * c.dst_row_stride + r.in(0, 16);
  auto region = [&] { return r.below(40 * 1024); };
  c.src = region();
  c.dst = r.coin() ? c.src : region();
  c.shift = static_cast<int>(r.in(0, 12));
  c.saturate_high = r.coin() ? 127 : static_cast<int>(r.in(0, 127));
  c.relu = r.coin();
  c.shift_a = static_cast<int>(r.in(0, 7));
  c.shift_b = static_cast<int>(r.in(0, 7));
  c.table = region();
  c.table_plane_step = r.coin() ? 0 : 256 + r.in(0, 8);
  switch (k) {
    case ArmOpKind::Pad:
      c.pad_left = r.in(0, c.width), c.pad_right = r.in(0, c.width - c.pad_left);
      c.pad_top = r.in(0, c.height), c.pad_bottom = r.in(0, c.height);  // top and bottom rows may overlap
      break;
    case ArmOpKind::Relu32:
    case ArmOpKind::Quantize:
      c.add_bias = r.coin();
      c.per_channel_shift = k == ArmOpKind::Quantize && r.coin();
      if (k == ArmOpKind::Quantize && r.coin()) c.saturate_low = 0;  // a ReLU folded in: the _relu kernels
      c.bias_addr = region();
      c.shift_addr = region();
      c.bias_plane_step = r.in(0, 2), c.bias_row_step = r.in(0, 2), c.bias_col_step = r.in(0, 1);
      break;
    case ArmOpKind::MaxPool8:
    case ArmOpKind::AvgPool8:
      c.height = r.in(2, 7), c.width = r.in(2, 9);
      c.src_row_stride = c.dst_row_stride = c.width + r.in(0, 3);
      c.src_plane_stride = c.dst_plane_stride = 0;
      c.window = static_cast<int>(r.in(1, 3));
      c.window_h = static_cast<int>(r.in(0, 2));
      c.stride = static_cast<int>(r.in(0, 3));
      if (c.window_height() > static_cast<int>(c.height)) c.window_h = static_cast<int>(c.height);
      break;
    case ArmOpKind::QuantizeAdd:  // the addend laid out as the destination, anywhere (in place too)
      c.dst_row_stride = c.width + r.in(0, 7);
      c.add_bias = r.coin();
      c.per_channel_shift = r.coin();
      c.bias_addr = region();
      c.shift_addr = region();
      c.addend = r.coin() ? c.dst : region();
      c.bias_plane_step = r.in(0, 2), c.bias_row_step = r.in(0, 2), c.bias_col_step = r.in(0, 1);
      break;
    case ArmOpKind::QuantizeMaxPool:  // the sums' rows of words, col_step apart; the bias and shift one per plane
      c.height = r.in(2, 7), c.width = r.in(2, 9);
      c.col_step = r.coin() ? r.in(1, 3) : 1;
      c.src_row_stride = 4 * c.width * c.col_step + r.in(0, 7);
      c.dst_row_stride = c.width + r.in(0, 3);
      c.window = static_cast<int>(r.in(1, 3));
      c.window_h = static_cast<int>(r.in(0, 2));
      c.stride = static_cast<int>(r.in(0, 3));
      if (c.window_height() > static_cast<int>(c.height)) c.window_h = static_cast<int>(c.height);
      c.add_bias = r.coin();
      c.per_channel_shift = r.coin();
      if (r.coin()) c.saturate_low = 0;
      c.bias_addr = region();
      c.shift_addr = region();
      c.bias_plane_step = r.in(0, 2);
      break;
    case ArmOpKind::MacInt8:
      c.depth = r.in(1, 12);
      c.a_col_stride = r.coin() ? 1 : 4;
      c.src_row_stride = c.depth * c.a_col_stride + r.in(0, 3);
      c.weights = region();
      c.weights_row_stride = c.width + r.in(0, 3);
      c.weights_plane_stride = c.depth * c.weights_row_stride + r.in(0, 3);
      c.dst_row_stride = 4 * c.width + r.in(0, 8);
      c.dst_plane_stride = 0;
      break;
    case ArmOpKind::PermuteWords:
      c.width = r.in(1, 24);
      c.src = r.below(16 * 1024), c.table = 32 * 1024 + r.below(8 * 1024);  // the table apart from the words
      c.src_plane_stride = 4 * c.width + r.in(0, 8);
      break;
    case ArmOpKind::Table8:
    case ArmOpKind::Affine8:
    case ArmOpKind::ChannelMul8:  // the plane's table, parameters or factor apart from the map it changes
      c.src = c.dst = r.below(16 * 1024), c.table = 32 * 1024 + r.below(8 * 1024);
      break;
    case ArmOpKind::Copy8:
      // a row copied forward (arm_kernels.h): no destination starting inside its own row's source after it
      c.src = r.below(16 * 1024);
      if (r.coin()) {
        c.dst = 24 * 1024 + r.below(16 * 1024);
      } else {  // in place, shifted down: every row's destination at or before its source
        c.dst = c.src - std::min(c.src, r.below(4));
        c.dst_row_stride = c.src_row_stride, c.dst_plane_stride = c.src_plane_stride;
      }
      break;
    default:
      break;
  }
  return c;
}

void fill(std::vector<std::uint8_t>& sram, Random& r) {
  for (auto& b : sram) b = static_cast<std::uint8_t>(r.g.next());
}

// PermuteWords' table: a random permutation of its words (and some fixed points)
void permutation_table(const ArmCommand& c, std::vector<std::uint8_t>& sram, Random& r) {
  std::vector<std::uint16_t> t(c.width);
  std::iota(t.begin(), t.end(), std::uint16_t{0});
  for (std::size_t i = t.size(); i > 1; --i) std::swap(t[i - 1], t[r.below(static_cast<std::uint32_t>(i))]);
  for (std::size_t s = 0; s < t.size(); ++s) std::memcpy(&sram[c.table + 2 * s], &t[s], 2);
}

// MacInt8's operand: mostly zero, as spikes are
void sparse_operand(const ArmCommand& c, std::vector<std::uint8_t>& sram, Random& r) {
  for (std::size_t row = 0; row < c.height; ++row)
    for (std::size_t q = 0; q < c.depth; ++q)
      sram[c.src + row * c.src_row_stride + q * c.a_col_stride] = r.below(3) == 0 ? static_cast<std::uint8_t>(r.g.next()) : 0;
}

const ArmOpKind kKinds[] = {ArmOpKind::Pad,        ArmOpKind::Relu32,     ArmOpKind::Quantize, ArmOpKind::MaxPool8,
                            ArmOpKind::AddInt32,   ArmOpKind::AddInt8,    ArmOpKind::Relu8,    ArmOpKind::AvgPool8,
                            ArmOpKind::MacInt8,    ArmOpKind::PermuteWords, ArmOpKind::Copy8,  ArmOpKind::Table8,
                            ArmOpKind::Affine8,    ArmOpKind::AddScaled8, ArmOpKind::Mul8,     ArmOpKind::ChannelMul8,
                            ArmOpKind::QuantizeMaxPool, ArmOpKind::QuantizeAdd};

}  // namespace

TEST(ArmKernels, EachKernelComputesWhatArmApplyComputesOnRandomCommands) {
  Random r{{2026}};
  for (ArmOpKind k : kKinds) {
    int ran = 0;
    for (int trial = 0; ran < 300 && trial < 3000; ++trial) {
      const ArmCommand c = random_command(k, r);
      std::vector<std::uint8_t> reference(kSram);
      fill(reference, r);
      if (k == ArmOpKind::PermuteWords) permutation_table(c, reference, r);
      if (k == ArmOpKind::MacInt8) sparse_operand(c, reference, r);
      std::vector<std::uint8_t> kernel = reference;
      try {
        arm_apply(c, reference.data(), reference.size());
      } catch (const std::exception&) {
        continue;  // a command arm_apply refuses (out of the SRAM): the kernel is not asked
      }
      arm_run_kernel(c, kernel.data(), kernel.size());
      ++ran;
      const auto diff = std::mismatch(reference.begin(), reference.end(), kernel.begin());
      ASSERT_TRUE(diff.first == reference.end())
          << to_string(k) << " (" << arm_kernel_name(c) << "), command " << ran << ": SRAM byte "
          << (diff.first - reference.begin()) << " is " << int(*diff.second) << ", arm_apply's " << int(*diff.first);
    }
    EXPECT_EQ(ran, 300) << to_string(k) << ": too few valid random commands";
  }
}

TEST(ArmKernels, TheConfigurationsCountedClocksAreTheCommittedCounts) {
  std::ifstream f(std::string(S2_SOURCE_DIR) + "/vectors/arm_clocks.json");
  ASSERT_TRUE(f) << "vectors/arm_clocks.json";
  const nlohmann::json counted = nlohmann::json::parse(f);
  EXPECT_EQ(arm_kernel_clocks_json(ArmKernelClocks{}), counted.at("model_fields"))
      << "model/hw_config.h's ArmKernelClocks defaults differ from the counts (python3 tools/arm_clocks.py --cxx)";
  // every kernel the model charges has its counts
  for (ArmOpKind k : kKinds) {
    ArmCommand c;
    c.kind = k;
    EXPECT_TRUE(counted.at("model_fields").contains(arm_kernel_name(c))) << arm_kernel_name(c);
  }
}

// Each field its own value (1, 2, 3, ... in the fields' order), so a field charged in the wrong place shows.
ArmKernelClocks numbered() {
  ArmKernelClocks k;
  double v = 1;
  each_arm_kernel_field(k, [&](const char*, const char*, double& x) { x = v++; });
  return k;
}

TEST(ArmKernels, ARowKernelIsChargedItsCallAndEachLoopPerIteration) {
  ArmKernelClocks k;
  k.quantize_bias = {100, 10, 3, 2};
  k.quantize = {1000, 1, 1, 1};
  ArmCommand c;
  c.kind = ArmOpKind::Quantize;
  c.planes = 2, c.height = 3, c.width = 5;
  c.add_bias = true;
  // 100 + 2 x (10 + 3 x (3 + 5 x 2))
  EXPECT_EQ(arm_op_cycles(c, k), 100u + 2u * (10u + 3u * (3u + 5u * 2u)));
  EXPECT_STREQ(arm_kernel_name(c), "quantize_bias");
  c.add_bias = false;
  EXPECT_EQ(arm_op_cycles(c, k), 1000u + 2u * (1u + 3u * (1u + 5u)));
}

TEST(ArmKernels, PaddingIsChargedPerRowItsSideBytesAndItsWholeRowsSplitAtWordBoundaries) {
  ArmKernelClocks k;
  k.zero_span = {100, 1, 10, 1000};
  k.pad = {0, 0, 10000, 20000, 300, 500, 40000};
  ArmCommand c;
  c.kind = ArmOpKind::Pad;
  c.planes = 1, c.height = 4, c.width = 10;
  c.src = 2, c.src_row_stride = 12;
  c.pad_top = 1, c.pad_bottom = 1, c.pad_left = 2, c.pad_right = 1;
  // top row at 2: 2 bytes to the boundary, 2 words; two side rows of 2 left and 1 right byte; bottom row at
  // 38: 2 head bytes, 2 words
  const std::uint64_t top = 10000 + 100 + 2 * 1 + 2 * 10, side = 20000 + 2 * 300 + 500, bottom = 40000 + 100 + 2 + 20;
  EXPECT_EQ(arm_op_cycles(c, k), top + 2 * side + bottom);
  c.src = 0;  // aligned rows: a whole row 2 words and 2 tail bytes
  EXPECT_EQ(arm_op_cycles(c, k), (10000 + 100 + 20 + 2000) + 2 * side + (40000 + 100 + 20 + 2000));
}

TEST(ArmKernels, SpikesAndPermutationCyclesAreCountedFromTheSram) {
  const ArmKernelClocks k = numbered();
  ArmCommand m;
  m.kind = ArmOpKind::MacInt8;
  m.planes = 2, m.height = 1, m.width = 3, m.depth = 4, m.a_col_stride = 1;
  m.src = 0, m.weights = 64, m.weights_row_stride = 3, m.weights_plane_stride = 12, m.dst = 128, m.dst_row_stride = 12;
  std::vector<std::uint8_t> sram(256, 0);
  sram[1] = 5, sram[3] = 1;  // two spikes of four values
  const auto& a = k.mac_int8;
  EXPECT_EQ(arm_op_cycles(m, k, sram.data(), sram.size()),
            std::uint64_t(a.call + a.row + 2 * a.value_no_spike + 2 * (a.value_spike + 2 * (a.plane + 3 * a.weight))));
  EXPECT_EQ(arm_op_cycles(m, k), std::uint64_t(a.call + a.row + 4 * (a.value_spike + 2 * (a.plane + 3 * a.weight))));

  ArmCommand p;
  p.kind = ArmOpKind::PermuteWords;
  p.planes = 1, p.width = 5, p.src = 0, p.table = 64;
  const std::uint16_t t[5] = {1, 0, 2, 4, 3};  // two 2-cycles and a fixed point: 3 cycle starts, 2 words placed
  std::memcpy(&sram[64], t, sizeof t);
  const auto& q = k.permute_words;
  EXPECT_EQ(arm_op_cycles(p, k, sram.data(), sram.size()),
            std::uint64_t(q.call + q.plane + 5 * (q.clear_word + q.moved_word) + 3 * q.entry_cycle_start + 2 * q.entry_placed));
}

TEST(ArmKernels, TheClockModelIsTheConfigurations) {
  HwConfig cfg;
  EXPECT_EQ(cfg.arm_clock_model, "counted");
  ArmCommand c;
  c.kind = ArmOpKind::Relu8;
  c.planes = 1, c.height = 2, c.width = 8;
  EXPECT_EQ(arm_op_cycles(c, cfg), arm_op_cycles(c, cfg.arm_kernels));
  cfg.arm_clock_model = "table5.9";
  EXPECT_EQ(arm_op_cycles(c, cfg), std::uint64_t(16 * cfg.arm.relu_8bit_per_pixel));
  // the JSON names the model and every kernel's fields; an unknown kernel or model is refused
  EXPECT_EQ(hw_config_from_json(to_json(cfg)).arm_clock_model, "table5.9");
  EXPECT_THROW(hw_config_from_json(nlohmann::json{{"arm_clock_model", "guess"}}), std::invalid_argument);
  EXPECT_THROW(hw_config_from_json(nlohmann::json{{"arm_kernel_clocks", {{"relu9", {{"call", 1}}}}}}), std::invalid_argument);
  EXPECT_THROW(hw_config_from_json(nlohmann::json{{"arm_kernel_clocks", {{"relu8", {{"calls", 1}}}}}}), std::invalid_argument);
  EXPECT_EQ(hw_config_from_json(nlohmann::json{{"arm_kernel_clocks", {{"relu8", {{"pixel", 3}}}}}}).arm_kernels.relu8.pixel, 3);
}

TEST(ArmKernels, AFoldedPoolingIsChargedAsAPoolingKernelOfItsOwn) {
  const ArmKernelClocks k = numbered();
  ArmCommand c;
  c.kind = ArmOpKind::QuantizeMaxPool;
  c.planes = 2, c.height = 4, c.width = 6, c.window = 2;  // 2 x 3 outputs of 2 x 2 windows per plane
  c.add_bias = true, c.saturate_low = 0;
  EXPECT_STREQ(arm_kernel_name(c), "quantize_maxpool_bias_relu");
  const auto& p = k.quantize_maxpool_bias_relu;
  EXPECT_EQ(arm_op_cycles(c, k),
            std::uint64_t(p.call + 2 * (p.plane + 2 * (p.output_row + 3 * (p.output + 2 * (p.window_row + 2 * p.window_pixel))))));
  c.add_bias = false, c.saturate_low = -128, c.per_channel_shift = true;
  EXPECT_STREQ(arm_kernel_name(c), "quantize_maxpool_shift");
}

// The fold is exact: the quantization of each window's largest sum is the max pooling of the quantized sums, for
// every bias (wrapping sums included), shift, saturation and column step.
TEST(ArmKernels, AFoldedPoolingGivesThePoolingOfTheQuantizedSums) {
  Random r{{48}};
  for (int trial = 0; trial < 500; ++trial) {
    ArmCommand q;
    q.kind = ArmOpKind::Quantize;
    q.planes = r.in(1, 3);
    const int window = static_cast<int>(r.in(2, 3));
    q.height = static_cast<std::uint32_t>(window) * r.in(1, 3), q.width = static_cast<std::uint32_t>(window) * r.in(1, 4);
    q.col_step = r.in(1, 2);
    q.src = 0, q.src_row_stride = 4 * q.width * q.col_step + r.in(0, 4);
    q.dst = 8192, q.dst_row_stride = q.width;
    q.shift = static_cast<int>(r.in(0, 20));
    q.saturate_high = r.coin() ? 127 : static_cast<int>(r.in(0, 127));
    q.saturate_low = r.coin() ? 0 : -128;
    q.add_bias = r.coin(), q.bias_addr = 12288, q.bias_plane_step = 1;
    q.per_channel_shift = r.coin(), q.shift_addr = 12800;
    std::vector<std::uint8_t> sram(16384);
    fill(sram, r);
    for (std::uint32_t d = 0; d < q.planes; ++d) sram[q.shift_addr + d] = static_cast<std::uint8_t>(r.in(0, 40));
    std::vector<std::uint8_t> folded_sram = sram;
    arm_apply(q, sram.data(), sram.size());
    ArmCommand pool;
    pool.kind = ArmOpKind::MaxPool8;
    pool.planes = q.planes, pool.height = q.height, pool.width = q.width, pool.window = window;
    pool.src = pool.dst = q.dst, pool.src_row_stride = q.width, pool.dst_row_stride = q.width / std::uint32_t(window);
    arm_apply(pool, sram.data(), sram.size());
    ArmCommand folded = q;
    folded.kind = ArmOpKind::QuantizeMaxPool;
    folded.window = window;
    folded.dst_row_stride = pool.dst_row_stride;
    arm_apply(folded, folded_sram.data(), folded_sram.size());
    const std::size_t out = std::size_t(q.planes) * (q.height / std::uint32_t(window)) * pool.dst_row_stride;
    ASSERT_TRUE(std::equal(sram.begin() + q.dst, sram.begin() + q.dst + std::ptrdiff_t(out), folded_sram.begin() + q.dst))
        << "trial " << trial << ": window " << window << ", shift " << q.shift << ", bias " << q.add_bias;
  }
}

// The addition folded into the quantization is the two passes in one: Quantize, then AddInt8 of the addend, for
// every bias, shift, saturation and ReLU after the addition; charged as its own row kernel.
TEST(ArmKernels, AFoldedAdditionGivesTheQuantizationThenTheAddition) {
  Random r{{49}};
  for (int trial = 0; trial < 500; ++trial) {
    ArmCommand q;
    q.kind = ArmOpKind::Quantize;
    q.planes = r.in(1, 3), q.height = r.in(1, 5), q.width = r.in(1, 9);
    q.col_step = r.in(1, 2);
    q.src = 0, q.src_row_stride = 4 * q.width * q.col_step + r.in(0, 4);
    q.dst = 8192, q.dst_row_stride = q.width + r.in(0, 3);
    q.shift = static_cast<int>(r.in(0, 20));
    q.saturate_high = r.coin() ? 127 : static_cast<int>(r.in(0, 127));
    q.add_bias = r.coin(), q.bias_addr = 12288, q.bias_plane_step = r.in(0, 1), q.bias_row_step = r.in(0, 1);
    q.per_channel_shift = r.coin(), q.shift_addr = 12800;
    std::vector<std::uint8_t> sram(16384);
    fill(sram, r);
    for (std::uint32_t i = 0; i < 64; ++i) sram[q.shift_addr + i] = static_cast<std::uint8_t>(r.in(0, 40));
    std::vector<std::uint8_t> folded_sram = sram;
    arm_apply(q, sram.data(), sram.size());
    ArmCommand add;
    add.kind = ArmOpKind::AddInt8;
    add.planes = q.planes, add.height = q.height, add.width = q.width, add.relu = r.coin();
    add.src = 10240, add.src_row_stride = q.dst_row_stride, add.src_plane_stride = q.height * q.dst_row_stride;
    add.dst = q.dst, add.dst_row_stride = q.dst_row_stride;
    arm_apply(add, sram.data(), sram.size());
    ArmCommand folded = q;
    folded.kind = ArmOpKind::QuantizeAdd;
    folded.addend = add.src, folded.relu = add.relu;
    arm_apply(folded, folded_sram.data(), folded_sram.size());
    ASSERT_EQ(sram, folded_sram) << "trial " << trial << ": shift " << q.shift << ", bias " << q.add_bias << ", relu " << add.relu;
  }
  const ArmKernelClocks k = numbered();
  ArmCommand c;
  c.kind = ArmOpKind::QuantizeAdd;
  c.planes = 2, c.height = 3, c.width = 5, c.per_channel_shift = true, c.relu = true;
  EXPECT_STREQ(arm_kernel_name(c), "quantize_add_shift_relu");
  const auto& p = k.quantize_add_shift_relu;
  EXPECT_EQ(arm_op_cycles(c, k), std::uint64_t(p.call + 2 * (p.plane + 3 * (p.row + 5 * p.pixel))));
  c.saturate_low = 0;  // a ReLU before the addition is not the addition's: refused
  std::vector<std::uint8_t> sram(4096);
  EXPECT_THROW(arm_apply(c, sram.data(), sram.size()), std::invalid_argument);
}
