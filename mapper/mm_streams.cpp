#include "mm_streams.h"

#include <algorithm>
#include <stdexcept>

#include "stream_commands.h"

namespace s2::mapper {

namespace {

void mm_load(std::vector<StreamCommand>& out, const MmPlan& p, int iw, int ih) {
  const MmPiece mp = mm_piece(*p.b, *p.s, iw, ih);
  const SramLayout l = sram_layout(mm_task(mp.task), p.cfg);
  // the input vector's part, already in the MLA's operand-A layout (one byte per MAC row per value)
  const std::uint64_t rows = static_cast<std::uint64_t>(p.cfg.mac_rows);
  DmaTransfer a;
  a.dram_addr = p.map.input + std::uint64_t(mp.row0) * rows;
  a.sram_addr = p.a_base;
  a.row_bytes = static_cast<std::uint32_t>(std::uint64_t(mp.task.W_A) * rows);
  out.push_back(dma_command(CommandKind::DmaLoad, p.core, a));
  DmaTransfer w;
  w.dram_addr = p.map.weights + p.piece_offset[static_cast<std::size_t>(iw * p.s->h.count() + ih)];
  w.sram_addr = p.b_base;
  w.row_bytes = l.b_bytes;
  out.push_back(dma_command(CommandKind::DmaLoad, p.core, w));
}

ArmCommand row_op(ArmOpKind k, std::uint32_t src, std::uint32_t dst, int width) {
  ArmCommand a;
  a.kind = k;
  a.src = src;
  a.dst = dst;
  a.width = static_cast<std::uint32_t>(width);
  a.src_row_stride = a.dst_row_stride = static_cast<std::uint32_t>(width * 4);
  return a;
}

// The layer's bias on the first pass over a column part's int32 sums (its ReLU, else its QUAN): the DMA
// loads the part's slice of it, which the ARM then adds.
void mm_bias(std::vector<StreamCommand>& out, const std::string& op, ArmCommand& a, const MmPlan& p, int col0, int width) {
  if (!p.b->core_op().bias) return;
  out.push_back(dma_command(CommandKind::DmaLoad, op, bias_slice(p.map, col0, width, p.bias_base)));
  a.add_bias = true;
  a.bias_addr = p.bias_base;
  a.bias_col_step = 1;
}

// The column part's QUAN (with the bias when no ReLU came first), after any command it needs.
void mm_quantize(std::vector<StreamCommand>& out, const MmPlan& p, std::uint32_t acc, int col0, int width) {
  ArmCommand q = row_op(ArmOpKind::Quantize, acc, acc, width);
  q.dst_row_stride = static_cast<std::uint32_t>(width);
  q.shift = p.shift;
  q.saturate_high = p.saturate_high;
  if (!p.relu) mm_bias(out, p.quan, q, p, col0, width);
  if (per_channel_shifts(*p.b)) {  // a shift per column: the DMA loads the part's slice of them
    out.push_back(dma_command(CommandKind::DmaLoad, p.quan, shift_slice(p.map, col0, width, p.shift_base)));
    q.per_channel_shift = true;
    q.shift_addr = p.shift_base;
    q.bias_col_step = 1;
  }
  out.push_back(arm_command(p.quan, q));
}

// The column part's ReLU with the bias, after the bias's load.
void mm_relu(std::vector<StreamCommand>& out, const MmPlan& p, std::uint32_t acc, int col0, int width) {
  ArmCommand a = row_op(ArmOpKind::Relu32, acc, acc, width);
  mm_bias(out, p.acti, a, p, col0, width);
  out.push_back(arm_command(p.acti, a));
}

void mm_finish(std::vector<StreamCommand>& out, const MmPlan& p, std::uint32_t acc, int col0, int width) {
  if (p.relu) mm_relu(out, p, acc, col0, width);
  mm_quantize(out, p, acc, col0, width);
  DmaTransfer o;
  o.sram_addr = acc;
  o.dram_addr = p.map.output + static_cast<std::uint64_t>(col0);
  o.row_bytes = static_cast<std::uint32_t>(width);
  out.push_back(dma_command(CommandKind::DmaStore, p.quan, o));
}

}  // namespace

MmPlan mm_plan(const OperationBlock& b, const BlockSplit& s, const HwConfig& cfg, bool nofuse) {
  MmPlan p;
  p.workers = workers_of(cfg, b.workers);
  p.b = &b;
  p.s = &s;
  p.cfg = cfg;
  p.W_B = static_cast<int>(b.core_op().out.elements());
  p.H_B = static_cast<int>(b.core_op().in.elements());
  p.core = b.name();
  p.fce = "FCE_" + std::to_string(b.core_op().layer);
  p.relu = find_op(b, PrimitiveKind::ReLU) != nullptr;  // the network's last FC has none
  p.acti = op_name(b, PrimitiveKind::ReLU);
  p.quan = op_name(b, PrimitiveKind::Quantization);
  p.shift = quant_shift(b, p.H_B);
  if (const Operation* q = find_op(b, PrimitiveKind::Quantization)) p.saturate_high = q->saturate_high;
  BlockDramMap& m = p.map;
  DramPlacer dram;
  std::uint64_t wbytes = 0;
  dram.place(m.input, m.input_bytes, std::uint64_t(p.H_B) * static_cast<std::uint64_t>(cfg.mac_rows));
  std::uint32_t b_bytes = 0, a_bytes = 0, o_bytes = 0;
  for_each_mm_piece(b, s, cfg, [&](const MmPiece&, std::uint64_t offset, const SramLayout& l) {
    p.piece_offset.push_back(offset);
    wbytes = offset + l.b_bytes;
    b_bytes = std::max(b_bytes, l.b_bytes);
    a_bytes = std::max(a_bytes, l.a_bytes);
    o_bytes = std::max(o_bytes, l.o_bytes);
  });
  dram.place(m.weights, m.weight_bytes, wbytes);
  if (b.core_op().bias) dram.place(m.bias, m.bias_bytes, 4 * static_cast<std::uint64_t>(p.W_B));
  if (per_channel_shifts(b)) dram.place(m.shifts, m.shift_bytes, static_cast<std::uint64_t>(p.W_B));
  if (nofuse) {
    dram.place(m.raw, m.raw_bytes, std::uint64_t(s.h.count()) * p.W_B * 4);
    dram.place(m.sums, m.sums_bytes, std::uint64_t(p.W_B) * 4);
  }
  dram.place(m.output, m.output_bytes, static_cast<std::uint64_t>(p.W_B));
  m.total = dram.at;
  p.b_base = 0;
  p.a_base = static_cast<std::uint32_t>(align_up(b_bytes, 16));
  p.o_base = static_cast<std::uint32_t>(align_up(std::uint64_t(p.a_base) + a_bytes, 16));
  p.acc_base = static_cast<std::uint32_t>(align_up(std::uint64_t(p.o_base) + o_bytes, 16));
  p.bias_base = static_cast<std::uint32_t>(align_up(std::uint64_t(p.acc_base) + o_bytes, 16));
  p.shift_base = p.bias_base + bias_slice_bytes(b.core_op(), s.w.largest());
  const std::uint64_t end = std::uint64_t(p.shift_base) + shift_slice_bytes(b, s.w.largest());
  if (end > static_cast<std::uint64_t>(cfg.sram_bytes))
    throw std::invalid_argument(p.core + ": a weight piece, its input, two result areas and the bias need " +
                                std::to_string(end) + " bytes, more than the SRAM's " +
                                std::to_string(cfg.sram_bytes));
  return p;
}

TaskStream mm_fuse(const MmPlan& p) {
  const BlockSplit& s = *p.s;
  TaskStream st = new_stream(p.core + " fuse_noreuse", p.map, p.workers);
  PePicker pick(p.workers, s.w.count());
  for (int iw = 0; iw < s.w.count(); ++iw) {
    auto& cmds = st.pe[static_cast<std::size_t>(pick.next(iw))];
    for (int ih = 0; ih < s.h.count(); ++ih) {
      const MmPiece mp = mm_piece(*p.b, s, iw, ih);
      mm_load(cmds, p, iw, ih);
      cmds.push_back(mla_command(p.core, mm_task(mp.task), p.a_base, p.b_base, ih == 0 ? p.acc_base : p.o_base));
      if (ih > 0) cmds.push_back(arm_command(p.fce, row_op(ArmOpKind::AddInt32, p.o_base, p.acc_base, mp.task.W_B)));
    }
    mm_finish(cmds, p, p.acc_base, s.w.begin(iw), s.w.sizes[static_cast<std::size_t>(iw)]);
  }
  return st;
}

std::vector<TaskStream> mm_nofuse(const MmPlan& p) {
  const BlockSplit& s = *p.s;
  TaskStream fc = new_stream(p.core + " nofuse_noreuse", p.map, p.workers);
  PePicker fc_pick(p.workers, s.w.count());
  for (int iw = 0; iw < s.w.count(); ++iw)
    for (int ih = 0; ih < s.h.count(); ++ih) {
      auto& cmds = fc.pe[static_cast<std::size_t>(fc_pick.next(iw))];
      const MmPiece mp = mm_piece(*p.b, s, iw, ih);
      mm_load(cmds, p, iw, ih);
      cmds.push_back(mla_command(p.core, mm_task(mp.task), p.a_base, p.b_base, p.o_base));
      DmaTransfer o;
      o.sram_addr = p.o_base;
      o.dram_addr = p.map.raw + (std::uint64_t(ih) * p.W_B + mp.col0) * 4;
      o.row_bytes = static_cast<std::uint32_t>(mp.task.W_B * 4);
      cmds.push_back(dma_command(CommandKind::DmaStore, p.core, o));
    }
  TaskStream fce = new_stream(p.fce + " nofuse_noreuse", p.map, p.workers);
  TaskStream act = new_stream(p.acti + " nofuse_noreuse", p.map, p.workers);
  TaskStream qua = new_stream(p.quan + " nofuse_noreuse", p.map, p.workers);
  PePicker fce_pick(p.workers, s.w.count()), act_pick(p.workers, s.w.count()), qua_pick(p.workers, s.w.count());
  for (int iw = 0; iw < s.w.count(); ++iw) {
    const int col0 = s.w.begin(iw), width = s.w.sizes[static_cast<std::size_t>(iw)];
    const std::uint32_t row = static_cast<std::uint32_t>(width * 4);
    auto& fc_cmds = fce.pe[static_cast<std::size_t>(fce_pick.next(iw))];
    for (int ih = 0; ih < s.h.count(); ++ih) {
      DmaTransfer in;
      in.dram_addr = p.map.raw + (std::uint64_t(ih) * p.W_B + col0) * 4;
      in.sram_addr = ih == 0 ? 0 : row;
      in.row_bytes = row;
      fc_cmds.push_back(dma_command(CommandKind::DmaLoad, p.fce, in));
      if (ih > 0) fc_cmds.push_back(arm_command(p.fce, row_op(ArmOpKind::AddInt32, row, 0, width)));
    }
    // the summed column part, or with one H_B part (no FCE stream) the FC stream's own results
    DmaTransfer sum;
    sum.sram_addr = 0;
    sum.dram_addr = (s.h.count() > 1 ? p.map.sums : p.map.raw) + std::uint64_t(col0) * 4;
    sum.row_bytes = row;
    fc_cmds.push_back(dma_command(CommandKind::DmaStore, p.fce, sum));
    auto& a = act.pe[static_cast<std::size_t>(act_pick.next(iw))];
    a.push_back(dma_command(CommandKind::DmaLoad, p.acti, sum));
    mm_relu(a, p, 0, col0, width);
    a.push_back(dma_command(CommandKind::DmaStore, p.acti, sum));
    auto& q = qua.pe[static_cast<std::size_t>(qua_pick.next(iw))];
    q.push_back(dma_command(CommandKind::DmaLoad, p.quan, sum));
    mm_quantize(q, p, 0, col0, width);
    DmaTransfer o;
    o.sram_addr = 0;
    o.dram_addr = p.map.output + static_cast<std::uint64_t>(col0);
    o.row_bytes = static_cast<std::uint32_t>(width);
    q.push_back(dma_command(CommandKind::DmaStore, p.quan, o));
  }
  std::vector<TaskStream> v;
  v.push_back(std::move(fc));
  if (s.h.count() > 1) v.push_back(std::move(fce));
  if (p.relu) v.push_back(std::move(act));
  v.push_back(std::move(qua));
  return v;
}

}  // namespace s2::mapper
