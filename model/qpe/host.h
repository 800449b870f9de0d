// Host interface of the model: loads test data into SRAM (debug transport, untimed, like the RTL's
// backdoor), sends task descriptors and START packets through the router one per NoC clock, and waits
// for the PEs' done interrupts.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "model/systemc.h"

namespace s2 {

class Host : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Host> noc;

  explicit Host(sc_core::sc_module_name name);
  void load(std::uint64_t address, const std::vector<std::uint8_t>& bytes);
  // Runs `job` in the host's thread at the next sc_start(); the simulation pauses when it returns.
  void submit(std::function<void()> job);
  // From inside a job: a 32-bit register write through the NoC, one packet per NoC clock.
  void write_word(std::uint64_t address, std::uint32_t value, const sc_core::sc_time& packet_time);

 private:
  void run();
  std::function<void()> job_;
  sc_core::sc_event job_event_;
  sc_core::sc_time offset_;  // local time of the packets sent so far in this job
};

}  // namespace s2
