#include "model/sram_layout.h"

namespace s2 {

AlignedSizes conv_aligned_sizes(const ConvShape& s, int rows) {
  AlignedSizes z;
  z.operand_b_bytes = std::uint64_t(align_up(s.Wi, 16)) * s.Hi * s.D;
  z.operand_a_bytes = align_up(std::uint64_t(s.Wf) * s.Hf * s.D * align_up(s.C, rows), 16);
  z.result_bytes = std::uint64_t(align_up(s.Wo(), 4)) * s.Ho() * s.C * 4;
  return z;
}

AlignedSizes mm_aligned_sizes(const MmShape& s, int rows) {
  AlignedSizes z;
  z.operand_a_bytes = std::uint64_t(align_up(s.W_A, 4)) * align_up(s.H_A, rows);
  z.operand_b_bytes = std::uint64_t(align_up(s.W_B, 16)) * align_up(s.H_B, 4);
  z.result_bytes = std::uint64_t(align_up(s.W_B, 16)) * align_up(s.H_A, rows) * 4;
  return z;
}

SramLayout sram_layout(const Task& t, const HwConfig& cfg) {
  const int rows = cfg.mac_rows;
  SramLayout l;
  if (t.op == Op::Conv) {
    const ConvShape& s = t.conv;
    const std::uint64_t groups = (s.C + rows - 1) / rows;
    const int plane_rows = t.b_plane_rows > 0 ? t.b_plane_rows : s.Hi;
    l.b_row_stride = align_up(s.Wi, 16);
    l.b_plane_stride = l.b_row_stride * plane_rows;
    l.b_bytes = l.b_plane_stride * (s.D - 1) + l.b_row_stride * s.Hi;
    l.a_group_stride = align_up(std::uint64_t(s.D) * s.Hf * s.Wf * rows, 16);
    l.a_bytes = static_cast<std::uint32_t>(l.a_group_stride * groups);
    l.o_row_stride = align_up(s.Wo(), 4);
    l.o_bytes = static_cast<std::uint32_t>(std::uint64_t(l.o_row_stride) * s.Ho() * groups * rows * 4);
  } else {
    const MmShape& s = t.mm;
    const std::uint64_t groups = (s.H_A + rows - 1) / rows;
    l.b_row_stride = align_up(s.W_B, 16);
    l.b_bytes = static_cast<std::uint32_t>(std::uint64_t(l.b_row_stride) * align_up(s.H_B, 4));
    l.a_group_stride = align_up(std::uint64_t(s.W_A) * rows, 16);
    l.a_bytes = static_cast<std::uint32_t>(l.a_group_stride * groups);
    l.o_row_stride = align_up(s.W_B, 16);
    l.o_bytes = static_cast<std::uint32_t>(std::uint64_t(l.o_row_stride) * groups * rows * 4);
  }
  l.b_base = 0;
  l.a_base = align_up(l.b_base + l.b_bytes, 16);
  l.o_base = align_up(std::uint64_t(l.a_base) + l.a_bytes, 16);
  return l;
}

}  // namespace s2
