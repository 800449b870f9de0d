#include "harness/stimulus/stream_checks.h"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "harness/stimulus/stream_access.h"

namespace s2 {

namespace {

using stream_access::Access;
using stream_access::access_of;
using stream_access::ByteRanges;
using stream_access::mla_padding_lanes;
using stream_access::Span;
using stream_access::track_unspecified;
using stream_access::value_reads;

bool any_overlap(std::vector<Span> a, std::vector<Span> b) {
  auto by_lo = [](const Span& x, const Span& y) { return x.lo < y.lo; };
  std::sort(a.begin(), a.end(), by_lo);
  std::sort(b.begin(), b.end(), by_lo);
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].lo < b[j].hi && b[j].lo < a[i].hi) return true;
    (a[i].hi < b[j].hi) ? ++i : ++j;
  }
  return false;
}

std::string command_name(const TaskStream& s, int pe, std::size_t k) {
  const StreamCommand& c = s.pe[static_cast<std::size_t>(pe)][k];
  return fmt::format("PE {} command {} ({}{}{})", pe, k, to_string(c.kind), c.async ? " async" : "",
                     c.operation.empty() ? "" : " " + c.operation);
}

// The order a stream's Syncs put between its PEs' commands. Points of PE p: 2k is the start of its command k,
// 2k + 1 its end; 2 * size the PE's end.
class SyncOrder {
 public:
  // The Syncs met in the only order they can be (each group's Sync when all its members have reached it).
  explicit SyncOrder(const TaskStream& s) : n_(s.pe.size()), sync_at_(n_), known_(n_), next_(n_, 0) {
    const std::size_t groups = s.sync_groups.empty() ? 1 : s.sync_groups.size();
    for (std::size_t p = 0; p < n_; ++p)
      for (std::size_t k = 0; k < s.pe[p].size(); ++k)
        if (s.pe[p][k].kind == CommandKind::Sync) sync_at_[p].push_back(k);
    for (bool progress = true; progress;) {
      progress = false;
      for (std::size_t g = 0; g < groups; ++g) progress = meet(s, static_cast<int>(g)) || progress;
    }
  }
  // A Sync some member never reaches (the stream would hang there); "" if every Sync is met.
  std::string unmet(const TaskStream& s) const {
    for (std::size_t p = 0; p < n_; ++p)
      if (next_[p] < sync_at_[p].size()) return command_name(s, static_cast<int>(p), sync_at_[p][next_[p]]) + ": a Sync that is never met";
    return "";
  }
  // Point `a` of PE p is before point `b` of PE q.
  bool before(std::size_t p, long a, std::size_t q, long b) const {
    if (p == q) return a <= b;
    std::size_t j = 0;  // Syncs of q that end at or before b
    while (j < sync_at_[q].size() && 2 * static_cast<long>(sync_at_[q][j]) + 1 <= b) ++j;
    return j > 0 && known_[q][j - 1][p] >= a;
  }

 private:
  // Group g's next Sync, if every member has reached it: each member knows what any of them knew.
  bool meet(const TaskStream& s, int g) {
    const std::vector<int> members = s.sync_group_members(g);
    bool ready = !members.empty();
    for (int m : members) {
      const std::size_t p = static_cast<std::size_t>(m);
      ready = ready && next_[p] < sync_at_[p].size() && s.pe[p][sync_at_[p][next_[p]]].sync_group == g;
    }
    if (!ready) return false;
    std::vector<long> joined(n_, -1);
    for (int m : members) {
      const std::size_t p = static_cast<std::size_t>(m);
      const std::vector<long> k = next_[p] == 0 ? std::vector<long>(n_, -1) : known_[p][next_[p] - 1];
      for (std::size_t q = 0; q < n_; ++q) joined[q] = std::max(joined[q], k[q]);
      joined[p] = std::max(joined[p], 2 * static_cast<long>(sync_at_[p][next_[p]]));
    }
    for (int m : members) {
      const std::size_t p = static_cast<std::size_t>(m);
      known_[p].push_back(joined);
      ++next_[p];
    }
    return true;
  }

  std::size_t n_;
  std::vector<std::vector<std::size_t>> sync_at_;   // per PE, its Syncs' command indices
  std::vector<std::vector<std::vector<long>>> known_;  // known_[p][j]: after p's j-th Sync, the latest point of each
                                                       // PE ordered before it (-1: none)
  std::vector<std::size_t> next_;                   // per PE, its Syncs met so far
};

// A command that touches memory, from its start to the point its PE knows it finished.
struct CommandSpan {
  std::size_t pe, k;
  long start, end;
  Access access;
};

// Every command but Syncs and waits as a span. An async command lasts until its PE waits for its engine, or
// the engine's next command (which waits for it before it starts), or the PE's end.
std::vector<CommandSpan> command_spans(const TaskStream& s, const HwConfig& cfg) {
  std::vector<CommandSpan> acts;
  for (std::size_t p = 0; p < s.pe.size(); ++p) {
    const auto& cmds = s.pe[p];
    for (std::size_t k = 0; k < cmds.size(); ++k) {
      const StreamCommand& c = cmds[k];
      if (c.kind == CommandKind::Sync || c.kind == CommandKind::WaitDma || c.kind == CommandKind::WaitMla) continue;
      CommandSpan a{p, k, 2 * static_cast<long>(k), 2 * static_cast<long>(k) + 1, access_of(c, static_cast<int>(p), cfg)};
      const bool dma = c.kind == CommandKind::DmaLoad || c.kind == CommandKind::DmaStore;
      if (c.async) {
        a.end = 2 * static_cast<long>(cmds.size());
        for (std::size_t j = k + 1; j < cmds.size(); ++j) {
          const CommandKind w = cmds[j].kind;
          if ((dma && (w == CommandKind::DmaLoad || w == CommandKind::DmaStore)) || (!dma && w == CommandKind::Mla)) {
            a.end = 2 * static_cast<long>(j);  // the engine's next command waits for it before it starts
            break;
          }
          if (w == (dma ? CommandKind::WaitDma : CommandKind::WaitMla)) {
            a.end = 2 * static_cast<long>(j) + 1;
            break;
          }
        }
      }
      acts.push_back(std::move(a));
    }
  }
  return acts;
}

// Per memory (kind, index): the lowest and highest byte of some spans, to pass over pairs that cannot meet.
using Bounds = std::map<std::pair<int, int>, std::pair<std::uint64_t, std::uint64_t>>;
Bounds bounds(const std::vector<Span>& v) {
  Bounds b;
  for (const Span& x : v) {
    auto [it, fresh] = b.try_emplace({static_cast<int>(x.mem.kind), x.mem.index}, x.lo, x.hi);
    if (!fresh) it->second = {std::min(it->second.first, x.lo), std::max(it->second.second, x.hi)};
  }
  return b;
}

// The memory in which spans `a` and `b` (with their bounds) overlap; "" if they do not.
std::string conflict(const Bounds& ba, const std::vector<Span>& a, const Bounds& bb, const std::vector<Span>& b) {
  for (const auto& [mem, r] : ba) {
    const auto it = bb.find(mem);
    if (it == bb.end() || r.first >= it->second.second || it->second.first >= r.second) continue;
    std::vector<Span> x, y;
    for (const Span& sp : a)
      if (std::pair<int, int>{static_cast<int>(sp.mem.kind), sp.mem.index} == mem) x.push_back(sp);
    for (const Span& sp : b)
      if (std::pair<int, int>{static_cast<int>(sp.mem.kind), sp.mem.index} == mem) y.push_back(sp);
    if (any_overlap(x, y)) return to_string(x.front().mem);
  }
  return std::string();
}

}  // namespace

std::string find_stream_race(const TaskStream& s, const HwConfig& cfg) {
  const SyncOrder order(s);
  if (std::string unmet = order.unmet(s); !unmet.empty()) return unmet;
  const std::vector<CommandSpan> acts = command_spans(s, cfg);
  std::vector<Bounds> read_bounds, write_bounds;
  for (const CommandSpan& a : acts) {
    read_bounds.push_back(bounds(a.access.reads));
    write_bounds.push_back(bounds(a.access.writes));
  }
  for (std::size_t i = 0; i < acts.size(); ++i)
    for (std::size_t j = i + 1; j < acts.size(); ++j) {
      const CommandSpan &x = acts[i], &y = acts[j];
      std::string where = conflict(write_bounds[i], x.access.writes, write_bounds[j], y.access.writes);
      if (where.empty()) where = conflict(write_bounds[i], x.access.writes, read_bounds[j], y.access.reads);
      if (where.empty()) where = conflict(read_bounds[i], x.access.reads, write_bounds[j], y.access.writes);
      if (where.empty() || order.before(x.pe, x.end, y.pe, y.start) || order.before(y.pe, y.end, x.pe, x.start)) continue;
      return command_name(s, static_cast<int>(x.pe), x.k) + " and " + command_name(s, static_cast<int>(y.pe), y.k) +
             " touch the same bytes of " + where + " (one writing) and nothing orders them";
    }
  return "";
}

std::map<int, std::vector<std::pair<std::uint64_t, std::uint64_t>>> chip_stream_unspecified(const TaskStream& s,
                                                                                            const HwConfig& cfg) {
  std::map<int, std::vector<std::pair<std::uint64_t, std::uint64_t>>> out;
  for (std::size_t p = 0; p < s.pe.size(); ++p) {
    ByteRanges u;
    for (const StreamCommand& c : s.pe[p]) track_unspecified(c, static_cast<int>(p), cfg, u);
    if (auto r = u.ranges(); !r.empty()) out[static_cast<int>(p)] = std::move(r);
  }
  return out;
}

std::string find_unspecified_read(const TaskStream& s, const HwConfig& cfg) {
  // another PE's SRAM: against every byte any MLA of that PE leaves unspecified at any time
  std::vector<ByteRanges> ever(s.pe.size());
  for (std::size_t p = 0; p < s.pe.size(); ++p)
    for (const StreamCommand& c : s.pe[p])
      if (c.kind == CommandKind::Mla)
        for (const Span& lane : mla_padding_lanes(c, static_cast<int>(p), cfg)) ever[p].add(lane.lo, lane.hi);
  for (std::size_t p = 0; p < s.pe.size(); ++p) {
    ByteRanges u;
    for (std::size_t k = 0; k < s.pe[p].size(); ++k) {
      const StreamCommand& c = s.pe[p][k];
      for (const Span& r : value_reads(c, static_cast<int>(p), cfg)) {
        if (r.mem.kind != MemoryRef::Kind::Sram) continue;
        const bool own = static_cast<std::size_t>(r.mem.index) == p;
        if (own ? u.overlaps(r.lo, r.hi) : ever[static_cast<std::size_t>(r.mem.index)].overlaps(r.lo, r.hi))
          return command_name(s, static_cast<int>(p), k) + fmt::format(" reads bytes {:#x}..{:#x} of the {}, which an MLA task "
                                                                      "left unspecified", r.lo, r.hi, to_string(r.mem));
      }
      track_unspecified(c, static_cast<int>(p), cfg, u);
    }
  }
  return "";
}

std::string chip_stream_writers(const TaskStream& s, const HwConfig& cfg, MemoryRef mem, std::uint64_t addr) {
  std::string out;
  for (std::size_t p = 0; p < s.pe.size(); ++p)
    for (std::size_t k = 0; k < s.pe[p].size(); ++k)
      for (const Span& w : access_of(s.pe[p][k], static_cast<int>(p), cfg).writes)
        if (w.mem == mem && w.lo <= addr && addr < w.hi) {
          out += (out.empty() ? "" : ", ") + command_name(s, static_cast<int>(p), k);
          break;
        }
  return out;
}

}  // namespace s2
