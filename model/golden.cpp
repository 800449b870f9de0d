#include "model/golden.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/golden_vector.h"
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

std::vector<std::int32_t> golden_conv_scalar(const ConvShape& s, const std::vector<std::int8_t>& w,
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

std::vector<std::int32_t> golden_mm_scalar(const MmShape& s, const std::vector<std::int8_t>& a,
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

namespace {

const golden_vector::PairDotIsa* vector_isa(GoldenKernel k) {
  const std::vector<GoldenKernel>& runs = golden_kernels();
  if (std::find(runs.begin(), runs.end(), k) == runs.end())
    throw std::invalid_argument(std::string("golden kernel ") + golden_kernel_name(k) + " does not run on this CPU");
#if defined(__x86_64__) || defined(__i386__)
  if (k == GoldenKernel::Avx2) return &golden_vector::kAvx2;
  if (k == GoldenKernel::Avx512Vnni) return &golden_vector::kAvx512Vnni;
#endif
  return nullptr;
}

std::uint32_t int16_pair(std::int8_t low, std::int8_t high) {
  return static_cast<std::uint16_t>(std::int16_t(low)) | (std::uint32_t(static_cast<std::uint16_t>(std::int16_t(high))) << 16);
}

// golden_conv_scalar's arithmetic on the vector path (model/golden_vector.h) for shapes with at least one output.
std::vector<std::int32_t> golden_conv_pairs(const golden_vector::PairDotIsa& isa, const ConvShape& s,
                                            const std::vector<std::int8_t>& w, const std::vector<std::int8_t>& in,
                                            int bits) {
  const int st = std::max(1, s.stride);
  const int Wo = (s.Wi - s.Wf) / st + 1, Ho = (s.Hi - s.Hf) / st + 1;
  // output channels at once: one for a vector times a matrix, else 4 or 8 (a last group's missing ones are zeros);
  // then as many vectors of columns as the row needs and the registers hold
  const int rows = s.C == 1 ? 1 : s.C <= 4 ? 4 : 8;
  const int vectors_wanted = std::min((Wo + isa.lanes - 1) / isa.lanes, isa.accumulators / rows);
  const int vectors = vectors_wanted >= 4 ? 4 : vectors_wanted >= 2 ? 2 : 1;
  const int block = isa.lanes * vectors;
  const int width = (Wo + block - 1) / block * block;
  // The input as channel pairs [D/2][Hi][stride phase][column / stride]: a row split into the columns q, q + stride,
  // q + 2 stride, ... of each phase q, so that neighbouring outputs read neighbouring words at any stride; zeros
  // past a row's end (as far as the last block reads) and in the missing channel of an odd depth.
  const int d_pairs = (s.D + 1) / 2;
  const std::size_t phase_words = std::max<std::size_t>((s.Wi + st - 1) / st, std::size_t(width) + (s.Wf - 1) / st);
  const std::size_t row_words = std::size_t(st) * phase_words, plane_words = std::size_t(s.Hi) * row_words;
  // (the buffers stay from call to call: fresh megabytes cost more in page faults than the packing itself)
  thread_local std::vector<std::uint32_t> pairs, weights;
  pairs.resize(std::size_t(d_pairs) * plane_words);  // every word written below
  static const std::int8_t zeros[1] = {0};
  for (int p = 0; p < d_pairs; ++p)
    for (int y = 0; y < s.Hi; ++y) {
      const std::int8_t* low = &in[(std::size_t(2 * p) * s.Hi + y) * s.Wi];
      const bool odd = 2 * p + 1 == s.D;
      const std::int8_t* high = odd ? zeros : &in[(std::size_t(2 * p + 1) * s.Hi + y) * s.Wi];
      const std::size_t step = odd ? 0 : 1;
      std::uint32_t* row = &pairs[std::size_t(p) * plane_words + std::size_t(y) * row_words];
      for (int q = 0; q < st; ++q) {
        std::uint32_t* phase = row + std::size_t(q) * phase_words;
        std::size_t i = 0;
        if (st == 1)  // (the common case, in a form the compiler vectorises)
          for (; i < std::size_t(s.Wi); ++i) phase[i] = int16_pair(low[i], high[i * step]);
        else
          for (std::size_t x = std::size_t(q); x < std::size_t(s.Wi); x += std::size_t(st), ++i)
            phase[i] = int16_pair(low[x], high[x * step]);
        std::fill(phase + i, phase + phase_words, 0u);
      }
    }
  // step (channel pair, ky, kx) of output row y reads input row y * stride + ky from column kx on
  const std::size_t taps = std::size_t(s.Hf) * s.Wf, steps = std::size_t(d_pairs) * taps;
  std::vector<std::size_t> offsets(steps);
  for (int p = 0; p < d_pairs; ++p)
    for (int ky = 0; ky < s.Hf; ++ky)
      for (int kx = 0; kx < s.Wf; ++kx)
        offsets[(std::size_t(p) * s.Hf + ky) * s.Wf + kx] =
            std::size_t(p) * plane_words + std::size_t(ky) * row_words + std::size_t(kx % st) * phase_words + kx / st;
  // weight pairs [C / rows][step][rows]
  const int groups = (s.C + rows - 1) / rows;
  weights.assign(std::size_t(groups) * steps * rows, 0);
  for (int c = 0; c < s.C; ++c)
    for (int p = 0; p < d_pairs; ++p)
      for (std::size_t tap = 0; tap < taps; ++tap) {
        const std::int8_t low = w[(std::size_t(c) * s.D + 2 * p) * taps + tap];
        const std::int8_t high = 2 * p + 1 < s.D ? w[(std::size_t(c) * s.D + 2 * p + 1) * taps + tap] : std::int8_t(0);
        weights[((std::size_t(c / rows) * steps) + std::size_t(p) * taps + tap) * rows + c % rows] = int16_pair(low, high);
      }
  std::vector<std::uint32_t> sums(std::size_t(rows) * width);
  golden_vector::PairDotJob job;
  job.rows = rows;
  job.vectors = vectors;
  job.width = width;
  job.sums = sums.data();
  job.sums_stride = std::size_t(width);
  std::vector<std::int32_t> out(std::size_t(s.C) * Ho * Wo);
  // the steps in chunks, so that a long row's blocks of columns share the chunk's input rows in the caches
  constexpr std::size_t kStepsPerChunk = 256;
  for (int g = 0; g < groups; ++g)
    for (int y = 0; y < Ho; ++y) {
      job.input = pairs.data() + std::size_t(y) * st * row_words;
      for (std::size_t s0 = 0; s0 < steps; s0 += kStepsPerChunk) {
        job.offsets = offsets.data() + s0;
        job.weights = weights.data() + (std::size_t(g) * steps + s0) * rows;
        job.steps = std::min(kStepsPerChunk, steps - s0);
        job.accumulate = s0 > 0;
        isa.run(job);
      }
      for (int r = 0; r < rows && g * rows + r < s.C; ++r)
        for (int x = 0; x < Wo; ++x)
          out[(std::size_t(g * rows + r) * Ho + y) * Wo + x] = wrap_accumulator(sums[std::size_t(r) * width + x], bits);
    }
  return out;
}

}  // namespace

const char* golden_kernel_name(GoldenKernel k) {
  switch (k) {
    case GoldenKernel::Scalar: return "scalar";
    case GoldenKernel::Avx2: return "avx2";
    case GoldenKernel::Avx512Vnni: return "avx512vnni";
  }
  return "?";
}

const std::vector<GoldenKernel>& golden_kernels() {
  static const std::vector<GoldenKernel> kernels = [] {
    std::vector<GoldenKernel> k{GoldenKernel::Scalar};
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_cpu_supports("avx2")) k.push_back(GoldenKernel::Avx2);
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni"))
      k.push_back(GoldenKernel::Avx512Vnni);
#endif
    return k;
  }();
  return kernels;
}

std::vector<std::int32_t> golden_conv(const ConvShape& s, const std::vector<std::int8_t>& filters,
                                      const std::vector<std::int8_t>& ifmap, int bits, GoldenKernel kernel) {
  const golden_vector::PairDotIsa* isa = vector_isa(kernel);
  // shapes without a whole output (or without work) keep the reference's behaviour, whatever it is
  if (!isa || s.Wi < s.Wf || s.Hi < s.Hf || s.Wf < 1 || s.Hf < 1 || s.D < 1 || s.C < 1)
    return golden_conv_scalar(s, filters, ifmap, bits);
  return golden_conv_pairs(*isa, s, filters, ifmap, bits);
}

std::vector<std::int32_t> golden_conv(const ConvShape& s, const std::vector<std::int8_t>& filters,
                                      const std::vector<std::int8_t>& ifmap, int bits) {
  // each input value meets about C * Hf * Wf / stride^2 weights
  const int st = std::max(1, s.stride);
  const bool reused = std::int64_t(s.C) * s.Hf * s.Wf >= std::int64_t(kVectorMinUses) * st * st;
  return golden_conv(s, filters, ifmap, bits, reused ? golden_kernels().back() : GoldenKernel::Scalar);
}

std::vector<std::int32_t> golden_mm(const MmShape& s, const std::vector<std::int8_t>& a,
                                    const std::vector<std::int8_t>& b, int bits) {
  return golden_mm(s, a, b, bits, s.H_A >= kVectorMinUses ? golden_kernels().back() : GoldenKernel::Scalar);
}

std::vector<std::int32_t> golden_mm(const MmShape& s, const std::vector<std::int8_t>& a,
                                    const std::vector<std::int8_t>& b, int bits, GoldenKernel kernel) {
  if (kernel == GoldenKernel::Scalar) return golden_mm_scalar(s, a, b, bits);
  // A [H_A][W_A] times B [W_A][W_B] is the convolution of a one-row ifmap [W_A][1][W_B] with H_A filters [W_A][1][1]
  return golden_conv(ConvShape{s.W_B, 1, s.W_A, 1, 1, s.H_A, 1}, a, b, bits, kernel);
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
