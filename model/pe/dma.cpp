#include "model/pe/dma.h"

#include "model/dram/dram.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace s2 {

Dma::Dma(sc_core::sc_module_name name, int pe, std::uint8_t* sram, std::size_t sram_bytes)
    : sc_module(name), dram("dram"), pe_(pe), sram_(sram), sram_bytes_(sram_bytes) {
  SC_HAS_PROCESS(Dma);
  SC_THREAD(run);
}

void Dma::start(const DmaTransfer& t, bool load) {
  if (busy_) throw std::logic_error("model DMA: started while busy");
  pending_ = t;
  pending_load_ = load;
  busy_ = true;
  start_event_.notify(sc_core::SC_ZERO_TIME);
}

void Dma::run() {
  while (true) {
    sc_core::wait(start_event_);
    transfer(pending_, pending_load_);
    busy_ = false;
    done_event.notify(sc_core::SC_ZERO_TIME);
  }
}

void Dma::set_timing(const sc_core::sc_time& pe_clock, DmaFabric* fabric, int qpe) {
  pe_clock_ = pe_clock;
  fabric_ = fabric;
  qpe_ = qpe;
}

std::uint64_t Dma::clock_of(const sc_core::sc_time& at) const { return static_cast<std::uint64_t>(std::llround(at / pe_clock_)); }

void Dma::idle_in(std::uint64_t cycle) {
  const sc_core::sc_time at = pe_clock_ * static_cast<double>(cycle);
  if (at <= sc_core::sc_time_stamp())
    throw std::logic_error("model DMA: the NoC ended a transfer in clock " + std::to_string(cycle) + ", which is past");
  idle_event_.notify(at - sc_core::sc_time_stamp());
}

void Dma::transfer(const DmaTransfer& t, bool load) {
  if (!fabric_) throw std::logic_error("model DMA: a transfer without a NoC");
  move_bytes(t, load);
  fabric_->noc().start_dma(qpe_ * kPesPerQpe + pe_ % kPesPerQpe, t, load, clock_of(sc_core::sc_time_stamp()));
  fabric_->noc_started();
  sc_core::wait(idle_event_);
}

// The transfer's bytes, row by row, between the SRAM and the far memory (a DRAM through its socket's debug
// access, or the other PE's SRAM).
void Dma::move_bytes(const DmaTransfer& t, bool load) {
  if (t.row_bytes == 0) return;
  const bool peer = t.remote.kind == MemoryRef::Kind::Sram;
  // the SRAM it writes: its own (a load), or the other PE's (a store to it); a store to a DRAM writes none
  if (load || peer)
    fabric_->noc().sram_dma_written(load ? qpe_ * kPesPerQpe + pe_ % kPesPerQpe : t.remote.index,
                                    t.bytes());
  if (!fabric_->moves_data()) return;
  std::uint8_t* far = peer ? fabric_->sram(t.remote.index) : nullptr;
  const std::size_t far_bytes = peer ? fabric_->sram_bytes(t.remote.index) : 0;
  tlm::tlm_generic_payload p;
  for (std::uint64_t z = 0; z < t.planes; ++z)
    for (std::uint64_t y = 0; y < t.rows; ++y) {
      const std::uint64_t own = t.sram_addr + z * t.sram_plane_stride + y * t.sram_row_stride;
      const std::uint64_t remote = t.dram_addr + z * t.dram_plane_stride + y * t.dram_row_stride;
      if (own + t.row_bytes > sram_bytes_) throw std::out_of_range("model DMA: SRAM address beyond the SRAM");
      if (peer) {
        if (remote + t.row_bytes > far_bytes)
          throw std::out_of_range("model DMA: " + to_string(t.remote) + " address " + std::to_string(remote) + " out of range");
        if (load) std::copy(far + remote, far + remote + t.row_bytes, sram_ + own);
        else std::copy(sram_ + own, sram_ + own + t.row_bytes, far + remote);
        continue;
      }
      p.set_command(load ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND);
      p.set_address(remote);
      p.set_data_ptr(sram_ + own);
      p.set_data_length(t.row_bytes);
      p.set_streaming_width(t.row_bytes);
      if (dram[static_cast<unsigned>(t.remote.index)]->transport_dbg(p) != t.row_bytes)
        throw std::out_of_range("model DMA: " + to_string(t.remote) + " address " + std::to_string(remote) + " out of range");
    }
}

}  // namespace s2
