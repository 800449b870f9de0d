// QPE-DRAM on both backends (thesis 3.3): directed DMA, MLA, ARM and Sync streams, and the distributor's
// streams for a small network, run on the model and on the Verilated RTL (its DRAM port served by the C++
// DRAM, its ARM port by the C++ ARM). The DRAM contents must come out byte for byte the same, and the clocks
// the same or within the stated bound.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "mapper/distributor.h"
#include "mapper/network.h"
#include "mapper/parser.h"
#include "mapper/splitter.h"
#include "model/pe_registers.h"

using namespace s2;
using namespace s2::mapper;

namespace {

struct BothResults {
  StreamResult model, rtl;
  std::vector<std::uint8_t> model_dram, rtl_dram;
};

BothResults run_both(const TaskStream& s, const std::vector<std::uint8_t>& image, StreamRunOptions opt = {}) {
  const HwConfig cfg;
  BothResults r;
  r.model_dram = r.rtl_dram = image;
  r.model = make_model_stream_backend(cfg)->run(s, r.model_dram, opt);
  opt.watchdog_cycles = 1000000;
  r.rtl = make_rtl_stream_backend(cfg)->run(s, r.rtl_dram, opt);
  return r;
}

std::vector<std::uint8_t> pattern(std::size_t n, unsigned seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>((i * 131 + seed * 17 + (i >> 7)) & 0xff);
  return v;
}

StreamCommand dma(CommandKind k, std::uint64_t dram, std::uint32_t sram, std::uint32_t row_bytes, std::uint32_t rows = 1,
                  std::uint64_t dram_stride = 0, std::uint32_t sram_stride = 0) {
  StreamCommand c;
  c.kind = k;
  c.operation = "COPY";
  c.dma.dram_addr = dram;
  c.dma.sram_addr = sram;
  c.dma.row_bytes = row_bytes;
  c.dma.rows = rows;
  c.dma.dram_row_stride = dram_stride;
  c.dma.sram_row_stride = sram_stride;
  return c;
}

}  // namespace

TEST(QpeDramCosim, SingleRowsCostTheSameOnBothBackends) {
  for (std::uint32_t bytes : {16u, 160u, 161u, 7u}) {
    for (std::uint32_t misalign : {0u, 5u}) {
      TaskStream s;
      s.name = "copy";
      s.dram_bytes = 8192;
      s.pe[0].push_back(dma(CommandKind::DmaLoad, 1000 + misalign, 256 + 3 * misalign, bytes));
      s.pe[0].push_back(dma(CommandKind::DmaStore, 4096 + 2 * misalign, 256 + 3 * misalign, bytes));
      const BothResults r = run_both(s, pattern(8192, bytes));
      SCOPED_TRACE(std::to_string(bytes) + " bytes, misaligned by " + std::to_string(misalign));
      ASSERT_TRUE(r.rtl.completed) << r.rtl.stalled;
      EXPECT_EQ(r.model.cycles, r.rtl.cycles);
      EXPECT_EQ(r.model.dram_ops, r.rtl.dram_ops);
      EXPECT_TRUE(r.model_dram == r.rtl_dram);
      std::vector<std::uint8_t> want = pattern(8192, bytes);
      std::copy(want.begin() + 1000 + misalign, want.begin() + 1000 + misalign + bytes, want.begin() + 4096 + 2 * misalign);
      EXPECT_TRUE(r.rtl_dram == want);
    }
  }
}
