// The RTL backend for tasks: drives the Verilated QPE through its host port (rtl_stubs/README.md, "Host
// port"). The RTL's signal names are known to harness/backends/rtl/ only (qpe_top.h, qpe_ports.h, this adapter
// and linked_qpes.h); a user with their own QPE RTL replaces that folder (and the Verilator build of
// rtl_stubs/) and nothing else.
#pragma once

#include "harness/backends/backend.h"  // make_rtl_backend, kUnwrittenResult

namespace s2::rtl_protocol {
// Host-port packet kinds and task statistics (rtl_stubs/s2_pkg.svh; tests/rtl_protocol_test.cpp reads them
// from there and compares); the registers are model/pe/pe_registers.h, the DRAM port's kinds rtl_dram.h.
enum : unsigned { kPktRegWr = 0, kPktMemWr = 1, kPktMemRd = 2 };
enum : unsigned {
  kStatStart = 0, kStatEnd, kStatCompute, kStatOutput, kStatAWait, kStatBWait, kStatTiles, kStatSteps
};
// The activity counters (64 bits since reset): counter k's low half at kStatActBase + 2k, high half + 1.
enum : unsigned { kStatActBase = 8 };
enum : unsigned {
  kActMacOps = 0, kActMacPaddingOps, kActSramRdMlaA, kActSramRdMlaB, kActSramWrMlaOut, kActSramRdDma,
  kActSramWrDma, kActBusyCycles, kActCounters
};
}  // namespace s2::rtl_protocol
