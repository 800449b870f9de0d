#include "model/task.h"

#include <algorithm>

namespace s2 {

std::vector<int> Task::pes() const {
  if (pe >= 0) return {pe};
  std::vector<int> all;
  for (int p = 0; p < kPesPerQpe; ++p) all.push_back(p);
  return all;
}

std::uint64_t Task::macs_per_pe() const {
  if (op == Op::Conv) {
    return std::uint64_t(conv.Wo()) * conv.Ho() * conv.C * conv.D * conv.Hf * conv.Wf;
  }
  return std::uint64_t(mm.W_A) * mm.H_A * mm.W_B;
}

const char* to_string(Op op) { return op == Op::Conv ? "conv" : "mm"; }

const char* to_string(DataPattern p) {
  switch (p) {
    case DataPattern::Random: return "random";
    case DataPattern::AllMin: return "min";
    case DataPattern::AllMax: return "max";
    case DataPattern::MinMax: return "minmax";
  }
  return "?";
}

std::string a_src_string(const Task& t) {
  return t.a_src_shift < 0 ? std::string("local") : "neighbor:" + std::to_string(t.a_src_shift);
}

std::uint64_t mla_work_cycles(const Task& t, const HwConfig& cfg) {
  const std::uint64_t rows = static_cast<std::uint64_t>(std::max(cfg.mac_rows, 1));
  const std::uint64_t cols = static_cast<std::uint64_t>(std::max(cfg.mac_cols, 1));
  auto ceil_div = [](std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; };
  auto u = [](int v) { return static_cast<std::uint64_t>(std::max(v, 0)); };
  std::uint64_t steps = 0, writes = 0;
  if (t.op == Op::Conv) {
    const ConvShape& s = t.conv;
    const std::uint64_t wo = u(s.Wo()), ho = u(s.Ho()), groups = ceil_div(u(s.C), rows);
    steps = ceil_div(wo, cols) * ho * groups * u(s.D) * u(s.Hf) * u(s.Wf);
    writes = groups * rows * ho * ceil_div(wo, 4);
  } else {
    const MmShape& s = t.mm;
    const std::uint64_t tiles = ceil_div(u(s.W_B), cols) * ceil_div(u(s.H_A), rows);
    steps = tiles * u(s.W_A);
    writes = tiles * rows * ceil_div(cols, 4);
  }
  return std::max(steps + writes, t.macs_per_pe() / (rows * cols));
}

}  // namespace s2
