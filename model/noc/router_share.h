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
#include <deque>

#include "model/task.h"

namespace s2 {

class RouterShare {
 public:
  static constexpr double kDmaFloorPerPeClock = 0.25;

  // The packets the router passes per PE clock (its NoC clocks per PE clock: HwConfig).
  void set_capacity(double packets_per_pe_clock) { packets_per_pe_clock_ = packets_per_pe_clock; }
  std::uint64_t packets() const { return packets_; }

  // The operand-A packets per PE clock PE `pe`'s MLA puts through the router (0: idle or local A).
  void set_mla_rate(int pe, double packets_per_cycle) { mla_rate_[static_cast<std::size_t>(pe)] = packets_per_cycle; }
  // A DMA packet that wants to pass in PE clock `clock` (not before `now`, the current clock): the clock it
  // has passed by.
  std::uint64_t pass(std::uint64_t clock, std::uint64_t now) {
    // bookings before the current clock are over: the ledger starts at `now` (the simulation only moves on)
    if (now > base_) {
      const std::uint64_t drop = std::min<std::uint64_t>(now - base_, used_.size());
      used_.erase(used_.begin(), used_.begin() + static_cast<std::ptrdiff_t>(drop));
      base_ = now;
    }
    clock = std::max(clock, base_);
    double mla = 0;
    for (double r : mla_rate_) mla += r;
    const double capacity = std::max(packets_per_pe_clock_ - mla, kDmaFloorPerPeClock);
    ++packets_;
    // the clocks before full_until_ have no room at this capacity: a packet asking for one of them would
    // find none and go on (the same booking, without looking at each full clock again)
    if (capacity != full_capacity_) {
      full_capacity_ = capacity;
      full_until_ = base_;
    }
    full_until_ = std::max(full_until_, base_);
    clock = std::max(clock, full_until_);
    double need = 1.0;
    for (;; ++clock) {
      const std::size_t i = static_cast<std::size_t>(clock - base_);
      if (i >= used_.size()) used_.resize(i + 1, 0.0);
      double& u = used_[i];
      const double take = std::min(capacity - u, need);
      if (take <= 0) continue;
      u += take;
      need -= take;
      if (need <= 1e-9) break;
    }
    while (full_until_ - base_ < used_.size() && used_[static_cast<std::size_t>(full_until_ - base_)] >= capacity) ++full_until_;
    return clock;
  }
  void reset() {
    used_.clear();
    base_ = full_until_ = 0;
    full_capacity_ = -1;
    packets_ = 0;
    mla_rate_.fill(0.0);
  }

 private:
  std::array<double, kPesPerQpe> mla_rate_{};
  std::deque<double> used_;  // packets booked per PE clock from base_ on
  std::uint64_t base_ = 0;
  std::uint64_t full_until_ = 0;  // every clock from base_ up to it is full at full_capacity_
  double full_capacity_ = -1;
  double packets_per_pe_clock_ = 2.0;
  std::uint64_t packets_ = 0;
};

}  // namespace s2
