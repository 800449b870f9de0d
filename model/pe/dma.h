// The DMA of a PE (thesis 3.1): the ARM hands it a transfer (after writing its registers, pe_registers.h)
// and it moves it between the PE's SRAM and a DRAM or, on the chip, another PE's SRAM. The bytes move when
// the transfer starts (streams order their transfers with Syncs, so no other access sees the difference);
// its clocks are the NoC's (noc/fabric.h), which runs the DMA clock by clock as rtl_stubs/dma.sv,
// dma_peer.sv and the routers, NoC slaves and DRAM ports between it and the far end do, and tells it the
// clock it goes idle.
#pragma once

#include <algorithm>
#include <cstdint>

#include "model/noc/fabric.h"
#include "model/systemc.h"
#include "model/task_stream.h"

namespace s2 {

// What a DMA reaches besides the DRAMs (the system implements it): the NoC, and the other PEs' SRAMs.
class DmaFabric {
 public:
  virtual ~DmaFabric() = default;
  virtual NocFabric& noc() = 0;
  // the NoC has a transfer to run (it wakes up if it slept)
  virtual void noc_started() = 0;
  virtual std::uint8_t* sram(int chip_pe) = 0;
  virtual std::size_t sram_bytes(int chip_pe) = 0;
  // Whether transfers move their bytes (false: StreamRunOptions::timing_only; the NoC times them all the same).
  virtual bool moves_data() const { return true; }
};

class Dma : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_initiator_socket<Dma> dram;  // bound to the system's DRAMs in order

  sc_core::sc_event done_event;  // a transfer ended: the ARM sees the DMA idle from now on

  Dma(sc_core::sc_module_name name, int pe, std::uint8_t* sram, std::size_t sram_bytes);
  // `fabric`: the NoC and the other PEs; `qpe`: the index of the DMA's QPE in the mesh.
  void set_timing(const sc_core::sc_time& pe_clock, DmaFabric* fabric, int qpe);
  // The NoC: the transfer's last clock was the one before `cycle`; the ARM sees the DMA idle in `cycle`.
  void idle_in(std::uint64_t cycle);
  // Starts a transfer (the DMA must be idle) in the current clock, the one after its START register was
  // written. load: DRAM -> SRAM.
  void start(const DmaTransfer& t, bool load);
  bool busy() const { return busy_; }

 private:
  void run();
  void transfer(const DmaTransfer& t, bool load);
  void move_bytes(const DmaTransfer& t, bool load);
  std::uint64_t clock_of(const sc_core::sc_time& at) const;  // the PE clock of a time
  DmaTransfer pending_;
  bool pending_load_ = true, busy_ = false;
  sc_core::sc_event start_event_, idle_event_;
  int pe_;
  std::uint8_t* sram_;
  std::size_t sram_bytes_;
  sc_core::sc_time pe_clock_;
  DmaFabric* fabric_ = nullptr;
  int qpe_ = 0;
};

}  // namespace s2
