#include "splitter.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "dram_layout.h"
#include "model/text_file.h"

namespace s2::mapper {

const char* to_string(Target t) { return t == Target::Qpe ? "qpe" : "s2"; }

Target parse_target(const std::string& s) {
  if (s == "qpe") return Target::Qpe;
  if (s == "s2" || s == "spinnaker2") return Target::SpiNNaker2;
  throw std::invalid_argument("target: expected qpe or s2, got '" + s + "'");
}

const char* to_string(Strategy s) {
  switch (s) {
    case Strategy::NofuseNoreuse: return "nofuse_noreuse";
    case Strategy::FuseNoreuse: return "fuse_noreuse";
    case Strategy::FuseReuse: return "fuse_reuse";
  }
  return "?";
}

Strategy parse_strategy(const std::string& s) {
  for (Strategy k : kAllStrategies)
    if (s == to_string(k)) return k;
  throw std::invalid_argument("strategy '" + s + "': expected nofuse_noreuse, fuse_noreuse or fuse_reuse");
}

const char* to_string(Schedule s) { return s == Schedule::Overlapped ? "overlapped" : "thesis"; }

Schedule parse_schedule(const std::string& s) {
  if (s == "thesis") return Schedule::Thesis;
  if (s == "overlapped") return Schedule::Overlapped;
  throw std::invalid_argument("schedule: expected thesis or overlapped, got '" + s + "'");
}

void apply_target(HwConfig& cfg, Target t, const std::string& preset) {
  if (t == Target::Qpe) {
    if (!preset.empty()) throw std::invalid_argument("--preset " + preset + ": a chip preset needs --target s2");
    cfg.chip = qpe_dram_chip();
    return;
  }
  if (!preset.empty() || cfg.chip.qpes() == 1) apply_preset(cfg, preset.empty() ? "prototype" : preset);
  validate(cfg);
}

SplitRules split_rules(Target t, const HwConfig& cfg) {
  SplitRules r;
  r.target = t;
  // thesis 4.2.1: at least as many pieces as PEs work: 4 on QPE-DRAM, 128 on SpiNNaker2 (the prototype's
  // PEs less its storage QPEs'); a SpiNNaker2 split without a chip in the configuration is the prototype's
  const ChipShape chip = t == Target::Qpe ? qpe_dram_chip() : cfg.chip.qpes() > 1 ? cfg.chip : prototype_chip();
  std::uint64_t work_qpes = 0;
  for (int q = 0; q < chip.qpes(); ++q) work_qpes += chip.has_pes(q);
  work_qpes -= chip.double_qpe_blocks.size();  // each has a storage QPE
  r.min_pieces = r.work_pes = work_qpes * kPesPerQpe;
  r.budget_bytes = static_cast<std::uint64_t>(cfg.sram_mla_budget_bytes);
  r.second_filter_buffer = t == Target::SpiNNaker2;
  r.mac_rows = cfg.mac_rows;
  r.mac_cols = cfg.mac_cols;
  return r;
}

std::uint64_t piece_footprint_bytes(const AlignedSizes& a, BlockKind kind, const SplitRules& r) {
  if (!r.second_filter_buffer) return a.total();
  return a.total() + (kind == BlockKind::MatMul ? a.operand_b_bytes : a.operand_a_bytes);
}

int Parts::begin(int i) const {
  int b = 0;
  for (int k = 0; k < i; ++k) b += sizes[k];
  return b;
}

int Parts::largest() const { return sizes.empty() ? 0 : *std::max_element(sizes.begin(), sizes.end()); }

std::string Parts::to_string() const {
  std::string s;
  for (std::size_t i = 0; i < sizes.size();) {
    std::size_t j = i;
    while (j < sizes.size() && sizes[j] == sizes[i]) ++j;
    if (!s.empty()) s += ",";
    s += fmt::format("{}x{}", sizes[i], j - i);
    i = j;
  }
  return s;
}

Parts balanced_parts(int n, int k, int step) {
  Parts p;
  const int units = n / step, rem = n % step;
  if (k < 1 || units < k || (units == 0 && k != 1)) {
    if (units == 0 && k == 1 && n > 0) p.sizes = {n};
    return p;
  }
  for (int i = 0; i < k; ++i) p.sizes.push_back((units / k + (i < units % k ? 1 : 0)) * step);
  p.sizes.back() += rem;  // a remainder smaller than the step goes to the last (smallest) part
  return p;
}

namespace {

Parts whole(int n) { return Parts{{n}}; }

// Parts of fixed size `piece` (the last one holds the rest).
Parts fixed_parts(int n, int piece) {
  Parts p;
  for (int b = 0; b < n; b += piece) p.sizes.push_back(std::min(piece, n - b));
  return p;
}

std::string conv_shape_string(const ConvShape& t) {
  return fmt::format("[{},{},{}]x[{},{},{},{}]", t.Wi, t.Hi, t.D, t.Wf, t.Hf, t.D, t.C);
}

// What one candidate scheme costs, for choosing between schemes.
// SpiNNaker2 (thesis 4.2.1): how far a piece count is from the nearest 2^P x (the PEs that work: 128 on the
// prototype), in octaves (0 when it is one of them, 0.5 at most), so that the distributor fills them evenly.
double octaves_off_power_of_two(std::uint64_t pieces, std::uint64_t work_pes) {
  const double octaves = std::log2(double(std::max<std::uint64_t>(pieces, 1)) / double(work_pes));
  return std::abs(octaves - std::round(octaves));
}

// What one candidate scheme costs, for choosing between schemes.
struct Score {
  bool fits = false;
  double mac = 0;               // weighted MAC utilisation
  double count_off = 0;         // SpiNNaker2: octaves_off_power_of_two(pieces, PEs); QPE: 0
  std::uint64_t bytes = 0;      // aligned bytes moved
  std::uint64_t pieces = 0;
  bool better_than(const Score& o) const {
    if (fits != o.fits) return fits;
    if (std::abs(mac - o.mac) > 1e-9) return mac > o.mac;
    if (std::abs(count_off - o.count_off) > 1e-9) return count_off < o.count_off;
    if (bytes != o.bytes) return bytes < o.bytes;
    return pieces < o.pieces;
  }
};


// The totals of a split are sums over its piece groups: start afresh, then add each group.
void clear_groups(BlockSplit& s) {
  s.groups.clear();
  s.pieces = 0;
  s.aligned_bytes_moved = 0;
  s.sram_utilization_max = 0;
}
void add_group(BlockSplit& s, PieceGroup g, const SplitRules& r) {
  g.sram_utilization = double(g.raw.total()) / double(r.budget_bytes);  // equation 5.2
  s.pieces += g.count;
  s.aligned_bytes_moved += g.aligned.total() * g.count;
  s.sram_utilization_max = std::max(s.sram_utilization_max, g.sram_utilization);
  s.groups.push_back(std::move(g));
}
void most_pieces_first(BlockSplit& s) {
  std::sort(s.groups.begin(), s.groups.end(), [](const PieceGroup& x, const PieceGroup& y) { return x.count > y.count; });
}

// ---- convolution blocks ----

struct ConvSplitter {
  const OperationBlock& b;
  const Operation& conv;
  const SplitRules& r;
  int step = 1;  // output parts in multiples of the fused pooling's stride

  ConvShape piece_task(int w, int h, int c, int d) const {
    ConvShape t;
    t.Wi = (w - 1) * conv.stride + conv.Wf;
    t.Hi = (h - 1) * conv.stride + conv.Hf;
    t.D = d;
    t.Wf = conv.Wf;
    t.Hf = conv.Hf;
    t.C = c;
    return t;
  }

  // Every distinct piece of the scheme with its count, sizes and utilisation; fills the split's totals.
  void evaluate(BlockSplit& s) const {
    std::map<std::tuple<int, int, int, int>, std::uint64_t> shapes;
    for (int w : s.w.sizes)
      for (int h : s.h.sizes)
        for (int c : s.c.sizes)
          for (int d : s.d.sizes) ++shapes[{w, h, c, d}];
    clear_groups(s);
    double valid = 0, lanes = 0;
    for (const auto& [key, n] : shapes) {
      const auto [w, h, c, d] = key;
      const ConvShape t = piece_task(w, h, c, d);
      PieceGroup g;
      g.count = n;
      g.shape = conv_shape_string(t);
      g.aligned = conv_aligned_sizes(t, r.mac_rows);
      g.raw.operand_b_bytes = std::uint64_t(t.Wi) * t.Hi * t.D;
      g.raw.operand_a_bytes = std::uint64_t(t.Wf) * t.Hf * t.D * t.C;
      g.raw.result_bytes = std::uint64_t(t.Wo()) * t.Ho() * t.C * 4;
      // equation 5.3: results kept per MAC lane of the array, over one output row of the piece
      const double v = double(w) * c, l = double(align_up(t.Wo(), r.mac_cols)) * double(align_up(c, r.mac_rows));
      g.mac_utilization = v / l;
      valid += v * h * double(n);
      lanes += l * h * double(n);
      add_group(s, std::move(g), r);
    }
    most_pieces_first(s);
    s.mac_utilization = lanes > 0 ? valid / lanes : 0;
    const int dparts = s.d.count();
    s.partial_sum_adds = dparts > 1 ? std::uint64_t(dparts - 1) * conv.out.elements() : 0;
  }

  bool fits(const BlockSplit& s) const {
    // the largest piece decides (sizes only grow with each dimension); not always the first part: a
    // remainder smaller than a step goes to the last one
    const ConvShape t = piece_task(s.w.largest(), s.h.largest(), s.c.largest(), s.d.largest());
    return piece_footprint_bytes(conv_aligned_sizes(t, r.mac_rows), BlockKind::Convolution, r) <= r.budget_bytes;
  }

  Score score(BlockSplit& s) const {
    Score sc;
    sc.fits = fits(s);
    if (!sc.fits) return sc;
    evaluate(s);
    sc.mac = s.mac_utilization;
    if (r.target == Target::SpiNNaker2) sc.count_off = octaves_off_power_of_two(s.pieces, r.work_pes);
    sc.bytes = s.aligned_bytes_moved;
    sc.pieces = s.pieces;
    return sc;
  }

  // Step 2: the output's width and height for given C and D parts; false if nothing fits.
  bool split_output(BlockSplit& best, const Parts& c, const Parts& d) const {
    const int wo = conv.out.W, ho = conv.out.H;
    const int wu = std::max(1, wo / step), hu = std::max(1, ho / step);
    Score best_score;
    bool found = false;
    const std::uint64_t others = std::uint64_t(c.count()) * d.count();
    for (int wk = 1; wk <= wu; ++wk) {
      BlockSplit s;
      s.c = c;
      s.d = d;
      s.w = balanced_parts(wo, wk, step);
      if (s.w.sizes.empty()) continue;
      // the fewest rows parts that fit (more parts only add overlap and pieces), at least min_pieces
      int hk = 1;
      for (; hk <= hu; ++hk) {
        s.h = balanced_parts(ho, hk, step);
        if (!s.h.sizes.empty() && fits(s)) break;
      }
      if (hk > hu) continue;
      const std::uint64_t need = (r.min_pieces + others * wk - 1) / (others * wk);
      if (std::uint64_t(hk) < need) {
        if (need > std::uint64_t(hu)) continue;
        hk = static_cast<int>(need);
      }
      // SpiNNaker2 also weighs more rows parts, up to twice the fewest: one of them brings the piece count
      // to (or nearest) a 2^P x 128
      const int hk_last = r.target == Target::SpiNNaker2 ? std::min(hu, 2 * hk) : hk;
      for (int k = hk; k <= hk_last; ++k) {
        s.h = balanced_parts(ho, k, step);
        if (s.h.sizes.empty() || !fits(s)) continue;
        const Score sc = score(s);
        if (!found || sc.better_than(best_score)) {
          best = s;
          best_score = sc;
          found = true;
        }
      }
    }
    return found;
  }

  // The filters' parts: `parts` of the filters (of each group, repeated for every group: a part never
  // straddles two groups, whose filters read different input channels).
  Parts per_group(const Parts& parts) const {
    Parts p;
    for (int g = 0; g < conv.groups; ++g) p.sizes.insert(p.sizes.end(), parts.sizes.begin(), parts.sizes.end());
    return p;
  }

  BlockSplit run() const {
    BlockSplit s;
    s.name = b.name();
    s.kind = b.kind;
    // a grouped convolution splits each group's filters; a piece reads its group's channels, whole (the
    // channels of one group: D without groups)
    const int C = conv.out.D / conv.groups, D = conv.weight_depth();
    // step 1: C alone, the whole input in every piece (parts in multiples of the MAC rows)
    const int c_units = std::max(1, C / r.mac_rows);
    for (int k = 1; k <= c_units; ++k) {
      BlockSplit t;
      t.w = whole(conv.out.W);
      t.h = whole(conv.out.H);
      t.c = per_group(balanced_parts(C, k, r.mac_rows));
      t.d = whole(D);
      if (t.c.sizes.empty() || !fits(t)) continue;
      // more C parts while there are too few pieces (slide "Splitter": no(1))
      for (int more_k = k + 1; std::uint64_t(t.c.count()) < r.min_pieces; ++more_k) {
        Parts more = balanced_parts(C, more_k, r.mac_rows);
        if (more.sizes.empty()) break;
        t.c = per_group(more);
      }
      if (std::uint64_t(t.c.count()) >= r.min_pieces) {
        t.name = s.name;
        t.kind = s.kind;
        evaluate(t);
        return t;
      }
      break;  // C alone cannot give enough pieces: go on with MAC-rows filters
    }
    // step 2: MAC-rows filters per piece (the last piece takes the rest), the output's width and height
    const Parts c = per_group(fixed_parts(C, r.mac_rows));
    if (split_output(s, c, whole(D))) {
      s.name = b.name();
      s.kind = b.kind;
      return s;
    }
    // step 3: the input channels into the fewest equal parts (not a grouped convolution's: it would need
    // partial sums per group)
    for (int k = 2; k <= D && conv.groups == 1; ++k) {
      if (D % k) continue;
      if (split_output(s, c, Parts{std::vector<int>(k, D / k)})) {
        s.name = b.name();
        s.kind = b.kind;
        return s;
      }
    }
    throw std::runtime_error(fmt::format("splitter: {} does not fit {} bytes even one output pixel, {} filters and {} "
                                         "at a time", b.name(), r.budget_bytes, r.mac_rows,
                                         conv.groups == 1 ? "one input channel" : "one group's input channels"));
  }
};

// ---- pooling and element-wise blocks ----

}  // namespace

std::uint64_t elementwise_param_bytes(const ElementwiseSpec& e, int c) {
  switch (e.op) {
    case EltOp::Table: return e.tables() > 1 ? 256ull * std::uint64_t(c) : 256;
    case EltOp::Affine: return 8ull * std::uint64_t(c);
    case EltOp::ChannelMul: return std::uint64_t(align_up(c, 16));
    default: return 0;
  }
}

namespace {

// Both run on the ARM over pieces of channels, rows and columns: a pooling's window (thesis 4.2.2), an
// element-wise operation's values in place (its second operand beside them, its parameters after).
BlockSplit split_pool(const OperationBlock& b, const SplitRules& r) {
  const Operation& p = b.core_op();
  BlockSplit best;
  best.name = b.name();
  best.kind = b.kind;
  auto piece_bytes = [&](int w, int h, int c) {
    AlignedSizes a;  // 8-bit in and out; rows of the input aligned to 16 bytes (slides, "Splitter")
    a.operand_b_bytes = std::uint64_t(align_up((w - 1) * p.stride + p.Wf, 16)) * ((h - 1) * p.stride + p.Hf) * c;
    if (p.elementwise) {
      const bool two_maps = p.elementwise->op == EltOp::Add || p.elementwise->op == EltOp::Mul;
      a.operand_a_bytes = elementwise_param_bytes(*p.elementwise, c) + (two_maps ? a.operand_b_bytes : 0);
    } else {
      a.result_bytes = std::uint64_t(align_up(w, 16)) * h * c;
    }
    return a;
  };
  auto evaluate = [&](BlockSplit& s) {
    std::map<std::tuple<int, int, int>, std::uint64_t> shapes;
    for (int w : s.w.sizes)
      for (int h : s.h.sizes)
        for (int c : s.c.sizes) ++shapes[{w, h, c}];
    clear_groups(s);
    for (const auto& [key, n] : shapes) {
      const auto [w, h, c] = key;
      PieceGroup g;
      g.count = n;
      const int wi = (w - 1) * p.stride + p.Wf, hi = (h - 1) * p.stride + p.Hf;
      g.shape = fmt::format("[{},{},{}] {}x{}/{}", wi, hi, c, p.Wf, p.Hf, p.stride);
      g.aligned = piece_bytes(w, h, c);
      g.raw.operand_b_bytes = std::uint64_t(wi) * hi * c;
      g.raw.result_bytes = std::uint64_t(w) * h * c;
      add_group(s, std::move(g), r);
    }
    s.mac_utilization = 0;  // pooling runs on the ARM core
  };
  const int W = p.out.W, H = p.out.H, C = p.out.D;
  // channels first, in N * min_pieces parts (thesis 4.2.2), the whole map in every piece
  for (std::uint64_t k = r.min_pieces; k <= std::uint64_t(C); k += r.min_pieces) {
    if (piece_bytes(W, H, balanced_parts(C, int(k), 1).largest()).total() > r.budget_bytes) continue;
    best.w = whole(W);
    best.h = whole(H);
    best.d = whole(1);
    best.c = balanced_parts(C, int(k), 1);
    evaluate(best);
    return best;
  }
  // then one channel per part and the map's width and height: the fewest pieces that fit, then the
  // fewest bytes (Appendix A: overlapping windows cost input bytes)
  best.c = balanced_parts(C, C, 1);
  best.d = whole(1);
  bool found = false;
  for (int wk = 1; wk <= W; ++wk) {
    for (int hk = 1; hk <= H; ++hk) {
      BlockSplit t = best;
      t.w = balanced_parts(W, wk, 1);
      t.h = balanced_parts(H, hk, 1);
      if (std::uint64_t(C) * wk * hk < r.min_pieces) continue;
      if (piece_bytes(t.w.largest(), t.h.largest(), 1).total() > r.budget_bytes) continue;
      evaluate(t);
      if (!found || t.pieces < best.pieces || (t.pieces == best.pieces && t.aligned_bytes_moved < best.aligned_bytes_moved)) {
        best = t;
        found = true;
      }
      break;  // more height parts only add pieces
    }
  }
  if (found) return best;
  throw std::runtime_error("splitter: " + b.name() + " does not fit the SRAM budget");
}

// ---- matrix multiplication blocks ----

// Every distinct piece of an MM split (W_B and H_B parts in s.w, s.h) with its count, sizes and
// utilisation; fills the split's totals.
void evaluate_mm(BlockSplit& s, const SplitRules& r) {
  s.c = whole(1);
  s.d = whole(1);
  clear_groups(s);
  std::map<std::pair<int, int>, std::uint64_t> shapes;
  for (int w : s.w.sizes)
    for (int h : s.h.sizes) ++shapes[{w, h}];
  double valid = 0, lanes = 0;
  for (const auto& [key, n] : shapes) {
    const auto [w, h] = key;
    const MmShape m{h, 1, w, h};
    PieceGroup g;
    g.count = n;
    g.shape = fmt::format("[{},1]x[{},{}]", m.W_A, m.W_B, m.H_B);
    g.aligned = mm_aligned_sizes(m, r.mac_rows);
    g.raw.operand_a_bytes = std::uint64_t(m.W_A) * m.H_A;
    g.raw.operand_b_bytes = std::uint64_t(m.W_B) * m.H_B;
    g.raw.result_bytes = std::uint64_t(m.W_B) * m.H_A * 4;
    const double v = double(m.H_A) * w, l = double(align_up(m.H_A, r.mac_rows)) * double(align_up(w, r.mac_cols));
    g.mac_utilization = v / l;
    valid += v * double(n);
    lanes += l * double(n);
    add_group(s, std::move(g), r);
  }
  most_pieces_first(s);
  s.mac_utilization = valid / lanes;
  int wb = 0;
  for (int w : s.w.sizes) wb += w;
  s.partial_sum_adds = std::uint64_t(wb) * static_cast<std::uint64_t>(s.h.count() - 1);  // Appendix B: W_B * (Y - 1)
}

BlockSplit split_mm(const OperationBlock& b, const SplitRules& r) {
  const Operation& fc = b.core_op();
  const int WB = fc.out.W, HB = fc.in.W;  // weight [W_B, H_B]; the input vector is A [W_A = H_B, H_A = 1]
  auto piece_shape = [](int wb, int hb) { return MmShape{hb, 1, wb, hb}; };
  struct Cand {
    int pw, ph;
    std::uint64_t bytes, pieces;
    int skew;
  };
  std::vector<Cand> cands;
  auto pow2_at_least = [](int n) {
    int p = 16;
    while (p < n) p *= 2;
    return p;
  };
  for (int pw = 16; pw <= pow2_at_least(WB); pw *= 2) {
    for (int ph = 16; ph <= pow2_at_least(HB); ph *= 2) {
      const int ew = std::min(pw, WB), eh = std::min(ph, HB);
      if (piece_footprint_bytes(mm_aligned_sizes(piece_shape(ew, eh), r.mac_rows), BlockKind::MatMul, r) > r.budget_bytes) continue;
      const std::uint64_t pieces = std::uint64_t((WB + pw - 1) / pw) * ((HB + ph - 1) / ph);
      cands.push_back({pw, ph, std::uint64_t(ew) * eh, pieces, std::abs(std::countr_zero(unsigned(pw)) - std::countr_zero(unsigned(ph)))});
    }
  }
  if (cands.empty()) throw std::runtime_error("splitter: " + b.name() + " does not fit the SRAM budget");
  // enough pieces first, then the largest weight piece, the squarest, the tallest (fewer partial sums)
  std::sort(cands.begin(), cands.end(), [&](const Cand& x, const Cand& y) {
    const auto enough = [&](const Cand& c) {
      return c.pieces >= r.min_pieces && std::uint64_t((WB + c.pw - 1) / c.pw) >= r.min_column_parts;
    };
    const bool ex = enough(x), ey = enough(y);
    if (ex != ey) return ex;
    if (x.bytes != y.bytes) return x.bytes > y.bytes;
    if (x.skew != y.skew) return x.skew < y.skew;
    return x.ph > y.ph;
  });
  const Cand& c = cands.front();
  BlockSplit s;
  s.name = b.name();
  s.kind = b.kind;
  s.w = fixed_parts(WB, c.pw);
  s.h = fixed_parts(HB, c.ph);
  evaluate_mm(s, r);
  return s;
}
}  // namespace

BlockSplit split_block(const OperationBlock& b, const SplitRules& rules) {
  // a layer too small for min_pieces is cut into as many pieces as it has (at most)
  const Operation& op = b.core_op();
  std::uint64_t most = 0;
  const int step = b.fused_pool() ? b.fused_pool()->stride : 1;
  switch (b.kind) {
    case BlockKind::Convolution:
      most = std::uint64_t(std::max(1, op.out.W / step)) * std::max(1, op.out.H / step) *
             filter_row_groups(op, rules.mac_rows);
      break;
    case BlockKind::Pooling:
    case BlockKind::Elementwise:
      most = std::uint64_t(op.out.W) * op.out.H * op.out.D;
      break;
    case BlockKind::MatMul:
      most = std::uint64_t((op.out.W + 15) / 16) * ((op.in.W + 15) / 16);
      break;
  }
  SplitRules r = rules;
  if (b.workers > 0) {  // the layer's own worker count (LayerSpec::workers)
    if (std::uint64_t(b.workers) > rules.work_pes)
      throw std::invalid_argument(b.name() + ": workers=" + std::to_string(b.workers) + ", but the target has " +
                                  std::to_string(rules.work_pes) + " PEs that work");
    r.min_pieces = r.work_pes = std::uint64_t(b.workers);
    if (b.kind == BlockKind::MatMul) r.min_column_parts = std::min<std::uint64_t>(r.work_pes, (op.out.W + 15) / 16);
  }
  r.min_pieces = std::min(r.min_pieces, most);
  switch (b.kind) {
    case BlockKind::Convolution: {
      ConvSplitter cs{b, b.core_op(), r};
      cs.step = step;
      return cs.run();
    }
    case BlockKind::Pooling:
    case BlockKind::Elementwise:
      return split_pool(b, r);
    case BlockKind::MatMul:
      return split_mm(b, r);
  }
  throw std::logic_error("split_block: unknown block kind");
}

NetworkSplit split_network(const ParsedNetwork& n, const SplitRules& rules) { return split_network(n, rules, {}); }

Parts parse_parts(const std::string& text) {
  Parts p;
  std::stringstream in(text);
  std::string group;
  while (std::getline(in, group, ',')) {
    const std::size_t x = group.find('x');
    int size = 0, count = 0;
    std::size_t used_size = 0, used_count = 0;
    try {
      if (x == std::string::npos) throw std::invalid_argument("");
      size = std::stoi(group.substr(0, x), &used_size);
      count = std::stoi(group.substr(x + 1), &used_count);
    } catch (const std::exception&) {
      used_size = 0;
    }
    if (used_size != x || used_count != group.size() - x - 1 || size < 1 || count < 1)
      throw std::invalid_argument("expected SIZExCOUNT groups joined by commas (e.g. 14x2,12x7), got '" + text + "'");
    // no dimension of a layer exceeds kMaxChannels (network.h), so neither may a part or the number of parts
    if (size > kMaxChannels || count > kMaxChannels ||
        p.sizes.size() + static_cast<std::size_t>(count) > static_cast<std::size_t>(kMaxChannels))
      throw std::invalid_argument(fmt::format("expected parts of at most {} and at most {} parts in all, got '{}'",
                                              kMaxChannels, kMaxChannels, text));
    p.sizes.insert(p.sizes.end(), static_cast<std::size_t>(count), size);
  }
  if (p.sizes.empty() || text.back() == ',')
    throw std::invalid_argument("expected SIZExCOUNT groups joined by commas (e.g. 14x2,12x7), got '" + text + "'");
  return p;
}

std::vector<SplitChoice> read_split_file(const std::string& path) {
  std::string text;
  try {
    text = read_text_file(path, kMaxSplitFileBytes, "split file");
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(e.what());
  }
  return parse_split_file(text, path);
}

std::vector<SplitChoice> parse_split_file(const std::string& text, const std::string& path) {
  std::istringstream in(text);
  std::vector<SplitChoice> out;
  std::string line;
  static const char* fields[] = {"W parts", "H parts", "C parts", "D parts"};
  for (int number = 1; std::getline(in, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::stringstream words(line);
    std::vector<std::string> w, options;
    for (std::string x; words >> x;) (x.find('=') == std::string::npos ? w : options).push_back(x);
    if (w.empty() && options.empty()) continue;
    const std::string where = path + ":" + std::to_string(number);
    if (w.size() < 3 || w.size() > 5)
      throw std::invalid_argument(where + ": expected OPERATION W_PARTS H_PARTS [C_PARTS [D_PARTS]], got " +
                                  std::to_string(w.size()) + " fields");
    SplitChoice c;
    c.operation = w[0];
    c.source = where;
    Parts* parts[] = {&c.w, &c.h, &c.c, &c.d};
    for (std::size_t i = 1; i < w.size(); ++i) {
      try {
        *parts[i - 1] = parse_parts(w[i]);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(where + ": field " + fields[i - 1] + ": " + e.what());
      }
    }
    for (const std::string& o : options) {
      const std::string key = o.substr(0, o.find('=')), value = o.substr(o.find('=') + 1);
      try {
        if (key == "strategy") c.strategy = parse_strategy(value);
        else if (key == "schedule") c.schedule = parse_schedule(value);
        else throw std::invalid_argument("");
      } catch (const std::invalid_argument&) {
        throw std::invalid_argument(
            where + ": field " + (key == "strategy" ? "strategy: expected nofuse_noreuse, fuse_noreuse or fuse_reuse"
                                  : key == "schedule" ? "schedule: expected thesis or overlapped"
                                                      : "option: expected strategy=S or schedule=S") +
            ", got '" + o + "'");
      }
    }
    for (const SplitChoice& o : out)
      if (o.operation == c.operation) throw std::invalid_argument(where + ": " + c.operation + " chosen twice (also " + o.source + ")");
    out.push_back(c);
  }
  return out;
}

namespace {

// A grouped convolution's chosen filter parts: each group's `per_group` filters in parts of multiples of the
// MAC rows but its last, no part straddling two groups.
template <typename Fail>
void check_group_parts(const Parts& c, int filters, int per_group, int mac_rows, const Fail& fail) {
  int at = 0;
  for (std::size_t i = 0; i < c.sizes.size(); ++i) {
    const int in_group = at % per_group, end = in_group + c.sizes[i];
    if (end > per_group)
      fail("C parts", "parts inside one group of " + std::to_string(per_group) + " filters each, got " + c.to_string());
    if (end < per_group && c.sizes[i] % mac_rows != 0)
      fail("C parts", "parts of each group in multiples of " + std::to_string(mac_rows) + " but its last, got " + c.to_string());
    at += c.sizes[i];
  }
  if (at != filters) fail("C parts", "parts summing to the filters " + std::to_string(filters) + ", got " + std::to_string(at));
}

}  // namespace

BlockSplit split_block_as(const OperationBlock& b, const SplitRules& rules, const SplitChoice& choice) {
  const auto fail = [&](const std::string& field, const std::string& what) {
    throw std::invalid_argument(choice.source + ": " + choice.operation + ", field " + field + ": expected " + what);
  };
  if (b.kind == BlockKind::Pooling || b.kind == BlockKind::Elementwise)
    fail("operation", "a convolution or matrix multiplication block (a pooling or element-wise block is split by the splitter)");
  if (b.kind == BlockKind::MatMul) {
    // W_B and H_B parts of the weight
    if (!choice.c.sizes.empty()) fail("C parts", "none (a matrix multiplication has W_B and H_B parts only)");
    BlockSplit s;
    s.name = b.name();
    s.kind = b.kind;
    s.w = choice.w;
    s.h = choice.h;
    for (const auto& [p, total, field] : {std::tuple{&s.w, b.core_op().out.W, "W parts"}, std::tuple{&s.h, b.core_op().in.W, "H parts"}}) {
      int sum = 0;
      for (int v : p->sizes) sum += v;
      if (sum != total) fail(field, "parts summing to " + std::to_string(total) + ", got " + std::to_string(sum));
    }
    for (int w : s.w.sizes)
      for (int h : s.h.sizes)
        if (piece_footprint_bytes(mm_aligned_sizes(MmShape{h, 1, w, h}, rules.mac_rows), BlockKind::MatMul, rules) > rules.budget_bytes)
          fail("parts", "pieces that fit the SRAM budget of " + std::to_string(rules.budget_bytes) + " bytes");
    evaluate_mm(s, rules);
    return s;
  }
  if (choice.c.sizes.empty()) fail("C parts", "the filters' parts (a convolution block)");
  const Operation& conv = b.core_op();
  const int step = b.fused_pool() ? b.fused_pool()->stride : 1;
  BlockSplit s;
  s.name = b.name();
  s.kind = b.kind;
  s.w = choice.w;
  s.h = choice.h;
  s.c = choice.c;
  s.d = choice.d.sizes.empty() ? whole(conv.weight_depth()) : choice.d;
  const auto check = [&](const Parts& p, int total, int unit, const std::string& field, const std::string& what) {
    int sum = 0;
    for (int v : p.sizes) sum += v;
    if (sum != total) fail(field, "parts summing to " + what + " " + std::to_string(total) + ", got " + std::to_string(sum));
    for (std::size_t i = 0; i + 1 < p.sizes.size(); ++i)
      if (p.sizes[i] % unit != 0)
        fail(field, "parts in multiples of " + std::to_string(unit) + " but the last, got " + p.to_string());
  };
  check(s.w, conv.out.W, step, "W parts", "the output width");
  check(s.h, conv.out.H, step, "H parts", "the output height");
  if (conv.groups == 1) {
    check(s.c, conv.out.D, rules.mac_rows, "C parts", "the filters");
    check(s.d, conv.in.D, 1, "D parts", "the input channels");
  } else {
    check_group_parts(s.c, conv.out.D, conv.out.D / conv.groups, rules.mac_rows, fail);
    if (s.d.count() != 1 || s.d.sizes[0] != conv.weight_depth())
      fail("D parts", "the group's " + std::to_string(conv.weight_depth()) +
                          " input channels whole (a grouped convolution's pieces have no partial sums), got " + s.d.to_string());
  }
  ConvSplitter cs{b, conv, rules};
  cs.step = step;
  if (!cs.fits(s)) {
    const ConvShape t = cs.piece_task(s.w.largest(), s.h.largest(), s.c.largest(), s.d.largest());
    fail("parts", "pieces that fit the SRAM budget of " + std::to_string(rules.budget_bytes) + " bytes; the largest, " +
                      conv_shape_string(t) + ", needs " +
                      std::to_string(piece_footprint_bytes(conv_aligned_sizes(t, rules.mac_rows), BlockKind::Convolution, rules)));
  }
  cs.evaluate(s);
  return s;
}

NetworkSplit split_network(const ParsedNetwork& n, const SplitRules& rules, const std::vector<SplitChoice>& chosen) {
  for (const SplitChoice& c : chosen)
    if (!n.find(c.operation))
      throw std::invalid_argument(c.source + ": field operation: expected a block of " + n.name + ", got " + c.operation);
  NetworkSplit s;
  s.network = n.name;
  s.rules = rules;
  for (const OperationBlock& b : n.blocks) {
    const auto c = std::find_if(chosen.begin(), chosen.end(), [&](const SplitChoice& x) { return x.operation == b.name(); });
    s.blocks.push_back(c == chosen.end() ? split_block(b, rules) : split_block_as(b, rules, *c));
    if (c != chosen.end()) s.blocks.back().strategy = c->strategy;
  }
  return s;
}

ConvPiece conv_piece(const OperationBlock& b, const BlockSplit& s, int iw, int ih, int ic, int id) {
  const Operation& conv = b.core_op();
  ConvPiece p;
  p.out_x0 = s.w.begin(iw);
  p.out_y0 = s.h.begin(ih);
  p.out_w = s.w.sizes.at(iw);
  p.out_h = s.h.sizes.at(ih);
  p.x0 = p.out_x0 * conv.stride;
  p.y0 = p.out_y0 * conv.stride;
  p.c0 = s.c.begin(ic);
  // a grouped convolution's piece reads its group's channels (s.d: parts of one group's)
  p.d0 = p.c0 / (conv.out.D / conv.groups) * conv.weight_depth() + s.d.begin(id);
  p.task.Wi = (p.out_w - 1) * conv.stride + conv.Wf;
  p.task.Hi = (p.out_h - 1) * conv.stride + conv.Hf;
  p.task.D = s.d.sizes.at(id);
  p.task.Wf = conv.Wf;
  p.task.Hf = conv.Hf;
  p.task.C = s.c.sizes.at(ic);
  return p;
}

MmPiece mm_piece(const OperationBlock&, const BlockSplit& s, int iw, int ih) {
  MmPiece p;
  p.col0 = s.w.begin(iw);
  p.row0 = s.h.begin(ih);
  const int w = s.w.sizes.at(iw), h = s.h.sizes.at(ih);
  p.task = MmShape{h, 1, w, h};
  return p;
}

}  // namespace s2::mapper
