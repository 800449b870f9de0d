#include "dma.h"

#include <stdexcept>

namespace s2 {

Dma::Dma(sc_core::sc_module_name name, std::uint8_t* sram, std::size_t sram_bytes)
    : sc_module(name), dram("dram"), sram_(sram), sram_bytes_(sram_bytes) {}

void Dma::set_timing(const sc_core::sc_time& pe_clock, const sc_core::sc_time& noc_hop) {
  pe_clock_ = pe_clock;
  noc_hop_ = noc_hop;
}

void Dma::transfer(const DmaTransfer& t, bool load) {
  // the ARM's request reaches the DMA's queue in one clock (thesis 3.1)
  sc_core::sc_time done = pe_clock_;
  tlm::tlm_generic_payload p;
  p.set_command(load ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND);
  p.set_streaming_width(t.row_bytes);
  for (std::uint32_t plane = 0; plane < t.planes; ++plane) {
    for (std::uint32_t r = 0; r < t.rows; ++r) {
      const std::uint64_t s = std::uint64_t(t.sram_addr) + std::uint64_t(plane) * t.sram_plane_stride +
                              std::uint64_t(r) * t.sram_row_stride;
      if (s + t.row_bytes > sram_bytes_) throw std::out_of_range("model DMA: SRAM address beyond the SRAM");
      p.set_address(t.dram_addr + plane * t.dram_plane_stride + r * t.dram_row_stride);
      p.set_data_ptr(sram_ + s);
      p.set_data_length(t.row_bytes);
      p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      sc_core::sc_time delay = pe_clock_;
      dram->b_transport(p, delay);
      if (p.get_response_status() != tlm::TLM_OK_RESPONSE)
        throw std::out_of_range("model DMA: DRAM address " + std::to_string(p.get_address()) + " out of range");
      if (delay > done) done = delay;
    }
  }
  sc_core::wait(done + noc_hop_);
}

}  // namespace s2
