// The chip's data NoC clock by clock, as the RTL builds it (rtl_stubs/chip.sv, qpe.sv, noc_if.sv): a router
// per QPE (noc/router.h) linked to its neighbours, each PE's NoC interface (outbound request and response
// FIFOs, the inbound FIFOs the router fills, the NoC slave that serves reads and writes of the PE's SRAM),
// each PE's DMA (pe/dma_engine.h) and the SRAM port the slave and the DMA share, and the DRAMs behind the
// DRAM ports of the routers they are attached to (their queues and DramTiming, as the RTL's C++ DRAM serves
// them). QPE-DRAM is the one-router case. It carries timing, not data.
//
// The MLAs run here too, clock by clock (pe/mla_engine.h), in the PE beside its DMA and NoC slave: their
// operand-A reads go into the PE's outbound request FIFO (before the DMA's packets, as noc_if.sv gives them
// priority) to the NoC slave of the PE holding operand A, their accesses take the PE's SRAM port after the
// NoC slave and before the DMA, so that MLAs and DMAs slow each other down where the RTL's do.
//
// A clock is two NoC edges: one of the routers alone, then the PEs' edge (the RTL's order: the PE clock
// enable falls on every second NoC edge). Clocks in which nothing can move are skipped: next_event()
// says which clock something happens in next (a DRAM's data or acknowledgement due), so that the NoC costs
// nothing while every transfer waits for a DRAM. Inside a clock only the PEs that can change are evaluated:
// a PE whose engines are idle, or whose DMA only waits for a packet, costs nothing until a packet reaches it
// or an engine starts (set_evaluate_every_clock keeps the straightforward evaluation, the tests' reference).
// A QPE sealed off from the rest of the chip whose MLAs compute in a steady state is not evaluated for the
// whole periods of that state (QpeSkip below): exact, not an approximation.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "model/dram/dram_timing.h"
#include "model/hw_config.h"
#include "model/noc/mesh.h"
#include "model/noc/router.h"
#include "model/pe/dma_engine.h"
#include "model/pe/dma_request.h"
#include "model/pe/mla_engine.h"
#include "model/task_stream.h"

namespace s2 {

class NocFabric {
 public:
  void configure(const HwConfig& cfg);
  const Mesh& mesh() const { return mesh_; }
  // Empties every queue and engine, counters too (between streams).
  void reset();

  // PE `pe`'s DMA starts transfer `t` in clock `clock` (its START register was written in the clock before).
  void start_dma(int pe, const DmaTransfer& t, bool load, std::uint64_t clock);
  bool dma_busy(int pe) const { return pes_[static_cast<std::size_t>(pe)].dma.busy(); }
  // PE `pe`'s DMA and NoC interface, for a watchdog's report.
  std::string describe(int pe) const;
  std::string dump() const;
  // PE `pe`'s MLA starts the tiles `tiles` in clock `clock` (its first SETUP clock), operand A in the SRAM of
  // PE `source` of its QPE.
  void start_mla(int pe, const TaskTiles& tiles, int source, std::uint64_t clock);
  const PhaseCycles& mla_phases(int pe) const { return pes_[static_cast<std::size_t>(pe)].mla.phases(); }
  // Called with (pe, clock) when a DMA goes idle: the ARM sees it idle in `clock`.
  void on_dma_idle(std::function<void(int, std::uint64_t)> f) { on_idle_ = std::move(f); }
  // Called with (pe, clock, done) when an MLA has written an output row of tiles: its results are in the SRAM
  // in `clock`; `done`, the task's last.
  void on_mla_row(std::function<void(int, std::uint64_t, bool)> f) { on_mla_row_ = std::move(f); }

  // The clock evaluated next. Nothing is in flight once every DMA is idle: the NoC then waits for a start.
  std::uint64_t clock() const { return clock_; }
  bool active() const;
  // Evaluates clock clock() (its two NoC edges) and moves on to the next clock in which something can
  // happen (at least clock() + 1). Something is in flight while a DMA or an MLA is busy.
  void step();
  // Test-only: evaluate every PE with anything busy in every clock, as the straightforward model does (the
  // reference the faster evaluation is held to, clock for clock: tests/noc_fabric_speed_test.cpp). Off (the
  // default): a PE whose DMA only waits for a packet, with nothing else of it in use, is left alone.
  void set_evaluate_every_clock(bool on) { evaluate_every_clock_ = on; }
  // Test-only: off, no steady state of a sealed QPE is skipped (below); on (the default) unless every clock is
  // evaluated.
  void set_skip_periods(bool on) { skip_periods_ = on; }
  // Test-only: each frozen QPE, where it is brought to a clock, evaluated again clock by clock from where it
  // froze, and the two states compared (std::logic_error naming the QPE and the clocks where they differ).
  void set_check_skips(bool on) { check_skips_ = on; }
  // QPE clocks that steady states stood in for since the last reset (their periods' clocks, not evaluated).
  std::uint64_t qpe_clocks_skipped() const { return qpe_clocks_skipped_; }
  // The work of the evaluation since the last reset: PE edges evaluated, router edges that moved a packet
  // (accepted one or moved its pipeline on) - what tests/noc_fabric_bench.cpp divides its wall time by.
  std::uint64_t pe_edges_evaluated() const { return pe_edges_evaluated_; }
  std::uint64_t router_edges_evaluated() const { return router_edges_evaluated_; }

  // Statistics since the last reset.
  std::uint64_t link_packets(int from_qpe, int to_qpe) const;
  std::uint64_t dram_ops_served(int dram) const { return drams_[static_cast<std::size_t>(dram)].timing.ops_served(); }
  std::uint64_t dram_busy_cycles(int dram) const { return drams_[static_cast<std::size_t>(dram)].timing.busy_cycles(); }
  // activity (model/activity.h): DRAM d's bytes read and written for requests; router q's packets that
  // entered the NoC there (from a PE or the DRAM port) and the mesh links it sent packets over
  std::uint64_t dram_read_bytes(int dram) const { return drams_[static_cast<std::size_t>(dram)].timing.read_bytes(); }
  std::uint64_t dram_write_bytes(int dram) const { return drams_[static_cast<std::size_t>(dram)].timing.write_bytes(); }
  std::uint64_t router_injected(int qpe) const { return routers_[static_cast<std::size_t>(qpe)]->injected(); }
  std::uint64_t router_hops(int qpe) const { return routers_[static_cast<std::size_t>(qpe)]->hops(); }
  // PE `pe`'s counts here (model/activity.h): its SRAM's bytes read through the NoC slave and the DMA (16 per
  // access) and written by them (sram_dma_written), and pe_busy_cycles, clocks with its MLA or DMA busy.
  Activity pe_activity(int pe) const;
  // `bytes` of a DMA transfer written into PE `pe`'s SRAM: the model's Dma moves a transfer's bytes as it
  // starts (every byte once, as the RTL's lines enable them), this NoC only its timing.
  void sram_dma_written(int pe, std::uint64_t bytes) { pes_[static_cast<std::size_t>(pe)].sram_write_bytes_dma += bytes; }

 private:
  struct PeNode {
    Fifo out[kNocClasses] = {Fifo(4), Fifo(4)};  // outbound request and response FIFOs (the router's input channels)
    enum class Slave { Idle, Wait, Send } slave = Slave::Idle;
    Packet slave_pkt;        // the read being served, then its response, or an acknowledgement to send
    bool sram_busy = false;  // sram2clk: the access granted in the last clock holds the port
    int sram_pending = -1;   // sram2clk: who that access is for (0 slave, 1 DMA), -1 none
    bool rsp_slave = false, rsp_dma = false;  // read data for the slave / the DMA this clock
    DmaEngine dma;
    bool dma_was_busy = false;
    int far_qpe = 0, far_port = 0;  // where the DMA's packets go
    MlaEngine mla;
    int mla_source = 0;  // the PE of the QPE whose SRAM holds operand A
    // activity: SRAM bytes at the NoC slave's and the DMA's port; clocks with the MLA or the DMA busy
    std::uint64_t sram_read_bytes_dma = 0, sram_write_bytes_dma = 0, busy_cycles = 0;
    bool engines_busy = false;
    std::uint64_t busy_since = 0;  // the first clock of the current run of busy clocks
    std::uint64_t starts = 0;      // engines started since the reset (a steady state holds within one task)
  };
  // A QPE sealed off from the rest of the chip - its router carries packets between its own PEs only, no
  // packet is on its way to it from a neighbour or its DRAM port, its DMAs are idle - with its MLAs in their
  // CONV/MM stage computes alone: its next clocks depend on its own state only. Where that state recurs (a
  // period of operand-A reads, operand-B refills and steps that repeats row after row), the QPE is frozen: the
  // clocks of the whole periods ahead are not evaluated, and the QPE is brought to the clock where it is next
  // needed - the periods' end, a packet about to reach it, an engine started on one of its PEs - by adding the
  // periods' counts and evaluating it alone for the clocks of the period in hand (materialize). Its MLAs' tile
  // ends stay clear of the periods, so that no event of it falls in them. Clock for clock what evaluating every
  // clock gives (tests/noc_fabric_speed_test.cpp).
  struct QpeMark {
    std::vector<std::int64_t> key;
    std::uint64_t hash = 0, clock = 0;
    std::array<MlaEngine::Counters, kPesPerQpe> mla{};
    std::array<std::uint64_t, kPesPerQpe> setup{}, output{}, starts{}, sram_read{};
    Router::Counts router{};
  };
  struct QpeSkip {
    bool frozen = false;
    std::uint64_t from = 0, dt = 0, periods = 0;  // frozen: its state is clock `from`'s; `periods` of `dt` clocks ahead
    QpeMark period_start;                         // the counts a period began with (its end: the state at `from`)
    std::vector<QpeMark> marks;                   // states seen, at rows of the lead MLA (the first busy one)
    std::uint64_t last_row = ~0ull;
    bool gave_up = false;            // no state recurred in the tasks its PEs' engine starts numbered gave_up_starts
    std::uint64_t gave_up_starts = 0;
    std::uint64_t until() const { return from + periods * dt; }
  };
  // A DRAM (rtl_dram.h's queues, timing only): requests served in the order they reach it.
  struct DramQueues {
    DramTiming timing;
    struct Due {
      int pe = 0;
      PacketKind kind = PacketKind::DmaData;
      std::uint64_t release = 0;
    };
    struct Port {
      int qpe = 0;
      std::deque<Due> data, acks;
    };
    std::vector<Port> ports;
    struct PeState {
      bool read_open = false;
      std::uint64_t store_row = 0;   // rows of the running store received
      std::uint64_t lines_expected = 0, lines_received = 0;
      bool write_open = false;
      DmaRequest write;
    };
    std::vector<PeState> pe;  // per chip PE
  };
  struct DramAttachment {
    int dram = -1, port = -1;
    Fifo in[kNocClasses] = {Fifo(4), Fifo(4)};  // qpe.sv's DRAM inbound FIFOs (the router's DRAM input channels)
  };

  // What one PE decides in its clock edge, on the state before it.
  struct PeEdge {
    int grant = -1;  // the SRAM port: 0 the NoC slave, 1 the DMA, 2 the MLA
    MlaEngine::Decision mla;
    bool slave_write = false;
    PacketKind head = PacketKind::MemWr;  // the inbound request at the slave
    bool push_rsp = false, rsp_now = false, rsp_full = false;
    bool pop_rsp = false;
    int push_req = 0;  // 1 an MLA operand-A read, 2 the DMA's packet
    DmaEngine::Inputs dma;
    DmaEngine::Outputs out;
  };
  struct DramEdge {
    bool take = false;  // the request at the head of the router's DRAM output
    int offer = 0;      // 1 a data line, 2 an acknowledgement, into the router's DRAM inbound FIFO
  };
  PeEdge pe_decide(int pe) const;
  void pe_apply(int pe, const PeEdge& e);
  // Whether PE `pe` takes part in this clock; `waiting_dma`: a busy DMA that only waits counts (the reference).
  bool pe_involved(int pe, bool waiting_dma) const;
  DramEdge dram_decide(int qpe) const;
  void dram_apply(int qpe, const DramEdge& e);
  void dram_receive(int dram, const Packet& p);
  void set_destination(Packet& p, int qpe, int port) const;
  void set_source(Packet& p, int qpe, int port) const;
  bool quiet() const;
  // PE clocks with an engine busy: an engine starts in `clock`; an engine ended, idle from `clock` on
  static void engine_started(PeNode& n, std::uint64_t clock);
  static void engine_ended(PeNode& n, std::uint64_t clock);
  void wake_at(std::uint64_t clock);  // something starts in `clock`
  std::uint64_t next_release() const;
  // steady states of sealed QPEs (QpeSkip)
  bool sealed(int q) const;
  bool approached(int q) const;  // a packet of a neighbour or of the DRAM port is on its way into QPE q
  void look_for_period(int q);
  bool note_state(int q, QpeMark& m) const;
  static void append_ports(std::vector<std::int64_t>& key, const PeNode& n);
  void materialize(int q, std::uint64_t clock);
  void run_alone(int q, std::uint64_t from, std::uint64_t to);
  // the clock an engine started in `clock` starts in (wake_at's)
  std::uint64_t start_clock(std::uint64_t clock) const;
  bool only_frozen_busy() const;

  HwConfig cfg_;
  Mesh mesh_;
  int sram_cycles_ = 1;
  std::vector<std::unique_ptr<Router>> routers_;
  std::vector<PeNode> pes_;
  std::vector<DramQueues> drams_;
  std::vector<DramAttachment> at_;  // per QPE
  std::vector<int> dram_qpes_;       // the QPEs with a DRAM port, ascending
  std::vector<QpeCoord> coords_;     // per QPE, its place in the mesh
  std::function<void(int, std::uint64_t)> on_idle_;
  std::function<void(int, std::uint64_t, bool)> on_mla_row_;
  std::uint64_t clock_ = 0, last_evaluated_ = 0;
  bool evaluated_any_ = false;
  std::int64_t in_flight_ = 0;  // packets in FIFOs, pipelines and NoC slaves (a read lives on as its response)
  std::vector<int> decisions_;
  std::vector<DramEdge> dram_edges_;
  std::vector<PeEdge> pe_edges_;
  std::vector<int> involved_;  // the PEs taking part in the clock being evaluated, ascending
  // bit p: PE p may take part in the next PE edge (the fast evaluation's; a PE not marked does not)
  std::vector<std::uint64_t> marked_;
  void mark(int pe) { marked_[static_cast<std::size_t>(pe) / 64] |= 1ull << (pe % 64); }
  bool evaluate_every_clock_ = false;
  bool skip_periods_ = true;
  std::vector<QpeSkip> skip_;    // per QPE
  std::vector<int> frozen_;      // the frozen QPEs
  std::vector<int> row_moved_;   // the QPEs whose lead MLA began a row in this clock
  QpeMark scratch_;
  // per QPE: its neighbours' routers and their output channel (request class) towards it
  std::vector<std::vector<std::pair<int, int>>> toward_;
  bool alone_ = false;           // run_alone is evaluating a QPE (no event may fall there)
  bool check_skips_ = false;
  std::vector<std::int64_t> full_state(int q) const;  // everything of QPE q (its pending clocks relative)
  std::uint64_t qpe_clocks_skipped_ = 0, pe_edges_evaluated_ = 0, router_edges_evaluated_ = 0;
  int busy_dmas_ = 0, busy_mlas_ = 0;
};

}  // namespace s2
