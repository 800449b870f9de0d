// The PEs that work on a block, the DRAM each reaches, and how a stream's pieces are dealt to them.
// Inside the distributor only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "model/hw_config.h"
#include "model/task_stream.h"

namespace s2::mapper {

// The PEs that work on a block and the DRAM each reaches (the first two strategies; thesis 4.3, 4.4: on
// SpiNNaker2 they are "the same as the first two for QPE-DRAM"): every PE of the system, in groups by the
// DRAM nearest their QPE. Each DRAM holds a copy of the block's input and weights. A block's parts are
// dealt to the groups in contiguous runs (the thesis gives a double QPE block whole rows of the split
// feature map), and within a group round robin; every stream of a block deals the same parts to the same
// group, so what one stream stores another finds in the same DRAM. QPE-DRAM: one group, PEs 0-3.
struct Workers {
  std::vector<std::vector<int>> pes;  // per group, chip PE indices
  std::vector<int> dram;              // per group
  int chip_pes = kPesPerQpe;
};

// A block with a worker count (LayerSpec::workers, e.g. the OctopuScheduler paper's 8, 4 and 1 PEs) has
// only that many: the PEs of the QPEs nearest a DRAM first (fewest hops, then the lowest index), in QPE
// order, so that a small layer sits next to its weights.
Workers workers_of(const HwConfig& cfg, int limit = 0);

// Deals pieces to PEs for one stream: next(part) gives the PE of the next piece of part `part` (of
// `parts`): its group's next PE in turn.
class PePicker {
 public:
  PePicker(const Workers& w, int parts) : w_(&w), parts_(std::max(parts, 1)), next_(w.pes.size(), 0) {}
  int group(int part) const {
    return static_cast<int>(std::int64_t(part) * static_cast<std::int64_t>(w_->pes.size()) / parts_);
  }
  int next(int part) {
    const std::size_t g = static_cast<std::size_t>(group(part));
    const std::vector<int>& pes = w_->pes[g];
    return pes[next_[g]++ % pes.size()];
  }

 private:
  const Workers* w_;
  int parts_;
  std::vector<std::size_t> next_;
};

// Points PE `pe`'s DRAM transfers in `st` at DRAM `dram` (the distributor writes them for DRAM 0).
void use_dram(TaskStream& st, int pe, int dram);
// Points every PE's DRAM transfers at the DRAM of its group.
void use_group_drams(TaskStream& st, const Workers& w);

}  // namespace s2::mapper
