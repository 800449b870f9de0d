// The PE's DMA clock by clock, by the rules of rtl_stubs/dma.sv, dma_peer.sv and dma_realigner.sv: the
// packets it hands its PE's outbound request FIFO, its accesses to its own SRAM port, and when it goes idle.
// It moves no data (the model's Dma copies a transfer's bytes when it starts); it is the DMA's timing.
//   DRAM transfers: a load sends its request (PKT_DRAM_RD, then PKT_DRAM_RDX) and waits until its last line
//   was written (the NoC slave's PKT_DMA_LAST); a store sends per row a header (at most
//   store_requests_in_flight rows unacknowledged) and the row's lines, each read through the DMA's SRAM
//   port (lowest priority), and waits for every acknowledgement.
//   Transfers with another PE's SRAM: line reads (load) or writes (store, the row's last acknowledged) to the
//   far PE's NoC slave, at most peer_reads_in_flight lines held, through the line realigner.
// The NoC fabric (noc/fabric.h) evaluates it on every PE clock edge: outputs() on the state before the
// edge and the fabric's signals, then clock() with what the rest of the PE did in that edge.
#pragma once

#include <cstdint>
#include <string>

#include "model/hw_config.h"
#include "model/noc/packet.h"
#include "model/task_stream.h"

namespace s2 {

class DmaEngine {
 public:
  // What the rest of the PE tells the DMA in a PE clock edge (all from the state before the edge).
  struct Inputs {
    bool pkt_ready = false;     // its packet is pushed into the outbound request FIFO if it offers one
    bool s_rsp = false;         // the SRAM's read data for the DMA is there this clock
    bool s_grant = false;       // its SRAM access is granted
    bool request_done = false;  // the NoC slave writes a PKT_DMA_LAST for it
    bool ack = false;           // a PKT_DMA_ACK arrives
    bool rd_rsp = false;        // a PKT_RD_RSP of its own (not an MLA's) arrives
  };
  struct Outputs {
    bool pkt_valid = false;
    PacketKind kind = PacketKind::DramRd;
    bool s_valid = false;  // it asks for its SRAM port
    bool s_we = false;
  };

  void configure(int store_requests_in_flight, int reads_in_flight) {
    rows_in_flight_ = static_cast<std::uint32_t>(store_requests_in_flight);
    reads_in_flight_ = static_cast<std::uint32_t>(reads_in_flight);
  }
  // The START register was written in the edge before this clock: the transfer's first state.
  void start(const DmaTransfer& t, bool load, bool far_is_pe);
  bool busy() const { return state_ != State::Idle; }
  const DmaTransfer& transfer() const { return t_; }
  // The outputs in this clock, given the PE's signals that they depend on (pkt_ready, s_rsp).
  Outputs outputs(bool pkt_ready, bool s_rsp) const;
  // The edge: the state after it.
  void clock(const Inputs& in);
  // Nothing will change until a packet arrives (or a started transfer comes): no packet or SRAM access
  // wanted, nothing the state moves on by itself.
  bool waiting_only() const;
  // Its state, for a watchdog's report: "store, row header, 2 requests outstanding".
  std::string describe() const;

 private:
  enum class State { Idle, LoadReq, LoadPlanes, StoreHdr, StoreLines, Drain, Peer };
  // dma_peer.sv's comb signals
  struct PeerComb {
    bool rd_go = false, rd_row_start = false, rd_row_end = false;
    std::uint32_t rd_row_lines = 0, rd_addr = 0;
    std::uint64_t src_lines = 0, dst_lines = 0;
    bool due_now = false, due_next = false, dst_last = false;
  };
  PeerComb peer_comb() const;
  std::uint32_t store_row_lines() const;

  DmaTransfer t_;
  State state_ = State::Idle;
  bool store_ = false;
  std::uint32_t rows_in_flight_ = 2, reads_in_flight_ = 32;
  // DRAM engine (dma.sv)
  std::uint32_t outstanding_ = 0;
  std::uint64_t row_i_ = 0, plane_i_ = 0;
  std::uint64_t row_sram_ = 0, plane_sram_ = 0;
  std::uint32_t lines_to_read_ = 0, lines_to_send_ = 0;
  bool inflight_ = false, hold_valid_ = false;
  // peer engine (dma_peer.sv) and its realigner (dma_realigner.sv)
  bool active_ = false, issued_all_ = false, written_all_ = false;
  std::uint64_t rd_plane_base_ = 0, rd_row_addr_ = 0, rd_row_ = 0, rd_plane_ = 0;
  std::uint32_t rd_lines_left_ = 0;
  std::uint32_t held_ = 0, rows_open_ = 0, buffered_ = 0;
  std::uint64_t wr_src_row_ = 0, wr_src_plane_ = 0, wr_dst_row_ = 0, wr_dst_plane_ = 0, wr_row_ = 0, wr_plane_ = 0;
  std::uint64_t taken_ = 0, given_ = 0;
};

}  // namespace s2
