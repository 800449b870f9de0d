// The PE's registers as its ARM core (or the host, through the NoC) writes them: the MLA's task descriptor
// (the task controller, 0..11, qpe_address_map.h) and the DMA's transfer (16..25). One register map for
// the model and the RTL (rtl_stubs/s2_pkg.svh); both backends' ARM write the same list, one register per
// PE clock, so the clocks a command costs before its hardware starts are the same on both.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "model/hw_config.h"
#include "model/qpe/qpe_address_map.h"
#include "model/sram_layout.h"
#include "model/task.h"
#include "model/task_stream.h"

namespace s2 {

using TaskRegisters = std::array<std::uint32_t, qpe_addr::kRegisterCount>;

// The task a PE's descriptor registers describe (pe = -1; the QPE knows which PEs run it).
Task task_from_registers(const TaskRegisters& regs, int pe);
// The descriptor registers that make PE `pe` run `t` with its operands at `l` (REG_START excluded).
TaskRegisters task_registers(const Task& t, int pe, const SramLayout& l);

// DMA registers (rtl_stubs/s2_pkg.svh REG_DMA_*). A write of kDmaStart starts the transfer: [0] = store.
enum DmaRegister : int {
  kDmaDramAddr = 16,
  kDmaDramRowStride,
  kDmaDramPlaneStride,
  kDmaSramAddr,
  kDmaSramRowStride,
  kDmaSramPlaneStride,
  kDmaRowBytes,
  kDmaRows,
  kDmaPlanes,
  kDmaStart,
};

struct RegisterWrite {
  int index = 0;
  std::uint32_t data = 0;
};

// A node of the chip's NoC (rtl_stubs/s2_pkg.svh node_t): a QPE's router by mesh coordinates, and one of
// its local ports (0..3 the PEs, 4 the host, 5 the DRAM port).
struct NocNode {
  int x = 0, y = 0, port = 0;
};
inline constexpr int kNocDramPort = 5;
// node_t's bits: {x[3:0], y[3:0], port[2:0]}
inline std::uint32_t noc_node_bits(const NocNode& n) {
  return static_cast<std::uint32_t>((n.x << 7) | (n.y << 3) | n.port);
}
inline NocNode noc_node_of_bits(std::uint32_t b) {
  return {static_cast<int>((b >> 7) & 0xfu), static_cast<int>((b >> 3) & 0xfu), static_cast<int>(b & 7u)};
}

// What the ARM writes, in order, to start an MLA task (the descriptor, then START) or a DMA transfer.
// kDmaStart's word (s2_pkg dma_start_t) is [0] store and, if `far_end` is given, [1] = 1 and the node in
// [12:2] ({x[3:0], y[3:0], port[2:0]}): where the transfer's requests go on a chip. Without it they go to
// the PE's own QPE's DRAM port (QPE-DRAM). The model takes the far end from the command; the word is the
// same length either way, so the clocks are too.
std::vector<RegisterWrite> mla_register_writes(const TaskRegisters& r);
std::vector<RegisterWrite> dma_register_writes(const DmaTransfer& t, bool store, const NocNode* far_end = nullptr);

// The SRAM layout of a stream's MLA command: the task's layout at the command's operand bases.
// Throws std::out_of_range if it reaches beyond `sram_bytes`.
SramLayout stream_mla_layout(const StreamCommand& c, const HwConfig& cfg, std::size_t sram_bytes);

}  // namespace s2
