#include "mapper/snn/deployment.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "mapper/snn/blocks.h"
#include "mapper/snn/echelon.h"
#include "mapper/stream_commands.h"

namespace s2::mapper {

namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;
u32 u(u64 v) { return static_cast<u32>(v); }
u64 a16(u64 v) { return align_up(v, kSnnWord); }

// The neighbour shift at which PE `pe`'s MLA reads the Dominant's SRAM; -1: another QPE.
int neighbour_shift(int dominant, int pe) {
  return dominant / kPesPerQpe == pe / kPesPerQpe ? (dominant - pe + kPesPerQpe) % kPesPerQpe : -1;
}

// A DMA transfer between the PE's SRAM at `at` and the Dominant's SRAM at `dominant_at`: `rows` rows of
// `row_bytes`, each side its row stride.
StreamCommand with_dominant(CommandKind kind, const std::string& op, int dominant, u64 dominant_at, u64 dominant_row_stride, u32 at,
                            u32 row_stride, u64 row_bytes, int rows) {
  DmaTransfer t;
  t.remote.kind = MemoryRef::Kind::Sram;
  t.remote.index = dominant;
  t.dram_addr = dominant_at;
  t.dram_row_stride = dominant_row_stride;
  t.sram_addr = at;
  t.sram_row_stride = row_stride;
  t.row_bytes = u(row_bytes);
  t.rows = static_cast<u32>(rows);
  return dma_command(kind, op, t);
}

// ---------------------------------------------------------------------------------------------------------
// The splits: what each Subordinate holds, per layout, for n Subordinates (nullopt: the layout has no split
// into n).

// serial_arm: the pre-neurons [first[k], first[k + 1]).
std::optional<std::vector<int>> serial_split(const SnnLayer& l, int n) {
  if (n > l.pre) return std::nullopt;
  std::vector<int> first(std::size_t(n) + 1);
  for (int k = 0; k <= n; ++k) first[std::size_t(k)] = static_cast<int>(std::int64_t(k) * l.pre / n);
  return first;
}

// original_mac: pieces of delay matrices, pre rows [i0, i1) of W_delay.
struct MacPiece {
  int delay = 0, i0 = 0, i1 = 0;
};
std::optional<std::vector<std::vector<MacPiece>>> mac_split(const SnnLayer& l, int n, int row_step) {
  const int D = l.delays;
  std::vector<std::vector<MacPiece>> subs(static_cast<std::size_t>(n));
  if (n <= D) {  // whole matrices: sub k those of delays [k D / n, (k + 1) D / n)
    for (int k = 0; k < n; ++k)
      for (int d = k * D / n; d < (k + 1) * D / n; ++d) subs[std::size_t(k)].push_back({d, 0, l.pre});
    return subs;
  }
  if (n % D != 0) return std::nullopt;  // each matrix in the same number of runs
  const int m = n / D;
  const int chunk = static_cast<int>(align_up(std::uint64_t((l.pre + m - 1) / m), std::uint64_t(row_step)));
  if (std::int64_t(m - 1) * chunk >= l.pre) return std::nullopt;
  for (int d = 0; d < D; ++d)
    for (int c = 0; c < m; ++c) subs[std::size_t(d * m + c)].push_back({d, c * chunk, std::min(l.pre, (c + 1) * chunk)});
  return subs;
}

// The stacked layouts: slabs of map rows [r0, r1), each with its pieces of the bands' rectangles and its rows
// of the ARM's columns (echelon_mixed).
struct StackPiece {
  int r0 = 0, rows = 0, first_col = 0;  // map rows [r0, r0 + rows), columns [first_col, blue)
};
struct Slab {
  int r0 = 0, r1 = 0;
  std::vector<StackPiece> pieces;
  int arm_rows = 0;  // rows [r0, r0 + arm_rows) of the ARM's columns
};
struct StackMap {
  EchelonMap e;           // operand_stack: the identity order, one band over every row
  bool permute = false;   // echelon: operand A's columns in Circle Reverse order
  int blue = 0, pink = 0; // the MLA's columns [0, blue), the ARM's [blue, post)
  int pink_rows = 0;      // rows of the ARM's columns
  int rows_end() const { return std::max(e.bands.empty() ? 0 : e.bands.back().first_row + e.bands.back().rows, pink_rows); }
};

StackMap stack_map(const SnnLayer& l, SnnLayout layout) {
  StackMap s;
  const int post16 = static_cast<int>(align_up(std::uint64_t(l.post), 16));
  if (layout == SnnLayout::OperandStack) {
    const int rows = l.delays * l.pre;
    s.e.map_rows = s.e.nonzero_rows = rows;
    s.e.blue_cols = s.blue = post16;
    s.e.source.resize(std::size_t(rows));
    for (int n = 0; n < rows; ++n) s.e.source[std::size_t(n)] = n;
    s.e.target = s.e.source;
    s.e.bands = {EchelonBand{0, static_cast<int>(align_up(std::uint64_t(rows), 4)), 0}};
    return s;
  }
  const bool mixed = layout == SnnLayout::EchelonMixed;
  s.permute = true;
  s.blue = mixed ? l.post / 16 * 16 : post16;
  s.pink = l.post - s.blue;
  s.e = echelon_reorder(l, s.blue);
  s.pink_rows = mixed && s.pink > 0 ? s.e.nonzero_rows : 0;
  return s;
}

std::optional<std::vector<Slab>> stack_split(const StackMap& m, int n, int row_step) {
  const int end = m.rows_end();
  std::vector<u64> weight(std::size_t(end) + 1, 0);  // the weight bytes of rows [0, r)
  for (int r = 0; r < end; ++r) {
    u64 w = r < m.pink_rows ? u64(m.pink) : 0;
    for (const EchelonBand& b : m.e.bands)
      if (r >= b.first_row && r < b.first_row + b.rows) w += u64(m.blue - b.first_col);
    weight[std::size_t(r) + 1] = weight[std::size_t(r)] + w;
  }
  std::vector<Slab> slabs(static_cast<std::size_t>(n));
  int cut = 0;
  for (int k = 0; k < n; ++k) {
    Slab& s = slabs[std::size_t(k)];
    s.r0 = cut;
    if (k == n - 1) {
      cut = end;
    } else {  // the first row where the slabs above hold (k + 1) / n of the weights, moved down to a row step
      const u64 goal = (weight.back() * u64(k + 1) + u64(n) - 1) / u64(n);
      const int r = static_cast<int>(std::lower_bound(weight.begin(), weight.end(), goal) - weight.begin());
      cut = std::min(end, static_cast<int>(align_up(std::uint64_t(r), std::uint64_t(row_step))));
    }
    if (cut <= s.r0) return std::nullopt;
    s.r1 = cut;
    for (const EchelonBand& b : m.e.bands) {
      const int lo = std::max(s.r0, b.first_row), hi = std::min(s.r1, b.first_row + b.rows);
      if (lo < hi) s.pieces.push_back({lo, hi - lo, b.first_col});
    }
    s.arm_rows = std::max(0, std::min(s.r1, m.pink_rows) - s.r0);
  }
  return slabs;
}

// ---------------------------------------------------------------------------------------------------------
// A deployment on n Subordinates: the PEs' SRAM regions (sizing), then their images and commands (writing).

class Deployment {
 public:
  Deployment(const SnnLayer& l, SnnLayout layout, const HwConfig& cfg, std::vector<int> pes)
      : l_(l), layout_(layout), cfg_(cfg), pes_(std::move(pes)), map_(l, cfg) {
    if (layout == SnnLayout::OperandStack || layout == SnnLayout::Echelon || layout == SnnLayout::EchelonMixed)
      stack_ = stack_map(l, layout);
  }

  // Each PE's SRAM by kind for n Subordinates (the Dominant first); nullopt: the layout has no such split.
  std::optional<std::vector<SnnMemory>> size(int n) {
    if (!split(n)) return std::nullopt;
    std::vector<SnnMemory> m;
    for (int k = 0; k <= n; ++k) m.push_back(regions(k).memory);
    return m;
  }

  SnnPlan write(int n) {
    if (!split(n)) throw std::logic_error("SNN deployment: no split");
    SnnPlan p;
    p.layout = layout_;
    p.stream.name = std::string("SNN ") + to_string(layout_);
    p.stream.pe.assign(std::size_t(stream_limits(cfg_).pes), {});
    p.stream.sync_groups = {std::vector<int>(pes_.begin(), pes_.begin() + n + 1)};
    p.memory.drams.resize(1);
    p.steps_per_batch = stack_ ? l_.delays : 1;
    const bool stacked = stack_.has_value();
    d_ = snn_dram(l_, stacked ? l_.delays - 1 : 0, stacked ? map_.groups * map_.rows : 0, p.memory.drams[0]);
    p.currents_dram = d_.currents;
    p.stream.dram_bytes = p.memory.drams[0].size();
    std::vector<Regions> regs;  // per PE, the Dominant first
    for (int k = 0; k <= n; ++k) {
      const Regions& r = regs.emplace_back(regions(k));
      SnnPe pe{pes_[std::size_t(k)], k == 0, k > 0 && r.neighbour, r.memory};
      p.pes.push_back(pe);
      p.memory.sram[pe.pe] = image(k, r);
      p.sram += r.memory;
    }
    for (int t0 = 0; t0 < l_.timesteps; t0 += p.steps_per_batch) batch(p, regs, t0);
    p.notes.push_back(std::to_string(n) + " Subordinate PE(s) beside the Dominant; weights preloaded in the Subordinates' SRAM, "
                      "split into groups of equal weight bytes (mapper/snn/deployment.h)");
    p.notes.push_back("operand A: neighbour reads inside the Dominant's QPE, a DMA copy beyond it or where the ARM needs the values; "
                      "partial currents written back into the Dominant's slots by DMA and added by its ARM");
    p.notes.push_back(
        "ARM clocks of MacInt8, Copy8, AddInt32, PermuteWords and the clearing: as the configuration's arm_clock_model "
        "charges them (by default counted from their kernels' code, docs/arm_clocks.md)");
    return p;
  }

 private:
  // Where a PE keeps what (addresses; 0 where the PE has no such region) and what it costs.
  struct Regions {
    SnnMemory memory;
    bool neighbour = false;         // a Subordinate whose MLA reads operand A from the Dominant
    u32 spikes = 0, operand_a = 0;  // the Dominant's spike window / operand A; a Subordinate's copy of its part
    u32 table = 0, slots = 0;       // the Dominant's permutation table and partial-current slots
    std::vector<u32> weights;       // a Subordinate's pieces (serial_arm: one dense block)
    u32 arm_weights = 0;            // echelon_mixed: the ARM's columns
    u32 currents = 0, temp = 0;     // a Subordinate's ring buffer or partial currents; the MLA's result
    u64 copy_group_stride = 0;      // a Subordinate's copy of operand A: bytes per row group
    int a_first = 0, a_end = 0;     // operand A's columns (serial_arm: spikes) the Subordinate copies
  };

  const SnnLayer& l_;
  SnnLayout layout_;
  const HwConfig& cfg_;
  std::vector<int> pes_;
  SpikeMap map_;
  std::optional<StackMap> stack_;
  // the split for the n of the last split() call
  int n_ = 0;
  std::vector<int> serial_;
  std::vector<std::vector<MacPiece>> mac_;
  std::vector<Slab> slabs_;
  SnnDram d_;

  int row_step() const { return std::max(4, 16 / cfg_.mac_rows); }
  // a Subordinate's partial currents (a batch's rows), and the stride of the Dominant's slots for them
  u64 partial_bytes() const { return u64(stack_ ? l_.delays : 1) * u64(l_.post) * 4; }
  u64 slot_bytes() const { return a16(partial_bytes()); }
  u64 ring_bytes() const { return u64(l_.delays) * u64(l_.post) * 4; }

  bool split(int n) {
    n_ = n;
    if (layout_ == SnnLayout::SerialArm) {
      auto s = serial_split(l_, n);
      if (s) serial_ = *s;
      return s.has_value();
    }
    if (layout_ == SnnLayout::OriginalMac) {
      auto s = mac_split(l_, n, row_step());
      if (s) mac_ = *s;
      return s.has_value();
    }
    auto s = stack_split(*stack_, n, row_step());
    if (s) slabs_ = *s;
    return s.has_value();
  }

  static MmShape mac_mm(const SnnLayer& l, const MacPiece& p) { return MmShape{p.i1 - p.i0, 1, l.post, p.i1 - p.i0}; }
  MmShape stack_mm(const StackPiece& p, int h_a) const { return MmShape{p.rows, h_a, stack_->blue - p.first_col, p.rows}; }

  Regions regions(int k) const;
  std::vector<std::uint8_t> image(int k, const Regions& r) const;
  void batch(SnnPlan& p, const std::vector<Regions>& regs, int t0) const;
  // A Subordinate's batch: its commands, regions, the Dominant's, the slot its partial goes to, its index.
  struct Subordinate {
    std::vector<StreamCommand>& cmds;
    const Regions& r;
    const Regions& dom;
    u64 slot;
    int k;
  };
  void subordinate_batch(SnnPlan& p, const std::vector<Regions>& regs, int k, int t0, int rows) const;
  void ring_slot_back(Subordinate& sub, int t) const;
  void serial_subordinate(Subordinate& sub, int t) const;
  void mac_subordinate(SnnPlan& p, Subordinate& sub, int t) const;
  void stack_subordinate(SnnPlan& p, Subordinate& sub, int rows) const;
};

Deployment::Regions Deployment::regions(int k) const {
  Regions r;
  SramAllocator a;
  SnnMemory& m = r.memory;
  const int rows = cfg_.mac_rows;
  if (k == 0) {  // the Dominant: the spikes in, operand A, the slots
    if (layout_ == SnnLayout::SerialArm) {
      r.spikes = a.take(u64(l_.pre));
      m.spikes = a16(u64(l_.pre));
    } else if (layout_ == SnnLayout::OriginalMac) {
      const SramLayout lay = sram_layout(mm_task(MmShape{l_.pre, 1, l_.post, l_.pre}), cfg_);
      r.spikes = a.take(u64(l_.pre));
      r.operand_a = a.take(lay.a_bytes);
      m.spikes = a16(u64(l_.pre));
      m.spike_map = a16(lay.a_bytes);
    } else {
      r.spikes = a.take(u64(map_.window) * u64(l_.pre));
      r.operand_a = a.take(map_.layout.a_bytes);
      m.spikes = a16(u64(map_.window) * u64(l_.pre));
      m.spike_map = a16(map_.layout.a_bytes);
      if (stack_->permute) {
        r.table = a.take(2 * u64(stack_->e.map_rows));
        m.index = a16(2 * u64(stack_->e.map_rows));
      }
    }
    r.slots = a.take(slot_bytes() * u64(n_));
    m.currents = a16(slot_bytes());
    m.buffers = a.next - r.slots - m.currents;
    return r;
  }
  const int pe = pes_[std::size_t(k)], dominant = pes_[0];
  const std::size_t s = std::size_t(k) - 1;
  if (layout_ == SnnLayout::SerialArm) {
    r.a_first = serial_[s];
    r.a_end = serial_[s + 1];
    const u64 n = u64(r.a_end - r.a_first);
    r.weights = {a.take(u64(l_.delays) * n * u64(l_.post))};
    r.operand_a = a.take(n);
    r.currents = a.take(ring_bytes());
    m.weights = a16(u64(l_.delays) * n * u64(l_.post));
    m.spikes = a16(n);
    m.currents = a16(ring_bytes());
    return r;
  }
  if (layout_ == SnnLayout::OriginalMac) {
    r.neighbour = neighbour_shift(dominant, pe) >= 0;
    r.a_first = l_.pre;
    u64 temp = 0;
    for (const MacPiece& p : mac_[s]) {
      const SramLayout lay = sram_layout(mm_task(mac_mm(l_, p)), cfg_);
      r.weights.push_back(a.take(lay.b_bytes));
      m.weights += a16(lay.b_bytes);
      temp = std::max<u64>(temp, lay.o_bytes);
      r.a_first = std::min(r.a_first, p.i0);
      r.a_end = std::max(r.a_end, p.i1);
    }
    if (!r.neighbour) {
      r.copy_group_stride = a16(u64(rows) * u64(r.a_end - r.a_first));
      r.operand_a = a.take(r.copy_group_stride);
      m.spike_map = r.copy_group_stride;
    }
    r.currents = a.take(ring_bytes());
    r.temp = a.take(temp);
    m.currents = a16(ring_bytes());
    m.buffers = a16(temp);
    return r;
  }
  const Slab& slab = slabs_[s];
  r.neighbour = neighbour_shift(dominant, pe) >= 0 && slab.arm_rows == 0;
  u64 temp = 0;
  for (const StackPiece& p : slab.pieces) {
    const SramLayout lay = sram_layout(mm_task(stack_mm(p, rows)), cfg_);
    r.weights.push_back(a.take(lay.b_bytes));
    m.weights += a16(lay.b_bytes);
    temp = std::max<u64>(temp, lay.o_bytes);
  }
  if (slab.arm_rows > 0) {
    r.arm_weights = a.take(u64(slab.arm_rows) * u64(stack_->pink));
    m.weights += a16(u64(slab.arm_rows) * u64(stack_->pink));
  }
  r.a_first = slab.r0;
  r.a_end = slab.r1;
  if (!r.neighbour) {
    r.copy_group_stride = a16(u64(rows) * u64(slab.r1 - slab.r0));
    r.operand_a = a.take(r.copy_group_stride * u64(map_.groups));
    m.spike_map = r.copy_group_stride * u64(map_.groups);
  }
  r.currents = a.take(partial_bytes());
  r.temp = a.take(temp);
  m.currents = a16(partial_bytes());
  m.buffers = a16(temp);
  return r;
}

std::vector<std::uint8_t> Deployment::image(int k, const Regions& r) const {
  std::vector<std::uint8_t> sram(std::size_t(r.memory.total()), 0);
  if (k == 0) {
    if (stack_ && stack_->permute)
      for (int n = 0; n < stack_->e.map_rows; ++n) {  // weight-delay row n's echelon row, 16 bits
        sram[r.table + 2 * std::size_t(n)] = static_cast<std::uint8_t>(stack_->e.target[std::size_t(n)]);
        sram[r.table + 2 * std::size_t(n) + 1] = static_cast<std::uint8_t>(stack_->e.target[std::size_t(n)] >> 8);
      }
    return sram;
  }
  const std::size_t s = std::size_t(k) - 1;
  if (layout_ == SnnLayout::SerialArm) {  // dense [d][i - first][post]
    const std::size_t n = std::size_t(r.a_end - r.a_first);
    for (int d = 0; d < l_.delays; ++d)
      for (int i = r.a_first; i < r.a_end; ++i)
        for (int j = 0; j < l_.post; ++j)
          sram[r.weights[0] + (std::size_t(d) * n + std::size_t(i - r.a_first)) * std::size_t(l_.post) + std::size_t(j)] =
              static_cast<std::uint8_t>(l_.weight(d, i, j));
    return sram;
  }
  if (layout_ == SnnLayout::OriginalMac) {
    for (std::size_t q = 0; q < mac_[s].size(); ++q) {
      const MacPiece& p = mac_[s][q];
      const u32 stride = sram_layout(mm_task(mac_mm(l_, p)), cfg_).b_row_stride;
      for (int i = p.i0; i < p.i1; ++i)
        for (int j = 0; j < l_.post; ++j)
          sram[r.weights[q] + std::size_t(i - p.i0) * stride + std::size_t(j)] = static_cast<std::uint8_t>(l_.weight(p.delay, i, j));
    }
    return sram;
  }
  const StackMap& m = *stack_;
  const Slab& slab = slabs_[s];
  for (std::size_t q = 0; q < slab.pieces.size(); ++q) {
    const StackPiece& p = slab.pieces[q];
    const u32 stride = sram_layout(mm_task(stack_mm(p, cfg_.mac_rows)), cfg_).b_row_stride;
    for (int row = p.r0; row < p.r0 + p.rows && row < m.e.nonzero_rows; ++row)
      for (int j = p.first_col; j < std::min(m.blue, l_.post); ++j)  // the columns past post stay 0
        sram[r.weights[q] + std::size_t(row - p.r0) * stride + std::size_t(j - p.first_col)] =
            static_cast<std::uint8_t>(weight_delay(l_, m.e.source[std::size_t(row)], j));
  }
  for (int row = 0; row < slab.arm_rows; ++row)
    for (int j = 0; j < m.pink; ++j)
      sram[r.arm_weights + std::size_t(row) * std::size_t(m.pink) + std::size_t(j)] =
          static_cast<std::uint8_t>(weight_delay(l_, m.e.source[std::size_t(slab.r0 + row)], m.blue + j));
  return sram;
}

void Deployment::batch(SnnPlan& p, const std::vector<Regions>& regs, int t0) const {
  const int dominant = pes_[0];
  const Regions& dom = regs[0];
  auto& cmds = p.stream.pe[std::size_t(dominant)];
  const int rows = std::min(p.steps_per_batch, l_.timesteps - t0);
  // the spikes in and operand A built
  if (!stack_) {
    cmds.push_back(load_spikes(l_, d_, u64(t0), 1, dom.spikes));
    if (layout_ == SnnLayout::OriginalMac) cmds.push_back(spikes_to_operand_a(dom.spikes, dom.operand_a, l_.pre, cfg_.mac_rows));
  } else {
    cmds.push_back(load_spikes(l_, d_, u64(t0), map_.window, dom.spikes));
    map_.build(cmds, dom.spikes, dom.operand_a);
    if (stack_->permute) cmds.push_back(circle_reverse(map_, dom.operand_a, dom.table, stack_->e.map_rows));
  }
  cmds.push_back(sync_command());  // operand A ready
  for (int k = 1; k <= n_; ++k) {
    p.stream.pe[std::size_t(pes_[std::size_t(k)])].push_back(sync_command());
    subordinate_batch(p, regs, k, t0, rows);
    p.stream.pe[std::size_t(pes_[std::size_t(k)])].push_back(sync_command());
  }
  cmds.push_back(sync_command());  // every partial in its slot
  const u32 row_bytes = u(u64(l_.post) * 4);
  for (int k = 1; k < n_; ++k) {
    ArmCommand add;
    add.kind = ArmOpKind::AddInt32;
    add.src = u(dom.slots + u64(k) * slot_bytes());
    add.dst = dom.slots;
    add.width = static_cast<u32>(l_.post);
    add.height = static_cast<u32>(rows);
    add.src_row_stride = add.dst_row_stride = row_bytes;
    cmds.push_back(arm_command("GATHER", add));
  }
  cmds.push_back(store_currents(l_, d_, t0, rows, dom.slots, row_bytes));
}

void Deployment::subordinate_batch(SnnPlan& p, const std::vector<Regions>& regs, int k, int t0, int rows) const {
  const Regions& dom = regs[0];
  Subordinate sub{p.stream.pe[std::size_t(pes_[std::size_t(k)])], regs[std::size_t(k)], dom, dom.slots + u64(k - 1) * slot_bytes(), k};
  if (layout_ == SnnLayout::SerialArm)
    serial_subordinate(sub, t0);
  else if (layout_ == SnnLayout::OriginalMac)
    mac_subordinate(p, sub, t0);
  else
    stack_subordinate(p, sub, rows);
}

// A ring buffer's step: slot t written back to the Dominant's slot for this Subordinate, and cleared.
void Deployment::ring_slot_back(Subordinate& sub, int t) const {
  const u32 row_bytes = u(u64(l_.post) * 4);
  const u32 out = u(sub.r.currents + u64(t % l_.delays) * row_bytes);
  sub.cmds.push_back(with_dominant(CommandKind::DmaStore, "PARTIAL", pes_[0], sub.slot, 0, out, 0, row_bytes, 1));
  sub.cmds.push_back(clear(out, row_bytes));
}

// serial_arm: the step's spikes of its pre-neurons copied from the Dominant, their weight rows added into the
// ring's slots t + d.
void Deployment::serial_subordinate(Subordinate& sub, int t) const {
  const Regions& r = sub.r;
  const u32 row_bytes = u(u64(l_.post) * 4);
  const int n = r.a_end - r.a_first;
  sub.cmds.push_back(with_dominant(CommandKind::DmaLoad, "SPIKES", pes_[0], sub.dom.spikes + u64(r.a_first), 0, r.operand_a, 0, u64(n), 1));
  ring_runs(t, 0, l_.delays, l_.delays, [&](int d0, int s0, int count) {
    ArmCommand m;
    m.kind = ArmOpKind::MacInt8;
    m.src = r.operand_a;
    m.a_col_stride = 1;
    m.depth = static_cast<u32>(n);
    m.width = static_cast<u32>(l_.post);
    m.planes = static_cast<u32>(count);
    m.weights = u(r.weights[0] + u64(d0) * u64(n) * u64(l_.post));
    m.weights_row_stride = static_cast<u32>(l_.post);
    m.weights_plane_stride = u(u64(n) * u64(l_.post));
    m.dst = u(r.currents + u64(s0) * row_bytes);
    m.dst_row_stride = m.dst_plane_stride = row_bytes;
    sub.cmds.push_back(arm_command("SYNAPSES", m));
  });
  ring_slot_back(sub, t);
}

// original_mac: per piece of a delay matrix, the step's spikes (operand A, read from the Dominant or copied)
// times the piece, added into ring slot t + delay.
void Deployment::mac_subordinate(SnnPlan& p, Subordinate& sub, int t) const {
  const Regions& r = sub.r;
  const int mac_rows = cfg_.mac_rows;
  const int shift = r.neighbour ? neighbour_shift(pes_[0], pes_[std::size_t(sub.k)]) : -1;
  const u32 row_bytes = u(u64(l_.post) * 4);
  if (!r.neighbour)
    sub.cmds.push_back(with_dominant(CommandKind::DmaLoad, "SPIKE_MAP", pes_[0], sub.dom.operand_a + u64(mac_rows) * u64(r.a_first), 0,
                                     r.operand_a, 0, u64(mac_rows) * u64(r.a_end - r.a_first), 1));
  const std::vector<MacPiece>& pieces = mac_[std::size_t(sub.k) - 1];
  for (std::size_t q = 0; q < pieces.size(); ++q) {
    const MacPiece& piece = pieces[q];
    Task task = mm_task(mac_mm(l_, piece));
    task.a_src_shift = shift;
    const u64 a = r.neighbour ? sub.dom.operand_a + u64(mac_rows) * u64(piece.i0) : r.operand_a + u64(mac_rows) * u64(piece.i0 - r.a_first);
    sub.cmds.push_back(mla_command("MM_DELAY", task, u(a), r.weights[q], r.temp));
    ++p.mla_tasks;
    ArmCommand add;
    add.kind = ArmOpKind::AddInt32;
    add.src = r.temp;
    add.src_row_stride = sram_layout(task, cfg_).o_row_stride * 4;
    add.dst = u(r.currents + u64((t + piece.delay) % l_.delays) * row_bytes);
    add.dst_row_stride = row_bytes;
    add.width = static_cast<u32>(l_.post);
    sub.cmds.push_back(arm_command("RING", add));
  }
  ring_slot_back(sub, t);
}

// The stacked layouts: its slab's columns of operand A (read from the Dominant or copied), per row group and
// piece one multiplication added into the batch's partial currents (and echelon_mixed's ARM columns), the
// `rows` steps of the partial written back to the Dominant.
void Deployment::stack_subordinate(SnnPlan& p, Subordinate& sub, int rows) const {
  const Regions& r = sub.r;
  const Regions& dom = sub.dom;
  auto& cmds = sub.cmds;
  const int dominant = pes_[0], mac_rows = cfg_.mac_rows;
  const int shift = r.neighbour ? neighbour_shift(dominant, pes_[std::size_t(sub.k)]) : -1;
  const u32 row_bytes = u(u64(l_.post) * 4);
  const Slab& slab = slabs_[std::size_t(sub.k) - 1];
  const StackMap& m = *stack_;
  if (!r.neighbour)  // the slab's columns of each row group of operand A
    cmds.push_back(with_dominant(CommandKind::DmaLoad, "SPIKE_MAP", dominant, dom.operand_a + u64(mac_rows) * u64(slab.r0),
                                 map_.layout.a_group_stride, r.operand_a, u(r.copy_group_stride),
                                 u64(mac_rows) * u64(slab.r1 - slab.r0), map_.groups));
  cmds.push_back(clear(r.currents, u(partial_bytes())));
  for (int g = 0; g < map_.groups; ++g) {
    const u64 group = r.neighbour ? dom.operand_a + u64(g) * map_.layout.a_group_stride : r.operand_a + u64(g) * r.copy_group_stride;
    const int first = r.neighbour ? 0 : slab.r0;  // the column `group` starts with
    const u32 cur_g = u(r.currents + u64(g) * u64(mac_rows) * row_bytes);
    for (std::size_t q = 0; q < slab.pieces.size(); ++q) {
      const StackPiece& piece = slab.pieces[q];
      Task task = mm_task(stack_mm(piece, map_.group_rows(g)));
      task.a_src_shift = shift;
      cmds.push_back(mla_command("MM_BAND", task, u(group + u64(mac_rows) * u64(piece.r0 - first)), r.weights[q], r.temp));
      ++p.mla_tasks;
      ArmCommand add;
      add.kind = ArmOpKind::AddInt32;
      add.src = r.temp;
      add.src_row_stride = sram_layout(task, cfg_).o_row_stride * 4;
      add.dst = cur_g + 4 * static_cast<u32>(piece.first_col);
      add.dst_row_stride = row_bytes;
      add.width = static_cast<u32>(std::min(m.blue, l_.post) - piece.first_col);
      add.height = static_cast<u32>(map_.group_rows(g));
      cmds.push_back(arm_command("ACCUMULATE", add));
    }
    if (slab.arm_rows > 0) {
      ArmCommand mac;
      mac.kind = ArmOpKind::MacInt8;
      mac.src = u(group);
      mac.src_row_stride = 1;
      mac.a_col_stride = static_cast<u32>(mac_rows);
      mac.depth = static_cast<u32>(slab.arm_rows);
      mac.height = static_cast<u32>(map_.group_rows(g));
      mac.width = static_cast<u32>(m.pink);
      mac.weights = r.arm_weights;
      mac.weights_row_stride = static_cast<u32>(m.pink);
      mac.dst = cur_g + 4 * static_cast<u32>(m.blue);
      mac.dst_row_stride = row_bytes;
      cmds.push_back(arm_command("ARM_COLUMNS", mac));
    }
  }
  cmds.push_back(with_dominant(CommandKind::DmaStore, "PARTIAL", dominant, sub.slot, 0, r.currents, 0, u64(rows) * row_bytes, 1));
}

}  // namespace

SnnPlan deploy_snn_layer(const SnnLayer& layer, SnnLayout layout, const HwConfig& cfg, std::uint64_t budget_bytes) {
  const std::vector<int> order = snn_pe_order(cfg);
  Deployment dep(layer, layout, cfg, order);
  const u64 cap = std::min(budget_bytes, u64(cfg.sram_bytes));
  u64 least = 0;  // the least any split's largest PE needed, and which PE that was
  int least_n = 0, tried = 0;
  bool least_dominant = false;
  for (int n = 1; n < static_cast<int>(order.size()); ++n) {
    const auto mems = dep.size(n);
    if (!mems) continue;
    ++tried;
    std::size_t largest = 0;
    for (std::size_t k = 1; k < mems->size(); ++k)
      if ((*mems)[k].total() > (*mems)[largest].total()) largest = k;
    const u64 bytes = (*mems)[largest].total();
    if (bytes <= cap) return dep.write(n);
    if (least == 0 || bytes < least) {
      least = bytes;
      least_n = n;
      least_dominant = largest == 0;
    }
  }
  const std::string what = std::string("SNN layer: ") + to_string(layout) + " fits no Dominant/Subordinate deployment on " +
                           cfg.chip.name + " (" + std::to_string(order.size()) + " PEs) within " + std::to_string(cap) +
                           " bytes of SRAM per PE (--budget-bytes, at most the SRAM's " + std::to_string(cfg.sram_bytes) + ")";
  if (tried == 0) throw std::invalid_argument(what + ": the system has too few PEs for any split of this layer");
  throw std::invalid_argument(what + ": at best, with " + std::to_string(least_n) + " Subordinates, " +
                              (least_dominant ? "the Dominant (spike window, operand A, a slot per Subordinate)" : "a Subordinate") +
                              " needs " + std::to_string(least) + " bytes; a larger budget" +
                              (cfg.chip.qpes() == 1 ? ", or a chip's PEs (--target s2)" : ""));
}

}  // namespace s2::mapper
