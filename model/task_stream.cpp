#include "model/task_stream.h"

#include <stdexcept>

#include "model/sram_layout.h"

namespace s2 {

const char* to_string(ArmOpKind k) {
  switch (k) {
    case ArmOpKind::Pad: return "pad";
    case ArmOpKind::Relu32: return "relu32";
    case ArmOpKind::Quantize: return "quantize";
    case ArmOpKind::MaxPool8: return "maxpool8";
    case ArmOpKind::AddInt32: return "add32";
    case ArmOpKind::AddInt8: return "add8";
    case ArmOpKind::Relu8: return "relu8";
    case ArmOpKind::AvgPool8: return "avgpool8";
  }
  return "?";
}

const char* to_string(CommandKind k) {
  switch (k) {
    case CommandKind::DmaLoad: return "dma_load";
    case CommandKind::DmaStore: return "dma_store";
    case CommandKind::Mla: return "mla";
    case CommandKind::Arm: return "arm";
    case CommandKind::Sync: return "sync";
    case CommandKind::WaitDma: return "wait_dma";
    case CommandKind::WaitMla: return "wait_mla";
  }
  return "?";
}

namespace {
// The last byte a strided region touches, plus one.
std::uint64_t region_end(std::uint64_t base, std::uint64_t row_stride, std::uint64_t plane_stride,
                         std::uint64_t row_bytes, std::uint64_t rows, std::uint64_t planes) {
  if (row_bytes == 0 || rows == 0 || planes == 0) return base;
  return base + (planes - 1) * plane_stride + (rows - 1) * row_stride + row_bytes;
}
}  // namespace

void check_stream(const TaskStream& s, std::uint32_t sram_bytes) {
  std::size_t syncs = 0;
  for (int p = 0; p < kPesPerQpe; ++p) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < s.pe[p].size(); ++i) {
      const StreamCommand& c = s.pe[p][i];
      auto fail = [&](const std::string& what) {
        throw std::invalid_argument("stream " + s.name + ", PE " + std::to_string(p) + ", command " + std::to_string(i) +
                                    " (" + to_string(c.kind) + " of " + c.operation + "): " + what);
      };
      if (c.kind == CommandKind::Sync) ++n;
      if (c.kind == CommandKind::DmaLoad || c.kind == CommandKind::DmaStore) {
        const DmaTransfer& d = c.dma;
        if (region_end(d.dram_addr, d.dram_row_stride, d.dram_plane_stride, d.row_bytes, d.rows, d.planes) > s.dram_bytes)
          fail("DRAM range beyond the stream's " + std::to_string(s.dram_bytes) + " bytes");
        if (region_end(d.sram_addr, d.sram_row_stride, d.sram_plane_stride, d.row_bytes, d.rows, d.planes) > sram_bytes)
          fail("SRAM range beyond " + std::to_string(sram_bytes) + " bytes");
      }
      if (c.kind == CommandKind::Mla) {
        // the MLA's layout is fixed by its task (sram_layout); checked against the SRAM by the backend
        if (c.mla.op == Op::Conv && (c.mla.conv.Wo() < 1 || c.mla.conv.Ho() < 1)) fail("convolution with no output");
      }
    }
    if (p == 0) syncs = n;
    else if (n != syncs)
      throw std::invalid_argument("stream " + s.name + ": PE " + std::to_string(p) + " has " + std::to_string(n) +
                                  " sync commands, PE 0 has " + std::to_string(syncs));
  }
}

}  // namespace s2
