// PE SRAM: 128 KB. Timed accesses (b_transport) cost one port access per started 128-bit line;
// debug transport and DMI give the untimed view the backdoor and the MLA's functional datapath use.
// The port's clock-level arbitration between MLA, NoC slave and output writes is resolved by the tile
// schedule (tile_schedule.h), not here.
#pragma once

#include <cstdint>
#include <vector>

#include "model/systemc.h"

namespace s2 {

class Sram : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Sram> socket;

  Sram(sc_core::sc_module_name name, std::size_t bytes);
  void set_access_time(const sc_core::sc_time& t) { access_time_ = t; }
  std::uint8_t* data() { return mem_.data(); }
  const std::uint8_t* data() const { return mem_.data(); }
  std::vector<std::uint8_t>& bytes() { return mem_; }
  std::size_t size() const { return mem_.size(); }

 private:
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& p);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi);
  bool access(tlm::tlm_generic_payload& p);

  std::vector<std::uint8_t> mem_;
  sc_core::sc_time access_time_;
};

}  // namespace s2
