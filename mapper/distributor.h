// The distributor for QPE-DRAM (thesis 4.3, Appendix C): turns one split operation block into the task
// streams (model/task_stream.h) a QPE-DRAM runs, in one of three strategies:
//   nofuse_noreuse  every primitive operation is its own stream: each piece is loaded from DRAM, worked
//                   on and written back, and the next operation loads it again;
//   fuse_noreuse    one stream for the block: a piece's operations run back to back in its PE and only
//                   the block's result goes back to DRAM; each PE works through its own pieces;
//   fuse_reuse      as fuse_noreuse, and input-feature-map parts (or filter parts, whichever moves fewer
//                   bytes by equations 4.2/4.3) stay in the PEs while the other operand's parts pass by:
//                   each of four PEs computes with the filters of every PE of the QPE by reading them
//                   as a neighbour (operand-A source shift 0..3). Convolution blocks only (thesis 4.3.3).
// The DRAM holds the block's input, its weights (packed offline in the MLA's layout, one filter group or
// weight piece after the other) and its output; the test data is drawn from a seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/hw_config.h"
#include "model/task_stream.h"
#include "parser.h"
#include "splitter.h"

namespace s2::mapper {

enum class Strategy { NofuseNoreuse, FuseNoreuse, FuseReuse };
const char* to_string(Strategy s);           // "nofuse_noreuse" | "fuse_noreuse" | "fuse_reuse"
Strategy parse_strategy(const std::string& s);  // throws std::invalid_argument listing the names
inline constexpr Strategy kAllStrategies[] = {Strategy::NofuseNoreuse, Strategy::FuseNoreuse, Strategy::FuseReuse};

enum class Reuse { None, Ifmap, Filter };
const char* to_string(Reuse r);  // "none" | "ifmap" | "filter"

// Where a block's data sits in DRAM (byte addresses).
struct BlockDramMap {
  std::uint64_t input = 0, input_bytes = 0;        // conv: [D][H][W] int8 unpadded; mm: A layout, MAC rows bytes per value
  std::uint64_t padded = 0, padded_bytes = 0;      // conv, nofuse: [D][H+2p][W+2p] int8 (PADD's result)
  std::uint64_t weights = 0, weight_bytes = 0;     // packed for the MLA
  std::uint64_t raw = 0, raw_bytes = 0;            // nofuse: the core operation's int32 results (conv:
                                                   // [C][Ho][every column computed at stride 1])
  std::uint64_t sums = 0, sums_bytes = 0;          // mm nofuse: FCE's int32 sums
  std::uint64_t output = 0, output_bytes = 0;      // the block's int8 result
  std::uint64_t shortcut = 0, shortcut_bytes = 0;  // residual blocks: the int8 map MAT_ELE adds, as the output
  std::uint64_t total = 0;
};

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
//    residual block adds as its shortcut, or a pooling or FC block reads, goes to DRAM),
//  - its planes fit the storage PEs (ChipShape::storage_pe_bytes each), beside the block's own input if
//    that is in the storage PEs too: the output then goes to the other end of their SRAM.
// Indexed as n.blocks; all in DRAM on QPE-DRAM or a chip without storage QPEs.
std::vector<BlockResidency> storage_residency(const ParsedNetwork& n, const NetworkSplit& split, const HwConfig& cfg);

struct BlockStreams {
  std::string block;
  Strategy strategy = Strategy::FuseNoreuse;
  Reuse reuse = Reuse::None;
  double fmap_reuse_bytes = 0, filter_reuse_bytes = 0;  // equations 4.2 / 4.3 (fuse_reuse)
  int quant_shift = 0;                  // QUAN's right shift (the thesis gives none; see mapper/README.md)
  std::vector<TaskStream> streams;      // run in order on the same DRAMs; one per primitive op for nofuse
  BlockDramMap map;
  int drams = 1;  // DRAMs holding a copy of the block's image (BlockDramMap), each serving its PEs
  // Chip fuse_reuse (BlockResidency): the block's input as the previous block left it in the storage
  // QPEs, and its output kept there for the next block. Not held: in DRAM.
  StorageRegion input_storage, output_storage;
};

// Throws std::invalid_argument if the strategy does not apply to the block (fuse_reuse of an MM block)
// or the block needs what the distributor does not do yet (strided convolutions, pooling blocks,
// input-channel splits), saying which.
BlockStreams distribute(const OperationBlock& b, const BlockSplit& s, Strategy strategy, const HwConfig& cfg,
                        const BlockResidency& where = {});
// Whether distribute() can run the strategy on the block; if not, why (for tables).
bool distributable(const OperationBlock& b, const BlockSplit& s, Strategy strategy, const HwConfig& cfg, std::string* why);

// A block's data from outside (run-net --input): its input map ([D][H][W] int8, unpadded; an MM block's
// input vector) and the map a residual block adds ([C][H][W] int8). Empty: drawn from the seed.
struct BlockInputs {
  std::vector<std::int8_t> input, shortcut;
};
// The block's input, weights (its core operation's trained weights, else drawn) and shortcut, placed in a
// DRAM image of map.total bytes. What is not given is drawn from `seed`, in the order input, weights,
// shortcut. Throws std::invalid_argument for data of the wrong size.
std::vector<std::uint8_t> block_dram_image(const OperationBlock& b, const BlockSplit& s, const BlockStreams& bs,
                                           const HwConfig& cfg, std::uint64_t seed, const BlockInputs& data = {});
// The block's int8 output as the streams left it: every byte of the output region from the DRAM the last
// store that wrote it went to (each DRAM holds the outputs of its own PEs), or from the storage QPEs.
// Bytes no store wrote are 0.
std::vector<std::uint8_t> gather_block_output(const BlockStreams& bs, const SystemMemory& mem);

// The memories as the block's streams expect to find them: the image in each DRAM, and the storage PEs
// holding the block's input (as the previous block left it) and room for its output.
SystemMemory stage_block_memory(const BlockStreams& bs, const HwConfig& cfg, const std::vector<std::uint8_t>& image);

// The block's int8 result computed from the image's input and weights with the golden kernels, as the
// output region holds it.
std::vector<std::uint8_t> golden_block_output(const OperationBlock& b, const BlockSplit& s, const BlockStreams& bs,
                                              const HwConfig& cfg, const std::vector<std::uint8_t>& image);

}  // namespace s2::mapper
