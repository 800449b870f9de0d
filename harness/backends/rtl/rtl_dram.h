// The DRAM behind the RTL QPE's DRAM port (rtl_stubs/README.md, "DRAM port"): a C++ memory that takes the
// DMAs' packets (read requests, write requests and their lines, model/pe/dma_request.h) and answers with the
// lines of a read, its planes served back to back (PKT_DMA_DATA, byte enables for the row's part of each
// SRAM line, the transfer's last PKT_DMA_LAST)
// and a written request's acknowledgement (PKT_DMA_ACK). Its timing is the model's DramTiming, requests
// served in the order they reached the port.
// On a chip a DRAM sits behind several routers' DRAM ports (model/hw_config.h ChipShape): a request comes in
// at whichever port its PE's DMA addressed, and the DRAM's packets to a PE leave at the port `egress` names
// for that PE (the attached router nearest the PE's QPE, as the requests came). Each port has its own queue.
// It knows no signal names: the RTL adapter moves packets between it and the ports.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "model/pe/dma_request.h"
#include "model/dram/dram_timing.h"
#include "model/hw_config.h"

namespace s2 {

// Packet kinds on the DRAM port (rtl_stubs/s2_pkg.svh).
enum DramPortKind : unsigned {
  kPktDramRd = 4, kPktDramWr = 5, kPktDramWdata = 6, kPktDmaData = 7, kPktDmaAck = 8, kPktDmaLast = 9,
  kPktDramRdx = 10
};

struct DramPortPacket {
  unsigned pe = 0;           // source (to the DRAM) or destination (from it): the chip PE
  unsigned kind = 0;
  std::uint32_t addr = 0;    // SRAM byte address
  std::uint16_t be = 0;      // byte enables (PKT_DMA_DATA)
  std::array<std::uint8_t, 16> data{};
  std::uint64_t release_cycle = 0;  // from the DRAM: the first PE clock it may leave
};

class RtlDram {
 public:
  // `egress[pe]`: the port through which chip PE `pe` is answered (its size: the PEs that may ask);
  // QPE-DRAM: four PEs, one port.
  RtlDram(const HwConfig& cfg, std::vector<std::uint8_t>& memory, std::vector<int> egress = {0, 0, 0, 0});
  // A packet a port delivered in PE clock `cycle`. Throws std::runtime_error on a malformed request.
  void receive(const DramPortPacket& p, std::uint64_t cycle);
  // The packet to offer port `port` in `cycle` on message class `rsp` (acknowledgements) or not (data), if
  // one is due; pop() it once the port took it.
  const DramPortPacket* due(int port, bool rsp, std::uint64_t cycle) const;
  void pop(int port, bool rsp);
  bool idle() const;
  std::uint64_t ops_served() const { return timing_.ops_served(); }
  // bytes read and written for requests (model/activity.h: whole 16-byte operations)
  std::uint64_t read_bytes() const { return timing_.read_bytes(); }
  std::uint64_t write_bytes() const { return timing_.write_bytes(); }

 private:
  struct Write {
    DmaRequest request;
    std::vector<DmaBeat> beats;  // what each line still to come holds
    std::size_t received = 0;
    bool open = false;
  };
  struct Port {
    std::deque<DramPortPacket> data, acks;
  };
  std::vector<std::uint8_t>& mem_;
  DramTiming timing_;
  std::vector<int> egress_;
  std::vector<Write> writes_;                        // per PE
  std::vector<std::optional<DmaRequest>> reads_;    // per PE: a read's first plane, until its planes (RDX) arrive
  std::vector<Port> ports_;
};

}  // namespace s2
