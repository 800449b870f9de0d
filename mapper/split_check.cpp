#include "split_check.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "model/golden.h"
#include "model/splitmix64.h"

namespace s2::mapper {

namespace {

std::vector<std::int8_t> random_int8(std::size_t n, std::uint64_t seed) {
  SplitMix64 g{seed};
  std::vector<std::int8_t> v(n);
  for (auto& x : v) x = static_cast<std::int8_t>(g.next() >> 56);
  return v;
}

// A convolution of `in` ([D][H][W], already padded) at `stride`: the MLA's stride-1 result, every
// stride-th kept (thesis 5.2.2). Result [C][Ho][Wo].
std::vector<std::int32_t> strided_conv(const std::vector<std::int8_t>& in, int W, int H, int D,
                                       const std::vector<std::int8_t>& filters, int Wf, int Hf, int C, int stride,
                                       int bits, int& Wo, int& Ho) {
  ConvShape s;
  s.Wi = W;
  s.Hi = H;
  s.D = D;
  s.Wf = Wf;
  s.Hf = Hf;
  s.C = C;
  const std::vector<std::int32_t> full = golden_conv(s, filters, in, bits);
  const int w1 = s.Wo(), h1 = s.Ho();
  Wo = (w1 - 1) / stride + 1;
  Ho = (h1 - 1) / stride + 1;
  std::vector<std::int32_t> out(std::size_t(C) * Ho * Wo);
  for (int c = 0; c < C; ++c)
    for (int y = 0; y < Ho; ++y)
      for (int x = 0; x < Wo; ++x)
        out[(std::size_t(c) * Ho + y) * Wo + x] = full[(std::size_t(c) * h1 + y * stride) * w1 + x * stride];
  return out;
}

std::int32_t pool_window(const std::vector<std::int8_t>& in, int W, int H, int d, int x0, int y0, int Wf, int Hf,
                         PoolType type) {
  int best = std::numeric_limits<int>::min(), sum = 0;
  for (int y = y0; y < y0 + Hf; ++y)
    for (int x = x0; x < x0 + Wf; ++x) {
      const int v = in[(std::size_t(d) * H + y) * W + x];
      best = std::max(best, v);
      sum += v;
    }
  return type == PoolType::Max ? best : sum / (Wf * Hf);  // average truncated toward zero
}

SplitCheck compare(const std::vector<std::int32_t>& whole, const std::vector<std::int32_t>& pieces, std::uint64_t n,
                   const std::string& what) {
  SplitCheck r;
  r.pieces = n;
  r.results = whole.size();
  r.exact = true;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    if (whole[i] != pieces[i]) {
      r.exact = false;
      r.first_difference = fmt::format("{} result {}: whole {}, from pieces {}", what, i, whole[i], pieces[i]);
      break;
    }
  }
  return r;
}

// A grouped convolution's filters [C][D/G][Hf][Wf] as one convolution's over all D channels, zero outside each
// filter's group: the whole layer to check the pieces against (without groups, the filters as they are).
std::vector<std::int8_t> block_diagonal(const Operation& conv, std::vector<std::int8_t> f) {
  if (conv.groups == 1) return f;
  const std::size_t D = std::size_t(conv.in.D), Dg = std::size_t(conv.weight_depth()), k = std::size_t(conv.Hf) * conv.Wf;
  const std::size_t Cg = std::size_t(conv.out.D / conv.groups);
  std::vector<std::int8_t> full(std::size_t(conv.out.D) * D * k, 0);
  for (std::size_t c = 0; c < std::size_t(conv.out.D); ++c)
    std::copy_n(f.begin() + std::ptrdiff_t(c * Dg * k), Dg * k, full.begin() + std::ptrdiff_t((c * D + c / Cg * Dg) * k));
  return full;
}

}  // namespace

SplitCheck check_split(const OperationBlock& b, const BlockSplit& s, std::uint64_t seed, int bits) {
  const Operation& op = b.core_op();
  if (b.kind == BlockKind::Convolution) {
    const int W = op.in.W, H = op.in.H, D = op.in.D, C = op.out.D;
    const auto in = random_int8(std::size_t(W) * H * D, seed);
    const auto filters = block_diagonal(op, random_int8(std::size_t(C) * op.weight_depth() * op.Hf * op.Wf, seed + 1));
    int Wo = 0, Ho = 0;
    const auto whole = strided_conv(in, W, H, D, filters, op.Wf, op.Hf, C, op.stride, bits, Wo, Ho);
    std::vector<std::uint32_t> sum(whole.size(), 0);
    std::uint64_t n = 0;
    for (int iw = 0; iw < s.w.count(); ++iw)
      for (int ih = 0; ih < s.h.count(); ++ih)
        for (int ic = 0; ic < s.c.count(); ++ic)
          for (int id = 0; id < s.d.count(); ++id) {
            const ConvPiece p = conv_piece(b, s, iw, ih, ic, id);
            const ConvShape& t = p.task;
            std::vector<std::int8_t> pin(std::size_t(t.Wi) * t.Hi * t.D), pf(std::size_t(t.C) * t.D * t.Hf * t.Wf);
            for (int d = 0; d < t.D; ++d)
              for (int y = 0; y < t.Hi; ++y)
                for (int x = 0; x < t.Wi; ++x)
                  pin[(std::size_t(d) * t.Hi + y) * t.Wi + x] = in[(std::size_t(p.d0 + d) * H + p.y0 + y) * W + p.x0 + x];
            for (int c = 0; c < t.C; ++c)
              for (int d = 0; d < t.D; ++d)
                for (int k = 0; k < t.Hf * t.Wf; ++k)
                  pf[(std::size_t(c) * t.D + d) * t.Hf * t.Wf + k] = filters[(std::size_t(p.c0 + c) * D + p.d0 + d) * op.Hf * op.Wf + k];
            int pw = 0, ph = 0;
            const auto r = strided_conv(pin, t.Wi, t.Hi, t.D, pf, t.Wf, t.Hf, t.C, op.stride, bits, pw, ph);
            for (int c = 0; c < t.C; ++c)
              for (int y = 0; y < p.out_h; ++y)
                for (int x = 0; x < p.out_w; ++x)
                  sum[(std::size_t(p.c0 + c) * Ho + p.out_y0 + y) * Wo + p.out_x0 + x] +=
                      static_cast<std::uint32_t>(r[(std::size_t(c) * ph + y) * pw + x]);
            ++n;
          }
    std::vector<std::int32_t> joined(sum.size());
    for (std::size_t i = 0; i < sum.size(); ++i) joined[i] = wrap_accumulator(sum[i], bits);
    return compare(whole, joined, n, b.name());
  }
  if (b.kind == BlockKind::MatMul) {
    const int WA = op.in.W, WB = op.out.W;  // A [1][W_A], B [H_B = W_A][W_B]
    const auto a = random_int8(std::size_t(WA), seed);
    const auto bm = random_int8(std::size_t(WA) * WB, seed + 1);
    const auto whole = golden_mm(MmShape{WA, 1, WB, WA}, a, bm, bits);
    std::vector<std::uint32_t> sum(whole.size(), 0);
    std::uint64_t n = 0;
    for (int iw = 0; iw < s.w.count(); ++iw)
      for (int ih = 0; ih < s.h.count(); ++ih) {
        const MmPiece p = mm_piece(b, s, iw, ih);
        const MmShape& t = p.task;
        std::vector<std::int8_t> pa(a.begin() + p.row0, a.begin() + p.row0 + t.W_A), pb(std::size_t(t.H_B) * t.W_B);
        for (int k = 0; k < t.H_B; ++k)
          for (int j = 0; j < t.W_B; ++j) pb[std::size_t(k) * t.W_B + j] = bm[std::size_t(p.row0 + k) * WB + p.col0 + j];
        const auto r = golden_mm(t, pa, pb, bits);
        for (int j = 0; j < t.W_B; ++j) sum[p.col0 + j] += static_cast<std::uint32_t>(r[j]);
        ++n;
      }
    std::vector<std::int32_t> joined(sum.size());
    for (std::size_t i = 0; i < sum.size(); ++i) joined[i] = wrap_accumulator(sum[i], bits);
    return compare(whole, joined, n, b.name());
  }
  // pooling: each piece pools its own input window; the pieces' outputs must tile the whole output
  const int W = op.in.W, H = op.in.H, D = op.in.D, Wo = op.out.W, Ho = op.out.H;
  const auto in = random_int8(std::size_t(W) * H * D, seed);
  std::vector<std::int32_t> whole(std::size_t(D) * Ho * Wo), joined(whole.size(), std::numeric_limits<std::int32_t>::min());
  for (int d = 0; d < D; ++d)
    for (int y = 0; y < Ho; ++y)
      for (int x = 0; x < Wo; ++x)
        whole[(std::size_t(d) * Ho + y) * Wo + x] = pool_window(in, W, H, d, x * op.stride, y * op.stride, op.Wf, op.Hf, op.pool);
  std::uint64_t n = 0;
  for (int iw = 0; iw < s.w.count(); ++iw)
    for (int ih = 0; ih < s.h.count(); ++ih)
      for (int ic = 0; ic < s.c.count(); ++ic) {
        const int x0 = s.w.begin(iw), y0 = s.h.begin(ih), c0 = s.c.begin(ic);
        const int pw = s.w.sizes[iw], ph = s.h.sizes[ih], pc = s.c.sizes[ic];
        // the piece's input window, cut out as the distributor would send it
        const int wi = (pw - 1) * op.stride + op.Wf, hi = (ph - 1) * op.stride + op.Hf;
        std::vector<std::int8_t> pin(std::size_t(wi) * hi * pc);
        for (int d = 0; d < pc; ++d)
          for (int y = 0; y < hi; ++y)
            for (int x = 0; x < wi; ++x)
              pin[(std::size_t(d) * hi + y) * wi + x] = in[(std::size_t(c0 + d) * H + y0 * op.stride + y) * W + x0 * op.stride + x];
        for (int d = 0; d < pc; ++d)
          for (int y = 0; y < ph; ++y)
            for (int x = 0; x < pw; ++x)
              joined[(std::size_t(c0 + d) * Ho + y0 + y) * Wo + x0 + x] =
                  pool_window(pin, wi, hi, d, x * op.stride, y * op.stride, op.Wf, op.Hf, op.pool);
        ++n;
      }
  return compare(whole, joined, n, b.name());
}

}  // namespace s2::mapper
