// Seeded test data and the golden int8 kernels every backend is checked against.
// The accumulator is a 29-bit two's-complement register that wraps (thesis 2.3.2: 29-bit MAC outputs; rtl_stubs/README.md, mla.sv); the stored
// 32-bit result is its sign extension. Golden, RTL and model all follow exactly this rule.
#pragma once

#include <cstdint>
#include <vector>

#include "model/hw_config.h"
#include "model/sram_layout.h"
#include "model/task.h"

namespace s2 {

// Operands of one PE in logical order.
//   conv: a = filters [C][D][Hf][Wf], b = ifmap [D][Hi][Wi]
//   mm:   a = A [H_A][W_A] (row i, column k), b = B [H_B][W_B] (row k, column j)
struct PeOperands {
  std::vector<std::int8_t> a;
  std::vector<std::int8_t> b;
};

// The data PE `pe` holds for `t`: depends only on (seed, pe, shape, pattern), on every machine.
PeOperands make_operands(const Task& t, int pe);

// Wraps a sum (taken modulo 2^32) to a `bits`-bit two's-complement value, sign-extended to 32 bits.
std::int32_t wrap_accumulator(std::uint32_t sum, int bits);

// How the golden kernels compute: the scalar reference, which runs on any CPU, or a vector path of the same
// arithmetic (int16 pair multiply-adds, sums modulo 2^32, then the wrap), result for result the same.
enum class GoldenKernel { Scalar, Avx2, Avx512Vnni };
const char* golden_kernel_name(GoldenKernel k);
// The kernels this CPU runs, the scalar one first and the fastest last.
const std::vector<GoldenKernel>& golden_kernels();

// conv: ofmap [C][Ho][Wo] at the shape's stride (the MLA's tasks all have stride 1); mm: C [H_A][W_B]. `a` may come from another PE than `b` (operand-A source).
// Without a kernel: the fastest this CPU runs where operand B's values take part in at least kVectorMinUses products
// each, else the scalar one (a vector times a matrix: the vector path's packing of B would cost more than it saves).
// A kernel this CPU does not run (not in golden_kernels()) throws std::invalid_argument.
constexpr int kVectorMinUses = 32;
std::vector<std::int32_t> golden_conv(const ConvShape& s, const std::vector<std::int8_t>& filters,
                                      const std::vector<std::int8_t>& ifmap, int accumulator_bits);
std::vector<std::int32_t> golden_conv(const ConvShape& s, const std::vector<std::int8_t>& filters,
                                      const std::vector<std::int8_t>& ifmap, int accumulator_bits, GoldenKernel kernel);
std::vector<std::int32_t> golden_mm(const MmShape& s, const std::vector<std::int8_t>& a,
                                    const std::vector<std::int8_t>& b, int accumulator_bits);
std::vector<std::int32_t> golden_mm(const MmShape& s, const std::vector<std::int8_t>& a,
                                    const std::vector<std::int8_t>& b, int accumulator_bits, GoldenKernel kernel);
// The scalar reference kernels: one multiply-add at a time, in the order the loops say.
std::vector<std::int32_t> golden_conv_scalar(const ConvShape& s, const std::vector<std::int8_t>& filters,
                                             const std::vector<std::int8_t>& ifmap, int accumulator_bits);
std::vector<std::int32_t> golden_mm_scalar(const MmShape& s, const std::vector<std::int8_t>& a,
                                           const std::vector<std::int8_t>& b, int accumulator_bits);
// The golden results of PE `pe` for task `t`, operands as make_operands gives them.
std::vector<std::int32_t> golden_results(const Task& t, int pe, const std::vector<PeOperands>& operands,
                                         const HwConfig& cfg);

// The image of a PE's SRAM (bytes 0 .. layout.total_bytes()) holding its operands at the layout's places.
std::vector<std::uint8_t> pack_sram_image(const Task& t, const HwConfig& cfg, const SramLayout& l,
                                          const PeOperands& ops);
// Reads the results back from an SRAM image into logical order (as golden_results returns them).
std::vector<std::int32_t> unpack_results(const Task& t, const HwConfig& cfg, const SramLayout& l,
                                         const std::uint8_t* sram, std::size_t sram_size);
// Number of results per PE (logical), and the (row, column) a flat logical index stands for:
// conv: row = c*Ho + y, column = x; mm: row = i, column = j.
std::size_t result_count(const Task& t);
struct ResultPos {
  int row = 0;
  int column = 0;
};
ResultPos result_position(const Task& t, std::size_t index);
// The MLA tile (in the MLA's loop order) that computes logical result `index`, for mismatch reports.
std::uint64_t result_tile(const Task& t, const HwConfig& cfg, std::size_t index);

}  // namespace s2
