#include "model/qpe/host.h"

#include <stdexcept>

namespace s2 {

Host::Host(sc_core::sc_module_name name) : sc_module(name), noc("noc") {
  SC_HAS_PROCESS(Host);
  SC_THREAD(run);
}

void Host::load(std::uint64_t address, const std::vector<std::uint8_t>& bytes) {
  tlm::tlm_generic_payload p;
  p.set_command(tlm::TLM_WRITE_COMMAND);
  p.set_address(address);
  p.set_data_ptr(const_cast<unsigned char*>(bytes.data()));
  p.set_data_length(static_cast<unsigned>(bytes.size()));
  const unsigned got = noc->transport_dbg(p);
  if (got != bytes.size()) throw std::runtime_error("model: SRAM load of " + std::to_string(bytes.size()) + " bytes at " + std::to_string(address) + " took " + std::to_string(got) + " (status " + p.get_response_string() + ")");
}

void Host::submit(std::function<void()> job) {
  job_ = std::move(job);
  job_event_.notify(sc_core::SC_ZERO_TIME);
}

void Host::write_word(std::uint64_t address, std::uint32_t value, const sc_core::sc_time& packet_time) {
  tlm::tlm_generic_payload p;
  p.set_command(tlm::TLM_WRITE_COMMAND);
  p.set_address(address);
  p.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
  p.set_data_length(4);
  p.set_streaming_width(4);
  sc_core::sc_time delay = offset_;
  noc->b_transport(p, delay);
  if (p.get_response_status() != tlm::TLM_OK_RESPONSE) throw std::runtime_error("model: host write failed");
  offset_ += packet_time;  // the host port takes one packet per NoC clock
}

void Host::run() {
  while (true) {
    sc_core::wait(job_event_);
    offset_ = sc_core::SC_ZERO_TIME;
    if (job_) job_();
    job_ = nullptr;
    sc_core::sc_pause();
  }
}

}  // namespace s2
