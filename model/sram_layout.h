// Where a task's operands and results sit in a PE's SRAM, and the alignment rules of thesis
// equations 2.5 (convolution) and 2.6 (matrix multiplication). RTL and model use the same layout.
//
// Convolution (ROWS = MAC rows):
//   ifmap  (operand B) byte (d, y, x)        at b_base + (d*Hi + y)*align16(Wi) + x
//   filters (operand A) byte (c, d, ky, kx)  at a_base + g*align16(D*Hf*Wf*ROWS) + ((d*Hf + ky)*Wf + kx)*ROWS + r,
//                                            g = c / ROWS, r = c % ROWS (filters zero-padded to align_rows(C))
//   ofmap  int32 (c, y, x)                   at o_base + ((c*Ho + y)*align4(Wo) + x)*4, c < align_rows(C)
// Matrix multiplication A[W_A,H_A] x B[W_B,H_B]:
//   A (operand A) byte (i, k)                at a_base + (i/ROWS)*align16(W_A*ROWS) + k*ROWS + i%ROWS
//   B (operand B) byte (k, j)                at b_base + k*align16(W_B) + j
//   C int32 (i, j)                           at o_base + (i*align16(W_B) + j)*4, i < align_rows(H_A)
// Each filter group / row group of operand A starts on a 128-bit word; with ROWS = 4 this is exactly
// equation 2.6, and for a convolution with C <= ROWS exactly equation 2.5.
#pragma once

#include <cstdint>

#include "model/hw_config.h"
#include "model/task.h"

namespace s2 {

inline constexpr std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

// Sizes in bytes after alignment, as equations 2.5 / 2.6 define them (int8 operands, int32 results).
struct AlignedSizes {
  std::uint64_t operand_a_bytes = 0;  // filters | matrix A
  std::uint64_t operand_b_bytes = 0;  // ifmap   | matrix B
  std::uint64_t result_bytes = 0;     // ofmap   | matrix C (32 bits per result)
  std::uint64_t total() const { return operand_a_bytes + operand_b_bytes + result_bytes; }
};
AlignedSizes conv_aligned_sizes(const ConvShape& s, int mac_rows);  // equation 2.5
AlignedSizes mm_aligned_sizes(const MmShape& s, int mac_rows);      // equation 2.6

struct SramLayout {
  std::uint32_t b_base = 0, b_bytes = 0;  // operand B: ifmap | matrix B
  std::uint32_t a_base = 0, a_bytes = 0;  // operand A: filters | matrix A
  std::uint32_t o_base = 0, o_bytes = 0;  // results
  std::uint32_t a_group_stride = 0;       // bytes per filter group / row group of operand A
  std::uint32_t b_row_stride = 0;         // bytes per operand-B row
  std::uint32_t b_plane_stride = 0;       // conv: bytes per operand-B input plane
  std::uint32_t o_row_stride = 0;         // results per output row
  std::uint32_t total_bytes() const { return o_base + o_bytes; }
};
// The placement of `t` in every PE's SRAM (the same addresses on all PEs): B, then A, then results.
SramLayout sram_layout(const Task& t, const HwConfig& cfg);

}  // namespace s2
