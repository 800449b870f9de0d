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

StreamCommand dma(CommandKind k, const std::string& op, const DmaTransfer& t) {
  StreamCommand c;
  c.kind = k;
  c.operation = op;
  c.dma = t;
  return c;
}
StreamCommand arm(const std::string& op, const ArmCommand& a) {
  StreamCommand c;
  c.kind = CommandKind::Arm;
  c.operation = op;
  c.arm = a;
  return c;
}
StreamCommand sync() { return StreamCommand{}; }

StreamCommand mla(const std::string& op, const Task& t, std::uint32_t a_base, std::uint32_t b_base, std::uint32_t o_base) {
  StreamCommand c;
  c.kind = CommandKind::Mla;
  c.operation = op;
  c.mla = t;
  c.a_base = a_base;
  c.b_base = b_base;
  c.o_base = o_base;
  return c;
}

Task mm_task(const MmShape& shape) {
  Task t;
  t.op = Op::Mm;
  t.mm = shape;
  return t;
}

TaskStream new_stream(const std::string& name, const BlockDramMap& m, const Workers& w) {
  TaskStream t;
  t.name = name;
  t.dram_bytes = m.total;
  t.pe.assign(static_cast<std::size_t>(w.chip_pes), {});
  return t;
}

}  // namespace s2::mapper
