#include "model/task_stream.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/pe/arm_ops.h"
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
    case ArmOpKind::MacInt8: return "mac8";
    case ArmOpKind::PermuteWords: return "permute32";
    case ArmOpKind::Copy8: return "copy8";
    case ArmOpKind::Table8: return "table8";
    case ArmOpKind::Affine8: return "affine8";
    case ArmOpKind::AddScaled8: return "addscaled8";
    case ArmOpKind::Mul8: return "mul8";
    case ArmOpKind::ChannelMul8: return "channelmul8";
    case ArmOpKind::QuantizeMaxPool: return "quantize_maxpool";
    case ArmOpKind::QuantizeAdd: return "quantize_add8";
  }
  return "?";
}

const char* to_string(PeTime t) {
  switch (t) {
    case PeTime::Mla: return "mla";
    case PeTime::Dram: return "dram";
    case PeTime::Noc: return "noc";
    case PeTime::Sync: return "sync";
    case PeTime::Arm: return "arm";
    case PeTime::kCount: break;
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

std::string to_string(const MemoryRef& m) {
  if (m.kind == MemoryRef::Kind::Dram) return "DRAM " + std::to_string(m.index);
  return "SRAM of PE " + std::to_string(m.index) + " (QPE " + std::to_string(m.index / kPesPerQpe) + ", PE " +
         std::to_string(m.index % kPesPerQpe) + ")";
}

std::vector<int> TaskStream::sync_group_members(int g) const {
  if (sync_groups.empty()) {
    std::vector<int> all(pe.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    return g == 0 ? all : std::vector<int>{};
  }
  return g >= 0 && static_cast<std::size_t>(g) < sync_groups.size() ? sync_groups[static_cast<std::size_t>(g)]
                                                                    : std::vector<int>{};
}

StreamLimits stream_limits(const HwConfig& cfg) {
  StreamLimits l;
  l.pes = cfg.chip.qpes() * kPesPerQpe;
  l.drams = static_cast<int>(cfg.chip.drams.size());
  l.sram_bytes = static_cast<std::uint32_t>(cfg.sram_bytes);
  for (QpeCoord c : cfg.chip.routers_without_pes) l.qpes_without_pes.push_back(cfg.chip.qpe_index(c));
  return l;
}

std::uint64_t stream_memory_bytes(const TaskStream& s, const StreamLimits& lim) {
  std::uint64_t commands = 0;
  for (const std::vector<StreamCommand>& pe : s.pe) commands += pe.size();
  // saturating: a dram_bytes near 2^64 must not wrap to a small estimate
  const long double bytes = static_cast<long double>(s.dram_bytes) * lim.drams +
                            static_cast<long double>(lim.sram_bytes) * lim.pes +
                            static_cast<long double>(commands) * sizeof(StreamCommand);
  return bytes >= 0x1p64L ? ~0ull : static_cast<std::uint64_t>(bytes);
}

void check_stream(const TaskStream& s, const StreamLimits& lim) {
  if (const std::uint64_t need = stream_memory_bytes(s, lim); need > kMaxStreamMemoryBytes)
    throw std::invalid_argument(
        "stream " + s.name + ": a run would need about " + std::to_string(need >> 20) + " MiB (" + std::to_string(lim.drams) +
        " DRAM image(s) of " + std::to_string(s.dram_bytes) + " bytes, " + std::to_string(lim.pes) +
        " SRAMs), more than the " + std::to_string(kMaxStreamMemoryBytes >> 20) + " MiB a backend may take");
  auto where = [&](std::size_t p, std::size_t i) {
    const StreamCommand& c = s.pe[p][i];
    return "stream " + s.name + ", PE " + std::to_string(p) + ", command " + std::to_string(i) + " (" + to_string(c.kind) +
           " of " + c.operation + ")";
  };
  if (s.pe.size() > static_cast<std::size_t>(lim.pes))
    throw std::invalid_argument("stream " + s.name + ": " + std::to_string(s.pe.size()) + " PEs, the system has " +
                                std::to_string(lim.pes));
  const std::size_t groups = s.sync_groups.empty() ? 1 : s.sync_groups.size();
  std::vector<std::vector<char>> member(groups, std::vector<char>(s.pe.size(), 0));
  for (std::size_t g = 0; g < groups; ++g)
    for (int m : s.sync_group_members(static_cast<int>(g))) {
      if (m < 0 || static_cast<std::size_t>(m) >= s.pe.size())
        throw std::invalid_argument("stream " + s.name + ": sync group " + std::to_string(g) + " names PE " +
                                    std::to_string(m) + ", the stream has PEs 0 to " + std::to_string(s.pe.size() - 1));
      member[g][static_cast<std::size_t>(m)] = 1;
    }
  auto no_pe = [&](int pe) {
    return std::find(lim.qpes_without_pes.begin(), lim.qpes_without_pes.end(), pe / kPesPerQpe) != lim.qpes_without_pes.end();
  };
  for (std::size_t p = 0; p < s.pe.size(); ++p)
    if (!s.pe[p].empty() && no_pe(static_cast<int>(p)))
      throw std::invalid_argument(where(p, 0) + ": QPE " + std::to_string(p / kPesPerQpe) + " has a router but no PEs");
  // each PE's Syncs in order (command indices), for the satisfiability check below
  std::vector<std::vector<std::size_t>> syncs(s.pe.size());
  for (std::size_t p = 0; p < s.pe.size(); ++p) {
    for (std::size_t i = 0; i < s.pe[p].size(); ++i) {
      const StreamCommand& c = s.pe[p][i];
      auto fail = [&](const std::string& what) { throw std::invalid_argument(where(p, i) + ": " + what); };
      if (c.kind == CommandKind::Sync) {
        if (c.sync_group < 0 || static_cast<std::size_t>(c.sync_group) >= groups)
          fail("sync group " + std::to_string(c.sync_group) + " does not exist (the stream has " + std::to_string(groups) + ")");
        if (!member[static_cast<std::size_t>(c.sync_group)][p])
          fail("the PE is not in sync group " + std::to_string(c.sync_group));
        syncs[p].push_back(i);
      }
      if (c.kind == CommandKind::DmaLoad || c.kind == CommandKind::DmaStore) {
        const DmaTransfer& d = c.dma;
        const std::uint64_t remote_end =
            region_end(d.dram_addr, d.dram_row_stride, d.dram_plane_stride, d.row_bytes, d.rows, d.planes);
        if (d.remote.kind == MemoryRef::Kind::Dram) {
          if (d.remote.index < 0 || d.remote.index >= lim.drams)
            fail(to_string(d.remote) + ": the system has " + std::to_string(lim.drams) + " DRAM(s)");
          if (remote_end > s.dram_bytes) fail("DRAM range beyond the stream's " + std::to_string(s.dram_bytes) + " bytes");
        } else {
          if (d.remote.index < 0 || d.remote.index >= lim.pes)
            fail(to_string(d.remote) + ": the system has " + std::to_string(lim.pes) + " PEs");
          if (static_cast<std::size_t>(d.remote.index) == p) fail("a transfer from the PE's SRAM to itself");
          if (no_pe(d.remote.index)) fail(to_string(d.remote) + ": that QPE has a router but no PEs");
          if (remote_end > lim.sram_bytes)
            fail("range in the " + to_string(d.remote) + " beyond " + std::to_string(lim.sram_bytes) + " bytes");
        }
        if (region_end(d.sram_addr, d.sram_row_stride, d.sram_plane_stride, d.row_bytes, d.rows, d.planes) > lim.sram_bytes)
          fail("SRAM range beyond " + std::to_string(lim.sram_bytes) + " bytes");
      }
      if (c.kind == CommandKind::Mla) {
        // the MLA's layout is fixed by its task (sram_layout); checked against the SRAM by the backend
        if (c.mla.op == Op::Conv && (c.mla.conv.Wo() < 1 || c.mla.conv.Ho() < 1)) fail("convolution with no output");
      }
    }
  }
  // Every Sync must be met: repeatedly release each group whose members all wait at a Sync of it. A PE left
  // waiting waits forever (members with different counts, or PEs meeting groups in different orders).
  std::vector<std::size_t> next(s.pe.size(), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t g = 0; g < groups; ++g) {
      bool ready = true, any = false;
      for (std::size_t p = 0; p < s.pe.size() && ready; ++p) {
        if (!member[g][p]) continue;
        any = true;
        ready = next[p] < syncs[p].size() && s.pe[p][syncs[p][next[p]]].sync_group == static_cast<int>(g);
      }
      if (!ready || !any) continue;
      for (std::size_t p = 0; p < s.pe.size(); ++p)
        if (member[g][p]) ++next[p];
      progress = true;
    }
  }
  for (std::size_t p = 0; p < s.pe.size(); ++p)
    if (next[p] < syncs[p].size()) {
      const int g = s.pe[p][syncs[p][next[p]]].sync_group;
      std::string waiting;
      for (std::size_t q = 0; q < s.pe.size(); ++q)
        if (member[static_cast<std::size_t>(g)][q] &&
            !(next[q] < syncs[q].size() && s.pe[q][syncs[q][next[q]]].sync_group == g)) {
          waiting = "PE " + std::to_string(q) + (next[q] < syncs[q].size()
                                                     ? " waits at its command " + std::to_string(syncs[q][next[q]]) +
                                                           " (sync group " + std::to_string(s.pe[q][syncs[q][next[q]]].sync_group) + ")"
                                                     : " has no further Sync of the group");
          break;
        }
      throw std::invalid_argument(where(p, syncs[p][next[p]]) + ": a Sync of group " + std::to_string(g) +
                                  " that can never be met: " + waiting);
    }
}

std::uint64_t stream_cycle_bound(const TaskStream& s, const HwConfig& cfg) {
  std::uint64_t serial = 0;
  for (const std::vector<StreamCommand>& cmds : s.pe) {
    for (const StreamCommand& c : cmds) {
      switch (c.kind) {
        case CommandKind::DmaLoad:
        case CommandKind::DmaStore:
          serial += 2 * c.dma.bytes() + 64 * std::uint64_t(c.dma.rows) * c.dma.planes;
          break;
        case CommandKind::Mla:
          serial += 8 * mla_work_cycles(c.mla, cfg) + 1000;
          break;
        case CommandKind::Arm:
          serial += arm_op_cycles(c.arm, cfg) + 100;
          break;
        case CommandKind::WaitDma:
        case CommandKind::WaitMla:
          break;
        case CommandKind::Sync:
          serial += 10000;
          break;
      }
    }
  }
  return 4 * serial + 1000000;
}

StreamCommand dma_command(CommandKind kind, const std::string& operation, const DmaTransfer& transfer) {
  StreamCommand c;
  c.kind = kind;
  c.operation = operation;
  c.dma = transfer;
  return c;
}

StreamCommand arm_command(const std::string& operation, const ArmCommand& arm) {
  StreamCommand c;
  c.kind = CommandKind::Arm;
  c.operation = operation;
  c.arm = arm;
  return c;
}

StreamCommand mla_command(const std::string& operation, const Task& task, std::uint32_t a_base, std::uint32_t b_base,
                          std::uint32_t o_base) {
  StreamCommand c;
  c.kind = CommandKind::Mla;
  c.operation = operation;
  c.mla = task;
  c.a_base = a_base;
  c.b_base = b_base;
  c.o_base = o_base;
  return c;
}

StreamCommand sync_command() { return StreamCommand{}; }

}  // namespace s2
