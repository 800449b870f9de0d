#include "stream_commands.h"

namespace s2::mapper {

std::string op_name(const OperationBlock& b, PrimitiveKind k) {
  const Operation* o = find_op(b, k);
  return o ? o->name : b.name();
}

int quant_shift(const OperationBlock& b, int K) {
  const Operation* q = find_op(b, PrimitiveKind::Quantization);
  if (q && q->shift >= 0) return q->shift;
  return test_data_shift(K);
}

Task mm_task(const MmShape& shape) {
  Task t;
  t.op = Op::Mm;
  t.mm = shape;
  return t;
}

DmaTransfer bias_slice(const BlockDramMap& m, int first, int count, std::uint32_t sram_addr) {
  DmaTransfer t;
  t.dram_addr = m.bias + 4 * static_cast<std::uint64_t>(first);
  t.sram_addr = sram_addr;
  t.row_bytes = static_cast<std::uint32_t>(4 * count);
  return t;
}

std::uint32_t bias_slice_bytes(const Operation& core, int count) {
  return core.bias ? static_cast<std::uint32_t>(align_up(4 * static_cast<std::uint64_t>(count), 16)) : 0;
}

DmaTransfer shift_slice(const BlockDramMap& m, int first, int count, std::uint32_t sram_addr) {
  DmaTransfer t;
  t.dram_addr = m.shifts + static_cast<std::uint64_t>(first);
  t.sram_addr = sram_addr;
  t.row_bytes = static_cast<std::uint32_t>(count);
  return t;
}

bool per_channel_shifts(const OperationBlock& b) {
  const Operation* q = find_op(b, PrimitiveKind::Quantization);
  return q && q->shifts;
}

std::uint32_t shift_slice_bytes(const OperationBlock& b, int count) {
  return per_channel_shifts(b) ? static_cast<std::uint32_t>(align_up(static_cast<std::uint64_t>(count), 16)) : 0;
}

TaskStream new_stream(const std::string& name, const BlockDramMap& m, const Workers& w) {
  TaskStream t;
  t.name = name;
  t.dram_bytes = m.total;
  t.pe.assign(static_cast<std::size_t>(w.chip_pes), {});
  return t;
}

}  // namespace s2::mapper
