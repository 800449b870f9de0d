// The QPE-DRAM distributor's strategies for convolution blocks (thesis 4.3, Appendix C): nofuse_noreuse,
// fuse_noreuse and fuse_reuse (Algorithm 1), and fuse_reuse's choice of the operand it keeps (equations
// 4.2 / 4.3). The first two run on the chip as they are (thesis 4.4); the chip's fuse_reuse is
// chip_reuse.h. Inside the distributor only.
#pragma once

#include <vector>

#include "conv_plan.h"
#include "distributor.h"

namespace s2::mapper {

// nofuse_noreuse: PADD_n (pad the input into DRAM), then CONV_n (raw int32 results into DRAM), then
// each element-wise operation as a stream of its own, every piece loaded and stored again: ReLU on the
// raw results in place, the quantization (with the fused pooling) into the output, the shortcut's
// addition and a ReLU after it on the output in place.
std::vector<TaskStream> conv_nofuse(const ConvPlan& p);
// fuse_noreuse: piece n to PE n mod 4, every PE on its own.
TaskStream conv_fuse_noreuse(const ConvPlan& p);
// fuse_reuse (Appendix C, Algorithm 1, generalised to both reuse directions): rounds of up to four
// fmap parts and four filter parts. The reused operand is loaded once per round of the outer loop, the
// other once per round pair. Every PE holds an fmap part (operand B must be in its own SRAM) and filter
// part j of the round sits on PE j; in run k PE i computes its fmap part with the filter part of PE
// (i + k) mod 4, read as operand A over the NoC (every PE reads a different PE: one shift per run). With
// fewer than four fmap parts in a round Algorithm 1 fills the PEs with copies: with 2 parts PE i holds part
// i mod 2 (2 runs), with 1 part every PE holds it (1 run), with 3 parts PE 3 is loaded with part k before
// run k (3 runs). The host waits for every PE after each run (thesis: "wait for responses until all PEs
// finish").
TaskStream conv_fuse_reuse(const ConvPlan& p, Reuse reuse);
// fuse_reuse on QPE-DRAM: which operand stays in the PEs, by equations 4.2 / 4.3 (into r: the bytes each
// moves and the reuse that moves fewer).
void choose_reuse(const ConvPlan& p, BlockStreams& r);

}  // namespace s2::mapper
