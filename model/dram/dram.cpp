#include "model/dram/dram.h"

#include <cmath>
#include <cstring>

namespace s2 {

Dram::Dram(sc_core::sc_module_name name) : sc_module(name), socket("socket") {
  socket.register_b_transport(this, &Dram::b_transport);
  socket.register_transport_dbg(this, &Dram::transport_dbg);
}

void Dram::configure(const HwConfig& cfg, const sc_core::sc_time& pe_clock) {
  pe_clock_ = pe_clock;
  timing_ = DramTiming(cfg);
}

void Dram::reset(std::vector<std::uint8_t>&& image, std::uint64_t bytes) {
  mem_ = std::move(image);
  mem_.resize(bytes, 0);
  timing_.reset();
}

void Dram::b_transport(int, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  auto* ext = p.get_extension<DramRequestExtension>();
  const DramRange r = ext ? ext->range : DramRange{p.get_address(), p.get_data_length(), 1, p.get_data_length()};
  if (r.end() > mem_.size() || r.bytes() != p.get_data_length()) {
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  std::uint8_t* data = p.get_data_ptr();
  for (std::uint64_t k = 0; k < r.rows; ++k) {
    std::uint8_t* row = mem_.data() + r.row_addr(k);
    if (p.is_read()) std::memcpy(data + k * r.row_bytes, row, r.row_bytes);
    else std::memcpy(row, data + k * r.row_bytes, r.row_bytes);
  }
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const auto arrival = static_cast<std::uint64_t>(std::llround((now + delay) / pe_clock_));
  DramTiming::Service s = timing_.serve(arrival, r, p.is_read() ? DramTiming::Access::Read : DramTiming::Access::Write);
  delay = pe_clock_ * static_cast<double>(timing_.done(s)) - now;
  if (ext) ext->service = std::move(s);
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
