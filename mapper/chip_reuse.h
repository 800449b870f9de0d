// fuse_reuse on the chip (thesis 4.4, Appendices D, E, F): the storage QPEs keep the results, the
// computation QPEs (the prototype's 32, 128 PEs) keep the input parts, and the filter parts migrate
// through the NoC.
//
// The computation QPEs form a ring (ChipShape::double_qpe_blocks in order; each QPE's successor is its
// neighbour). A round holds up to 4 x (ring length) input parts (the prototype's 128) and as many filter parts:
//  - Filters: the G groups of 4 filter parts (G a power of two dividing the ring's length) sit on the ring
//    in turn, group a mod G on ring QPE a, part 4g + z on its PE z: the positions below G load theirs
//    from their double QPE block's DRAM, the others get a copy from the first (the "filling process",
//    Appendix E).
//  - Inputs: each input part sits on m PEs (m a power of two, as many copies as the computation PEs allow, at
//    most G), the copies S = G/m ring QPEs apart, so that in S steps the copies see disjoint halves,
//    quarters... of the G groups (Appendix D; the first copy loads its part from its DRAM, the others get
//    it from the first through the NoC).
//  - Step t (of S): every PE computes its input part with the 4 filter parts of its QPE, one after the
//    other, reading them as operand A from its QPE's PEs (operand-A source shift 0..3: "inside QPE" reuse),
//    and stores each result into the storage QPEs (or, if the block's output does not fit there, into its
//    DRAM); meanwhile (async) it pushes its filter part into the other filter buffer of the same PE of the
//    next ring QPE (the migration "inside QPE block" and on between QPE blocks and double QPE blocks); then
// Inside the distributor only.
#pragma once

#include <string>

#include "conv_plan.h"
#include "distributor.h"

namespace s2::mapper {

// Why the chip's reuse distribution cannot run the block, or "".
std::string chip_reuse_refusal(const BlockSplit& s, const HwConfig& cfg);
// The block's one stream; its input and output in DRAM or, as `where` says, in the storage QPEs (into
// bs.input_storage, bs.output_storage). Throws std::invalid_argument if the SRAM has no room for a second
// filter buffer or the maps do not fit the storage PEs.
TaskStream conv_fuse_reuse_chip(const ConvPlan& p, BlockStreams& bs, const BlockResidency& where);

}  // namespace s2::mapper
