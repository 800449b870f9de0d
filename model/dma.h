// The DMA of a PE (thesis 3.1), timed as the RTL's (rtl_stubs/dma.sv): the ARM hands it a transfer (after
// writing its registers, pe_registers.h) and it moves it row by row between the PE's SRAM and the DRAM.
//   Load: one row request per PE clock while at most kLoadLinesInFlight lines are requested and not yet
//   written (a longer row goes alone); each reaches the DRAM kRequestLeadCycles after it was sent.
//   Store: per row a header clock, a clock to read the first SRAM line, then one line per clock; the row
//   reaches the DRAM with its last line (the DRAM takes a written row once it holds all of it). A row's
//   header waits until at most kStoreRowsInFlight - 1 earlier rows are unacknowledged.
// A read row's data comes back as one packet per SRAM line it touches, each leaving the DRAM when the DRAM
// has read the last word it needs; the NoC slave writes it kLineLagCycles later, one line per clock. A load
// is done kIdleLagCycles after its last line was written; a store kAckLagCycles after the DRAM acknowledged
// its last row (the NoC path to the PE and the DMA going idle).
// Requests that reach the DRAM in the same clock are served lowest PE first (the router's round robin
// from its reset state; later in a stream the RTL's order depends on the round-robin pointer).
// Not modelled: the router's clock-level arbitration between the DMAs' packets and other traffic.
#pragma once

#include <cstdint>

#include "dram_timing.h"
#include "systemc.h"
#include "task_stream.h"

namespace s2 {

class Dma : public sc_core::sc_module {
 public:
  static constexpr std::uint64_t kRequestLeadCycles = 3;
  static constexpr std::uint64_t kLineLagCycles = 3;
  static constexpr std::uint64_t kIdleLagCycles = 2;
  static constexpr std::uint64_t kAckLagCycles = 5;
  static constexpr std::uint64_t kStoreRowsInFlight = 2;  // rtl_stubs/dma.sv STORE_ROWS_IN_FLIGHT
  static constexpr std::uint64_t kLoadLinesInFlight = 64; // rtl_stubs/dma.sv LOAD_LINES_IN_FLIGHT
  static constexpr std::uint64_t kAckSeenCycles = 4;      // from the DRAM's acknowledgement to a new header

  tlm_utils::simple_initiator_socket<Dma> dram;

  Dma(sc_core::sc_module_name name, int pe, std::uint8_t* sram, std::size_t sram_bytes);
  void set_timing(const sc_core::sc_time& pe_clock, const DramTiming& dram_timing);
  // From the ARM's thread: runs the transfer and waits until it is complete. load: DRAM -> SRAM.
  void transfer(const DmaTransfer& t, bool load);

 private:
  int pe_;
  std::uint8_t* sram_;
  std::size_t sram_bytes_;
  sc_core::sc_time pe_clock_;
  DramTiming dram_timing_;  // to know when each line of a read row leaves the DRAM
};

}  // namespace s2
