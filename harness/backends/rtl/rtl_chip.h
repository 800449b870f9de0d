// Task streams on the RTL: RtlChip, over a fabric of Verilated QPEs (linked_qpes.h, the product's; flat_chip.h,
// chip.sv verilated flat, a test's). It drives each QPE's ARM and DRAM ports (qpe_ports.h); the C++ ARMs,
// DRAMs and host are here.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "harness/backends/backend.h"
#include "harness/backends/rtl/qpe_ports.h"
#include "harness/backends/rtl/qpe_top.h"
#include "harness/backends/rtl/rtl_dram.h"
#include "model/chip/host_sync.h"
#include "model/noc/mesh.h"
#include "model/pe/arm_ops.h"
#include "model/pe/arm_sequencer.h"
#include "model/pe/pe_registers.h"
#include "model/sram_layout.h"

namespace s2 {

// One packet through a DRAM port of the chip, as RtlChip's port log records it (RtlChip::log_dram_ports).
struct DramPortEvent {
  std::uint64_t noc_clock = 0;  // NoC clocks since the run began
  int qpe = 0;                  // the router whose DRAM port it passed
  bool to_dram = false;         // a request the router gave its DRAM, or a packet the DRAM gave the router
  DramPortPacket packet;        // (release_cycle unused)
  bool operator==(const DramPortEvent& o) const {
    return noc_clock == o.noc_clock && qpe == o.qpe && to_dram == o.to_dram && packet.pe == o.packet.pe &&
           packet.kind == o.packet.kind && packet.addr == o.packet.addr && packet.be == o.packet.be && packet.data == o.packet.data;
  }
};

// Task streams on the RTL (rtl_stubs/README.md, "QPE-DRAM" and "The chip"): the QPEs of cfg.chip, a Fabric
// (linked_qpes.h: each the Verilated QPE, their mesh ports linked as rtl_stubs/chip.sv links them); a C++ DRAM
// (RtlDram, the model's DRAM timing) behind the DRAM ports of the routers each DRAM is attached to; a C++
// ARM per PE driving the PE's ARM port; and the host. QPE-DRAM is the one-QPE, one-DRAM chip.
//
// The ARM runs its PE's commands as the model's ArmCore does (model/pe/arm_core.h): it waits for the DMA or
// the MLA to be idle, writes its registers one per PE clock, and (unless the command is async) waits for the
// DMA to go idle or the MLA's done interrupt; it carries out element-wise operations on the SRAM itself at
// its ARM clocks (arm_op_cycles); it meets the other PEs of a Sync group through the host. The host is C++ and, as in
// the model (model/chip/system.h), a PE's host traffic (its start, its Syncs, its end) takes the host
// interface's latency plus the hops between the PE's QPE and its host agent, each way.
template <typename Fabric, typename TracedFabric = Fabric>
class RtlChip final : public StreamBackend {
 public:
  explicit RtlChip(const HwConfig& cfg, const RtlSimOptions& sim = {}) : cfg_(cfg), sim_(sim), mesh_(cfg.chip), fabric_(cfg.chip) {
    check_rtl_matches(cfg, fabric_.sram_bytes());
    if constexpr (requires(Fabric& f) { f.simulate(sim); }) fabric_.simulate(sim);
    const int n = cfg.chip.qpes();
    io_.resize(static_cast<std::size_t>(n));
    dram_at_.assign(static_cast<std::size_t>(n), {-1, -1});
    for (std::size_t d = 0; d < cfg.chip.drams.size(); ++d)
      for (std::size_t k = 0; k < cfg.chip.drams[d].attach.size(); ++k)
        dram_at_[static_cast<std::size_t>(cfg.chip.qpe_index(cfg.chip.drams[d].attach[k]))] = {static_cast<int>(d), static_cast<int>(k)};
  }
  std::string name() const override { return "rtl"; }
  // Records every packet through a DRAM port in the next runs into `log` (nullptr: no more), as the test that
  // shows two fabrics equal compares them.
  void log_dram_ports(std::vector<DramPortEvent>* log) { port_log_ = log; }

  using StreamBackend::run;
  StreamResult run(const TaskStream& s, SystemMemory& mem, const StreamRunOptions& opt) override {
    check_chip_stream(s, mem);
    // a run asking for waves goes to the chip of traced QPEs (made for the first that asks)
    if constexpr (!std::is_same_v<Fabric, TracedFabric>) {
      if (opt.waves) {
        if (!traced_) traced_ = std::make_unique<RtlChip<TracedFabric, TracedFabric>>(cfg_, sim_);
        return traced_->run(s, mem, opt);
      }
    }
    if (opt.waves) std::filesystem::create_directories(opt.waves->path);
    const int pes = static_cast<int>(s.pe.size());
    const std::size_t n_drams = cfg_.chip.drams.size();
    mem.drams.resize(n_drams);
    for (auto& d : mem.drams) d.resize(s.dram_bytes);
    fabric_.reset(cfg_.flaws);
    noc_clocks_ = 0;
    std::vector<std::uint8_t> img(std::size_t(cfg_.sram_bytes), 0);  // the RTL's size (check_rtl_matches)
    for (int p = 0; p < pes; ++p) {
      const auto it = mem.sram.find(p);
      std::fill(img.begin(), img.end(), 0);
      if (it != mem.sram.end()) std::copy(it->second.begin(), it->second.end(), img.begin());
      fabric_.sram_write(p / kPesPerQpe, p % kPesPerQpe, img);
    }
    // the DRAMs, each answering a PE through the attached router nearest the PE's QPE
    std::vector<std::unique_ptr<RtlDram>> drams;
    for (std::size_t d = 0; d < n_drams; ++d) {
      std::vector<int> egress(static_cast<std::size_t>(pes), -1);
      const auto& attach = cfg_.chip.drams[d].attach;
      for (int p = 0; p < pes; ++p) {
        const QpeCoord r = cfg_.chip.qpe_coord(mesh_.dram_router(static_cast<int>(d), p / kPesPerQpe));
        egress[static_cast<std::size_t>(p)] = static_cast<int>(std::find(attach.begin(), attach.end(), r) - attach.begin());
      }
      drams.push_back(std::make_unique<RtlDram>(cfg_, mem.drams[d], std::move(egress)));
    }

    const std::uint64_t start = cycle();
    if (opt.waves) fabric_.start_waves(opt.waves->path);
    std::vector<Arm> arm;
    arm.reserve(static_cast<std::size_t>(pes));
    for (int p = 0; p < pes; ++p) {
      arm.emplace_back(p % kPesPerQpe, std::size_t(cfg_.sram_bytes));
      arm.back().sequencer.start(cfg_, &s.pe[static_cast<std::size_t>(p)]);
      arm.back().resume_at = start + host_cycles(p / kPesPerQpe);
    }
    syncs_.start(s);
    StreamResult r;
    while (true) {
      const std::uint64_t now = cycle();
      bool all_done = true;
      for (int p = 0; p < pes; ++p) {
        Arm& a = arm[static_cast<std::size_t>(p)];
        step(p, a, now, opt);
        all_done = all_done && a.state == Arm::Done;
      }
      if (all_done) break;
      if (opt.watchdog_cycles && now - start >= opt.watchdog_cycles) {
        r.stalled = stalled_report(s, arm, now - start);
        break;
      }
      drive_arm_ports(arm);
      if (opt.waves) fabric_.dumping(now - start >= opt.waves->begin_cycle && now - start < opt.waves->end_cycle);
      noc_clock(drams);
      noc_clock(drams);
    }
    fabric_.stop_waves();
    for (int q = 0; q < fabric_.qpes(); ++q)
      for (int k = 0; k < kPesPerQpe; ++k) fabric_.ports(q).arm_write(k, nullptr);
    r.completed = r.stalled.empty();
    if constexpr (requires(Fabric& f) { f.qpe_clocks(); }) {
      r.qpe_clocks_evaluated = fabric_.qpe_clocks_evaluated();
      r.qpe_clocks_simulated = fabric_.qpe_clocks();
    }
    // every transfer is complete when every PE is: anything a DRAM still holds is a protocol error
    for (std::size_t d = 0; d < n_drams; ++d)
      if (r.completed && !drams[d]->idle()) throw std::logic_error("RTL: DRAM " + std::to_string(d) + " holds packets after every PE finished");
    std::uint64_t last = 0;
    r.pe_end_cycle.resize(static_cast<std::size_t>(pes));
    r.command_end_cycle.resize(static_cast<std::size_t>(pes));
    for (int p = 0; p < pes; ++p) {
      const Arm& a = arm[static_cast<std::size_t>(p)];
      const std::uint64_t end = (a.state == Arm::Done ? a.end_cycle : cycle()) - start;
      r.pe_end_cycle[static_cast<std::size_t>(p)] = end;
      for (std::uint64_t c : a.sequencer.command_end_cycles()) r.command_end_cycle[static_cast<std::size_t>(p)].push_back(c - start);
      last = std::max(last, end + host_cycles(p / kPesPerQpe));  // the host hears the PE through its agent
      r.arm_cycles += a.sequencer.arm_cycles();
      for (const StreamCommand& c : s.pe[static_cast<std::size_t>(p)]) r.mla_tasks += c.kind == CommandKind::Mla;
      r.active_pes += !s.pe[static_cast<std::size_t>(p)].empty();
    }
    r.cycles = last;
    // each PE's counts: the RTL's counters (MLA, SRAM ports, busy clocks), its C++ ARM's; idle: the clocks to
    // its end that were not busy
    r.pe_activity.resize(static_cast<std::size_t>(fabric_.qpes() * kPesPerQpe));
    if (!fabric_.counts_activity()) r.activity_unavailable = rtl_counter_counts();
    for (int p = 0; p < fabric_.qpes() * kPesPerQpe; ++p) {
      Activity& a = r.pe_activity[static_cast<std::size_t>(p)];
      if (fabric_.counts_activity()) a = fabric_.activity(p / kPesPerQpe, p % kPesPerQpe);
      if (p < pes) {
        a += arm[static_cast<std::size_t>(p)].sequencer.activity();
        if (!s.pe[static_cast<std::size_t>(p)].empty() && fabric_.counts_activity())
          a.pe_idle_cycles = Activity::idle_cycles(r.pe_end_cycle[static_cast<std::size_t>(p)], a.pe_busy_cycles);
      }
      r.activity += a;
    }
    for (const auto& d : drams) r.dram_ops += d->ops_served();
    count_noc_and_drams(r, drams);
    for (auto& [p, image] : mem.sram) {
      fabric_.sram_read(p / kPesPerQpe, p % kPesPerQpe, img);
      image.assign(img.begin(), img.begin() + static_cast<std::ptrdiff_t>(std::min(img.size(), image.size())));
    }
    return r;
  }

 private:
  std::uint64_t cycle() { return fabric_.cycle(); }
  // PE clocks between QPE q and the host: the host interface and the hops to its agent (model: System)
  std::uint64_t host_cycles(int q) const { return host_path_cycles(cfg_, mesh_, q); }

  // The routers' activity counters (each router counts the links it sends over, so a hop is counted once,
  // whichever fabric links the QPEs) and the C++ DRAMs' bytes, each part summed into the total; a QPE RTL
  // without the counters leaves the NoC's counts unavailable.
  void count_noc_and_drams(StreamResult& r, const std::vector<std::unique_ptr<RtlDram>>& drams) {
    for (int q = 0; q < fabric_.qpes(); ++q) {
      Activity& a = r.router_activity.emplace_back();
      a.noc_packets = fabric_.ports(q).noc_packets();
      a.noc_packet_hops = fabric_.ports(q).noc_packet_hops();
      r.activity += a;
    }
    if (!QpePorts<typename Fabric::Top>::kCountsNoc) r.activity_unavailable.insert(r.activity_unavailable.end(), {"noc_packets", "noc_packet_hops"});
    for (const auto& d : drams) {
      Activity& a = r.dram_activity.emplace_back();
      a.dram_read_bytes = d->read_bytes();
      a.dram_write_bytes = d->write_bytes();
      r.activity += a;
    }
  }

  // What the RTL cannot run is refused before anything runs.
  void check_chip_stream(const TaskStream& s, const SystemMemory& mem) const {
    const StreamLimits lim = stream_limits(cfg_);
    check_stream(s, lim);
    if (mem.drams.size() > cfg_.chip.drams.size())
      throw std::invalid_argument("stream " + s.name + ": " + std::to_string(mem.drams.size()) + " DRAM images for " +
                                  std::to_string(cfg_.chip.drams.size()) + " DRAM(s)");
    for (const auto& [p, image] : mem.sram)
      if (p < 0 || p >= lim.pes || image.size() > std::size_t(cfg_.sram_bytes))
        throw std::invalid_argument("stream " + s.name + ": SRAM image for PE " + std::to_string(p) + " does not fit the chip");
    if (const std::string why = refusal(s); !why.empty()) throw std::invalid_argument(why);
  }

  // A PE's ARM: its commands as the sequencer plans them (the model's ArmCore's plans), clocked here.
  struct Arm {
    enum State { Fetch, PreDma, PreMla, Write, Next, WaitDma, WaitMla, WaitArm, WaitSync, Drain, Done } state = Fetch;
    Arm(int pe, std::size_t sram_bytes) : sequencer(pe, sram_bytes) {}
    ArmSequencer sequencer;
    ArmCommandPlan plan;                  // the command in hand's
    bool mla_started = false;
    std::size_t written = 0;              // of plan.writes, one per PE clock
    State after_writes = Fetch;
    std::uint64_t resume_at = 0;          // WaitArm / WaitSync / start: the clock it may go on
    std::uint64_t end_cycle = 0;
    std::string describe(const std::vector<StreamCommand>& cmds) const {
      const std::size_t next = sequencer.next();
      static const char* names[] = {"fetching",
                                    "waiting for its DMA to be idle",
                                    "waiting for its MLA to be idle",
                                    "writing registers",
                                    "going on",
                                    "waiting for its DMA",
                                    "waiting for its MLA",
                                    "in an element-wise operation",
                                    "waiting at a Sync",
                                    "waiting for its engines after its last command",
                                    "done"};
      if (state == Done) return "done";
      if (state == Drain) return names[state];
      std::string what = fmt::format("command {} of {} ({} of {}), {}", next, cmds.size(), to_string(cmds[next].kind),
                                     cmds[next].operation, names[state]);
      if (state == WaitSync) what += fmt::format(" of group {}", cmds[next].sync_group);
      if ((state == WaitDma || state == PreDma) && next < cmds.size() &&
          (cmds[next].kind == CommandKind::DmaLoad || cmds[next].kind == CommandKind::DmaStore))
        what += fmt::format(" ({} {})", cmds[next].kind == CommandKind::DmaLoad ? "load from" : "store to",
                            to_string(cmds[next].dma.remote));
      return what;
    }
  };
  // The watchdog's report: how many PEs finished, and what each of the others waited for.
  std::string stalled_report(const TaskStream& s, const std::vector<Arm>& arm, std::uint64_t clocks) const {
    std::size_t done = 0;
    std::string waiting;
    for (std::size_t p = 0; p < arm.size(); ++p) {
      if (arm[p].state == Arm::Done) {
        ++done;
        continue;
      }
      waiting += fmt::format("{}PE {} (QPE {}, PE {}): {}", waiting.empty() ? "" : "; ", p, p / kPesPerQpe, p % kPesPerQpe,
                             arm[p].describe(s.pe[p]));
    }
    return fmt::format("after {} PE clocks (watchdog), {} of {} PEs finished; {}", clocks, done, arm.size(), waiting);
  }

  // Advances PE p's ARM in clock `now` (after the previous clock edge): as many commands as complete at
  // once, then at most one register write for this clock.
  void step(int p, Arm& a, std::uint64_t now, const StreamRunOptions& opt) {
    if (now < a.resume_at && (a.state == Arm::Fetch || a.state == Arm::WaitArm || a.state == Arm::WaitSync)) return;
    const int q = p / kPesPerQpe;
    ArmSequencer& seq = a.sequencer;
    while (true) {
      switch (a.state) {
        case Arm::Done: return;
        case Arm::Fetch: fetch(a, q, now, opt); break;
        case Arm::PreDma:
          if (dma_busy(p)) return;
          a.state = Arm::Write;
          break;
        case Arm::PreMla:
          if (!mla_idle(p, a)) return;
          a.state = Arm::Write;
          break;
        case Arm::Write: return;  // drive_arm_ports writes it in this clock
        case Arm::Next: finish(a); break;
        case Arm::WaitDma:
          if (dma_busy(p)) return;
          finish(a);
          break;
        case Arm::WaitMla:
          if (!mla_idle(p, a)) return;
          finish(a);
          break;
        case Arm::Drain:
          if (dma_busy(p) || !mla_idle(p, a)) return;
          a.state = Arm::Done;
          a.end_cycle = now;
          return;
        case Arm::WaitArm:
          if (now < a.resume_at) return;
          fabric_.sram_read(q, p % kPesPerQpe, sram_);
          seq.count_sram(arm_op_sram_bytes(seq.command().arm, sram_.data(), sram_.size()));
          arm_apply(seq.command().arm, sram_.data(), sram_.size());
          fabric_.sram_write(q, p % kPesPerQpe, sram_);
          finish(a);
          break;
        case Arm::WaitSync: {
          const int g = seq.command().sync_group;
          if (!syncs_.complete(g, a.plan.sync_index)) return;
          // the host's release reaches the PE a host latency and the hops to its agent later
          const std::uint64_t release = syncs_.latest(g, a.plan.sync_index) + host_cycles(q);
          if (now < release) {
            a.resume_at = release;
            return;
          }
          finish(a);
          break;
        }
      }
    }
  }
  // The ARM takes its next command (in QPE q, clock `now`): the sequencer's plan, and the state it begins in.
  void fetch(Arm& a, int q, std::uint64_t now, const StreamRunOptions& opt) {
    ArmSequencer& seq = a.sequencer;
    if (seq.at_end()) {
      a.state = Arm::Drain;  // the PE's work ends when its engines are idle
      return;
    }
    const StreamCommand& c = seq.command();
    const bool dma = c.kind == CommandKind::DmaLoad || c.kind == CommandKind::DmaStore;
    const NocNode far = dma ? far_end(c.dma, q) : NocNode{};
    const bool data_cost = c.kind == CommandKind::Arm && arm_op_cycles_read_sram(c.arm.kind);
    if (data_cost) fabric_.sram_read(q, a.sequencer.pe(), sram_);
    a.plan = seq.plan(dma ? &far : nullptr, data_cost ? sram_.data() : nullptr);
    a.written = 0;
    const bool on_dma = a.plan.engine == ArmCommandPlan::Engine::Dma;
    switch (a.plan.engine) {
      case ArmCommandPlan::Engine::Dma:
      case ArmCommandPlan::Engine::Mla:
        if (a.plan.writes.empty()) {  // WaitDma, WaitMla
          a.state = on_dma ? Arm::WaitDma : Arm::WaitMla;
          break;
        }
        a.after_writes = !a.plan.wait_done ? Arm::Next : on_dma ? Arm::WaitDma : Arm::WaitMla;
        a.state = on_dma ? Arm::PreDma : Arm::PreMla;
        break;
      case ArmCommandPlan::Engine::None:
        if (c.kind == CommandKind::Arm) {
          a.resume_at = now + (opt.arm_ops_timed ? a.plan.arm_cycles : 0);
          a.state = Arm::WaitArm;
        } else {  // a Sync: its message reaches the host
          syncs_.arrive(c.sync_group, a.plan.sync_index, now + host_cycles(q));
          a.state = Arm::WaitSync;
        }
        break;
    }
  }
  // where a DMA transfer's requests go: the DRAM's attached router nearest the PE's QPE (model: Dma), or
  // the other PE's port at its QPE's router
  NocNode far_end(const DmaTransfer& t, int q) const {
    if (t.remote.kind == MemoryRef::Kind::Sram) {
      const QpeCoord c = cfg_.chip.qpe_coord(t.remote.index / kPesPerQpe);
      return NocNode{c.x, c.y, t.remote.index % kPesPerQpe};
    }
    const QpeCoord c = cfg_.chip.qpe_coord(mesh_.dram_router(t.remote.index, q));
    return NocNode{c.x, c.y, kNocDramPort};
  }
  bool dma_busy(int p) { return (fabric_.ports(p / kPesPerQpe).dma_busy() >> (p % kPesPerQpe)) & 1u; }
  bool mla_idle(int p, const Arm& a) {
    return !a.mla_started || ((fabric_.ports(p / kPesPerQpe).pe_irq_done() >> (p % kPesPerQpe)) & 1u);
  }
  void finish(Arm& a) {
    a.sequencer.finish(cycle());
    a.state = Arm::Fetch;
  }

  void drive_arm_ports(std::vector<Arm>& arm) {
    for (int q = 0; q < fabric_.qpes(); ++q) {
      auto ports = fabric_.ports(q);
      for (int k = 0; k < kPesPerQpe; ++k) {
        const std::size_t p = static_cast<std::size_t>(q * kPesPerQpe + k);
        Arm* a = p < arm.size() && arm[p].state == Arm::Write ? &arm[p] : nullptr;
        ports.arm_write(k, a ? &a->plan.writes[a->written] : nullptr);
        if (!a) continue;
        if (a->plan.writes[a->written].index == qpe_addr::kStart) a->mla_started = true;
        if (++a->written == a->plan.writes.size()) a->state = a->after_writes;
      }
    }
  }

  // One NoC clock of the chip: every DRAM port gets what its DRAM has due and offers its request; the fabric
  // settles (the mesh links: rtl_stubs/chip.sv's wiring); then the clock edge, everywhere, and the DRAMs take
  // what crossed their ports at it.
  void noc_clock(std::vector<std::unique_ptr<RtlDram>>& drams) {
    const std::uint64_t now = cycle();
    const int n = fabric_.qpes();
    for (int q = 0; q < n; ++q) {
      auto t = fabric_.ports(q);
      const auto [d, port] = dram_at_[static_cast<std::size_t>(q)];
      t.dram_request_pop(false);
      t.dram_offer(false);
      if (d < 0) continue;
      PortIo& x = io_[static_cast<std::size_t>(q)];
      x = PortIo{};
      RtlDram& dram = *drams[static_cast<std::size_t>(d)];
      x.take = t.dram_request_valid();
      if (x.take) {
        x.in.pe = static_cast<unsigned>(chip_pe_of_node(t.dram_request_source()));
        x.in.kind = t.dram_request_kind();
        x.in.addr = t.dram_request_addr();
        t.dram_request_data(x.in.data);
      }
      t.dram_request_pop(x.take);
      x.rsp = true;
      const DramPortPacket* out = dram.due(port, true, now);
      if (!out) {
        x.rsp = false;
        out = dram.due(port, false, now);
      }
      x.offered = out != nullptr;
      t.dram_offer(x.offered);
      if (out) {
        x.out = *out;
        t.dram_packet(node_of_chip_pe(static_cast<int>(out->pe)), out->kind, out->addr, out->be, out->data);
      }
    }
    fabric_.settle();
    for (int q = 0; q < n; ++q) {
      if (dram_at_[static_cast<std::size_t>(q)].first < 0) continue;
      PortIo& x = io_[static_cast<std::size_t>(q)];
      x.offered = x.offered && fabric_.ports(q).dram_ready();  // taken at this edge
    }
    fabric_.clock_edge();
    for (int q = 0; q < n; ++q) {
      const auto [d, port] = dram_at_[static_cast<std::size_t>(q)];
      if (d < 0) continue;
      PortIo& x = io_[static_cast<std::size_t>(q)];
      RtlDram& dram = *drams[static_cast<std::size_t>(d)];
      if (x.take) dram.receive(x.in, now);
      if (x.offered) dram.pop(port, x.rsp);
      if (port_log_) {
        if (x.take) port_log_->push_back({noc_clocks_, q, true, x.in});
        if (x.offered) port_log_->push_back({noc_clocks_, q, false, x.out});
      }
    }
    ++noc_clocks_;
  }
  int chip_pe_of_node(unsigned bits) const {
    const NocNode n = noc_node_of_bits(bits);
    return cfg_.chip.qpe_index({n.x, n.y}) * kPesPerQpe + n.port;
  }
  unsigned node_of_chip_pe(int p) const {
    const QpeCoord c = cfg_.chip.qpe_coord(p / kPesPerQpe);
    return noc_node_bits({c.x, c.y, p % kPesPerQpe});
  }

  HwConfig cfg_;
  RtlSimOptions sim_;
  Mesh mesh_;
  Fabric fabric_;
  std::unique_ptr<RtlChip<TracedFabric, TracedFabric>> traced_;  // made for the first run that asks for waves
  struct PortIo {                  // a DRAM port in the NoC clock being simulated
    bool take = false, offered = false, rsp = false;
    DramPortPacket in, out;
  };
  std::vector<DramPortEvent>* port_log_ = nullptr;
  std::uint64_t noc_clocks_ = 0;
  std::vector<PortIo> io_;                          // per QPE
  std::vector<std::pair<int, int>> dram_at_;        // per QPE: the DRAM at its DRAM port and which of its ports
  HostSync<std::uint64_t> syncs_;  // in PE clocks
  std::vector<std::uint8_t> sram_;
};

}  // namespace s2
