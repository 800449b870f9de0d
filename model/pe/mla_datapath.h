// The MLA's functional datapath in the model: the results of one task, output row by output row, from
// the SRAM images of operand A and operand B (int8, accumulators wrapping at the configured width). It
// knows nothing of time: the MLA (mla.h) writes each row into SRAM when the schedule says it is done.
//
// How it computes (bit-exact with golden.h, not a copy of it): two MAC steps at a time. Operand-B values
// of two steps are interleaved once per task as int16 pairs (v0, v1), each MAC row's two weights form
// one int16 pair (w0, w1), and one pairwise multiply-add gives w0*v0 + w1*v1 per output (exact:
// |sum| <= 2*128*128). A block of outputs keeps its accumulators in vector registers over all of a
// row's steps; accumulation is modulo 2^32 like the adders', the wrap to the accumulator width is
// applied when a result is stored.
#pragma once

#include <cstdint>
#include <vector>

#include "model/hw_config.h"
#include "model/sram_layout.h"
#include "model/task.h"

namespace s2 {

struct ResultWrite {
  std::uint32_t byte;   // SRAM byte address of the 32-bit result
  std::uint32_t value;  // result wrapped to the accumulator width, sign-extended
};

class MlaDatapath {
 public:
  // Takes the task's operands: `a` is the SRAM image holding operand A, `b` the PE's own (operand B).
  // Both must stay valid until the last compute_row.
  void load(const Task& t, const SramLayout& l, const HwConfig& cfg, const std::uint8_t* a, const std::uint8_t* b);
  // results of output row `r` (conv: filter group r / Ho, output row r % Ho; mm: row group r)
  void compute_row(std::uint64_t r, std::vector<ResultWrite>& writes);

 private:
  void load_conv_weights(std::uint64_t group);

  Task task_;
  SramLayout layout_;
  int mac_rows_ = 0;
  int accumulator_bits_ = 0;
  const std::uint8_t* a_ = nullptr;
  std::size_t pair_row_stride_ = 0;    // int16 values per interleaved operand-B row (padded for vector reads)
  std::vector<std::int16_t> pairs_;    // operand B, two rows (conv: two channels; mm: two rows) interleaved
  std::vector<std::uint32_t> weights_;  // weight pairs per step and MAC row (conv: one filter group)
  std::uint64_t weights_group_ = ~0ull;
  std::vector<std::uint32_t> step_offsets_;   // per step pair: where its operand-B values start (from row 0)
  std::vector<std::uint32_t> acc_;             // MAC rows x width accumulators of one output row
};

}  // namespace s2
