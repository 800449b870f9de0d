// The task the QPE hardware accepts in its validation setup (contract 1 in docs/contracts.md): one MLA
// convolution or matrix multiplication, on one PE or on all four at once, data already in SRAM.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/hw_config.h"

namespace s2 {

inline constexpr int kPesPerQpe = 4;

enum class Op { Conv, Mm };

// input [Wi,Hi,D], filter [Wf,Hf,D,C], stride (the MLA runs stride 1 only)
struct ConvShape {
  int Wi = 0, Hi = 0, D = 0, Wf = 0, Hf = 0, C = 0, stride = 1;
  int Wo() const { return Wi - Wf + 1; }
  int Ho() const { return Hi - Hf + 1; }
};

// A is [W_A, H_A] (W_A columns, H_A rows), B is [W_B, H_B]; W_A = H_B; C = A x B is [W_B, H_A]
struct MmShape {
  int W_A = 0, H_A = 0, W_B = 0, H_B = 0;
};

// How the seeded int8 test data is drawn.
enum class DataPattern {
  Random,  // uniform over [-128, 127]
  AllMin,  // every operand -128: products +16384, accumulators climb to the top of their range
  AllMax,  // every operand 127
  MinMax,  // operand A -128, operand B 127: products -16256, accumulators fall to the bottom
};

struct Task {
  std::string id;
  Op op = Op::Conv;
  int pe = -1;           // -1: the same task on all 4 PEs at once; else 0..3
  ConvShape conv;
  MmShape mm;
  int a_src_shift = -1;  // -1: operand A from the PE's own SRAM; S >= 0: PE i reads PE (i+S) mod 4
  // conv: operand-B rows from one input plane to the next in SRAM (0 = Hi, the planes packed). Larger, a
  // task reads an Hi-row band of a taller window in place: a strided convolution's one-output-row tasks.
  int b_plane_rows = 0;
  std::uint64_t seed = 1;
  DataPattern data = DataPattern::Random;
  // clocks the thesis measured for this task (Tables 5.1-5.4), 0 = not given: the HDL prototype (with the
  // 2-clock SRAM flaw) and the thesis's simulator SpiNNaker2Py
  std::uint64_t thesis_hdl_clocks = 0;
  std::uint64_t thesis_sim_clocks = 0;
  // where the task came from, for error messages
  std::string source_file;
  int source_line = 0;

  bool all_pes() const { return pe < 0; }
  std::vector<int> pes() const;
  int a_source_pe(int p) const { return a_src_shift < 0 ? p : (p + a_src_shift) % kPesPerQpe; }
  bool a_from_neighbor() const { return a_src_shift >= 0; }
  // MAC-array steps of the task on one PE (ignoring alignment), for budgets and reports
  std::uint64_t macs_per_pe() const;
};

const char* to_string(Op op);
const char* to_string(DataPattern p);
// "local" or "neighbor:S"
std::string a_src_string(const Task& t);

// A lower bound on the PE clocks a task takes on one PE: MLA compute steps (per tile: D*Hf*Wf for conv,
// W_A for mm, at least one step per tile however narrow) plus result writes. Never smaller than
// macs_per_pe() / (MAC units).
std::uint64_t mla_work_cycles(const Task& t, const HwConfig& cfg);

}  // namespace s2
