#include "conv_strategies.h"

#include <algorithm>
#include <cmath>

#include "stream_commands.h"

namespace s2::mapper {

std::vector<TaskStream> conv_nofuse(const ConvPlan& p) {
  const BlockSplit& s = *p.s;
  std::vector<TaskStream> out;
  const std::vector<PieceIndex> fm = fmap_parts(s);
  if (p.pad > 0) {
    TaskStream st = new_stream(p.padd + " nofuse_noreuse", p.map, p.workers);
    PePicker pick(p.workers, input_parts(p, fm.size()));
    // every input channel's window: a grouped convolution's pieces read one group's channels each
    for (std::size_t i = 0; i < fm.size(); ++i)
      for (int g = 0; g < p.conv->groups; ++g)
        for (int id = 0; id < s.d.count(); ++id) {
          auto& cmds = st.pe[static_cast<std::size_t>(pick.next(static_cast<int>(i) * p.conv->groups + g))];
          ConvPiece cp = conv_piece(*p.b, s, fm[i].iw, fm[i].ih, 0, id);
          cp.d0 += g * p.conv->weight_depth();
          load_ifmap(cmds, p, cp, false, p.padd);
          cmds.push_back(dma_command(CommandKind::DmaStore, p.padd, input_window(p, cp, p.map.padded)));  // the padded window back
        }
    out.push_back(std::move(st));
  }
  TaskStream st = new_stream(p.core + " nofuse_noreuse", p.map, p.workers);
  PePicker pick(p.workers, input_parts(p, fm.size()));
  for (std::size_t i = 0; i < fm.size(); ++i)
    for (int ic = 0; ic < s.c.count(); ++ic) {
      const PieceIndex& f = fm[i];
      auto& cmds = st.pe[static_cast<std::size_t>(pick.next(input_part(p, i, ic)))];
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
    PePicker es_pick(p.workers, input_parts(p, fm.size()));
    for (std::size_t i = 0; i < fm.size(); ++i)
      for (int ic = 0; ic < s.c.count(); ++ic) {
        const PieceIndex& f = fm[i];
        auto& cmds = es.pe[static_cast<std::size_t>(es_pick.next(input_part(p, i, ic)))];
        const ConvPiece cp = conv_piece(*p.b, s, f.iw, f.ih, ic, 0);
        const ResultView raw = packed_raw_view(p, cp, cp.task.C);
        if (on_raw || o->kind == PrimitiveKind::Quantization) {
          const DmaTransfer t = raw_results(p, cp, raw, 0);
          cmds.push_back(dma_command(CommandKind::DmaLoad, o->name, t));
          element_wise(cmds, p, cp, raw, 0, 0, ops);
          if (on_raw) cmds.push_back(dma_command(CommandKind::DmaStore, o->name, t));
          else cmds.push_back(dma_command(CommandKind::DmaStore, o->name, int8_results(p, cp, raw, p.map.output, 0)));
        } else {
          // on the int8 output in place; the shortcut's part after it
          const DmaTransfer t = int8_results(p, cp, raw, p.map.output, 0);
          cmds.push_back(dma_command(CommandKind::DmaLoad, o->name, t));
          element_wise(cmds, p, cp, raw, 0, static_cast<std::uint32_t>(align_up(t.bytes(), 16)), ops);
          cmds.push_back(dma_command(CommandKind::DmaStore, o->name, t));
        }
      }
    out.push_back(std::move(es));
  }
  return out;
}

TaskStream conv_fuse_noreuse(const ConvPlan& p) {
  const BlockSplit& s = *p.s;
  TaskStream st = new_stream(p.core + " fuse_noreuse", p.map, p.workers);
  const std::vector<PieceIndex> fm = fmap_parts(s);
  PePicker pick(p.workers, input_parts(p, fm.size()));
  for (std::size_t i = 0; i < fm.size(); ++i)
    for (int ic = 0; ic < s.c.count(); ++ic) {
      const PieceIndex& f = fm[i];
      auto& cmds = st.pe[static_cast<std::size_t>(pick.next(input_part(p, i, ic)))];
      const ConvPiece cp = conv_piece(*p.b, s, f.iw, f.ih, ic, 0);
      load_filters(cmds, p, cp);  // first, as in conv_nofuse
      load_ifmap(cmds, p, cp, false, p.core);
      compute_and_store(cmds, p, cp, cp.task.C, -1, true);
    }
  return st;
}

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
        cmds.push_back(sync_command());  // every PE's operands are in place before anyone reads a neighbour's
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
          cmds.push_back(sync_command());
        }
      }
    }
  return st;
}

void choose_reuse(const ConvPlan& p, BlockStreams& r) {
  const BlockSplit& s = *p.s;
  // equations 4.2 / 4.3 with the sizes of all parts (the thesis's "size of the split feature map" read
  // as the total over the parts, the only reading under which the comparison means anything)
  double fmap = 0, filter = 0;
  for (const PieceIndex& f : fmap_parts(s)) {
    const ConvShape w = window_task(p, conv_piece(*p.b, s, f.iw, f.ih, 0, 0)).conv;
    fmap += double(w.Wi) * w.Hi * w.D;
  }
  filter = double(p.conv->Wf) * p.conv->Hf * p.conv->in.D * p.C;
  r.fmap_reuse_bytes = fmap + filter * std::ceil(double(fmap_parts(s).size()) / kPesPerQpe);
  r.filter_reuse_bytes = filter + fmap * std::ceil(double(s.c.count()) / kPesPerQpe);
  r.reuse = r.fmap_reuse_bytes <= r.filter_reuse_bytes ? Reuse::Ifmap : Reuse::Filter;
}

}  // namespace s2::mapper
