// The DRAM of QPE-DRAM (thesis 3.3, Figure 5.1, Appendix B), timed by DramTiming (dram_timing.h): one
// DMA row after the other, first come first served, 2 PE clocks per 16-byte word, data at the NoC 7
// clocks after it was read. The DRAM is the shared bottleneck of the four PEs' DMAs.
//
// TLM-2.0, loosely timed: b_transport moves the data at once; `delay` in is the time from the call until
// the row reaches the DRAM (call in order of arrival), out the time from the call until its last word
// has reached the NoC (read) or the DRAM has acknowledged it (write).
#pragma once

#include <cstdint>
#include <vector>

#include "dram_timing.h"
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
  std::uint64_t ops_served() const { return timing_.ops_served(); }

 private:
  void b_transport(int id, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  unsigned transport_dbg(int id, tlm::tlm_generic_payload& p);
  std::vector<std::uint8_t> mem_;
  sc_core::sc_time pe_clock_;
  DramTiming timing_;
};

}  // namespace s2
