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

#include <algorithm>
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
  enum class PortUse : std::uint8_t { None, OperandA, OperandB, Result };
  // (Bit fields: the decision is one word, which the callers' loops copy and test in a register.)
  struct Decision {
    PortUse port : 2 = PortUse::None;  // the SRAM access it asks for (granted when the NoC slave does not take the port)
    bool push_a_read : 1 = false;      // an operand-A read request into the outbound request FIFO (it has room)
    // the step engine's clock
    bool fire : 1 = false, a_ok : 1 = false, a_arrive : 1 = false, a_pop : 1 = false, b_rsp : 1 = false,
        consume_b : 1 = false;
    bool last_kx : 1 = false, last_step : 1 = false;
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

// The engine's clock, inline: the tile schedule and the NoC fabric call these for every PE in every clock.

inline MlaEngine::Decision MlaEngine::decide(std::uint64_t t, bool a_arrive, bool req_room) const {
  Decision x;
  if (t < begin_) return x;
  if (r_.stage == Stage::Compute) {
    x.a_arrive = via_noc_ ? a_arrive : (r_.local_a_arrive == t);
    x.b_rsp = r_.b_inflight && r_.b_arrive == t;
    const bool need_b = r_.kx == 0 || ((r_.kx - 1) & 3) == 0;  // a row's first step, then every fourth
    x.a_ok = r_.a_count > 0 || x.a_arrive;
    x.fire = x.a_ok && (!need_b || r_.b_stage || x.b_rsp);
    x.last_kx = r_.kx == r_.wf - 1;
    x.last_step = r_.step == r_.steps - 1;
    const std::uint64_t row_after = r_.row + ((x.fire && x.last_kx) ? 1 : 0);
    x.a_pop = x.fire && ((r_.step & word_mask_) == word_mask_ || x.last_step);
    x.consume_b = x.fire && need_b;
    const bool slot_free = (!r_.b_inflight || x.b_rsp) && (r_.b_stage ? x.consume_b : (!x.b_rsp || x.consume_b));
    // the next row's first word is asked for in the clock of the row's last step
    const bool b_req = !r_.fb_done && slot_free && r_.fb_row <= row_after;
    const bool a_room = r_.a_outstanding + r_.a_count - (x.a_pop ? 1 : 0) < depth_ && r_.a_issued < r_.a_words;
    if (!via_noc_ && a_room) x.port = PortUse::OperandA;
    else if (b_req) x.port = PortUse::OperandB;
    x.push_a_read = via_noc_ && a_room && req_room;
  } else if (r_.stage == Stage::Output) {
    x.port = PortUse::Result;
  }
  return x;
}

inline MlaEngine::Events MlaEngine::clock(std::uint64_t t, const Decision& x, bool granted) {
  Events ev;
  if (t < begin_) return ev;
  Regs& r = r_;
  switch (r.stage) {
    case Stage::Idle:
      break;
    case Stage::Setup:
      ++r.phases.setup;
      r.stage = Stage::Compute;
      break;
    case Stage::Compute: {
      ++r.phases.compute;
      const bool grant_a = granted && x.port == PortUse::OperandA;
      const bool grant_b = granted && x.port == PortUse::OperandB;
      if (grant_a) {
        r.local_a_arrive = t + L_;
        ++r.a_issued;
        ++r.a_outstanding;
      }
      if (x.push_a_read) {
        ++r.a_issued;
        ++r.a_outstanding;
      }
      if (grant_b) {
        r.b_inflight = true;
        r.b_arrive = t + L_;
        if (r.fb_j == r.refills) {
          r.fb_j = 0;
          if (++r.fb_row == r.rows) r.fb_done = true;
        } else {
          ++r.fb_j;
        }
      } else if (x.b_rsp) {
        r.b_inflight = false;
      }
      if (x.b_rsp && !(x.consume_b && !r.b_stage)) r.b_stage = true;
      else if (x.consume_b && r.b_stage) r.b_stage = false;
      if (x.a_arrive) {
        --r.a_outstanding;
        ++r.a_count;
      }
      if (x.a_pop) --r.a_count;
      if (x.fire) {
        ++r.step;
        if (x.last_kx) {
          r.kx = 0;
          ++r.row;
        } else {
          ++r.kx;
        }
        if (x.last_step) r.stage = Stage::Output;
      } else if (!x.a_ok) {
        ++r.phases.a_wait;
      } else {
        ++r.phases.b_wait;
      }
      break;
    }
    case Stage::Output:
      ++r.phases.output;
      if (granted && x.port == PortUse::Result && ++r.out_k == r.writes) {
        r.stage = Stage::OutWait;
        r.out_wait = L_ > 1;  // the last write holds the port a clock more
      }
      break;
    case Stage::OutWait:
      ++r.phases.output;
      if (r.out_wait) {
        r.out_wait = false;
        break;
      }
      ev.tile_end = true;
      if (++r.col == row_tiles_.size()) {
        r.col = 0;
        ++r.rows_done;
        ev.row_end = true;
      }
      if (r.rows_done == rows_total_) {
        ev.done = true;
        r.stage = Stage::Idle;
        break;
      }
      load(row_tiles_[r.col]);
      restart();
      break;
  }
  return ev;
}

inline void MlaEngine::count_quiet(std::uint64_t n, const Decision& d) {
  if (r_.stage == Stage::Compute) {
    r_.phases.compute += n;
    (d.a_ok ? r_.phases.b_wait : r_.phases.a_wait) += n;
  } else if (r_.stage == Stage::Output) {
    r_.phases.output += n;
  }
}

inline std::uint64_t MlaEngine::wakes_at(std::uint64_t now) const {
  if (now < begin_) return begin_;
  switch (r_.stage) {
    case Stage::Setup:
    case Stage::OutWait:
      return now;
    case Stage::Compute: {
      std::uint64_t until = ~0ull;
      if (r_.b_inflight && r_.b_arrive >= now) until = std::min(until, r_.b_arrive);
      if (r_.local_a_arrive != ~0ull && r_.local_a_arrive >= now) until = std::min(until, r_.local_a_arrive);
      return until;
    }
    default:
      return ~0ull;
  }
}

}  // namespace s2
