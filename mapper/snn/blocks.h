// The pieces every SNN stream is written from (mapper/snn/layouts.h on one PE, mapper/snn/deployment.h over
// several): SRAM allocation, the DRAM's spike train and currents, their DMA transfers, the ARM's clearing, the
// ring buffer's slot runs and the stacked layouts' shifted spike map. Inside the SNN mapper only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "model/hw_config.h"
#include "model/snn_layer.h"
#include "model/sram_layout.h"
#include "model/task_stream.h"

namespace s2::mapper {

inline constexpr std::uint64_t kSnnWord = 16;  // SRAM regions start on a 128-bit line

// SRAM regions, allocated one after the other from address 0.
struct SramAllocator {
  std::uint64_t next = 0;
  std::uint32_t take(std::uint64_t bytes) {
    const std::uint64_t at = next;
    next = align_up(next + bytes, kSnnWord);
    return static_cast<std::uint32_t>(at);
  }
};

// The DRAM: the spike train time-major after `lead` rows of zeros (and `tail` after it), then the currents.
struct SnnDram {
  std::uint64_t spikes = 0, currents = 0, bytes = 0;
  int lead = 0;
};
SnnDram snn_dram(const SnnLayer& l, int lead, int tail, std::vector<std::uint8_t>& image);

// The DMA load of spike rows [row, row + rows) of the DRAM's spike train into SRAM at `at`.
StreamCommand load_spikes(const SnnLayer& l, const SnnDram& d, std::uint64_t row, int rows, std::uint32_t at);

// The DMA store of `rows` current rows (post int32 each, `sram_row_bytes` apart in SRAM) for steps from `t0`.
StreamCommand store_currents(const SnnLayer& l, const SnnDram& d, int t0, int rows, std::uint32_t at, std::uint32_t sram_row_bytes);

// The ARM clears `bytes` at `at` (a ring slot just stored, a partial sum before it accumulates), as padding's
// word stores.
StreamCommand clear(std::uint32_t at, std::uint32_t bytes);

// The ring buffer's slots t + d for d in [d0, d0 + n), as runs of consecutive slots: calls f(first delay,
// first slot, count) once or twice (where the ring wraps).
template <typename F>
void ring_runs(int t, int d0, int n, int delays, F f) {
  const int s0 = (t + d0) % delays;
  const int first = std::min(n, delays - s0);
  f(d0, s0, first);
  if (first < n) f(d0 + first, 0, n - first);
}

// The shifted spike map both stacked layouts multiply (operand A, D rows of D x pre values in the MLA's
// layout): its shape, the spike window a batch of D steps reads, and the ARM's copies that build it.
// Operand A's column k of row group g sits at g x layout.a_group_stride + k x rows.
struct SpikeMap {
  int delays = 0, pre = 0, rows = 4;
  int groups = 0;          // operand A's row groups of `rows` MAC rows
  int window = 0;          // spike rows a batch reads: steps t0 - (D - 1) .. t0 + groups x rows - 1
  SramLayout layout;       // of the whole map's multiplication (operand A's group stride)
  SpikeMap(const SnnLayer& l, const HwConfig& cfg);
  // the rows (steps) of group g
  int group_rows(int g) const { return std::min(rows, delays - g * rows); }
  // Appends the Copy8s that build the map at `map_at` from the spike window at `window_at`.
  void build(std::vector<StreamCommand>& cmds, std::uint32_t window_at, std::uint32_t map_at) const;
};

// original_mac's operand A: one step's spikes (`pre` bytes at `spikes_at`) into row 0 of the MLA's layout at
// `a_at` (one byte per MAC row per value; the other rows stay 0).
StreamCommand spikes_to_operand_a(std::uint32_t spikes_at, std::uint32_t a_at, int pre, int mac_rows);

// Echelon's Circle Reverse: the map's `columns` columns (32-bit words) of each row group permuted in place into
// echelon order by the table at `table_at`.
StreamCommand circle_reverse(const SpikeMap& map, std::uint32_t map_at, std::uint32_t table_at, int columns);

}  // namespace s2::mapper
