// When each PE finishes each output row of tiles of a task, from the tile schedule (tile_schedule.h).
// A window of rows from the task's start is resolved clock by clock (about resolve_window_cycles, at
// least one row, every row if the task is smaller); the rows after it repeat the steady state measured
// over the second half of the window. Both figures are reported, so a reader knows which part of a
// prediction was resolved and which extrapolated.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "model/hw_config.h"
#include "model/task.h"
#include "model/qpe/tile_schedule.h"
#include "model/trace.h"

namespace s2 {

// The MLA's loop over tiles (rtl_stubs/README.md): filter groups (conv) or row groups of A (mm), output
// rows, then column tiles; an "output row" here is one row of column tiles.
struct TaskTiles {
  std::uint64_t groups = 0;       // conv ceil(C/ROWS) | mm ceil(H_A/ROWS)
  std::uint64_t out_rows = 0;     // conv Ho | mm 1
  std::uint64_t column_tiles = 0; // ceil(width/COLS)
  std::vector<TileShape> row;     // the tiles of one output row
  std::uint64_t width = 0;        // output columns: conv Wo | mm W_B (the column tiles' lanes hold them)
  std::uint64_t a_rows = 0;       // operand-A rows: conv C (filters) | mm H_A (the groups' lanes hold them)
  // MAC units of one step of column tile `x` in output row `r` that hold a result (operand-A row and
  // operand-B column inside the task); the rest of the array's mac_rows x mac_cols are padding
  std::uint64_t useful_macs(std::uint64_t r, std::uint64_t x, const HwConfig& cfg) const;
  std::uint64_t rows_total() const { return groups * out_rows; }
};
TaskTiles task_tiles(const Task& t, const HwConfig& cfg);

struct PeTaskTiming {
  std::vector<std::uint64_t> row_end;  // clocks after the PE's start at which each output row has ended
  PhaseCycles phases;
  std::uint64_t cycles() const { return row_end.empty() ? 0 : row_end.back(); }
};

struct TaskTiming {
  std::array<PeTaskTiming, kPesPerQpe> pe;
  std::uint64_t rows_resolved = 0;      // output rows timed exactly (clock by clock, or tile by tile)
  std::uint64_t rows_extrapolated = 0;  // output rows that repeat the steady state
};

// `active` = PEs that run the task (t.pe is not consulted), `start` = PE clock at which each starts (only
// differences matter); operand-A sources come from t.a_source_pe().
TaskTiming task_timing(const Task& t, const HwConfig& cfg, TileSchedule& schedule,
                       const std::array<bool, kPesPerQpe>& active, const std::array<std::uint64_t, kPesPerQpe>& start,
                       std::uint64_t resolve_window_cycles);

}  // namespace s2
