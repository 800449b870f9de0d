// The ARM core's element-wise operations on its PE's SRAM (thesis 4.1): what they compute and what they
// cost (thesis Table 5.9). Both backends' ARM use these: the model's ArmCore and the C++ ARM that drives
// the RTL's ARM port.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/hw_config.h"
#include "model/task_stream.h"

namespace s2 {

// ARM clocks of one element-wise operation as cfg.arm_clock_model says: "counted", its kernel's loops at their
// counted clocks (cfg.arm_kernels); "table5.9", the thesis's averages (cfg.arm). Both are below.
std::uint64_t arm_op_cycles(const ArmCommand& c, const HwConfig& cfg, const std::uint8_t* sram = nullptr,
                            std::size_t sram_bytes = 0);
// The counted clocks: the kernel that runs the command (model/pe/arm_kernels/; arm_kernel_name), its `call`
// once and each loop's clocks per iteration times the iterations the command makes it run (a padding's whole
// border row split at its word boundaries as the kernel splits it; MacInt8's values tested with or
// without a spike, PermuteWords' entries starting a cycle or already placed, counted from the SRAM when given,
// else bounded as if every value spiked and every entry started a cycle). Rounded up to whole clocks.
std::uint64_t arm_op_cycles(const ArmCommand& c, const ArmKernelClocks& clocks, const std::uint8_t* sram = nullptr,
                            std::size_t sram_bytes = 0);
// How cfg charges the ARM's clocks, for reports: "the ARM kernels' counted clocks (docs/arm_clocks.md)" or
// "thesis Table 5.9's averages".
const char* arm_clocks_source(const HwConfig& cfg);
// The kernel that runs a command, as named in vectors/arm_clocks.json and arm_kernel_clocks ("quantize_bias", ...).
const char* arm_kernel_name(const ArmCommand& c);
// Runs the command's kernel, the host build of the C the PE's ARM runs (model/pe/arm_kernels/arm_kernels.c),
// on `sram`. For a command arm_apply accepts (it checks no bounds); tests hold its results to arm_apply's.
void arm_run_kernel(const ArmCommand& c, std::uint8_t* sram, std::size_t sram_bytes);
// ARM clocks of one element-wise operation (thesis Table 5.9): padding per 32-bit word written, the
// others per input pixel; rounded up to whole clocks. The SNN operations' clocks depend on the data (the
// non-zero operand values MacInt8 accumulates, the words PermuteWords moves): given the PE's SRAM as the
// operation begins, they are counted from it; without it (nullptr), bounded as if every value were non-zero
// and every word moved.
std::uint64_t arm_op_cycles(const ArmCommand& c, const ArmOpClocks& clocks, const std::uint8_t* sram = nullptr,
                            std::size_t sram_bytes = 0);
// The SRAM byte ranges [lo, hi) an SNN operation (MacInt8, PermuteWords, Copy8) or a network's element-wise
// operation (Table8, Affine8, AddScaled8, Mul8, ChannelMul8) reads or writes, each bounded: its operand,
// weights, table or parameters, and destination (none for an empty operation, or another kind). arm_apply
// checks them against the SRAM; the chip streams' race check takes them as the operation's accesses.
struct SramExtent {
  std::uint64_t lo = 0, hi = 0;
};
std::vector<SramExtent> snn_op_extents(const ArmCommand& c);

// The SRAM bytes an operation's loads and stores move (activity counts, model/activity.h), by the loops
// arm_apply runs: a pooling window's every byte, a bias value once per value the command uses (it stays in
// a register across the values that share it), MacInt8's weights and sums only for non-zero operand values
// and PermuteWords' moved words (counted from the SRAM when given, else bounded as arm_op_cycles is).
// The model and the RTL backend run the same C++ ARM, so these counts agree by construction.
struct ArmSramBytes {
  std::uint64_t read = 0, written = 0;
};
ArmSramBytes arm_op_sram_bytes(const ArmCommand& c, const std::uint8_t* sram = nullptr, std::size_t sram_bytes = 0);

// Whether arm_op_cycles reads the SRAM for this operation (MacInt8, PermuteWords).
inline bool arm_op_cycles_read_sram(ArmOpKind k) { return k == ArmOpKind::MacInt8 || k == ArmOpKind::PermuteWords; }
// Carries the operation out on a PE's SRAM (functional, untimed). Throws std::out_of_range if it
// reaches past `sram_bytes`.
void arm_apply(const ArmCommand& c, std::uint8_t* sram, std::size_t sram_bytes);

}  // namespace s2
