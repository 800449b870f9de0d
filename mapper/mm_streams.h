// The distributor's streams for matrix multiplication blocks (batch 1: A is the input vector, H_A = 1;
// thesis 4.3): the weight's pieces in DRAM one after the other, fuse_noreuse and nofuse_noreuse (an MM
// block has no data reuse, thesis 4.3.3). Inside the distributor only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dram_layout.h"
#include "model/task_stream.h"
#include "workers.h"

namespace s2::mapper {

struct MmPlan {
  const OperationBlock* b = nullptr;
  const BlockSplit* s = nullptr;
  HwConfig cfg;
  int W_B = 0, H_B = 0, shift = 0, saturate_high = 127;
  std::vector<std::uint64_t> piece_offset;  // packed weight pieces, by (iw, ih) = iw * H parts + ih
  std::uint32_t a_base = 0, b_base = 0, o_base = 0, acc_base = 0;
  std::uint32_t bias_base = 0;  // a biased layer: a column part's slice of the bias (int32 per column)
  std::uint32_t shift_base = 0;  // per-column QUAN shifts: a column part's slice of them (uint8 per column)
  BlockDramMap map;
  std::string core, fce, acti, quan;
  bool relu = true;
  Workers workers;
};

// The plan of an MM block: its SRAM and DRAM layouts (nofuse: with the partial and summed int32 results
// in DRAM). Throws std::invalid_argument if a piece, its input and two result areas do not fit the SRAM.
MmPlan mm_plan(const OperationBlock& b, const BlockSplit& s, const HwConfig& cfg, bool nofuse);
// fuse_noreuse: PE n takes the weight's column parts n, n+4, ...; for each it runs the H_B pieces and
// adds their partial sums (FCE) in SRAM, then ReLU, quantization and one store.
TaskStream mm_fuse(const MmPlan& p);
// nofuse_noreuse: FC_n stores every piece's partial sums; FCE_n adds them per column part; ReLU and
// quantization then run over the sums.
std::vector<TaskStream> mm_nofuse(const MmPlan& p);

}  // namespace s2::mapper
