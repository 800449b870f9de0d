// Splitter validation (thesis 5.1.1): computes a block's core operation whole and piece by piece with the
// int8 golden kernels on seeded data, recombines the pieces (partial sums of split input channels or of
// a split weight height added with the accumulator's wrap) and compares every result exactly.
#pragma once

#include <cstdint>
#include <string>

#include "parser.h"
#include "splitter.h"

namespace s2::mapper {

struct SplitCheck {
  bool exact = false;
  std::uint64_t pieces = 0;          // pieces computed
  std::uint64_t results = 0;         // results compared
  std::string first_difference;      // "" if exact
};

SplitCheck check_split(const OperationBlock& b, const BlockSplit& s, std::uint64_t seed, int accumulator_bits = 29);

}  // namespace s2::mapper
