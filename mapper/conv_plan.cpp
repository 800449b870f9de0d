#include "conv_plan.h"

#include <algorithm>
#include <stdexcept>

#include "model/sram_layout.h"
#include "stream_commands.h"

namespace s2::mapper {

namespace {

// Element offsets of a view's first value, next row and next plane in a [C][H][W] tensor whose piece
// starts at filter c0, row y0, column x0.
struct TensorSteps {
  std::uint64_t origin = 0, row = 0, plane = 0;
};
TensorSteps tensor_steps(const ResultView& v, int c0, int y0, int x0, int H, int W) {
  TensorSteps t;
  t.origin = (std::uint64_t(c0) * H + y0) * W + x0;
  const std::uint64_t next_row = std::uint64_t(W), next_filter = std::uint64_t(H) * W;
  t.row = v.rows_are_filters ? next_filter : next_row;
  t.plane = v.rows_are_filters ? next_row : next_filter;
  return t;
}

// The transfer of a view's values between SRAM (`sram_addr`, rows `sram_row_stride`, planes
// `sram_plane_stride` bytes apart) and a tensor in DRAM at `base` (`bytes_per_value` each).
DmaTransfer view_transfer(const ResultView& v, const TensorSteps& t, std::uint64_t base, std::uint32_t bytes_per_value,
                          std::uint32_t row_values, std::uint32_t sram_addr, std::uint32_t sram_row_stride,
                          std::uint32_t sram_plane_stride) {
  DmaTransfer d;
  d.dram_addr = base + t.origin * bytes_per_value;
  d.dram_row_stride = t.row * bytes_per_value;
  d.dram_plane_stride = t.plane * bytes_per_value;
  d.sram_addr = sram_addr;
  d.sram_row_stride = sram_row_stride;
  d.sram_plane_stride = sram_plane_stride;
  d.row_bytes = row_values * bytes_per_value;
  d.rows = v.rows;
  d.planes = v.planes;
  return d;
}

Task conv_task(const ConvPiece& cp, int c, int a_src_shift) {
  Task t;
  t.op = Op::Conv;
  t.conv = cp.task;
  t.conv.C = c;
  t.a_src_shift = a_src_shift;
  return t;
}

ArmCommand view_op(ArmOpKind k, const ResultView& v, std::uint32_t src, std::uint32_t row_stride, std::uint32_t plane_stride) {
  ArmCommand a;
  a.kind = k;
  a.src = a.dst = src;
  a.planes = v.planes;
  a.height = v.rows;
  a.width = v.width;
  a.src_row_stride = row_stride;
  a.src_plane_stride = plane_stride;
  return a;
}

}  // namespace

bool quantized_before(const ConvPlan& p, const Operation* op) {
  for (const Operation* o : p.tail) {
    if (o == op) return false;
    if (o->kind == PrimitiveKind::Quantization) return true;
  }
  return false;
}

void set_input(ConvPlan& p, const OperationBlock& b) {
  const Operation* padd = find_op(b, PrimitiveKind::Padding);
  p.pad = padd ? padd->pad : 0;
  p.padd = padd ? padd->name : "";
  p.core = p.conv->name;
  p.pad_end = padd ? padd->pad_end : 0;
  p.in = {p.conv->in.W - 2 * p.pad - p.pad_end, p.conv->in.H - 2 * p.pad - p.pad_end, p.conv->in.D};
}

ConvPlan map_plan(const OperationBlock& b, const BlockSplit& s, const HwConfig& cfg) {
  ConvPlan p;
  p.workers = workers_of(cfg, b.workers);
  p.b = &b;
  p.s = &s;
  p.conv = &b.core_op();
  p.cfg = cfg;
  set_input(p, b);
  p.Wo = p.Wp = p.conv->out.W;
  p.Ho = p.Hp = p.conv->out.H;
  p.C = p.conv->out.D;
  return p;
}

Task window_task(const ConvPlan& p, const ConvPiece& cp) {
  Task t;
  t.conv = cp.task;
  if (p.rows == RowMode::Gathered) t.conv.Hi = cp.out_h;
  return t;
}

ResultView result_view(const ConvPlan& p, const ConvPiece& cp, int c) {
  ResultView v;
  v.width = static_cast<std::uint32_t>(cp.out_w);
  v.computed = static_cast<std::uint32_t>((cp.out_w - 1) * p.stride + 1);
  v.raw_row_stride = static_cast<std::uint32_t>(align_up(cp.task.Wi - cp.task.Wf + 1, 4) * 4);
  if (p.rows == RowMode::PerRow) {
    v.rows_are_filters = true;
    v.planes = static_cast<std::uint32_t>(cp.out_h);
    v.rows = static_cast<std::uint32_t>(c);
    v.raw_plane_stride = static_cast<std::uint32_t>(align_up(c, p.cfg.mac_rows)) * v.raw_row_stride;
  } else {
    v.planes = static_cast<std::uint32_t>(c);
    v.rows = static_cast<std::uint32_t>(cp.out_h);
    v.raw_plane_stride = v.rows * v.raw_row_stride;
  }
  return v;
}

ConvPlan conv_plan(const OperationBlock& b, const BlockSplit& s, const HwConfig& cfg, bool nofuse) {
  ConvPlan p;
  p.workers = workers_of(cfg, b.workers);
  p.b = &b;
  p.s = &s;
  p.conv = &b.core_op();
  p.pool = b.fused_pool();
  for (std::size_t i = b.core + 1; i < b.ops.size(); ++i) p.tail.push_back(&b.ops[i]);
  p.cfg = cfg;
  set_input(p, b);
  p.stride = p.conv->stride;
  if (p.stride > 1) p.rows = (p.conv->Hf == 1 && p.pad == 0) ? RowMode::Gathered : RowMode::PerRow;
  p.Wo = p.conv->out.W;
  p.Ho = p.conv->out.H;
  p.C = p.conv->out.D;
  p.Wx = (p.Wo - 1) * p.stride + 1;
  p.Wp = p.pool ? p.Wo / p.pool->stride : p.Wo;
  p.Hp = p.pool ? p.Ho / p.pool->stride : p.Ho;
  const int K = p.conv->weight_depth() * p.conv->Wf * p.conv->Hf;
  p.shift = quant_shift(b, K);
  // one SRAM layout for every piece (the largest piece's), so that a neighbour finds operand A where
  // its own task would put it
  std::uint32_t a_base = 0, a_bytes = 0, o_bytes = 0, sc_bytes = 0, bias_bytes = 0, shift_bytes = 0;
  for (int iw = 0; iw < s.w.count(); ++iw)
    for (int ih = 0; ih < s.h.count(); ++ih)
      for (int ic = 0; ic < s.c.count(); ++ic) {
        const ConvPiece cp = conv_piece(b, s, iw, ih, ic, 0);
        const SramLayout l = sram_layout(window_task(p, cp), cfg);
        a_base = std::max(a_base, l.a_base);
        a_bytes = std::max(a_bytes, l.a_bytes);
        o_bytes = std::max(o_bytes, l.o_bytes);
        sc_bytes = std::max(sc_bytes, static_cast<std::uint32_t>(cp.task.C * cp.out_w * cp.out_h));
        bias_bytes = std::max(bias_bytes, bias_slice_bytes(*p.conv, cp.task.C));
        shift_bytes = std::max(shift_bytes, shift_slice_bytes(b, cp.task.C));
        p.a_group_stride = l.a_group_stride;
      }
  p.a_base = a_base;
  p.o_base = static_cast<std::uint32_t>(align_up(std::uint64_t(a_base) + a_bytes, 16));
  p.o2_base = static_cast<std::uint32_t>(align_up(std::uint64_t(p.o_base) + o_bytes, 16));
  p.sc_base = s.d.count() > 1 ? static_cast<std::uint32_t>(align_up(std::uint64_t(p.o2_base) + o_bytes, 16)) : p.o2_base;
  const bool residual = find_op(b, PrimitiveKind::ElementwiseAdd) != nullptr;
  p.bias_base = static_cast<std::uint32_t>(align_up(residual ? std::uint64_t(p.sc_base) + sc_bytes : p.sc_base, 16));
  p.shift_base = p.bias_base + bias_bytes;  // (both 16-byte multiples)
  p.table_base = p.shift_base + shift_bytes;
  const Operation* table = find_op(b, PrimitiveKind::Elementwise);  // a fused activation
  const std::uint32_t end = p.table_base + (table ? 256u : 0u);
  p.layout_end = end;
  if (end > static_cast<std::uint32_t>(cfg.sram_bytes))
    throw std::invalid_argument(p.core + ": the pieces' common SRAM layout needs " + std::to_string(end) +
                                " bytes, more than the SRAM's " + std::to_string(cfg.sram_bytes));
  // DRAM map
  BlockDramMap& m = p.map;
  DramPlacer dram;
  dram.place(m.input, m.input_bytes, std::uint64_t(p.in.W) * p.in.H * p.in.D);
  if (nofuse && p.pad > 0) dram.place(m.padded, m.padded_bytes, std::uint64_t(p.conv->in.W) * p.conv->in.H * p.conv->in.D);
  p.dram_group_stride = filter_group_bytes(*p.conv, cfg.mac_rows);
  dram.place(m.weights, m.weight_bytes, filter_row_groups(*p.conv, cfg.mac_rows) * p.dram_group_stride);
  if (p.conv->bias) dram.place(m.bias, m.bias_bytes, 4 * std::uint64_t(p.C));
  if (per_channel_shifts(b)) dram.place(m.shifts, m.shift_bytes, std::uint64_t(p.C));
  if (table) dram.place(m.table, m.table_bytes, 256);
  if (nofuse) dram.place(m.raw, m.raw_bytes, std::uint64_t(p.Wx) * p.Ho * p.C * 4);
  dram.place(m.output, m.output_bytes, std::uint64_t(p.Wp) * p.Hp * p.C);
  if (residual) dram.place(m.shortcut, m.shortcut_bytes, std::uint64_t(p.Wp) * p.Hp * p.C);
  m.total = dram.at;
  return p;
}

DmaTransfer input_window(const ConvPlan& p, const ConvPiece& cp, std::uint64_t base) {
  const Task wt = window_task(p, cp);
  const int W = p.conv->in.W, H = p.conv->in.H, stride = static_cast<int>(align_up(wt.conv.Wi, 16));
  const int row_step = p.rows == RowMode::Gathered ? p.stride : 1;
  DmaTransfer t;
  t.dram_addr = base + (std::uint64_t(cp.d0) * H + cp.y0) * W + cp.x0;
  t.dram_row_stride = std::uint64_t(W) * row_step;
  t.dram_plane_stride = std::uint64_t(W) * H;
  t.sram_addr = 0;
  t.sram_row_stride = static_cast<std::uint32_t>(stride);
  t.sram_plane_stride = static_cast<std::uint32_t>(stride * wt.conv.Hi);
  t.row_bytes = static_cast<std::uint32_t>(wt.conv.Wi);
  t.rows = static_cast<std::uint32_t>(wt.conv.Hi);
  t.planes = static_cast<std::uint32_t>(wt.conv.D);
  return t;
}

void load_ifmap(std::vector<StreamCommand>& out, const ConvPlan& p, const ConvPiece& cp, bool from_padded,
                const std::string& load_op) {
  if (from_padded || !p.padded()) {
    out.push_back(dma_command(CommandKind::DmaLoad, load_op, input_window(p, cp, from_padded ? p.map.padded : p.map.input)));
    return;
  }
  DmaTransfer t = input_window(p, cp, p.map.input);  // window rows (padding implies no gathering)
  const int Wi = cp.task.Wi, Hi = cp.task.Hi;
  // the window's part inside the map; a window shorter than the padding can lie wholly in it (x_hi <= x_lo or
  // y_hi <= y_lo): then nothing is loaded and the ARM's pad writes the whole window
  int x_lo = std::max(cp.x0, p.pad), x_hi = std::min(cp.x0 + Wi, p.pad + p.in.W);
  int y_lo = std::max(cp.y0, p.pad), y_hi = std::min(cp.y0 + Hi, p.pad + p.in.H);
  const bool inside = x_hi > x_lo && y_hi > y_lo;
  if (!inside) x_lo = x_hi = cp.x0, y_lo = y_hi = cp.y0;
  t.dram_addr = p.map.input + (inside ? (std::uint64_t(cp.d0) * p.in.H + (y_lo - p.pad)) * p.in.W + (x_lo - p.pad) : 0);
  t.dram_row_stride = p.in.W;
  t.dram_plane_stride = std::uint64_t(p.in.W) * p.in.H;
  t.sram_addr = static_cast<std::uint32_t>((y_lo - cp.y0)) * t.sram_row_stride + static_cast<std::uint32_t>(x_lo - cp.x0);
  t.row_bytes = static_cast<std::uint32_t>(x_hi - x_lo);
  t.rows = static_cast<std::uint32_t>(y_hi - y_lo);
  out.push_back(dma_command(CommandKind::DmaLoad, load_op, t));
  ArmCommand a;
  a.kind = ArmOpKind::Pad;
  a.src = 0;
  a.planes = t.planes;
  a.height = static_cast<std::uint32_t>(Hi);
  a.width = static_cast<std::uint32_t>(Wi);
  a.src_row_stride = t.sram_row_stride;
  a.pad_left = static_cast<std::uint32_t>(x_lo - cp.x0);
  a.pad_right = static_cast<std::uint32_t>(cp.x0 + Wi - x_hi);
  a.pad_top = static_cast<std::uint32_t>(y_lo - cp.y0);
  a.pad_bottom = static_cast<std::uint32_t>(cp.y0 + Hi - y_hi);
  if (a.pad_left + a.pad_right + a.pad_top + a.pad_bottom > 0) out.push_back(arm_command(p.padd, a));
}

void load_filters(std::vector<StreamCommand>& out, const ConvPlan& p, const ConvPiece& cp) {
  const int rows = p.cfg.mac_rows;
  const std::uint64_t groups = static_cast<std::uint64_t>((cp.task.C + rows - 1) / rows);
  DmaTransfer t;
  t.dram_addr = p.map.weights + std::uint64_t(filter_slot(*p.conv, rows, cp.c0) / rows) * p.dram_group_stride;
  t.sram_addr = p.a_base;
  if (cp.task.D == p.conv->weight_depth()) {
    t.row_bytes = static_cast<std::uint32_t>(groups * p.dram_group_stride);
  } else {
    const std::uint64_t per_channel = std::uint64_t(cp.task.Hf) * cp.task.Wf * static_cast<std::uint64_t>(rows);
    t.dram_addr += std::uint64_t(cp.d0) * per_channel;
    t.row_bytes = static_cast<std::uint32_t>(std::uint64_t(cp.task.D) * per_channel);
    t.rows = static_cast<std::uint32_t>(groups);
    t.dram_row_stride = p.dram_group_stride;
    t.sram_row_stride = p.a_group_stride;
  }
  out.push_back(dma_command(CommandKind::DmaLoad, p.core, t));
}

void run_mla(std::vector<StreamCommand>& out, const ConvPlan& p, const ConvPiece& cp, int c, int shift, std::uint32_t o_base) {
  Task t = conv_task(cp, c, shift);
  t.conv = window_task(p, cp).conv;
  t.conv.C = c;
  if (p.rows != RowMode::PerRow) {
    out.push_back(mla_command(p.core, t, p.a_base, 0, o_base));
    return;
  }
  const ResultView v = result_view(p, cp, c);
  const std::uint32_t b_row = static_cast<std::uint32_t>(align_up(cp.task.Wi, 16));
  t.b_plane_rows = cp.task.Hi;
  t.conv.Hi = cp.task.Hf;
  for (int r = 0; r < cp.out_h; ++r)
    out.push_back(mla_command(p.core, t, p.a_base, static_cast<std::uint32_t>(r * p.stride) * b_row,
                      o_base + static_cast<std::uint32_t>(r) * v.raw_plane_stride));
}

DmaTransfer raw_results(const ConvPlan& p, const ConvPiece& cp, const ResultView& v, std::uint32_t sram_addr) {
  const TensorSteps t = tensor_steps(v, cp.c0, cp.out_y0, cp.out_x0 * p.stride, p.Ho, p.Wx);
  return view_transfer(v, t, p.map.raw, 4, v.computed, sram_addr, v.raw_row_stride, v.raw_plane_stride);
}
ResultView packed_raw_view(const ConvPlan& p, const ConvPiece& cp, int c) {
  ResultView v = result_view(p, cp, c);
  v.rows_are_filters = false;
  v.planes = static_cast<std::uint32_t>(c);
  v.rows = static_cast<std::uint32_t>(cp.out_h);
  v.raw_row_stride = v.computed * 4;
  v.raw_plane_stride = v.rows * v.raw_row_stride;
  return v;
}

DmaTransfer int8_results(const ConvPlan& p, const ConvPiece& cp, const ResultView& v, std::uint64_t base,
                         std::uint32_t sram_addr) {
  ResultView q = v;
  int x0 = cp.out_x0, y0 = cp.out_y0;
  if (p.pool) {
    const int k = p.pool->stride;
    q.rows /= static_cast<std::uint32_t>(k);
    q.width /= static_cast<std::uint32_t>(k);
    x0 /= k;
    y0 /= k;
  }
  const TensorSteps t = tensor_steps(q, cp.c0, y0, x0, p.Hp, p.Wp);
  return view_transfer(q, t, base, 1, q.width, sram_addr, q.width, q.rows * q.width);
}

ResultView element_wise(std::vector<StreamCommand>& out, const ConvPlan& p, const ConvPiece& cp, ResultView v,
                        std::uint32_t base, std::uint32_t sc_base, const std::vector<const Operation*>& ops,
                        bool fold_passes) {
  bool int8 = false, relu_folded = false, relu8_folded = false;
  const Operation* pool_folded = nullptr;
  const Operation* add_folded = nullptr;
  const bool quantizes = std::any_of(ops.begin(), ops.end(), [](const Operation* o) { return o->kind == PrimitiveKind::Quantization; });
  // the layer's bias goes with the first pass over the int32 sums (a ReLU before QUAN, else QUAN), in
  // whichever stream that pass runs: the block's order decides, not `ops`. The DMA loads the piece's
  // slice of it first (its filters c0 ..).
  bool biased = p.conv->bias == nullptr;
  auto with_bias = [&](ArmCommand& a, const std::string& op, bool run) {
    if (biased) return;
    biased = true;
    a.add_bias = true;
    a.bias_addr = p.bias_base;
    (v.rows_are_filters ? a.bias_row_step : a.bias_plane_step) = 1;
    const int filters = static_cast<int>(v.rows_are_filters ? v.rows : v.planes);
    if (run) out.push_back(dma_command(CommandKind::DmaLoad, op, bias_slice(p.map, cp.c0, filters, p.bias_base)));
  };
  for (const Operation* o : p.tail) {
    const bool run = std::find(ops.begin(), ops.end(), o) != ops.end();
    switch (o->kind) {
      case PrimitiveKind::ReLU:
        if (!int8 && fold_passes && quantizes && run) {  // QUAN's pass clamps at zero instead (its bias goes there too)
          relu_folded = true;
          break;
        }
        if (relu8_folded) break;  // the shortcut's addition clamped at zero
        if (run || !int8) {
          ArmCommand a = int8 ? view_op(ArmOpKind::Relu8, v, base, v.width, v.rows * v.width)
                              : view_op(ArmOpKind::Relu32, v, base, v.raw_row_stride, v.raw_plane_stride);
          if (!int8) {
            a.col_step = static_cast<std::uint32_t>(p.stride);
            with_bias(a, o->name, run);
          }
          if (run) out.push_back(arm_command(o->name, a));
        }
        break;
      case PrimitiveKind::Quantization:
        if (run || !biased) {
          ArmCommand a = view_op(ArmOpKind::Quantize, v, base, v.raw_row_stride, v.raw_plane_stride);
          a.col_step = static_cast<std::uint32_t>(p.stride);
          a.dst_row_stride = v.width;
          a.shift = p.shift;
          a.saturate_high = o->saturate_high;
          if (relu_folded) a.saturate_low = 0;
          // a max pooling right after it, run too, folds into its pass (Schedule::Overlapped): each window's
          // largest sum is quantized once (QuantizeMaxPool; the same int8, the quantization being monotone).
          // Its windows must tile the piece's rows, and a filter's sums must be a plane (one bias and shift).
          const auto at = std::find(p.tail.begin(), p.tail.end(), o);
          const Operation* next = at + 1 != p.tail.end() ? *(at + 1) : nullptr;
          if (fold_passes && run && next && next->kind == PrimitiveKind::Pooling && next->pool == PoolType::Max &&
              next->Wf == next->stride && next->Hf == next->stride && next->stride > 1 && !v.rows_are_filters &&
              v.rows % static_cast<std::uint32_t>(next->stride) == 0 && v.width % static_cast<std::uint32_t>(next->stride) == 0 &&
              std::find(ops.begin(), ops.end(), next) != ops.end()) {
            a.kind = ArmOpKind::QuantizeMaxPool;
            a.window = a.stride = next->stride;
            a.dst_row_stride = v.width / static_cast<std::uint32_t>(next->stride);
            pool_folded = next;
          }
          // so does the shortcut's addition right after it, run too, where no ReLU clamps the quantized values
          // first (QuantizeAdd: each value quantized, its shortcut's added; the same int8), and a ReLU right after
          // the addition, run too, with it
          if (fold_passes && run && next && next->kind == PrimitiveKind::ElementwiseAdd && !relu_folded &&
              std::find(ops.begin(), ops.end(), next) != ops.end()) {
            a.kind = ArmOpKind::QuantizeAdd;
            a.addend = sc_base;
            add_folded = next;
            const auto after = at + 2;  // (next is at + 1)
            if (after != p.tail.end() && (*after)->kind == PrimitiveKind::ReLU && std::find(ops.begin(), ops.end(), *after) != ops.end())
              a.relu = relu8_folded = true;
          }
          with_bias(a, o->name, run);
          if (o->shifts) {  // a shift per filter: the DMA loads the piece's slice of them, as the bias's
            a.per_channel_shift = true;
            a.shift_addr = p.shift_base;
            (v.rows_are_filters ? a.bias_row_step : a.bias_plane_step) = 1;
            const int filters = static_cast<int>(v.rows_are_filters ? v.rows : v.planes);
            if (run) out.push_back(dma_command(CommandKind::DmaLoad, o->name, shift_slice(p.map, cp.c0, filters, p.shift_base)));
          }
          if (add_folded)  // the shortcut's part, charged to the addition as when it is a pass of its own
            out.push_back(dma_command(CommandKind::DmaLoad, add_folded->name, int8_results(p, cp, v, p.map.shortcut, sc_base)));
          if (run) out.push_back(arm_command(o->name, a));
        }
        int8 = true;
        break;
      case PrimitiveKind::Pooling:
        if (run && o != pool_folded) {
          ArmCommand q = view_op(ArmOpKind::MaxPool8, v, base, v.width, v.rows * v.width);
          q.window = o->stride;
          q.dst_row_stride = v.width / static_cast<std::uint32_t>(q.window);
          out.push_back(arm_command(o->name, q));
        }
        v.rows /= static_cast<std::uint32_t>(o->stride);
        v.width /= static_cast<std::uint32_t>(o->stride);
        break;
      case PrimitiveKind::Elementwise:  // a fused activation on the int8 results, through its table
        if (run) {
          DmaTransfer t;
          t.dram_addr = p.map.table;
          t.sram_addr = p.table_base;
          t.row_bytes = 256;
          out.push_back(dma_command(CommandKind::DmaLoad, o->name, t));
          ArmCommand a = view_op(ArmOpKind::Table8, v, base, v.width, v.rows * v.width);
          a.table = p.table_base;
          out.push_back(arm_command(o->name, a));
        }
        break;
      case PrimitiveKind::ElementwiseAdd:
        if (run && o != add_folded) {
          out.push_back(dma_command(CommandKind::DmaLoad, o->name, int8_results(p, cp, v, p.map.shortcut, sc_base)));
          ArmCommand a = view_op(ArmOpKind::AddInt8, v, sc_base, v.width, v.rows * v.width);
          a.dst = base;
          a.dst_row_stride = v.width;
          // a ReLU right after it, run too, folds into it (Schedule::Overlapped): `_relu` clamps the sum at zero
          const auto at = std::find(p.tail.begin(), p.tail.end(), o);
          if (fold_passes && at + 1 != p.tail.end() && (*(at + 1))->kind == PrimitiveKind::ReLU &&
              std::find(ops.begin(), ops.end(), *(at + 1)) != ops.end())
            a.relu = relu8_folded = true;
          out.push_back(arm_command(o->name, a));
        }
        break;
      default: break;
    }
  }
  return v;
}

void compute_and_store(std::vector<StreamCommand>& out, const ConvPlan& p, const ConvPiece& cp, int c, int shift, bool fused) {
  run_mla(out, p, cp, c, shift, p.o_base);
  const ResultView v = result_view(p, cp, c);
  for (int id = 1; id < p.s->d.count(); ++id) {
    ConvPiece q = cp;  // the same window and filters, input channels part id
    q.d0 = p.s->d.begin(id);
    q.task.D = p.s->d.sizes.at(static_cast<std::size_t>(id));
    load_filters(out, p, q);
    load_ifmap(out, p, q, !fused && p.pad > 0, p.core);
    run_mla(out, p, q, c, shift, p.o2_base);
    ArmCommand a = view_op(ArmOpKind::AddInt32, v, p.o2_base, v.raw_row_stride, v.raw_plane_stride);
    a.dst = p.o_base;
    a.dst_row_stride = v.raw_row_stride;
    a.dst_plane_stride = v.raw_plane_stride;
    a.col_step = static_cast<std::uint32_t>(p.stride);
    out.push_back(arm_command(p.core, a));
  }
  if (!fused) {
    out.push_back(dma_command(CommandKind::DmaStore, p.core, raw_results(p, cp, v, p.o_base)));
    return;
  }
  element_wise(out, p, cp, v, p.o_base, p.sc_base, p.tail);
  out.push_back(dma_command(CommandKind::DmaStore, p.core, int8_results(p, cp, v, p.map.output, p.o_base)));
}

std::vector<PieceIndex> fmap_parts(const BlockSplit& s) {
  std::vector<PieceIndex> v;
  for (int ih = 0; ih < s.h.count(); ++ih)
    for (int iw = 0; iw < s.w.count(); ++iw) v.push_back({iw, ih, 0});
  return v;
}

int input_parts(const ConvPlan& p, std::size_t fmap_parts) { return static_cast<int>(fmap_parts) * p.conv->groups; }

int input_part(const ConvPlan& p, std::size_t fmap_part, int ic) {
  const int group = p.s->c.begin(ic) / (p.C / p.conv->groups);
  return static_cast<int>(fmap_part) * p.conv->groups + group;
}

}  // namespace s2::mapper
