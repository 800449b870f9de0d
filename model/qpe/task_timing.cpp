#include "model/qpe/task_timing.h"

#include <algorithm>

namespace s2 {

TaskTiles task_tiles(const Task& t, const HwConfig& cfg) {
  TaskTiles tt;
  TileShape sh;
  std::uint64_t width = 0;
  if (t.op == Op::Conv) {
    sh.rows = static_cast<std::uint32_t>(t.conv.D * t.conv.Hf);
    sh.steps_per_row = static_cast<std::uint32_t>(t.conv.Wf);
    sh.a_via_noc = true;  // a convolution's operand A always travels through the NoC
    tt.groups = (t.conv.C + cfg.mac_rows - 1) / cfg.mac_rows;
    tt.out_rows = t.conv.Ho();
    tt.a_rows = static_cast<std::uint64_t>(t.conv.C);
    width = t.conv.Wo();
  } else {
    sh.rows = static_cast<std::uint32_t>(t.mm.W_A);
    sh.steps_per_row = 1;
    sh.a_via_noc = t.a_from_neighbor();
    tt.groups = (t.mm.H_A + cfg.mac_rows - 1) / cfg.mac_rows;
    tt.out_rows = 1;
    tt.a_rows = static_cast<std::uint64_t>(t.mm.H_A);
    width = t.mm.W_B;
  }
  tt.width = width;
  tt.column_tiles = (width + cfg.mac_cols - 1) / cfg.mac_cols;
  for (std::uint64_t x = 0; x < tt.column_tiles; ++x) {
    const std::uint64_t w = std::min<std::uint64_t>(cfg.mac_cols, width - x * cfg.mac_cols);
    sh.writes = static_cast<std::uint32_t>(cfg.mac_rows * ((w + 3) / 4));
    tt.row.push_back(sh);
  }
  return tt;
}

std::uint64_t TaskTiles::useful_macs(std::uint64_t r, std::uint64_t x, const HwConfig& cfg) const {
  const std::uint64_t mac_rows = static_cast<std::uint64_t>(cfg.mac_rows), mac_cols = static_cast<std::uint64_t>(cfg.mac_cols);
  const std::uint64_t row0 = (r / out_rows) * mac_rows, col0 = x * mac_cols;
  return std::min(mac_rows, a_rows - row0) * std::min(mac_cols, width - col0);
}

namespace {

// The event schedule of a PE that shares nothing with the others: it advances tile by tile, each tile
// starting in the clock after the one before ended and taking the clocks its shape takes on a lone PE.
// That is exact, not an estimate: a lone PE's tile leaves the router, its NoC slave and the SRAM ports idle
// when it ends (every operand-A word it asked for has arrived and been used), so the next tile starts from
// the same state. Each tile shape is worked out once, by the clock-level rules (TileSchedule), and cached.
PeTaskTiming lone_pe_timing(const Task& t, TileSchedule& schedule, int pe, const TaskTiles& tiles) {
  std::uint64_t row_cycles = 0;
  PhaseCycles row;
  for (const TileShape& shape : tiles.row) {
    TileSituation s;
    s.tiles = {shape};
    s.active[pe] = true;
    s.a_source[pe] = t.a_source_pe(pe);  // the other PEs' entries stay 0: one cache entry per shape and source
    const PeTileTiming& one = schedule.tile(s)[pe];
    row_cycles += one.tile_end.front();
    row.setup += one.setup;
    row.compute += one.compute;
    row.output += one.output;
    row.a_wait += one.a_wait;
    row.b_wait += one.b_wait;
  }
  const std::uint64_t rows = tiles.rows_total();
  PeTaskTiming o;
  o.row_end.resize(rows);
  for (std::uint64_t r = 0; r < rows; ++r) o.row_end[r] = (r + 1) * row_cycles;
  o.phases.setup = rows * row.setup;
  o.phases.compute = rows * row.compute;
  o.phases.output = rows * row.output;
  o.phases.a_wait = rows * row.a_wait;
  o.phases.b_wait = rows * row.b_wait;
  return o;
}

}  // namespace

TaskTiming task_timing(const Task& t, const HwConfig& cfg, TileSchedule& schedule,
                       const std::array<bool, kPesPerQpe>& active, const std::array<std::uint64_t, kPesPerQpe>& start,
                       std::uint64_t window) {
  std::vector<int> pes;
  for (int p = 0; p < kPesPerQpe; ++p)
    if (active[p]) pes.push_back(p);
  const TaskTiles tiles = task_tiles(t, cfg);
  const std::uint64_t total_rows = tiles.rows_total();
  TaskTiming out;
  if (total_rows == 0) return out;

  // Event schedule: PEs that share no router and no SRAM port (operand A in their own SRAM, read without
  // the NoC; or one PE alone, whose operand-A source, if another PE, is idle) are timed tile by tile,
  // exactly. PEs whose operand-A reads meet at the router are resolved clock by clock below.
  if (cfg.model_schedule == "event" && (!tiles.row.front().a_via_noc || pes.size() == 1)) {
    for (int p : pes) out.pe[p] = lone_pe_timing(t, schedule, p, tiles);
    out.rows_resolved = total_rows;
    return out;
  }

  // rows to resolve: as many as fit the window by a rough estimate of a row's clocks, at least two
  // a row's clocks, roughly: per operand-B row its steps plus the row-start (and first refill) wait, per
  // tile the result writes and two clocks
  const std::uint64_t L = static_cast<std::uint64_t>(cfg.sram_cycles_per_access());
  std::uint64_t est_row = 0;
  for (const TileShape& sh : tiles.row)
    est_row += std::uint64_t(sh.rows) * (sh.steps_per_row + L * (sh.steps_per_row > 1 ? 2 : 1)) + sh.writes * L + 2;
  est_row = std::max<std::uint64_t>(1, est_row);
  const std::uint64_t k = std::min<std::uint64_t>(total_rows, std::max<std::uint64_t>(2, (window + est_row - 1) / est_row));
  out.rows_resolved = k;
  out.rows_extrapolated = total_rows - k;

  TileSituation s;
  for (std::uint64_t r = 0; r < k; ++r) s.tiles.insert(s.tiles.end(), tiles.row.begin(), tiles.row.end());
  s.next_follows = k < total_rows;
  std::uint64_t first = ~0ull;
  for (int p : pes) first = std::min(first, start[p]);
  for (int p = 0; p < kPesPerQpe; ++p) {
    s.a_source[p] = t.a_source_pe(p);
    s.active[p] = false;
    s.offset[p] = 0;
  }
  for (int p : pes) {
    s.active[p] = true;
    s.offset[p] = static_cast<std::uint32_t>(start[p] - first);
  }
  const TileTiming& run = schedule.tile(s);

  for (int p : pes) {
    const PeTileTiming& pt = run[p];
    PeTaskTiming& o = out.pe[p];
    for (std::uint64_t r = 0; r < k; ++r) o.row_end.push_back(pt.tile_end[(r + 1) * tiles.column_tiles - 1]);
    o.phases.setup = pt.setup;
    o.phases.compute = pt.compute;
    o.phases.output = pt.output;
    o.phases.a_wait = pt.a_wait;
    o.phases.b_wait = pt.b_wait;
    if (k < total_rows) {
      // steady state: the second half of the resolved rows, repeated for the rest
      const std::uint64_t k0 = k / 2;
      const std::uint64_t base = k0 ? o.row_end[k0 - 1] : 0;
      const double per_row = double(o.row_end[k - 1] - base) / double(k - k0);
      const std::uint64_t resolved_end = o.row_end[k - 1];
      for (std::uint64_t r = k; r < total_rows; ++r)
        o.row_end.push_back(resolved_end + static_cast<std::uint64_t>(per_row * double(r + 1 - k) + 0.5));
      // the extrapolated clocks go to the phases: one SETUP clock per tile, output in the proportion of the
      // resolved rows, the rest CONV/MM, so that setup + compute + output stays the PE's clock count
      const std::uint64_t extra = o.row_end.back() - resolved_end;
      const double resolved = double(o.phases.setup + o.phases.compute + o.phases.output);
      const double f = resolved > 0 ? double(extra) / resolved : 0.0;
      const std::uint64_t setup = std::min<std::uint64_t>(
          extra, (total_rows - k) * tiles.column_tiles * static_cast<std::uint64_t>(cfg.tile_setup_cycles));
      const std::uint64_t output = static_cast<std::uint64_t>(double(o.phases.output) * f + 0.5);
      const std::uint64_t compute = extra - std::min(extra, setup + output);
      const double fc = o.phases.compute ? double(compute) / double(o.phases.compute) : 0.0;
      o.phases.a_wait += static_cast<std::uint64_t>(double(o.phases.a_wait) * fc + 0.5);
      o.phases.b_wait += static_cast<std::uint64_t>(double(o.phases.b_wait) * fc + 0.5);
      o.phases.setup += setup;
      o.phases.output += output;
      o.phases.compute += compute;
    }
  }
  return out;
}

}  // namespace s2
