#include "pool_streams.h"

#include <functional>

#include "stream_commands.h"

namespace s2::mapper {

namespace {

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
  out.push_back(arm_command(p.core, a));
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
  out.push_back(dma_command(CommandKind::DmaStore, p.core, t));
}

}  // namespace

ConvPlan pool_plan(const OperationBlock& b, const BlockSplit& s, const HwConfig& cfg, bool nofuse) {
  ConvPlan p = map_plan(b, s, cfg);
  BlockDramMap& m = p.map;
  DramPlacer dram;
  dram.place(m.input, m.input_bytes, std::uint64_t(p.in.W) * p.in.H * p.in.D);
  if (nofuse && p.padded()) dram.place(m.padded, m.padded_bytes, std::uint64_t(p.conv->in.W) * p.conv->in.H * p.conv->in.D);
  dram.place(m.output, m.output_bytes, std::uint64_t(p.Wo) * p.Ho * p.C);
  m.total = dram.at;
  return p;
}

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
  if (nofuse && p.padded()) {
    TaskStream st = new_stream(p.padd + " nofuse_noreuse", p.map, p.workers);
    for_each_piece([&](std::vector<StreamCommand>& cmds, const ConvPiece& cp) {
      load_ifmap(cmds, p, cp, false, p.padd);
      cmds.push_back(dma_command(CommandKind::DmaStore, p.padd, input_window(p, cp, p.map.padded)));
    }, st);
    out.push_back(std::move(st));
  }
  TaskStream st = new_stream(p.core + (nofuse ? " nofuse_noreuse" : " fuse_noreuse"), p.map, p.workers);
  for_each_piece([&](std::vector<StreamCommand>& cmds, const ConvPiece& cp) {
    load_ifmap(cmds, p, cp, nofuse && p.padded(), p.core);
    pool_and_store(cmds, p, cp);
  }, st);
  out.push_back(std::move(st));
  return out;
}

}  // namespace s2::mapper
