// The RTL backend: drives the Verilated QPE through its host port (rtl_stubs/README.md, "Host port").
// This adapter is the only code in s2cosim that knows the RTL's signal names; a user with their own QPE
// RTL replaces rtl_qpe_adapter.cpp (and the Verilator build of rtl_stubs/) and nothing else.
#pragma once

#include <cstdint>

namespace s2 {

// A result word that was never written: the backends fill result areas with it before a task. It is not a
// 29-bit sign extension, so no correct result can equal it.
inline constexpr std::uint32_t kUnwrittenResult = 0x7fffffffu;

}  // namespace s2
