// The DMA of a PE (thesis 3.1), timed as the RTL's (rtl_stubs/dma.sv): the ARM hands it a transfer (after
// writing its registers, pe_registers.h) and it moves it request by request (dma_request.h: a load its whole
// transfer at once, a store a row) between the PE's SRAM and a DRAM or, on the chip, another PE's SRAM.
// Its packets travel the NoC (noc/noc.h): the routers from its QPE to the DRAM's router or the other PE's
// QPE and back; in QPE-DRAM that is the QPE's router alone.
//   Load: one request for the whole transfer (its first plane, then its planes: two packets, one per
//   clock), which reaches the DRAM request_lead_cycles after its second packet; the DRAM serves the planes
//   back to back. Its data comes back as one packet per SRAM line, each leaving the DRAM when the DRAM has
//   read the last byte it holds; the NoC slave writes it line_lag_cycles later, one line per clock. A load
//   is done idle_lag_cycles after its last line was written (HwConfig::dma holds these clocks).
//   Store: per row a header clock, a clock to read the first SRAM line, then one line per clock; the row
//   reaches the DRAM with its last line (the DRAM takes a write once it holds all of it). A header waits
//   until fewer than store_requests_in_flight rows are unacknowledged. A store is done ack_lag_cycles after
//   the DRAM acknowledged its last row.
// Requests that reach the DRAM in the same clock are served lowest PE first (the router's round robin
// from its reset state; later in a stream the RTL's order depends on the round-robin pointer).
// A transfer with another PE's SRAM (rtl_stubs/dma_peer.sv) goes line by line through that PE's NoC slave
// (NocSlaveTiming): a load asks for each far line (one request per clock, at most peer_reads_in_flight lines
// asked for and not yet realigned) and the slave answers one read per SRAM access plus a clock; a store
// reads its own lines (one per clock) and sends them as writes, the row's last acknowledged, at most
// store_requests_in_flight rows unacknowledged. The realigner (LineRealignment, dma_request.h) takes a line
// and gives a line per clock. Approximations: the far slave serves requests first booked first served
// (the RTL's router interleaves two requesters' lines), and neither slave nor DMA waits for the SRAM port
// behind the PE's own MLA.
// Not modelled: the router's clock-level arbitration between the DMAs' packets and other traffic.
#pragma once

#include <algorithm>
#include <cstdint>

#include "model/dram/dram_timing.h"
#include "model/noc/noc.h"
#include "model/systemc.h"
#include "model/task_stream.h"

namespace s2 {

// A PE's NoC slave as other DMAs' lines reach it (rtl_stubs/noc_if.sv): one line at a time; a read holds it
// for its SRAM access and the clock its response goes out, a write for its access, an acknowledged write
// also for the clock its acknowledgement goes out. Served in the order the DMAs book them.
class NocSlaveTiming {
 public:
  void reset() { free_ = 0; }
  // A line that reached the slave in clock `arrival`: the clock its SRAM access is granted.
  std::uint64_t read(std::uint64_t arrival, std::uint64_t access_cycles) { return take(arrival, access_cycles + 1); }
  std::uint64_t write(std::uint64_t arrival, std::uint64_t access_cycles, bool acknowledged) {
    return take(arrival, acknowledged ? std::max<std::uint64_t>(access_cycles, 2) : access_cycles);
  }

 private:
  std::uint64_t take(std::uint64_t arrival, std::uint64_t hold) {
    const std::uint64_t grant = std::max(arrival, free_);
    free_ = grant + hold;
    return grant;
  }
  std::uint64_t free_ = 0;
};

// What a DMA reaches besides the DRAMs (the system implements it): the NoC, and the other PEs' SRAMs.
class DmaFabric {
 public:
  virtual ~DmaFabric() = default;
  virtual Noc& noc() = 0;
  virtual std::uint8_t* sram(int chip_pe) = 0;
  virtual std::size_t sram_bytes(int chip_pe) = 0;
  // chip PE `chip_pe`'s NoC slave as a server of other DMAs' lines
  virtual NocSlaveTiming& noc_slave(int chip_pe) = 0;
};

class Dma : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_initiator_socket<Dma> dram;  // bound to the system's DRAMs in order

  sc_core::sc_event done_event;  // a transfer ended: the ARM sees the DMA idle from now on

  Dma(sc_core::sc_module_name name, int pe, std::uint8_t* sram, std::size_t sram_bytes);
  // `fabric`: the NoC and the other PEs (null: packets never wait, only DRAMs are reached); `qpe`: the
  // index of the DMA's QPE in the mesh.
  void set_timing(const sc_core::sc_time& pe_clock, const HwConfig& cfg, DmaFabric* fabric, int qpe);
  // Starts a transfer (the DMA must be idle) in the current clock, the one after its START register was
  // written. load: DRAM -> SRAM.
  void start(const DmaTransfer& t, bool load);
  bool busy() const { return busy_; }

 private:
  void run();
  void transfer(const DmaTransfer& t, bool load);
  void transfer_with_peer(const DmaTransfer& t, bool load);
  std::uint64_t clock_of(const sc_core::sc_time& at) const;  // the PE clock of a time
  void wait_until(std::uint64_t cycle);                       // returns in PE clock `cycle` (now if it is past)
  DmaTransfer pending_;
  bool pending_load_ = true, busy_ = false;
  sc_core::sc_event start_event_;
  int pe_;
  std::uint8_t* sram_;
  std::size_t sram_bytes_;
  sc_core::sc_time pe_clock_;
  DramTiming dram_timing_;  // to know when each line of a read row leaves the DRAM
  DmaClocks clocks_;        // the pipeline (HwConfig::dma)
  std::uint64_t sram_access_cycles_ = 1;
  std::size_t peer_booking_lines_ = 4;  // HwConfig::model_peer_booking_lines
  DmaFabric* fabric_ = nullptr;
  int qpe_ = 0;
};

}  // namespace s2
