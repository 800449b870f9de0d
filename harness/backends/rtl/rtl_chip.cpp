// Task streams on the RTL: RtlChip (below). It knows the chip's signals of the Verilated QPE (mesh links,
// DRAM port, ARM port, dma_busy and pe_irq_done); the QPE's clock, reset and SRAM are qpe_top.h's.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "harness/backends/backend.h"
#include "harness/backends/rtl/qpe_top.h"
#include "harness/backends/rtl/rtl_dram.h"
#include "model/noc/mesh.h"
#include "model/chip/host_sync.h"
#include "model/pe/arm_ops.h"
#include "model/pe/arm_sequencer.h"
#include "model/pe/pe_registers.h"
#include "model/sram_layout.h"

namespace s2 {
namespace {

// a QPE's mesh channels (direction x message class) and the bits of a NoC packet (rtl_stubs/s2_pkg.svh
// noc_pkt_t: two 11-bit nodes, kind 4, a_read 1, rtag 7, be 16, addr 17, data 128)
constexpr int kMeshChannels = 8;
constexpr int kNocPacketBits = 2 * 11 + 4 + 1 + 7 + 16 + 17 + 128;

// Copies n bits from bit `from` of src to bit `to` of dst (Verilator's wide signals: 32-bit words, least
// significant first).
void copy_bits(const std::uint32_t* src, int from, std::uint32_t* dst, int to, int n) {
  while (n > 0) {
    const int sb = from % 32, db = to % 32;
    const int take = std::min({n, 32 - sb, 32 - db});
    const std::uint32_t mask = take == 32 ? ~0u : ((1u << take) - 1);
    const std::uint32_t v = (src[from / 32] >> sb) & mask;
    dst[to / 32] = (dst[to / 32] & ~(mask << db)) | (v << db);
    from += take;
    to += take;
    n -= take;
  }
}

// Task streams on the RTL (rtl_stubs/README.md, "QPE-DRAM" and "The chip"): the QPEs of cfg.chip, each the
// Verilated QPE, their mesh ports linked clock by clock as rtl_stubs/chip.sv links them; a C++ DRAM
// (RtlDram, the model's DRAM timing) behind the DRAM ports of the routers each DRAM is attached to; a C++
// ARM per PE driving the PE's ARM port; and the host. QPE-DRAM is the one-QPE, one-DRAM chip.
//
// The ARM runs its PE's commands as the model's ArmCore does (model/pe/arm_core.h): it waits for the DMA or
// the MLA to be idle, writes its registers one per PE clock, and (unless the command is async) waits for the
// DMA to go idle or the MLA's done interrupt; it carries out element-wise operations on the SRAM itself at
// the Table 5.9 cost; it meets the other PEs of a Sync group through the host. The host is C++ and, as in
// the model (model/chip/system.h), a PE's host traffic (its start, its Syncs, its end) takes the host
// interface's latency plus the hops between the PE's QPE and its host agent, each way.
template <typename V, typename VT>
class RtlChip final : public StreamBackend {
  static_assert(sizeof(std::declval<V&>().mesh_out_pkt) == (kMeshChannels * kNocPacketBits + 31) / 32 * 4,
                "rtl_stubs/s2_pkg.svh noc_pkt_t changed width: update kNocPacketBits");
 public:
  explicit RtlChip(const HwConfig& cfg) : cfg_(cfg), mesh_(cfg.chip) {
    check_rtl_matches(cfg, QpeTop<V>::kSramBytes);
    const int n = cfg.chip.qpes();
    if (cfg.chip.mesh_cols > 16 || cfg.chip.mesh_rows > 16)
      throw std::runtime_error("the RTL's NoC nodes hold mesh coordinates up to 15 (rtl_stubs/s2_pkg.svh COORD_BITS); chip '" +
                               cfg.chip.name + "' is " + std::to_string(cfg.chip.mesh_cols) + "x" +
                               std::to_string(cfg.chip.mesh_rows));
    for (int q = 0; q < n; ++q) qpes_.push_back(std::make_unique<QpeTop<V>>("qpe" + std::to_string(q)));
    // each QPE's links: its mesh channel (direction x class), the neighbour, and the neighbour's channel back
    links_.resize(static_cast<std::size_t>(n));
    for (int q = 0; q < n; ++q) {
      const QpeCoord c = cfg.chip.qpe_coord(q);
      const int nb[4] = {c.y > 0 ? q - cfg.chip.mesh_cols : -1,                      // north
                         c.x + 1 < cfg.chip.mesh_cols ? q + 1 : -1,                   // east
                         c.y + 1 < cfg.chip.mesh_rows ? q + cfg.chip.mesh_cols : -1,  // south
                         c.x > 0 ? q - 1 : -1};                                       // west
      for (int m = 0; m < kMeshChannels; ++m)
        if (nb[m / 2] >= 0) links_[static_cast<std::size_t>(q)].push_back({m, nb[m / 2], ((m / 2 + 2) % 4) * 2 + m % 2});
    }
    io_.resize(static_cast<std::size_t>(n));
    dram_at_.assign(static_cast<std::size_t>(n), {-1, -1});
    for (std::size_t d = 0; d < cfg.chip.drams.size(); ++d)
      for (std::size_t k = 0; k < cfg.chip.drams[d].attach.size(); ++k)
        dram_at_[static_cast<std::size_t>(cfg.chip.qpe_index(cfg.chip.drams[d].attach[k]))] = {static_cast<int>(d), static_cast<int>(k)};
  }
  std::string name() const override { return "rtl"; }

  using StreamBackend::run;
  StreamResult run(const TaskStream& s, SystemMemory& mem, const StreamRunOptions& opt) override {
    check_chip_stream(s, mem);
    // a run asking for waves goes to the chip of traced QPEs (made for the first that asks)
    if constexpr (!std::is_same_v<V, VT>) {
      if (opt.waves) {
        if (!traced_) traced_ = std::make_unique<RtlChip<VT, VT>>(cfg_);
        return traced_->run(s, mem, opt);
      }
    }
    if (opt.waves) std::filesystem::create_directories(opt.waves->path);
    const int pes = static_cast<int>(s.pe.size());
    const std::size_t n_drams = cfg_.chip.drams.size();
    mem.drams.resize(n_drams);
    for (auto& d : mem.drams) d.resize(s.dram_bytes);
    // every QPE is reset on its own, as many clocks each: they leave reset in the same clock phase
    for (int q = 0; q < static_cast<int>(qpes_.size()); ++q) {
      const QpeCoord c = cfg_.chip.qpe_coord(q);
      QpeTop<V>& t = qpe(q);
      t.reset(c.x, c.y);
      t->flaw_sram2clk = cfg_.flaws.sram2clk;
      t->flaw_neighbor_conv = cfg_.flaws.neighbor_conv;
      t->flaw_mm_wide_a = cfg_.flaws.mm_wide_a;
    }
    std::vector<std::uint8_t> img(std::size_t(cfg_.sram_bytes), 0);  // the RTL's size (check_rtl_matches)
    for (int p = 0; p < pes; ++p) {
      const auto it = mem.sram.find(p);
      std::fill(img.begin(), img.end(), 0);
      if (it != mem.sram.end()) std::copy(it->second.begin(), it->second.end(), img.begin());
      qpe(p / kPesPerQpe).sram_write(p % kPesPerQpe, img);
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
    if (opt.waves)
      for (int q = 0; q < static_cast<int>(qpes_.size()); ++q) {
        const QpeCoord c = cfg_.chip.qpe_coord(q);
        qpe(q).start_waves((std::filesystem::path(opt.waves->path) / fmt::format("qpe_x{}_y{}.fst", c.x, c.y)).string());
      }
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
      if (opt.waves)
        for (auto& q : qpes_) q->dumping(now - start >= opt.waves->begin_cycle && now - start < opt.waves->end_cycle);
      noc_clock(drams);
      noc_clock(drams);
    }
    for (auto& q : qpes_) {
      q->stop_waves();
      (*q)->arm_wr = 0;
    }
    r.completed = r.stalled.empty();
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
    for (const auto& d : drams) r.dram_ops += d->ops_served();
    for (auto& [p, image] : mem.sram) {
      qpe(p / kPesPerQpe).sram_read(p % kPesPerQpe, img);
      image.assign(img.begin(), img.begin() + static_cast<std::ptrdiff_t>(std::min(img.size(), image.size())));
    }
    return r;
  }

 private:
  QpeTop<V>& qpe(int q) { return *qpes_[static_cast<std::size_t>(q)]; }
  std::uint64_t cycle() { return qpe(0)->cycle; }
  // PE clocks between QPE q and the host: the host interface and the hops to its agent (model: System)
  std::uint64_t host_cycles(int q) const { return host_path_cycles(cfg_, mesh_, q); }

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
          qpe(q).sram_read(p % kPesPerQpe, sram_);
          arm_apply(seq.command().arm, sram_.data(), sram_.size());
          qpe(q).sram_write(p % kPesPerQpe, sram_);
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
    a.plan = seq.plan(dma ? &far : nullptr);
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
  bool dma_busy(int p) { return (qpe(p / kPesPerQpe)->dma_busy >> (p % kPesPerQpe)) & 1u; }
  bool mla_idle(int p, const Arm& a) {
    return !a.mla_started || ((qpe(p / kPesPerQpe)->pe_irq_done >> (p % kPesPerQpe)) & 1u);
  }
  void finish(Arm& a) {
    a.sequencer.finish(cycle());
    a.state = Arm::Fetch;
  }

  void drive_arm_ports(std::vector<Arm>& arm) {
    for (int q = 0; q < static_cast<int>(qpes_.size()); ++q) {
      unsigned wr = 0;
      V& t = *qpe(q).operator->();
      for (int k = 0; k < kPesPerQpe; ++k) {
        const std::size_t p = static_cast<std::size_t>(q * kPesPerQpe + k);
        if (p >= arm.size()) break;
        Arm& a = arm[p];
        if (a.state != Arm::Write) continue;
        const RegisterWrite& w = a.plan.writes[a.written];
        wr |= 1u << k;
        t.arm_idx = (t.arm_idx & ~(0x1fu << (5 * k))) | (static_cast<unsigned>(w.index) << (5 * k));
        t.arm_data[k] = w.data;
        if (w.index == qpe_addr::kStart) a.mla_started = true;
        if (++a.written == a.plan.writes.size()) a.state = a.after_writes;
      }
      t.arm_wr = wr;
    }
  }

  // One NoC clock of the chip. Every QPE's mesh inputs are its neighbours' link FIFO heads (registered, so
  // settled since the last edge) and its DRAM port gets what its DRAM has due; a first evaluation settles
  // what each router takes, whose pops go to the neighbours' link FIFOs; then the clock edge, everywhere.
  // This is rtl_stubs/chip.sv's wiring, evaluated QPE by QPE.
  void noc_clock(std::vector<std::unique_ptr<RtlDram>>& drams) {
    const std::uint64_t now = cycle();
    const int n = static_cast<int>(qpes_.size());
    std::vector<PortIo>& io = io_;
    for (int q = 0; q < n; ++q) {
      V& t = *qpe(q).operator->();
      // links in
      unsigned valid = 0;
      for (const Link& l : links_[static_cast<std::size_t>(q)]) {
        V& o = *qpe(l.neighbour).operator->();
        if (!((o.mesh_out_valid >> l.back) & 1u)) continue;
        valid |= 1u << l.channel;
        copy_bits(o.mesh_out_pkt.data(), l.back * kNocPacketBits, t.mesh_in_pkt.data(), l.channel * kNocPacketBits, kNocPacketBits);
      }
      t.mesh_in_valid = valid;
      // the DRAM port
      const auto [d, port] = dram_at_[static_cast<std::size_t>(q)];
      t.dram_req_pop = 0;
      t.dram_valid = 0;
      if (d < 0) continue;
      PortIo& x = io[q];
      x = PortIo{};
      RtlDram& dram = *drams[static_cast<std::size_t>(d)];
      x.take = t.dram_req_valid;
      if (x.take) {
        x.in.pe = static_cast<unsigned>(chip_pe_of_node(t.dram_req_src));
        x.in.kind = t.dram_req_kind;
        x.in.addr = t.dram_req_addr;
        for (int w = 0; w < 4; ++w) std::memcpy(x.in.data.data() + 4 * w, &t.dram_req_data[w], 4);
      }
      t.dram_req_pop = x.take;
      x.rsp = true;
      const DramPortPacket* out = dram.due(port, true, now);
      if (!out) {
        x.rsp = false;
        out = dram.due(port, false, now);
      }
      x.offered = out != nullptr;
      t.dram_valid = x.offered;
      if (out) {
        t.dram_dst = node_of_chip_pe(static_cast<int>(out->pe));
        t.dram_kind = out->kind;
        t.dram_addr = out->addr;
        t.dram_be = out->be;
        for (int w = 0; w < 4; ++w) std::memcpy(&t.dram_data[w], out->data.data() + 4 * w, 4);
      }
    }
    for (int q = 0; q < n; ++q) qpe(q)->eval();
    for (int q = 0; q < n; ++q) {
      V& t = *qpe(q).operator->();
      unsigned pop = 0;
      for (const Link& l : links_[static_cast<std::size_t>(q)])
        if ((qpe(l.neighbour)->mesh_in_pop >> l.back) & 1u) pop |= 1u << l.channel;
      t.mesh_out_pop = pop;
    }
    for (int q = 0; q < n; ++q) {
      const auto [d, port] = dram_at_[static_cast<std::size_t>(q)];
      if (d < 0) continue;
      PortIo& x = io[q];
      x.offered = x.offered && qpe(q)->dram_ready;  // taken at this edge
    }
    for (int q = 0; q < n; ++q) qpe(q).clock_edge();
    for (int q = 0; q < n; ++q) {
      const auto [d, port] = dram_at_[static_cast<std::size_t>(q)];
      if (d < 0) continue;
      PortIo& x = io[q];
      RtlDram& dram = *drams[static_cast<std::size_t>(d)];
      if (x.take) dram.receive(x.in, now);
      if (x.offered) dram.pop(port, x.rsp);
    }
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
  Mesh mesh_;
  std::vector<std::unique_ptr<QpeTop<V>>> qpes_;
  std::unique_ptr<RtlChip<VT, VT>> traced_;  // made for the first run that asks for waves
  struct Link {
    int channel, neighbour, back;  // this QPE's mesh channel, the neighbour's index and its channel back
  };
  struct PortIo {                  // a DRAM port in the NoC clock being simulated
    bool take = false, offered = false, rsp = false;
    DramPortPacket in;
  };
  std::vector<std::vector<Link>> links_;            // per QPE (none towards the mesh's edges)
  std::vector<PortIo> io_;                          // per QPE
  std::vector<std::pair<int, int>> dram_at_;        // per QPE: the DRAM at its DRAM port and which of its ports
  HostSync<std::uint64_t> syncs_;  // in PE clocks
  std::vector<std::uint8_t> sram_;
};

}  // namespace

std::unique_ptr<StreamBackend> make_rtl_stream_backend(const HwConfig& cfg) {
  return for_mac_shape<StreamBackend, RtlChip>(cfg);
}

}  // namespace s2
