#include "mapper/snn/layouts.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "mapper/snn/blocks.h"
#include "mapper/snn/deployment.h"
#include "mapper/snn/echelon.h"
#include "mapper/stream_commands.h"
#include "model/noc/mesh.h"
#include "model/sram_layout.h"

namespace s2::mapper {

const char* to_string(SnnLayout l) {
  switch (l) {
    case SnnLayout::SerialArm: return "serial_arm";
    case SnnLayout::OriginalMac: return "original_mac";
    case SnnLayout::OperandStack: return "operand_stack";
    case SnnLayout::Echelon: return "echelon";
    case SnnLayout::EchelonMixed: return "echelon_mixed";
  }
  return "?";
}

std::optional<SnnLayout> snn_layout_named(const std::string& name) {
  for (SnnLayout l : kSnnLayouts)
    if (name == to_string(l)) return l;
  return std::nullopt;
}

namespace {

// A ring buffer's step done: slot t's currents stored to DRAM, and the slot cleared for step t + D.
void ring_step_out(const SnnLayer& l, const SnnDram& d, int t, std::uint32_t ring, std::vector<StreamCommand>& cmds) {
  const std::uint32_t slot = static_cast<std::uint32_t>(l.post) * 4;
  const std::uint32_t out = ring + static_cast<std::uint32_t>(std::uint64_t(t % l.delays) * slot);
  cmds.push_back(store_currents(l, d, t, 1, out, slot));
  cmds.push_back(clear(out, slot));
}

void serial_arm(const SnnLayer& l, const HwConfig&, SnnPlan& p, std::vector<std::uint8_t>& sram) {
  const std::uint64_t wbytes = std::uint64_t(l.delays) * l.pre * l.post, slot = std::uint64_t(l.post) * 4;
  SramAllocator a;
  const std::uint32_t w = a.take(wbytes), s = a.take(std::uint64_t(l.pre)), ring = a.take(slot * std::uint64_t(l.delays));
  p.sram.weights = align_up(wbytes, kSnnWord);
  p.sram.spikes = align_up(l.pre, kSnnWord);
  p.sram.currents = align_up(slot * std::uint64_t(l.delays), kSnnWord);
  sram.assign(a.next, 0);
  std::copy(l.weights.begin(), l.weights.end(), sram.begin() + w);  // dense [d][pre][post]
  const SnnDram d = snn_dram(l, 0, 0, p.memory.drams[0]);
  p.currents_dram = d.currents;
  auto& cmds = p.stream.pe[0];
  for (int t = 0; t < l.timesteps; ++t) {
    cmds.push_back(load_spikes(l, d, std::uint64_t(t), 1, s));
    // each spike of step t adds its weight rows of delay d into slot t + d: one pass over the spikes per run
    ring_runs(t, 0, l.delays, l.delays, [&](int d0, int s0, int n) {
      ArmCommand m;
      m.kind = ArmOpKind::MacInt8;
      m.src = s;
      m.a_col_stride = 1;
      m.depth = static_cast<std::uint32_t>(l.pre);
      m.height = 1;
      m.width = static_cast<std::uint32_t>(l.post);
      m.planes = static_cast<std::uint32_t>(n);
      m.weights = w + static_cast<std::uint32_t>(std::uint64_t(d0) * l.pre * l.post);
      m.weights_row_stride = static_cast<std::uint32_t>(l.post);
      m.weights_plane_stride = static_cast<std::uint32_t>(std::uint64_t(l.pre) * l.post);
      m.dst = ring + static_cast<std::uint32_t>(std::uint64_t(s0) * slot);
      m.dst_row_stride = static_cast<std::uint32_t>(slot);
      m.dst_plane_stride = static_cast<std::uint32_t>(slot);
      cmds.push_back(arm_command("SYNAPSES", m));
    });
    ring_step_out(l, d, t, ring, cmds);
  }
}

void original_mac(const SnnLayer& l, const HwConfig& cfg, SnnPlan& p, std::vector<std::uint8_t>& sram) {
  MmShape mm;
  mm.W_A = mm.H_B = l.pre;
  mm.H_A = 1;
  mm.W_B = l.post;
  const SramLayout lay = sram_layout(mm_task(mm), cfg);
  const std::uint64_t slot = std::uint64_t(l.post) * 4;
  SramAllocator a;
  std::vector<std::uint32_t> b(static_cast<std::size_t>(l.delays));
  for (auto& x : b) x = a.take(lay.b_bytes);
  const std::uint32_t s = a.take(std::uint64_t(l.pre)), am = a.take(lay.a_bytes), c = a.take(lay.o_bytes);
  const std::uint32_t ring = a.take(slot * std::uint64_t(l.delays));
  p.sram.weights = std::uint64_t(l.delays) * align_up(lay.b_bytes, kSnnWord);
  p.sram.spikes = align_up(l.pre, kSnnWord);
  p.sram.spike_map = align_up(lay.a_bytes, kSnnWord);
  p.sram.buffers = align_up(lay.o_bytes, kSnnWord);
  p.sram.currents = align_up(slot * std::uint64_t(l.delays), kSnnWord);
  sram.assign(a.next, 0);
  for (int d = 0; d < l.delays; ++d)  // W_d as operand B: row i (pre-neuron), column j (post-neuron)
    for (int i = 0; i < l.pre; ++i)
      for (int j = 0; j < l.post; ++j)
        sram[b[std::size_t(d)] + std::size_t(i) * lay.b_row_stride + std::size_t(j)] = static_cast<std::uint8_t>(l.weight(d, i, j));
  const SnnDram d = snn_dram(l, 0, 0, p.memory.drams[0]);
  p.currents_dram = d.currents;
  auto& cmds = p.stream.pe[0];
  for (int t = 0; t < l.timesteps; ++t) {
    cmds.push_back(load_spikes(l, d, std::uint64_t(t), 1, s));
    cmds.push_back(spikes_to_operand_a(s, am, l.pre, cfg.mac_rows));
    for (int dl = 0; dl < l.delays; ++dl) {
      cmds.push_back(mla_command("MM_DELAY", mm_task(mm), am, b[std::size_t(dl)], c));
      ++p.mla_tasks;
      ArmCommand add;
      add.kind = ArmOpKind::AddInt32;
      add.src = c;
      add.dst = ring + static_cast<std::uint32_t>(std::uint64_t((t + dl) % l.delays) * slot);
      add.width = static_cast<std::uint32_t>(l.post);
      add.src_row_stride = lay.o_row_stride * 4;
      add.dst_row_stride = static_cast<std::uint32_t>(slot);
      cmds.push_back(arm_command("RING", add));
    }
    ring_step_out(l, d, t, ring, cmds);
  }
}

void operand_stack(const SnnLayer& l, const HwConfig& cfg, SnnPlan& p, std::vector<std::uint8_t>& sram) {
  const int D = l.delays;
  const SpikeMap map(l, cfg);
  const SramLayout& lay = map.layout;
  SramAllocator a;
  const std::uint32_t b = a.take(lay.b_bytes), s = a.take(std::uint64_t(map.window) * l.pre), am = a.take(lay.a_bytes),
                      c = a.take(lay.o_bytes);
  p.sram.weights = align_up(lay.b_bytes, kSnnWord);
  p.sram.spikes = align_up(std::uint64_t(map.window) * l.pre, kSnnWord);
  p.sram.spike_map = align_up(lay.a_bytes, kSnnWord);
  p.sram.currents = align_up(lay.o_bytes, kSnnWord);
  sram.assign(a.next, 0);
  // the weight-delay map: row n = (q, i), q = D - 1 - d, holds W[d][i][:]
  for (int n = 0; n < D * l.pre; ++n)
    for (int j = 0; j < l.post; ++j)
      sram[b + std::size_t(n) * lay.b_row_stride + std::size_t(j)] = static_cast<std::uint8_t>(weight_delay(l, n, j));
  // spike rows: D - 1 of zeros first; the last batch's window reaches groups x rows past its first step
  const SnnDram d = snn_dram(l, D - 1, map.groups * map.rows, p.memory.drams[0]);
  p.currents_dram = d.currents;
  auto& cmds = p.stream.pe[0];
  for (int t0 = 0; t0 < l.timesteps; t0 += D) {
    // window row w holds step t0 - (D - 1) + w, i.e. DRAM spike row t0 + w
    cmds.push_back(load_spikes(l, d, std::uint64_t(t0), map.window, s));
    map.build(cmds, s, am);
    cmds.push_back(mla_command("MM_STACK", mm_task(MmShape{D * l.pre, D, l.post, D * l.pre}), am, b, c));
    ++p.mla_tasks;
    cmds.push_back(store_currents(l, d, t0, std::min(D, l.timesteps - t0), c, lay.o_row_stride * 4));
  }
}

// Echelon Reorder on one PE (the Dominant and its Subordinate in one): the shifted spike map built as
// operand_stack's, its columns permuted on the ARM into echelon order (PermuteWords, the paper's Circle
// Reverse), then per band and row group one multiplication of the band's columns of the map by the band's
// rectangle, each result added by the ARM into the batch's currents at the band's columns. `mixed`: the last
// post mod 16 columns are no band's: the ARM multiplies them itself (MacInt8, unpadded weights).
void echelon(const SnnLayer& l, const HwConfig& cfg, bool mixed, SnnPlan& p, std::vector<std::uint8_t>& sram) {
  const int D = l.delays, N = D * l.pre, rows = cfg.mac_rows;
  if (N > 65535) throw std::invalid_argument("SNN layer: echelon's permutation table holds 16-bit indices: delays x pre must be below 65536");
  // Circle Reverse moves operand A's columns as 32-bit words: a column is one byte per MAC row
  if (rows != 4)
    throw std::invalid_argument("SNN layer: " + std::string(mixed ? "echelon_mixed" : "echelon") +
                                " permutes operand A's columns as 32-bit words (4 MAC rows); this MAC array has " +
                                std::to_string(rows) + " rows");
  const SpikeMap map(l, cfg);
  const int post16 = static_cast<int>(align_up(std::uint64_t(l.post), 16));
  const int blue = mixed ? l.post / 16 * 16 : post16;
  const int pink = l.post - blue;  // the ARM's columns (mixed only; 0 when post is a multiple of 16)
  const EchelonMap e = echelon_reorder(l, blue);
  const std::uint64_t cur_row = std::uint64_t(l.post) * 4;
  // each band's rectangle as operand B, and the largest result any band's multiplication leaves
  SramAllocator a;
  std::vector<std::uint32_t> band_at;
  std::vector<MmShape> band_mm;
  std::uint64_t band_bytes = 0, temp_bytes = 0;
  for (const EchelonBand& b : e.bands) {
    band_mm.push_back(MmShape{b.rows, rows, blue - b.first_col, b.rows});
    const SramLayout bl = sram_layout(mm_task(band_mm.back()), cfg);
    band_at.push_back(a.take(bl.b_bytes));
    band_bytes += align_up(bl.b_bytes, kSnnWord);
    temp_bytes = std::max<std::uint64_t>(temp_bytes, bl.o_bytes);
  }
  const int pink_rows = mixed ? e.nonzero_rows : 0;
  const std::uint32_t pk = a.take(std::uint64_t(pink_rows) * std::uint64_t(pink));
  const std::uint32_t s = a.take(std::uint64_t(map.window) * l.pre), am = a.take(map.layout.a_bytes);
  const std::uint32_t table = a.take(2 * std::uint64_t(N)), cur = a.take(cur_row * std::uint64_t(map.groups * rows));
  const std::uint32_t temp = a.take(temp_bytes);
  p.sram.weights = band_bytes + align_up(std::uint64_t(pink_rows) * std::uint64_t(pink), kSnnWord);
  p.sram.spikes = align_up(std::uint64_t(map.window) * l.pre, kSnnWord);
  p.sram.spike_map = align_up(map.layout.a_bytes, kSnnWord);
  p.sram.index = align_up(2 * std::uint64_t(N), kSnnWord);
  p.sram.currents = align_up(cur_row * std::uint64_t(map.groups * rows), kSnnWord);
  p.sram.buffers = align_up(temp_bytes, kSnnWord);
  sram.assign(a.next, 0);
  for (std::size_t k = 0; k < e.bands.size(); ++k) {
    const EchelonBand& b = e.bands[k];
    const std::uint32_t stride = sram_layout(mm_task(band_mm[k]), cfg).b_row_stride;
    for (int r = 0; r < b.rows && b.first_row + r < e.nonzero_rows; ++r)
      for (int j = b.first_col; j < std::min(blue, l.post); ++j)  // the columns past post stay 0
        sram[band_at[k] + std::size_t(r) * stride + std::size_t(j - b.first_col)] =
            static_cast<std::uint8_t>(weight_delay(l, e.source[std::size_t(b.first_row + r)], j));
  }
  for (int r = 0; r < pink_rows; ++r)
    for (int j = 0; j < pink; ++j)
      sram[pk + std::size_t(r) * std::size_t(pink) + std::size_t(j)] = static_cast<std::uint8_t>(weight_delay(l, e.source[std::size_t(r)], blue + j));
  for (int n = 0; n < N; ++n) {  // the Circle Reverse table: weight-delay row n's echelon row, 16 bits
    sram[table + 2 * std::size_t(n)] = static_cast<std::uint8_t>(e.target[std::size_t(n)]);
    sram[table + 2 * std::size_t(n) + 1] = static_cast<std::uint8_t>(e.target[std::size_t(n)] >> 8);
  }
  const SnnDram d = snn_dram(l, D - 1, map.groups * rows, p.memory.drams[0]);
  p.currents_dram = d.currents;
  auto& cmds = p.stream.pe[0];
  for (int t0 = 0; t0 < l.timesteps; t0 += D) {
    cmds.push_back(load_spikes(l, d, std::uint64_t(t0), map.window, s));
    map.build(cmds, s, am);
    cmds.push_back(circle_reverse(map, am, table, N));
    cmds.push_back(clear(cur, static_cast<std::uint32_t>(cur_row * std::uint64_t(map.groups * rows))));
    for (int g = 0; g < map.groups; ++g) {
      const std::uint32_t group = am + static_cast<std::uint32_t>(std::uint64_t(g) * map.layout.a_group_stride);
      const std::uint32_t cur_g = cur + static_cast<std::uint32_t>(std::uint64_t(g * rows) * cur_row);
      for (std::size_t k = 0; k < e.bands.size(); ++k) {
        const EchelonBand& b = e.bands[k];
        MmShape mm = band_mm[k];
        mm.H_A = map.group_rows(g);
        const SramLayout bl = sram_layout(mm_task(mm), cfg);
        cmds.push_back(mla_command("MM_BAND", mm_task(mm), group + 4 * static_cast<std::uint32_t>(b.first_row), band_at[k], temp));
        ++p.mla_tasks;
        ArmCommand add;
        add.kind = ArmOpKind::AddInt32;
        add.src = temp;
        add.src_row_stride = bl.o_row_stride * 4;
        add.dst = cur_g + 4 * static_cast<std::uint32_t>(b.first_col);
        add.dst_row_stride = static_cast<std::uint32_t>(cur_row);
        add.width = static_cast<std::uint32_t>(std::min(blue, l.post) - b.first_col);
        add.height = static_cast<std::uint32_t>(mm.H_A);
        cmds.push_back(arm_command("ACCUMULATE", add));
      }
      if (pink_rows > 0 && pink > 0) {
        ArmCommand m;
        m.kind = ArmOpKind::MacInt8;
        m.src = group;
        m.src_row_stride = 1;
        m.a_col_stride = static_cast<std::uint32_t>(rows);
        m.depth = static_cast<std::uint32_t>(pink_rows);
        m.height = static_cast<std::uint32_t>(map.group_rows(g));
        m.width = static_cast<std::uint32_t>(pink);
        m.weights = pk;
        m.weights_row_stride = static_cast<std::uint32_t>(pink);
        m.dst = cur_g + 4 * static_cast<std::uint32_t>(blue);
        m.dst_row_stride = static_cast<std::uint32_t>(cur_row);
        cmds.push_back(arm_command("ARM_COLUMNS", m));
      }
    }
    cmds.push_back(store_currents(l, d, t0, std::min(D, l.timesteps - t0), cur, static_cast<std::uint32_t>(cur_row)));
  }
}

}  // namespace

std::vector<int> snn_pe_order(const HwConfig& cfg) {
  const Mesh mesh(cfg.chip);
  std::vector<int> qpes;
  for (int q = 0; q < mesh.qpes(); ++q)
    if (cfg.chip.has_pes(q)) qpes.push_back(q);
  if (qpes.empty()) throw std::invalid_argument("SNN layer: the system has no PEs");
  const int home = *std::min_element(qpes.begin(), qpes.end(), [&](int a, int b) {
    return mesh.hops(a, mesh.dram_router(0, a)) < mesh.hops(b, mesh.dram_router(0, b));
  });
  std::stable_sort(qpes.begin(), qpes.end(), [&](int a, int b) { return mesh.hops(home, a) < mesh.hops(home, b); });
  std::vector<int> order;
  for (int q : qpes)
    for (int p = 0; p < kPesPerQpe; ++p) order.push_back(q * kPesPerQpe + p);
  return order;
}

SnnPlan plan_snn_layer(const SnnLayer& layer, SnnLayout layout, const HwConfig& cfg, std::uint64_t budget_bytes) {
  check_snn_layer(layer);
  SnnPlan p;
  p.layout = layout;
  p.stream.name = std::string("SNN ") + to_string(layout);
  p.memory.drams.resize(1);
  std::vector<std::uint8_t> sram;
  switch (layout) {
    case SnnLayout::SerialArm: serial_arm(layer, cfg, p, sram); break;
    case SnnLayout::OriginalMac: original_mac(layer, cfg, p, sram); break;
    case SnnLayout::OperandStack:
      p.steps_per_batch = layer.delays;
      operand_stack(layer, cfg, p, sram);
      break;
    case SnnLayout::Echelon:
    case SnnLayout::EchelonMixed:
      p.steps_per_batch = layer.delays;
      echelon(layer, cfg, layout == SnnLayout::EchelonMixed, p, sram);
      break;
  }
  if (p.sram.total() > budget_bytes || sram.size() > std::size_t(cfg.sram_bytes)) return deploy_snn_layer(layer, layout, cfg, budget_bytes);
  // the one PE is the Dominant: the layouts above write PE 0's commands
  const int dominant = snn_pe_order(cfg).front();
  std::vector<StreamCommand> cmds = std::move(p.stream.pe[0]);
  p.stream.pe.assign(std::size_t(stream_limits(cfg).pes), {});
  p.stream.pe[std::size_t(dominant)] = std::move(cmds);
  p.stream.dram_bytes = p.memory.drams[0].size();
  p.memory.sram[dominant] = std::move(sram);
  p.pes = {SnnPe{dominant, true, false, p.sram}};
  p.notes.push_back("one PE (the Dominant doing the Subordinate's work too); weights preloaded in SRAM; spikes loaded by the DMA "
                    "from DRAM, currents stored to DRAM");
  p.notes.push_back(
      "ARM clocks of MacInt8, Copy8, AddInt32, PermuteWords and the clearing: as the configuration's arm_clock_model "
      "charges them (by default counted from their kernels' code, docs/arm_clocks.md)");
  return p;
}

std::vector<std::int32_t> snn_plan_currents(const SnnPlan& plan, const SnnLayer& layer, const SystemMemory& after) {
  const std::vector<std::uint8_t>& dram = after.drams.at(0);
  const std::size_t n = std::size_t(layer.timesteps) * std::size_t(layer.post);
  if (plan.currents_dram + n * 4 > dram.size()) throw std::logic_error("SNN: the DRAM holds no currents");
  std::vector<std::int32_t> out(n);
  std::memcpy(out.data(), dram.data() + plan.currents_dram, n * 4);
  return out;
}

}  // namespace s2::mapper
