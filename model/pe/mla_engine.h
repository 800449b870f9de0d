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

#include <cstdint>
#include <vector>

#include "model/hw_config.h"
#include "model/qpe/task_timing.h"
#include "model/trace.h"

namespace s2 {

class MlaEngine {
 public:
  // What the MLA wants in a clock, on the state before the edge.
  enum class PortUse { None, OperandA, OperandB, Result };
  struct Decision {
    PortUse port = PortUse::None;  // the SRAM access it asks for (the fabric grants it when the slave does not take the port)
    bool push_a_read = false;      // an operand-A read request into the outbound request FIFO (it has room)
    // the step engine's clock
    bool fire = false, a_ok = false, a_arrive = false, a_pop = false, b_rsp = false, consume_b = false;
    bool last_kx = false, last_step = false;
  };
  // What an edge ended.
  struct Events {
    bool row_end = false;  // an output row of tiles: its last result write completed (in the clock after)
    bool done = false;     // the task's last tile
  };

  void configure(const HwConfig& cfg);
  // The START register was written: SETUP of the first tile in clock `clock` (the first one clock() sees).
  void start(const TaskTiles& tiles, std::uint64_t clock);
  bool busy() const { return stage_ != Stage::Idle; }
  bool a_via_noc() const { return via_noc_; }

  // `a_arrive`: an operand-A response reaches the MLA in this clock (NoC); `req_room`: the outbound request
  // FIFO can take a packet.
  Decision decide(std::uint64_t clock, bool a_arrive, bool req_room) const;
  // The edge of clock `clock`: `granted`, the SRAM port went to the MLA's access in d.port.
  Events clock(std::uint64_t clock, const Decision& d, bool granted);

  const PhaseCycles& phases() const { return phases_; }
  std::uint64_t rows_done() const { return rows_done_; }
  std::uint64_t tiles_done() const { return tiles_done_; }

 private:
  enum class Stage { Idle, Setup, Compute, Output, OutWait };
  void load(const TileShape& sh);
  void restart();

  // configuration
  std::uint64_t L_ = 1, depth_ = 2, word_mask_ = 3, mac_rows_ = 16;
  // the task
  std::vector<TileShape> row_tiles_;  // the tiles of one output row (its column tiles)
  std::uint64_t rows_total_ = 0;
  bool via_noc_ = false;
  std::size_t col_ = 0;
  std::uint64_t rows_done_ = 0, tiles_done_ = 0;
  Stage stage_ = Stage::Idle;
  std::uint64_t begin_ = 0;  // the first SETUP clock
  PhaseCycles phases_;
  // the tile: its shape, the step engine, the operand fetch units, the output stage
  std::uint64_t rows_ = 0, wf_ = 1, refills_ = 0, steps_ = 0, a_words_ = 0, writes_ = 0;
  std::uint64_t step_ = 0, row_ = 0, kx_ = 0;
  std::uint64_t fb_row_ = 0, fb_j_ = 0;
  bool fb_done_ = false, b_inflight_ = false, b_stage_ = false;
  std::uint64_t b_arrive_ = 0;
  std::uint64_t a_issued_ = 0, a_outstanding_ = 0, a_count_ = 0;
  std::uint64_t local_a_arrive_ = ~0ull;
  std::uint64_t out_k_ = 0;
  bool out_wait_ = false;
};

}  // namespace s2
