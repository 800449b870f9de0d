// The distributor's streams for pooling blocks (thesis 4.1: a pooling whose stride differs from its
// window): the ARM pools each piece (a window of some channels) in its PE's SRAM. The window is loaded as a
// convolution's operand B is, so a ConvPlan describes the input; the piece's channels are its "input
// channels" (d0, D). Inside the distributor only.
#pragma once

#include <vector>

#include "conv_plan.h"

namespace s2::mapper {

// The plan of a pooling block: its input, output and DRAM layout (nofuse: with the padded input).
ConvPlan pool_plan(const OperationBlock& b, const BlockSplit& s, const HwConfig& cfg, bool nofuse);
// nofuse_noreuse: PADD_n pads the input into DRAM, then POOL_n pools the padded pieces; fuse_noreuse:
// each piece is padded in its PE and pooled there. Piece n goes to PE n mod 4.
std::vector<TaskStream> pool_streams(const ConvPlan& p, bool nofuse);

}  // namespace s2::mapper
