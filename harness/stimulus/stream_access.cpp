#include "harness/stimulus/stream_access.h"

#include "model/pe/arm_ops.h"
#include "model/sram_layout.h"

namespace s2::stream_access {

void strided(std::vector<Span>& out, MemoryRef mem, std::uint64_t base, std::uint64_t row_stride, std::uint64_t plane_stride,
             const DmaTransfer& t) {
  for (std::uint32_t z = 0; z < t.planes; ++z)
    for (std::uint32_t r = 0; r < t.rows; ++r) {
      const std::uint64_t lo = base + z * plane_stride + r * row_stride;
      out.push_back({mem, lo, lo + t.row_bytes});
    }
}

int operand_a_pe(const StreamCommand& c, int pe) { return pe / kPesPerQpe * kPesPerQpe + c.mla.a_source_pe(pe % kPesPerQpe); }

std::vector<Span> mla_padding_lanes(const StreamCommand& c, int pe, const HwConfig& cfg) {
  const SramLayout l = sram_layout(c.mla, cfg);
  const bool conv = c.mla.op == Op::Conv;
  const std::uint64_t width = static_cast<std::uint64_t>(conv ? c.mla.conv.Wo() : c.mla.mm.W_B);
  const std::uint64_t rows = l.o_bytes / (4ull * l.o_row_stride);
  std::vector<Span> v;
  if (width % 4 == 0) return v;
  for (std::uint64_t r = 0; r < rows; ++r) {
    const std::uint64_t row = c.o_base + 4 * r * l.o_row_stride;
    v.push_back({sram_of(pe), row + 4 * width, row + 4 * align_up(width, 4)});
  }
  return v;
}

std::vector<Span> value_reads(const StreamCommand& c, int pe, const HwConfig& cfg) {
  std::vector<Span> v;
  switch (c.kind) {
    case CommandKind::DmaLoad:
      strided(v, c.dma.remote, c.dma.dram_addr, c.dma.dram_row_stride, c.dma.dram_plane_stride, c.dma);
      break;
    case CommandKind::DmaStore:
      strided(v, sram_of(pe), c.dma.sram_addr, c.dma.sram_row_stride, c.dma.sram_plane_stride, c.dma);
      break;
    case CommandKind::Mla: {
      const SramLayout l = sram_layout(c.mla, cfg);
      v.push_back({sram_of(operand_a_pe(c, pe)), c.a_base, std::uint64_t(c.a_base) + l.a_bytes});
      const bool conv = c.mla.op == Op::Conv;
      const std::uint64_t planes = conv ? static_cast<std::uint64_t>(c.mla.conv.D) : 1;
      const std::uint64_t rows = static_cast<std::uint64_t>(conv ? c.mla.conv.Hi : c.mla.mm.H_B);
      const std::uint64_t bytes = static_cast<std::uint64_t>(conv ? c.mla.conv.Wi : c.mla.mm.W_B);
      for (std::uint64_t d = 0; d < planes; ++d)
        for (std::uint64_t y = 0; y < rows; ++y) {
          const std::uint64_t lo = c.b_base + d * l.b_plane_stride + y * l.b_row_stride;
          v.push_back({sram_of(pe), lo, lo + bytes});
        }
      break;
    }
    case CommandKind::Arm: {
      const ArmCommand& a = c.arm;
      if (a.kind == ArmOpKind::Pad) break;
      if (a.kind == ArmOpKind::MacInt8 || a.kind == ArmOpKind::PermuteWords || a.kind == ArmOpKind::Copy8 ||
          !snn_op_extents(a).empty()) {
        for (const Span& s : snn_arm_spans(a, pe)) v.push_back(s);  // every byte they span (bounds)
        break;
      }
      const bool wide = a.kind == ArmOpKind::Relu32 || a.kind == ArmOpKind::Quantize || a.kind == ArmOpKind::AddInt32 ||
                        a.kind == ArmOpKind::QuantizeMaxPool || a.kind == ArmOpKind::QuantizeAdd;
      std::uint64_t width = a.width, height = a.height;
      if (a.kind == ArmOpKind::QuantizeMaxPool) {  // the sums its windows read
        const std::uint64_t st = std::uint64_t(a.pool_stride()), w = std::uint64_t(a.window), h = std::uint64_t(a.window_height());
        if (st == 0 || w > a.width || h > a.height) break;
        width = (a.width - w) / st * st + w, height = (a.height - h) / st * st + h;
      }
      const std::uint64_t row = wide ? 4ull * ((width - 1ull) * a.col_step + 1) : width;
      const std::uint64_t sp = a.source_plane_stride(), dp = a.destination_plane_stride(a.height);
      for (std::uint64_t d = 0; d < a.planes; ++d)
        for (std::uint64_t y = 0; y < height; ++y) {
          const std::uint64_t lo = a.src + d * sp + y * a.src_row_stride;
          v.push_back({sram_of(pe), lo, lo + row});
          if (a.kind == ArmOpKind::AddInt8 || a.kind == ArmOpKind::AddInt32) {
            const std::uint64_t dl = a.dst + d * dp + y * a.dst_row_stride;
            v.push_back({sram_of(pe), dl, dl + row});
          }
          if (a.kind == ArmOpKind::QuantizeAdd) {  // the addend, laid out as the destination
            const std::uint64_t al = a.addend + d * dp + y * a.dst_row_stride;
            v.push_back({sram_of(pe), al, al + a.width});
          }
        }
      break;
    }
    default:
      break;
  }
  return v;
}

void track_unspecified(const StreamCommand& c, int pe, const HwConfig& cfg, ByteRanges& u) {
  if (c.kind == CommandKind::Mla) {
    const SramLayout l = sram_layout(c.mla, cfg);
    u.remove(c.o_base, std::uint64_t(c.o_base) + l.o_bytes);
    for (const Span& lane : mla_padding_lanes(c, pe, cfg)) u.add(lane.lo, lane.hi);
  } else if (c.kind == CommandKind::DmaLoad) {
    std::vector<Span> rows;
    strided(rows, sram_of(pe), c.dma.sram_addr, c.dma.sram_row_stride, c.dma.sram_plane_stride, c.dma);
    for (const Span& r : rows) u.remove(r.lo, r.hi);
  } else if (c.kind == CommandKind::Arm && (c.arm.kind == ArmOpKind::Quantize || c.arm.kind == ArmOpKind::QuantizeMaxPool ||
                                             c.arm.kind == ArmOpKind::QuantizeAdd)) {
    const ArmCommand& a = c.arm;
    std::uint64_t rows = a.height, width = a.width;
    if (a.kind == ArmOpKind::QuantizeMaxPool) {  // its outputs
      const std::uint64_t st = std::uint64_t(a.pool_stride()), w = std::uint64_t(a.window), h = std::uint64_t(a.window_height());
      if (st == 0 || w > a.width || h > a.height) return;
      rows = (a.height - h) / st + 1, width = (a.width - w) / st + 1;
    }
    const std::uint64_t dp = a.destination_plane_stride(rows);
    for (std::uint64_t d = 0; d < a.planes; ++d)
      for (std::uint64_t y = 0; y < rows; ++y) {
        const std::uint64_t lo = a.dst + d * dp + y * a.dst_row_stride;
        u.remove(lo, lo + width);
      }
  }
}

std::vector<Span> snn_arm_spans(const ArmCommand& a, int pe) {
  std::vector<Span> v;
  for (const SramExtent& e : snn_op_extents(a)) v.push_back({sram_of(pe), e.lo, e.hi});
  return v;
}

std::vector<Span> arm_spans(const ArmCommand& a, int pe) {
  if (!snn_op_extents(a).empty() || a.kind == ArmOpKind::MacInt8 || a.kind == ArmOpKind::PermuteWords || a.kind == ArmOpKind::Copy8)
    return snn_arm_spans(a, pe);
  const std::uint64_t sp = a.source_plane_stride();
  std::vector<Span> v{{sram_of(pe), a.src, a.src + a.planes * sp}};
  const bool in_place = a.kind == ArmOpKind::Pad || a.kind == ArmOpKind::Relu32 || a.kind == ArmOpKind::Relu8;
  if (!in_place) {
    std::uint64_t rows = a.height;
    if (a.kind == ArmOpKind::MaxPool8 || a.kind == ArmOpKind::AvgPool8 || a.kind == ArmOpKind::QuantizeMaxPool)
      rows = (a.height - static_cast<std::uint32_t>(a.window)) / static_cast<std::uint32_t>(a.pool_stride()) + 1;
    v.push_back({sram_of(pe), a.dst, a.dst + a.planes * a.destination_plane_stride(rows)});
  }
  if (a.kind == ArmOpKind::QuantizeAdd) v.push_back({sram_of(pe), a.addend, a.addend + a.planes * a.destination_plane_stride(a.height)});
  return v;
}

Access access_of(const StreamCommand& c, int pe, const HwConfig& cfg) {
  Access a;
  const MemoryRef own = sram_of(pe);
  switch (c.kind) {
    case CommandKind::DmaLoad:
      strided(a.reads, c.dma.remote, c.dma.dram_addr, c.dma.dram_row_stride, c.dma.dram_plane_stride, c.dma);
      strided(a.writes, own, c.dma.sram_addr, c.dma.sram_row_stride, c.dma.sram_plane_stride, c.dma);
      break;
    case CommandKind::DmaStore:
      strided(a.reads, own, c.dma.sram_addr, c.dma.sram_row_stride, c.dma.sram_plane_stride, c.dma);
      strided(a.writes, c.dma.remote, c.dma.dram_addr, c.dma.dram_row_stride, c.dma.dram_plane_stride, c.dma);
      break;
    case CommandKind::Mla: {
      const SramLayout l = sram_layout(c.mla, cfg);
      a.reads.push_back({sram_of(operand_a_pe(c, pe)), c.a_base, std::uint64_t(c.a_base) + l.a_bytes});
      a.reads.push_back({own, c.b_base, std::uint64_t(c.b_base) + l.b_bytes});
      a.writes.push_back({own, c.o_base, std::uint64_t(c.o_base) + l.o_bytes});
      break;
    }
    case CommandKind::Arm:
      a.writes = arm_spans(c.arm, pe);  // read and written
      break;
    default:
      break;
  }
  return a;
}

}  // namespace s2::stream_access
