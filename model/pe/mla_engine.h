// The MLA of one PE clock by clock, by the rules of rtl_stubs/mla.sv (rtl_stubs/README.md, "MLA tile
// loop"): per tile a SETUP clock, the CONV/MM stage (the step engine; the operand-B fetch unit: a row-start
// word, then 32-bit refill words, one word in flight or staged; the operand-A fetch unit: words held or in
// flight, read from the own SRAM or through the NoC) and the OUTPUT stage (128-bit result writes). It
// moves no data (the model's Mla computes results from the registers); it is the MLA's timing, and what
// it asks of its SRAM port and of its NoC interface each clock.
//
// The NoC fabric (noc/fabric.h) runs it beside the PE's DMA and NoC slave in a stream, so that the MLA and
// the DMAs' packets meet at the SRAM ports and the routers as they do in the RTL: decide() on the state
// before the edge (with the operand-A response the NoC interface delivers this clock), then the fabric
// arbitrates the SRAM port (NoC slave first, then the MLA, then the DMA) and clock() applies the edge.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "model/hw_config.h"
#include "model/qpe/task_timing.h"
#include "model/trace.h"

namespace s2 {

class MlaEngine {
 public:
  enum class Stage { Idle, Setup, Compute, Output, OutWait };
  // What the MLA wants in a clock, on the state before the edge.
  enum class PortUse { None, OperandA, OperandB, Result };
  struct Decision {
    PortUse port = PortUse::None;  // the SRAM access it asks for (granted when the NoC slave does not take the port)
    bool push_a_read = false;      // an operand-A read request into the outbound request FIFO (it has room)
    // the step engine's clock
    bool fire = false, a_ok = false, a_arrive = false, a_pop = false, b_rsp = false, consume_b = false;
    bool last_kx = false, last_step = false;
    bool acts() const { return fire || a_arrive || b_rsp || push_a_read; }
  };
  // What an edge ended.
  struct Events {
    bool tile_end = false;  // a tile: its last result write completed (in the clock after)
    bool row_end = false;   // the last tile of an output row of tiles
    bool done = false;      // the task's last tile
  };
  // The engine's registers. Public for the schedules that skip whole periods of a steady state (the tile
  // schedule: they compare states, then move the counters and the clocks on).
  struct Regs {
    Stage stage = Stage::Idle;
    std::size_t col = 0;  // the tile of the output row (its column tile)
    std::uint64_t rows_done = 0;
    PhaseCycles phases;
    // the tile's shape
    std::uint64_t rows = 0, wf = 1, refills = 0, steps = 0, a_words = 0, writes = 0;
    // the step engine
    std::uint64_t step = 0, row = 0, kx = 0;
    // the operand-B fetch unit: the row and refill word to ask for next, one word in flight or staged
    std::uint64_t fb_row = 0, fb_j = 0;
    bool fb_done = false, b_inflight = false, b_stage = false;
    std::uint64_t b_arrive = 0;
    // the operand-A fetch unit
    std::uint64_t a_issued = 0, a_outstanding = 0, a_count = 0;
    std::uint64_t local_a_arrive = ~0ull;  // a read of the own SRAM completes in this clock
    // the output stage
    std::uint64_t out_k = 0;
    bool out_wait = false;
  };

  void configure(const HwConfig& cfg);
  // The START register was written: SETUP of the first tile in clock `clock` (the first one clock() counts).
  void start(const TaskTiles& tiles, std::uint64_t clock);
  bool busy() const { return r_.stage != Stage::Idle; }
  std::uint64_t begin() const { return begin_; }

  // `a_arrive`: an operand-A response reaches the MLA in this clock (NoC); `req_room`: the outbound request
  // FIFO can take a packet.
  Decision decide(std::uint64_t clock, bool a_arrive, bool req_room) const;
  // The edge of clock `clock`: `granted`, the SRAM port went to the MLA's access in d.port.
  Events clock(std::uint64_t clock, const Decision& d, bool granted);
  // Clocks [clock, clock + n) in which nothing moved (d: the decision they all repeated): counted as waiting.
  void count_quiet(std::uint64_t n, const Decision& d);
  // The first clock from `now` on in which the engine changes by itself (a SETUP or a last clock of a
  // tile, an own SRAM read completing, its start); ~0: only the port or a packet moves it on.
  std::uint64_t wakes_at(std::uint64_t now) const;
  // Every pending clock `dt` later (after skipping whole periods of a steady state).
  void shift_times(std::uint64_t dt);
  // For the schedules that skip a steady state of the CONV/MM stage: the counters a period moves on,
  using Counters = std::array<std::uint64_t, 7>;  // step, row, fb_row, a_issued, compute, a_wait, b_wait
  Counters counters() const;
  // its state relative to clock `now` and to a lead MLA's operand-B row (the counters as differences),
  void append_state(std::vector<std::int64_t>& key, std::uint64_t now, std::uint64_t lead_row) const;
  // and `n` more periods like the one from the counters `mark` to now.
  void repeat_period(std::uint64_t n, const Counters& mark);

  const Regs& regs() const { return r_; }
  Regs& regs() { return r_; }
  const PhaseCycles& phases() const { return r_.phases; }

 private:
  void load(const TileShape& sh);
  void restart();

  // configuration
  std::uint64_t L_ = 1, depth_ = 2, word_mask_ = 3, mac_rows_ = 16;
  // the task
  std::vector<TileShape> row_tiles_;  // the tiles of one output row (its column tiles)
  std::uint64_t rows_total_ = 0;
  bool via_noc_ = false;
  std::uint64_t begin_ = 0;  // the first SETUP clock
  Regs r_;
};

}  // namespace s2
