// The SNN paper's multi-PE deployment (Huang et al. 2023, section 3.3 and Figure 8), for a layer one PE's SRAM
// budget cannot hold: one Dominant PE takes the spikes in from DRAM, builds operand A (the stacked layouts'
// shifted spike map, echelon's in Circle Reverse order) and gathers the currents; Subordinate PEs hold the
// weights, split "into several groups with an equal amount of weight values", each computing a partial sum of
// the currents that it writes back into a slot of the Dominant's SRAM. Per batch of steps:
//
//   Dominant      load the spike window (DMA), build operand A (ARM) | Sync | Sync | add the slots (ARM), store
//   Subordinate                                                      | Sync | read A, multiply, accumulate,
//                                                                             store the partial to its slot | Sync
//
// How a Subordinate reads operand A: the MLA of a PE in the Dominant's QPE reads it from the Dominant's SRAM as
// a neighbour operand (the paper's "reading operands from other PEs"); a PE of another QPE, and any PE whose ARM
// needs the values (serial_arm's spikes, echelon_mixed's ARM columns), copies its columns by DMA first (which
// costs it the copy's SRAM; the paper counts no such buffer). What each layout splits:
//   serial_arm                   the pre-neurons, in equal ranges (each Subordinate its rows of every delay)
//   original_mac                 whole delay matrices, as evenly as the Subordinates allow (the paper keeps a
//                                delay's matrix on one PE when one fits); else each matrix in equal runs of rows
//   operand_stack, echelon(_mixed)  the (echelon) weight-delay map in slabs of rows (multiples of 4, so that a
//                                slab's operand-A columns start on a 128-bit word) of equal weight bytes; a slab
//                                holds its pieces of each band's rectangle (and the mixed ARM columns' rows)
// The Subordinates are the fewest whose PEs all fit the budget (the Dominant's slots included), taken in
// snn_pe_order. Batches do not overlap: the Dominant builds the next operand A after every Subordinate has
// read the last (no double buffering).
#pragma once

#include <cstdint>

#include "mapper/snn/layouts.h"

namespace s2::mapper {

// Throws std::invalid_argument when no number of Subordinates on the system fits: the budget cannot hold the
// smallest split, or the system has too few PEs (saying how many it would need, where that is known).
SnnPlan deploy_snn_layer(const SnnLayer& layer, SnnLayout layout, const HwConfig& cfg, std::uint64_t budget_bytes);

}  // namespace s2::mapper
