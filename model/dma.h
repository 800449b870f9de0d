// The DMA of a PE (thesis 3.1): the ARM hands it a transfer; it turns it into one DRAM request per row
// (all queued at once), moves the data between the PE's SRAM and the DRAM, and returns when the last
// row has arrived. The NoC hop between the DRAM and the PE adds the router's latency.
#pragma once

#include <cstdint>

#include "systemc.h"
#include "task_stream.h"

namespace s2 {

class Dma : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Dma> dram;

  Dma(sc_core::sc_module_name name, std::uint8_t* sram, std::size_t sram_bytes);
  void set_timing(const sc_core::sc_time& pe_clock, const sc_core::sc_time& noc_hop);
  // From the ARM's thread: runs the transfer and waits until it is complete. load: DRAM -> SRAM.
  void transfer(const DmaTransfer& t, bool load);

 private:
  std::uint8_t* sram_;
  std::size_t sram_bytes_;
  sc_core::sc_time pe_clock_, noc_hop_;
};

}  // namespace s2
