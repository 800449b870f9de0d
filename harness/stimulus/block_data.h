// A block's data as the harness prepares and checks it (run-net, tests): its DRAM image (input, weights,
// shortcut: given or drawn from a seed), the memories as the block's streams expect them, the golden
// result computed from the image with the golden kernels, and the result read back from the memories
// the streams left. Reads the mapper's plan (mapper/distributor.h: BlockStreams, and the DRAM layout of
// mapper/dram_layout.h); nothing here plans.
#pragma once

#include <cstdint>
#include <vector>

#include "mapper/distributor.h"
#include "model/hw_config.h"
#include "model/task_stream.h"

namespace s2 {

// A block's data from outside (run-net --input): its input map ([D][H][W] int8, unpadded; an MM block's
// input vector) and the map a residual block adds ([C][H][W] int8), or an element-wise block's second operand.
// Empty: drawn from the seed.
struct BlockInputs {
  std::vector<std::int8_t> input, shortcut;
};
// The block's input, weights (its core operation's trained weights, else drawn) and shortcut, placed in a
// DRAM image of map.total bytes. What is not given is drawn from `seed`, in the order input, weights,
// shortcut. Throws std::invalid_argument for data of the wrong size.
std::vector<std::uint8_t> block_dram_image(const mapper::OperationBlock& b, const mapper::BlockSplit& s,
                                           const mapper::BlockStreams& bs, const HwConfig& cfg, std::uint64_t seed,
                                           const BlockInputs& data = {});
// The block's int8 output as the streams left it: every byte of the output region from the DRAM the last
// store that wrote it went to (each DRAM holds the outputs of its own PEs), or from the storage QPEs.
// Bytes no store wrote are 0.
std::vector<std::uint8_t> gather_block_output(const mapper::BlockStreams& bs, const SystemMemory& mem);

// The memories as the block's streams expect to find them: the image in each DRAM, and the storage PEs
// holding the block's input (as the previous block left it) and room for its output.
SystemMemory stage_block_memory(const mapper::BlockStreams& bs, const HwConfig& cfg,
                                const std::vector<std::uint8_t>& image);

// The block's int8 result computed from the image's input and weights with the golden kernels, as the
// output region holds it.
std::vector<std::uint8_t> golden_block_output(const mapper::OperationBlock& b, const mapper::BlockSplit& s,
                                              const mapper::BlockStreams& bs, const HwConfig& cfg,
                                              const std::vector<std::uint8_t>& image);

}  // namespace s2
