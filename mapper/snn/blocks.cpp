#include "mapper/snn/blocks.h"

#include "mapper/stream_commands.h"

namespace s2::mapper {

SnnDram snn_dram(const SnnLayer& l, int lead, int tail, std::vector<std::uint8_t>& image) {
  SnnDram d;
  d.lead = lead;
  const std::uint64_t rows = std::uint64_t(lead) + std::uint64_t(l.timesteps) + std::uint64_t(tail);
  d.currents = align_up(rows * std::uint64_t(l.pre), kSnnWord);
  d.bytes = align_up(d.currents + std::uint64_t(l.timesteps) * std::uint64_t(l.post) * 4, kSnnWord);
  image.assign(d.bytes, 0);
  std::copy(l.spikes.begin(), l.spikes.end(), image.begin() + static_cast<std::ptrdiff_t>(std::uint64_t(lead) * std::uint64_t(l.pre)));
  return d;
}

StreamCommand load_spikes(const SnnLayer& l, const SnnDram& d, std::uint64_t row, int rows, std::uint32_t at) {
  DmaTransfer t;
  t.dram_addr = d.spikes + row * std::uint64_t(l.pre);
  t.sram_addr = at;
  t.row_bytes = static_cast<std::uint32_t>(std::uint64_t(rows) * std::uint64_t(l.pre));
  return dma_command(CommandKind::DmaLoad, "SPIKES", t);
}

StreamCommand store_currents(const SnnLayer& l, const SnnDram& d, int t0, int rows, std::uint32_t at, std::uint32_t sram_row_bytes) {
  DmaTransfer t;
  t.dram_addr = d.currents + std::uint64_t(t0) * std::uint64_t(l.post) * 4;
  t.dram_row_stride = std::uint64_t(l.post) * 4;
  t.sram_addr = at;
  t.sram_row_stride = sram_row_bytes;
  t.row_bytes = static_cast<std::uint32_t>(l.post) * 4;
  t.rows = static_cast<std::uint32_t>(rows);
  return dma_command(CommandKind::DmaStore, "CURRENTS", t);
}

StreamCommand clear(std::uint32_t at, std::uint32_t bytes) {
  ArmCommand a;
  a.kind = ArmOpKind::Pad;
  a.src = at;
  a.width = bytes;
  a.height = 1;
  a.src_row_stride = bytes;
  a.pad_top = 1;
  return arm_command("RING", a);
}

SpikeMap::SpikeMap(const SnnLayer& l, const HwConfig& cfg) : delays(l.delays), pre(l.pre), rows(cfg.mac_rows) {
  groups = (delays + rows - 1) / rows;
  window = groups * rows + delays - 1;
  MmShape mm;
  mm.W_A = mm.H_B = delays * pre;
  mm.H_A = delays;
  mm.W_B = l.post;
  layout = sram_layout(mm_task(mm), cfg);
}

// Operand A value (r, (q, i)) of group g is s[t0 + g*rows + r - d][i] = window row g*rows + r + q: per group and
// q, `rows` planes (r) of `pre` values, each one byte into its MAC row's lane.
void SpikeMap::build(std::vector<StreamCommand>& cmds, std::uint32_t window_at, std::uint32_t map_at) const {
  for (int g = 0; g < groups; ++g)
    for (int q = 0; q < delays; ++q) {
      ArmCommand cp;
      cp.kind = ArmOpKind::Copy8;
      cp.src = window_at + static_cast<std::uint32_t>(std::uint64_t(g * rows + q) * std::uint64_t(pre));
      cp.src_row_stride = 1;
      cp.src_plane_stride = static_cast<std::uint32_t>(pre);
      cp.dst = map_at + static_cast<std::uint32_t>(std::uint64_t(g) * layout.a_group_stride + std::uint64_t(q) * std::uint64_t(pre) * rows);
      cp.dst_row_stride = static_cast<std::uint32_t>(rows);
      cp.dst_plane_stride = 1;
      cp.width = 1;
      cp.height = static_cast<std::uint32_t>(pre);
      cp.planes = static_cast<std::uint32_t>(rows);
      cmds.push_back(arm_command("SPIKE_MAP", cp));
    }
}

StreamCommand spikes_to_operand_a(std::uint32_t spikes_at, std::uint32_t a_at, int pre, int mac_rows) {
  ArmCommand cp;
  cp.kind = ArmOpKind::Copy8;
  cp.src = spikes_at;
  cp.src_row_stride = 1;
  cp.dst = a_at;
  cp.dst_row_stride = static_cast<std::uint32_t>(mac_rows);
  cp.width = 1;
  cp.height = static_cast<std::uint32_t>(pre);
  return arm_command("SPIKE_MAP", cp);
}

StreamCommand circle_reverse(const SpikeMap& map, std::uint32_t map_at, std::uint32_t table_at, int columns) {
  ArmCommand perm;
  perm.kind = ArmOpKind::PermuteWords;
  perm.src = map_at;
  perm.width = static_cast<std::uint32_t>(columns);
  perm.planes = static_cast<std::uint32_t>(map.groups);
  perm.src_plane_stride = map.layout.a_group_stride;
  perm.table = table_at;
  return arm_command("REORDER", perm);
}

}  // namespace s2::mapper
