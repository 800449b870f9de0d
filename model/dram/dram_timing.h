// The DRAM's timing rule (thesis 3.3, Figure 5.1, Appendix B), in PE clocks. The DRAM serves one request
// (a DMA's plane or row) at a time, first come first served, at `dram_bytes_per_op` bytes per
// `dram_cycles_per_op` clocks: by bytes (the thesis's T_DRAM = bytes / (f * 16 / 2)), or, with
// `dram_aligned_words`, by the 16-byte aligned words the request touches. A byte read reaches the NoC
// `dram_latency_cycles` after the DRAM has read it, and a written request is acknowledged that long after
// its last byte. The model's Dram and the C++ DRAM behind the RTL's DRAM port (harness/backends/rtl/rtl_dram.h) both
// use this one rule, so the two backends cannot drift apart on it.
#pragma once

#include <cstdint>
#include <vector>

#include "model/hw_config.h"

namespace s2 {

// A request's DRAM bytes: `rows` rows of `row_bytes` bytes, `row_stride` bytes apart from `addr`; byte o
// of the request is byte o % row_bytes of row o / row_bytes.
struct DramRange {
  std::uint64_t addr = 0, row_stride = 0, rows = 1, row_bytes = 0;
  std::uint64_t bytes() const { return rows * row_bytes; }
  std::uint64_t row_addr(std::uint64_t r) const { return addr + r * row_stride; }
  std::uint64_t end() const { return rows ? row_addr(rows - 1) + row_bytes : addr; }
};

class DramTiming {
 public:
  explicit DramTiming(const HwConfig& cfg = HwConfig{})
      : bytes_per_op_(static_cast<std::uint64_t>(cfg.dram_bytes_per_op)),
        cycles_per_op_(static_cast<std::uint64_t>(cfg.dram_cycles_per_op)),
        latency_cycles_(static_cast<std::uint64_t>(cfg.dram_latency_cycles)),
        aligned_words_(cfg.dram_aligned_words) {}

  void reset() { busy_until_ = bytes_ = words_ = read_bytes_ = write_bytes_ = 0; }

  // The DRAM works on a request in [start, end), in 1/bytes_per_op clocks (a byte's share of an operation).
  struct Service {
    std::uint64_t start = 0, end = 0;
    std::vector<std::uint64_t> row_start;  // aligned words: when each row's first word is read (from start)
  };
  enum class Access { Read, Write };
  // Serves a request that arrived in clock `arrival`; call in order of arrival.
  Service serve(std::uint64_t arrival, const DramRange& r, Access access) {
    Service s;
    (access == Access::Read ? read_bytes_ : write_bytes_) += op_bytes(r);
    s.start = busy_until_ > arrival * bytes_per_op_ ? busy_until_ : arrival * bytes_per_op_;
    std::uint64_t cost = r.bytes() * cycles_per_op_;
    if (aligned_words_) {
      cost = 0;
      s.row_start.reserve(r.rows);
      for (std::uint64_t k = 0; k < r.rows; ++k) {
        s.row_start.push_back(cost);
        const std::uint64_t w = words(r.row_addr(k), r.row_bytes);
        cost += w * cycles_per_op_ * bytes_per_op_;
        words_ += w;
      }
    }
    s.end = s.start + cost;
    busy_until_ = s.end;
    bytes_ += r.bytes();
    return s;
  }
  // The clock the byte at `offset` of a served read reaches the NoC.
  std::uint64_t byte_ready(const Service& s, const DramRange& r, std::uint64_t offset) const {
    std::uint64_t read = (offset + 1) * cycles_per_op_;
    if (aligned_words_) {
      const std::uint64_t k = offset / r.row_bytes, a = r.row_addr(k);
      read = s.row_start[k] + words(a, offset % r.row_bytes + 1) * cycles_per_op_ * bytes_per_op_;
    }
    return clock_of(s.start + read) + latency_cycles_;
  }
  // The clock the last byte of a read reaches the NoC, or a write is acknowledged.
  std::uint64_t done(const Service& s) const { return clock_of(s.end) + latency_cycles_; }

  // The bytes the DRAM moves for a request (activity, model/activity.h): its operations, each bytes_per_op:
  // its bytes rounded up to whole operations, or the aligned words it touches.
  std::uint64_t op_bytes(const DramRange& r) const {
    std::uint64_t ops = (r.bytes() + bytes_per_op_ - 1) / bytes_per_op_;
    if (aligned_words_) {
      ops = 0;
      for (std::uint64_t k = 0; k < r.rows; ++k) ops += words(r.row_addr(k), r.row_bytes);
    }
    return ops * bytes_per_op_;
  }
  // bytes moved for read and for write requests since the last reset (op_bytes of each)
  std::uint64_t read_bytes() const { return read_bytes_; }
  std::uint64_t write_bytes() const { return write_bytes_; }
  // DRAM operations served: bytes / bytes_per_op (rounded up), or the aligned words touched.
  std::uint64_t ops_served() const { return aligned_words_ ? words_ : (bytes_ + bytes_per_op_ - 1) / bytes_per_op_; }
  std::uint64_t cycles_per_op() const { return cycles_per_op_; }
  std::uint64_t latency_cycles() const { return latency_cycles_; }
  // PE clocks the server has been busy serving requests
  std::uint64_t busy_cycles() const { return ops_served() * cycles_per_op_; }

 private:
  std::uint64_t words(std::uint64_t addr, std::uint64_t bytes) const {
    return bytes == 0 ? 0 : (addr + bytes - 1) / bytes_per_op_ - addr / bytes_per_op_ + 1;
  }
  std::uint64_t clock_of(std::uint64_t t) const { return (t + bytes_per_op_ - 1) / bytes_per_op_; }

  std::uint64_t bytes_per_op_, cycles_per_op_, latency_cycles_;
  bool aligned_words_;
  std::uint64_t busy_until_ = 0, bytes_ = 0, words_ = 0, read_bytes_ = 0, write_bytes_ = 0;
};

}  // namespace s2
