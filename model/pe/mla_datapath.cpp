#include "model/pe/mla_datapath.h"

#include <algorithm>

#if defined(__AVX2__) || defined(__AVX512BW__)
#include <immintrin.h>
#endif

#include "model/golden.h"

namespace s2 {
namespace {

// One vector of int32 accumulators and the operations the kernel needs, for the widest vector unit the
// build targets (the scalar fallback is the same arithmetic with one lane).
#if defined(__AVX512BW__)
using Vec = __m512i;
constexpr int kLanes = 16;
inline Vec vzero() { return _mm512_setzero_si512(); }
inline Vec vload_pairs(const std::int16_t* p) { return _mm512_loadu_si512(p); }
inline Vec vbroadcast(std::uint32_t w) { return _mm512_set1_epi32(static_cast<int>(w)); }
inline Vec vdot(Vec acc, Vec v, Vec w) {
#if defined(__AVX512VNNI__)
  return _mm512_dpwssd_epi32(acc, v, w);
#else
  return _mm512_add_epi32(acc, _mm512_madd_epi16(v, w));
#endif
}
inline void vstore(std::uint32_t* p, Vec v) { _mm512_storeu_si512(p, v); }
#elif defined(__AVX2__)
using Vec = __m256i;
constexpr int kLanes = 8;
inline Vec vzero() { return _mm256_setzero_si256(); }
inline Vec vload_pairs(const std::int16_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline Vec vbroadcast(std::uint32_t w) { return _mm256_set1_epi32(static_cast<int>(w)); }
inline Vec vdot(Vec acc, Vec v, Vec w) { return _mm256_add_epi32(acc, _mm256_madd_epi16(v, w)); }
inline void vstore(std::uint32_t* p, Vec v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
#else
struct Vec {
  std::uint32_t lane;
  std::int16_t v0, v1;
};
constexpr int kLanes = 1;
inline Vec vzero() { return {0, 0, 0}; }
inline Vec vload_pairs(const std::int16_t* p) { return {0, p[0], p[1]}; }
inline Vec vbroadcast(std::uint32_t w) { return {w, 0, 0}; }
inline Vec vdot(Vec acc, Vec v, Vec w) {
  const std::int32_t w0 = static_cast<std::int16_t>(w.lane & 0xffff), w1 = static_cast<std::int16_t>(w.lane >> 16);
  acc.lane += static_cast<std::uint32_t>(w0 * v.v0 + w1 * v.v1);
  return acc;
}
inline void vstore(std::uint32_t* p, Vec v) { *p = v.lane; }
#endif

// out[r * out_stride + x] = sum over steps s of the pairwise dot product of the operand-B pair at
// base[offsets[s] + 2x] with weight pair w[s * w_stride + r], for x in [0, n) rounded up to whole vectors
// (the operand-B rows are padded so that the extra lanes read inside them; their sums are not used).
template <int R>
void dot_rows(std::uint32_t* out, std::size_t out_stride, int n, const std::int16_t* base,
              const std::uint32_t* offsets, const std::uint32_t* w, std::size_t w_stride, std::size_t steps) {
  for (int x = 0; x < n; x += kLanes) {
    Vec acc[R];
    for (int r = 0; r < R; ++r) acc[r] = vzero();
    const std::int16_t* bx = base + 2 * x;
    for (std::size_t s = 0; s < steps; ++s) {
      const Vec v = vload_pairs(bx + offsets[s]);
      const std::uint32_t* ws = w + s * w_stride;
      for (int r = 0; r < R; ++r) acc[r] = vdot(acc[r], v, vbroadcast(ws[r]));
    }
    for (int r = 0; r < R; ++r) vstore(out + r * out_stride + x, acc[r]);
  }
}

void dot_mac_rows(int rows, std::uint32_t* out, std::size_t out_stride, int n, const std::int16_t* base,
                  const std::uint32_t* offsets, const std::uint32_t* w, std::size_t steps) {
  const std::size_t ws = static_cast<std::size_t>(rows);
  if (rows == 4) {
    dot_rows<4>(out, out_stride, n, base, offsets, w, ws, steps);
  } else if (rows == 2) {
    dot_rows<2>(out, out_stride, n, base, offsets, w, ws, steps);
  } else {
    for (int r = 0; r < rows; ++r) dot_rows<1>(out + r * out_stride, out_stride, n, base, offsets, w + r, ws, steps);
  }
}

std::uint32_t pair(std::int8_t w0, std::int8_t w1) {
  return static_cast<std::uint16_t>(std::int16_t(w0)) | (std::uint32_t(static_cast<std::uint16_t>(std::int16_t(w1))) << 16);
}

// two int8 rows (the second may be absent: zeros) as int16 pairs
void interleave(const std::uint8_t* r0, const std::uint8_t* r1, std::int16_t* out, int n) {
  // two loops without a test inside, so that the compiler vectorises them (a task interleaves all of operand B)
  if (!r1) {
    for (int i = 0; i < n; ++i) {
      out[2 * i] = static_cast<std::int8_t>(r0[i]);
      out[2 * i + 1] = 0;
    }
    return;
  }
  for (int i = 0; i < n; ++i) {
    out[2 * i] = static_cast<std::int8_t>(r0[i]);
    out[2 * i + 1] = static_cast<std::int8_t>(r1[i]);
  }
}

std::size_t round_up_to_lanes(int n) { return (static_cast<std::size_t>(n) + kLanes - 1) / kLanes * kLanes; }

}  // namespace

void MlaDatapath::load(const Task& t, const SramLayout& l, const HwConfig& cfg, const std::uint8_t* a,
                       const std::uint8_t* b) {
  task_ = t;
  layout_ = l;
  mac_rows_ = cfg.mac_rows;
  accumulator_bits_ = cfg.accumulator_bits;
  a_ = a;
  weights_group_ = ~0ull;
  std::vector<std::uint32_t>& offsets = step_offsets_;  // reused from task to task
  offsets.clear();
  if (t.op == Op::Conv) {
    const ConvShape& s = t.conv;
    const int d_pairs = (s.D + 1) / 2;
    pair_row_stride_ = 2 * (static_cast<std::size_t>(s.Wi) + kLanes);
    pairs_.assign(std::size_t(d_pairs) * s.Hi * pair_row_stride_, 0);
    auto in_row = [&](int d, int y) { return b + l.b_base + std::uint64_t(d) * l.b_plane_stride + std::uint64_t(y) * l.b_row_stride; };
    for (int p = 0; p < d_pairs; ++p)
      for (int y = 0; y < s.Hi; ++y)
        interleave(in_row(2 * p, y), 2 * p + 1 < s.D ? in_row(2 * p + 1, y) : nullptr,
                   &pairs_[(std::size_t(p) * s.Hi + y) * pair_row_stride_], s.Wi);
    // step (d pair, ky, kx) of output row y reads input row y + ky of the pair, from column kx on
    for (int p = 0; p < d_pairs; ++p)
      for (int ky = 0; ky < s.Hf; ++ky)
        for (int kx = 0; kx < s.Wf; ++kx)
          offsets.push_back(static_cast<std::uint32_t>((std::size_t(p) * s.Hi + ky) * pair_row_stride_ + 2 * kx));
    acc_.assign(std::size_t(mac_rows_) * round_up_to_lanes(s.Wo()), 0u);
  } else {
    const MmShape& s = t.mm;
    const int k_pairs = (s.W_A + 1) / 2;
    pair_row_stride_ = 2 * (static_cast<std::size_t>(s.W_B) + kLanes);
    pairs_.assign(std::size_t(k_pairs) * pair_row_stride_, 0);
    auto b_row = [&](int k) { return b + l.b_base + std::uint64_t(k) * l.b_row_stride; };
    for (int p = 0; p < k_pairs; ++p) {
      interleave(b_row(2 * p), 2 * p + 1 < s.W_A ? b_row(2 * p + 1) : nullptr, &pairs_[p * pair_row_stride_], s.W_B);
      offsets.push_back(static_cast<std::uint32_t>(p * pair_row_stride_));
    }
    acc_.assign(std::size_t(mac_rows_) * round_up_to_lanes(s.W_B), 0u);
  }
}

// weight pairs of filter group `g`, [d/2][ky][kx][MAC row], in the order of the steps
void MlaDatapath::load_conv_weights(std::uint64_t g) {
  const ConvShape& s = task_.conv;
  const int rows = mac_rows_;
  const std::size_t taps = std::size_t(s.Hf) * s.Wf;
  const std::uint8_t* wg = a_ + layout_.a_base + g * layout_.a_group_stride;
  auto w = [&](int d, std::size_t tap, int r) {
    return d < s.D ? static_cast<std::int8_t>(wg[(std::uint64_t(d) * taps + tap) * rows + r]) : std::int8_t(0);
  };
  weights_.resize(std::size_t((s.D + 1) / 2) * taps * rows);
  for (int d = 0; d < s.D; d += 2)
    for (std::size_t tap = 0; tap < taps; ++tap)
      for (int r = 0; r < rows; ++r) weights_[((std::size_t(d / 2) * taps) + tap) * rows + r] = pair(w(d, tap, r), w(d + 1, tap, r));
  weights_group_ = g;
}

void MlaDatapath::compute_row(std::uint64_t r, std::vector<ResultWrite>& writes) {
  const SramLayout& l = layout_;
  const int rows = mac_rows_;
  writes.clear();
  auto store = [&](std::uint64_t byte, std::uint32_t sum) {
    writes.push_back({static_cast<std::uint32_t>(byte), static_cast<std::uint32_t>(wrap_accumulator(sum, accumulator_bits_))});
  };
  if (task_.op == Op::Conv) {
    const ConvShape& s = task_.conv;
    const int Wo = s.Wo(), Ho = s.Ho();
    const std::uint64_t g = r / Ho, y = r % Ho;
    if (weights_group_ != g) load_conv_weights(g);
    const std::size_t stride = round_up_to_lanes(Wo);
    dot_mac_rows(rows, acc_.data(), stride, Wo, &pairs_[y * pair_row_stride_], step_offsets_.data(), weights_.data(),
                 step_offsets_.size());
    for (int rr = 0; rr < rows; ++rr) {
      const std::uint64_t c = g * rows + rr;
      for (int x = 0; x < Wo; ++x) store(l.o_base + ((c * Ho + y) * l.o_row_stride + x) * 4, acc_[rr * stride + x]);
    }
  } else {
    const MmShape& s = task_.mm;
    const std::uint8_t* ag = a_ + l.a_base + r * l.a_group_stride;
    const int k_pairs = (s.W_A + 1) / 2;
    weights_.resize(std::size_t(k_pairs) * rows);
    for (int p = 0; p < k_pairs; ++p)
      for (int rr = 0; rr < rows; ++rr) {
        const int k = 2 * p;
        weights_[std::size_t(p) * rows + rr] =
            pair(static_cast<std::int8_t>(ag[std::uint64_t(k) * rows + rr]),
                 k + 1 < s.W_A ? static_cast<std::int8_t>(ag[std::uint64_t(k + 1) * rows + rr]) : std::int8_t(0));
      }
    const std::size_t stride = round_up_to_lanes(s.W_B);
    dot_mac_rows(rows, acc_.data(), stride, s.W_B, pairs_.data(), step_offsets_.data(), weights_.data(),
                 step_offsets_.size());
    for (int rr = 0; rr < rows; ++rr) {
      const std::uint64_t i = r * rows + rr;
      for (int j = 0; j < s.W_B; ++j) store(l.o_base + (i * l.o_row_stride + j) * 4, acc_[rr * stride + j]);
    }
  }
}

}  // namespace s2
