#include "model/task.h"

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

}  // namespace s2
