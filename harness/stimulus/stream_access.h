// What each command of a chip task stream reads and writes, as byte ranges of the memories (the DRAMs, every
// PE's SRAM). The random stream generator (chip_random.h) plans race-free streams with it; the checkers
// (stream_checks.h) verify any stream with it, independently of how the generator planned it.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "model/hw_config.h"
#include "model/task_stream.h"

namespace s2::stream_access {

// A byte range of one memory.
struct Span {
  MemoryRef mem;
  std::uint64_t lo = 0, hi = 0;
  std::uint64_t size() const { return hi - lo; }
};

inline MemoryRef sram_of(int pe) { return {MemoryRef::Kind::Sram, pe}; }

// Sorted disjoint byte ranges [lo, hi) of one memory.
class ByteRanges {
 public:
  void add(std::uint64_t lo, std::uint64_t hi) {
    if (lo >= hi) return;
    auto it = r_.upper_bound(lo);
    if (it != r_.begin() && std::prev(it)->second >= lo) --it;
    while (it != r_.end() && it->first <= hi) {
      lo = std::min(lo, it->first);
      hi = std::max(hi, it->second);
      it = r_.erase(it);
    }
    r_.emplace(lo, hi);
  }
  void remove(std::uint64_t lo, std::uint64_t hi) {
    if (lo >= hi) return;
    auto it = r_.upper_bound(lo);
    if (it != r_.begin() && std::prev(it)->second > lo) --it;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> keep;
    while (it != r_.end() && it->first < hi) {
      if (it->first < lo) keep.emplace_back(it->first, lo);
      if (it->second > hi) keep.emplace_back(hi, it->second);
      it = r_.erase(it);
    }
    for (const auto& k : keep) r_.emplace(k);
  }
  bool overlaps(std::uint64_t lo, std::uint64_t hi) const {
    auto it = r_.upper_bound(lo);
    if (it != r_.begin() && std::prev(it)->second > lo) return true;
    return it != r_.end() && it->first < hi;
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges() const { return {r_.begin(), r_.end()}; }

 private:
  std::map<std::uint64_t, std::uint64_t> r_;
};

// The spans of every row a transfer's side touches.
void strided(std::vector<Span>& out, MemoryRef mem, std::uint64_t base, std::uint64_t row_stride, std::uint64_t plane_stride,
             const DmaTransfer& t);

// The chip PE an MLA command of chip PE `pe` reads operand A from.
int operand_a_pe(const StreamCommand& c, int pe);

// The lanes of an MLA task's result rows past its width, up to the end of the 4-result (128-bit) word: the
// contract defines results for x < Wo (conv) and j < W_B (mm) only (model/sram_layout.h); the RTL writes whole
// words there, the model leaves them as they were.
std::vector<Span> mla_padding_lanes(const StreamCommand& c, int pe, const HwConfig& cfg);

// The bytes a command reads whose value matters: a DMA's source rows, an MLA's operand A (all of it: its
// padding filters give the results of the padding rows) and its operand B's rows (their padding columns only
// reach the padding lanes), an ARM operation's source rows and, where it adds to it, its destination's.
std::vector<Span> value_reads(const StreamCommand& c, int pe, const HwConfig& cfg);

// What command `c` of chip PE `pe` leaves unspecified in its own SRAM (`u`), after it: an MLA's padding lanes
// (the rest of its results it writes); a load's rows and a quantization's output rows are written.
void track_unspecified(const StreamCommand& c, int pe, const HwConfig& cfg, ByteRanges& u);

// The planes an ARM operation of chip PE `pe` reads and writes (as arm_apply bounds them).
std::vector<Span> arm_spans(const ArmCommand& a, int pe);
// The SNN operations' (MacInt8, PermuteWords, Copy8): the bounds of each region they read or write.
std::vector<Span> snn_arm_spans(const ArmCommand& a, int pe);

// What command `c` of chip PE `pe` reads and writes (an ARM operation's planes count as written).
struct Access {
  std::vector<Span> reads, writes;
};
Access access_of(const StreamCommand& c, int pe, const HwConfig& cfg);

}  // namespace s2::stream_access
