// Clock-level schedule of a run of MLA tiles on the PEs of a QPE, as the RTL's microarchitecture produces it
// (rtl_stubs/README.md, "Microarchitecture"). Each PE's MLA is the one tile loop the NoC fabric runs in a
// stream (pe/mla_engine.h: SETUP, the step engine, the operand-B and operand-A fetch units, the result
// writes); around the four MLAs it holds what a QPE alone needs: each PE's SRAM port (the NoC slave first,
// then the MLA; an access occupies it sram_cycles_per_access() clocks), the NoC slaves and the PEs'
// outbound FIFOs, and the QPE's router (noc/router.h's rules, laid out for this loop: tile_schedule.cpp). What it
// adds is speed: clocks in which nothing moves are jumped over, and a steady state that recurs (rows of a
// tile, or whole tiles) is skipped period by period.
//
// The model does not run a single task clock by clock: it asks this schedule for one tile of each distinct
// situation (tile shape, operand-A sources, which PEs run, their start offsets) and caches the answer,
// then advances whole tiles. A task's tiles are mostly identical, so a task costs a handful of tiles.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <vector>

#include "model/hw_config.h"
#include "model/task.h"

namespace s2 {

struct TileShape {
  std::uint32_t rows = 0;           // operand-B rows per tile: conv D*Hf, mm W_A
  std::uint32_t steps_per_row = 0;  // conv Wf, mm 1
  std::uint32_t writes = 0;         // 128-bit result writes of the tile (ROWS * ceil(width / 4))
  bool a_via_noc = false;           // operand A through the NoC (every conv; mm from a neighbour)
  std::uint64_t steps() const { return std::uint64_t(rows) * steps_per_row; }
  // 32-bit operand-B refill words per row after its row-start word (every 4 shift steps after the first)
  std::uint64_t refills_per_row() const { return steps_per_row > 1 ? (steps_per_row + 2) / 4 : 0; }
  // 128-bit operand-A words of the tile (mac_rows bytes per step)
  std::uint64_t a_words(std::uint64_t mac_rows) const { return (steps() * mac_rows + 15) / 16; }
  bool operator<(const TileShape& o) const {
    return std::tie(rows, steps_per_row, writes, a_via_noc) < std::tie(o.rows, o.steps_per_row, o.writes, o.a_via_noc);
  }
};

// A run of consecutive tiles every active PE executes (grouped so that the PEs' mutual interference at
// the router and the SRAM ports is resolved over many tiles, not only within one).
struct TileSituation {
  std::vector<TileShape> tiles;
  std::array<bool, kPesPerQpe> active{};            // PEs that run this tile
  std::array<int, kPesPerQpe> a_source{};           // PE whose SRAM holds each PE's operand A
  std::array<std::uint32_t, kPesPerQpe> offset{};   // clock at which each PE starts the tile (min = 0)
  bool next_follows = false;  // PEs that finish early go on with the same run again (its traffic meets
                              // the PEs still in this one), rather than going idle
  bool operator<(const TileSituation& o) const {
    return std::tie(tiles, active, a_source, offset, next_follows) <
           std::tie(o.tiles, o.active, o.a_source, o.offset, o.next_follows);
  }
};

// Per PE, summed over the run: clocks from the first tile's start (SETUP clock) to the clock after the last
// tile's last result write completed, by stage; and where each tile ended.
struct PeTileTiming {
  std::uint64_t setup = 0;
  std::uint64_t compute = 0;  // CONV/MM stage, first clock to last step
  std::uint64_t output = 0;   // OUTPUT stage and the clock that ends the tile
  std::uint64_t a_wait = 0;
  std::uint64_t b_wait = 0;
  std::vector<std::uint64_t> tile_end;  // clock after each tile's end, from the PE's start
  std::uint64_t total() const { return setup + compute + output; }
};
using TileTiming = std::array<PeTileTiming, kPesPerQpe>;

class TileSchedule {
 public:
  explicit TileSchedule(const HwConfig& cfg) : cfg_(cfg) {}
  // `skip_periods` false: every clock of every run evaluated (no steady state skipped; quiet clocks are still
  // jumped over, which changes nothing): what tests hold the skipping to.
  TileSchedule(const HwConfig& cfg, bool skip_periods) : cfg_(cfg), skip_periods_(skip_periods) {}
  const TileTiming& tile(const TileSituation& s);
  std::size_t distinct_tiles() const { return cache_.size(); }
  // every situation resolved so far, with its timing (what tests compare with the reference engine)
  const std::map<TileSituation, TileTiming>& resolved() const { return cache_; }
  std::uint64_t clocks_resolved() const { return clocks_resolved_; }
  std::uint64_t clocks_skipped() const { return clocks_skipped_; }  // of those, quiet clocks jumped over

 private:
  TileTiming resolve(const TileSituation& s);
  HwConfig cfg_;
  bool skip_periods_ = true;
  std::map<TileSituation, TileTiming> cache_;
  std::uint64_t clocks_resolved_ = 0;
  std::uint64_t clocks_skipped_ = 0;
};

}  // namespace s2
