#include "elementwise_streams.h"

#include "splitter.h"
#include "stream_commands.h"

namespace s2::mapper {

namespace {

// The piece's window of a [D][H][W] map at DRAM `base`, into SRAM at `sram` with rows 16-byte aligned.
DmaTransfer window(const ConvPlan& p, int x0, int y0, int c0, int w, int h, int c, std::uint64_t base, std::uint32_t sram) {
  DmaTransfer t;
  t.dram_addr = base + (std::uint64_t(c0) * p.Ho + y0) * p.Wo + x0;
  t.dram_row_stride = std::uint64_t(p.Wo);
  t.dram_plane_stride = std::uint64_t(p.Wo) * p.Ho;
  t.sram_addr = sram;
  t.sram_row_stride = static_cast<std::uint32_t>(align_up(w, 16));
  t.sram_plane_stride = t.sram_row_stride * static_cast<std::uint32_t>(h);
  t.row_bytes = static_cast<std::uint32_t>(w);
  t.rows = static_cast<std::uint32_t>(h);
  t.planes = static_cast<std::uint32_t>(c);
  return t;
}

// A contiguous run of DRAM bytes into SRAM.
DmaTransfer bytes(std::uint64_t from, std::uint64_t n, std::uint32_t sram) {
  DmaTransfer t;
  t.dram_addr = from;
  t.sram_addr = sram;
  t.row_bytes = static_cast<std::uint32_t>(n);
  return t;
}

}  // namespace

ConvPlan elementwise_plan(const OperationBlock& b, const BlockSplit& s, const HwConfig& cfg) {
  ConvPlan p = map_plan(b, s, cfg);
  const ElementwiseSpec& e = *p.conv->elementwise;
  const std::uint64_t values = std::uint64_t(p.Wo) * p.Ho * p.C;
  BlockDramMap& m = p.map;
  DramPlacer dram;
  dram.place(m.input, m.input_bytes, values);
  if (e.op == EltOp::Add || e.op == EltOp::Mul) dram.place(m.shortcut, m.shortcut_bytes, values);
  if (e.op == EltOp::ChannelMul) dram.place(m.shortcut, m.shortcut_bytes, std::uint64_t(p.C));
  if (e.op == EltOp::Table) dram.place(m.weights, m.weight_bytes, e.table.size());
  if (e.op == EltOp::Affine) dram.place(m.weights, m.weight_bytes, 8ull * std::uint64_t(p.C));
  dram.place(m.output, m.output_bytes, values);
  m.total = dram.at;
  return p;
}

std::vector<TaskStream> elementwise_streams(const ConvPlan& p, bool nofuse) {
  const BlockSplit& s = *p.s;
  const ElementwiseSpec& e = *p.conv->elementwise;
  const bool two_maps = e.op == EltOp::Add || e.op == EltOp::Mul;
  TaskStream st = new_stream(p.core + (nofuse ? " nofuse_noreuse" : " fuse_noreuse"), p.map, p.workers);
  PePicker pick(p.workers, s.h.count() * s.w.count());
  for (int ic = 0; ic < s.c.count(); ++ic)
    for (int ih = 0; ih < s.h.count(); ++ih)
      for (int iw = 0; iw < s.w.count(); ++iw) {
        std::vector<StreamCommand>& cmds = st.pe[static_cast<std::size_t>(pick.next(ih * s.w.count() + iw))];
        const int x0 = s.w.begin(iw), y0 = s.h.begin(ih), c0 = s.c.begin(ic);
        const int w = s.w.sizes[std::size_t(iw)], h = s.h.sizes[std::size_t(ih)], c = s.c.sizes[std::size_t(ic)];
        // SRAM: the first map's window at 0 (changed in place), the second's after it, the parameters last
        const DmaTransfer a = window(p, x0, y0, c0, w, h, c, p.map.input, 0);
        const std::uint32_t map_bytes = static_cast<std::uint32_t>(align_up(std::uint64_t(a.sram_plane_stride) * c, 16));
        const std::uint32_t params = two_maps ? 2 * map_bytes : map_bytes;
        cmds.push_back(dma_command(CommandKind::DmaLoad, p.core, a));
        if (two_maps) cmds.push_back(dma_command(CommandKind::DmaLoad, p.core, window(p, x0, y0, c0, w, h, c, p.map.shortcut, map_bytes)));
        const bool per_channel_tables = e.op == EltOp::Table && e.tables() > 1;
        if (e.op == EltOp::ChannelMul) cmds.push_back(dma_command(CommandKind::DmaLoad, p.core, bytes(p.map.shortcut + std::uint64_t(c0), std::uint64_t(c), params)));
        if (e.op == EltOp::Table)
          cmds.push_back(dma_command(CommandKind::DmaLoad, p.core,
                                     bytes(p.map.weights + (per_channel_tables ? 256ull * std::uint64_t(c0) : 0),
                                           elementwise_param_bytes(e, c), params)));
        if (e.op == EltOp::Affine)
          cmds.push_back(dma_command(CommandKind::DmaLoad, p.core, bytes(p.map.weights + 8ull * std::uint64_t(c0), 8ull * std::uint64_t(c), params)));
        ArmCommand op;
        op.kind = elementwise_arm_op(e.op);
        op.planes = static_cast<std::uint32_t>(c);
        op.height = static_cast<std::uint32_t>(h);
        op.width = static_cast<std::uint32_t>(w);
        op.src_row_stride = op.dst_row_stride = a.sram_row_stride;
        op.src_plane_stride = op.dst_plane_stride = a.sram_plane_stride;
        op.src = op.dst = 0;
        if (two_maps) op.src = map_bytes;  // dst (the first map) op= src (the second)
        op.table = params;
        op.table_plane_step = per_channel_tables ? 256 : 0;
        op.shift = e.shift;
        op.shift_a = e.shift_a;
        op.shift_b = e.shift_b;
        op.relu = e.relu;
        cmds.push_back(arm_command(p.core, op));
        DmaTransfer out = window(p, x0, y0, c0, w, h, c, p.map.output, 0);
        cmds.push_back(dma_command(CommandKind::DmaStore, p.core, out));
      }
  std::vector<TaskStream> r;
  r.push_back(std::move(st));
  return r;
}

ArmOpKind elementwise_arm_op(EltOp op) {
  return op == EltOp::Table ? ArmOpKind::Table8
         : op == EltOp::Affine ? ArmOpKind::Affine8
         : op == EltOp::Add    ? ArmOpKind::AddScaled8
         : op == EltOp::Mul    ? ArmOpKind::Mul8
                               : ArmOpKind::ChannelMul8;
}

}  // namespace s2::mapper
