#include "harness/stimulus/chip_random.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/stimulus/stream_access.h"
#include "model/pe/arm_ops.h"
#include "model/splitmix64.h"
#include "model/sram_layout.h"

namespace s2 {

ChipShape mesh_chip(int cols, int rows) {
  ChipShape c;
  c.name = fmt::format("{}x{}", cols, rows);
  c.mesh_cols = cols;
  c.mesh_rows = rows;
  DramPort west, east;
  for (int y = 0; y < rows; ++y) {
    west.attach.push_back({0, y});
    east.attach.push_back({cols - 1, y});
  }
  c.drams.push_back(west);
  if (cols > 1) c.drams.push_back(east);
  c.host_agents = {{(cols - 1) / 2, (rows - 1) / 2}};
  c.assumptions = {fmt::format("a {}x{} mesh for random chip streams (harness/stimulus/chip_random.h), not a SpiNNaker2 shape: "
                               "a DRAM on the west{} edge, the host's agent at the centre",
                               cols, rows, cols > 1 ? " and east" : "")};
  validate(c);
  return c;
}

HwConfig chip_random_config(const std::string& system) {
  HwConfig cfg;
  if (system == "mini" || system == "prototype") {
    apply_preset(cfg, system);
  } else {
    const std::size_t x = system.find('x');
    auto small = [](const std::string& d) { return d.size() == 1 && d[0] >= '1' && d[0] <= '6'; };
    if (x == std::string::npos || !small(system.substr(0, x)) || !small(system.substr(x + 1)))
      throw std::invalid_argument("expected mini, prototype or a mesh CxR with C and R from 1 to 6 (e.g. 3x3), got '" +
                                  system + "'");
    cfg.chip = mesh_chip(system[0] - '0', system[x + 1] - '0');
  }
  validate(cfg);
  return cfg;
}

namespace {

using stream_access::arm_spans;
using stream_access::ByteRanges;
using stream_access::Span;
using stream_access::sram_of;
using stream_access::track_unspecified;
using stream_access::value_reads;

// The generator's draws: splitmix64 (the same on every machine) with the ranges it needs.
struct Rng {
  SplitMix64 gen;
  std::uint64_t next() { return gen.next(); }
  // uniform enough in [lo, hi] (the modulo bias is irrelevant here, and the same everywhere)
  std::uint64_t range(std::uint64_t lo, std::uint64_t hi) { return lo + next() % (hi - lo + 1); }
  int irange(int lo, int hi) { return static_cast<int>(range(static_cast<std::uint64_t>(lo), static_cast<std::uint64_t>(hi))); }
  bool percent(int p) { return irange(0, 99) < p; }
  template <typename T>
  const T& pick(const std::vector<T>& v) { return v[static_cast<std::size_t>(range(0, v.size() - 1))]; }
};

// Every PE's SRAM, in zones (bytes; the SRAM must hold 128 KB):
constexpr std::uint32_t kScratchEnd = 0x10000;                           // its own commands only, reused
constexpr std::uint32_t kPublishBase = 0x10000, kPublishEnd = 0x14000;   // filled once per address, then read by any PE
constexpr std::uint32_t kReadOnlyBase = 0x14000, kReadOnlyEnd = 0x18000;  // never written
constexpr std::uint32_t kInboxBase = 0x18000;                            // slots, each written by one other PE
constexpr int kInboxSlots = 8;
constexpr std::uint32_t kInboxSlotBytes = 0x1000;
constexpr std::uint32_t kSramNeeded = kInboxBase + kInboxSlots * kInboxSlotBytes;
// Every DRAM: a read-only part, then a part per active PE that it alone writes, each address once.
constexpr std::uint64_t kDramReadOnly = 0x10000;
constexpr std::uint64_t kDramPrivate = 0x8000;

bool overlap(const Span& a, const Span& b) { return a.mem == b.mem && a.lo < b.hi && b.lo < a.hi; }
bool overlap(const std::vector<Span>& a, const std::vector<Span>& b) {
  for (const Span& x : a)
    for (const Span& y : b)
      if (overlap(x, y)) return true;
  return false;
}

MemoryRef dram_of(int d) { return {MemoryRef::Kind::Dram, d}; }

std::uint64_t extent(std::uint64_t row_stride, std::uint64_t plane_stride, std::uint32_t row_bytes, std::uint32_t rows,
                     std::uint32_t planes) {
  return std::uint64_t(planes - 1) * plane_stride + std::uint64_t(rows - 1) * row_stride + row_bytes;
}

// Data another PE may read: written by `writer` in its segment `segment` (between its Syncs number segment
// and segment + 1), the command finished; never written again.
struct Published {
  Span span;
  int writer = 0, segment = 0;
};

// An async command of a PE not yet known to be finished: what it touches, and what it publishes once it is.
struct Pending {
  std::vector<Span> touched, publishes;
};

struct PeState {
  int pe = 0, slot = 0;  // chip PE; index among the active PEs (its DRAM part)
  std::uint32_t scratch_at = 0, publish_at = kPublishBase;
  std::vector<std::uint64_t> dram_at;  // per DRAM, bytes of its part used
  int syncs = 0;
  std::vector<int> knows;  // per chip PE q: Syncs of q this PE is ordered after
  std::optional<Pending> dma, mla;
  std::uint64_t clocks = 0;  // estimated, serial
  ByteRanges unspecified;    // of its SRAM (track_unspecified): no command may read them
};

// A transfer's shape: planes x rows x row_bytes, and the strides on both sides.
struct Shape {
  std::uint32_t row_bytes = 1, rows = 1, planes = 1;
  std::uint64_t remote_row = 1, remote_plane = 1;
  std::uint32_t sram_row = 1, sram_plane = 1;
  std::uint64_t remote_extent() const { return extent(remote_row, remote_plane, row_bytes, rows, planes); }
  std::uint64_t sram_extent() const { return extent(sram_row, sram_plane, row_bytes, rows, planes); }
  std::uint64_t bytes() const { return std::uint64_t(row_bytes) * rows * planes; }
};

class Planner {
 public:
  Planner(const HwConfig& cfg, std::uint64_t seed, const ChipRandomOptions& opt)
      : cfg_(cfg), opt_(opt), rng_{SplitMix64{seed ^ 0x63686970726e64ull}} {}  // "chiprnd"

  TaskStream make(std::uint64_t seed) {
    if (static_cast<std::uint32_t>(cfg_.sram_bytes) < kSramNeeded)
      throw std::invalid_argument("random chip streams need PEs with at least 128 KB of SRAM");
    const int qpes = cfg_.chip.qpes();
    n_drams_ = static_cast<int>(cfg_.chip.drams.size());
    for (int q = 0; q < qpes; ++q)
      if (cfg_.chip.has_pes(q))
        for (int p = 0; p < kPesPerQpe; ++p) chip_pes_.push_back(q * kPesPerQpe + p);
    s_.name = fmt::format("chip_random {} seed {}", cfg_.chip.name, seed);
    s_.pe.assign(static_cast<std::size_t>(qpes * kPesPerQpe), {});
    choose_active();
    s_.dram_bytes = kDramReadOnly + kDramPrivate * active_.size();
    for (std::size_t i = 0; i < active_.size(); ++i) {
      PeState st;
      st.pe = active_[i];
      st.slot = static_cast<int>(i);
      st.dram_at.assign(static_cast<std::size_t>(n_drams_), 0);
      st.knows.assign(s_.pe.size(), 0);
      state_.emplace(st.pe, std::move(st));
    }
    // the Sync events, in one global order that every member meets them in
    const int events = active_.size() >= 2 ? rng_.irange(0, opt_.max_syncs) : 0;
    std::map<std::vector<int>, int> group_of;
    for (int e = 0; e < events; ++e) {
      std::vector<int> members;
      if (rng_.percent(30)) {
        members = active_;
      } else {
        std::vector<int> pool = active_;
        shuffle(pool);
        members.assign(pool.begin(), pool.begin() + rng_.irange(2, static_cast<int>(pool.size())));
        std::sort(members.begin(), members.end());
      }
      auto [it, fresh] = group_of.emplace(members, static_cast<int>(s_.sync_groups.size()));
      if (fresh) s_.sync_groups.push_back(members);
      for (int m : members) {
        segment(state_.at(m));
        end_segment(state_.at(m));
        StreamCommand c;
        c.kind = CommandKind::Sync;
        c.operation = "SYNC";
        c.sync_group = it->second;
        cmds(m).push_back(c);
      }
      meet(members);
    }
    for (int p : active_) segment(state_.at(p));
    if (s_.sync_groups.empty()) s_.sync_groups.push_back(active_);  // (no Syncs: group 0 must not name idle PEs)
    return std::move(s_);
  }

 private:
  const HwConfig& cfg_;
  ChipRandomOptions opt_;
  Rng rng_;
  TaskStream s_;
  int n_drams_ = 1;
  std::vector<int> chip_pes_, active_;
  std::map<int, PeState> state_;
  std::vector<Published> published_;
  std::map<int, std::array<int, kInboxSlots>> inbox_writer_;   // per owner PE: the writer of each slot (-1: free)
  std::map<std::pair<int, int>, std::uint32_t> inbox_used_;    // (owner, slot): bytes used

  std::vector<StreamCommand>& cmds(int pe) { return s_.pe[static_cast<std::size_t>(pe)]; }

  template <typename T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[static_cast<std::size_t>(rng_.range(0, i - 1))]);
  }

  // A random subset of the chip's PEs: the PEs of a few QPEs, so that several share each router.
  void choose_active() {
    std::vector<int> qpes;
    for (int pe : chip_pes_)
      if (pe % kPesPerQpe == 0) qpes.push_back(pe / kPesPerQpe);
    shuffle(qpes);
    qpes.resize(static_cast<std::size_t>(rng_.irange(1, static_cast<int>(qpes.size()))));
    std::vector<int> pool;
    for (int q : qpes)
      for (int p = 0; p < kPesPerQpe; ++p) pool.push_back(q * kPesPerQpe + p);
    shuffle(pool);
    const int lo = std::min(opt_.min_pes, static_cast<int>(pool.size()));
    const int hi = std::max(lo, std::min(opt_.max_pes, static_cast<int>(pool.size())));
    active_.assign(pool.begin(), pool.begin() + rng_.irange(lo, hi));
    std::sort(active_.begin(), active_.end());
  }

  // ------------------------------------------------------------------ ordering

  // What a Sync of `members` makes each of them know: everything every member did before it.
  void meet(const std::vector<int>& members) {
    std::vector<int> joined(s_.pe.size(), 0);
    for (int m : members)
      for (std::size_t q = 0; q < joined.size(); ++q) joined[q] = std::max(joined[q], state_.at(m).knows[q]);
    for (int m : members) joined[static_cast<std::size_t>(m)] = std::max(joined[static_cast<std::size_t>(m)], state_.at(m).syncs + 1);
    for (int m : members) {
      state_.at(m).knows = joined;
      ++state_.at(m).syncs;
    }
  }

  bool visible(const PeState& p, const Published& r) const {
    return r.writer == p.pe || p.knows[static_cast<std::size_t>(r.writer)] >= r.segment + 1;
  }

  void finish(PeState& p, std::optional<Pending>& pending) {
    if (!pending) return;
    for (const Span& sp : pending->publishes) published_.push_back({sp, p.pe, p.syncs});
    pending.reset();
  }
  void wait(PeState& p, CommandKind kind) {
    std::optional<Pending>& pending = kind == CommandKind::WaitDma ? p.dma : p.mla;
    StreamCommand c;
    c.kind = kind;
    c.operation = "WAIT";
    cmds(p.pe).push_back(c);
    finish(p, pending);
  }

  // Appends `c` to PE p's commands, after the waits that keep it off the regions of the PE's unfinished async
  // commands (an engine's next command waits for the engine itself). `touched`: every region it reads or
  // writes; `publishes`: what other PEs may read once it has finished.
  void emit(PeState& p, StreamCommand c, const std::vector<Span>& touched, const std::vector<Span>& publishes,
            std::uint64_t clocks) {
    const bool is_dma = c.kind == CommandKind::DmaLoad || c.kind == CommandKind::DmaStore;
    const bool is_mla = c.kind == CommandKind::Mla;
    if (p.dma && overlap(touched, p.dma->touched) && !is_dma) wait(p, CommandKind::WaitDma);
    if (p.mla && overlap(touched, p.mla->touched) && !is_mla) wait(p, CommandKind::WaitMla);
    if (is_dma) finish(p, p.dma);
    if (is_mla) finish(p, p.mla);
    for (const Span& r : value_reads(c, p.pe, cfg_))
      if (r.mem == sram_of(p.pe) && p.unspecified.overlaps(r.lo, r.hi))
        throw std::logic_error("random_chip_stream: PE " + std::to_string(p.pe) + " would read bytes it left unspecified");
    track_unspecified(c, p.pe, cfg_, p.unspecified);
    cmds(p.pe).push_back(c);
    p.clocks += clocks;
    if (c.async) (is_dma ? p.dma : p.mla) = Pending{touched, publishes};
    else
      for (const Span& sp : publishes) published_.push_back({sp, p.pe, p.syncs});
  }

  // Before a Sync: sometimes the PE waits for its engines, sometimes an async command runs on past it.
  void end_segment(PeState& p) {
    if (p.dma && rng_.percent(60)) wait(p, CommandKind::WaitDma);
    if (p.mla && rng_.percent(60)) wait(p, CommandKind::WaitMla);
  }

  // ------------------------------------------------------------------ places

  std::uint32_t misalign(bool aligned) { return aligned ? 0 : static_cast<std::uint32_t>(rng_.range(0, 15)); }

  // `bytes` of the PE's scratch zone, fresh: when it is full, the PE first waits for its engines and starts over.
  std::uint32_t scratch(PeState& p, std::uint64_t bytes, bool aligned) {
    const std::uint32_t off = misalign(aligned);
    if (p.scratch_at + off + bytes > kScratchEnd) {
      if (p.dma) wait(p, CommandKind::WaitDma);
      if (p.mla) wait(p, CommandKind::WaitMla);
      p.scratch_at = 0;
    }
    const std::uint32_t at = p.scratch_at + off;
    p.scratch_at = static_cast<std::uint32_t>(align_up(at + bytes, 16));
    return at;
  }
  // Room for `bytes` of fresh scratch in several pieces, so that none of them starts the zone over.
  void reserve(PeState& p, std::uint64_t bytes) {
    if (p.scratch_at + bytes + 64 > kScratchEnd) {
      if (p.dma) wait(p, CommandKind::WaitDma);
      if (p.mla) wait(p, CommandKind::WaitMla);
      p.scratch_at = 0;
    }
  }
  // Fresh scratch read before anything writes it holds whatever was there: if that includes bytes an MLA left
  // unspecified, the PE loads over them first.
  void make_defined(PeState& p, std::uint32_t lo, std::uint64_t bytes) {
    if (!p.unspecified.overlaps(lo, lo + bytes)) return;
    Shape s;
    s.row_bytes = static_cast<std::uint32_t>(bytes);
    s.remote_row = s.remote_plane = s.sram_row = s.sram_plane = s.row_bytes;
    const auto [mem, addr] = readable(p, bytes);
    transfer(p, CommandKind::DmaLoad, mem, addr, lo, s, "FILL", false);
  }
  std::optional<std::uint32_t> publish_zone(PeState& p, std::uint64_t bytes, bool aligned) {
    const std::uint32_t at = p.publish_at + misalign(aligned);
    if (at + bytes > kPublishEnd) return std::nullopt;
    p.publish_at = static_cast<std::uint32_t>(align_up(at + bytes, 16));
    return at;
  }
  std::optional<std::uint64_t> own_dram(PeState& p, int d, std::uint64_t bytes) {
    std::uint64_t& used = p.dram_at[static_cast<std::size_t>(d)];
    const std::uint64_t at = used + misalign(false);
    if (at + bytes > kDramPrivate) return std::nullopt;
    used = at + bytes;
    return kDramReadOnly + kDramPrivate * static_cast<std::uint64_t>(p.slot) + at;
  }
  // `bytes` in a slot of `owner`'s inbox that `writer` alone writes
  std::optional<std::uint32_t> inbox(int writer, int owner, std::uint64_t bytes) {
    auto [it, fresh] = inbox_writer_.try_emplace(owner);
    if (fresh) it->second.fill(-1);
    for (int k = 0; k < kInboxSlots; ++k) {
      int& w = it->second[static_cast<std::size_t>(k)];
      if (w != -1 && w != writer) continue;
      std::uint32_t& used = inbox_used_[{owner, k}];
      const std::uint32_t at = used + misalign(false);
      if (at + bytes > kInboxSlotBytes) continue;
      w = writer;
      used = static_cast<std::uint32_t>(at + bytes);
      return kInboxBase + static_cast<std::uint32_t>(k) * kInboxSlotBytes + at;
    }
    return std::nullopt;
  }
  int other_pe(int pe) {
    for (;;) {
      const int q = rng_.pick(chip_pes_);
      if (q != pe) return q;
    }
  }

  // ------------------------------------------------------------------ transfers

  // A random transfer shape: many narrow rows (1..16 bytes), rows of tens to hundreds of bytes, or
  // multi-KB rows; strides equal to the row or with gaps, on each side on its own.
  Shape draw_shape() {
    Shape s;
    const int band = rng_.irange(0, 99);
    if (band < 45) {
      s.row_bytes = rng_.irange(1, 16);
      s.rows = rng_.irange(1, 48);
      s.planes = rng_.percent(30) ? rng_.irange(2, 3) : 1;
    } else if (band < 80) {
      s.row_bytes = rng_.irange(17, 300);
      s.rows = rng_.irange(1, 12);
      s.planes = rng_.percent(20) ? 2 : 1;
    } else {
      s.row_bytes = rng_.irange(512, 4096);
      s.rows = rng_.percent(60) ? 1 : 2;
    }
    auto gap = [&] { return rng_.percent(50) ? 0u : static_cast<std::uint32_t>(rng_.irange(1, 40)); };
    s.remote_row = s.row_bytes + gap();
    s.sram_row = s.row_bytes + gap();
    s.remote_plane = s.remote_row * s.rows + gap();
    s.sram_plane = s.sram_row * s.rows + gap();
    return s;
  }
  // The same shape cut down until both sides fit `limit` bytes (a single row at worst).
  static Shape fit(Shape s, std::uint64_t limit) {
    while (s.planes > 1 && std::max(s.remote_extent(), std::uint64_t(s.sram_extent())) > limit) --s.planes;
    while (s.rows > 1 && std::max(s.remote_extent(), std::uint64_t(s.sram_extent())) > limit) --s.rows;
    if (std::max(s.remote_extent(), std::uint64_t(s.sram_extent())) > limit) {
      s.row_bytes = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, limit));
      s.remote_row = s.sram_row = s.row_bytes;
      s.remote_plane = s.sram_plane = s.row_bytes;
    }
    return s;
  }

  static std::uint64_t dma_clocks(const Shape& s) { return 40 + s.bytes() / 8 + 6ull * s.rows * s.planes; }

  StreamCommand dma_command(CommandKind kind, MemoryRef remote, std::uint64_t remote_addr, std::uint32_t sram_addr,
                            const Shape& s, const std::string& op) {
    DmaTransfer t;
    t.remote = remote;
    t.dram_addr = remote_addr;
    t.dram_row_stride = s.remote_row;
    t.dram_plane_stride = s.remote_plane;
    t.sram_addr = sram_addr;
    t.sram_row_stride = s.sram_row;
    t.sram_plane_stride = s.sram_plane;
    t.row_bytes = s.row_bytes;
    t.rows = s.rows;
    t.planes = s.planes;
    StreamCommand c = s2::dma_command(kind, op, t);
    c.async = rng_.percent(30);
    return c;
  }

  // A transfer between the PE's SRAM at `sram_addr` and `remote`; `publish` says which of its sides other PEs
  // may read once it has finished (the far side of a store, or the near side of a load into the publish zone).
  void transfer(PeState& p, CommandKind kind, MemoryRef remote, std::uint64_t remote_addr, std::uint32_t sram_addr,
                const Shape& s, const std::string& op, bool publish) {
    const Span far{remote, remote_addr, remote_addr + s.remote_extent()};
    const Span near{sram_of(p.pe), sram_addr, sram_addr + s.sram_extent()};
    std::vector<Span> publishes;
    if (publish) publishes.push_back(kind == CommandKind::DmaStore ? far : near);
    emit(p, dma_command(kind, remote, remote_addr, sram_addr, s, op), {far, near}, publishes, dma_clocks(s));
  }

  // Where a load may read `bytes` from that nobody writes while it runs: a DRAM's read-only part, another
  // PE's read-only zone, or data published to this PE. The remote memory and its address.
  std::pair<MemoryRef, std::uint64_t> readable(PeState& p, std::uint64_t bytes) {
    const int kind = rng_.irange(0, 99);
    if (kind < 30) {
      std::vector<const Published*> fits;
      for (const Published& r : published_)
        if (visible(p, r) && r.span.size() >= bytes && !(r.span.mem == sram_of(p.pe))) fits.push_back(&r);
      if (!fits.empty()) {
        const Published& r = *rng_.pick(fits);
        return {r.span.mem, r.span.lo + rng_.range(0, r.span.size() - bytes)};
      }
    }
    if (kind < 55 && bytes <= kReadOnlyEnd - kReadOnlyBase) {
      return {sram_of(other_pe(p.pe)), kReadOnlyBase + rng_.range(0, kReadOnlyEnd - kReadOnlyBase - bytes)};
    }
    return {dram_of(rng_.irange(0, n_drams_ - 1)), rng_.range(0, kDramReadOnly - bytes)};
  }

  // ------------------------------------------------------------------ actions

  // A load into fresh scratch.
  void load(PeState& p) {
    const Shape s = fit(draw_shape(), kReadOnlyEnd - kReadOnlyBase);
    const auto [mem, addr] = readable(p, s.remote_extent());
    transfer(p, CommandKind::DmaLoad, mem, addr, scratch(p, s.sram_extent(), false), s, "LOAD", false);
  }

  // Where a store's data comes from in the PE's own SRAM: fresh scratch, its read-only zone, or published
  // data in its SRAM (its publish zone, or what other PEs put in its inbox).
  std::uint32_t store_source(PeState& p, std::uint64_t bytes) {
    const int kind = rng_.irange(0, 99);
    if (kind < 30) {
      std::vector<const Published*> mine;
      for (const Published& r : published_)
        if (r.span.mem == sram_of(p.pe) && visible(p, r) && r.span.size() >= bytes) mine.push_back(&r);
      if (!mine.empty()) {
        const Published& r = *rng_.pick(mine);
        return static_cast<std::uint32_t>(r.span.lo + rng_.range(0, r.span.size() - bytes));
      }
    }
    if (kind < 55) return static_cast<std::uint32_t>(kReadOnlyBase + rng_.range(0, kReadOnlyEnd - kReadOnlyBase - bytes));
    const std::uint32_t at = scratch(p, bytes, false);
    make_defined(p, at, bytes);
    return at;
  }

  // A store to the PE's part of a DRAM.
  void store(PeState& p) {
    const Shape s = fit(draw_shape(), kReadOnlyEnd - kReadOnlyBase);
    const int d = rng_.irange(0, n_drams_ - 1);
    const std::optional<std::uint64_t> at = own_dram(p, d, s.remote_extent());
    if (!at) return;
    transfer(p, CommandKind::DmaStore, dram_of(d), *at, store_source(p, s.sram_extent()), s, "STORE", true);
  }

  // A store into another PE's SRAM (a storage QPE's, a neighbour's, any): a slot of its inbox.
  void store_to_sram(PeState& p) {
    const Shape s = fit(draw_shape(), kInboxSlotBytes / 2);
    const int owner = other_pe(p.pe);
    const std::optional<std::uint32_t> at = inbox(p.pe, owner, s.remote_extent());
    if (!at) return;
    transfer(p, CommandKind::DmaStore, sram_of(owner), *at, store_source(p, s.sram_extent()), s, "PUT", true);
  }

  // A load into the PE's publish zone, for other PEs to read later (by DMA, or as an MLA's operand A).
  void publish(PeState& p) {
    const Shape s = fit(draw_shape(), 2048);
    const std::optional<std::uint32_t> at = publish_zone(p, s.sram_extent(), rng_.percent(50));
    if (!at) return;
    const auto [mem, addr] = readable(p, s.remote_extent());
    transfer(p, CommandKind::DmaLoad, mem, addr, *at, s, "PUBLISH", true);
  }

  Task draw_task() {
    for (;;) {
      Task t;
      if (rng_.percent(55)) {
        t.op = Op::Conv;
        const int f[] = {1, 2, 3, 5};
        ConvShape& c = t.conv;
        c.Wf = f[rng_.irange(0, 3)];
        c.Hf = rng_.percent(75) ? c.Wf : f[rng_.irange(0, 3)];
        c.Wi = rng_.irange(c.Wf, c.Wf + 36);
        c.Hi = rng_.irange(c.Hf, c.Hf + 4);
        c.D = rng_.irange(1, 6);
        c.C = rng_.irange(1, 8);
      } else {
        t.op = Op::Mm;
        MmShape& m = t.mm;
        m.W_A = rng_.irange(1, 64);
        m.H_A = rng_.irange(1, 8);
        m.W_B = rng_.irange(1, 48);
        m.H_B = m.W_A;
      }
      if (mla_work_cycles(t, cfg_) <= 2500) return t;
    }
  }

  // A load of `bytes` laid out as `s`'s SRAM side at `sram_addr`, from somewhere readable (an MLA's operand).
  void load_operand(PeState& p, std::uint32_t sram_addr, Shape s, const std::string& op) {
    s.remote_row = s.row_bytes + (rng_.percent(50) ? 0 : rng_.irange(1, 24));
    s.remote_plane = s.remote_row * s.rows + (rng_.percent(50) ? 0 : rng_.irange(1, 24));
    const auto [mem, addr] = readable(p, s.remote_extent());
    transfer(p, CommandKind::DmaLoad, mem, addr, sram_addr, s, op, false);
  }

  // An MLA task as the distributor emits one: operands in the PE's SRAM (operand A perhaps in a neighbour's,
  // in its read-only zone or data it published), often loaded just before; results often through the ARM
  // and out by DMA.
  void mla(PeState& p) {
    Task t = draw_task();
    const SramLayout l = sram_layout(t, cfg_);
    reserve(p, std::uint64_t(l.a_bytes) + l.b_bytes + 2ull * l.o_bytes);  // (a quantization's output at most o_bytes)
    const int qpe0 = p.pe / kPesPerQpe * kPesPerQpe;
    t.a_src_shift = rng_.percent(50) ? -1 : rng_.irange(0, kPesPerQpe - 1);
    const int a_pe = qpe0 + t.a_source_pe(p.pe % kPesPerQpe);
    const std::string op = t.op == Op::Conv ? "CONV" : "MM";
    const std::uint32_t a_base = operand_a(p, l, a_pe, op);
    const std::uint32_t b_base = operand_b(p, t, l, op);
    const std::uint32_t o_base = scratch(p, l.o_bytes, true);
    StreamCommand c = mla_command(op, t, a_base, b_base, o_base);
    c.async = rng_.percent(40);
    emit(p, c,
         {{sram_of(a_pe), a_base, a_base + l.a_bytes}, {sram_of(p.pe), b_base, b_base + l.b_bytes},
          {sram_of(p.pe), o_base, o_base + l.o_bytes}},
         {}, 60 + mla_work_cycles(t, cfg_));
    results(p, t, l, o_base, op);
  }

  // Where the task's operand A is (in PE a_pe's SRAM): in the PE's own scratch, loaded there or already there;
  // in the neighbour, data it published that this PE may read, or its read-only zone.
  std::uint32_t operand_a(PeState& p, const SramLayout& l, int a_pe, const std::string& op) {
    std::uint32_t a_base = 0;
    if (a_pe == p.pe) {
      a_base = scratch(p, l.a_bytes, true);
      if (rng_.percent(60)) {
        Shape s;
        s.row_bytes = l.a_bytes;
        s.sram_row = s.sram_plane = l.a_bytes;
        load_operand(p, a_base, s, op + "_A");
      } else {
        make_defined(p, a_base, l.a_bytes);
      }
    } else {
      std::vector<std::uint32_t> places;
      for (const Published& r : published_) {
        if (!(r.span.mem == sram_of(a_pe)) || !visible(p, r)) continue;
        const std::uint64_t lo = align_up(r.span.lo, 16);
        if (lo + l.a_bytes <= r.span.hi) places.push_back(static_cast<std::uint32_t>(lo));
      }
      if (!places.empty() && rng_.percent(70)) a_base = rng_.pick(places);
      else a_base = kReadOnlyBase + 16 * static_cast<std::uint32_t>(rng_.range(0, (kReadOnlyEnd - kReadOnlyBase - l.a_bytes) / 16));
    }
    return a_base;
  }

  // Where operand B is: in the PE's scratch, loaded there as the layout wants it, or already there.
  std::uint32_t operand_b(PeState& p, const Task& t, const SramLayout& l, const std::string& op) {
    const std::uint32_t b_base = scratch(p, l.b_bytes, true);
    if (rng_.percent(60)) {
      Shape s;
      if (t.op == Op::Conv) {
        s.row_bytes = static_cast<std::uint32_t>(t.conv.Wi);
        s.rows = static_cast<std::uint32_t>(t.conv.Hi);
        s.planes = static_cast<std::uint32_t>(t.conv.D);
        s.sram_plane = l.b_plane_stride;
      } else {
        s.row_bytes = static_cast<std::uint32_t>(t.mm.W_B);
        s.rows = static_cast<std::uint32_t>(t.mm.H_B);
        s.sram_plane = l.b_row_stride * s.rows;
      }
      s.sram_row = l.b_row_stride;
      load_operand(p, b_base, s, op + "_B");
    } else {
      make_defined(p, b_base, l.b_bytes);
    }
    return b_base;
  }

  // The results at `o_base`: sometimes through an ARM operation (a ReLU in place, or a quantization to int8
  // elsewhere), often out by DMA to the PE's part of a DRAM or another PE's inbox.
  void results(PeState& p, const Task& t, const SramLayout& l, std::uint32_t o_base, const std::string& op) {
    // planes x height x width int32, o_row_stride results apart
    const std::uint32_t planes = t.op == Op::Conv ? static_cast<std::uint32_t>(t.conv.C) : 1;
    const std::uint32_t height = static_cast<std::uint32_t>(t.op == Op::Conv ? t.conv.Ho() : t.mm.H_A);
    const std::uint32_t width = static_cast<std::uint32_t>(t.op == Op::Conv ? t.conv.Wo() : t.mm.W_B);
    const std::uint32_t row = l.o_row_stride * 4;
    std::uint32_t out = o_base, out_row = row, out_plane = row * height, pixel = 4;
    const int after = rng_.irange(0, 99);
    if (after < 30) {
      ArmCommand a;
      a.kind = ArmOpKind::Relu32;
      a.src = o_base;
      a.planes = planes;
      a.height = height;
      a.width = width;
      a.src_row_stride = row;
      arm(p, a, "ACTI");
    } else if (after < 60) {
      ArmCommand a;
      a.kind = ArmOpKind::Quantize;
      a.src = o_base;
      a.planes = planes;
      a.height = height;
      a.width = width;
      a.src_row_stride = row;
      a.dst_row_stride = width + (rng_.percent(50) ? 0 : static_cast<std::uint32_t>(rng_.irange(1, 9)));
      a.shift = rng_.irange(0, 14);
      a.dst = scratch(p, std::uint64_t(a.dst_row_stride) * height * planes, false);
      arm(p, a, "QUAN");
      out = a.dst;
      out_row = a.dst_row_stride;
      out_plane = a.dst_row_stride * height;
      pixel = 1;
    }
    if (rng_.percent(65)) {
      Shape s;
      s.row_bytes = width * pixel;
      s.rows = height;
      s.planes = planes;
      s.sram_row = out_row;
      s.sram_plane = out_plane;
      s.remote_row = s.row_bytes + (rng_.percent(50) ? 0 : rng_.irange(1, 16));
      s.remote_plane = s.remote_row * s.rows + (rng_.percent(50) ? 0 : rng_.irange(1, 16));
      if (rng_.percent(75)) {
        const int d = rng_.irange(0, n_drams_ - 1);
        if (const auto at = own_dram(p, d, s.remote_extent()))
          transfer(p, CommandKind::DmaStore, dram_of(d), *at, out, s, op + "_OUT", true);
      } else {
        const int owner = other_pe(p.pe);
        if (const auto at = inbox(p.pe, owner, s.remote_extent()))
          transfer(p, CommandKind::DmaStore, sram_of(owner), *at, out, s, op + "_OUT", true);
      }
    }
  }

  void arm(PeState& p, const ArmCommand& a, const std::string& op) {
    const StreamCommand c = arm_command(op, a);
    const std::vector<Span> touched = arm_spans(a, p.pe);
    // the PE's clock budget is an estimate that shapes the stream, not a result: Table 5.9's averages, whatever the
    // configuration charges, so that the committed suite does not change with the ARM's clocks
    emit(p, c, touched, {}, 20 + arm_op_cycles(a, ArmOpClocks{}));
  }
  // An element-wise operation of its own on fresh scratch (whatever bytes are there).
  void arm_alone(PeState& p) {
    ArmCommand a;
    const int kind = rng_.irange(0, 5);
    a.planes = static_cast<std::uint32_t>(rng_.irange(1, 3));
    a.height = static_cast<std::uint32_t>(rng_.irange(3, 10));
    a.width = static_cast<std::uint32_t>(rng_.irange(3, 40));
    auto gap = [&] { return rng_.percent(50) ? 0u : static_cast<std::uint32_t>(rng_.irange(1, 12)); };
    std::uint32_t pixel = 1;
    switch (kind) {
      case 0:
        a.kind = ArmOpKind::Relu8;
        break;
      case 1:
        a.kind = ArmOpKind::Pad;
        a.pad_left = static_cast<std::uint32_t>(rng_.irange(0, 1));
        a.pad_right = static_cast<std::uint32_t>(rng_.irange(0, 1));
        a.pad_top = static_cast<std::uint32_t>(rng_.irange(0, 2));
        a.pad_bottom = static_cast<std::uint32_t>(rng_.irange(0, 1));
        break;
      case 2:
        a.kind = rng_.percent(50) ? ArmOpKind::MaxPool8 : ArmOpKind::AvgPool8;
        a.window = rng_.irange(2, 3);
        a.stride = rng_.percent(50) ? 0 : rng_.irange(1, a.window);
        break;
      case 3:
        a.kind = ArmOpKind::AddInt8;
        break;
      case 4:
        a.kind = ArmOpKind::AddInt32;
        pixel = 4;
        break;
      default:
        a.kind = ArmOpKind::Relu32;
        a.col_step = static_cast<std::uint32_t>(rng_.irange(1, 2));
        pixel = 4;
        break;
    }
    a.src_row_stride = pixel * ((a.width - 1) * a.col_step + 1) + gap();
    reserve(p, 2ull * (a.src_row_stride + 12) * a.height * a.planes);
    a.src = scratch(p, std::uint64_t(a.src_row_stride) * a.height * a.planes, pixel == 4);
    if (a.kind != ArmOpKind::Pad) make_defined(p, a.src, std::uint64_t(a.src_row_stride) * a.height * a.planes);
    if (a.kind != ArmOpKind::Relu8 && a.kind != ArmOpKind::Pad && a.kind != ArmOpKind::Relu32) {
      std::uint32_t rows = a.height, cols = a.width;
      if (a.kind == ArmOpKind::MaxPool8 || a.kind == ArmOpKind::AvgPool8) {
        const std::uint32_t st = static_cast<std::uint32_t>(a.pool_stride()), w = static_cast<std::uint32_t>(a.window);
        rows = (a.height - w) / st + 1;
        cols = (a.width - w) / st + 1;
      }
      a.dst_row_stride = pixel * ((cols - 1) * a.col_step + 1) + gap();
      a.dst = scratch(p, std::uint64_t(a.dst_row_stride) * rows * a.planes, pixel == 4);
      if (a.kind == ArmOpKind::AddInt8 || a.kind == ArmOpKind::AddInt32)
        make_defined(p, a.dst, std::uint64_t(a.dst_row_stride) * rows * a.planes);
    }
    arm(p, a, "ARM");
  }

  // What a PE does between two of its Syncs (or after its last), within its clock budget.
  void segment(PeState& p) {
    const int actions = rng_.irange(0, opt_.max_actions_per_segment);
    for (int i = 0; i < actions && p.clocks < opt_.pe_clock_budget; ++i) {
      const int a = rng_.irange(0, 99);
      if (a < 18) load(p);
      else if (a < 34) store(p);
      else if (a < 46) store_to_sram(p);
      else if (a < 56) publish(p);
      else if (a < 80) mla(p);
      else if (a < 90) arm_alone(p);
      else if (p.dma) wait(p, CommandKind::WaitDma);
      else if (p.mla) wait(p, CommandKind::WaitMla);
      else load(p);
    }
  }
};

}  // namespace

TaskStream random_chip_stream(const HwConfig& cfg, std::uint64_t seed, const ChipRandomOptions& opt) {
  return Planner(cfg, seed, opt).make(seed);
}

SystemMemory random_chip_memory(const HwConfig& cfg, const TaskStream& s, std::uint64_t seed) {
  SplitMix64 gen{seed ^ 0x6d656d6f7279ull};  // "memory"
  auto fill = [&](std::vector<std::uint8_t>& v) {
    for (std::size_t i = 0; i < v.size(); i += 8) {
      const std::uint64_t x = gen.next();
      for (std::size_t k = 0; k < 8 && i + k < v.size(); ++k) v[i + k] = static_cast<std::uint8_t>(x >> (8 * k));
    }
  };
  SystemMemory m;
  m.drams.assign(cfg.chip.drams.size(), std::vector<std::uint8_t>(s.dram_bytes));
  for (auto& d : m.drams) fill(d);
  for (int q = 0; q < cfg.chip.qpes(); ++q)
    if (cfg.chip.has_pes(q))
      for (int p = 0; p < kPesPerQpe; ++p) fill(m.sram[q * kPesPerQpe + p] = std::vector<std::uint8_t>(static_cast<std::size_t>(cfg.sram_bytes)));
  return m;
}

}  // namespace s2
