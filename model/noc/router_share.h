// A QPE router's capacity left to the DMAs. The RTL's router (rtl_stubs/noc_router.sv) passes one
// packet per NoC clock, two per PE clock, from all its inputs together (its PEs, the host or DRAM port and,
// on the chip, its mesh neighbours). Why a second model of the router beside the tile schedule's clock-level
// one (qpe/tile_schedule.h): the tile schedule resolves the MLAs' operand-A round trips clock by clock
// inside one QPE, where a clock decides a tile's length; DMA packets move in bulk across the chip, and a
// ledger of the capacity per clock is enough for them and costs nothing while a router is idle. The MLAs' operand-A reads (two
// packets per 16-byte word through the NoC) take their part first: their channels ask no more than a
// round-robin share each. The DMAs' packets (load requests and the lines coming back, store headers,
// lines and acknowledgements) get the rest, first booked first served, at least a quarter packet per clock
// (one channel's share when every input waits). A fluid approximation: the MLAs' rate is the one of the
// tasks running when a packet is booked (model/README.md, QPE-DRAM).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "model/task.h"

namespace s2 {

class RouterShare {
 public:
  static constexpr double kDmaFloorPerPeClock = 0.25;

  // The packets the router passes per PE clock (its NoC clocks per PE clock: HwConfig).
  void set_capacity(double packets_per_pe_clock) { packets_per_pe_clock_ = packets_per_pe_clock; }

  // The operand-A packets per PE clock PE `pe`'s MLA puts through the router (0: idle or local A).
  void set_mla_rate(int pe, double packets_per_cycle) { mla_rate_[static_cast<std::size_t>(pe)] = packets_per_cycle; }
  // A DMA packet that wants to pass in PE clock `clock` (not before `now`, the current clock): the clock it
  // has passed by.
  std::uint64_t pass(std::uint64_t clock, std::uint64_t now) {
    // bookings before the current clock are over: the ledger starts at `now` (the simulation only moves on)
    used_.drop_before(now);
    clock = std::max(clock, used_.base());
    double mla = 0;
    for (double r : mla_rate_) mla += r;
    const double capacity = std::max(packets_per_pe_clock_ - mla, kDmaFloorPerPeClock);
    double need = 1.0;
    for (;; ++clock) {
      clock = used_.first_below(clock, capacity);  // the first clock from `clock` on with room
      const double take = std::min(capacity - used_.at(clock), need);
      used_.add(clock, take);
      need -= take;
      if (need <= 1e-9) return clock;
    }
  }
  void reset() {
    used_.clear();
    mla_rate_.fill(0.0);
  }

 private:
  std::array<double, kPesPerQpe> mla_rate_{};
  // Packets booked per PE clock from base() on, with a tree of minima over them so that the first clock with
  // room below a capacity is found in log time, however far ahead the router is booked.
  class Ledger {
   public:
    std::uint64_t base() const { return base_; }
    void clear() {
      base_ = offset_ = 0;
      size_ = 1;
      min_.assign(2, 0.0);
    }
    void drop_before(std::uint64_t now) {
      if (now <= base_) return;
      base_ = now;
      // forget the clocks before base_ once they fill half the tree
      if (base_ - offset_ >= size_ / 2) rebuild(size_);
    }
    double at(std::uint64_t clock) const {
      const std::uint64_t i = clock - offset_;
      return i < size_ ? min_[size_ + i] : 0.0;
    }
    void add(std::uint64_t clock, double v) {
      while (clock - offset_ >= size_) rebuild(size_ * 2);
      std::size_t i = static_cast<std::size_t>(size_ + clock - offset_);
      min_[i] += v;
      // bookings only grow: a parent's minimum changes only while the child was its minimum
      for (i /= 2; i >= 1; i /= 2) {
        const double m = std::min(min_[2 * i], min_[2 * i + 1]);
        if (m == min_[i]) break;
        min_[i] = m;
      }
    }
    // The first clock >= `from` whose bookings are below `capacity`.
    std::uint64_t first_below(std::uint64_t from, double capacity) const {
      const std::uint64_t i = from - offset_;
      if (i >= size_) return from;  // beyond the tree: nothing booked
      if (min_[size_ + i] < capacity) return from;  // the usual case: room at once
      const std::size_t found = find(1, 0, size_, static_cast<std::size_t>(i), capacity);
      return found < size_ ? offset_ + found : offset_ + size_;
    }

   private:
    std::size_t find(std::size_t node, std::size_t lo, std::size_t hi, std::size_t from, double capacity) const {
      if (hi <= from || min_[node] >= capacity) return size_;
      if (hi - lo == 1) return lo;
      const std::size_t mid = (lo + hi) / 2;
      const std::size_t left = find(2 * node, lo, mid, from, capacity);
      return left < size_ ? left : find(2 * node + 1, mid, hi, from, capacity);
    }
    // Re-lays the clocks from base_ on into a tree of `size` leaves starting at base_.
    void rebuild(std::size_t size) {
      std::vector<double> keep;
      for (std::uint64_t c = base_; c < offset_ + size_; ++c) keep.push_back(at(c));
      while (keep.size() > size) size *= 2;
      size_ = size;
      offset_ = base_;
      min_.assign(2 * size_, 0.0);
      std::copy(keep.begin(), keep.end(), min_.begin() + static_cast<std::ptrdiff_t>(size_));
      for (std::size_t i = size_ - 1; i >= 1; --i) min_[i] = std::min(min_[2 * i], min_[2 * i + 1]);
    }
    std::uint64_t base_ = 0, offset_ = 0;  // the current clock; the clock of the first leaf
    std::size_t size_ = 1;                 // leaves, a power of two
    std::vector<double> min_ = std::vector<double>(2, 0.0);  // min_[size_ + i]: clock offset_ + i
  };
  Ledger used_;
  double packets_per_pe_clock_ = 2.0;
};

}  // namespace s2
