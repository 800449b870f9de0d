// The commands the distributor's strategies write into a block's task streams (model/task_stream.h): DMA
// transfers, ARM operations, MLA tasks and Syncs, each charged to one of the block's operations; and a
// block's empty stream. Inside the distributor only.
#pragma once

#include <cstdint>
#include <string>

#include "dram_layout.h"
#include "model/task_stream.h"
#include "parser.h"
#include "workers.h"

namespace s2::mapper {

// The name of the block's operation of kind k, else the block's.
std::string op_name(const OperationBlock& b, PrimitiveKind k);
// QUAN's right shift: the layer's own (an imported network's quantization), else, for test data, about
// half the bits a sum of K products of random int8 values grows by (the thesis gives no shift)
int quant_shift(const OperationBlock& b, int K);

// An MM block's piece as an MLA task (batch 1: A is the input vector, H_A = 1).
Task mm_task(const MmShape& shape);

// The DMA load of a biased layer's values first .. first + count - 1 (int32, one per output channel or
// column) from the block's DRAM image into SRAM at `sram_addr`, where the ARM's bias add reads them.
DmaTransfer bias_slice(const BlockDramMap& m, int first, int count, std::uint32_t sram_addr);
// The SRAM bytes a piece's bias slice of `count` values takes (0 for an unbiased layer), 16-byte aligned.
std::uint32_t bias_slice_bytes(const Operation& core, int count);

// The same for a layer's per-channel QUAN shifts (uint8 each; the block's QUAN operation has them), and their
// bytes in SRAM (0 without them).
DmaTransfer shift_slice(const BlockDramMap& m, int first, int count, std::uint32_t sram_addr);
std::uint32_t shift_slice_bytes(const OperationBlock& b, int count);
// Whether the block's QUAN takes a shift per output channel.
bool per_channel_shifts(const OperationBlock& b);

// A block's stream with no commands yet, one command list per PE of the system.
TaskStream new_stream(const std::string& name, const BlockDramMap& m, const Workers& w);

}  // namespace s2::mapper
