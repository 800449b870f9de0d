// The distributor's streams for element-wise blocks (a network's Table, Affine, Add, Mul and ChannelMul
// operations on the ARM; docs/real_networks.md, "Element-wise operations"): each piece (channels, rows and
// columns of the map, split as a pooling block is) is loaded into its PE's SRAM with its second operand and its
// table or parameters, changed in place by one ARM pass, and stored. Both strategies without reuse give the same
// stream (the block is one operation). Inside the distributor only.
#pragma once

#include <vector>

#include "conv_plan.h"

namespace s2::mapper {

// The DRAM layout of an element-wise block: input (the first map, [D][H][W]), shortcut (the second map: of the
// same shape, or a ChannelMul's [D] factors), weights (a Table's 256 bytes, or 256 per channel; an Affine's int32
// m and o per channel, side by side), output.
ConvPlan elementwise_plan(const OperationBlock& b, const BlockSplit& s, const HwConfig& cfg);
std::vector<TaskStream> elementwise_streams(const ConvPlan& p, bool nofuse);
// The ARM operation that computes an element-wise operation (also the chip's limits' ARM term, block_bound.h).
ArmOpKind elementwise_arm_op(EltOp op);

}  // namespace s2::mapper
