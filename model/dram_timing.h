// The DRAM's timing rule (thesis 3.3, Figure 5.1, Appendix B), in PE clocks. The DRAM serves one request
// (one DMA row) at a time, first come first served, taking `dram_cycles_per_op` clocks per
// `dram_bytes_per_op`-byte aligned DRAM word the row touches; a word read reaches the NoC
// `dram_latency_cycles` after it was read, and a written row is acknowledged that long after its last word.
// The model's Dram and the C++ DRAM behind the RTL's DRAM port (harness/rtl_dram.h) both use this one
// rule, so the two backends cannot drift apart on it.
#pragma once

#include <cstdint>

#include "hw_config.h"

namespace s2 {

class DramTiming {
 public:
  explicit DramTiming(const HwConfig& cfg = HwConfig{})
      : bytes_per_op_(static_cast<std::uint64_t>(cfg.dram_bytes_per_op)),
        cycles_per_op_(static_cast<std::uint64_t>(cfg.dram_cycles_per_op)),
        latency_cycles_(static_cast<std::uint64_t>(cfg.dram_latency_cycles)) {}

  void reset() { busy_until_ = ops_ = 0; }

  // DRAM words a request for [addr, addr + bytes) touches.
  std::uint64_t ops_for(std::uint64_t addr, std::uint64_t bytes) const {
    if (bytes == 0) return 0;
    return (addr + bytes - 1) / bytes_per_op_ - addr / bytes_per_op_ + 1;
  }

  // The DRAM works on a request in [start, end).
  struct Service {
    std::uint64_t start = 0, end = 0;
  };
  // Serves a request of `ops` words that arrived in clock `arrival`; call in order of arrival.
  Service serve(std::uint64_t arrival, std::uint64_t ops) {
    Service s;
    s.start = busy_until_ > arrival ? busy_until_ : arrival;
    s.end = s.start + ops * cycles_per_op_;
    busy_until_ = s.end;
    ops_ += ops;
    return s;
  }
  // The clock the `k`-th word (from 0) of a served read reaches the NoC.
  std::uint64_t word_ready(const Service& s, std::uint64_t k) const {
    return s.start + (k + 1) * cycles_per_op_ + latency_cycles_;
  }
  // The clock the word holding byte `offset` of a served read from `dram_addr` reaches the NoC.
  std::uint64_t byte_ready(const Service& s, std::uint64_t dram_addr, std::uint64_t offset) const {
    return word_ready(s, (dram_addr + offset) / bytes_per_op_ - dram_addr / bytes_per_op_);
  }
  // The service of a request of `ops` words whose last word reached the NoC (or which was acknowledged)
  // in clock `done_cycle`.
  Service service_done_at(std::uint64_t done_cycle, std::uint64_t ops) const {
    return {done_cycle - latency_cycles_ - ops * cycles_per_op_, done_cycle - latency_cycles_};
  }
  // The clock the last word of a read reaches the NoC, or a write is acknowledged.
  std::uint64_t done(const Service& s) const { return s.end + latency_cycles_; }

  std::uint64_t bytes_per_op() const { return bytes_per_op_; }
  std::uint64_t ops_served() const { return ops_; }

 private:
  std::uint64_t bytes_per_op_, cycles_per_op_, latency_cycles_;
  std::uint64_t busy_until_ = 0, ops_ = 0;
};

}  // namespace s2
