// The RTL backend: drives the Verilated QPE through its host port (rtl_stubs/README.md, "Host port").
// This adapter is the only code in s2cosim that knows the RTL's signal names; a user with their own QPE
// RTL replaces rtl_qpe_adapter.cpp (and the Verilator build of rtl_stubs/) and nothing else.
#pragma once

#include "harness/backend.h"  // make_rtl_backend, kUnwrittenResult
