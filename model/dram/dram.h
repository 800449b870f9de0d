// The DRAM of QPE-DRAM (thesis 3.3, Figure 5.1, Appendix B), timed by DramTiming (dram_timing.h): one
// DMA request after the other, first come first served, 16 bytes per 2 PE clocks, data at the NoC 7
// clocks after it was read. The DRAM is the shared bottleneck of the four PEs' DMAs.
//
// TLM-2.0, loosely timed: b_transport moves the data at once; `delay` in is the time from the call until
// the request reaches the DRAM (call in order of arrival), out the time from the call until its last byte
// has reached the NoC (read) or the DRAM has acknowledged it (write); a DramRequestExtension gives the
// request's rows and receives the service itself.
#pragma once

#include <cstdint>
#include <vector>

#include "model/dram/dram_timing.h"
#include "model/hw_config.h"
#include "model/systemc.h"

namespace s2 {

// On a DMA's payload: the request's rows in DRAM (the payload's data is the rows back to back; without
// it the payload's address and length are one row), and, back from the Dram, how it served the request
// (for the lines' times).
struct DramRequestExtension : tlm::tlm_extension<DramRequestExtension> {
  DramRange range;
  DramTiming::Service service;
  tlm::tlm_extension_base* clone() const override { return new DramRequestExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override { *this = static_cast<const DramRequestExtension&>(e); }
};

class Dram : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<Dram> socket;  // from the PEs' DMAs

  explicit Dram(sc_core::sc_module_name name);
  void configure(const HwConfig& cfg, const sc_core::sc_time& pe_clock);
  // Takes `image` as the contents (resized to `bytes`, zeros after the image) and clears the timing state.
  void reset(std::vector<std::uint8_t>&& image, std::uint64_t bytes);
  std::vector<std::uint8_t>& contents() { return mem_; }
  std::uint64_t ops_served() const { return timing_.ops_served(); }
  std::uint64_t busy_cycles() const { return timing_.busy_cycles(); }

 private:
  void b_transport(int id, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  unsigned transport_dbg(int id, tlm::tlm_generic_payload& p);
  std::vector<std::uint8_t> mem_;
  sc_core::sc_time pe_clock_;
  DramTiming timing_;
};

}  // namespace s2
