// What a DMA asks the DRAM for (rtl_stubs/dma.sv, s2_pkg dma_request_t): `rows` rows of `row_bytes` bytes,
// `dram_row_stride` apart in DRAM from `dram_addr` and `sram_row_stride` apart in SRAM from `sram_addr`. A
// load asks for a plane of its transfer (task_stream.h DmaTransfer) at once, a store for a row. The data
// moves as one packet per SRAM line (a beat), the lines a request's rows share in one packet. The model's
// DMA, the RTL's C++ DRAM and the RTL's DMA all cut transfers and beats this way.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "model/dram/dram_timing.h"
#include "model/task_stream.h"

namespace s2 {

struct DmaRequest {
  std::uint64_t dram_addr = 0, dram_row_stride = 0, rows = 1, row_bytes = 0;
  std::uint64_t sram_addr = 0, sram_row_stride = 0;
  std::uint64_t bytes() const { return rows * row_bytes; }
  DramRange dram() const { return {dram_addr, dram_row_stride, rows, row_bytes}; }
  std::uint64_t sram_end() const { return rows ? sram_addr + (rows - 1) * sram_row_stride + row_bytes : sram_addr; }
};

// A load asks for its whole transfer at once (rtl_stubs/s2_pkg.svh PKT_DRAM_RD + PKT_DRAM_RDX): the first
// plane as a request, and how many planes follow it how far apart. The DRAM serves them back to back.
struct DmaLoadPlanes {
  std::uint64_t planes = 1, dram_plane_stride = 0, sram_plane_stride = 0;
  DmaRequest plane(const DmaRequest& first, std::uint64_t k) const {
    DmaRequest q = first;
    q.dram_addr += k * dram_plane_stride;
    q.sram_addr += k * sram_plane_stride;
    return q;
  }
};

// Calls f(request) for every request of `t` (a load: every plane of its one request), in order.
template <typename F>
void for_each_dma_request(const DmaTransfer& t, bool load, F f) {
  const DmaLoadPlanes planes{t.planes, t.dram_plane_stride, t.sram_plane_stride};
  const DmaRequest first{t.dram_addr, t.dram_row_stride, t.rows, t.row_bytes, t.sram_addr, t.sram_row_stride};
  for (std::uint64_t plane = 0; plane < t.planes; ++plane) {
    if (load) {
      f(planes.plane(first, plane));
      continue;
    }
    const std::uint64_t dram = t.dram_addr + plane * t.dram_plane_stride;
    const std::uint64_t sram = t.sram_addr + plane * std::uint64_t(t.sram_plane_stride);
    for (std::uint64_t r = 0; r < t.rows; ++r)
      f(DmaRequest{dram + r * t.dram_row_stride, t.row_bytes, 1, t.row_bytes, sram + r * t.sram_row_stride,
                   t.sram_row_stride});
  }
}

// One packet of a request's data: the line at `line_addr`, holding `count` parts of the request's rows; part
// i is SRAM bytes [lo, hi) of the line, the request's bytes from `offset` on (within one row).
struct DmaBeat {
  struct Part {
    std::uint64_t lo = 0, hi = 0, offset = 0;
  };
  std::uint64_t line_addr = 0;
  std::array<Part, 16> parts{};
  int count = 0;
  // the request's offset of the last byte the beat carries (the beat leaves the DRAM once that is read)
  std::uint64_t last_byte() const {
    const Part& p = parts[static_cast<std::size_t>(count - 1)];
    return p.offset + (p.hi - p.lo) - 1;
  }
};

// Calls f(beat) for every beat of `q`, in order (rows upwards in SRAM, lines upwards in each row).
template <typename F>
void for_each_dma_beat(const DmaRequest& q, F f) {
  DmaBeat b;
  for (std::uint64_t r = 0; r < q.rows; ++r) {
    const std::uint64_t s = q.sram_addr + r * q.sram_row_stride, e = s + q.row_bytes;
    for (std::uint64_t line = s / 16 * 16; line < e; line += 16) {
      if (b.count && (b.line_addr != line || b.count == 16)) {
        f(static_cast<const DmaBeat&>(b));
        b.count = 0;
      }
      b.line_addr = line;
      const std::uint64_t lo = std::max(line, s), hi = std::min(line + 16, e);
      b.parts[static_cast<std::size_t>(b.count++)] = {lo, hi, r * q.row_bytes + (lo - s)};
    }
  }
  if (b.count) f(static_cast<const DmaBeat&>(b));
}

// A row moved between two PEs' SRAMs (rtl_stubs/dma_realigner.sv): `bytes` bytes starting at byte `src_off`
// of the first line they are read in and at byte `dst_off` of the first line they are written in.
// Destination line k is formed from source lines k - lag and k - lag + 1 (lag = 1 when src_off < dst_off).
struct LineRealignment {
  std::uint64_t src_off = 0, dst_off = 0, bytes = 0;
  std::uint64_t src_lines() const { return (src_off + bytes + 15) / 16; }
  std::uint64_t dst_lines() const { return (dst_off + bytes + 15) / 16; }
  // the last source line destination line k needs
  std::uint64_t last_needed(std::uint64_t k) const {
    const std::uint64_t shift = (src_off + 16 - dst_off) % 16, lag = src_off < dst_off ? 1 : 0;
    const std::uint64_t n = k + (shift != 0 ? 1 : 0) - lag;
    return std::min(n, src_lines() - 1);
  }
};

}  // namespace s2
