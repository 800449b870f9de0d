#include "model/qpe/noc_router.h"

#include "model/qpe/qpe_address_map.h"

namespace s2 {

NocRouter::NocRouter(sc_core::sc_module_name name)
    : sc_module(name), in("in"), out("out"), latency_(sc_core::SC_ZERO_TIME) {
  in.register_b_transport(this, &NocRouter::b_transport);
  in.register_transport_dbg(this, &NocRouter::transport_dbg);
  in.register_get_direct_mem_ptr(this, &NocRouter::get_direct_mem_ptr);
  out.register_invalidate_direct_mem_ptr(this, &NocRouter::invalidate);
}

int NocRouter::route(tlm::tlm_generic_payload& p) {
  const int port = qpe_addr::port_of(p.get_address());
  if (port < 0 || port >= static_cast<int>(out.size())) {
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return -1;
  }
  p.set_address(p.get_address() & qpe_addr::kInPortMask);
  return port;
}

void NocRouter::b_transport(int, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  const int port = route(p);
  if (port < 0) return;
  delay += latency_;
  out[port]->b_transport(p, delay);
}

unsigned NocRouter::transport_dbg(int, tlm::tlm_generic_payload& p) {
  const int port = route(p);
  return port < 0 ? 0 : out[port]->transport_dbg(p);
}

bool NocRouter::get_direct_mem_ptr(int, tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi) {
  const sc_dt::uint64 base = p.get_address() & ~qpe_addr::kInPortMask;
  const int port = route(p);
  if (port < 0) return false;
  const bool ok = out[port]->get_direct_mem_ptr(p, dmi);
  dmi.set_start_address(dmi.get_start_address() + base);
  dmi.set_end_address(dmi.get_end_address() + base);
  return ok;
}

void NocRouter::invalidate(int id, sc_dt::uint64 start, sc_dt::uint64 end) {
  const sc_dt::uint64 base = sc_dt::uint64(id) << qpe_addr::kPortShift;
  for (unsigned i = 0; i < in.size(); ++i) in[i]->invalidate_direct_mem_ptr(base + start, base + end);
}

}  // namespace s2
