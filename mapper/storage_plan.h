// The chip's storage plan (thesis 4.4): which feature maps stay in the storage QPEs' SRAM between blocks,
// and how such a map lies there (row bands over the storage PEs).
#pragma once

#include <cstdint>
#include <vector>

#include "model/hw_config.h"
#include "parser.h"
#include "splitter.h"

namespace s2::mapper {

// A feature map kept in the storage QPEs' SRAM (thesis 4.4): its int8 [D][H][W] map cut into bands of
// `band_rows` rows, band k (every channel's rows of it) in storage PE pes[k] as [D][band_rows][W] from byte
// `base` of its SRAM. By rows, so that the PEs working on different parts of the map at once (their
// results in a step, their input parts in a load) reach different storage PEs.
struct StorageRegion {
  std::vector<int> pes;
  int width = 0, height = 0, planes = 0;  // the map: W, H, D
  int band_rows = 0;
  std::uint32_t base = 0;
  bool held() const { return !pes.empty(); }
  std::uint64_t plane_bytes() const { return std::uint64_t(width) * static_cast<std::uint64_t>(height); }
  std::uint64_t chunk_bytes() const { return std::uint64_t(planes) * static_cast<std::uint64_t>(band_rows) * width; }
  // where byte o of the map ([D][H][W] order) sits
  int pe_of(std::uint64_t o) const { return pes[static_cast<std::size_t>(o / width % height / band_rows)]; }
  std::uint32_t addr_of(std::uint64_t o) const {
    const std::uint64_t d = o / plane_bytes(), y = o / width % height, x = o % width;
    return base + static_cast<std::uint32_t>((d * band_rows + y % band_rows) * width + x);
  }
};

// A [D][H][W] map in the storage PEs from `base`: bands of as few rows as spread it over them all.
StorageRegion storage_region(const ChipShape& chip, Shape3 map, std::uint32_t base);

// Where a chip fuse_reuse block finds its input and leaves its output (thesis 4.4: results stay in the
// storage QPEs where they fit, and the next layer loads its input from there). The default, and every
// other strategy and target: both in DRAM.
struct BlockResidency {
  bool input_in_storage = false, output_in_storage = false;
  std::uint32_t input_base = 0, output_base = 0;  // byte in each storage PE's SRAM
};

// For a network run fuse_reuse on the chip, block by block in order (blocks fuse_reuse does not apply to
// run fuse_noreuse and use DRAM): a block keeps its output in the storage QPEs when
//  - the next block is its only reader, reads it as its main input and runs fuse_reuse (a map that a later
//    residual block adds as its shortcut, or a pooling or FC block reads, goes to DRAM; so does one whose
//    reader's mapping names another strategy, BlockSplit::strategy),
//  - its planes fit the storage PEs (ChipShape::storage_pe_bytes each), beside the block's own input if
//    that is in the storage PEs too: the output then goes to the other end of their SRAM.
// Indexed as n.blocks; all in DRAM on QPE-DRAM or a chip without storage QPEs.
std::vector<BlockResidency> storage_residency(const ParsedNetwork& n, const NetworkSplit& split, const HwConfig& cfg);

}  // namespace s2::mapper
