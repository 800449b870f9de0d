#include "model/pe/pe_registers.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace s2 {

Task task_from_registers(const TaskRegisters& r, int pe) {
  Task t;
  t.id = "pe" + std::to_string(pe);
  t.op = (r[qpe_addr::kOp] & 1) ? Op::Mm : Op::Conv;
  const int wi = static_cast<int>(r[qpe_addr::kWi]), hi = static_cast<int>(r[qpe_addr::kHi]);
  const int d = static_cast<int>(r[qpe_addr::kD]);
  if (t.op == Op::Conv) {
    t.conv = {wi, hi, d, static_cast<int>(r[qpe_addr::kWf]), static_cast<int>(r[qpe_addr::kHf]),
              static_cast<int>(r[qpe_addr::kC]), 1};
  } else {
    t.mm = {wi, hi, d, wi};
  }
  t.b_plane_rows = static_cast<int>(r[qpe_addr::kBPlaneRows]);
  const bool via_noc = (r[qpe_addr::kASrc] >> 2) & 1;
  const int src = static_cast<int>(r[qpe_addr::kASrc] & 3);
  // a convolution's operand A always goes through the NoC; "local" and neighbour shift 0 are the same
  t.a_src_shift = via_noc ? (src - pe + kPesPerQpe) % kPesPerQpe : -1;
  if (t.op == Op::Conv && t.a_src_shift == 0) t.a_src_shift = -1;
  return t;
}

TaskRegisters task_registers(const Task& t, int pe, const SramLayout& l) {
  const bool mm = t.op == Op::Mm;
  // a convolution's operand A always goes through the NoC, as does a neighbour's
  const std::uint32_t via_noc = (!mm || t.a_from_neighbor()) ? 4u : 0u;
  TaskRegisters r{};
  r[qpe_addr::kOp] = mm ? 1u : 0u;
  r[qpe_addr::kWi] = static_cast<std::uint32_t>(mm ? t.mm.W_A : t.conv.Wi);
  r[qpe_addr::kHi] = static_cast<std::uint32_t>(mm ? t.mm.H_A : t.conv.Hi);
  r[qpe_addr::kD] = static_cast<std::uint32_t>(mm ? t.mm.W_B : t.conv.D);
  r[qpe_addr::kWf] = static_cast<std::uint32_t>(mm ? 1 : t.conv.Wf);
  r[qpe_addr::kHf] = static_cast<std::uint32_t>(mm ? 1 : t.conv.Hf);
  r[qpe_addr::kC] = static_cast<std::uint32_t>(mm ? 0 : t.conv.C);
  r[qpe_addr::kABase] = l.a_base;
  r[qpe_addr::kBBase] = l.b_base;
  r[qpe_addr::kOBase] = l.o_base;
  r[qpe_addr::kASrc] = via_noc | static_cast<std::uint32_t>(t.a_source_pe(pe));
  r[qpe_addr::kBPlaneRows] = mm ? 0u : static_cast<std::uint32_t>(t.b_plane_rows);
  return r;
}

std::vector<RegisterWrite> mla_register_writes(const TaskRegisters& r) {
  std::vector<RegisterWrite> w;
  for (int i = 0; i < qpe_addr::kStart; ++i) w.push_back({i, r[static_cast<std::size_t>(i)]});
  // one-shot: written only when used (it reads 0 again after every start)
  if (r[qpe_addr::kBPlaneRows] != 0) w.push_back({qpe_addr::kBPlaneRows, r[qpe_addr::kBPlaneRows]});
  w.push_back({qpe_addr::kStart, 1});
  return w;
}

namespace {
std::uint32_t dma_start_word(bool store, const NocNode* far_end) {
  std::uint32_t w = store ? 1u : 0u;
  if (!far_end) return w;
  if (far_end->x < 0 || far_end->x > 15 || far_end->y < 0 || far_end->y > 15 || far_end->port < 0 || far_end->port > 7)
    throw std::out_of_range("DMA far end beyond the NoC's node field (x, y 0..15, port 0..7)");
  return w | 2u | (noc_node_bits(*far_end) << 2);
}
}  // namespace

std::vector<RegisterWrite> dma_register_writes(const DmaTransfer& t, bool store, const NocNode* far_end) {
  if (t.dram_addr + t.bytes() > (1ull << 32) || t.dram_row_stride >= (1ull << 32) || t.dram_plane_stride >= (1ull << 32))
    throw std::out_of_range("DMA transfer beyond the 32-bit DRAM address space the DMA registers hold");
  return {{kDmaDramAddr, static_cast<std::uint32_t>(t.dram_addr)},
          {kDmaDramRowStride, static_cast<std::uint32_t>(t.dram_row_stride)},
          {kDmaDramPlaneStride, static_cast<std::uint32_t>(t.dram_plane_stride)},
          {kDmaSramAddr, t.sram_addr},
          {kDmaSramRowStride, t.sram_row_stride},
          {kDmaSramPlaneStride, t.sram_plane_stride},
          {kDmaRowBytes, t.row_bytes},
          {kDmaRows, t.rows},
          {kDmaPlanes, t.planes},
          {kDmaStart, dma_start_word(store, far_end)}};
}

SramLayout stream_mla_layout(const StreamCommand& c, const HwConfig& cfg, std::size_t sram_bytes) {
  SramLayout l = sram_layout(c.mla, cfg);
  l.a_base = c.a_base;
  l.b_base = c.b_base;
  l.o_base = c.o_base;
  if (std::max({l.a_base + l.a_bytes, l.b_base + l.b_bytes, l.o_base + l.o_bytes}) > sram_bytes)
    throw std::out_of_range("MLA task of " + c.operation + " reaches beyond the SRAM");
  return l;
}

}  // namespace s2
