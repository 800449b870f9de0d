#include "distributor.h"

#include <stdexcept>

#include "chip_reuse.h"
#include "conv_plan.h"
#include "conv_strategies.h"
#include "elementwise_streams.h"
#include "mm_streams.h"
#include "pool_streams.h"
#include "workers.h"

namespace s2::mapper {

const char* to_string(Reuse r) {
  switch (r) {
    case Reuse::None: return "none";
    case Reuse::Ifmap: return "ifmap";
    case Reuse::Filter: return "filter";
  }
  return "?";
}

namespace {

// Whether every filter part of a grouped convolution lies in one group and starts a row group of the packed filters.
bool parts_start_row_groups(const Operation& conv, const BlockSplit& s, int mac_rows) {
  const int per_group = conv.out.D / conv.groups;
  for (int ic = 0; ic < s.c.count(); ++ic) {
    const int c0 = s.c.begin(ic), last = c0 + s.c.sizes[static_cast<std::size_t>(ic)] - 1;
    if (c0 / per_group != last / per_group || filter_slot(conv, mac_rows, c0) % mac_rows != 0) return false;
  }
  return true;
}

}  // namespace

bool distributable(const OperationBlock& b, const BlockSplit& s, Strategy strategy, const HwConfig& cfg, std::string* why) {
  auto no = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  if (b.kind == BlockKind::Pooling) {
    if (strategy == Strategy::FuseReuse) return no("pooling blocks have no weights to reuse");
    if (b.core_op().Wf != b.core_op().Hf && (b.core_op().out.W != 1 || b.core_op().out.H != 1))
      return no("a pooling window that is not square is distributed only as a global pooling (one output pixel)");
    return true;
  }
  if (b.kind == BlockKind::MatMul) {
    if (strategy == Strategy::FuseReuse) return no("MM blocks have no data reuse (thesis 4.3.3)");
    return true;
  }
  if (b.kind == BlockKind::Elementwise) {
    if (strategy == Strategy::FuseReuse) return no("element-wise blocks have no weights to reuse");
    return true;
  }
  if (s.d.count() > 1 && strategy == Strategy::FuseReuse)
    return no("fuse_reuse with input-channel splits is not distributed yet (Algorithm 1 has none)");
  if (b.core_op().groups > 1 && strategy == Strategy::FuseReuse)
    return no("fuse_reuse does not run a grouped convolution: its PEs convolve one input part with their neighbours' "
              "filters, and a group's filters read only their group's input channels, which no other group's share");
  if (b.workers > 0 && strategy == Strategy::FuseReuse)
    return no("fuse_reuse with a worker count (workers=) is not distributed yet: its reuse rounds use every PE");
  if (strategy == Strategy::FuseReuse && cfg.chip.qpes() > 1) {
    const std::string refusal = chip_reuse_refusal(s, cfg);
    if (!refusal.empty()) return no(refusal);
  }
  if (const Operation* pool = b.fused_pool()) {
    if (pool->pool != PoolType::Max) return no("average pooling is not distributed yet");
    if (b.core_op().stride != 1) return no("a strided convolution with a fused pooling is not distributed yet");
    // the pooling works on the quantized int8 map, before a shortcut is added
    bool quantized = false;
    for (std::size_t i = b.core + 1; i < b.ops.size(); ++i) {
      const Operation& o = b.ops[i];
      if (o.kind == PrimitiveKind::Quantization) quantized = true;
      if (o.kind == PrimitiveKind::ElementwiseAdd && &o < pool) return no("a shortcut added before the fused pooling");
      if (&o == pool && !quantized) return no("a pooling before the quantization is not distributed yet");
    }
  }
  if (s.c.count() > 1 && s.c.sizes.front() % cfg.mac_rows != 0 && b.core_op().groups == 1)
    return no("filter parts not in whole MAC-row groups");
  if (b.core_op().groups > 1 && !parts_start_row_groups(b.core_op(), s, cfg.mac_rows))
    return no("a grouped convolution's filter parts must each lie in one group and start a MAC-row group of it");
  return true;
}

namespace {

BlockStreams distribute_streams(const OperationBlock& b, const BlockSplit& s, Strategy strategy, const HwConfig& cfg,
                                const BlockResidency& where) {
  std::string why;
  if (!distributable(b, s, strategy, cfg, &why)) throw std::invalid_argument(b.name() + " " + to_string(strategy) + ": " + why);
  BlockStreams r;
  r.block = b.name();
  r.strategy = strategy;
  const bool nofuse = strategy == Strategy::NofuseNoreuse;
  if (b.kind == BlockKind::MatMul) {
    const MmPlan p = mm_plan(b, s, cfg, nofuse);
    r.map = p.map;
    r.quant_shift = p.shift;
    if (nofuse) r.streams = mm_nofuse(p);
    else r.streams.push_back(mm_fuse(p));
    return r;
  }
  if (b.kind == BlockKind::Elementwise) {
    const ConvPlan p = elementwise_plan(b, s, cfg);
    r.map = p.map;
    r.streams = elementwise_streams(p, nofuse);
    return r;
  }
  if (b.kind == BlockKind::Pooling) {
    const ConvPlan p = pool_plan(b, s, cfg, nofuse);
    r.map = p.map;
    r.streams = pool_streams(p, nofuse);
    return r;
  }
  const ConvPlan p = conv_plan(b, s, cfg, nofuse);
  r.map = p.map;
  r.quant_shift = p.shift;
  if (nofuse) {
    r.streams = conv_nofuse(p);
  } else if (strategy == Strategy::FuseNoreuse) {
    r.streams.push_back(conv_fuse_noreuse(p));
  } else if (cfg.chip.qpes() > 1) {
    r.reuse = Reuse::Ifmap;  // the only reuse on the chip (thesis 4.4)
    r.streams.push_back(conv_fuse_reuse_chip(p, r, where));
  } else {
    choose_reuse(p, r);
    r.streams.push_back(conv_fuse_reuse(p, r.reuse));
  }
  return r;
}

}  // namespace

BlockStreams distribute(const OperationBlock& b, const BlockSplit& s, Strategy strategy, const HwConfig& cfg,
                        const BlockResidency& where) {
  const bool chip_reuse = strategy == Strategy::FuseReuse && cfg.chip.qpes() > 1 && b.kind == BlockKind::Convolution;
  if ((where.input_in_storage || where.output_in_storage) && !chip_reuse)
    throw std::invalid_argument(b.name() + " " + to_string(strategy) + ": only fuse_reuse on the chip keeps maps in the storage QPEs");
  BlockStreams r = distribute_streams(b, s, strategy, cfg, where);
  const Workers w = workers_of(cfg, b.workers);
  // (the chip's reuse streams name their double QPE blocks' DRAMs themselves)
  if (!(strategy == Strategy::FuseReuse && cfg.chip.qpes() > 1))
    for (TaskStream& st : r.streams) use_group_drams(st, w);
  r.drams = static_cast<int>(w.dram.size());
  return r;
}

}  // namespace s2::mapper
