// Where a block's data sits in DRAM (thesis 4.3; mapper/README.md, "Distributor"): its regions one after
// the other (BlockDramMap), a convolution's filters packed in the MLA's layout by MAC-row groups, an MM
// block's weight pieces one after the other in operand B's layout. The distributor lays a block out so;
// the harness fills and reads the same layout (harness/stimulus/block_data.h).
#pragma once

#include <cstdint>
#include <functional>

#include "model/hw_config.h"
#include "model/sram_layout.h"
#include "parser.h"
#include "splitter.h"

namespace s2::mapper {

// Where a block's data sits in DRAM (byte addresses).
struct BlockDramMap {
  std::uint64_t input = 0, input_bytes = 0;        // conv: [D][H][W] int8 unpadded; mm: A layout, MAC rows bytes per value
  std::uint64_t padded = 0, padded_bytes = 0;      // conv, nofuse: [D][H+2p][W+2p] int8 (PADD's result)
  std::uint64_t weights = 0, weight_bytes = 0;     // packed for the MLA
  std::uint64_t bias = 0, bias_bytes = 0;          // a biased layer: int32 per output channel (conv) or column (mm)
  std::uint64_t shifts = 0, shift_bytes = 0;       // per-channel QUAN shifts: uint8 per output channel or column
  std::uint64_t table = 0, table_bytes = 0;        // a convolution block's fused activation: its 256-byte table
  std::uint64_t raw = 0, raw_bytes = 0;            // nofuse: the core operation's int32 results (conv:
                                                   // [C][Ho][every column computed at stride 1])
  std::uint64_t sums = 0, sums_bytes = 0;          // mm nofuse: FCE's int32 sums
  std::uint64_t output = 0, output_bytes = 0;      // the block's int8 result
  std::uint64_t shortcut = 0, shortcut_bytes = 0;  // residual blocks: the int8 map MAT_ELE adds, as the output
  std::uint64_t total = 0;
};

// Lays a block's regions out in DRAM one after the other, each on a 16-byte boundary.
struct DramPlacer {
  std::uint64_t at = 0;
  void place(std::uint64_t& base, std::uint64_t& size, std::uint64_t bytes) {
    base = at;
    size = bytes;
    at = align_up(at + bytes, 16);
  }
};

// A convolution's filters [C][D/G][Hf][Wf] packed in MAC-row groups: filter c in slot filter_slot(c), row
// group slot / rows at that times filter_group_bytes, its weight (d, ky, kx) (d of its group's D/G channels) at
// byte ((d*Hf + ky)*Wf + kx)*rows + slot % rows of it. Each of a grouped convolution's groups starts a row group,
// so that a piece's filters (never two groups') are whole row groups of their own; without groups slot(c) = c.
inline int filter_slot(const Operation& conv, int mac_rows, int c) {
  const int per_group = conv.out.D / conv.groups;
  const int group_slots = (per_group + mac_rows - 1) / mac_rows * mac_rows;
  return c / per_group * group_slots + c % per_group;
}
// The row groups the packed filters fill (the last slot's, and one before it).
inline std::uint64_t filter_row_groups(const Operation& conv, int mac_rows) {
  return std::uint64_t(filter_slot(conv, mac_rows, conv.out.D - 1)) / static_cast<std::uint64_t>(mac_rows) + 1;
}
inline std::uint64_t filter_group_bytes(const Operation& conv, int mac_rows) {
  return align_up(std::uint64_t(conv.weight_depth()) * conv.Hf * conv.Wf * static_cast<std::uint64_t>(mac_rows), 16);
}
inline std::uint64_t packed_filter_offset(const Operation& conv, int mac_rows, std::uint64_t group_bytes, int c, int d,
                                          int ky, int kx) {
  const int slot = filter_slot(conv, mac_rows, c);
  return std::uint64_t(slot / mac_rows) * group_bytes + ((std::uint64_t(d) * conv.Hf + ky) * conv.Wf + kx) * mac_rows +
         slot % mac_rows;
}

// Every weight piece of an MM block in the order they sit packed in DRAM (one after the other, each in
// the MLA's operand-B layout), with its offset from the start of the weights and its SRAM layout.
void for_each_mm_piece(const OperationBlock& b, const BlockSplit& s, const HwConfig& cfg,
                       const std::function<void(const MmPiece&, std::uint64_t offset, const SramLayout&)>& f);

}  // namespace s2::mapper
