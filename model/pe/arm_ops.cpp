#include "model/pe/arm_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "model/pe/arm_kernels/arm_kernels.h"

namespace s2 {

namespace {

std::uint64_t pixels(const ArmCommand& c) { return std::uint64_t(c.planes) * c.height * c.width; }

std::uint64_t border_bytes(const ArmCommand& c) {
  const std::uint64_t inner_w = c.width - std::min<std::uint64_t>(c.width, c.pad_left + c.pad_right);
  const std::uint64_t inner_h = c.height - std::min<std::uint64_t>(c.height, c.pad_top + c.pad_bottom);
  return std::uint64_t(c.planes) * (std::uint64_t(c.width) * c.height - inner_w * inner_h);
}

void need(std::size_t end, std::size_t size, const ArmCommand& c) {
  if (end > size)
    throw std::out_of_range(std::string("ARM ") + to_string(c.kind) + ": SRAM address " + std::to_string(end) +
                            " beyond the SRAM");
}

// Both ends of a command's planes lie in the SRAM.
void need_planes(const ArmCommand& c, std::size_t sp, std::size_t dp, std::size_t size) {
  need(c.src + c.planes * sp, size, c);
  need(c.dst + c.planes * dp, size, c);
}

std::int32_t load32(const std::uint8_t* p) {
  std::int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
void store32(std::uint8_t* p, std::int32_t v) { std::memcpy(p, &v, 4); }

// Calls f(plane, row, column) for every pixel of the command's planes x height x width.
template <typename F>
void each_pixel(const ArmCommand& c, F f) {
  for (std::uint32_t d = 0; d < c.planes; ++d)
    for (std::uint32_t y = 0; y < c.height; ++y)
      for (std::uint32_t x = 0; x < c.width; ++x) f(std::size_t(d), std::size_t(y), std::size_t(x));
}

// The byte address of the bias value (d, y, x) of a Relu32 or Quantize.
std::size_t bias_byte(const ArmCommand& c, std::size_t d, std::size_t y, std::size_t x) {
  return c.bias_addr + 4 * (d * c.bias_plane_step + y * c.bias_row_step + x * c.bias_col_step);
}

// The byte address of the per-channel shift of value (d, y, x) of a Quantize (indexed as its bias is).
std::size_t shift_byte(const ArmCommand& c, std::size_t d, std::size_t y, std::size_t x) {
  return c.shift_addr + d * c.bias_plane_step + y * c.bias_row_step + x * c.bias_col_step;
}
void need_shifts(const ArmCommand& c, std::size_t size) {
  if (!c.per_channel_shift || c.planes == 0 || c.height == 0 || c.width == 0) return;
  need(shift_byte(c, c.planes - 1, c.height - 1, c.width - 1) + 1, size, c);
}

// A command's bias values must lie in the SRAM (the distributor loads a piece's slice of them).
void need_bias(const ArmCommand& c, std::size_t size) {
  if (!c.add_bias || c.planes == 0 || c.height == 0 || c.width == 0) return;
  const std::size_t last = bias_byte(c, c.planes - 1, c.height - 1, c.width - 1) + 4;
  if (last > size)
    throw std::out_of_range(std::string("ARM ") + to_string(c.kind) + ": bias at SRAM address " + std::to_string(last - 4) +
                            " beyond the SRAM");
}

// x + bias in 32 bits, wrapping as the ARM's ADD does.
std::int32_t add32(std::int32_t a, std::int32_t b) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
}

// An element-wise result to int8: max(0, v) with a ReLU, then saturated.
std::uint8_t saturate8(std::int32_t v, bool relu) {
  return static_cast<std::uint8_t>(static_cast<std::int8_t>(std::clamp<std::int32_t>(relu ? std::max(0, v) : v, -128, 127)));
}
// The rounding term of a right shift by s: half a step (rounds half up), none without a shift.
std::int32_t rounding(int s) { return s > 0 ? std::int32_t(1) << (s - 1) : 0; }

// MacInt8's operand value (row, k).
std::int8_t mac_operand(const ArmCommand& c, const std::uint8_t* sram, std::size_t row, std::size_t k) {
  return static_cast<std::int8_t>(sram[c.src + row * c.src_row_stride + k * c.a_col_stride]);
}
// Every range an SNN operation touches lies in the SRAM.
void need_extents(const ArmCommand& c, std::size_t size) {
  for (const SramExtent& e : snn_op_extents(c)) need(e.hi, size, c);
}
// PermuteWords' table entry s.
std::uint32_t permute_target(const ArmCommand& c, const std::uint8_t* sram, std::size_t s) {
  return std::uint32_t(sram[c.table + 2 * s]) | (std::uint32_t(sram[c.table + 2 * s + 1]) << 8);
}
// The table is a permutation of 0..width-1 (else std::invalid_argument); returns the words it moves and its
// cycles of more than one word.
std::pair<std::uint64_t, std::uint64_t> permute_moves(const ArmCommand& c, const std::uint8_t* sram, std::size_t size) {
  need_extents(c, size);
  std::vector<bool> seen(c.width, false);
  std::uint64_t moved = 0, cycles = 0;
  for (std::size_t s = 0; s < c.width; ++s) {
    const std::uint32_t t = permute_target(c, sram, s);
    if (t >= c.width || seen[t])
      throw std::invalid_argument("ARM permute32: table entry " + std::to_string(s) + " is " + std::to_string(t) +
                                  ", not a permutation of 0.." + std::to_string(c.width - 1));
    seen[t] = true;
    moved += t != s;
  }
  std::vector<bool> done(c.width, false);
  for (std::size_t s = 0; s < c.width; ++s) {
    if (done[s] || permute_target(c, sram, s) == s) continue;
    ++cycles;
    for (std::size_t i = s; !done[i]; i = permute_target(c, sram, i)) done[i] = true;
  }
  return {moved, cycles};
}

// MacInt8's non-zero operand values (spikes), counted from the SRAM when given; without it every value
// (a bound).
std::uint64_t mac_spikes(const ArmCommand& c, const std::uint8_t* sram, std::size_t size) {
  if (!sram) return std::uint64_t(c.height) * c.depth;
  need_extents(c, size);
  std::uint64_t spikes = 0;
  for (std::size_t r = 0; r < c.height; ++r)
    for (std::size_t q = 0; q < c.depth; ++q) spikes += mac_operand(c, sram, r, q) != 0;
  return spikes;
}

}  // namespace

std::vector<SramExtent> snn_op_extents(const ArmCommand& c) {
  using u64 = std::uint64_t;
  const u64 sp = c.source_plane_stride(), dp = c.destination_plane_stride(c.height);
  switch (c.kind) {
    case ArmOpKind::MacInt8:
      if (c.planes == 0 || c.height == 0 || c.width == 0 || c.depth == 0) return {};
      return {{c.src, c.src + (c.height - 1ull) * c.src_row_stride + (c.depth - 1ull) * c.a_col_stride + 1},
              {c.weights, c.weights + (c.planes - 1ull) * c.weights_plane_stride + (c.depth - 1ull) * c.weights_row_stride + c.width},
              {c.dst, c.dst + (c.planes - 1ull) * dp + (c.height - 1ull) * c.dst_row_stride + 4ull * c.width}};
    case ArmOpKind::PermuteWords:
      if (c.width == 0) return {};
      if (c.planes == 0) return {{c.table, c.table + 2ull * c.width}};  // the table is read all the same
      return {{c.src, c.src + (c.planes - 1ull) * sp + 4ull * c.width}, {c.table, c.table + 2ull * c.width}};
    case ArmOpKind::Copy8:
    case ArmOpKind::AddScaled8:
    case ArmOpKind::Mul8:
      if (c.planes == 0 || c.height == 0 || c.width == 0) return {};
      return {{c.src, c.src + (c.planes - 1ull) * sp + (c.height - 1ull) * c.src_row_stride + c.width},
              {c.dst, c.dst + (c.planes - 1ull) * dp + (c.height - 1ull) * c.dst_row_stride + c.width}};
    case ArmOpKind::Table8:
    case ArmOpKind::Affine8:
    case ArmOpKind::ChannelMul8: {
      if (c.planes == 0 || c.height == 0 || c.width == 0) return {};
      const u64 params = c.kind == ArmOpKind::Table8    ? (c.planes - 1ull) * c.table_plane_step + 256
                         : c.kind == ArmOpKind::Affine8 ? 8ull * c.planes
                                                        : u64(c.planes);
      return {{c.src, c.src + (c.planes - 1ull) * sp + (c.height - 1ull) * c.src_row_stride + c.width}, {c.table, c.table + params}};
    }
    default:
      return {};
  }
}

ArmSramBytes arm_op_sram_bytes(const ArmCommand& c, const std::uint8_t* sram, std::size_t sram_bytes) {
  using u64 = std::uint64_t;
  const u64 px = pixels(c);
  ArmSramBytes b;
  switch (c.kind) {
    case ArmOpKind::Pad: b.written = border_bytes(c); break;
    case ArmOpKind::Relu32: b = {4 * px, 4 * px}; break;
    case ArmOpKind::Quantize: b = {4 * px, px}; break;
    case ArmOpKind::QuantizeAdd: b = {5 * px, px}; break;
    case ArmOpKind::MaxPool8:
    case ArmOpKind::AvgPool8:
    case ArmOpKind::QuantizeMaxPool: {
      const u64 w = u64(c.window), h = u64(c.window_height()), st = u64(c.pool_stride());
      if (w == 0 || h == 0 || st == 0 || h > c.height || w > c.width) break;
      const u64 outputs = u64(c.planes) * ((c.height - h) / st + 1) * ((c.width - w) / st + 1);
      b = {outputs * w * h * (c.kind == ArmOpKind::QuantizeMaxPool ? 4 : 1), outputs};
      break;
    }
    case ArmOpKind::AddInt32: b = {8 * px, 4 * px}; break;
    case ArmOpKind::AddInt8: b = {2 * px, px}; break;
    case ArmOpKind::Relu8: b = {px, px}; break;
    case ArmOpKind::MacInt8: {
      const u64 nonzero = mac_spikes(c, sram, sram_bytes);
      const u64 adds = nonzero * c.planes * c.width;  // a weight byte read, a sum read and written per add
      b = {u64(c.height) * c.depth + adds + 4 * adds, 4 * adds};
      break;
    }
    case ArmOpKind::PermuteWords: {
      u64 moved = c.width;
      if (sram) moved = permute_moves(c, sram, sram_bytes).first;
      b = {2ull * c.width + u64(c.planes) * 4 * moved, u64(c.planes) * 4 * moved};
      break;
    }
    case ArmOpKind::Copy8: b = {px, px}; break;
    // a value read and written each; a table byte per value, a plane's parameters once (kept in registers)
    case ArmOpKind::Table8: b = {2 * px, px}; break;
    case ArmOpKind::Affine8: b = {px + 8ull * c.planes, px}; break;
    case ArmOpKind::AddScaled8:
    case ArmOpKind::Mul8: b = {2 * px, px}; break;
    case ArmOpKind::ChannelMul8: b = {px + c.planes, px}; break;
  }
  const bool quantizes = c.kind == ArmOpKind::Quantize || c.kind == ArmOpKind::QuantizeMaxPool || c.kind == ArmOpKind::QuantizeAdd;
  if (c.add_bias && (c.kind == ArmOpKind::Relu32 || quantizes))
    b.read += 4 * u64(c.bias_plane_step ? c.planes : 1) * (c.bias_row_step ? c.height : 1) * (c.bias_col_step ? c.width : 1);
  // a channel's shift, like its bias, is loaded once and kept in a register across the values that share it
  if (c.per_channel_shift && quantizes)
    b.read += u64(c.bias_plane_step ? c.planes : 1) * (c.bias_row_step ? c.height : 1) * (c.bias_col_step ? c.width : 1);
  return b;
}

std::uint64_t arm_op_cycles(const ArmCommand& c, const ArmOpClocks& k, const std::uint8_t* sram, std::size_t sram_bytes) {
  double clocks = 0;
  switch (c.kind) {
    case ArmOpKind::Pad: clocks = k.padding_per_word * std::ceil(double(border_bytes(c)) / 4.0); break;
    case ArmOpKind::Relu32: clocks = k.relu_32bit_per_pixel * double(pixels(c)); break;
    case ArmOpKind::Quantize: clocks = k.quantization_per_pixel * double(pixels(c)); break;
    // Table 5.9 has no fused kernel: its quantization and its addition of every pixel
    case ArmOpKind::QuantizeAdd: clocks = (k.quantization_per_pixel + k.elementwise_add_per_pixel) * double(pixels(c)); break;
    case ArmOpKind::MaxPool8: clocks = k.maxpool_8bit_per_pixel * double(pixels(c)); break;
    case ArmOpKind::AddInt32: clocks = k.elementwise_add_per_pixel * double(pixels(c)); break;
    case ArmOpKind::AddInt8: clocks = k.elementwise_add_per_pixel * double(pixels(c)); break;
    case ArmOpKind::Relu8: clocks = k.relu_8bit_per_pixel * double(pixels(c)); break;
    // Table 5.9 has no average pooling: charged as 8-bit max pooling (a sum per pixel instead of a max)
    case ArmOpKind::AvgPool8: clocks = k.maxpool_8bit_per_pixel * double(pixels(c)); break;
    case ArmOpKind::MacInt8: {
      // each operand value tested once (every plane's weights are added for a non-zero one)
      const std::uint64_t nonzero = mac_spikes(c, sram, sram_bytes);
      clocks = k.spike_test_per_value * double(std::uint64_t(c.height) * c.depth) +
               k.synapse_add_per_weight * double(nonzero) * double(c.planes) * double(c.width);
      break;
    }
    case ArmOpKind::PermuteWords: {
      std::uint64_t moved = c.width, cycles = c.width / 2;
      if (sram) std::tie(moved, cycles) = permute_moves(c, sram, sram_bytes);
      clocks = double(c.planes) * (k.permute_entry_per_word * double(c.width) + k.permute_move_per_word * double(moved) +
                                   k.permute_cycle_start * double(cycles));
      break;
    }
    case ArmOpKind::Copy8:
      clocks = k.copy_per_word * double(std::uint64_t(c.planes) * c.height * ((c.width + 3) / 4));
      break;
    case ArmOpKind::Table8: clocks = k.table_per_pixel * double(pixels(c)); break;
    case ArmOpKind::Affine8: clocks = k.affine_per_pixel * double(pixels(c)); break;
    case ArmOpKind::AddScaled8: clocks = k.add_scaled_per_pixel * double(pixels(c)); break;
    case ArmOpKind::Mul8: clocks = k.mul_per_pixel * double(pixels(c)); break;
    case ArmOpKind::ChannelMul8: clocks = k.channel_mul_per_pixel * double(pixels(c)); break;
    // Table 5.9 has no fused kernel: its max pooling of every pixel and its quantization of every output
    case ArmOpKind::QuantizeMaxPool: {
      const std::uint64_t w = std::uint64_t(c.window), h = std::uint64_t(c.window_height()), st = std::uint64_t(c.pool_stride());
      if (w == 0 || h == 0 || st == 0 || h > c.height || w > c.width) break;
      const double outputs = double(std::uint64_t(c.planes) * ((c.height - h) / st + 1) * ((c.width - w) / st + 1));
      clocks = k.maxpool_8bit_per_pixel * double(pixels(c)) + k.quantization_per_pixel * outputs;
      if (c.add_bias) clocks += k.bias_add_per_pixel * double(pixels(c));
      break;
    }
  }
  if (c.add_bias && (c.kind == ArmOpKind::Relu32 || c.kind == ArmOpKind::Quantize || c.kind == ArmOpKind::QuantizeAdd))
    clocks += k.bias_add_per_pixel * double(pixels(c));
  return static_cast<std::uint64_t>(std::ceil(clocks));
}

namespace {

// zero_span's clocks on n bytes at SRAM address a: bytes to a word boundary, words, the bytes left
double zero_span_clocks(const ArmKernelClocks::ZeroSpan& z, std::uint64_t a, std::uint64_t n) {
  const std::uint64_t head = std::min<std::uint64_t>(n, (4 - a % 4) % 4), words = (n - head) / 4, tail = (n - head) % 4;
  return z.call + double(head) * z.head_byte + double(words) * z.word + double(tail) * z.tail_byte;
}

double row_kernel_clocks(const ArmRowKernelClocks& k, std::uint64_t planes, std::uint64_t height, std::uint64_t width) {
  return k.call + double(planes) * (k.plane + double(height) * (k.row + double(width) * k.pixel));
}

// The kernels charged plane > row > pixel, by name (arm_kernel_name)
const ArmRowKernelClocks& row_kernel(std::string_view name, const ArmKernelClocks& k) {
  static const std::pair<const char*, ArmRowKernelClocks ArmKernelClocks::*> kRows[] = {
      {"relu32", &ArmKernelClocks::relu32},
      {"relu32_bias", &ArmKernelClocks::relu32_bias},
      {"quantize", &ArmKernelClocks::quantize},
      {"quantize_bias", &ArmKernelClocks::quantize_bias},
      {"quantize_shift", &ArmKernelClocks::quantize_shift},
      {"quantize_bias_shift", &ArmKernelClocks::quantize_bias_shift},
      {"quantize_relu", &ArmKernelClocks::quantize_relu},
      {"quantize_bias_relu", &ArmKernelClocks::quantize_bias_relu},
      {"quantize_shift_relu", &ArmKernelClocks::quantize_shift_relu},
      {"quantize_bias_shift_relu", &ArmKernelClocks::quantize_bias_shift_relu},
      {"add_int32", &ArmKernelClocks::add_int32},
      {"add_int8", &ArmKernelClocks::add_int8},
      {"add_int8_relu", &ArmKernelClocks::add_int8_relu},
      {"quantize_add", &ArmKernelClocks::quantize_add},
      {"quantize_add_bias", &ArmKernelClocks::quantize_add_bias},
      {"quantize_add_shift", &ArmKernelClocks::quantize_add_shift},
      {"quantize_add_bias_shift", &ArmKernelClocks::quantize_add_bias_shift},
      {"quantize_add_relu", &ArmKernelClocks::quantize_add_relu},
      {"quantize_add_bias_relu", &ArmKernelClocks::quantize_add_bias_relu},
      {"quantize_add_shift_relu", &ArmKernelClocks::quantize_add_shift_relu},
      {"quantize_add_bias_shift_relu", &ArmKernelClocks::quantize_add_bias_shift_relu},
      {"relu8", &ArmKernelClocks::relu8},
      {"table8", &ArmKernelClocks::table8},
      {"affine8", &ArmKernelClocks::affine8},
      {"add_scaled8", &ArmKernelClocks::add_scaled8},
      {"mul8", &ArmKernelClocks::mul8},
      {"channel_mul8", &ArmKernelClocks::channel_mul8}};
  for (const auto& [n, member] : kRows)
    if (name == n) return k.*member;
  throw std::logic_error("row_kernel: " + std::string(name) + " is not a row kernel");
}

// The pooling-shaped kernels charged plane > output row > output > window row > window pixel, by name
const ArmPoolKernelClocks& pool_kernel(std::string_view name, const ArmKernelClocks& k) {
  static const std::pair<const char*, ArmPoolKernelClocks ArmKernelClocks::*> kPools[] = {
      {"maxpool8", &ArmKernelClocks::maxpool8},
      {"avgpool8", &ArmKernelClocks::avgpool8},
      {"quantize_maxpool", &ArmKernelClocks::quantize_maxpool},
      {"quantize_maxpool_bias", &ArmKernelClocks::quantize_maxpool_bias},
      {"quantize_maxpool_shift", &ArmKernelClocks::quantize_maxpool_shift},
      {"quantize_maxpool_bias_shift", &ArmKernelClocks::quantize_maxpool_bias_shift},
      {"quantize_maxpool_relu", &ArmKernelClocks::quantize_maxpool_relu},
      {"quantize_maxpool_bias_relu", &ArmKernelClocks::quantize_maxpool_bias_relu},
      {"quantize_maxpool_shift_relu", &ArmKernelClocks::quantize_maxpool_shift_relu},
      {"quantize_maxpool_bias_shift_relu", &ArmKernelClocks::quantize_maxpool_bias_shift_relu}};
  for (const auto& [n, member] : kPools)
    if (name == n) return k.*member;
  throw std::logic_error("pool_kernel: " + std::string(name) + " is not a pooling kernel");
}

// The kernels' host build by name (arm_kernel_name); PermuteWords' takes a scratch buffer too (arm_run_kernel)
using KernelFunction = void (*)(std::uint8_t*, const s2k_cmd*);
KernelFunction kernel_function(std::string_view name) {
  static const std::pair<const char*, KernelFunction> kKernels[] = {
      {"pad", s2k_pad},
      {"relu32", s2k_relu32},
      {"relu32_bias", s2k_relu32_bias},
      {"quantize", s2k_quantize},
      {"quantize_bias", s2k_quantize_bias},
      {"quantize_shift", s2k_quantize_shift},
      {"quantize_bias_shift", s2k_quantize_bias_shift},
      {"quantize_relu", s2k_quantize_relu},
      {"quantize_bias_relu", s2k_quantize_bias_relu},
      {"quantize_shift_relu", s2k_quantize_shift_relu},
      {"quantize_bias_shift_relu", s2k_quantize_bias_shift_relu},
      {"maxpool8", s2k_maxpool8},
      {"quantize_maxpool", s2k_quantize_maxpool},
      {"quantize_maxpool_bias", s2k_quantize_maxpool_bias},
      {"quantize_maxpool_shift", s2k_quantize_maxpool_shift},
      {"quantize_maxpool_bias_shift", s2k_quantize_maxpool_bias_shift},
      {"quantize_maxpool_relu", s2k_quantize_maxpool_relu},
      {"quantize_maxpool_bias_relu", s2k_quantize_maxpool_bias_relu},
      {"quantize_maxpool_shift_relu", s2k_quantize_maxpool_shift_relu},
      {"quantize_maxpool_bias_shift_relu", s2k_quantize_maxpool_bias_shift_relu},
      {"avgpool8", s2k_avgpool8},
      {"add_int32", s2k_add_int32},
      {"add_int8", s2k_add_int8},
      {"add_int8_relu", s2k_add_int8_relu},
      {"quantize_add", s2k_quantize_add},
      {"quantize_add_bias", s2k_quantize_add_bias},
      {"quantize_add_shift", s2k_quantize_add_shift},
      {"quantize_add_bias_shift", s2k_quantize_add_bias_shift},
      {"quantize_add_relu", s2k_quantize_add_relu},
      {"quantize_add_bias_relu", s2k_quantize_add_bias_relu},
      {"quantize_add_shift_relu", s2k_quantize_add_shift_relu},
      {"quantize_add_bias_shift_relu", s2k_quantize_add_bias_shift_relu},
      {"relu8", s2k_relu8},
      {"mac_int8", s2k_mac_int8},
      {"copy8", s2k_copy8},
      {"table8", s2k_table8},
      {"affine8", s2k_affine8},
      {"add_scaled8", s2k_add_scaled8},
      {"mul8", s2k_mul8},
      {"channel_mul8", s2k_channel_mul8}};
  for (const auto& [n, f] : kKernels)
    if (name == n) return f;
  throw std::logic_error("kernel_function: no kernel " + std::string(name));
}

}  // namespace

namespace {

// The quantization's kernels of one family by their variant: a bias or not, one shift or one per channel,
// saturating to int8 or to [0, 127] (a ReLU folded in)
using QuantizeFamily = const char* const[8];
const char* quantize_variant(const QuantizeFamily& names, bool bias, bool shift, bool relu) {
  return names[(bias ? 4 : 0) + (shift ? 2 : 0) + (relu ? 1 : 0)];
}
constexpr QuantizeFamily kQuantize = {"quantize", "quantize_relu", "quantize_shift", "quantize_shift_relu",
                                      "quantize_bias", "quantize_bias_relu", "quantize_bias_shift", "quantize_bias_shift_relu"};
constexpr QuantizeFamily kQuantizeMaxPool = {
    "quantize_maxpool",      "quantize_maxpool_relu",      "quantize_maxpool_shift",      "quantize_maxpool_shift_relu",
    "quantize_maxpool_bias", "quantize_maxpool_bias_relu", "quantize_maxpool_bias_shift", "quantize_maxpool_bias_shift_relu"};
constexpr QuantizeFamily kQuantizeAdd = {"quantize_add",      "quantize_add_relu",      "quantize_add_shift",      "quantize_add_shift_relu",
                                         "quantize_add_bias", "quantize_add_bias_relu", "quantize_add_bias_shift", "quantize_add_bias_shift_relu"};

}  // namespace

const char* arm_kernel_name(const ArmCommand& c) {
  switch (c.kind) {
    case ArmOpKind::Pad: return "pad";
    case ArmOpKind::Relu32: return c.add_bias ? "relu32_bias" : "relu32";
    case ArmOpKind::Quantize: return quantize_variant(kQuantize, c.add_bias, c.per_channel_shift, c.saturate_low == 0);
    case ArmOpKind::MaxPool8: return "maxpool8";
    case ArmOpKind::QuantizeMaxPool: return quantize_variant(kQuantizeMaxPool, c.add_bias, c.per_channel_shift, c.saturate_low == 0);
    case ArmOpKind::AddInt32: return "add_int32";
    case ArmOpKind::AddInt8: return c.relu ? "add_int8_relu" : "add_int8";
    // (its ReLU is the one after the addition)
    case ArmOpKind::QuantizeAdd: return quantize_variant(kQuantizeAdd, c.add_bias, c.per_channel_shift, c.relu);
    case ArmOpKind::Relu8: return "relu8";
    case ArmOpKind::AvgPool8: return "avgpool8";
    case ArmOpKind::MacInt8: return "mac_int8";
    case ArmOpKind::PermuteWords: return "permute_words";
    case ArmOpKind::Copy8: return "copy8";
    case ArmOpKind::Table8: return "table8";
    case ArmOpKind::Affine8: return "affine8";
    case ArmOpKind::AddScaled8: return "add_scaled8";
    case ArmOpKind::Mul8: return "mul8";
    case ArmOpKind::ChannelMul8: return "channel_mul8";
  }
  return "?";
}

const char* arm_clocks_source(const HwConfig& cfg) {
  return cfg.arm_clock_model == "table5.9" ? "thesis Table 5.9's averages"
                                           : "the ARM kernels' counted clocks (docs/arm_clocks.md)";
}

std::uint64_t arm_op_cycles(const ArmCommand& c, const HwConfig& cfg, const std::uint8_t* sram, std::size_t sram_bytes) {
  return cfg.arm_clock_model == "table5.9" ? arm_op_cycles(c, cfg.arm, sram, sram_bytes)
                                           : arm_op_cycles(c, cfg.arm_kernels, sram, sram_bytes);
}

std::uint64_t arm_op_cycles(const ArmCommand& c, const ArmKernelClocks& k, const std::uint8_t* sram, std::size_t sram_bytes) {
  using u64 = std::uint64_t;
  double clocks = 0;
  switch (c.kind) {
    case ArmOpKind::Pad: {
      const u64 h = c.height, top = std::min<u64>(c.pad_top, h), bottom = h - std::min<u64>(c.pad_bottom, h - top);
      const u64 sp = c.source_plane_stride();
      const auto& p = k.pad;
      clocks = p.call + double(c.planes) * (p.plane + double(bottom - top) * (p.side_row + double(c.pad_left) * p.left_byte +
                                                                                double(c.pad_right) * p.right_byte));
      // a whole row's zero_span depends on where the row starts within its word
      auto whole_row = [&](u64 d, u64 y, double row) {
        clocks += row + zero_span_clocks(k.zero_span, c.src + d * sp + y * c.src_row_stride, c.width);
      };
      for (u64 d = 0; d < c.planes; ++d) {
        for (u64 y = 0; y < top; ++y) whole_row(d, y, p.top_row);
        for (u64 y = bottom; y < h; ++y) whole_row(d, y, p.bottom_row);
      }
      break;
    }
    case ArmOpKind::MaxPool8:
    case ArmOpKind::AvgPool8:
    case ArmOpKind::QuantizeMaxPool: {
      const ArmPoolKernelClocks& p = c.kind == ArmOpKind::MaxPool8   ? k.maxpool8
                                     : c.kind == ArmOpKind::AvgPool8 ? k.avgpool8
                                                                     : pool_kernel(arm_kernel_name(c), k);
      const u64 w = u64(c.window), h = u64(c.window_height()), st = u64(c.pool_stride());
      clocks = p.call;
      if (w == 0 || h == 0 || st == 0 || h > c.height || w > c.width) break;
      const double ho = double((c.height - h) / st + 1), wo = double((c.width - w) / st + 1);
      clocks += double(c.planes) *
                (p.plane + ho * (p.output_row + wo * (p.output + double(h) * (p.window_row + double(w) * p.window_pixel))));
      break;
    }
    case ArmOpKind::MacInt8: {
      const u64 values = u64(c.height) * c.depth;
      const u64 spikes = mac_spikes(c, sram, sram_bytes);
      const auto& m = k.mac_int8;
      clocks = m.call + double(c.height) * m.row + double(values - spikes) * m.value_no_spike +
               double(spikes) * (m.value_spike + double(c.planes) * (m.plane + double(c.width) * m.weight));
      break;
    }
    case ArmOpKind::PermuteWords: {
      // every word is moved once (a placed word onto itself too); an entry starts a cycle unless a cycle
      // before placed its word
      u64 starts = c.width;
      if (sram) {
        const auto [moved, cycles] = permute_moves(c, sram, sram_bytes);
        starts = cycles + (c.width - moved);
      }
      const auto& p = k.permute_words;
      clocks = p.call + double(c.planes) * (p.plane + double(c.width) * (p.clear_word + p.moved_word) +
                                            double(starts) * p.entry_cycle_start + double(c.width - starts) * p.entry_placed);
      break;
    }
    case ArmOpKind::Copy8: {
      const auto& p = k.copy8;  // rows of one byte: the column loop
      clocks = p.call + double(c.planes) * (c.width == 1 ? p.column_plane + double(c.height) * p.column_byte
                                                          : p.plane + double(c.height) * (p.row + double(c.width) * p.pixel));
      break;
    }
    default:
      clocks = row_kernel_clocks(row_kernel(arm_kernel_name(c), k), c.planes, c.height, c.width);
  }
  return static_cast<std::uint64_t>(std::ceil(clocks));
}

void arm_run_kernel(const ArmCommand& c, std::uint8_t* sram, std::size_t) {
  s2k_cmd k{};
  k.src = c.src, k.dst = c.dst, k.planes = c.planes, k.height = c.height, k.width = c.width;
  k.src_row_stride = c.src_row_stride, k.dst_row_stride = c.dst_row_stride;
  const bool pooling = c.kind == ArmOpKind::MaxPool8 || c.kind == ArmOpKind::AvgPool8 || c.kind == ArmOpKind::QuantizeMaxPool;
  const std::uint32_t rows =
      pooling && c.pool_stride() > 0 && std::uint32_t(c.window_height()) <= c.height
          ? (c.height - std::uint32_t(c.window_height())) / std::uint32_t(c.pool_stride()) + 1
          : c.height;
  k.src_plane_stride = static_cast<std::uint32_t>(c.source_plane_stride());
  k.dst_plane_stride = static_cast<std::uint32_t>(c.destination_plane_stride(rows));
  k.pad_left = c.pad_left, k.pad_right = c.pad_right, k.pad_top = c.pad_top, k.pad_bottom = c.pad_bottom;
  k.shift = c.shift, k.saturate_high = c.saturate_high;
  k.window = std::uint32_t(c.window), k.window_h = std::uint32_t(c.window_height()), k.stride = std::uint32_t(c.pool_stride());
  k.col_step = c.col_step;
  k.bias_addr = c.bias_addr, k.shift_addr = c.shift_addr;
  k.bias_plane_step = c.bias_plane_step, k.bias_row_step = c.bias_row_step, k.bias_col_step = c.bias_col_step;
  k.a_col_stride = c.a_col_stride, k.depth = c.depth;
  k.weights = c.weights, k.weights_row_stride = c.weights_row_stride, k.weights_plane_stride = c.weights_plane_stride;
  k.table = c.table, k.table_plane_step = c.table_plane_step;
  k.shift_a = c.shift_a, k.shift_b = c.shift_b, k.relu = c.relu ? 1 : 0;
  k.addend = c.addend;
  if (c.kind == ArmOpKind::PermuteWords) {
    std::vector<std::uint8_t> done(c.width);  // the kernel's scratch, on the PE's stack
    return s2k_permute_words(sram, &k, done.data());
  }
  kernel_function(arm_kernel_name(c))(sram, &k);
}

void arm_apply(const ArmCommand& c, std::uint8_t* sram, std::size_t size) {
  const std::size_t sp = c.source_plane_stride();
  switch (c.kind) {
    case ArmOpKind::Pad:
      need(c.src + c.planes * sp, size, c);
      for (std::uint32_t d = 0; d < c.planes; ++d)
        for (std::uint32_t y = 0; y < c.height; ++y) {
          std::uint8_t* row = sram + c.src + d * sp + std::size_t(y) * c.src_row_stride;
          if (y < c.pad_top || y >= c.height - c.pad_bottom) {
            std::memset(row, 0, c.width);
          } else {
            std::memset(row, 0, c.pad_left);
            std::memset(row + c.width - c.pad_right, 0, c.pad_right);
          }
        }
      return;
    case ArmOpKind::Relu32:
      need(c.src + c.planes * sp, size, c);
      need_bias(c, size);
      each_pixel(c, [&](std::size_t d, std::size_t y, std::size_t x) {
        std::uint8_t* p = sram + c.src + d * sp + y * c.src_row_stride + 4 * x * c.col_step;
        const std::int32_t v = c.add_bias ? add32(load32(p), load32(sram + bias_byte(c, d, y, x))) : load32(p);
        store32(p, std::max<std::int32_t>(0, v));
      });
      return;
    case ArmOpKind::Quantize: {
      const std::size_t dp = c.destination_plane_stride(c.height);
      need_planes(c, sp, dp, size);
      need_bias(c, size);
      need_shifts(c, size);
      const std::int32_t high = std::clamp(c.saturate_high, -128, 127), low = c.saturate_low == 0 ? 0 : -128;
      each_pixel(c, [&](std::size_t d, std::size_t y, std::size_t x) {
        std::int32_t v = load32(sram + c.src + d * sp + y * c.src_row_stride + 4 * x * c.col_step);
        if (c.add_bias) v = add32(v, load32(sram + bias_byte(c, d, y, x)));
        const int s = c.per_channel_shift ? std::min<int>(sram[shift_byte(c, d, y, x)], 31) : c.shift;
        sram[c.dst + d * dp + y * c.dst_row_stride + x] =
            static_cast<std::uint8_t>(static_cast<std::int8_t>(std::min<std::int32_t>(std::max<std::int32_t>(v >> s, low), high)));
      });
      return;
    }
    case ArmOpKind::QuantizeAdd: {
      if (c.saturate_low != -128)
        throw std::invalid_argument(std::string("ARM ") + to_string(c.kind) + ": saturate_low " + std::to_string(c.saturate_low) +
                                    " (expected -128: the ReLU goes after the addition, `relu`)");
      const std::size_t dp = c.destination_plane_stride(c.height);
      need_planes(c, sp, dp, size);
      need(c.addend + c.planes * dp, size, c);
      need_bias(c, size);
      need_shifts(c, size);
      const std::int32_t high = std::clamp(c.saturate_high, -128, 127);
      each_pixel(c, [&](std::size_t d, std::size_t y, std::size_t x) {
        std::int32_t v = load32(sram + c.src + d * sp + y * c.src_row_stride + 4 * x * c.col_step);
        if (c.add_bias) v = add32(v, load32(sram + bias_byte(c, d, y, x)));
        const int s = c.per_channel_shift ? std::min<int>(sram[shift_byte(c, d, y, x)], 31) : c.shift;
        const int q = std::min<std::int32_t>(std::clamp<std::int32_t>(v >> s, -128, 127), high);
        const int sum = q + static_cast<std::int8_t>(sram[c.addend + d * dp + y * c.dst_row_stride + x]);
        sram[c.dst + d * dp + y * c.dst_row_stride + x] = static_cast<std::uint8_t>(static_cast<std::int8_t>(std::clamp(sum, c.relu ? 0 : -128, 127)));
      });
      return;
    }
    case ArmOpKind::QuantizeMaxPool: {
      const std::uint32_t w = static_cast<std::uint32_t>(c.window), h = static_cast<std::uint32_t>(c.window_height());
      const std::uint32_t st = static_cast<std::uint32_t>(c.pool_stride());
      if (w == 0 || h == 0 || st == 0 || h > c.height || w > c.width)
        throw std::out_of_range(std::string("ARM ") + to_string(c.kind) + ": window " + std::to_string(w) + "x" + std::to_string(h) +
                                " does not fit the " + std::to_string(c.width) + "x" + std::to_string(c.height) + " plane");
      if ((c.add_bias || c.per_channel_shift) && (c.bias_row_step != 0 || c.bias_col_step != 0))
        throw std::invalid_argument(std::string("ARM ") + to_string(c.kind) + ": the bias and shift are one per plane (bias_row_step " +
                                    std::to_string(c.bias_row_step) + ", bias_col_step " + std::to_string(c.bias_col_step) + "; expected 0)");
      const std::uint32_t ho = (c.height - h) / st + 1, wo = (c.width - w) / st + 1;
      const std::size_t dp = c.destination_plane_stride(ho);
      need(c.src + c.planes * sp, size, c);
      need(c.dst + c.planes * dp, size, c);
      need_bias(c, size);
      need_shifts(c, size);
      const std::int32_t high = std::clamp(c.saturate_high, -128, 127), low = c.saturate_low == 0 ? 0 : -128;
      for (std::uint32_t d = 0; d < c.planes; ++d) {
        const std::int32_t bias = c.add_bias ? load32(sram + bias_byte(c, d, 0, 0)) : 0;
        const int s = c.per_channel_shift ? std::min<int>(sram[shift_byte(c, d, 0, 0)], 31) : c.shift;
        for (std::uint32_t y = 0; y < ho; ++y)
          for (std::uint32_t x = 0; x < wo; ++x) {
            std::int32_t m = std::numeric_limits<std::int32_t>::min();
            for (std::uint32_t ky = 0; ky < h; ++ky)
              for (std::uint32_t kx = 0; kx < w; ++kx) {
                const std::size_t at = c.src + d * sp + std::size_t(y * st + ky) * c.src_row_stride + 4 * std::size_t(x * st + kx) * c.col_step;
                m = std::max(m, add32(load32(sram + at), bias));
              }
            // in place is safe, as Quantize's: output (y, x) lands at or before the first sum it read
            sram[c.dst + d * dp + std::size_t(y) * c.dst_row_stride + x] =
                static_cast<std::uint8_t>(static_cast<std::int8_t>(std::min<std::int32_t>(std::max<std::int32_t>(m >> s, low), high)));
          }
      }
      return;
    }
    case ArmOpKind::MaxPool8:
    case ArmOpKind::AvgPool8: {
      const std::uint32_t w = static_cast<std::uint32_t>(c.window), h = static_cast<std::uint32_t>(c.window_height());
      const std::uint32_t st = static_cast<std::uint32_t>(c.pool_stride());
      if (w == 0 || h == 0 || h > c.height || w > c.width)
        throw std::out_of_range(std::string("ARM ") + to_string(c.kind) + ": window " + std::to_string(w) + "x" + std::to_string(h) +
                                " does not fit the " + std::to_string(c.width) + "x" + std::to_string(c.height) + " plane");
      const std::uint32_t ho = (c.height - h) / st + 1, wo = (c.width - w) / st + 1;
      const std::size_t dp = c.destination_plane_stride(ho);
      need_planes(c, sp, dp, size);
      const bool max = c.kind == ArmOpKind::MaxPool8;
      const int n = static_cast<int>(w * h);
      for (std::uint32_t d = 0; d < c.planes; ++d)
        for (std::uint32_t y = 0; y < ho; ++y)
          for (std::uint32_t x = 0; x < wo; ++x) {
            int m = -128, sum = 0;
            for (std::uint32_t ky = 0; ky < h; ++ky)
              for (std::uint32_t kx = 0; kx < w; ++kx) {
                const int v = static_cast<std::int8_t>(
                    sram[c.src + d * sp + std::size_t(y * st + ky) * c.src_row_stride + x * st + kx]);
                m = std::max(m, v);
                sum += v;
              }
            // in place is safe: output (y, x) lands at or before the first input it read
            sram[c.dst + d * dp + std::size_t(y) * c.dst_row_stride + x] =
                static_cast<std::uint8_t>(static_cast<std::int8_t>(max ? m : sum / n));
          }
      return;
    }
    case ArmOpKind::AddInt32: {
      const std::size_t dp = c.destination_plane_stride(c.height);
      need_planes(c, sp, dp, size);
      each_pixel(c, [&](std::size_t d, std::size_t y, std::size_t x) {
        std::uint8_t* q = sram + c.dst + d * dp + y * c.dst_row_stride + 4 * x * c.col_step;
        const std::int32_t a = load32(sram + c.src + d * sp + y * c.src_row_stride + 4 * x * c.col_step);
        store32(q, static_cast<std::int32_t>(static_cast<std::uint32_t>(load32(q)) + static_cast<std::uint32_t>(a)));
      });
      return;
    }
    case ArmOpKind::AddInt8: {
      const std::size_t dp = c.destination_plane_stride(c.height);
      need_planes(c, sp, dp, size);
      each_pixel(c, [&](std::size_t d, std::size_t y, std::size_t x) {
        std::uint8_t& q = sram[c.dst + d * dp + y * c.dst_row_stride + x];
        const int v = static_cast<std::int8_t>(q) + static_cast<std::int8_t>(sram[c.src + d * sp + y * c.src_row_stride + x]);
        q = static_cast<std::uint8_t>(static_cast<std::int8_t>(std::clamp(v, c.relu ? 0 : -128, 127)));
      });
      return;
    }
    case ArmOpKind::Relu8:
      need(c.src + c.planes * sp, size, c);
      each_pixel(c, [&](std::size_t d, std::size_t y, std::size_t x) {
        std::uint8_t& p = sram[c.src + d * sp + y * c.src_row_stride + x];
        if (p & 0x80) p = 0;
      });
      return;
    case ArmOpKind::MacInt8: {
      need_extents(c, size);
      const std::size_t dp = c.destination_plane_stride(c.height);
      for (std::size_t r = 0; r < c.height; ++r)
        for (std::size_t q = 0; q < c.depth; ++q) {
          const std::int32_t a = mac_operand(c, sram, r, q);
          if (a == 0) continue;
          for (std::size_t p = 0; p < c.planes; ++p) {
            const std::uint8_t* w = sram + c.weights + p * c.weights_plane_stride + q * c.weights_row_stride;
            std::uint8_t* d = sram + c.dst + p * dp + r * c.dst_row_stride;
            for (std::size_t x = 0; x < c.width; ++x)
              store32(d + 4 * x, add32(load32(d + 4 * x), a * static_cast<std::int8_t>(w[x])));
          }
        }
      return;
    }
    case ArmOpKind::PermuteWords: {
      permute_moves(c, sram, size);  // within the SRAM and a permutation, or nothing moves
      const std::size_t words = c.width;
      std::vector<bool> done(words, false);
      for (std::size_t p = 0; p < c.planes; ++p) {
        std::uint8_t* base = sram + c.src + p * sp;
        std::fill(done.begin(), done.end(), false);
        for (std::size_t s = 0; s < words; ++s) {
          if (done[s]) continue;
          // one cycle: hold the start's word, move each word on to its target
          std::int32_t held = load32(base + 4 * s);
          std::size_t i = s;
          while (!done[i]) {
            done[i] = true;
            const std::size_t t = permute_target(c, sram, i);
            const std::int32_t next = load32(base + 4 * t);
            store32(base + 4 * t, held);
            held = next;
            i = t;
          }
        }
      }
      return;
    }
    case ArmOpKind::Table8:
      need_extents(c, size);
      each_pixel(c, [&](std::size_t d, std::size_t y, std::size_t x) {
        std::uint8_t& p = sram[c.src + d * sp + y * c.src_row_stride + x];
        p = sram[c.table + d * c.table_plane_step + std::size_t(static_cast<std::int8_t>(p) + 128)];
      });
      return;
    case ArmOpKind::Affine8:
      need_extents(c, size);
      each_pixel(c, [&](std::size_t d, std::size_t y, std::size_t x) {
        std::uint8_t& p = sram[c.src + d * sp + y * c.src_row_stride + x];
        const std::int32_t m = load32(sram + c.table + 8 * d), o = load32(sram + c.table + 8 * d + 4);
        const std::int32_t v = add32(static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::int8_t>(p)) * static_cast<std::uint32_t>(m)), o);
        p = saturate8(v >> c.shift, c.relu);
      });
      return;
    case ArmOpKind::ChannelMul8:
      need_extents(c, size);
      each_pixel(c, [&](std::size_t d, std::size_t y, std::size_t x) {
        std::uint8_t& p = sram[c.src + d * sp + y * c.src_row_stride + x];
        const std::int32_t v = static_cast<std::int8_t>(p) * static_cast<std::int8_t>(sram[c.table + d]);
        p = saturate8((v + rounding(c.shift)) >> c.shift, false);
      });
      return;
    case ArmOpKind::AddScaled8:
    case ArmOpKind::Mul8: {
      const std::size_t dp = c.destination_plane_stride(c.height);
      need_extents(c, size);
      each_pixel(c, [&](std::size_t d, std::size_t y, std::size_t x) {
        std::uint8_t& q = sram[c.dst + d * dp + y * c.dst_row_stride + x];
        const std::int32_t a = static_cast<std::int8_t>(q), b = static_cast<std::int8_t>(sram[c.src + d * sp + y * c.src_row_stride + x]);
        const std::int32_t v = c.kind == ArmOpKind::Mul8 ? a * b : a * (1 << c.shift_a) + b * (1 << c.shift_b);
        q = saturate8((v + rounding(c.shift)) >> c.shift, c.relu);
      });
      return;
    }
    case ArmOpKind::Copy8: {
      const std::size_t dp = c.destination_plane_stride(c.height);
      need_extents(c, size);
      for (std::size_t p = 0; p < c.planes; ++p)
        for (std::size_t y = 0; y < c.height; ++y)
          std::memmove(sram + c.dst + p * dp + y * c.dst_row_stride, sram + c.src + p * sp + y * c.src_row_stride, c.width);
      return;
    }
  }
}

}  // namespace s2
