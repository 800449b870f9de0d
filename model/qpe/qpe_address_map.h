// Addresses on the model's NoC (a TLM generic payload's address):
//   [22:20] destination port: 0..3 = PE, 4 = host
//   [19]    0 = the PE's SRAM (byte address in [16:0]), 1 = its task-controller registers (index * 4)
#pragma once

#include <cstdint>

namespace s2::qpe_addr {

inline constexpr std::uint64_t kPortShift = 20;
inline constexpr std::uint64_t kRegisterSpace = 1ull << 19;
inline constexpr std::uint64_t kInPortMask = (1ull << kPortShift) - 1;

inline std::uint64_t sram(int pe, std::uint64_t byte) { return (std::uint64_t(pe) << kPortShift) | byte; }
inline std::uint64_t reg(int pe, int index) {
  return (std::uint64_t(pe) << kPortShift) | kRegisterSpace | (std::uint64_t(index) * 4);
}
inline int port_of(std::uint64_t a) { return static_cast<int>(a >> kPortShift); }

// Task-controller registers: the same descriptor the RTL's task controller takes (rtl_stubs/s2_pkg.svh).
enum Register : int {
  kOp = 0,      // 0 = conv, 1 = mm
  kWi,          // conv Wi | mm W_A
  kHi,          // conv Hi | mm H_A
  kD,           // conv D  | mm W_B
  kWf,
  kHf,
  kC,
  kABase,
  kBBase,
  kOBase,
  kASrc,        // [2] via NoC, [1:0] PE holding operand A
  kStart,
  kBPlaneRows,  // conv: operand-B rows per input plane in SRAM, 0 = Hi; one-shot (reads 0 after a start)
  kRegisterCount
};

}  // namespace s2::qpe_addr
