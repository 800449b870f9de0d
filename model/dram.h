// The DRAM of QPE-DRAM (thesis 3.3, Figure 5.1, Appendix B): a memory that moves one 16-byte aligned
// DRAM word per operation at 2 PE clocks per operation, and hands data to the NoC 7 clocks after it was
// read. Requests are served first come, first served, one DMA request (a whole row of a transfer)
// after the other: the DRAM is the shared bottleneck of the four PEs' DMAs.
//
// TLM-2.0, loosely timed: b_transport moves the data at once and returns, in `delay`, the time from
// the call until the row has reached the NoC (read) or been written (write).
#pragma once

#include <cstdint>
#include <vector>

#include "hw_config.h"
#include "systemc.h"

namespace s2 {

class Dram : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<Dram> socket;  // from the PEs' DMAs

  explicit Dram(sc_core::sc_module_name name);
  void configure(const HwConfig& cfg, const sc_core::sc_time& pe_clock);
  // Clears the contents to `bytes` zero bytes and the timing state (between streams).
  void reset(std::uint64_t bytes);
  std::vector<std::uint8_t>& contents() { return mem_; }
  // DRAM operations a request for [addr, addr + bytes) takes: the 16-byte words it touches.
  std::uint64_t ops_for(std::uint64_t addr, std::uint64_t bytes) const;
  std::uint64_t ops_served() const { return ops_; }

 private:
  void b_transport(int id, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  unsigned transport_dbg(int id, tlm::tlm_generic_payload& p);
  std::vector<std::uint8_t> mem_;
  sc_core::sc_time pe_clock_;
  std::uint64_t bytes_per_op_ = 16, cycles_per_op_ = 2, latency_cycles_ = 7;
  sc_core::sc_time busy_until_;
  std::uint64_t ops_ = 0;
};

}  // namespace s2
