#include "model/golden.h"

#include <algorithm>
#include <stdexcept>

#include "model/splitmix64.h"

namespace s2 {

namespace {

std::vector<std::int8_t> draw(std::size_t n, std::uint64_t seed, int pe, int operand, DataPattern p) {
  std::vector<std::int8_t> v(n);
  if (p != DataPattern::Random) {
    std::int8_t fill = 127;
    if (p == DataPattern::AllMin || (p == DataPattern::MinMax && operand == 0)) fill = -128;
    std::fill(v.begin(), v.end(), fill);
    return v;
  }
  SplitMix64 rng{seed * 0x100000001b3ull + std::uint64_t(pe) * 0x9e37u + std::uint64_t(operand) * 0x85ebu};
  std::size_t i = 0;
  while (i < n) {
    std::uint64_t r = rng.next();
    for (int k = 0; k < 8 && i < n; ++k, ++i) v[i] = static_cast<std::int8_t>(r >> (8 * k));
  }
  return v;
}
}  // namespace

PeOperands make_operands(const Task& t, int pe) {
  PeOperands ops;
  if (t.op == Op::Conv) {
    const ConvShape& s = t.conv;
    ops.a = draw(std::size_t(s.C) * s.D * s.Hf * s.Wf, t.seed, pe, 0, t.data);
    ops.b = draw(std::size_t(s.D) * s.Hi * s.Wi, t.seed, pe, 1, t.data);
  } else {
    const MmShape& s = t.mm;
    ops.a = draw(std::size_t(s.H_A) * s.W_A, t.seed, pe, 0, t.data);
    ops.b = draw(std::size_t(s.H_B) * s.W_B, t.seed, pe, 1, t.data);
  }
  return ops;
}

std::int32_t wrap_accumulator(std::uint32_t sum, int bits) {
  const std::uint32_t mask = bits >= 32 ? 0xffffffffu : ((1u << bits) - 1u);
  std::uint32_t v = sum & mask;
  if (bits < 32 && (v >> (bits - 1)) & 1u) v |= ~mask;
  return static_cast<std::int32_t>(v);
}

std::vector<std::int32_t> golden_conv(const ConvShape& s, const std::vector<std::int8_t>& w,
                                      const std::vector<std::int8_t>& in, int bits) {
  const int st = std::max(1, s.stride);
  const int Wo = (s.Wi - s.Wf) / st + 1, Ho = (s.Hi - s.Hf) / st + 1;
  std::vector<std::int32_t> out(std::size_t(s.C) * Ho * Wo);
  std::vector<std::uint32_t> acc(Wo);
  for (int c = 0; c < s.C; ++c) {
    for (int y = 0; y < Ho; ++y) {
      std::fill(acc.begin(), acc.end(), 0u);
      for (int d = 0; d < s.D; ++d) {
        for (int ky = 0; ky < s.Hf; ++ky) {
          const std::int8_t* row = &in[(std::size_t(d) * s.Hi + std::size_t(y) * st + ky) * s.Wi];
          for (int kx = 0; kx < s.Wf; ++kx) {
            // unsigned arithmetic: wraps modulo 2^32 like the hardware's adders (no signed overflow)
            const std::uint32_t wv =
                static_cast<std::uint32_t>(std::int32_t(w[((std::size_t(c) * s.D + d) * s.Hf + ky) * s.Wf + kx]));
            const std::int8_t* px = row + kx;
            if (st == 1)  // (the common case, in a form the compiler vectorises)
              for (int x = 0; x < Wo; ++x) acc[x] += wv * static_cast<std::uint32_t>(std::int32_t(px[x]));
            else
              for (int x = 0; x < Wo; ++x) acc[x] += wv * static_cast<std::uint32_t>(std::int32_t(px[std::size_t(x) * st]));
          }
        }
      }
      for (int x = 0; x < Wo; ++x) out[(std::size_t(c) * Ho + y) * Wo + x] = wrap_accumulator(acc[x], bits);
    }
  }
  return out;
}

std::vector<std::int32_t> golden_mm(const MmShape& s, const std::vector<std::int8_t>& a,
                                    const std::vector<std::int8_t>& b, int bits) {
  std::vector<std::int32_t> out(std::size_t(s.H_A) * s.W_B);
  std::vector<std::uint32_t> acc(s.W_B);
  for (int i = 0; i < s.H_A; ++i) {
    std::fill(acc.begin(), acc.end(), 0u);
    for (int k = 0; k < s.W_A; ++k) {
      const std::uint32_t av = static_cast<std::uint32_t>(std::int32_t(a[std::size_t(i) * s.W_A + k]));
      const std::int8_t* brow = &b[std::size_t(k) * s.W_B];
      for (int j = 0; j < s.W_B; ++j) acc[j] += av * static_cast<std::uint32_t>(std::int32_t(brow[j]));
    }
    for (int j = 0; j < s.W_B; ++j) out[std::size_t(i) * s.W_B + j] = wrap_accumulator(acc[j], bits);
  }
  return out;
}

std::vector<std::int32_t> golden_results(const Task& t, int pe, const std::vector<PeOperands>& ops,
                                         const HwConfig& cfg) {
  const PeOperands& own = ops.at(pe);
  const PeOperands& src = ops.at(t.a_source_pe(pe));
  if (t.op == Op::Conv) return golden_conv(t.conv, src.a, own.b, cfg.accumulator_bits);
  return golden_mm(t.mm, src.a, own.b, cfg.accumulator_bits);
}

std::vector<std::uint8_t> pack_sram_image(const Task& t, const HwConfig& cfg, const SramLayout& l,
                                          const PeOperands& ops) {
  std::vector<std::uint8_t> img(l.total_bytes(), 0);
  const int rows = cfg.mac_rows;
  if (t.op == Op::Conv) {
    const ConvShape& s = t.conv;
    for (int d = 0; d < s.D; ++d)
      for (int y = 0; y < s.Hi; ++y)
        for (int x = 0; x < s.Wi; ++x)
          img[l.b_base + std::size_t(d) * l.b_plane_stride + std::size_t(y) * l.b_row_stride + x] =
              static_cast<std::uint8_t>(ops.b[(std::size_t(d) * s.Hi + y) * s.Wi + x]);
    for (int c = 0; c < s.C; ++c)
      for (int d = 0; d < s.D; ++d)
        for (int ky = 0; ky < s.Hf; ++ky)
          for (int kx = 0; kx < s.Wf; ++kx)
            img[l.a_base + std::size_t(c / rows) * l.a_group_stride +
                ((std::size_t(d) * s.Hf + ky) * s.Wf + kx) * rows + c % rows] =
                static_cast<std::uint8_t>(ops.a[((std::size_t(c) * s.D + d) * s.Hf + ky) * s.Wf + kx]);
  } else {
    const MmShape& s = t.mm;
    for (int k = 0; k < s.H_B; ++k)
      for (int j = 0; j < s.W_B; ++j)
        img[l.b_base + std::size_t(k) * l.b_row_stride + j] = static_cast<std::uint8_t>(ops.b[std::size_t(k) * s.W_B + j]);
    for (int i = 0; i < s.H_A; ++i)
      for (int k = 0; k < s.W_A; ++k)
        img[l.a_base + std::size_t(i / rows) * l.a_group_stride + std::size_t(k) * rows + i % rows] =
            static_cast<std::uint8_t>(ops.a[std::size_t(i) * s.W_A + k]);
  }
  return img;
}

std::size_t result_count(const Task& t) {
  if (t.op == Op::Conv) return std::size_t(t.conv.C) * t.conv.Ho() * t.conv.Wo();
  return std::size_t(t.mm.H_A) * t.mm.W_B;
}

ResultPos result_position(const Task& t, std::size_t index) {
  const int width = t.op == Op::Conv ? t.conv.Wo() : t.mm.W_B;
  return {static_cast<int>(index / width), static_cast<int>(index % width)};
}

std::uint64_t result_tile(const Task& t, const HwConfig& cfg, std::size_t index) {
  const ResultPos p = result_position(t, index);
  if (t.op == Op::Conv) {
    const int Ho = t.conv.Ho();
    const std::uint64_t n_xt = (t.conv.Wo() + cfg.mac_cols - 1) / cfg.mac_cols;
    const int c = p.row / Ho, y = p.row % Ho;
    return (std::uint64_t(c / cfg.mac_rows) * Ho + y) * n_xt + p.column / cfg.mac_cols;
  }
  const std::uint64_t n_xt = (t.mm.W_B + cfg.mac_cols - 1) / cfg.mac_cols;
  return std::uint64_t(p.row / cfg.mac_rows) * n_xt + p.column / cfg.mac_cols;
}

std::vector<std::int32_t> unpack_results(const Task& t, const HwConfig& cfg, const SramLayout& l,
                                         const std::uint8_t* sram, std::size_t sram_size) {
  (void)cfg;
  if (l.total_bytes() > sram_size) throw std::runtime_error("unpack_results: SRAM image smaller than the layout");
  std::vector<std::int32_t> out(result_count(t));
  auto word = [&](std::size_t byte) {
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= std::uint32_t(sram[byte + k]) << (8 * k);
    return static_cast<std::int32_t>(v);
  };
  if (t.op == Op::Conv) {
    const int Wo = t.conv.Wo(), Ho = t.conv.Ho();
    for (int c = 0; c < t.conv.C; ++c)
      for (int y = 0; y < Ho; ++y)
        for (int x = 0; x < Wo; ++x)
          out[(std::size_t(c) * Ho + y) * Wo + x] =
              word(l.o_base + ((std::size_t(c) * Ho + y) * l.o_row_stride + x) * 4);
  } else {
    for (int i = 0; i < t.mm.H_A; ++i)
      for (int j = 0; j < t.mm.W_B; ++j)
        out[std::size_t(i) * t.mm.W_B + j] = word(l.o_base + (std::size_t(i) * l.o_row_stride + j) * 4);
  }
  return out;
}

}  // namespace s2
