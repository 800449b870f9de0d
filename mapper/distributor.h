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
// weight piece after the other) and its output (dram_layout.h); on the chip, maps may stay in the storage
// QPEs instead (storage_plan.h). The strategies per block kind: conv_strategies.h and chip_reuse.h over a
// convolution's plan (conv_plan.h), pool_streams.h, mm_streams.h; the PEs that work on a block: workers.h.
// The harness fills, stages and checks a block's data (harness/stimulus/block_data.h).
#pragma once

#include <string>
#include <vector>

#include "dram_layout.h"
#include "model/hw_config.h"
#include "model/task_stream.h"
#include "parser.h"
#include "splitter.h"
#include "storage_plan.h"

namespace s2::mapper {

// (Strategy, its names and kAllStrategies: splitter.h, beside the schedule, as a mapping file chooses them)
enum class Reuse { None, Ifmap, Filter };
const char* to_string(Reuse r);  // "none" | "ifmap" | "filter"

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
  // How the PEs worked through their pieces (BlockSplit::schedule as it ran: Overlapped only in chip fuse_reuse),
  // and why not as asked where it could not (the MLA run serially for lack of SRAM)
  Schedule schedule = Schedule::Thesis;
  std::string schedule_note;
};

// Throws std::invalid_argument if the strategy does not apply to the block (fuse_reuse of an MM block)
// or the block needs what the distributor does not do yet (strided convolutions, pooling blocks,
// input-channel splits), saying which.
BlockStreams distribute(const OperationBlock& b, const BlockSplit& s, Strategy strategy, const HwConfig& cfg,
                        const BlockResidency& where = {});
// Whether distribute() can run the strategy on the block; if not, why (for tables).
bool distributable(const OperationBlock& b, const BlockSplit& s, Strategy strategy, const HwConfig& cfg, std::string* why);

}  // namespace s2::mapper
