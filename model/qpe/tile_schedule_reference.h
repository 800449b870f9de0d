// The clock-level tile schedule before its rewrite for speed, the reference tests/tile_schedule_test.cpp
// checks the rewrite (TileSchedule, tile_schedule.h) against; not part of the model's libraries.
#pragma once

#include <cstdint>

#include "model/hw_config.h"
#include "model/qpe/tile_schedule.h"

namespace s2::reference {

// The timing of one tile situation, resolved by the old engine (as TileSchedule::tile, without the cache);
// adds the clocks it resolved to *clocks_resolved when given.
TileTiming resolve(const HwConfig& cfg, const TileSituation& s, std::uint64_t* clocks_resolved = nullptr);

}  // namespace s2::reference
