#include "distributor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "model/golden.h"
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
int ceil_log2(std::uint64_t v) {
  int n = 0;
  while ((std::uint64_t(1) << n) < v) ++n;
  return n;
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

// ---------------------------------------------------------------------------------------------------
// Convolution blocks

struct ConvPlan {
  const OperationBlock* b = nullptr;
  const BlockSplit* s = nullptr;
  const Operation* conv = nullptr;
  const Operation* pool = nullptr;  // fused pooling, or null
  HwConfig cfg;
  int pad = 0;
  Shape3 in;       // unpadded input
  int Wo = 0, Ho = 0, C = 0;  // convolution output
  int Wp = 0, Hp = 0;         // block output (after the fused pooling)
  std::uint32_t a_base = 0, o_base = 0;  // common SRAM layout (operand B at 0)
  std::uint32_t a_group_stride = 0;
  int shift = 0;
  BlockDramMap map;
  std::string padd, core, acti, quan, pooln;
};

ConvPlan conv_plan(const OperationBlock& b, const BlockSplit& s, const HwConfig& cfg, bool nofuse) {
  ConvPlan p;
  p.b = &b;
  p.s = &s;
  p.conv = &b.core_op();
  p.pool = b.fused_pool();
  p.cfg = cfg;
  const Operation* padd = find_op(b, PrimitiveKind::Padding);
  p.pad = padd ? padd->pad : 0;
  p.in = {p.conv->in.W - 2 * p.pad, p.conv->in.H - 2 * p.pad, p.conv->in.D};
  p.Wo = p.conv->out.W;
  p.Ho = p.conv->out.H;
  p.C = p.conv->out.D;
  p.Wp = p.pool ? p.Wo / p.pool->stride : p.Wo;
  p.Hp = p.pool ? p.Ho / p.pool->stride : p.Ho;
  p.padd = padd ? padd->name : "";
  p.core = p.conv->name;
  p.acti = op_name(b, PrimitiveKind::ReLU);
  p.quan = op_name(b, PrimitiveKind::Quantization);
  p.pooln = p.pool ? p.pool->name : "";
  const int K = p.conv->in.D * p.conv->Wf * p.conv->Hf;
  p.shift = 7 + (ceil_log2(static_cast<std::uint64_t>(K)) + 1) / 2;
  // one SRAM layout for every piece (the largest piece's), so that a neighbour finds operand A where
  // its own task would put it
  std::uint32_t a_base = 0, a_bytes = 0, o_bytes = 0;
  for (int iw = 0; iw < s.w.count(); ++iw)
    for (int ih = 0; ih < s.h.count(); ++ih)
      for (int ic = 0; ic < s.c.count(); ++ic) {
        const ConvPiece cp = conv_piece(b, s, iw, ih, ic, 0);
        Task t;
        t.conv = cp.task;
        const SramLayout l = sram_layout(t, cfg);
        a_base = std::max(a_base, l.a_base);
        a_bytes = std::max(a_bytes, l.a_bytes);
        o_bytes = std::max(o_bytes, l.o_bytes);
        p.a_group_stride = l.a_group_stride;
      }
  p.a_base = a_base;
  p.o_base = static_cast<std::uint32_t>(align_up(std::uint64_t(a_base) + a_bytes, 16));
  if (p.o_base + o_bytes > static_cast<std::uint32_t>(cfg.sram_bytes))
    throw std::invalid_argument(p.core + ": the pieces' common SRAM layout needs " + std::to_string(p.o_base + o_bytes) +
                                " bytes, more than the SRAM's " + std::to_string(cfg.sram_bytes));
  // DRAM map
  BlockDramMap& m = p.map;
  std::uint64_t at = 0;
  auto place = [&](std::uint64_t& base, std::uint64_t& size, std::uint64_t bytes) {
    base = at;
    size = bytes;
    at = align_up(at + bytes, 16);
  };
  place(m.input, m.input_bytes, std::uint64_t(p.in.W) * p.in.H * p.in.D);
  if (nofuse) place(m.padded, m.padded_bytes, std::uint64_t(p.conv->in.W) * p.conv->in.H * p.conv->in.D);
  const std::uint64_t groups = (p.C + cfg.mac_rows - 1) / cfg.mac_rows;
  place(m.weights, m.weight_bytes, groups * p.a_group_stride);
  if (nofuse) place(m.raw, m.raw_bytes, std::uint64_t(p.Wo) * p.Ho * p.C * 4);
  place(m.output, m.output_bytes, std::uint64_t(p.Wp) * p.Hp * p.C);
  m.total = at;
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

// A piece's whole input window in the padded [D][H][W] tensor (PADD's result) and in SRAM (operand B).
DmaTransfer padded_window(const ConvPlan& p, const ConvPiece& cp) {
  const int W = p.conv->in.W, H = p.conv->in.H, stride = static_cast<int>(align_up(cp.task.Wi, 16));
  DmaTransfer t;
  t.dram_addr = p.map.padded + std::uint64_t(cp.y0) * W + cp.x0;
  t.dram_row_stride = W;
  t.dram_plane_stride = std::uint64_t(W) * H;
  t.sram_addr = 0;
  t.sram_row_stride = static_cast<std::uint32_t>(stride);
  t.sram_plane_stride = static_cast<std::uint32_t>(stride * cp.task.Hi);
  t.row_bytes = static_cast<std::uint32_t>(cp.task.Wi);
  t.rows = static_cast<std::uint32_t>(cp.task.Hi);
  t.planes = static_cast<std::uint32_t>(cp.task.D);
  return t;
}

// Operand B of a piece, its window starting at (x0, y0) in padded coordinates: from the padded tensor,
// or the part inside the unpadded input, after which the ARM zeroes the border (PADD_n). The load is
// charged to `load_op`.
void load_ifmap(std::vector<StreamCommand>& out, const ConvPlan& p, const ConvPiece& cp, bool from_padded,
                const std::string& load_op) {
  DmaTransfer t = padded_window(p, cp);
  if (from_padded) {
    out.push_back(dma(CommandKind::DmaLoad, load_op, t));
    return;
  }
  const int Wi = cp.task.Wi, Hi = cp.task.Hi;
  const int x_lo = std::max(cp.x0, p.pad), x_hi = std::min(cp.x0 + Wi, p.pad + p.in.W);
  const int y_lo = std::max(cp.y0, p.pad), y_hi = std::min(cp.y0 + Hi, p.pad + p.in.H);
  t.dram_addr = p.map.input + std::uint64_t(y_lo - p.pad) * p.in.W + (x_lo - p.pad);
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

void load_filters(std::vector<StreamCommand>& out, const ConvPlan& p, const ConvPiece& cp) {
  const int rows = p.cfg.mac_rows;
  DmaTransfer t;
  t.dram_addr = p.map.weights + std::uint64_t(cp.c0 / rows) * p.a_group_stride;
  t.sram_addr = p.a_base;
  t.row_bytes = static_cast<std::uint32_t>(((cp.task.C + rows - 1) / rows) * p.a_group_stride);
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

// A piece's `c` planes of raw int32 results: in the [C][Ho][Wo] int32 tensor in DRAM, and in SRAM at
// `sram_addr` with `sram_row_stride` bytes per row.
DmaTransfer raw_results(const ConvPlan& p, const ConvPiece& cp, int c, std::uint32_t sram_addr, std::uint32_t sram_row_stride) {
  const std::uint32_t w = static_cast<std::uint32_t>(cp.out_w), h = static_cast<std::uint32_t>(cp.out_h);
  DmaTransfer t;
  t.dram_addr = p.map.raw + (std::uint64_t(cp.c0) * p.Ho + cp.out_y0) * p.Wo * 4 + std::uint64_t(cp.out_x0) * 4;
  t.dram_row_stride = std::uint64_t(p.Wo) * 4;
  t.dram_plane_stride = std::uint64_t(p.Wo) * p.Ho * 4;
  t.sram_addr = sram_addr;
  t.sram_row_stride = sram_row_stride;
  t.sram_plane_stride = sram_row_stride * h;
  t.row_bytes = w * 4;
  t.rows = h;
  t.planes = static_cast<std::uint32_t>(c);
  return t;
}

// Quantization of a piece's `c` planes of int32 results at `base` (rows `src_row_stride` bytes apart)
// into packed int8 rows in place (each value lands at or before where it was read), the fused max
// pooling in place, and the store of the block's int8 result, charged to `store_op`.
void quantize_pool_store(std::vector<StreamCommand>& out, const ConvPlan& p, const ConvPiece& cp, int c,
                         std::uint32_t base, std::uint32_t src_row_stride, const std::string& store_op) {
  const std::uint32_t w = static_cast<std::uint32_t>(cp.out_w), h = static_cast<std::uint32_t>(cp.out_h);
  ArmCommand a;
  a.kind = ArmOpKind::Quantize;
  a.src = a.dst = base;
  a.planes = static_cast<std::uint32_t>(c);
  a.height = h;
  a.width = w;
  a.src_row_stride = src_row_stride;
  a.dst_row_stride = w;
  a.shift = p.shift;
  out.push_back(arm(p.quan, a));
  std::uint32_t ow = w, oh = h, ox = static_cast<std::uint32_t>(cp.out_x0), oy = static_cast<std::uint32_t>(cp.out_y0);
  if (p.pool) {
    ArmCommand q;
    q.kind = ArmOpKind::MaxPool8;
    q.src = q.dst = base;
    q.planes = static_cast<std::uint32_t>(c);
    q.height = h;
    q.width = w;
    q.src_row_stride = w;
    q.window = p.pool->stride;
    ow = w / q.window;
    oh = h / q.window;
    q.dst_row_stride = ow;
    ox /= q.window;
    oy /= q.window;
    out.push_back(arm(p.pooln, q));
  }
  DmaTransfer t;
  t.sram_addr = base;
  t.sram_row_stride = ow;
  t.sram_plane_stride = ow * oh;
  t.dram_addr = p.map.output + (std::uint64_t(cp.c0) * p.Hp + oy) * p.Wp + ox;
  t.dram_row_stride = static_cast<std::uint64_t>(p.Wp);
  t.dram_plane_stride = std::uint64_t(p.Wp) * p.Hp;
  t.row_bytes = ow;
  t.rows = oh;
  t.planes = static_cast<std::uint32_t>(c);
  out.push_back(dma(CommandKind::DmaStore, store_op, t));
}

// The MLA, then (fused) ReLU, quantization, pooling and the store of the block's int8 result, or
// (not fused) the store of the raw int32 results.
void compute_and_store(std::vector<StreamCommand>& out, const ConvPlan& p, const ConvPiece& cp, int c, int shift, bool fused) {
  out.push_back(mla(p.core, conv_task(cp, c, shift), p.a_base, 0, p.o_base));
  const std::uint32_t o_stride = static_cast<std::uint32_t>(align_up(cp.out_w, 4) * 4);
  if (!fused) {
    out.push_back(dma(CommandKind::DmaStore, p.core, raw_results(p, cp, c, p.o_base, o_stride)));
    return;
  }
  ArmCommand a;
  a.kind = ArmOpKind::Relu32;
  a.src = p.o_base;
  a.planes = static_cast<std::uint32_t>(c);
  a.height = static_cast<std::uint32_t>(cp.out_h);
  a.width = static_cast<std::uint32_t>(cp.out_w);
  a.src_row_stride = o_stride;
  out.push_back(arm(p.acti, a));
  quantize_pool_store(out, p, cp, c, p.o_base, o_stride, p.core);
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

TaskStream new_stream(const std::string& name, const BlockDramMap& m) {
  TaskStream t;
  t.name = name;
  t.dram_bytes = m.total;
  return t;
}

// nofuse_noreuse: PADD_n (pad the input into DRAM), then CONV_n (raw int32 results into DRAM), then
// the ReLU and the quantization (with the pooling) as a stream each, every piece loaded and stored again.
std::vector<TaskStream> conv_nofuse(const ConvPlan& p) {
  const BlockSplit& s = *p.s;
  std::vector<TaskStream> out;
  const std::vector<PieceIndex> fm = fmap_parts(s);
  if (p.pad > 0) {
    TaskStream st = new_stream(p.padd + " nofuse_noreuse", p.map);
    for (std::size_t i = 0; i < fm.size(); ++i) {
      auto& cmds = st.pe[i % kPesPerQpe];
      const ConvPiece cp = conv_piece(*p.b, s, fm[i].iw, fm[i].ih, 0, 0);
      load_ifmap(cmds, p, cp, false, p.padd);
      cmds.push_back(dma(CommandKind::DmaStore, p.padd, padded_window(p, cp)));  // the padded window back
    }
    out.push_back(std::move(st));
  }
  TaskStream st = new_stream(p.core + " nofuse_noreuse", p.map);
  std::size_t n = 0;
  for (const PieceIndex& f : fm)
    for (int ic = 0; ic < s.c.count(); ++ic, ++n) {
      auto& cmds = st.pe[n % kPesPerQpe];
      const ConvPiece cp = conv_piece(*p.b, s, f.iw, f.ih, ic, 0);
      // the filters (small) first: a PE whose fmap part arrives first can start at once, instead of its
      // filters queueing at the DRAM behind the other PEs' fmap parts (which kept the four PEs in step)
      load_filters(cmds, p, cp);
      load_ifmap(cmds, p, cp, p.pad > 0, p.core);
      compute_and_store(cmds, p, cp, cp.task.C, -1, false);
    }
  out.push_back(std::move(st));
  // the element-wise operations, piece by piece over the raw results: ReLU in place in DRAM, then
  // quantization and pooling into the output (the pooling reads the quantization's SRAM rather than a
  // stream of its own storing and loading the quantized map, so POOL_n's clocks are its ARM work only)
  TaskStream relu = new_stream(p.acti + " nofuse_noreuse", p.map);
  TaskStream quant = new_stream(p.quan + " nofuse_noreuse", p.map);
  n = 0;
  for (const PieceIndex& f : fm)
    for (int ic = 0; ic < s.c.count(); ++ic, ++n) {
      const ConvPiece cp = conv_piece(*p.b, s, f.iw, f.ih, ic, 0);
      const std::uint32_t row = static_cast<std::uint32_t>(cp.out_w) * 4;
      const DmaTransfer raw = raw_results(p, cp, cp.task.C, 0, row);
      ArmCommand a;
      a.kind = ArmOpKind::Relu32;
      a.planes = raw.planes;
      a.height = raw.rows;
      a.width = static_cast<std::uint32_t>(cp.out_w);
      a.src_row_stride = row;
      auto& rc = relu.pe[n % kPesPerQpe];
      rc.push_back(dma(CommandKind::DmaLoad, p.acti, raw));
      rc.push_back(arm(p.acti, a));
      rc.push_back(dma(CommandKind::DmaStore, p.acti, raw));
      auto& qc = quant.pe[n % kPesPerQpe];
      qc.push_back(dma(CommandKind::DmaLoad, p.quan, raw));
      quantize_pool_store(qc, p, cp, cp.task.C, 0, row, p.quan);
    }
  out.push_back(std::move(relu));
  out.push_back(std::move(quant));
  return out;
}

// fuse_noreuse: piece n to PE n mod 4, every PE on its own.
TaskStream conv_fuse_noreuse(const ConvPlan& p) {
  const BlockSplit& s = *p.s;
  TaskStream st = new_stream(p.core + " fuse_noreuse", p.map);
  std::size_t n = 0;
  for (const PieceIndex& f : fmap_parts(s))
    for (int ic = 0; ic < s.c.count(); ++ic, ++n) {
      auto& cmds = st.pe[n % kPesPerQpe];
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
  TaskStream st = new_stream(p.core + " fuse_reuse", p.map);
  const std::vector<PieceIndex> fm = fmap_parts(s);
  const int nf = static_cast<int>(fm.size()), nc = s.c.count();
  const int fmap_rounds = (nf + 3) / 4, filter_rounds = (nc + 3) / 4;
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
  int W_B = 0, H_B = 0, shift = 0;
  std::vector<std::uint64_t> piece_offset;  // packed weight pieces, by (iw, ih) = iw * H parts + ih
  std::uint32_t a_base = 0, b_base = 0, o_base = 0, acc_base = 0;
  BlockDramMap map;
  std::string core, fce, acti, quan;
};

MmPlan mm_plan(const OperationBlock& b, const BlockSplit& s, const HwConfig& cfg, bool nofuse) {
  MmPlan p;
  p.b = &b;
  p.s = &s;
  p.cfg = cfg;
  p.W_B = static_cast<int>(b.core_op().out.elements());
  p.H_B = static_cast<int>(b.core_op().in.elements());
  p.core = b.name();
  p.fce = "FCE_" + std::to_string(b.core_op().layer);
  p.acti = op_name(b, PrimitiveKind::ReLU);
  p.quan = op_name(b, PrimitiveKind::Quantization);
  p.shift = 7 + (ceil_log2(static_cast<std::uint64_t>(p.H_B)) + 1) / 2;
  BlockDramMap& m = p.map;
  std::uint64_t at = 0, wbytes = 0;
  auto place = [&](std::uint64_t& base, std::uint64_t& size, std::uint64_t bytes) {
    base = at;
    size = bytes;
    at = align_up(at + bytes, 16);
  };
  place(m.input, m.input_bytes, std::uint64_t(p.H_B) * static_cast<std::uint64_t>(cfg.mac_rows));
  std::uint32_t b_bytes = 0, a_bytes = 0, o_bytes = 0;
  for_each_mm_piece(b, s, cfg, [&](const MmPiece&, std::uint64_t offset, const SramLayout& l) {
    p.piece_offset.push_back(offset);
    wbytes = offset + l.b_bytes;
    b_bytes = std::max(b_bytes, l.b_bytes);
    a_bytes = std::max(a_bytes, l.a_bytes);
    o_bytes = std::max(o_bytes, l.o_bytes);
  });
  place(m.weights, m.weight_bytes, wbytes);
  if (nofuse) {
    place(m.raw, m.raw_bytes, std::uint64_t(s.h.count()) * p.W_B * 4);
    place(m.sums, m.sums_bytes, std::uint64_t(p.W_B) * 4);
  }
  place(m.output, m.output_bytes, static_cast<std::uint64_t>(p.W_B));
  m.total = at;
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

void mm_finish(std::vector<StreamCommand>& out, const MmPlan& p, std::uint32_t acc, int col0, int width) {
  out.push_back(arm(p.acti, row_op(ArmOpKind::Relu32, acc, acc, width)));
  ArmCommand q = row_op(ArmOpKind::Quantize, acc, acc, width);
  q.dst_row_stride = static_cast<std::uint32_t>(width);
  q.shift = p.shift;
  out.push_back(arm(p.quan, q));
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
  TaskStream st = new_stream(p.core + " fuse_noreuse", p.map);
  for (int iw = 0; iw < s.w.count(); ++iw) {
    auto& cmds = st.pe[iw % kPesPerQpe];
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
  TaskStream fc = new_stream(p.core + " nofuse_noreuse", p.map);
  std::size_t n = 0;
  for (int iw = 0; iw < s.w.count(); ++iw)
    for (int ih = 0; ih < s.h.count(); ++ih, ++n) {
      auto& cmds = fc.pe[n % kPesPerQpe];
      const MmPiece mp = mm_piece(*p.b, s, iw, ih);
      mm_load(cmds, p, iw, ih);
      cmds.push_back(mla(p.core, mm_task(mp.task), p.a_base, p.b_base, p.o_base));
      DmaTransfer o;
      o.sram_addr = p.o_base;
      o.dram_addr = p.map.raw + (std::uint64_t(ih) * p.W_B + mp.col0) * 4;
      o.row_bytes = static_cast<std::uint32_t>(mp.task.W_B * 4);
      cmds.push_back(dma(CommandKind::DmaStore, p.core, o));
    }
  TaskStream fce = new_stream(p.fce + " nofuse_noreuse", p.map);
  TaskStream act = new_stream(p.acti + " nofuse_noreuse", p.map);
  TaskStream qua = new_stream(p.quan + " nofuse_noreuse", p.map);
  for (int iw = 0; iw < s.w.count(); ++iw) {
    const int col0 = s.w.begin(iw), width = s.w.sizes[static_cast<std::size_t>(iw)];
    const std::uint32_t row = static_cast<std::uint32_t>(width * 4);
    auto& fc_cmds = fce.pe[iw % kPesPerQpe];
    for (int ih = 0; ih < s.h.count(); ++ih) {
      DmaTransfer in;
      in.dram_addr = p.map.raw + (std::uint64_t(ih) * p.W_B + col0) * 4;
      in.sram_addr = ih == 0 ? 0 : row;
      in.row_bytes = row;
      fc_cmds.push_back(dma(CommandKind::DmaLoad, p.fce, in));
      if (ih > 0) fc_cmds.push_back(arm(p.fce, row_op(ArmOpKind::AddInt32, row, 0, width)));
    }
    DmaTransfer sum;
    sum.sram_addr = 0;
    sum.dram_addr = p.map.sums + std::uint64_t(col0) * 4;
    sum.row_bytes = row;
    fc_cmds.push_back(dma(CommandKind::DmaStore, p.fce, sum));
    auto& a = act.pe[iw % kPesPerQpe];
    a.push_back(dma(CommandKind::DmaLoad, p.acti, sum));
    a.push_back(arm(p.acti, row_op(ArmOpKind::Relu32, 0, 0, width)));
    a.push_back(dma(CommandKind::DmaStore, p.acti, sum));
    auto& q = qua.pe[iw % kPesPerQpe];
    q.push_back(dma(CommandKind::DmaLoad, p.quan, sum));
    ArmCommand qc = row_op(ArmOpKind::Quantize, 0, 0, width);
    qc.dst_row_stride = static_cast<std::uint32_t>(width);
    qc.shift = p.shift;
    q.push_back(arm(p.quan, qc));
    DmaTransfer o;
    o.sram_addr = 0;
    o.dram_addr = p.map.output + static_cast<std::uint64_t>(col0);
    o.row_bytes = static_cast<std::uint32_t>(width);
    q.push_back(dma(CommandKind::DmaStore, p.quan, o));
  }
  std::vector<TaskStream> v;
  v.push_back(std::move(fc));
  if (s.h.count() > 1) v.push_back(std::move(fce));
  v.push_back(std::move(act));
  v.push_back(std::move(qua));
  return v;
}

}  // namespace

bool distributable(const OperationBlock& b, const BlockSplit& s, Strategy strategy, const HwConfig& cfg, std::string* why) {
  auto no = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  if (b.kind == BlockKind::Pooling) return no("pooling blocks are not distributed yet");
  if (b.kind == BlockKind::MatMul) {
    if (strategy == Strategy::FuseReuse) return no("MM blocks have no data reuse (thesis 4.3.3)");
    return true;
  }
  if (b.core_op().stride != 1) return no("strided convolutions are not distributed yet");
  if (s.d.count() > 1) return no("input-channel splits are not distributed yet");
  for (const Operation& o : b.ops)
    if (o.kind == PrimitiveKind::ElementwiseAdd || o.name.rfind("CONV_SC", 0) == 0)
      return no("residual blocks are not distributed yet");
  if (b.fused_pool() && b.fused_pool()->pool != PoolType::Max) return no("average pooling is not distributed yet");
  if (s.c.count() > 1 && s.c.sizes.front() % cfg.mac_rows != 0) return no("filter parts not in whole MAC-row groups");
  return true;
}

BlockStreams distribute(const OperationBlock& b, const BlockSplit& s, Strategy strategy, const HwConfig& cfg) {
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
  const ConvPlan p = conv_plan(b, s, cfg, nofuse);
  r.map = p.map;
  r.quant_shift = p.shift;
  if (nofuse) {
    r.streams = conv_nofuse(p);
  } else if (strategy == Strategy::FuseNoreuse) {
    r.streams.push_back(conv_fuse_noreuse(p));
  } else {
    // equations 4.2 / 4.3 with the sizes of all parts (the thesis's "size of the split feature map" read
    // as the total over the parts, the only reading under which the comparison means anything)
    double fmap = 0, filter = 0;
    for (const PieceIndex& f : fmap_parts(s)) {
      const ConvPiece cp = conv_piece(b, s, f.iw, f.ih, 0, 0);
      fmap += double(cp.task.Wi) * cp.task.Hi * cp.task.D;
    }
    filter = double(p.conv->Wf) * p.conv->Hf * p.conv->in.D * p.C;
    r.fmap_reuse_bytes = fmap + filter * std::ceil(fmap_parts(s).size() / 4.0);
    r.filter_reuse_bytes = filter + fmap * std::ceil(s.c.count() / 4.0);
    r.reuse = r.fmap_reuse_bytes <= r.filter_reuse_bytes ? Reuse::Ifmap : Reuse::Filter;
    r.streams.push_back(conv_fuse_reuse(p, r.reuse));
  }
  return r;
}

std::vector<std::uint8_t> block_dram_image(const OperationBlock& b, const BlockSplit& s, const BlockStreams& bs,
                                           const HwConfig& cfg, std::uint64_t seed) {
  std::vector<std::uint8_t> img(bs.map.total, 0);
  SplitMix64 rng{seed};
  auto draw = [&] { return static_cast<std::uint8_t>(rng.next() >> 56); };
  if (b.kind == BlockKind::MatMul) {
    const int H_B = static_cast<int>(b.core_op().in.elements()), W_B = static_cast<int>(b.core_op().out.elements());
    for (int k = 0; k < H_B; ++k) img[bs.map.input + std::uint64_t(k) * static_cast<std::uint64_t>(cfg.mac_rows)] = draw();
    std::vector<std::uint8_t> w(std::uint64_t(H_B) * W_B);
    for (auto& v : w) v = draw();
    for_each_mm_piece(b, s, cfg, [&](const MmPiece& mp, std::uint64_t off, const SramLayout& l) {
      const std::uint32_t stride = l.b_row_stride;
      for (int k = 0; k < mp.task.H_B; ++k)
        for (int j = 0; j < mp.task.W_B; ++j)
          img[bs.map.weights + off + std::uint64_t(k) * stride + j] = w[std::uint64_t(mp.row0 + k) * W_B + mp.col0 + j];
    });
    return img;
  }
  const Operation& conv = b.core_op();
  for (std::uint64_t i = 0; i < bs.map.input_bytes; ++i) img[bs.map.input + i] = draw();
  // filters (c, d, ky, kx) in MAC-row groups: group g at g * stride, byte ((d*Hf + ky)*Wf + kx)*ROWS + c%ROWS
  const int rows = cfg.mac_rows, D = conv.in.D, C = conv.out.D;
  const std::uint64_t stride = align_up(std::uint64_t(D) * conv.Hf * conv.Wf * rows, 16);
  for (int c = 0; c < C; ++c)
    for (int d = 0; d < D; ++d)
      for (int ky = 0; ky < conv.Hf; ++ky)
        for (int kx = 0; kx < conv.Wf; ++kx)
          img[bs.map.weights + std::uint64_t(c / rows) * stride + ((std::uint64_t(d) * conv.Hf + ky) * conv.Wf + kx) * rows +
              c % rows] = draw();
  return img;
}

std::vector<std::uint8_t> golden_block_output(const OperationBlock& b, const BlockSplit& s, const BlockStreams& bs,
                                              const HwConfig& cfg, const std::vector<std::uint8_t>& img) {
  auto quant = [&](std::int32_t v) {
    v = std::max<std::int32_t>(0, v) >> bs.quant_shift;
    return static_cast<std::uint8_t>(static_cast<std::int8_t>(std::clamp<std::int32_t>(v, -128, 127)));
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
    for (int j = 0; j < W_B; ++j) out[j] = quant(static_cast<std::int32_t>(sum[j]));
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
  const ConvShape shape{W, H, D, conv.Wf, conv.Hf, C, 1};
  const std::vector<std::int32_t> raw = golden_conv(shape, f, in, cfg.accumulator_bits);
  const int Wo = shape.Wo(), Ho = shape.Ho();
  const Operation* pool = b.fused_pool();
  const int k = pool ? pool->stride : 1, Wp = Wo / k, Hp = Ho / k;
  std::vector<std::uint8_t> out(std::size_t(C) * Hp * Wp);
  for (int c = 0; c < C; ++c)
    for (int y = 0; y < Hp; ++y)
      for (int x = 0; x < Wp; ++x) {
        int m = -128;
        for (int ky = 0; ky < k; ++ky)
          for (int kx = 0; kx < k; ++kx)
            m = std::max<int>(m, static_cast<std::int8_t>(quant(raw[(std::size_t(c) * Ho + y * k + ky) * Wo + x * k + kx])));
        out[(std::size_t(c) * Hp + y) * Wp + x] = static_cast<std::uint8_t>(static_cast<std::int8_t>(m));
      }
  return out;
}

}  // namespace s2::mapper
