#include "harness/stimulus/random_vectors.h"

#include <algorithm>
#include <array>
#include <sstream>
#include <stdexcept>

#include "model/splitmix64.h"
#include "model/sram_layout.h"

namespace s2 {
namespace {

// The suite's draws: splitmix64 (the same on every machine) with the ranges the generator needs.
struct Rng {
  SplitMix64 gen;
  std::uint64_t next() { return gen.next(); }
  // uniform enough in [lo, hi] (the modulo bias is irrelevant here, and it is the same everywhere)
  int range(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<std::uint64_t>(hi - lo + 1)); }
  bool percent(int p) { return range(0, 99) < p; }
};

// What a slot of the suite is for.
enum class Kind {
  Conv,         // random convolution
  Mm,           // random matrix multiplication
  ConvFill,     // convolution whose footprint is > 90 % of the SRAM budget
  MmFill,       // matrix multiplication whose footprint is > 90 % of the SRAM budget
  ConvWrap,     // 9x9 convolution with extreme data whose accumulators wrap the 29-bit range
  ConvExtreme,  // random convolution with extreme data
  MmExtreme,    // random matrix multiplication with extreme data
};

// The 40-slot pattern the suite is dealt from (repeated, then shuffled).
std::vector<Kind> slot_pattern() {
  std::vector<Kind> p;
  p.push_back(Kind::ConvWrap);
  p.push_back(Kind::ConvFill);
  p.push_back(Kind::MmFill);
  p.push_back(Kind::ConvExtreme);
  p.push_back(Kind::MmExtreme);
  for (int i = 0; i < 21; ++i) p.push_back(Kind::Conv);
  for (int i = 0; i < 14; ++i) p.push_back(Kind::Mm);
  return p;
}

constexpr std::array<int, 5> kFilters = {1, 3, 5, 7, 9};
constexpr std::array<DataPattern, 3> kExtreme = {DataPattern::AllMin, DataPattern::MinMax, DataPattern::AllMax};
// A task's estimated clocks (sram2clk on) may not exceed this; keeps a suite of 240 at a few minutes of RTL.
constexpr std::uint64_t kMaxTaskClocks = 600000;
// Known-good sizes of the thesis (5.1.2): neighbour conv weights of [3,3,3,4] and neighbour mm W_A = 64.
constexpr std::uint64_t kSafeNeighborConvWeightBytes = 3 * 3 * 3 * 4;
constexpr int kSafeNeighborMmWA = 64;

std::uint64_t footprint(const Task& t, const HwConfig& cfg) {
  return static_cast<std::uint64_t>(sram_layout(t, cfg).total_bytes());
}
bool fits(const Task& t, const HwConfig& cfg) {
  return footprint(t, cfg) <= static_cast<std::uint64_t>(cfg.sram_mla_budget_bytes);
}
bool fills(const Task& t, const HwConfig& cfg) {
  // footprint > 90 % of the budget, in integers
  return fits(t, cfg) && footprint(t, cfg) * 10 > static_cast<std::uint64_t>(cfg.sram_mla_budget_bytes) * 9;
}
bool affordable(const Task& t, const HwConfig& cfg) { return estimate_pe_clocks_sram2clk(t, cfg) <= kMaxTaskClocks; }

int draw_not_multiple(Rng& rng, int lo, int hi, int m) {
  for (;;) {
    const int v = rng.range(lo, hi);
    if (v % m != 0) return v;
  }
}

Task make_conv(int Wi, int Hi, int D, int Wf, int Hf, int C) {
  Task t;
  t.op = Op::Conv;
  t.conv = ConvShape{Wi, Hi, D, Wf, Hf, C, 1};
  return t;
}
Task make_mm(int W_A, int H_A, int W_B) {
  Task t;
  t.op = Op::Mm;
  t.mm = MmShape{W_A, H_A, W_B, W_A};
  return t;
}

// A random convolution with a Wf x Hf filter; odd_w: Wi not a multiple of 16, odd_c: C not a multiple of 4.
Task draw_conv(Rng& rng, const HwConfig& cfg, int Wf, int Hf, bool odd_w, bool odd_c) {
  for (;;) {
    const int Wi = odd_w ? draw_not_multiple(rng, std::max(Wf, 2), Wf + 80, 16) : 16 * rng.range((Wf + 15) / 16, 6);
    const int Hi = rng.range(Hf, Hf + 14);
    const int band = rng.range(0, 99);
    const int D = band < 50 ? rng.range(1, 16) : band < 80 ? rng.range(17, 96) : rng.range(97, 256);
    const int C = odd_c ? draw_not_multiple(rng, 1, 11, 4) : 4 * rng.range(1, 3);
    Task t = make_conv(Wi, Hi, D, Wf, Hf, C);
    if (fits(t, cfg) && affordable(t, cfg)) return t;
  }
}

// A random matrix multiplication; odd_w: W_B not a multiple of 16, odd_c: H_A not a multiple of 4.
Task draw_mm(Rng& rng, const HwConfig& cfg, bool odd_w, bool odd_c) {
  for (;;) {
    const int band = rng.range(0, 99);
    const int W_A = band < 50 ? rng.range(1, 32) : band < 80 ? rng.range(33, 128) : rng.range(129, 1024);
    const int H_A = odd_c ? draw_not_multiple(rng, 1, 15, 4) : 4 * rng.range(1, 4);
    const int W_B = odd_w ? draw_not_multiple(rng, 1, 160, 16) : 16 * rng.range(1, 10);
    Task t = make_mm(W_A, H_A, W_B);
    if (fits(t, cfg) && affordable(t, cfg)) return t;
  }
}

// The largest value of a dimension (1 .. hi) for which `make(v)` still fits; 0 if none does.
template <typename Make>
int largest_fitting(const HwConfig& cfg, int hi, Make make) {
  int lo = 0;  // fits (or 0)
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (fits(make(mid), cfg)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// A convolution whose ifmap depth D is as large as the budget allows (footprint > 90 % of it).
Task draw_conv_fill(Rng& rng, const HwConfig& cfg, int f, bool odd_w, bool odd_c) {
  for (;;) {
    const int Wi = odd_w ? draw_not_multiple(rng, std::max(f, 2), 48, 16) : 16 * rng.range(1, 3);
    const int Hi = rng.range(f, f + 10);
    const int C = odd_c ? draw_not_multiple(rng, 1, 7, 4) : 4 * rng.range(1, 2);
    const int D = largest_fitting(cfg, 4096, [&](int d) { return make_conv(Wi, Hi, d, f, f, C); });
    if (D == 0) continue;
    Task t = make_conv(Wi, Hi, D, f, f, C);
    if (fills(t, cfg) && affordable(t, cfg)) return t;
  }
}

// A matrix multiplication whose W_A (= H_B) is as large as the budget allows (footprint > 90 % of it).
Task draw_mm_fill(Rng& rng, const HwConfig& cfg, bool odd_w, bool odd_c) {
  for (;;) {
    const int W_B = odd_w ? draw_not_multiple(rng, 1, 64, 16) : 16 * rng.range(1, 4);
    const int H_A = odd_c ? draw_not_multiple(rng, 1, 7, 4) : 4 * rng.range(1, 2);
    const int W_A = largest_fitting(cfg, 16384, [&](int w) { return make_mm(w, H_A, W_B); });
    if (W_A == 0) continue;
    Task t = make_mm(W_A, H_A, W_B);
    if (fills(t, cfg) && affordable(t, cfg)) return t;
  }
}

// A 9x9 convolution over a 9-row input (one output row) with extreme data and D large enough that every
// accumulator wraps: |product| x 81 x D leaves the 29-bit range [-2^28, 2^28 - 1]. If no such task fits the
// budget (budgets well below the thesis's 96 KB), the deepest 9x9 convolution that fits, with the same data.
Task draw_conv_wrap(Rng& rng, const HwConfig& cfg, DataPattern data) {
  for (;;) {
    const int Wi = rng.range(9, 16);
    const int C = rng.range(1, 4);
    const int d_max = largest_fitting(cfg, 4096, [&](int d) { return make_conv(Wi, 9, d, 9, 9, C); });
    if (d_max == 0) continue;
    // the smallest D that wraps (d_max + 1 if none that fits does)
    int d_min = 1;
    while (d_min <= d_max) {
      Task probe = make_conv(Wi, 9, d_min, 9, 9, C);
      probe.data = data;
      if (extreme_data_wraps(probe, cfg)) break;
      ++d_min;
    }
    Task t = make_conv(Wi, 9, d_min <= d_max ? rng.range(d_min, d_max) : d_max, 9, 9, C);
    t.data = data;
    if (affordable(t, cfg)) return t;
  }
}

std::string a_src_cell(const Task& t) { return a_src_string(t); }

std::uint64_t weight_bytes(const Task& t) {
  return std::uint64_t(t.conv.Wf) * t.conv.Hf * t.conv.D * t.conv.C;
}

bool odd_width(const Task& t) { return t.op == Op::Conv ? t.conv.Wi % 16 != 0 : t.mm.W_B % 16 != 0; }
bool odd_channels(const Task& t) { return t.op == Op::Conv ? t.conv.C % 4 != 0 : t.mm.H_A % 4 != 0; }

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

}  // namespace

std::uint64_t estimate_pe_clocks_sram2clk(const Task& t, const HwConfig& cfg) {
  const std::uint64_t rows = static_cast<std::uint64_t>(cfg.mac_rows);
  const std::uint64_t cols = static_cast<std::uint64_t>(cfg.mac_cols);
  std::uint64_t width = 0, height = 0, groups = 0, steps = 0, b_reads = 0, a_reads = 0;
  if (t.op == Op::Conv) {
    const ConvShape& s = t.conv;
    width = static_cast<std::uint64_t>(s.Wo());
    height = static_cast<std::uint64_t>(s.Ho());
    groups = ceil_div(static_cast<std::uint64_t>(s.C), rows);
    steps = std::uint64_t(s.D) * s.Hf * s.Wf;
    b_reads = std::uint64_t(s.D) * s.Hf * (1 + ceil_div(static_cast<std::uint64_t>(s.Wf - 1), 4));
  } else {
    const MmShape& s = t.mm;
    width = static_cast<std::uint64_t>(s.W_B);
    height = 1;
    groups = ceil_div(static_cast<std::uint64_t>(s.H_A), rows);
    steps = static_cast<std::uint64_t>(s.W_A);
    b_reads = steps;
  }
  a_reads = ceil_div(steps * rows, 16);
  std::uint64_t compute = std::max(steps, 2 * (b_reads + a_reads)) + 10;
  if (t.op == Op::Conv) {
    // operand B is fetched one word at a time and the next input row's first word only once the row starts:
    // about one stall at each row start and one at the first refill; each operand-A read delays B by ~1.5
    const ConvShape& s = t.conv;
    const std::uint64_t per_rows = std::uint64_t(s.D) * s.Hf * (std::uint64_t(s.Wf) + 1 + (s.Wf > 1 ? 1 : 0));
    compute = std::max(compute, per_rows + ceil_div(3 * a_reads, 2) + 10);
  }
  std::uint64_t total = 0;
  for (std::uint64_t x0 = 0; x0 < width; x0 += cols) {
    const std::uint64_t tw = std::min(cols, width - x0);
    const std::uint64_t writes = rows * ceil_div(tw, 4);
    total += 1 + compute + 2 * writes + 1;
  }
  return total * height * groups;
}

bool extreme_data_wraps(const Task& t, const HwConfig& cfg) {
  std::int64_t product = 0;
  switch (t.data) {
    case DataPattern::Random: return false;
    case DataPattern::AllMin: product = 128 * 128; break;
    case DataPattern::AllMax: product = 127 * 127; break;
    case DataPattern::MinMax: product = -128 * 127; break;
  }
  const std::int64_t window = t.op == Op::Conv ? std::int64_t(t.conv.D) * t.conv.Hf * t.conv.Wf : t.mm.W_A;
  const std::int64_t sum = product * window;
  const std::int64_t top = (std::int64_t(1) << (cfg.accumulator_bits - 1)) - 1;
  const std::int64_t bottom = -(std::int64_t(1) << (cfg.accumulator_bits - 1));
  return sum > top || sum < bottom;
}

std::vector<Task> random_suite_tasks(std::uint64_t seed, int count, const HwConfig& cfg) {
  if (count < 0) throw std::invalid_argument("random_suite: count must not be negative");
  if (cfg.sram_mla_budget_bytes < 16 * 1024)
    throw std::invalid_argument("random_suite: the SRAM budget for MLA data must be at least 16 KB");
  Rng rng{SplitMix64{seed ^ 0x5332636f73696dull}};  // "S2cosim": a seed of 0 is fine too
  const std::vector<Kind> pattern = slot_pattern();
  std::vector<Kind> kinds;
  for (int i = 0; i < count; ++i) kinds.push_back(pattern[static_cast<std::size_t>(i) % pattern.size()]);
  for (std::size_t i = kinds.size(); i > 1; --i) {  // Fisher-Yates with our own generator
    const std::size_t j = static_cast<std::size_t>(rng.next() % i);
    std::swap(kinds[i - 1], kinds[j]);
  }

  // Counters that deal the corners round-robin so that every one is covered whatever the draws (the extreme
  // data patterns cycle over the wrap and extreme slots together, 3 per 40-slot pattern).
  int n_conv = 0, n_mm = 0, n_fill = 0, n_wrap = 0, n_extreme = 0;
  auto a_shift = [](int n) {  // local, neighbor:0 .. neighbor:3, decorrelated from the filter cycle
    const int k = (n * 2 + n / 5) % 5;
    return k - 1;  // -1 = local
  };

  std::vector<Task> tasks;
  for (int i = 0; i < count; ++i) {
    const Kind kind = kinds[static_cast<std::size_t>(i)];
    Task t;
    std::string tag;
    switch (kind) {
      case Kind::Conv:
      case Kind::ConvExtreme: {
        const int f = kFilters[static_cast<std::size_t>(n_conv) % kFilters.size()];
        // every 8th convolution has a non-square filter (Hf != Wf)
        int hf = f;
        if (n_conv % 8 == 7) {
          while (hf == f) hf = kFilters[static_cast<std::size_t>(rng.range(0, 2))];
        }
        // (draws in a fixed order: C++ leaves the order of a call's arguments open, and GCC and Clang differ;
        // this is the order the committed suite was generated in)
        const bool odd_c = rng.percent(50), odd_w = rng.percent(55);
        t = draw_conv(rng, cfg, f, hf, odd_w, odd_c);
        if (kind == Kind::ConvExtreme) t.data = kExtreme[static_cast<std::size_t>(n_extreme++) % kExtreme.size()];
        t.a_src_shift = a_shift(n_conv);
        ++n_conv;
        tag = "conv_f" + std::to_string(t.conv.Wf) + "x" + std::to_string(t.conv.Hf);
        break;
      }
      case Kind::Mm:
      case Kind::MmExtreme: {
        const bool odd_c = rng.percent(50), odd_w = rng.percent(55);
        t = draw_mm(rng, cfg, odd_w, odd_c);
        if (kind == Kind::MmExtreme) t.data = kExtreme[static_cast<std::size_t>(n_extreme++) % kExtreme.size()];
        t.a_src_shift = a_shift(n_mm);
        ++n_mm;
        tag = "mm";
        break;
      }
      case Kind::ConvFill: {
        const bool odd_c = rng.percent(50), odd_w = rng.percent(50);
        t = draw_conv_fill(rng, cfg, kFilters[static_cast<std::size_t>(n_fill) % 3], odd_w, odd_c);
        t.a_src_shift = a_shift(n_fill++);
        tag = "conv_fill_f" + std::to_string(t.conv.Wf) + "x" + std::to_string(t.conv.Hf);
        break;
      }
      case Kind::MmFill: {
        const bool odd_c = rng.percent(50), odd_w = rng.percent(50);
        t = draw_mm_fill(rng, cfg, odd_w, odd_c);
        t.a_src_shift = a_shift(n_fill++);
        tag = "mm_fill";
        break;
      }
      case Kind::ConvWrap: {
        t = draw_conv_wrap(rng, cfg, kExtreme[static_cast<std::size_t>(n_extreme++) % kExtreme.size()]);
        t.a_src_shift = a_shift(n_wrap++);
        tag = extreme_data_wraps(t, cfg) ? "conv_wrap_f9x9" : "conv_deep_f9x9";
        break;
      }
    }
    if (t.data != DataPattern::Random) tag += std::string("_") + to_string(t.data);
    // every 8th task runs on one PE only, cycling through the PEs
    t.pe = (i % 8 == 5) ? (i / 8) % kPesPerQpe : -1;
    t.seed = rng.next() >> 33;  // 31 bits: readable by any CSV reader
    std::string id = std::to_string(i);
    while (id.size() < 3) id = "0" + id;
    t.id = "r" + id + "_" + tag;
    if (!fits(t, cfg) || t.mm.W_A != t.mm.H_B) throw std::logic_error("random_suite: drew a task that does not fit");
    tasks.push_back(std::move(t));
  }
  return tasks;
}

std::string random_suite_csv(std::uint64_t seed, int count, const HwConfig& cfg) {
  const std::vector<Task> tasks = random_suite_tasks(seed, count, cfg);

  int conv = 0, mm = 0, all = 0, single = 0, odd_w = 0, odd_c = 0, fill = 0, wraps = 0, non_square = 0;
  int odd_w_conv = 0, odd_w_mm = 0, odd_c_conv = 0, odd_c_mm = 0;
  int filters[10] = {};
  int src[5] = {};  // local, neighbor:0..3
  int pe_single[kPesPerQpe] = {};
  int data[4] = {};  // random, min, max, minmax
  int neighbor_conv_big = 0, neighbor_mm_wide = 0;
  std::uint64_t clocks = 0, max_clocks = 0, max_footprint = 0;
  for (const Task& t : tasks) {
    (t.op == Op::Conv ? conv : mm)++;
    if (t.all_pes()) ++all;
    else {
      ++single;
      ++pe_single[t.pe];
    }
    if (odd_width(t)) {
      ++odd_w;
      (t.op == Op::Conv ? odd_w_conv : odd_w_mm)++;
    }
    if (odd_channels(t)) {
      ++odd_c;
      (t.op == Op::Conv ? odd_c_conv : odd_c_mm)++;
    }
    if (fills(t, cfg)) ++fill;
    if (extreme_data_wraps(t, cfg)) ++wraps;
    if (t.op == Op::Conv) {
      if (t.conv.Wf == t.conv.Hf) ++filters[t.conv.Wf];
      else ++non_square;
      if (t.a_from_neighbor() && weight_bytes(t) > kSafeNeighborConvWeightBytes) ++neighbor_conv_big;
    } else if (t.a_from_neighbor() && t.mm.W_A > kSafeNeighborMmWA) {
      ++neighbor_mm_wide;
    }
    ++src[t.a_src_shift + 1];
    ++data[static_cast<int>(t.data)];
    const std::uint64_t c = estimate_pe_clocks_sram2clk(t, cfg);
    clocks += c;
    max_clocks = std::max(max_clocks, c);
    max_footprint = std::max(max_footprint, footprint(t, cfg));
  }

  const std::int64_t acc_top = (std::int64_t(1) << (cfg.accumulator_bits - 1)) - 1;
  std::ostringstream o;
  o << "# Random task suite, contract-1 task vectors (CSV, version 1).\n"
    << "# Generated by s2::random_suite_csv (harness/stimulus/random_vectors.cpp) with seed " << seed << " and count " << count
    << ",\n# for a " << cfg.mac_shape() << " MAC array and a " << cfg.sram_mla_budget_bytes
    << "-byte SRAM budget for MLA data. Do not edit: regenerate with\n"
    << "#   s2cosim vectors random --seed " << seed << " --count " << count;
  if (cfg.mac_shape() != "16x4") o << " --mac " << cfg.mac_shape();
  o << "\n# (the same seed gives the same file on every machine; tests/random_vectors_test.cpp checks it).\n"
    << "#\n# Coverage (tasks):\n"
    << "#   op: conv " << conv << ", mm " << mm << "\n"
    << "#   pe: all " << all << ", single " << single << " (pe 0: " << pe_single[0] << ", 1: " << pe_single[1]
    << ", 2: " << pe_single[2] << ", 3: " << pe_single[3] << ")\n"
    << "#   a_src: local " << src[0] << ", neighbor:0 " << src[1] << ", neighbor:1 " << src[2] << ", neighbor:2 "
    << src[3] << ", neighbor:3 " << src[4] << "\n"
    << "#   width not a multiple of 16 (conv Wi, mm W_B): " << odd_w << " (conv " << odd_w_conv << ", mm " << odd_w_mm
    << ")\n"
    << "#   channels not a multiple of 4 (conv C, mm H_A): " << odd_c << " (conv " << odd_c_conv << ", mm "
    << odd_c_mm << ")\n"
    << "#   conv filters: 1x1 " << filters[1] << ", 3x3 " << filters[3] << ", 5x5 " << filters[5] << ", 7x7 "
    << filters[7] << ", 9x9 " << filters[9] << ", non-square " << non_square << "\n"
    << "#   footprint > 90% of the SRAM budget: " << fill << " (largest " << max_footprint << " bytes)\n"
    << "#   data: random " << data[0] << ", min " << data[1] << ", max " << data[2] << ", minmax " << data[3] << "\n"
    << "#   accumulators wrap the " << cfg.accumulator_bits << "-bit range: " << wraps
    << " (extreme data: every product is min 16384, max 16129,\n"
    << "#     minmax -16256, so an output sums product x D*Hf*Wf (conv) or x W_A (mm); it wraps above " << acc_top
    << "\n#     or below " << -acc_top - 1 << ". E.g. conv 9x9, min data, D = 203: 16384*81*203 = 269402112 wraps to "
    << "-267468800.\n#     An mm would need W_A > 16384, which no budget-sized task has.)\n"
    << "#   beyond the thesis's known-good neighbour sizes (thesis 5.1.2; may stop early or hang with those flaws on):\n"
    << "#     neighbour conv with weights > " << kSafeNeighborConvWeightBytes << " bytes: " << neighbor_conv_big
    << ", neighbour mm with W_A > " << kSafeNeighborMmWA << ": " << neighbor_mm_wide << "\n"
    << "# Estimated QPE clocks with the sram2clk flaw on (estimate_pe_clocks_sram2clk): total " << clocks
    << ", largest task " << max_clocks << ".\n"
    << "# Extra columns, ignored by the reader: sram_bytes (footprint in one PE after alignment) and\n"
    << "# est_clocks_sram2clk.\n";
  o << "id,op,pe,Wi,Hi,D,Wf,Hf,C,stride,W_A,H_A,W_B,H_B,a_src,seed,data,sram_bytes,est_clocks_sram2clk\n";
  for (const Task& t : tasks) {
    o << t.id << ',' << to_string(t.op) << ',' << (t.all_pes() ? std::string("all") : std::to_string(t.pe)) << ',';
    if (t.op == Op::Conv) {
      const ConvShape& s = t.conv;
      o << s.Wi << ',' << s.Hi << ',' << s.D << ',' << s.Wf << ',' << s.Hf << ',' << s.C << ',' << s.stride
        << ",,,,,";
    } else {
      const MmShape& s = t.mm;
      o << ",,,,,,," << s.W_A << ',' << s.H_A << ',' << s.W_B << ',' << s.H_B << ',';
    }
    o << a_src_cell(t) << ',' << t.seed << ',' << to_string(t.data) << ',' << footprint(t, cfg) << ','
      << estimate_pe_clocks_sram2clk(t, cfg) << '\n';
  }
  return o.str();
}

}  // namespace s2
