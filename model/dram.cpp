#include "dram.h"

#include <cstring>

namespace s2 {

Dram::Dram(sc_core::sc_module_name name) : sc_module(name), socket("socket") {
  socket.register_b_transport(this, &Dram::b_transport);
  socket.register_transport_dbg(this, &Dram::transport_dbg);
}

void Dram::configure(const HwConfig& cfg, const sc_core::sc_time& pe_clock) {
  pe_clock_ = pe_clock;
  bytes_per_op_ = static_cast<std::uint64_t>(cfg.dram_bytes_per_op);
  cycles_per_op_ = static_cast<std::uint64_t>(cfg.dram_cycles_per_op);
  latency_cycles_ = static_cast<std::uint64_t>(cfg.dram_latency_cycles);
}

void Dram::reset(std::uint64_t bytes) {
  mem_.assign(bytes, 0);
  busy_until_ = sc_core::SC_ZERO_TIME;
  ops_ = 0;
}

std::uint64_t Dram::ops_for(std::uint64_t addr, std::uint64_t bytes) const {
  if (bytes == 0) return 0;
  const std::uint64_t first = addr / bytes_per_op_, last = (addr + bytes - 1) / bytes_per_op_;
  return last - first + 1;
}

void Dram::b_transport(int, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  const std::uint64_t a = p.get_address(), n = p.get_data_length();
  if (a + n > mem_.size()) {
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (p.is_read()) std::memcpy(p.get_data_ptr(), mem_.data() + a, n);
  else std::memcpy(mem_.data() + a, p.get_data_ptr(), n);
  const std::uint64_t ops = ops_for(a, n);
  ops_ += ops;
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const sc_core::sc_time arrival = now + delay;
  const sc_core::sc_time start = busy_until_ > arrival ? busy_until_ : arrival;
  busy_until_ = start + pe_clock_ * static_cast<double>(ops * cycles_per_op_);
  delay = busy_until_ + pe_clock_ * static_cast<double>(latency_cycles_) - now;
  p.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned Dram::transport_dbg(int, tlm::tlm_generic_payload& p) {
  const std::uint64_t a = p.get_address(), n = p.get_data_length();
  if (a + n > mem_.size()) return 0;
  if (p.is_read()) std::memcpy(p.get_data_ptr(), mem_.data() + a, n);
  else std::memcpy(mem_.data() + a, p.get_data_ptr(), n);
  return static_cast<unsigned>(n);
}

}  // namespace s2
