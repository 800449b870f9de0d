// One place that includes SystemC and TLM-2.0 for the model (Debian's SystemC 2.3.4 is a C++17 build:
// the build defines SC_CPLUSPLUS=201703L for every user of these headers).
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <utility>

namespace s2 {

// Tells AddressSanitizer again where the calling thread's stack is (a no-op without ASan). Debian's SystemC
// 2.3.4 announces each coroutine switch to ASan, but gives the main coroutine's stack as empty: after a
// simulation ASan takes the main stack's top for 0 and ignores the unpoisoning every throw asks for, so a
// frame an exception unwound stays poisoned and later calls into that memory are reported as
// stack-use-after-scope (sanitizers issue 189).
void announce_stack_to_asan();

// sc_core::sc_start from the main stack (the only way this project runs a simulation), then the stack
// announced again.
template <class... Args>
void run_simulation(Args&&... args) {
  sc_core::sc_start(std::forward<Args>(args)...);
  announce_stack_to_asan();
}

}  // namespace s2
