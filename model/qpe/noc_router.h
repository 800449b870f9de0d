// QPE NoC router: forwards transactions between the host and the PEs by the destination port in the
// address (qpe_address_map.h), adding its latency per packet; DMI requests pass through with the
// address translated. Packet-level contention of the MLA's operand-A traffic is resolved by the tile
// schedule (tile_schedule.h), which models this router clock by clock; the DMAs' packets meet at the
// clocked router of noc/fabric.h. This module carries the transactions and their latency, not contention.
#pragma once

#include "model/systemc.h"

namespace s2 {

class NocRouter : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<NocRouter> in;      // from the host and the PEs
  tlm_utils::multi_passthrough_initiator_socket<NocRouter> out;  // to the PEs, bound in PE order

  explicit NocRouter(sc_core::sc_module_name name);
  void set_latency(const sc_core::sc_time& t) { latency_ = t; }

 private:
  void b_transport(int id, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  unsigned transport_dbg(int id, tlm::tlm_generic_payload& p);
  bool get_direct_mem_ptr(int id, tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi);
  void invalidate(int id, sc_dt::uint64 start, sc_dt::uint64 end);
  int route(tlm::tlm_generic_payload& p);

  sc_core::sc_time latency_;
};

}  // namespace s2
