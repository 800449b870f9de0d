// What a DMA asks the DRAM for (rtl_stubs/dma.sv, s2_pkg dma_request_t): `bytes` contiguous DRAM bytes
// that sit in SRAM as rows of `row_bytes` every `sram_row_stride` bytes. A transfer (task_stream.h
// DmaTransfer) is one request per row, or, for a load, one per plane when the plane's rows are contiguous
// in DRAM (a burst). The data moves as one packet per SRAM line of each row (a beat). The model's DMA, the RTL's
// C++ DRAM and the RTL's DMA all cut transfers and beats this way.
#pragma once

#include <algorithm>
#include <cstdint>

#include "task_stream.h"

namespace s2 {

struct DmaRequest {
  std::uint64_t dram_addr = 0, bytes = 0;
  std::uint64_t sram_addr = 0, sram_row_stride = 0, row_bytes = 0;
  std::uint64_t rows() const { return row_bytes ? bytes / row_bytes : 0; }
};

// Calls f(request) for every request of `t`, in the order the DMA sends them.
template <typename F>
void for_each_dma_request(const DmaTransfer& t, bool load, F f) {
  const bool burst = load && t.dram_row_stride == t.row_bytes;
  for (std::uint64_t plane = 0; plane < t.planes; ++plane) {
    const std::uint64_t dram = t.dram_addr + plane * t.dram_plane_stride;
    const std::uint64_t sram = t.sram_addr + plane * std::uint64_t(t.sram_plane_stride);
    if (burst) {
      f(DmaRequest{dram, std::uint64_t(t.rows) * t.row_bytes, sram, t.sram_row_stride, t.row_bytes});
      continue;
    }
    for (std::uint64_t r = 0; r < t.rows; ++r)
      f(DmaRequest{dram + r * t.dram_row_stride, t.row_bytes, sram + r * t.sram_row_stride, t.sram_row_stride, t.row_bytes});
  }
}

// One packet of a request's data: SRAM bytes [sram_lo, sram_hi) of the line at `line_addr`, which are
// the request's bytes from `offset` on.
struct DmaBeat {
  std::uint64_t line_addr = 0, sram_lo = 0, sram_hi = 0, offset = 0;
};

// Calls f(beat) for every beat of `q`, in order (row by row, line by line).
template <typename F>
void for_each_dma_beat(const DmaRequest& q, F f) {
  for (std::uint64_t r = 0; r < q.rows(); ++r) {
    const std::uint64_t s = q.sram_addr + r * q.sram_row_stride, e = s + q.row_bytes;
    for (std::uint64_t line = s / 16 * 16; line < e; line += 16) {
      const std::uint64_t lo = std::max(line, s), hi = std::min(line + 16, e);
      f(DmaBeat{line, lo, hi, r * q.row_bytes + (lo - s)});
    }
  }
}

}  // namespace s2
