#include "storage_plan.h"

#include <algorithm>
#include <array>

#include "distributor.h"
#include "model/sram_layout.h"

namespace s2::mapper {

namespace {

// The storage QPEs' PEs, in the order of the double QPE blocks.
std::vector<int> storage_pes(const ChipShape& chip) {
  std::vector<int> pes;
  for (const DoubleQpeBlock& db : chip.double_qpe_blocks)
    for (int z = 0; z < kPesPerQpe; ++z) pes.push_back(chip.qpe_index(db.storage_qpe) * kPesPerQpe + z);
  return pes;
}

}  // namespace

StorageRegion storage_region(const ChipShape& chip, Shape3 map, std::uint32_t base) {
  StorageRegion r;
  const std::vector<int> pes = storage_pes(chip);
  r.width = map.W;
  r.height = map.H;
  r.planes = map.D;
  r.band_rows = (map.H + static_cast<int>(pes.size()) - 1) / static_cast<int>(pes.size());
  r.pes.assign(pes.begin(), pes.begin() + (map.H + r.band_rows - 1) / r.band_rows);
  r.base = base;
  return r;
}

std::vector<BlockResidency> storage_residency(const ParsedNetwork& n, const NetworkSplit& split, const HwConfig& cfg) {
  const std::size_t N = n.blocks.size();
  std::vector<BlockResidency> where(N);
  if (N == 0 || cfg.chip.qpes() <= 1 || cfg.chip.double_qpe_blocks.empty()) return where;
  const auto reuses = [&](std::size_t i) {  // (a block its mapping gives another strategy does not)
    return n.blocks[i].kind == BlockKind::Convolution && split.blocks[i].strategy.value_or(Strategy::FuseReuse) == Strategy::FuseReuse &&
           distributable(n.blocks[i], split.blocks[i], Strategy::FuseReuse, cfg, nullptr);
  };
  const std::uint64_t sram = static_cast<std::uint64_t>(cfg.chip.storage_pe_bytes);
  // the maps that may be kept, with their bytes per storage PE (0: may not)
  std::vector<std::uint64_t> chunk(N, 0);
  for (std::size_t i = 0; i + 1 < N; ++i) {
    const OperationBlock& b = n.blocks[i];
    if (!reuses(i) || !reuses(i + 1) || n.blocks[i + 1].inputs.empty() || n.blocks[i + 1].inputs.front() != b.name()) continue;
    int readers = 0;
    for (const OperationBlock& c : n.blocks) readers += static_cast<int>(std::count(c.inputs.begin(), c.inputs.end(), b.name()));
    // a map read through a view (a concatenation, slice or shuffle) is read from DRAM (docs/real_networks.md)
    for (const MapView& v : n.views)
      readers += static_cast<int>(std::count_if(v.channels.begin(), v.channels.end(), [&](const ChannelSource& c) { return c.map == b.name(); }) > 0);
    const std::uint64_t bytes = align_up(storage_region(cfg.chip, b.out(), 0).chunk_bytes(), 16);
    if (readers == 1 && bytes <= sram) chunk[i] = bytes;
  }
  // Which to keep: the most bytes kept out of DRAM (each is stored and loaded once less), where a block
  // whose input and output are both kept needs room for both (dynamic programming along the blocks;
  // best[i][k]: the most bytes over blocks 0..i with block i's output kept (k = 1) or not).
  std::vector<std::array<std::uint64_t, 2>> best(N, {0, 0});
  std::vector<std::array<int, 2>> from(N, {0, 0});
  for (std::size_t i = 0; i < N; ++i) {
    const std::array<std::uint64_t, 2> prev = i > 0 ? best[i - 1] : std::array<std::uint64_t, 2>{0, 0};
    best[i][0] = std::max(prev[0], prev[1]);
    from[i][0] = prev[1] > prev[0];
    if (chunk[i] == 0) continue;
    const bool beside = i > 0 && chunk[i - 1] > 0 && chunk[i - 1] + chunk[i] <= sram;
    from[i][1] = beside && prev[1] > prev[0];
    best[i][1] = (from[i][1] ? prev[1] : prev[0]) + static_cast<std::uint64_t>(n.blocks[i].out().elements());
  }
  int k = best[N - 1][1] > best[N - 1][0];
  for (std::size_t i = N; i-- > 0;) {
    where[i].output_in_storage = k == 1;
    k = from[i][static_cast<std::size_t>(k)];
  }
  // inputs where the previous output is; a map kept beside a kept input goes to the other end of the SRAM
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0 && where[i - 1].output_in_storage) {
      where[i].input_in_storage = true;
      where[i].input_base = where[i - 1].output_base;
    }
    if (where[i].output_in_storage && where[i].input_in_storage && where[i].input_base == 0)
      where[i].output_base = static_cast<std::uint32_t>(sram - chunk[i]);
  }
  return where;
}

}  // namespace s2::mapper
