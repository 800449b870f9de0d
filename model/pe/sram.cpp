#include "model/pe/sram.h"

#include <cstring>

namespace s2 {

Sram::Sram(sc_core::sc_module_name name, std::size_t bytes)
    : sc_module(name), socket("socket"), mem_(bytes, 0), access_time_(sc_core::SC_ZERO_TIME) {
  socket.register_b_transport(this, &Sram::b_transport);
  socket.register_transport_dbg(this, &Sram::transport_dbg);
  socket.register_get_direct_mem_ptr(this, &Sram::get_direct_mem_ptr);
}

bool Sram::access(tlm::tlm_generic_payload& p) {
  const std::uint64_t a = p.get_address();
  const std::size_t n = p.get_data_length();
  if (a + n > mem_.size()) {
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return false;
  }
  if (p.is_write()) std::memcpy(&mem_[a], p.get_data_ptr(), n);
  else if (p.is_read()) std::memcpy(p.get_data_ptr(), &mem_[a], n);
  p.set_response_status(tlm::TLM_OK_RESPONSE);
  p.set_dmi_allowed(true);
  return true;
}

void Sram::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  if (access(p)) delay += access_time_ * static_cast<double>((p.get_data_length() + 15) / 16);
}

unsigned Sram::transport_dbg(tlm::tlm_generic_payload& p) {
  return access(p) ? p.get_data_length() : 0;
}

bool Sram::get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi& dmi) {
  dmi.set_dmi_ptr(mem_.data());
  dmi.set_start_address(0);
  dmi.set_end_address(mem_.size() - 1);
  dmi.allow_read_write();
  dmi.set_read_latency(access_time_);
  dmi.set_write_latency(access_time_);
  return true;
}

}  // namespace s2
