#include "distributor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>

#include "model/golden.h"
#include "model/noc/mesh.h"
#include "model/splitmix64.h"
#include "model/sram_layout.h"

namespace s2::mapper {

const char* to_string(Strategy s) {
  switch (s) {
    case Strategy::NofuseNoreuse: return "nofuse_noreuse";
    case Strategy::FuseNoreuse: return "fuse_noreuse";
    case Strategy::FuseReuse: return "fuse_reuse";
  }
  return "?";
}

Strategy parse_strategy(const std::string& s) {
  for (Strategy k : kAllStrategies)
    if (s == to_string(k)) return k;
  throw std::invalid_argument("strategy '" + s + "': expected nofuse_noreuse, fuse_noreuse or fuse_reuse");
}

const char* to_string(Reuse r) {
  switch (r) {
    case Reuse::None: return "none";
    case Reuse::Ifmap: return "ifmap";
    case Reuse::Filter: return "filter";
  }
  return "?";
}

namespace {

const Operation* find_op(const OperationBlock& b, PrimitiveKind k) {
  for (const Operation& o : b.ops)
    if (o.kind == k) return &o;
  return nullptr;
}
std::string op_name(const OperationBlock& b, PrimitiveKind k) {
  const Operation* o = find_op(b, k);
  return o ? o->name : b.name();
}
// QUAN's right shift: the layer's own (an imported network's quantization), else, for test data, about
// half the bits a sum of K products of random int8 values grows by (the thesis gives no shift)
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

// Lays a block's regions out in DRAM one after the other, each on a 16-byte boundary.
struct DramPlacer {
  std::uint64_t at = 0;
  void place(std::uint64_t& base, std::uint64_t& size, std::uint64_t bytes) {
    base = at;
    size = bytes;
    at = align_up(at + bytes, 16);
  }
};

// The PEs that work on a block and the DRAM each reaches (the first two strategies; thesis 4.3, 4.4: on
// SpiNNaker2 they are "the same as the first two for QPE-DRAM"): every PE of the system, in groups by the
// DRAM nearest their QPE. Each DRAM holds a copy of the block's input and weights. A block's parts are
// dealt to the groups in contiguous runs (the thesis gives a double QPE block whole rows of the split
// feature map), and within a group round robin; every stream of a block deals the same parts to the same
// group, so what one stream stores another finds in the same DRAM. QPE-DRAM: one group, PEs 0-3.
struct Workers {
  std::vector<std::vector<int>> pes;  // per group, chip PE indices
  std::vector<int> dram;              // per group
  int chip_pes = kPesPerQpe;
};

// A block with a worker count (LayerSpec::workers, e.g. the OctopuScheduler paper's 8, 4 and 1 PEs) has
// only that many: the PEs of the QPEs nearest a DRAM first (fewest hops, then the lowest index), in QPE
// order, so that a small layer sits next to its weights.
Workers workers_of(const HwConfig& cfg, int limit = 0) {
  Workers w;
  const Mesh mesh(cfg.chip);
  w.chip_pes = cfg.chip.qpes() * kPesPerQpe;
  std::vector<int> nearest(static_cast<std::size_t>(mesh.qpes()), 0), hops(static_cast<std::size_t>(mesh.qpes()), 0);
  std::vector<int> qpes;
  for (int q = 0; q < mesh.qpes(); ++q) {
    if (!cfg.chip.has_pes(q)) continue;  // a router only
    int best = 0;
    for (int d = 1; d < mesh.drams(); ++d)
      if (mesh.hops(q, mesh.dram_router(d, q)) < mesh.hops(q, mesh.dram_router(best, q))) best = d;
    nearest[static_cast<std::size_t>(q)] = best;
    hops[static_cast<std::size_t>(q)] = mesh.hops(q, mesh.dram_router(best, q));
    qpes.push_back(q);
  }
  std::vector<int> chosen;  // PEs
  if (limit > 0) {
    std::vector<int> by_distance = qpes;
    std::stable_sort(by_distance.begin(), by_distance.end(),
                     [&](int a, int b) { return hops[static_cast<std::size_t>(a)] < hops[static_cast<std::size_t>(b)]; });
    for (int q : by_distance)
      for (int p = 0; p < kPesPerQpe && static_cast<int>(chosen.size()) < limit; ++p) chosen.push_back(q * kPesPerQpe + p);
    if (static_cast<int>(chosen.size()) < limit)
      throw std::invalid_argument("workers=" + std::to_string(limit) + ": the system has " + std::to_string(chosen.size()) + " PEs");
  }
  std::vector<int> group_of_dram(static_cast<std::size_t>(mesh.drams()), -1);
  for (int q : qpes)
    for (int p = 0; p < kPesPerQpe; ++p) {
      const int pe = q * kPesPerQpe + p;
      if (limit > 0 && std::find(chosen.begin(), chosen.end(), pe) == chosen.end()) continue;
      int& g = group_of_dram[static_cast<std::size_t>(nearest[static_cast<std::size_t>(q)])];
      if (g < 0) {
        g = static_cast<int>(w.pes.size());
        w.pes.emplace_back();
        w.dram.push_back(nearest[static_cast<std::size_t>(q)]);
      }
      w.pes[static_cast<std::size_t>(g)].push_back(pe);
    }
  return w;
}

// Deals pieces to PEs for one stream: next(part) gives the PE of the next piece of part `part` (of
// `parts`): its group's next PE in turn.
class PePicker {
 public:
  PePicker(const Workers& w, int parts) : w_(&w), parts_(std::max(parts, 1)), next_(w.pes.size(), 0) {}
  int group(int part) const {
    return static_cast<int>(std::int64_t(part) * static_cast<std::int64_t>(w_->pes.size()) / parts_);
  }
  int next(int part) {
    const std::size_t g = static_cast<std::size_t>(group(part));
    const std::vector<int>& pes = w_->pes[g];
    return pes[next_[g]++ % pes.size()];
  }

 private:
  const Workers* w_;
  int parts_;
  std::vector<std::size_t> next_;
};

// Points PE `pe`'s DRAM transfers in `st` at DRAM `dram` (the distributor writes them for DRAM 0).
void use_dram(TaskStream& st, int pe, int dram) {
  for (StreamCommand& c : st.pe[static_cast<std::size_t>(pe)])
    if ((c.kind == CommandKind::DmaLoad || c.kind == CommandKind::DmaStore) && c.dma.remote.kind == MemoryRef::Kind::Dram)
      c.dma.remote.index = dram;
}

// Points every PE's DRAM transfers at the DRAM of its group.
void use_group_drams(TaskStream& st, const Workers& w) {
  for (std::size_t g = 0; g < w.pes.size(); ++g)
    for (int pe : w.pes[g]) use_dram(st, pe, w.dram[g]);
}

// ---------------------------------------------------------------------------------------------------
// Convolution blocks

// How a piece's input rows reach the MLA, which only convolves at stride 1 (thesis 2.3.2): a strided
// convolution computes every column at stride 1 and keeps every stride-th (about half the MAC work is
// useful at stride 2: thesis 5.2.2), and skips the rows it does not need.
enum class RowMode {
  Window,    // stride 1: the piece's window, one task
  Gathered,  // 1-row filters, no padding: the DMA loads only every stride-th row, one task over them
  PerRow,    // taller filters: the whole window is loaded, one task per kept output row reads its Hf-row
             // band in place (REG_B_PLANE_ROWS = the window's rows)
};

struct ConvPlan {
  const OperationBlock* b = nullptr;
  const BlockSplit* s = nullptr;
  const Operation* conv = nullptr;
  const Operation* pool = nullptr;  // fused pooling, or null
  std::vector<const Operation*> tail;  // the block's operations after the core, in order
  HwConfig cfg;
  int pad = 0, stride = 1;
  RowMode rows = RowMode::Window;
  Shape3 in;       // unpadded input
  int Wo = 0, Ho = 0, C = 0;  // convolution output
  int Wx = 0;                 // columns the MLA computes over the whole layer at stride 1: (Wo - 1) * stride + 1
  int Wp = 0, Hp = 0;         // block output (after the fused pooling)
  // common SRAM layout: operand B at 0, A, the results, a second result area for the partial sums of
  // input-channel parts after the first (o2), the shortcut's part (sc)
  std::uint32_t a_base = 0, o_base = 0, o2_base = 0, sc_base = 0;
  std::uint32_t layout_end = 0;         // the first byte after the common layout
  std::uint32_t a_group_stride = 0;     // filter groups in SRAM (a piece's input channels)
  std::uint64_t dram_group_stride = 0;  // filter groups in DRAM (all input channels)
  int shift = 0;
  BlockDramMap map;
  std::string padd, core;
  Workers workers;
};

bool quantized_before(const ConvPlan& p, const Operation* op) {
  for (const Operation* o : p.tail) {
    if (o == op) return false;
    if (o->kind == PrimitiveKind::Quantization) return true;
  }
  return false;
}

// The core operation's name, its padding and unpadded input (a convolution's or a pooling's).
void set_input(ConvPlan& p, const OperationBlock& b) {
  const Operation* padd = find_op(b, PrimitiveKind::Padding);
  p.pad = padd ? padd->pad : 0;
  p.padd = padd ? padd->name : "";
  p.core = p.conv->name;
  p.in = {p.conv->in.W - 2 * p.pad, p.conv->in.H - 2 * p.pad, p.conv->in.D};
}

// The piece's window as the MLA's operand B holds it (gathered rows: out_h rows).
Task window_task(const ConvPlan& p, const ConvPiece& cp) {
  Task t;
  t.conv = cp.task;
  if (p.rows == RowMode::Gathered) t.conv.Hi = cp.out_h;
  return t;
}

// A piece's kept results as the ARM and the DMA walk them: planes x rows x width. Per-row tasks leave
// them [output row][filter][x] (each task's filters side by side), the others [filter][output row][x].
struct ResultView {
  std::uint32_t planes = 0, rows = 0, width = 0;  // width: kept results per row
  std::uint32_t computed = 0;                      // results per row the MLA computed (stride-1 columns)
  std::uint32_t raw_row_stride = 0, raw_plane_stride = 0;  // the MLA's int32 results in SRAM (bytes)
  bool rows_are_filters = false;
};

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
  const int K = p.conv->in.D * p.conv->Wf * p.conv->Hf;
  p.shift = quant_shift(b, K);
  // one SRAM layout for every piece (the largest piece's), so that a neighbour finds operand A where
  // its own task would put it
  std::uint32_t a_base = 0, a_bytes = 0, o_bytes = 0, sc_bytes = 0;
  for (int iw = 0; iw < s.w.count(); ++iw)
    for (int ih = 0; ih < s.h.count(); ++ih)
      for (int ic = 0; ic < s.c.count(); ++ic) {
        const ConvPiece cp = conv_piece(b, s, iw, ih, ic, 0);
        const SramLayout l = sram_layout(window_task(p, cp), cfg);
        a_base = std::max(a_base, l.a_base);
        a_bytes = std::max(a_bytes, l.a_bytes);
        o_bytes = std::max(o_bytes, l.o_bytes);
        sc_bytes = std::max(sc_bytes, static_cast<std::uint32_t>(cp.task.C * cp.out_w * cp.out_h));
        p.a_group_stride = l.a_group_stride;
      }
  p.a_base = a_base;
  p.o_base = static_cast<std::uint32_t>(align_up(std::uint64_t(a_base) + a_bytes, 16));
  p.o2_base = static_cast<std::uint32_t>(align_up(std::uint64_t(p.o_base) + o_bytes, 16));
  p.sc_base = s.d.count() > 1 ? static_cast<std::uint32_t>(align_up(std::uint64_t(p.o2_base) + o_bytes, 16)) : p.o2_base;
  const bool residual = find_op(b, PrimitiveKind::ElementwiseAdd) != nullptr;
  const std::uint32_t end = residual ? p.sc_base + sc_bytes : p.sc_base;
  p.layout_end = end;
  if (end > static_cast<std::uint32_t>(cfg.sram_bytes))
    throw std::invalid_argument(p.core + ": the pieces' common SRAM layout needs " + std::to_string(end) +
                                " bytes, more than the SRAM's " + std::to_string(cfg.sram_bytes));
  // DRAM map
  BlockDramMap& m = p.map;
  DramPlacer dram;
  dram.place(m.input, m.input_bytes, std::uint64_t(p.in.W) * p.in.H * p.in.D);
  if (nofuse && p.pad > 0) dram.place(m.padded, m.padded_bytes, std::uint64_t(p.conv->in.W) * p.conv->in.H * p.conv->in.D);
  const std::uint64_t groups = (p.C + cfg.mac_rows - 1) / cfg.mac_rows;
  p.dram_group_stride = align_up(std::uint64_t(p.conv->in.D) * p.conv->Hf * p.conv->Wf * cfg.mac_rows, 16);
  dram.place(m.weights, m.weight_bytes, groups * p.dram_group_stride);
  if (nofuse) dram.place(m.raw, m.raw_bytes, std::uint64_t(p.Wx) * p.Ho * p.C * 4);
  dram.place(m.output, m.output_bytes, std::uint64_t(p.Wp) * p.Hp * p.C);
  if (residual) dram.place(m.shortcut, m.shortcut_bytes, std::uint64_t(p.Wp) * p.Hp * p.C);
  m.total = dram.at;
  return p;
}

Task conv_task(const ConvPiece& cp, int c, int a_src_shift) {
  Task t;
  t.op = Op::Conv;
  t.conv = cp.task;
  t.conv.C = c;
  t.a_src_shift = a_src_shift;
  return t;
}

// A piece's whole input window in a [D][H][W] tensor at `base` (PADD's result, or the input when the
// block has no padding) and in SRAM (operand B); gathered rows take every stride-th row.
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

// Operand B of a piece, its window starting at (x0, y0) in padded coordinates: from the padded tensor,
// or the part inside the unpadded input, after which the ARM zeroes the border (PADD_n). The load is
// charged to `load_op`.
void load_ifmap(std::vector<StreamCommand>& out, const ConvPlan& p, const ConvPiece& cp, bool from_padded,
                const std::string& load_op) {
  if (from_padded || p.pad == 0) {
    out.push_back(dma(CommandKind::DmaLoad, load_op, input_window(p, cp, from_padded ? p.map.padded : p.map.input)));
    return;
  }
  DmaTransfer t = input_window(p, cp, p.map.input);  // window rows (padding implies no gathering)
  const int Wi = cp.task.Wi, Hi = cp.task.Hi;
  const int x_lo = std::max(cp.x0, p.pad), x_hi = std::min(cp.x0 + Wi, p.pad + p.in.W);
  const int y_lo = std::max(cp.y0, p.pad), y_hi = std::min(cp.y0 + Hi, p.pad + p.in.H);
  t.dram_addr = p.map.input + (std::uint64_t(cp.d0) * p.in.H + (y_lo - p.pad)) * p.in.W + (x_lo - p.pad);
  t.dram_row_stride = p.in.W;
  t.dram_plane_stride = std::uint64_t(p.in.W) * p.in.H;
  t.sram_addr = static_cast<std::uint32_t>((y_lo - cp.y0)) * t.sram_row_stride + static_cast<std::uint32_t>(x_lo - cp.x0);
  t.row_bytes = static_cast<std::uint32_t>(x_hi - x_lo);
  t.rows = static_cast<std::uint32_t>(y_hi - y_lo);
  out.push_back(dma(CommandKind::DmaLoad, load_op, t));
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
  if (a.pad_left + a.pad_right + a.pad_top + a.pad_bottom > 0) out.push_back(arm(p.padd, a));
}

// A piece's filters: its filter groups, each with the piece's input channels (all of them: one transfer).
void load_filters(std::vector<StreamCommand>& out, const ConvPlan& p, const ConvPiece& cp) {
  const int rows = p.cfg.mac_rows;
  const std::uint64_t groups = static_cast<std::uint64_t>((cp.task.C + rows - 1) / rows);
  DmaTransfer t;
  t.dram_addr = p.map.weights + std::uint64_t(cp.c0 / rows) * p.dram_group_stride;
  t.sram_addr = p.a_base;
  if (cp.task.D == p.conv->in.D) {
    t.row_bytes = static_cast<std::uint32_t>(groups * p.dram_group_stride);
  } else {
    const std::uint64_t per_channel = std::uint64_t(cp.task.Hf) * cp.task.Wf * static_cast<std::uint64_t>(rows);
    t.dram_addr += std::uint64_t(cp.d0) * per_channel;
    t.row_bytes = static_cast<std::uint32_t>(std::uint64_t(cp.task.D) * per_channel);
    t.rows = static_cast<std::uint32_t>(groups);
    t.dram_row_stride = p.dram_group_stride;
    t.sram_row_stride = p.a_group_stride;
  }
  out.push_back(dma(CommandKind::DmaLoad, p.core, t));
}

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

// The MLA's work on a piece's `c` filters: one task over the window, or one per kept output row (each
// task's results after the previous one's, as result_view() expects).
void run_mla(std::vector<StreamCommand>& out, const ConvPlan& p, const ConvPiece& cp, int c, int shift, std::uint32_t o_base) {
  Task t = conv_task(cp, c, shift);
  t.conv = window_task(p, cp).conv;
  t.conv.C = c;
  if (p.rows != RowMode::PerRow) {
    out.push_back(mla(p.core, t, p.a_base, 0, o_base));
    return;
  }
  const ResultView v = result_view(p, cp, c);
  const std::uint32_t b_row = static_cast<std::uint32_t>(align_up(cp.task.Wi, 16));
  t.b_plane_rows = cp.task.Hi;
  t.conv.Hi = cp.task.Hf;
  for (int r = 0; r < cp.out_h; ++r)
    out.push_back(mla(p.core, t, p.a_base, static_cast<std::uint32_t>(r * p.stride) * b_row,
                      o_base + static_cast<std::uint32_t>(r) * v.raw_plane_stride));
}

// A piece's `c` filters of raw int32 results (every computed column) in the [C][Ho][Wx] int32 tensor
// in DRAM and in SRAM at `sram_addr`, as `v` lays them out there.
DmaTransfer raw_results(const ConvPlan& p, const ConvPiece& cp, const ResultView& v, std::uint32_t sram_addr) {
  const TensorSteps t = tensor_steps(v, cp.c0, cp.out_y0, cp.out_x0 * p.stride, p.Ho, p.Wx);
  return view_transfer(v, t, p.map.raw, 4, v.computed, sram_addr, v.raw_row_stride, v.raw_plane_stride);
}
// The same results as the nofuse element-wise streams load them back: filter by filter, rows packed.
ResultView packed_raw_view(const ConvPlan& p, const ConvPiece& cp, int c) {
  ResultView v = result_view(p, cp, c);
  v.rows_are_filters = false;
  v.planes = static_cast<std::uint32_t>(c);
  v.rows = static_cast<std::uint32_t>(cp.out_h);
  v.raw_row_stride = v.computed * 4;
  v.raw_plane_stride = v.rows * v.raw_row_stride;
  return v;
}

// The block's int8 result of a view (after the fused pooling, if any) in the output or shortcut tensor
// and in SRAM at `sram_addr`, rows packed.
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

// The block's element-wise operations after the core operation on one piece whose int32 results (`v`)
// sit at `base`, in the block's order (thesis 4.1): ReLU on the int32 results, quantization into packed
// int8 rows in place (each value lands at or before where it was read; a strided convolution's kept
// columns only), the fused max pooling in place, the shortcut's addition (its part loaded into
// `sc_base`) and ReLU on the int8 sums. Only the operations in `ops` are carried out; each is charged
// to its own name. Returns the view of the int8 result.
ResultView element_wise(std::vector<StreamCommand>& out, const ConvPlan& p, const ConvPiece& cp, ResultView v,
                        std::uint32_t base, std::uint32_t sc_base, const std::vector<const Operation*>& ops) {
  bool int8 = false;
  // the layer's bias goes with the first pass over the int32 sums (a ReLU before QUAN, else QUAN), in
  // whichever stream that pass runs: the block's order decides, not `ops`
  bool biased = p.conv->bias == nullptr;
  auto with_bias = [&](ArmCommand& a) {
    if (biased) return;
    biased = true;
    a.bias = p.conv->bias;
    a.bias_first = static_cast<std::uint32_t>(cp.c0);
    (v.rows_are_filters ? a.bias_row_step : a.bias_plane_step) = 1;
  };
  for (const Operation* o : p.tail) {
    const bool run = std::find(ops.begin(), ops.end(), o) != ops.end();
    switch (o->kind) {
      case PrimitiveKind::ReLU:
        if (run || !int8) {
          ArmCommand a = int8 ? view_op(ArmOpKind::Relu8, v, base, v.width, v.rows * v.width)
                              : view_op(ArmOpKind::Relu32, v, base, v.raw_row_stride, v.raw_plane_stride);
          if (!int8) {
            a.col_step = static_cast<std::uint32_t>(p.stride);
            with_bias(a);
          }
          if (run) out.push_back(arm(o->name, a));
        }
        break;
      case PrimitiveKind::Quantization:
        if (run || !biased) {
          ArmCommand a = view_op(ArmOpKind::Quantize, v, base, v.raw_row_stride, v.raw_plane_stride);
          a.col_step = static_cast<std::uint32_t>(p.stride);
          a.dst_row_stride = v.width;
          a.shift = p.shift;
          a.saturate_high = o->saturate_high;
          with_bias(a);
          if (run) out.push_back(arm(o->name, a));
        }
        int8 = true;
        break;
      case PrimitiveKind::Pooling:
        if (run) {
          ArmCommand q = view_op(ArmOpKind::MaxPool8, v, base, v.width, v.rows * v.width);
          q.window = o->stride;
          q.dst_row_stride = v.width / static_cast<std::uint32_t>(q.window);
          out.push_back(arm(o->name, q));
        }
        v.rows /= static_cast<std::uint32_t>(o->stride);
        v.width /= static_cast<std::uint32_t>(o->stride);
        break;
      case PrimitiveKind::ElementwiseAdd:
        if (run) {
          out.push_back(dma(CommandKind::DmaLoad, o->name, int8_results(p, cp, v, p.map.shortcut, sc_base)));
          ArmCommand a = view_op(ArmOpKind::AddInt8, v, sc_base, v.width, v.rows * v.width);
          a.dst = base;
          a.dst_row_stride = v.width;
          out.push_back(arm(o->name, a));
        }
        break;
      default: break;
    }
  }
  return v;
}

// The MLA on a piece whose operands are loaded; a piece split along its input channels (D) goes on with
// its other parts, loading each and adding its partial sums to the first's (ARM, charged to the core
// operation; each part's sums wrap at the accumulator's width, their sum at 32 bits). Then (fused) the
// block's element-wise operations and the store of its int8 result, or (not fused) the store of the raw
// int32 results.
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
    out.push_back(arm(p.core, a));
  }
  if (!fused) {
    out.push_back(dma(CommandKind::DmaStore, p.core, raw_results(p, cp, v, p.o_base)));
    return;
  }
  element_wise(out, p, cp, v, p.o_base, p.sc_base, p.tail);
  out.push_back(dma(CommandKind::DmaStore, p.core, int8_results(p, cp, v, p.map.output, p.o_base)));
}

struct PieceIndex {
  int iw, ih, ic;
};

std::vector<PieceIndex> fmap_parts(const BlockSplit& s) {
  std::vector<PieceIndex> v;
  for (int ih = 0; ih < s.h.count(); ++ih)
    for (int iw = 0; iw < s.w.count(); ++iw) v.push_back({iw, ih, 0});
  return v;
}

TaskStream new_stream(const std::string& name, const BlockDramMap& m, const Workers& w) {
  TaskStream t;
  t.name = name;
  t.dram_bytes = m.total;
  t.pe.assign(static_cast<std::size_t>(w.chip_pes), {});
  return t;
}

// nofuse_noreuse: PADD_n (pad the input into DRAM), then CONV_n (raw int32 results into DRAM), then
// each element-wise operation as a stream of its own, every piece loaded and stored again: ReLU on the
// raw results in place, the quantization (with the fused pooling) into the output, the shortcut's
// addition and a ReLU after it on the output in place.
std::vector<TaskStream> conv_nofuse(const ConvPlan& p) {
  const BlockSplit& s = *p.s;
  std::vector<TaskStream> out;
  const std::vector<PieceIndex> fm = fmap_parts(s);
  if (p.pad > 0) {
    TaskStream st = new_stream(p.padd + " nofuse_noreuse", p.map, p.workers);
    PePicker pick(p.workers, static_cast<int>(fm.size()));
    for (std::size_t i = 0; i < fm.size(); ++i)
      for (int id = 0; id < s.d.count(); ++id) {
        auto& cmds = st.pe[static_cast<std::size_t>(pick.next(static_cast<int>(i)))];
        const ConvPiece cp = conv_piece(*p.b, s, fm[i].iw, fm[i].ih, 0, id);
        load_ifmap(cmds, p, cp, false, p.padd);
        cmds.push_back(dma(CommandKind::DmaStore, p.padd, input_window(p, cp, p.map.padded)));  // the padded window back
      }
    out.push_back(std::move(st));
  }
  TaskStream st = new_stream(p.core + " nofuse_noreuse", p.map, p.workers);
  PePicker pick(p.workers, static_cast<int>(fm.size()));
  for (std::size_t i = 0; i < fm.size(); ++i)
    for (int ic = 0; ic < s.c.count(); ++ic) {
      const PieceIndex& f = fm[i];
      auto& cmds = st.pe[static_cast<std::size_t>(pick.next(static_cast<int>(i)))];
      const ConvPiece cp = conv_piece(*p.b, s, f.iw, f.ih, ic, 0);
      // the filters (small) first: a PE whose fmap part arrives first can start at once, instead of its
      // filters queueing at the DRAM behind the other PEs' fmap parts (which kept the four PEs in step)
      load_filters(cmds, p, cp);
      load_ifmap(cmds, p, cp, p.pad > 0, p.core);
      compute_and_store(cmds, p, cp, cp.task.C, -1, false);
    }
  out.push_back(std::move(st));
  // the element-wise operations piece by piece (the pooling reads the quantization's SRAM rather than
  // a stream of its own storing and loading the quantized map, so POOL_n's clocks are its ARM work only)
  for (const Operation* o : p.tail) {
    if (o->kind == PrimitiveKind::Pooling) continue;
    TaskStream es = new_stream(o->name + " nofuse_noreuse", p.map, p.workers);
    const bool on_raw = !quantized_before(p, o) && o->kind != PrimitiveKind::Quantization;
    std::vector<const Operation*> ops{o};
    if (o->kind == PrimitiveKind::Quantization && p.pool) ops.push_back(p.pool);
    PePicker es_pick(p.workers, static_cast<int>(fm.size()));
    for (std::size_t i = 0; i < fm.size(); ++i)
      for (int ic = 0; ic < s.c.count(); ++ic) {
        const PieceIndex& f = fm[i];
        auto& cmds = es.pe[static_cast<std::size_t>(es_pick.next(static_cast<int>(i)))];
        const ConvPiece cp = conv_piece(*p.b, s, f.iw, f.ih, ic, 0);
        const ResultView raw = packed_raw_view(p, cp, cp.task.C);
        if (on_raw || o->kind == PrimitiveKind::Quantization) {
          const DmaTransfer t = raw_results(p, cp, raw, 0);
          cmds.push_back(dma(CommandKind::DmaLoad, o->name, t));
          element_wise(cmds, p, cp, raw, 0, 0, ops);
          if (on_raw) cmds.push_back(dma(CommandKind::DmaStore, o->name, t));
          else cmds.push_back(dma(CommandKind::DmaStore, o->name, int8_results(p, cp, raw, p.map.output, 0)));
        } else {
          // on the int8 output in place; the shortcut's part after it
          const DmaTransfer t = int8_results(p, cp, raw, p.map.output, 0);
          cmds.push_back(dma(CommandKind::DmaLoad, o->name, t));
          element_wise(cmds, p, cp, raw, 0, static_cast<std::uint32_t>(align_up(t.bytes(), 16)), ops);
          cmds.push_back(dma(CommandKind::DmaStore, o->name, t));
        }
      }
    out.push_back(std::move(es));
  }
  return out;
}

// fuse_noreuse: piece n to PE n mod 4, every PE on its own.
TaskStream conv_fuse_noreuse(const ConvPlan& p) {
  const BlockSplit& s = *p.s;
  TaskStream st = new_stream(p.core + " fuse_noreuse", p.map, p.workers);
  const std::vector<PieceIndex> fm = fmap_parts(s);
  PePicker pick(p.workers, static_cast<int>(fm.size()));
  for (std::size_t i = 0; i < fm.size(); ++i)
    for (int ic = 0; ic < s.c.count(); ++ic) {
      const PieceIndex& f = fm[i];
      auto& cmds = st.pe[static_cast<std::size_t>(pick.next(static_cast<int>(i)))];
      const ConvPiece cp = conv_piece(*p.b, s, f.iw, f.ih, ic, 0);
      load_filters(cmds, p, cp);  // first, as in conv_nofuse
      load_ifmap(cmds, p, cp, false, p.core);
      compute_and_store(cmds, p, cp, cp.task.C, -1, true);
    }
  return st;
}

// fuse_reuse (Appendix C, Algorithm 1, generalised to both reuse directions): rounds of up to four
// fmap parts and four filter parts. The reused operand is loaded once per round of the outer loop, the
// other once per round pair. Every PE holds an fmap part (operand B must be in its own SRAM) and filter
// part j of the round sits on PE j; in run k PE i computes its fmap part with the filter part of PE
// (i + k) mod 4, read as operand A over the NoC (every PE reads a different PE: one shift per run). With
// fewer than four fmap parts in a round Algorithm 1 fills the PEs with copies: with 2 parts PE i holds part
// i mod 2 (2 runs), with 1 part every PE holds it (1 run), with 3 parts PE 3 is loaded with part k before
// run k (3 runs). The host waits for every PE after each run (thesis: "wait for responses until all PEs
// finish").
TaskStream conv_fuse_reuse(const ConvPlan& p, Reuse reuse) {
  const BlockSplit& s = *p.s;
  TaskStream st = new_stream(p.core + " fuse_reuse", p.map, p.workers);
  const std::vector<PieceIndex> fm = fmap_parts(s);
  const int nf = static_cast<int>(fm.size()), nc = s.c.count();
  const int fmap_rounds = (nf + kPesPerQpe - 1) / kPesPerQpe, filter_rounds = (nc + kPesPerQpe - 1) / kPesPerQpe;
  const bool ifmap_outer = reuse == Reuse::Ifmap;
  const int outer = ifmap_outer ? fmap_rounds : filter_rounds, inner = ifmap_outer ? filter_rounds : fmap_rounds;
  for (int o = 0; o < outer; ++o)
    for (int i = 0; i < inner; ++i) {
      const int fr = ifmap_outer ? o : i, cr = ifmap_outer ? i : o;
      const int n_f = std::min(kPesPerQpe, nf - fr * kPesPerQpe), n_c = std::min(kPesPerQpe, nc - cr * kPesPerQpe);
      // the fmap part PE pe holds in run k
      auto fmap_on = [&](int pe, int k) {
        const int part = n_f == 3 ? (pe < 3 ? pe : k) : pe % n_f;
        return fm[static_cast<std::size_t>(fr * kPesPerQpe + part)];
      };
      auto ifmap_piece = [&](int pe, int k) { return conv_piece(*p.b, s, fmap_on(pe, k).iw, fmap_on(pe, k).ih, 0, 0); };
      const bool load_fmaps = ifmap_outer ? i == 0 : true;
      const bool load_filters_now = ifmap_outer ? true : i == 0;
      for (int pe = 0; pe < kPesPerQpe; ++pe) {
        auto& cmds = st.pe[pe];
        if (load_fmaps || (n_f == 3 && pe == 3)) load_ifmap(cmds, p, ifmap_piece(pe, 0), false, p.core);
        if (load_filters_now && pe < n_c) load_filters(cmds, p, conv_piece(*p.b, s, 0, 0, cr * kPesPerQpe + pe, 0));
        cmds.push_back(sync());  // every PE's operands are in place before anyone reads a neighbour's
      }
      const int runs = n_f == 3 ? 3 : n_f;
      for (int k = 0; k < runs; ++k) {
        if (n_f == 3 && k > 0) load_ifmap(st.pe[3], p, ifmap_piece(3, k), false, p.core);
        for (int pe = 0; pe < kPesPerQpe; ++pe) {
          auto& cmds = st.pe[pe];
          const int c = (pe + k) % kPesPerQpe;
          if (c < n_c) {
            const ConvPiece cp =
                conv_piece(*p.b, s, fmap_on(pe, k).iw, fmap_on(pe, k).ih, cr * kPesPerQpe + c, 0);
            compute_and_store(cmds, p, cp, cp.task.C, k, true);
          }
          cmds.push_back(sync());
        }
      }
    }
  return st;
}

// ---------------------------------------------------------------------------------------------------
// fuse_reuse on the chip (thesis 4.4, Appendices D, E, F): the storage QPEs keep the results, the
// computation QPEs (the prototype's 32, 128 PEs) keep the input parts, and the filter parts migrate
// through the NoC.
//
// The computation QPEs form a ring (ChipShape::double_qpe_blocks in order; each QPE's successor is its
// neighbour). A round holds up to 4 x (ring length) input parts (the prototype's 128) and as many filter parts:
//  - Filters: the G groups of 4 filter parts (G a power of two dividing the ring's length) sit on the ring
//    in turn, group a mod G on ring QPE a, part 4g + z on its PE z: the positions below G load theirs
//    from their double QPE block's DRAM, the others get a copy from the first (the "filling process",
//    Appendix E).
//  - Inputs: each input part sits on m PEs (m a power of two, as many copies as the computation PEs allow, at
//    most G), the copies S = G/m ring QPEs apart, so that in S steps the copies see disjoint halves,
//    quarters... of the G groups (Appendix D; the first copy loads its part from its DRAM, the others get
//    it from the first through the NoC).
//  - Step t (of S): every PE computes its input part with the 4 filter parts of its QPE, one after the
//    other, reading them as operand A from its QPE's PEs (operand-A source shift 0..3: "inside QPE" reuse),
//    and stores each result into the storage QPEs (or, if the block's output does not fit there, into its
//    DRAM); meanwhile (async) it pushes its filter part into the other filter buffer of the same PE of the
//    next ring QPE (the migration "inside QPE block" and on between QPE blocks and double QPE blocks); then
//    every computation PE meets the others (Figure 4.20: the PEs work and idle together).
struct ChipReusePlan {
  std::vector<int> ring;  // computation QPEs in ring order
  std::vector<int> ring_dram;
  std::uint32_t a2_base = 0;   // the second filter buffer (thesis 5.5: room for migrating filters)
  std::uint64_t filter_part_bytes = 0;
};

// Why the chip's reuse distribution cannot run the block, or "".
std::string chip_reuse_refusal(const BlockSplit& s, const HwConfig& cfg) {
  if (cfg.chip.double_qpe_blocks.empty()) return "the chip has no storage QPEs (double QPE blocks) for data reuse";
  int ring = 0;
  for (const DoubleQpeBlock& db : cfg.chip.double_qpe_blocks) ring += db.qpes();
  const int g = (s.c.count() + kPesPerQpe - 1) / kPesPerQpe;  // groups of a QPE's filter parts
  if ((g & (g - 1)) != 0)
    return "fuse_reuse on the chip needs 2^n filter parts (thesis 4.4) or at most 4; the split has " +
           std::to_string(s.c.count());
  if (g < ring ? ring % g != 0 : g % ring != 0)
    return "the filter groups (" + std::to_string(g) + ") do not tile the ring of " + std::to_string(ring) + " QPEs";
  return "";
}

ChipReusePlan chip_reuse_plan(const ConvPlan& p) {
  ChipReusePlan r;
  const ChipShape& chip = p.cfg.chip;
  for (const DoubleQpeBlock& db : chip.double_qpe_blocks) {
    for (const auto& block : db.qpe_blocks)
      for (QpeCoord q : block) {
        r.ring.push_back(chip.qpe_index(q));
        r.ring_dram.push_back(db.dram);
      }
  }
  const int rows = p.cfg.mac_rows;
  const int per_part = p.s->c.sizes.front();
  r.filter_part_bytes = std::uint64_t((per_part + rows - 1) / rows) * p.dram_group_stride;
  r.a2_base = static_cast<std::uint32_t>(align_up(p.layout_end, 16));
  if (r.a2_base + r.filter_part_bytes > static_cast<std::uint64_t>(p.cfg.sram_bytes))
    throw std::invalid_argument(p.core + ": no room for a second filter buffer (" + std::to_string(r.filter_part_bytes) +
                                " bytes after " + std::to_string(r.a2_base) + " in " + std::to_string(p.cfg.sram_bytes) + ")");
  return r;
}

// A transfer between a PE's SRAM and the feature map that starts at DRAM address `region`, redirected to
// where the storage QPEs keep that map: split where it crosses from one row band (storage PE) to the next
// (or, rows that are not whole map rows apart, per run within a map row). The pieces go out starting with
// the `first`-th (mod their number), so that PEs given different `first` do not all queue at the same
// storage PE's port at once.
void via_storage(std::vector<StreamCommand>& out, const StreamCommand& c, std::uint64_t region, const StorageRegion& where,
                 std::size_t first = 0) {
  const std::size_t start = out.size();
  const DmaTransfer& t = c.dma;
  const std::uint64_t W = static_cast<std::uint64_t>(where.width);
  const std::uint64_t lo = t.dram_addr - region;
  const auto emit = [&](std::uint64_t off, std::uint32_t sram, std::uint32_t planes, std::uint32_t rows, std::uint32_t bytes) {
    StreamCommand y = c;
    y.dma = t;
    y.dma.remote = {MemoryRef::Kind::Sram, where.pe_of(off)};
    y.dma.dram_addr = where.addr_of(off);
    y.dma.dram_plane_stride = std::uint64_t(where.band_rows) * W;
    y.dma.sram_addr = sram;
    y.dma.planes = planes;
    y.dma.rows = rows;
    y.dma.row_bytes = bytes;
    // rows (then planes) that follow one another on both sides move as one: the DMA waits for each row's
    // acknowledgement, and a storage PE is hops away
    DmaTransfer& d = y.dma;
    if (d.rows > 1 && d.dram_row_stride == d.row_bytes && d.sram_row_stride == d.row_bytes) {
      d.row_bytes *= d.rows;
      d.rows = 1;
    }
    if (d.rows == 1 && d.planes > 1 && d.dram_plane_stride == d.row_bytes && d.sram_plane_stride == d.row_bytes) {
      d.row_bytes *= d.planes;
      d.planes = 1;
    }
    out.push_back(y);
  };
  // the usual case: whole planes of the map apart, rows a whole number of map rows apart, each row within
  // a map row: split at the bands' edges only
  if ((t.planes == 1 || t.dram_plane_stride == where.plane_bytes()) && (t.rows == 1 || t.dram_row_stride % W == 0) &&
      lo % W + t.row_bytes <= W) {
    const std::uint64_t step = t.rows == 1 ? 1 : t.dram_row_stride / W, y0 = lo / W % where.height;
    std::uint32_t r = 0;
    while (r < t.rows) {
      const std::uint64_t band = (y0 + r * step) / where.band_rows;
      std::uint32_t n = 1;
      while (r + n < t.rows && (y0 + (r + n) * step) / where.band_rows == band) ++n;
      emit(lo + std::uint64_t(r) * t.dram_row_stride, t.sram_addr + r * t.sram_row_stride, t.planes, n, t.row_bytes);
      r += n;
    }
  } else {
    for (std::uint32_t pl = 0; pl < t.planes; ++pl)
      for (std::uint32_t r = 0; r < t.rows; ++r) {
        std::uint64_t off = lo + pl * t.dram_plane_stride + r * t.dram_row_stride;
        std::uint32_t sram = t.sram_addr + pl * t.sram_plane_stride + r * t.sram_row_stride, left = t.row_bytes;
        while (left > 0) {
          const std::uint32_t n = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, W - off % W));
          emit(off, sram, 1, 1, n);
          off += n;
          sram += n;
          left -= n;
        }
      }
  }
  const std::size_t n = out.size() - start;
  std::rotate(out.begin() + static_cast<std::ptrdiff_t>(start), out.begin() + static_cast<std::ptrdiff_t>(start + first % n), out.end());
}

// The storage QPEs' PEs, in the order of the double QPE blocks.
std::vector<int> storage_pes(const ChipShape& chip) {
  std::vector<int> pes;
  for (const DoubleQpeBlock& db : chip.double_qpe_blocks)
    for (int z = 0; z < kPesPerQpe; ++z) pes.push_back(chip.qpe_index(db.storage_qpe) * kPesPerQpe + z);
  return pes;
}

// A [D][H][W] map in the storage PEs from `base`: bands of as few rows as spread it over them all.
StorageRegion storage_region(const ChipShape& chip, Shape3 map, std::uint32_t base) {
  StorageRegion r;
  const std::vector<int> pes = storage_pes(chip);
  r.width = map.W;
  r.height = map.H;
  r.planes = map.D;
  r.band_rows = (map.H + static_cast<int>(pes.size()) - 1) / static_cast<int>(pes.size());
  r.pes.assign(pes.begin(), pes.begin() + (map.H + r.band_rows - 1) / r.band_rows);
  r.base = base;
  return r;
}

TaskStream conv_fuse_reuse_chip(const ConvPlan& p, BlockStreams& bs, const BlockResidency& where) {
  const BlockSplit& s = *p.s;
  const ChipReusePlan r = chip_reuse_plan(p);
  TaskStream st = new_stream(p.core + " fuse_reuse", p.map, p.workers);
  const int Q = static_cast<int>(r.ring.size()), slots = Q * kPesPerQpe;
  auto pe_at = [&](int a, int z) { return r.ring[static_cast<std::size_t>(a % Q)] * kPesPerQpe + z; };
  // every computation PE meets the others through the host
  st.sync_groups.emplace_back();
  for (int a = 0; a < Q; ++a)
    for (int z = 0; z < kPesPerQpe; ++z) st.sync_groups[0].push_back(pe_at(a, z));
  std::sort(st.sync_groups[0].begin(), st.sync_groups[0].end());
  if (where.input_in_storage) bs.input_storage = storage_region(p.cfg.chip, p.in, where.input_base);
  if (where.output_in_storage) bs.output_storage = storage_region(p.cfg.chip, {p.Wp, p.Hp, p.C}, where.output_base);
  for (const StorageRegion* m : {&bs.input_storage, &bs.output_storage})
    if (m->held() && m->base + m->chunk_bytes() > static_cast<std::uint64_t>(p.cfg.chip.storage_pe_bytes))
      throw std::invalid_argument(p.core + ": a map's row bands in the storage PEs end past the bytes they may keep (chip.storage_pe_bytes)");
  if (bs.input_storage.held() && bs.output_storage.held() &&
      bs.input_storage.base < bs.output_storage.base + bs.output_storage.chunk_bytes() &&
      bs.output_storage.base < bs.input_storage.base + bs.input_storage.chunk_bytes())
    throw std::invalid_argument(p.core + ": input and output overlap in the storage PEs");
  ConvPlan buffer[2] = {p, p};
  buffer[1].a_base = r.a2_base;
  const std::vector<PieceIndex> fm = fmap_parts(s);
  const int P = static_cast<int>(fm.size()), F = s.c.count(), G = (F + kPesPerQpe - 1) / kPesPerQpe;
  const int Gr = std::min(G, Q);  // filter groups per round
  for (int f0 = 0; f0 < P; f0 += slots) {
    const int Pr = std::min(slots, P - f0);
    for (int g0 = 0; g0 < G; g0 += Gr) {
      int m = 1;
      while (m * 2 <= Gr && Pr * m * 2 <= slots) m *= 2;
      const int S = Gr / m;
      // the input part each PE holds (-1: none), and which copies each first copy sends its part to
      std::vector<int> part_of(static_cast<std::size_t>(slots), -1);

      // the blocks of Gr ring QPEs the parts need, spread evenly over the ring (and so over the double QPE
      // blocks and their DRAMs)
      // With blocks to spare, the parts' arrangement repeats R times (R = 2 or 4) and replica r computes only
      // the runs k = r, r + R, ... of each step: the QPE's filter parts shared out among the replicas.
      const int blocks = Q / Gr, used = (Pr + kPesPerQpe * S - 1) / (kPesPerQpe * S);
      int R = 1;
      while (R < kPesPerQpe && used * R * 2 <= blocks) R *= 2;
      std::vector<int> replica_of(static_cast<std::size_t>(slots), 0);
      for (int f = 0; f < Pr; ++f)
        for (int rep = 0; rep < R; ++rep) {
          const int z = f % kPesPerQpe, rr = (f / kPesPerQpe) % S;
          const int b = (f / (kPesPerQpe * S) * R + rep) * blocks / (used * R);
          for (int k = 0; k < m; ++k) {
            const int a = b * Gr + rr + k * S;
            part_of[static_cast<std::size_t>(a * kPesPerQpe + z)] = f0 + f;
            replica_of[static_cast<std::size_t>(a * kPesPerQpe + z)] = rep;
          }
        }
      // load (thesis 4.4: each double QPE block loads from its own DRAM or storage QPEs, independently of
      // the others): every filter part and every input part a double QPE block holds comes once from its
      // DRAM (an input part the previous block left in the storage QPEs, from there), into the first of its
      // PEs that holds it, and spreads to the block's other holders through the NoC as a binary tree (every
      // computation PE meets the others between levels), so that no PE sends more than log2 of the copies
      const int segment = Q / static_cast<int>(p.cfg.chip.double_qpe_blocks.size());  // ring QPEs per double QPE block
      struct Copies {
        std::vector<int> pes;  // holders in one double QPE block, the one loading from DRAM first
        std::uint32_t addr = 0, bytes = 0;
      };
      std::vector<Copies> trees;
      std::map<std::pair<int, int>, std::size_t> tree_of;  // (double QPE block, filter part or -1 - input part)
      auto hold = [&](int a, int z, int what, std::uint32_t addr, std::uint32_t bytes) {
        auto [it, fresh] = tree_of.emplace(std::make_pair(a / segment, what), trees.size());
        if (fresh) trees.push_back({{}, addr, bytes});
        trees[it->second].pes.push_back(pe_at(a, z));
        return fresh;
      };
      for (int a = 0; a < Q; ++a)
        for (int z = 0; z < kPesPerQpe; ++z) {
          auto& cmds = st.pe[static_cast<std::size_t>(pe_at(a, z))];
          const int part = (g0 + a % Gr) * kPesPerQpe + z;
          if (part < F && hold(a, z, part, p.a_base, static_cast<std::uint32_t>(r.filter_part_bytes)))
            load_filters(cmds, buffer[0], conv_piece(*p.b, s, 0, 0, part, 0));
          const int f = part_of[static_cast<std::size_t>(a * kPesPerQpe + z)];
          if (f < 0 || g0 > 0) continue;  // the input parts stay for every round of filters (input reuse)
          const PieceIndex& fi = fm[static_cast<std::size_t>(f)];
          const ConvPiece cp = conv_piece(*p.b, s, fi.iw, fi.ih, 0, 0);
          const SramLayout l = sram_layout(window_task(p, cp), p.cfg);
          if (!hold(a, z, -1 - f, l.b_base, l.b_bytes)) continue;
          if (!bs.input_storage.held()) {
            load_ifmap(cmds, p, cp, false, p.core);
            continue;
          }
          // from the storage QPEs, where the previous block left the map
          std::vector<StreamCommand> from_dram;
          load_ifmap(from_dram, p, cp, false, p.core);
          for (const StreamCommand& c : from_dram)
            if (c.kind == CommandKind::DmaLoad) via_storage(cmds, c, p.map.input, bs.input_storage, static_cast<std::size_t>(f));
            else cmds.push_back(c);
        }
      // the far copies first, when few holders send, the near ones last, when many do: level l of a tree
      // of h holders (L levels, 2^L >= h) sends from every holder j that is a multiple of 2s, s = 2^(L-1-l),
      // to holder j + s (holders are in ring order, so that s is about the distance)
      const auto levels = [](std::size_t h) {
        std::size_t L = 0;
        while ((std::size_t{1} << L) < h) ++L;
        return L;
      };
      std::size_t most = 0;
      for (const Copies& c : trees) most = std::max(most, levels(c.pes.size()));
      for (std::size_t level = 0; level < most; ++level) {
        for (int pe : st.sync_groups[0]) st.pe[static_cast<std::size_t>(pe)].push_back(sync());
        for (const Copies& c : trees) {
          const std::size_t L = levels(c.pes.size());
          if (level >= L) continue;
          const std::size_t stride = std::size_t{1} << (L - 1 - level);
          for (std::size_t j = 0; j + stride < c.pes.size(); j += 2 * stride) {
            DmaTransfer t;
            t.remote = {MemoryRef::Kind::Sram, c.pes[j + stride]};
            t.dram_addr = c.addr;
            t.sram_addr = c.addr;
            t.row_bytes = c.bytes;
            st.pe[static_cast<std::size_t>(c.pes[j])].push_back(dma(CommandKind::DmaStore, p.core, t));
          }
        }
      }
      for (int pe : st.sync_groups[0]) st.pe[static_cast<std::size_t>(pe)].push_back(sync());
      for (int t = 0; t < S; ++t) {
        const ConvPlan& cur = buffer[t % 2];
        for (int a = 0; a < Q; ++a)
          for (int z = 0; z < kPesPerQpe; ++z) {
            auto& cmds = st.pe[static_cast<std::size_t>(pe_at(a, z))];
            if (t + 1 < S && (g0 + ((a - t) % Gr + Gr) % Gr) * kPesPerQpe + z < F) {
              // the filter part on to the same PE of the next ring QPE, into the buffer it reads next step
              DmaTransfer mig;
              mig.remote = {MemoryRef::Kind::Sram, pe_at(a + 1, z)};
              mig.dram_addr = buffer[(t + 1) % 2].a_base;
              mig.sram_addr = cur.a_base;
              mig.row_bytes = static_cast<std::uint32_t>(r.filter_part_bytes);
              StreamCommand c = dma(CommandKind::DmaStore, p.core, mig);
              c.async = true;
              cmds.push_back(c);
            }
            const int f = part_of[static_cast<std::size_t>(a * kPesPerQpe + z)];
            if (f >= 0) {
              const PieceIndex& fi = fm[static_cast<std::size_t>(f)];
              // ring QPE a holds, at step t, the group that started t QPEs before it
              const int group = g0 + ((a - t) % Gr + Gr) % Gr;
              for (int k = 0; k < kPesPerQpe; ++k) {
                if (group * kPesPerQpe + (z + k) % kPesPerQpe >= F) continue;  // (fewer than 4 filter parts)
                if (k % R != replica_of[static_cast<std::size_t>(a * kPesPerQpe + z)]) continue;  // another replica's run
                const ConvPiece cp = conv_piece(*p.b, s, fi.iw, fi.ih, group * kPesPerQpe + (z + k) % kPesPerQpe, 0);
                run_mla(cmds, cur, cp, cp.task.C, k, p.o_base);
                const ResultView v = result_view(p, cp, cp.task.C);
                element_wise(cmds, p, cp, v, p.o_base, p.sc_base, p.tail);
                const DmaTransfer o = int8_results(p, cp, v, p.map.output, p.o_base);
                if (bs.output_storage.held()) via_storage(cmds, dma(CommandKind::DmaStore, p.core, o), p.map.output, bs.output_storage);
                else cmds.push_back(dma(CommandKind::DmaStore, p.core, o));
              }
            }
            StreamCommand wait;
            wait.kind = CommandKind::WaitDma;
            wait.operation = p.core;
            cmds.push_back(wait);
            cmds.push_back(sync());
          }
      }
    }
  }
  // every DRAM transfer goes to the PE's double QPE block's DRAM
  for (int a = 0; a < Q; ++a)
    for (int z = 0; z < kPesPerQpe; ++z) use_dram(st, pe_at(a, z), r.ring_dram[static_cast<std::size_t>(a)]);
  return st;
}

// ---------------------------------------------------------------------------------------------------
// Pooling blocks (thesis 4.1: a pooling whose stride differs from its window): the ARM pools each piece
// (a window of some channels) in its PE's SRAM. The window is loaded as a convolution's operand B is, so
// a ConvPlan describes the input; the piece's channels are its "input channels" (d0, D).

ConvPlan pool_plan(const OperationBlock& b, const BlockSplit& s, const HwConfig& cfg, bool nofuse) {
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
  BlockDramMap& m = p.map;
  DramPlacer dram;
  dram.place(m.input, m.input_bytes, std::uint64_t(p.in.W) * p.in.H * p.in.D);
  if (nofuse && p.pad > 0) dram.place(m.padded, m.padded_bytes, std::uint64_t(p.conv->in.W) * p.conv->in.H * p.conv->in.D);
  dram.place(m.output, m.output_bytes, std::uint64_t(p.Wo) * p.Ho * p.C);
  m.total = dram.at;
  return p;
}

// Piece (iw, ih, ic) of a pooling block: output part (iw, ih) of channel part ic, and its input window.
ConvPiece pool_piece(const ConvPlan& p, int iw, int ih, int ic) {
  const Operation& o = *p.conv;
  const BlockSplit& s = *p.s;
  ConvPiece cp;
  cp.out_x0 = s.w.begin(iw);
  cp.out_y0 = s.h.begin(ih);
  cp.out_w = s.w.sizes.at(static_cast<std::size_t>(iw));
  cp.out_h = s.h.sizes.at(static_cast<std::size_t>(ih));
  cp.x0 = cp.out_x0 * o.stride;
  cp.y0 = cp.out_y0 * o.stride;
  cp.c0 = cp.d0 = s.c.begin(ic);
  cp.task.Wi = (cp.out_w - 1) * o.stride + o.Wf;
  cp.task.Hi = (cp.out_h - 1) * o.stride + o.Hf;
  cp.task.D = cp.task.C = s.c.sizes.at(static_cast<std::size_t>(ic));
  cp.task.Wf = o.Wf;
  cp.task.Hf = o.Hf;
  return cp;
}

// The pooling of a loaded window in place and the store of its result.
void pool_and_store(std::vector<StreamCommand>& out, const ConvPlan& p, const ConvPiece& cp) {
  const std::uint32_t row = static_cast<std::uint32_t>(align_up(cp.task.Wi, 16));
  ArmCommand a;
  a.kind = p.conv->pool == PoolType::Max ? ArmOpKind::MaxPool8 : ArmOpKind::AvgPool8;
  a.src = a.dst = 0;
  a.planes = static_cast<std::uint32_t>(cp.task.D);
  a.height = static_cast<std::uint32_t>(cp.task.Hi);
  a.width = static_cast<std::uint32_t>(cp.task.Wi);
  a.src_row_stride = row;
  a.window = p.conv->Wf;
  a.window_h = p.conv->Hf;
  a.stride = p.conv->stride;
  a.dst_row_stride = static_cast<std::uint32_t>(cp.out_w);
  out.push_back(arm(p.core, a));
  DmaTransfer t;
  t.sram_addr = 0;
  t.sram_row_stride = a.dst_row_stride;
  t.sram_plane_stride = a.dst_row_stride * static_cast<std::uint32_t>(cp.out_h);
  t.dram_addr = p.map.output + (std::uint64_t(cp.c0) * p.Ho + cp.out_y0) * p.Wo + cp.out_x0;
  t.dram_row_stride = static_cast<std::uint64_t>(p.Wo);
  t.dram_plane_stride = std::uint64_t(p.Wo) * p.Ho;
  t.row_bytes = static_cast<std::uint32_t>(cp.out_w);
  t.rows = static_cast<std::uint32_t>(cp.out_h);
  t.planes = static_cast<std::uint32_t>(cp.task.D);
  out.push_back(dma(CommandKind::DmaStore, p.core, t));
}

// nofuse_noreuse: PADD_n pads the input into DRAM, then POOL_n pools the padded pieces; fuse_noreuse:
// each piece is padded in its PE and pooled there. Piece n goes to PE n mod 4.
std::vector<TaskStream> pool_streams(const ConvPlan& p, bool nofuse) {
  const BlockSplit& s = *p.s;
  std::vector<TaskStream> out;
  auto for_each_piece = [&](const std::function<void(std::vector<StreamCommand>&, const ConvPiece&)>& f, TaskStream& st) {
    PePicker pick(p.workers, s.h.count() * s.w.count());
    for (int ic = 0; ic < s.c.count(); ++ic)
      for (int ih = 0; ih < s.h.count(); ++ih)
        for (int iw = 0; iw < s.w.count(); ++iw)
          f(st.pe[static_cast<std::size_t>(pick.next(ih * s.w.count() + iw))], pool_piece(p, iw, ih, ic));
  };
  if (nofuse && p.pad > 0) {
    TaskStream st = new_stream(p.padd + " nofuse_noreuse", p.map, p.workers);
    for_each_piece([&](std::vector<StreamCommand>& cmds, const ConvPiece& cp) {
      load_ifmap(cmds, p, cp, false, p.padd);
      cmds.push_back(dma(CommandKind::DmaStore, p.padd, input_window(p, cp, p.map.padded)));
    }, st);
    out.push_back(std::move(st));
  }
  TaskStream st = new_stream(p.core + (nofuse ? " nofuse_noreuse" : " fuse_noreuse"), p.map, p.workers);
  for_each_piece([&](std::vector<StreamCommand>& cmds, const ConvPiece& cp) {
    load_ifmap(cmds, p, cp, nofuse && p.pad > 0, p.core);
    pool_and_store(cmds, p, cp);
  }, st);
  out.push_back(std::move(st));
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Matrix multiplication blocks (batch 1: A is the input vector, H_A = 1)

Task mm_task(const MmShape& shape) {
  Task t;
  t.op = Op::Mm;
  t.mm = shape;
  return t;
}

// Every weight piece of an MM block in the order they sit packed in DRAM (one after the other, each in
// the MLA's operand-B layout), with its offset from the start of the weights and its SRAM layout.
void for_each_mm_piece(const OperationBlock& b, const BlockSplit& s, const HwConfig& cfg,
                       const std::function<void(const MmPiece&, std::uint64_t offset, const SramLayout&)>& f) {
  std::uint64_t at = 0;
  for (int iw = 0; iw < s.w.count(); ++iw)
    for (int ih = 0; ih < s.h.count(); ++ih) {
      const MmPiece mp = mm_piece(b, s, iw, ih);
      const SramLayout l = sram_layout(mm_task(mp.task), cfg);
      f(mp, at, l);
      at += l.b_bytes;
    }
}

struct MmPlan {
  const OperationBlock* b = nullptr;
  const BlockSplit* s = nullptr;
  HwConfig cfg;
  int W_B = 0, H_B = 0, shift = 0, saturate_high = 127;
  std::vector<std::uint64_t> piece_offset;  // packed weight pieces, by (iw, ih) = iw * H parts + ih
  std::uint32_t a_base = 0, b_base = 0, o_base = 0, acc_base = 0;
  BlockDramMap map;
  std::string core, fce, acti, quan;
  bool relu = true;
  Workers workers;
};

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
  if (p.acc_base + o_bytes > static_cast<std::uint32_t>(cfg.sram_bytes))
    throw std::invalid_argument(p.core + ": a weight piece, its input and two result areas need " +
                                std::to_string(p.acc_base + o_bytes) + " bytes, more than the SRAM's " +
                                std::to_string(cfg.sram_bytes));
  return p;
}

void mm_load(std::vector<StreamCommand>& out, const MmPlan& p, int iw, int ih) {
  const MmPiece mp = mm_piece(*p.b, *p.s, iw, ih);
  const SramLayout l = sram_layout(mm_task(mp.task), p.cfg);
  // the input vector's part, already in the MLA's operand-A layout (one byte per MAC row per value)
  const std::uint64_t rows = static_cast<std::uint64_t>(p.cfg.mac_rows);
  DmaTransfer a;
  a.dram_addr = p.map.input + std::uint64_t(mp.row0) * rows;
  a.sram_addr = p.a_base;
  a.row_bytes = static_cast<std::uint32_t>(std::uint64_t(mp.task.W_A) * rows);
  out.push_back(dma(CommandKind::DmaLoad, p.core, a));
  DmaTransfer w;
  w.dram_addr = p.map.weights + p.piece_offset[static_cast<std::size_t>(iw * p.s->h.count() + ih)];
  w.sram_addr = p.b_base;
  w.row_bytes = l.b_bytes;
  out.push_back(dma(CommandKind::DmaLoad, p.core, w));
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

// The layer's bias on the first pass over a column part's int32 sums (its ReLU, else its QUAN).
void mm_bias(ArmCommand& a, const MmPlan& p, int col0) {
  a.bias = p.b->core_op().bias;
  a.bias_first = static_cast<std::uint32_t>(col0);
  a.bias_col_step = 1;
}

ArmCommand mm_quantize(const MmPlan& p, std::uint32_t acc, int col0, int width) {
  ArmCommand q = row_op(ArmOpKind::Quantize, acc, acc, width);
  q.dst_row_stride = static_cast<std::uint32_t>(width);
  q.shift = p.shift;
  q.saturate_high = p.saturate_high;
  if (!p.relu) mm_bias(q, p, col0);
  return q;
}

ArmCommand mm_relu(const MmPlan& p, std::uint32_t acc, int col0, int width) {
  ArmCommand a = row_op(ArmOpKind::Relu32, acc, acc, width);
  mm_bias(a, p, col0);
  return a;
}

void mm_finish(std::vector<StreamCommand>& out, const MmPlan& p, std::uint32_t acc, int col0, int width) {
  if (p.relu) out.push_back(arm(p.acti, mm_relu(p, acc, col0, width)));
  out.push_back(arm(p.quan, mm_quantize(p, acc, col0, width)));
  DmaTransfer o;
  o.sram_addr = acc;
  o.dram_addr = p.map.output + static_cast<std::uint64_t>(col0);
  o.row_bytes = static_cast<std::uint32_t>(width);
  out.push_back(dma(CommandKind::DmaStore, p.quan, o));
}

// fuse_noreuse: PE n takes the weight's column parts n, n+4, ...; for each it runs the H_B pieces and
// adds their partial sums (FCE) in SRAM, then ReLU, quantization and one store.
TaskStream mm_fuse(const MmPlan& p) {
  const BlockSplit& s = *p.s;
  TaskStream st = new_stream(p.core + " fuse_noreuse", p.map, p.workers);
  PePicker pick(p.workers, s.w.count());
  for (int iw = 0; iw < s.w.count(); ++iw) {
    auto& cmds = st.pe[static_cast<std::size_t>(pick.next(iw))];
    for (int ih = 0; ih < s.h.count(); ++ih) {
      const MmPiece mp = mm_piece(*p.b, s, iw, ih);
      mm_load(cmds, p, iw, ih);
      cmds.push_back(mla(p.core, mm_task(mp.task), p.a_base, p.b_base, ih == 0 ? p.acc_base : p.o_base));
      if (ih > 0) cmds.push_back(arm(p.fce, row_op(ArmOpKind::AddInt32, p.o_base, p.acc_base, mp.task.W_B)));
    }
    mm_finish(cmds, p, p.acc_base, s.w.begin(iw), s.w.sizes[static_cast<std::size_t>(iw)]);
  }
  return st;
}

// nofuse_noreuse: FC_n stores every piece's partial sums; FCE_n adds them per column part; ReLU and
// quantization then run over the sums.
std::vector<TaskStream> mm_nofuse(const MmPlan& p) {
  const BlockSplit& s = *p.s;
  TaskStream fc = new_stream(p.core + " nofuse_noreuse", p.map, p.workers);
  PePicker fc_pick(p.workers, s.w.count());
  for (int iw = 0; iw < s.w.count(); ++iw)
    for (int ih = 0; ih < s.h.count(); ++ih) {
      auto& cmds = fc.pe[static_cast<std::size_t>(fc_pick.next(iw))];
      const MmPiece mp = mm_piece(*p.b, s, iw, ih);
      mm_load(cmds, p, iw, ih);
      cmds.push_back(mla(p.core, mm_task(mp.task), p.a_base, p.b_base, p.o_base));
      DmaTransfer o;
      o.sram_addr = p.o_base;
      o.dram_addr = p.map.raw + (std::uint64_t(ih) * p.W_B + mp.col0) * 4;
      o.row_bytes = static_cast<std::uint32_t>(mp.task.W_B * 4);
      cmds.push_back(dma(CommandKind::DmaStore, p.core, o));
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
      fc_cmds.push_back(dma(CommandKind::DmaLoad, p.fce, in));
      if (ih > 0) fc_cmds.push_back(arm(p.fce, row_op(ArmOpKind::AddInt32, row, 0, width)));
    }
    // the summed column part, or with one H_B part (no FCE stream) the FC stream's own results
    DmaTransfer sum;
    sum.sram_addr = 0;
    sum.dram_addr = (s.h.count() > 1 ? p.map.sums : p.map.raw) + std::uint64_t(col0) * 4;
    sum.row_bytes = row;
    fc_cmds.push_back(dma(CommandKind::DmaStore, p.fce, sum));
    auto& a = act.pe[static_cast<std::size_t>(act_pick.next(iw))];
    a.push_back(dma(CommandKind::DmaLoad, p.acti, sum));
    a.push_back(arm(p.acti, mm_relu(p, 0, col0, width)));
    a.push_back(dma(CommandKind::DmaStore, p.acti, sum));
    auto& q = qua.pe[static_cast<std::size_t>(qua_pick.next(iw))];
    q.push_back(dma(CommandKind::DmaLoad, p.quan, sum));
    q.push_back(arm(p.quan, mm_quantize(p, 0, col0, width)));
    DmaTransfer o;
    o.sram_addr = 0;
    o.dram_addr = p.map.output + static_cast<std::uint64_t>(col0);
    o.row_bytes = static_cast<std::uint32_t>(width);
    q.push_back(dma(CommandKind::DmaStore, p.quan, o));
  }
  std::vector<TaskStream> v;
  v.push_back(std::move(fc));
  if (s.h.count() > 1) v.push_back(std::move(fce));
  if (p.relu) v.push_back(std::move(act));
  v.push_back(std::move(qua));
  return v;
}

}  // namespace

bool distributable(const OperationBlock& b, const BlockSplit& s, Strategy strategy, const HwConfig& cfg, std::string* why) {
  auto no = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  if (b.kind == BlockKind::Pooling) {
    if (strategy == Strategy::FuseReuse) return no("pooling blocks have no weights to reuse");
    if (b.core_op().Wf != b.core_op().Hf && (b.core_op().out.W != 1 || b.core_op().out.H != 1))
      return no("a pooling window that is not square is distributed only as a global pooling (one output pixel)");
    return true;
  }
  if (b.kind == BlockKind::MatMul) {
    if (strategy == Strategy::FuseReuse) return no("MM blocks have no data reuse (thesis 4.3.3)");
    return true;
  }
  if (s.d.count() > 1 && strategy == Strategy::FuseReuse)
    return no("fuse_reuse with input-channel splits is not distributed yet (Algorithm 1 has none)");
  if (b.workers > 0 && strategy == Strategy::FuseReuse)
    return no("fuse_reuse with a worker count (workers=) is not distributed yet: its reuse rounds use every PE");
  if (strategy == Strategy::FuseReuse && cfg.chip.qpes() > 1) {
    const std::string refusal = chip_reuse_refusal(s, cfg);
    if (!refusal.empty()) return no(refusal);
  }
  if (const Operation* pool = b.fused_pool()) {
    if (pool->pool != PoolType::Max) return no("average pooling is not distributed yet");
    if (b.core_op().stride != 1) return no("a strided convolution with a fused pooling is not distributed yet");
    // the pooling works on the quantized int8 map, before a shortcut is added
    bool quantized = false;
    for (std::size_t i = b.core + 1; i < b.ops.size(); ++i) {
      const Operation& o = b.ops[i];
      if (o.kind == PrimitiveKind::Quantization) quantized = true;
      if (o.kind == PrimitiveKind::ElementwiseAdd && &o < pool) return no("a shortcut added before the fused pooling");
      if (&o == pool && !quantized) return no("a pooling before the quantization is not distributed yet");
    }
  }
  if (s.c.count() > 1 && s.c.sizes.front() % cfg.mac_rows != 0) return no("filter parts not in whole MAC-row groups");
  return true;
}

static BlockStreams distribute_streams(const OperationBlock& b, const BlockSplit& s, Strategy strategy, const HwConfig& cfg,
                                       const BlockResidency& where) {
  std::string why;
  if (!distributable(b, s, strategy, cfg, &why)) throw std::invalid_argument(b.name() + " " + to_string(strategy) + ": " + why);
  BlockStreams r;
  r.block = b.name();
  r.strategy = strategy;
  const bool nofuse = strategy == Strategy::NofuseNoreuse;
  if (b.kind == BlockKind::MatMul) {
    const MmPlan p = mm_plan(b, s, cfg, nofuse);
    r.map = p.map;
    r.quant_shift = p.shift;
    if (nofuse) r.streams = mm_nofuse(p);
    else r.streams.push_back(mm_fuse(p));
    return r;
  }
  if (b.kind == BlockKind::Pooling) {
    const ConvPlan p = pool_plan(b, s, cfg, nofuse);
    r.map = p.map;
    r.streams = pool_streams(p, nofuse);
    return r;
  }
  const ConvPlan p = conv_plan(b, s, cfg, nofuse);
  r.map = p.map;
  r.quant_shift = p.shift;
  if (nofuse) {
    r.streams = conv_nofuse(p);
  } else if (strategy == Strategy::FuseNoreuse) {
    r.streams.push_back(conv_fuse_noreuse(p));
  } else if (cfg.chip.qpes() > 1) {
    r.reuse = Reuse::Ifmap;  // the only reuse on the chip (thesis 4.4)
    r.streams.push_back(conv_fuse_reuse_chip(p, r, where));
  } else {
    // equations 4.2 / 4.3 with the sizes of all parts (the thesis's "size of the split feature map" read
    // as the total over the parts, the only reading under which the comparison means anything)
    double fmap = 0, filter = 0;
    for (const PieceIndex& f : fmap_parts(s)) {
      const ConvShape w = window_task(p, conv_piece(b, s, f.iw, f.ih, 0, 0)).conv;
      fmap += double(w.Wi) * w.Hi * w.D;
    }
    filter = double(p.conv->Wf) * p.conv->Hf * p.conv->in.D * p.C;
    r.fmap_reuse_bytes = fmap + filter * std::ceil(double(fmap_parts(s).size()) / kPesPerQpe);
    r.filter_reuse_bytes = filter + fmap * std::ceil(double(s.c.count()) / kPesPerQpe);
    r.reuse = r.fmap_reuse_bytes <= r.filter_reuse_bytes ? Reuse::Ifmap : Reuse::Filter;
    r.streams.push_back(conv_fuse_reuse(p, r.reuse));
  }
  return r;
}

BlockStreams distribute(const OperationBlock& b, const BlockSplit& s, Strategy strategy, const HwConfig& cfg,
                        const BlockResidency& where) {
  const bool chip_reuse = strategy == Strategy::FuseReuse && cfg.chip.qpes() > 1 && b.kind == BlockKind::Convolution;
  if ((where.input_in_storage || where.output_in_storage) && !chip_reuse)
    throw std::invalid_argument(b.name() + " " + to_string(strategy) + ": only fuse_reuse on the chip keeps maps in the storage QPEs");
  BlockStreams r = distribute_streams(b, s, strategy, cfg, where);
  const Workers w = workers_of(cfg, b.workers);
  // (the chip's reuse streams name their double QPE blocks' DRAMs themselves)
  if (!(strategy == Strategy::FuseReuse && cfg.chip.qpes() > 1))
    for (TaskStream& st : r.streams) use_group_drams(st, w);
  r.drams = static_cast<int>(w.dram.size());
  return r;
}

std::vector<BlockResidency> storage_residency(const ParsedNetwork& n, const NetworkSplit& split, const HwConfig& cfg) {
  const std::size_t N = n.blocks.size();
  std::vector<BlockResidency> where(N);
  if (N == 0 || cfg.chip.qpes() <= 1 || cfg.chip.double_qpe_blocks.empty()) return where;
  const auto reuses = [&](std::size_t i) {
    return n.blocks[i].kind == BlockKind::Convolution &&
           distributable(n.blocks[i], split.blocks[i], Strategy::FuseReuse, cfg, nullptr);
  };
  const std::uint64_t sram = static_cast<std::uint64_t>(cfg.chip.storage_pe_bytes);
  // the maps that may be kept, with their bytes per storage PE (0: may not)
  std::vector<std::uint64_t> chunk(N, 0);
  for (std::size_t i = 0; i + 1 < N; ++i) {
    const OperationBlock& b = n.blocks[i];
    if (!reuses(i) || !reuses(i + 1) || n.blocks[i + 1].inputs.empty() || n.blocks[i + 1].inputs.front() != b.name()) continue;
    int readers = 0;
    for (const OperationBlock& c : n.blocks) readers += static_cast<int>(std::count(c.inputs.begin(), c.inputs.end(), b.name()));
    const std::uint64_t bytes = align_up(storage_region(cfg.chip, b.out(), 0).chunk_bytes(), 16);
    if (readers == 1 && bytes <= sram) chunk[i] = bytes;
  }
  // Which to keep: the most bytes kept out of DRAM (each is stored and loaded once less), where a block
  // whose input and output are both kept needs room for both (dynamic programming along the blocks;
  // best[i][k]: the most bytes over blocks 0..i with block i's output kept (k = 1) or not).
  std::vector<std::array<std::uint64_t, 2>> best(N, {0, 0});
  std::vector<std::array<int, 2>> from(N, {0, 0});
  for (std::size_t i = 0; i < N; ++i) {
    const std::array<std::uint64_t, 2> prev = i > 0 ? best[i - 1] : std::array<std::uint64_t, 2>{0, 0};
    best[i][0] = std::max(prev[0], prev[1]);
    from[i][0] = prev[1] > prev[0];
    if (chunk[i] == 0) continue;
    const bool beside = i > 0 && chunk[i - 1] > 0 && chunk[i - 1] + chunk[i] <= sram;
    from[i][1] = beside && prev[1] > prev[0];
    best[i][1] = (from[i][1] ? prev[1] : prev[0]) + static_cast<std::uint64_t>(n.blocks[i].out().elements());
  }
  int k = best[N - 1][1] > best[N - 1][0];
  for (std::size_t i = N; i-- > 0;) {
    where[i].output_in_storage = k == 1;
    k = from[i][static_cast<std::size_t>(k)];
  }
  // inputs where the previous output is; a map kept beside a kept input goes to the other end of the SRAM
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0 && where[i - 1].output_in_storage) {
      where[i].input_in_storage = true;
      where[i].input_base = where[i - 1].output_base;
    }
    if (where[i].output_in_storage && where[i].input_in_storage && where[i].input_base == 0)
      where[i].output_base = static_cast<std::uint32_t>(sram - chunk[i]);
  }
  return where;
}

SystemMemory stage_block_memory(const BlockStreams& bs, const HwConfig& cfg, const std::vector<std::uint8_t>& image) {
  SystemMemory mem;
  mem.drams.assign(cfg.chip.drams.size(), image);
  for (const StorageRegion* m : {&bs.input_storage, &bs.output_storage})
    for (int pe : m->pes) mem.sram[pe].assign(static_cast<std::size_t>(cfg.sram_bytes), 0);
  if (bs.input_storage.held())
    for (std::uint64_t o = 0; o < bs.map.input_bytes; ++o)
      mem.sram[bs.input_storage.pe_of(o)][bs.input_storage.addr_of(o)] = image[static_cast<std::size_t>(bs.map.input + o)];
  return mem;
}

std::vector<std::uint8_t> gather_block_output(const BlockStreams& bs, const SystemMemory& mem) {
  const std::uint64_t lo = bs.map.output, hi = bs.map.output + bs.map.output_bytes;
  std::vector<std::uint8_t> out(bs.map.output_bytes, 0);
  if (bs.output_storage.held()) {
    for (std::uint64_t o = 0; o < bs.map.output_bytes; ++o) {
      const auto it = mem.sram.find(bs.output_storage.pe_of(o));
      if (it != mem.sram.end() && bs.output_storage.addr_of(o) < it->second.size())
        out[static_cast<std::size_t>(o)] = it->second[bs.output_storage.addr_of(o)];
    }
    return out;
  }
  for (const TaskStream& st : bs.streams)
    for (const auto& cmds : st.pe)
      for (const StreamCommand& c : cmds) {
        if (c.kind != CommandKind::DmaStore || c.dma.remote.kind != MemoryRef::Kind::Dram) continue;
        const DmaTransfer& t = c.dma;
        const std::vector<std::uint8_t>& dram = mem.drams.at(static_cast<std::size_t>(t.remote.index));
        for (std::uint64_t pl = 0; pl < t.planes; ++pl)
          for (std::uint64_t r = 0; r < t.rows; ++r) {
            const std::uint64_t a = t.dram_addr + pl * t.dram_plane_stride + r * t.dram_row_stride;
            const std::uint64_t from = std::max(a, lo), to = std::min(a + t.row_bytes, hi);
            if (from < to && to <= dram.size())
              std::copy(dram.begin() + static_cast<std::ptrdiff_t>(from), dram.begin() + static_cast<std::ptrdiff_t>(to),
                        out.begin() + static_cast<std::ptrdiff_t>(from - lo));
          }
      }
  return out;
}

std::vector<std::uint8_t> block_dram_image(const OperationBlock& b, const BlockSplit& s, const BlockStreams& bs,
                                           const HwConfig& cfg, std::uint64_t seed, const BlockInputs& data) {
  std::vector<std::uint8_t> img(bs.map.total, 0);
  SplitMix64 rng{seed};
  // each part of the block's data is the caller's, or drawn in this order: input, weights, shortcut
  auto given_or_drawn = [&](const std::vector<std::int8_t>* given, std::uint64_t n, const char* what) {
    std::vector<std::int8_t> v(n);
    if (given && !given->empty()) {
      if (given->size() != n)
        throw std::invalid_argument(b.name() + ": " + what + " of " + std::to_string(given->size()) + " values, expected " +
                                    std::to_string(n));
      v = *given;
    } else {
      for (auto& x : v) x = static_cast<std::int8_t>(rng.next() >> 56);
    }
    return v;
  };
  const Operation& core = b.core_op();
  const std::vector<std::int8_t>* weights = core.weights.get();
  if (b.kind == BlockKind::MatMul) {
    const int H_B = static_cast<int>(core.in.elements()), W_B = static_cast<int>(core.out.elements());
    const std::vector<std::int8_t> a = given_or_drawn(&data.input, std::uint64_t(H_B), "input");
    for (int k = 0; k < H_B; ++k) img[bs.map.input + std::uint64_t(k) * static_cast<std::uint64_t>(cfg.mac_rows)] = static_cast<std::uint8_t>(a[k]);
    // [OUT][IN] as given (ONNX Gemm with transB, PyTorch's Linear); drawn in the MLA's [IN][OUT] order
    std::vector<std::int8_t> w = given_or_drawn(nullptr, std::uint64_t(H_B) * W_B, "weights");
    if (weights) {
      if (weights->size() != w.size()) throw std::invalid_argument(b.name() + ": weights of the wrong size");
      for (int k = 0; k < H_B; ++k)
        for (int j = 0; j < W_B; ++j) w[std::uint64_t(k) * W_B + j] = (*weights)[std::uint64_t(j) * H_B + k];
    }
    for_each_mm_piece(b, s, cfg, [&](const MmPiece& mp, std::uint64_t off, const SramLayout& l) {
      const std::uint32_t stride = l.b_row_stride;
      for (int k = 0; k < mp.task.H_B; ++k)
        for (int j = 0; j < mp.task.W_B; ++j)
          img[bs.map.weights + off + std::uint64_t(k) * stride + j] =
              static_cast<std::uint8_t>(w[std::uint64_t(mp.row0 + k) * W_B + mp.col0 + j]);
    });
    return img;
  }
  const std::vector<std::int8_t> in = given_or_drawn(&data.input, bs.map.input_bytes, "input");
  std::copy(in.begin(), in.end(), img.begin() + static_cast<std::ptrdiff_t>(bs.map.input));
  if (b.kind == BlockKind::Pooling) return img;
  // filters [C][D][Hf][Wf] packed in MAC-row groups: group g at g * stride, byte ((d*Hf + ky)*Wf + kx)*ROWS + c%ROWS
  const Operation& conv = core;
  const int rows = cfg.mac_rows, D = conv.in.D, C = conv.out.D;
  const std::vector<std::int8_t> f = given_or_drawn(weights, std::uint64_t(C) * D * conv.Hf * conv.Wf, "weights");
  const std::uint64_t stride = align_up(std::uint64_t(D) * conv.Hf * conv.Wf * rows, 16);
  std::uint64_t i = 0;
  for (int c = 0; c < C; ++c)
    for (int d = 0; d < D; ++d)
      for (int ky = 0; ky < conv.Hf; ++ky)
        for (int kx = 0; kx < conv.Wf; ++kx)
          img[bs.map.weights + std::uint64_t(c / rows) * stride + ((std::uint64_t(d) * conv.Hf + ky) * conv.Wf + kx) * rows +
              c % rows] = static_cast<std::uint8_t>(f[i++]);
  const std::vector<std::int8_t> sc = given_or_drawn(&data.shortcut, bs.map.shortcut_bytes, "shortcut");
  std::copy(sc.begin(), sc.end(), img.begin() + static_cast<std::ptrdiff_t>(bs.map.shortcut));
  return img;
}

std::vector<std::uint8_t> golden_block_output(const OperationBlock& b, const BlockSplit& s, const BlockStreams& bs,
                                              const HwConfig& cfg, const std::vector<std::uint8_t>& img) {
  const bool relu = find_op(b, PrimitiveKind::ReLU) != nullptr;
  const Operation* quan = find_op(b, PrimitiveKind::Quantization);
  const int high = quan ? quan->saturate_high : 127;
  const std::vector<std::int32_t>* bias = b.core_op().bias.get();
  // the bias, added in 32 bits (wrapping as the ARM's ADD) before the ReLU and the shift
  auto add_bias = [](std::int32_t v, std::int32_t c) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(v) + static_cast<std::uint32_t>(c));
  };
  auto quant = [&](std::int32_t v) {
    v = (relu ? std::max<std::int32_t>(0, v) : v) >> bs.quant_shift;
    return static_cast<std::uint8_t>(static_cast<std::int8_t>(std::clamp<std::int32_t>(v, -128, high)));
  };
  if (b.kind == BlockKind::MatMul) {
    const int W_B = static_cast<int>(b.core_op().out.elements());
    std::vector<std::uint32_t> sum(static_cast<std::size_t>(W_B), 0);
    // partial sums per weight piece, each with the accumulator's wrap, added in 32 bits as FCE does
    for_each_mm_piece(b, s, cfg, [&](const MmPiece& mp, std::uint64_t off, const SramLayout& l) {
      const std::uint32_t stride = l.b_row_stride;
      std::vector<std::int8_t> a(static_cast<std::size_t>(mp.task.W_A)), w(std::size_t(mp.task.H_B) * mp.task.W_B);
      for (int k = 0; k < mp.task.W_A; ++k)
        a[k] = static_cast<std::int8_t>(img[bs.map.input + std::uint64_t(mp.row0 + k) * static_cast<std::uint64_t>(cfg.mac_rows)]);
      for (int k = 0; k < mp.task.H_B; ++k)
        for (int j = 0; j < mp.task.W_B; ++j)
          w[std::size_t(k) * mp.task.W_B + j] = static_cast<std::int8_t>(img[bs.map.weights + off + std::uint64_t(k) * stride + j]);
      const std::vector<std::int32_t> part = golden_mm(mp.task, a, w, cfg.accumulator_bits);
      for (int j = 0; j < mp.task.W_B; ++j) sum[std::size_t(mp.col0 + j)] += static_cast<std::uint32_t>(part[j]);
    });
    std::vector<std::uint8_t> out(static_cast<std::size_t>(W_B));
    for (int j = 0; j < W_B; ++j)
      out[j] = quant(bias ? add_bias(static_cast<std::int32_t>(sum[j]), (*bias)[std::size_t(j)]) : static_cast<std::int32_t>(sum[j]));
    return out;
  }
  if (b.kind == BlockKind::Pooling) {
    // zero padding, as PADD gives it, then the window's maximum or its mean truncated toward zero
    const Operation& o = b.core_op();
    const Operation* padd = find_op(b, PrimitiveKind::Padding);
    const int pad = padd ? padd->pad : 0, W = o.in.W, H = o.in.H, w0 = W - 2 * pad, h0 = H - 2 * pad;
    std::vector<int> in(std::size_t(W) * H * o.in.D, 0);
    for (int d = 0; d < o.in.D; ++d)
      for (int y = 0; y < h0; ++y)
        for (int x = 0; x < w0; ++x)
          in[(std::size_t(d) * H + y + pad) * W + x + pad] =
              static_cast<std::int8_t>(img[bs.map.input + (std::uint64_t(d) * h0 + y) * w0 + x]);
    std::vector<std::uint8_t> out(static_cast<std::size_t>(o.out.elements()));
    for (int d = 0; d < o.out.D; ++d)
      for (int y = 0; y < o.out.H; ++y)
        for (int x = 0; x < o.out.W; ++x) {
          int m = -128, sum = 0;
          for (int ky = 0; ky < o.Hf; ++ky)
            for (int kx = 0; kx < o.Wf; ++kx) {
              const int v = in[(std::size_t(d) * H + y * o.stride + ky) * W + x * o.stride + kx];
              m = std::max(m, v);
              sum += v;
            }
          const int r = o.pool == PoolType::Max ? m : sum / (o.Wf * o.Hf);
          out[(std::size_t(d) * o.out.H + y) * o.out.W + x] = static_cast<std::uint8_t>(static_cast<std::int8_t>(r));
        }
    return out;
  }
  const Operation& conv = b.core_op();
  const Operation* padd = find_op(b, PrimitiveKind::Padding);
  const int pad = padd ? padd->pad : 0;
  const int W = conv.in.W, H = conv.in.H, D = conv.in.D, C = conv.out.D, w0 = W - 2 * pad, h0 = H - 2 * pad;
  std::vector<std::int8_t> in(std::size_t(W) * H * D, 0), f(std::size_t(C) * D * conv.Hf * conv.Wf);
  for (int d = 0; d < D; ++d)
    for (int y = 0; y < h0; ++y)
      for (int x = 0; x < w0; ++x)
        in[(std::size_t(d) * H + y + pad) * W + x + pad] =
            static_cast<std::int8_t>(img[bs.map.input + (std::uint64_t(d) * h0 + y) * w0 + x]);
  const int rows = cfg.mac_rows;
  const std::uint64_t stride = align_up(std::uint64_t(D) * conv.Hf * conv.Wf * rows, 16);
  for (int c = 0; c < C; ++c)
    for (int d = 0; d < D; ++d)
      for (int ky = 0; ky < conv.Hf; ++ky)
        for (int kx = 0; kx < conv.Wf; ++kx)
          f[((std::size_t(c) * D + d) * conv.Hf + ky) * conv.Wf + kx] = static_cast<std::int8_t>(
              img[bs.map.weights + std::uint64_t(c / rows) * stride + ((std::uint64_t(d) * conv.Hf + ky) * conv.Wf + kx) * rows + c % rows]);
  // [C][Ho][Wo]; split input channels: each part's sums wrap at the accumulator's width, then add in 32 bits
  std::vector<std::int32_t> v;
  for (int id = 0; id < s.d.count(); ++id) {
    const int d0 = s.d.begin(id), dp = s.d.sizes[static_cast<std::size_t>(id)];
    const std::vector<std::int8_t> in_part(in.begin() + std::ptrdiff_t(d0) * H * W, in.begin() + std::ptrdiff_t(d0 + dp) * H * W);
    std::vector<std::int8_t> f_part(std::size_t(C) * dp * conv.Hf * conv.Wf);
    const std::size_t per_channel = std::size_t(conv.Hf) * conv.Wf;
    for (int c = 0; c < C; ++c)
      std::copy_n(f.begin() + std::ptrdiff_t((std::size_t(c) * D + d0) * per_channel), std::size_t(dp) * per_channel,
                  f_part.begin() + std::ptrdiff_t(std::size_t(c) * dp * per_channel));
    const std::vector<std::int32_t> part =
        golden_conv(ConvShape{W, H, dp, conv.Wf, conv.Hf, C, conv.stride}, f_part, in_part, cfg.accumulator_bits);
    if (v.empty()) v = part;
    else
      for (std::size_t j = 0; j < v.size(); ++j)
        v[j] = static_cast<std::int32_t>(static_cast<std::uint32_t>(v[j]) + static_cast<std::uint32_t>(part[j]));
  }
  int Ho = conv.out.H, Wo = conv.out.W;
  if (bias)
    for (std::size_t j = 0; j < v.size(); ++j) v[j] = add_bias(v[j], (*bias)[j / (std::size_t(Ho) * Wo)]);
  // the block's element-wise operations in its order, as the ARM carries them out
  auto sat8 = [](int x) { return std::clamp(x, -128, 127); };
  for (std::size_t i = b.core + 1; i < b.ops.size(); ++i) {
    const Operation& o = b.ops[i];
    switch (o.kind) {
      case PrimitiveKind::ReLU:
        for (auto& x : v) x = std::max(0, x);
        break;
      case PrimitiveKind::Quantization:
        for (auto& x : v) x = std::clamp(x >> bs.quant_shift, -128, o.saturate_high);
        break;
      case PrimitiveKind::Pooling: {
        const int k = o.stride, hp = Ho / k, wp = Wo / k;
        std::vector<std::int32_t> pooled(std::size_t(C) * hp * wp, -128);
        for (int c = 0; c < C; ++c)
          for (int y = 0; y < hp * k; ++y)
            for (int x = 0; x < wp * k; ++x) {
              auto& m = pooled[(std::size_t(c) * hp + y / k) * wp + x / k];
              m = std::max(m, v[(std::size_t(c) * Ho + y) * Wo + x]);
            }
        v = std::move(pooled);
        Ho = hp;
        Wo = wp;
        break;
      }
      case PrimitiveKind::ElementwiseAdd:
        for (std::size_t j = 0; j < v.size(); ++j) v[j] = sat8(v[j] + static_cast<std::int8_t>(img[bs.map.shortcut + j]));
        break;
      default: break;
    }
  }
  std::vector<std::uint8_t> out(v.size());
  for (std::size_t j = 0; j < v.size(); ++j) out[j] = static_cast<std::uint8_t>(static_cast<std::int8_t>(v[j]));
  return out;
}

}  // namespace s2::mapper
