#include "block_bound.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "elementwise_streams.h"
#include "model/noc/mesh.h"
#include "model/pe/arm_ops.h"

namespace s2::mapper {

namespace {

// How many of an input's `length` rows (or columns) `outputs` windows of `window` at `stride` read, the input
// padded by `pad` on each side: a stride longer than the window skips some, and the rows after the last
// window are never read (a 2x2 pooling of 35 rows reads 34).
std::uint64_t positions_read(int length, int pad, int window, int stride, int outputs) {
  std::uint64_t read = 0;
  long long next = pad;  // the first position, in padded coordinates, not yet counted
  for (long long o = 0; o < outputs; ++o) {
    const long long from = std::max(o * stride, next), to = std::min(o * stride + window, static_cast<long long>(pad) + length);
    if (to > from) read += static_cast<std::uint64_t>(to - from), next = to;
  }
  return read;
}

// ARM clocks of one pass over `values` results as one row: the least any split of them into commands costs
// (every command pays its call, a plane and a row at least; the values' own loop is the same however split)
double row_pass_clocks(ArmOpKind kind, std::uint64_t values, const HwConfig& cfg) {
  if (values == 0) return 0;
  ArmCommand c;
  c.kind = kind;
  c.width = static_cast<std::uint32_t>(values);  // (a map holds at most 2^27 values: network.h)
  return static_cast<double>(arm_op_cycles(c, cfg));
}

// A pooling of its map, planes as channels: its windows' loops are the same however the outputs are split, and
// every split pays at least a plane per channel and an output row per row of outputs
// (`kind`: another pooling-shaped kernel over the same windows, the quantization's with the pooling folded in)
double pool_pass_clocks(const Operation& p, const HwConfig& cfg, std::optional<ArmOpKind> kind = std::nullopt) {
  if (p.out.elements() == 0) return 0;
  ArmCommand c;
  c.kind = kind ? *kind : p.pool == PoolType::Max ? ArmOpKind::MaxPool8 : ArmOpKind::AvgPool8;
  c.window = p.Wf, c.window_h = p.Hf, c.stride = p.stride;
  c.planes = static_cast<std::uint32_t>(p.out.D);
  c.height = static_cast<std::uint32_t>((p.out.H - 1) * p.stride + p.Hf);
  c.width = static_cast<std::uint32_t>((p.out.W - 1) * p.stride + p.Wf);
  return static_cast<double>(arm_op_cycles(c, cfg));
}

bool is_network_input(const ParsedNetwork& n, const std::string& map) {
  if (map == "input") return true;
  if (const MapView* v = n.find_view(map))
    return std::any_of(v->channels.begin(), v->channels.end(), [](const ChannelSource& s) { return s.map == "input"; });
  return false;
}

std::uint64_t ceil_div(double x, double rate) { return rate > 0 ? static_cast<std::uint64_t>(std::ceil(x / rate)) : 0; }

}  // namespace

const char* to_string(BoundTerm t) {
  switch (t) {
    case BoundTerm::Macs: return "MACs";
    case BoundTerm::Dram: return "DRAM";
    case BoundTerm::Links: return "links";
    case BoundTerm::Arm: return "ARM";
  }
  return "?";
}

BlockWork block_work(const OperationBlock& b) {
  BlockWork w;
  const Operation& core = b.core_op();
  const Shape3& input = b.ops.front().in;  // the block's input as its first operation takes it (before any padding)
  w.input_read_bytes = static_cast<std::uint64_t>(input.elements());
  w.output_bytes = static_cast<std::uint64_t>(b.out().elements());
  if (core.kind == PrimitiveKind::MatMul) {
    w.weight_bytes = std::uint64_t(core.in.elements()) * std::uint64_t(core.out.elements());
    w.mac_ops = w.weight_bytes;
  } else {
    if (core.kind == PrimitiveKind::Convolution) {
      w.weight_bytes = std::uint64_t(core.Wf) * core.Hf * core.weight_depth() * core.out.D;
      w.mac_ops = std::uint64_t(core.out.elements()) * core.Wf * core.Hf * core.weight_depth();
    }
    const Operation* padd = find_op(b, PrimitiveKind::Padding);  // a PADD before the core
    const int pad = padd ? padd->pad : 0;
    w.input_read_bytes = positions_read(input.W, pad, core.Wf, core.stride, core.out.W) *
                         positions_read(input.H, pad, core.Hf, core.stride, core.out.H) * std::uint64_t(input.D);
  }
  if (const Operation* add = find_op(b, PrimitiveKind::ElementwiseAdd)) w.shortcut_map_bytes = std::uint64_t(add->out.elements());
  if (core.bias) w.bias_bytes = 4 * std::uint64_t(core.bias->size());
  if (core.kind == PrimitiveKind::Elementwise) {  // its second map (or factors) and table or parameters
    const ElementwiseSpec& e = *core.elementwise;
    if (e.op == EltOp::Add || e.op == EltOp::Mul) w.second_map_bytes = std::uint64_t(core.in.elements());
    w.weight_bytes = (e.op == EltOp::ChannelMul ? std::uint64_t(core.in.D) : 0) +
                     (e.op == EltOp::Table ? e.table.size() : e.op == EltOp::Affine ? 8 * e.scale.size() : 0);
  }
  return w;
}

double arm_pass_clocks(const OperationBlock& b, const HwConfig& cfg) {
  double clocks = 0;
  for (std::size_t i = 0; i < b.ops.size(); ++i) {
    const Operation& op = b.ops[i];
    const std::uint64_t values = static_cast<std::uint64_t>(op.out.elements());
    switch (op.kind) {
      case PrimitiveKind::Quantization: {
        // a max pooling or the shortcut's addition after it (a ReLU between them may clamp in its saturation) may
        // fold into its pass (QuantizeMaxPool, QuantizeAdd): the two passes or the folded one, whichever costs less
        std::size_t j = i + 1;
        while (j < b.ops.size() && b.ops[j].kind == PrimitiveKind::ReLU) ++j;
        const Operation* next = j < b.ops.size() ? &b.ops[j] : nullptr;
        const double quantize = row_pass_clocks(ArmOpKind::Quantize, values, cfg);
        if (next && next->kind == PrimitiveKind::Pooling && next->pool == PoolType::Max) {
          clocks += std::min(quantize + pool_pass_clocks(*next, cfg), pool_pass_clocks(*next, cfg, ArmOpKind::QuantizeMaxPool));
          i = j;
        } else if (next && next->kind == PrimitiveKind::ElementwiseAdd) {
          const double add = row_pass_clocks(ArmOpKind::AddInt8, static_cast<std::uint64_t>(next->out.elements()), cfg);
          clocks += std::min(quantize + add, row_pass_clocks(ArmOpKind::QuantizeAdd, values, cfg));
          i = j;
        } else {
          clocks += quantize;
        }
        break;
      }
      case PrimitiveKind::Pooling: clocks += pool_pass_clocks(op, cfg); break;
      case PrimitiveKind::ElementwiseAdd: clocks += row_pass_clocks(ArmOpKind::AddInt8, values, cfg); break;
      case PrimitiveKind::Elementwise: clocks += row_pass_clocks(elementwise_arm_op(op.elementwise->op), values, cfg); break;
      default: break;
    }
  }
  return clocks;
}

BlockEnds block_ends(const ParsedNetwork& n, const OperationBlock& b) {
  BlockEnds e;
  e.input_is_network_input = !b.inputs.empty() && is_network_input(n, b.inputs[0]);
  e.second_map_is_network_input = b.inputs.size() > 1 && is_network_input(n, b.inputs[1]);
  e.output_is_network_output = !n.blocks.empty() && &n.blocks.back() == &b;
  return e;
}

int chip_pes(const HwConfig& cfg) {
  int pes = 0;
  for (int q = 0; q < cfg.chip.qpes(); ++q) pes += cfg.chip.has_pes(q) ? cfg.pes_per_qpe : 0;
  return pes;
}

std::uint64_t BlockBound::cycles() const { return host_cycles + work_cycles(); }
std::uint64_t BlockBound::work_cycles() const { return std::max({macs_cycles, dram_cycles, links_cycles, arm_cycles}); }

BoundTerm BlockBound::bound_by() const {
  const std::uint64_t c = work_cycles();
  return c == macs_cycles ? BoundTerm::Macs : c == dram_cycles ? BoundTerm::Dram : c == links_cycles ? BoundTerm::Links : BoundTerm::Arm;
}

BlockBound block_bound(const OperationBlock& b, const BlockEnds& ends, const HwConfig& cfg) {
  BlockBound r;
  r.work = block_work(b);
  r.arm_clocks_all_pes = arm_pass_clocks(b, cfg);
  const BlockWork& w = r.work;
  const ChipShape& chip = cfg.chip;
  const double pes = chip_pes(cfg);
  r.macs_cycles = ceil_div(double(w.mac_ops), pes * cfg.mac_rows * cfg.mac_cols);
  r.arm_cycles = ceil_div(r.arm_clocks_all_pes, pes);
  // a block's clocks run from the host's start to the host hearing its last PE: no work before the start
  // reaches the nearest PE, none after the end leaves the nearest one
  const Mesh mesh(chip);
  std::uint64_t host = 0;
  bool any = false;
  for (int q = 0; q < chip.qpes(); ++q)
    if (chip.has_pes(q)) host = any ? std::min(host, host_path_cycles(cfg, mesh, q)) : host_path_cycles(cfg, mesh, q), any = true;
  r.host_cycles = 2 * host;

  // A router accepts one packet per NoC clock (model/noc/router.h): every byte from or to a DRAM passes a
  // router the DRAM is attached to, every byte from or to a storage QPE that QPE's router.
  const double router_bytes_per_cycle = double(cfg.noc_clocks_per_pe_clock()) * cfg.noc_payload_bytes;
  std::set<int> dram_routers, storage_routers;
  for (const DramPort& d : chip.drams)
    for (QpeCoord q : d.attach) dram_routers.insert(chip.qpe_index(q));
  for (const DoubleQpeBlock& db : chip.double_qpe_blocks) storage_routers.insert(chip.qpe_index(db.storage_qpe));
  const double dram_rate = double(chip.drams.size()) * cfg.dram_bytes_per_op / cfg.dram_cycles_per_op;
  const double storage_capacity = double(storage_routers.size()) * cfg.pes_per_qpe * chip.storage_pe_bytes;

  // Each map the network does not pin to DRAM may lie in the storage QPEs if the maps kept there fit together:
  // the choice whose slower of the DRAM and links terms is least.
  const std::uint64_t params = w.weight_bytes + w.bias_bytes;
  const std::uint64_t second = w.second_map_bytes + w.shortcut_map_bytes;
  const std::array<std::pair<std::uint64_t, bool>, 3> maps{{{w.input_read_bytes, !ends.input_is_network_input},
                                                            {second, !ends.second_map_is_network_input},
                                                            {w.output_bytes, !ends.output_is_network_output}}};
  bool first = true;
  for (unsigned kept = 0; kept < 8; ++kept) {
    std::uint64_t dram = params, storage = 0;
    bool allowed = true;
    for (unsigned m = 0; m < 3; ++m) {
      const bool in_storage = (kept >> m) & 1u;
      if (in_storage && (!maps[m].second || storage_routers.empty())) allowed = false;
      (in_storage ? storage : dram) += maps[m].first;
    }
    if (!allowed || double(storage) > storage_capacity) continue;
    const std::uint64_t d = ceil_div(double(dram), dram_rate);
    const std::uint64_t l = std::max(ceil_div(double(dram), double(dram_routers.size()) * router_bytes_per_cycle),
                                     ceil_div(double(storage), double(storage_routers.size()) * router_bytes_per_cycle));
    const auto better = std::pair{std::max(d, l), d + l} < std::pair{std::max(r.dram_cycles, r.links_cycles), r.dram_cycles + r.links_cycles};
    if (first || better) {
      r.dram_cycles = d, r.links_cycles = l, r.dram_bytes = dram, r.storage_bytes = storage;
      r.input_in_storage = kept & 1u, r.second_map_in_storage = kept & 2u, r.output_in_storage = kept & 4u;
      first = false;
    }
  }
  return r;
}

std::string bound_terms(const BlockBound& b) {
  return fmt::format("MACs {}, DRAM {}, links {}, ARM {}; host {}", b.macs_cycles, b.dram_cycles, b.links_cycles, b.arm_cycles,
                     b.host_cycles);
}

std::string describe_bound(const BlockBound& b, std::uint64_t cycles) {
  const std::uint64_t bound = b.cycles();
  const std::string ratio = bound ? fmt::format("{:.2f}x", double(cycles) / double(bound)) : std::string("-");
  return fmt::format("{} its bound of {}, bound by the {}", ratio, bound, to_string(b.bound_by()));
}

}  // namespace s2::mapper
