// One place that includes SystemC and TLM-2.0 for the model (Debian's SystemC 2.3.4 is a C++17 build:
// the build defines SC_CPLUSPLUS=201703L for every user of these headers).
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
