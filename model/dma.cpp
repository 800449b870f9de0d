#include "dma.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <stdexcept>

namespace s2 {

Dma::Dma(sc_core::sc_module_name name, int pe, std::uint8_t* sram, std::size_t sram_bytes)
    : sc_module(name), dram("dram"), pe_(pe), sram_(sram), sram_bytes_(sram_bytes) {}

void Dma::set_timing(const sc_core::sc_time& pe_clock, const DramTiming& dram_timing) {
  pe_clock_ = pe_clock;
  dram_timing_ = dram_timing;
}

void Dma::transfer(const DmaTransfer& t, bool load) {
  const auto clock_of = [&](const sc_core::sc_time& at) { return static_cast<std::uint64_t>(std::llround(at / pe_clock_)); };
  std::uint64_t done = clock_of(sc_core::sc_time_stamp());
  std::uint64_t last_write = 0;  // load: the clock the NoC slave wrote the latest line
  tlm::tlm_generic_payload p;
  p.set_command(load ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND);
  p.set_streaming_width(t.row_bytes);
  const std::uint64_t rows = std::uint64_t(t.rows) * t.planes;
  std::array<std::uint64_t, kStoreRowsInFlight> acked{};  // store: when row k's acknowledgement frees its slot
  std::deque<std::uint64_t> written;  // load: the clocks the lines requested and not yet written are written
  for (std::uint64_t k = 0; k < rows; ++k) {
    const std::uint64_t plane = k / t.rows, r = k % t.rows;
    const std::uint64_t s = t.sram_addr + plane * t.sram_plane_stride + r * t.sram_row_stride;
    if (s + t.row_bytes > sram_bytes_) throw std::out_of_range("model DMA: SRAM address beyond the SRAM");
    const std::uint64_t lines = (s + t.row_bytes - 1) / 16 - s / 16 + 1;
    // wait for room: a line written in clock w no longer counts from clock w + 1 on
    std::uint64_t free_at = 0;
    if (!load && k >= kStoreRowsInFlight) free_at = acked[k % kStoreRowsInFlight];
    if (load) {
      std::uint64_t now = clock_of(sc_core::sc_time_stamp());
      while (!written.empty() && written.front() < now) written.pop_front();
      if (!written.empty() && written.size() + lines > kLoadLinesInFlight)
        free_at = lines > kLoadLinesInFlight ? written.back() + 1 : written[written.size() + lines - kLoadLinesInFlight - 1] + 1;
    }
    const std::uint64_t now = clock_of(sc_core::sc_time_stamp());
    if (free_at > now) sc_core::wait(pe_clock_ * static_cast<double>(free_at - now));
    const std::uint64_t d = t.dram_addr + plane * t.dram_plane_stride + r * t.dram_row_stride;
    p.set_address(d);
    p.set_data_ptr(sram_ + s);
    p.set_data_length(t.row_bytes);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = pe_clock_ * static_cast<double>(load ? kRequestLeadCycles : lines + 1 + kRequestLeadCycles);
    // same-clock requests reach the DRAM lowest PE first: PE p calls p delta cycles into the clock
    for (int i = 0; i < pe_; ++i) sc_core::wait(sc_core::SC_ZERO_TIME);
    dram->b_transport(p, delay);
    if (p.get_response_status() != tlm::TLM_OK_RESPONSE)
      throw std::out_of_range("model DMA: DRAM address " + std::to_string(d) + " out of range");
    const std::uint64_t row_done = clock_of(sc_core::sc_time_stamp() + delay);
    if (load) {
      const DramTiming::Service sv = dram_timing_.service_done_at(row_done, dram_timing_.ops_for(d, t.row_bytes));
      for (std::uint64_t l = 0; l < lines; ++l) {
        const std::uint64_t line_end = std::min<std::uint64_t>((s / 16 + l + 1) * 16, s + t.row_bytes);
        const std::uint64_t ready = dram_timing_.byte_ready(sv, d, line_end - 1 - s) + kLineLagCycles;
        last_write = std::max(ready, last_write + 1);
        written.push_back(last_write);
      }
      done = std::max(done, last_write + kIdleLagCycles);
    } else {
      done = std::max(done, row_done + kAckLagCycles);
      acked[k % kStoreRowsInFlight] = row_done + kAckSeenCycles;
    }
    if (k + 1 < rows) sc_core::wait(pe_clock_ * static_cast<double>(load ? 1 : lines + 2));
  }
  sc_core::wait(pe_clock_ * static_cast<double>(done) - sc_core::sc_time_stamp());
}

}  // namespace s2
