#include "harness/rtl_qpe_adapter.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <type_traits>
#include <utility>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <verilated.h>

#include "Vqpe_16x2.h"
#include "Vqpe_16x2___024root.h"
#include "Vqpe_16x4.h"
#include "Vqpe_16x4___024root.h"
#include "Vqpe_8x4.h"
#include "Vqpe_8x4___024root.h"
#include "harness/backend.h"
#include "harness/rtl_dram.h"
#include "model/pe/arm_ops.h"
#include "model/golden.h"
#include "model/pe/pe_registers.h"
#include "model/sram_layout.h"
#include "model/qpe/task_timing.h"

// Verilator's runtime asks for the simulation time; the harness keeps none of its own.
double sc_time_stamp() { return 0; }

namespace s2 {
namespace {

using namespace rtl_protocol;
constexpr int kSramLines = 8192;

// The parameters the RTL was built with (rtl_stubs/*.sv); a config asking for others cannot run on it.
void check_rtl_matches(const HwConfig& c) {
  const HwConfig rtl;  // the RTL's fixed parameters equal the defaults
  auto need = [](bool ok, const std::string& what) {
    if (!ok) throw std::runtime_error("the RTL in rtl_stubs/ was built with " + what + "; change the RTL parameters to run this configuration");
  };
  need(c.accumulator_bits == rtl.accumulator_bits, "29-bit accumulators");
  need(c.sram_bytes == rtl.sram_bytes, "128 KB of SRAM per PE");
  need(c.sram_access_cycles == rtl.sram_access_cycles, "1 PE clock per SRAM access (sram2clk flaw: 2)");
  need(c.router_latency_noc_cycles == rtl.router_latency_noc_cycles, "a router latency of 4 NoC clocks");
  need(c.router_out_fifo_packets == rtl.router_out_fifo_packets, "4-packet router output FIFOs");
  need(c.noc_if_out_fifo_packets == rtl.noc_if_out_fifo_packets, "4-packet NoC interface FIFOs");
  need(c.noc_payload_bytes == rtl.noc_payload_bytes, "128-bit NoC payloads");
  need(c.operand_a_buffer_words == rtl.operand_a_buffer_words, "2 operand-A words");
  need(c.tile_setup_cycles == rtl.tile_setup_cycles, "1 setup clock per tile");
  need(c.noc_clock_mhz == 2 * c.pe_clock_mhz, "a NoC clock of twice the PE clock");
}

// The Verilated QPE and the ways into it every backend here uses: clocks, reset, statistics, the host port,
// the backdoor, and the SRAM arrays themselves (the C++ ARM's view of its PE's SRAM).
template <typename V>
class QpeTop {
 public:
  QpeTop() {
    ctx_ = std::make_unique<VerilatedContext>();
    ctx_->randReset(0);
    Verilated::threadContextp(ctx_.get());
    top_ = std::make_unique<V>(ctx_.get(), "qpe");
  }
  // Verilator registers the SRAM arrays' public scopes with the thread's current context and erases them
  // from it on destruction: that must be this model's context, not one already gone.
  ~QpeTop() {
    Verilated::threadContextp(ctx_.get());
    top_->final();
    top_.reset();
  }
  V* operator->() { return top_.get(); }

  // one NoC clock: rising edge, then falling edge
  void noc_clock() {
    top_->clk = 1;
    top_->eval();
    top_->clk = 0;
    top_->eval();
  }
  void pe_clock() {
    noc_clock();
    noc_clock();
  }
  void reset() {
    top_->rst_n = 0;
    top_->host_valid = 0;
    top_->host_rsp_pop = 0;
    top_->bd_we = 0;
    top_->arm_wr = 0;
    top_->dram_valid = 0;
    top_->dram_req_pop = 0;
    top_->clk = 0;
    top_->eval();
    noc_clock();
    noc_clock();
    top_->rst_n = 1;
    noc_clock();
  }
  std::uint64_t stat(int pe, unsigned sel) {
    top_->stat_pe = static_cast<unsigned>(pe);
    top_->stat_sel = sel;
    top_->eval();
    return top_->stat_value;
  }
  void backdoor_write(int pe, const std::vector<std::uint8_t>& img) {
    if (img.size() > std::size_t(kSramLines) * 16) throw std::runtime_error("RTL: SRAM image larger than 128 KB");
    top_->bd_pe = static_cast<unsigned>(pe);
    for (std::size_t line = 0; line * 16 < img.size(); ++line) {
      top_->bd_line = static_cast<unsigned>(line);
      for (int w = 0; w < 4; ++w) {
        std::uint32_t v = 0;
        for (int k = 0; k < 4; ++k) {
          const std::size_t i = line * 16 + w * 4 + k;
          if (i < img.size()) v |= std::uint32_t(img[i]) << (8 * k);
        }
        top_->bd_wdata[w] = v;
      }
      top_->bd_we = 1;
      noc_clock();
    }
    top_->bd_we = 0;
  }
  std::vector<std::uint8_t> backdoor_read(int pe, std::size_t bytes) {
    std::vector<std::uint8_t> img((bytes + 15) / 16 * 16);
    top_->bd_pe = static_cast<unsigned>(pe);
    for (std::size_t line = 0; line * 16 < bytes; ++line) {
      top_->bd_line = static_cast<unsigned>(line);
      top_->eval();
      for (int w = 0; w < 4; ++w)
        for (int k = 0; k < 4; ++k) img[line * 16 + w * 4 + k] = static_cast<std::uint8_t>(top_->bd_rdata[w] >> (8 * k));
    }
    return img;
  }
  // one packet into the host port; waits (NoC clocks) while the port is full
  void host_send(unsigned dst, unsigned kind, unsigned addr, std::uint32_t data) {
    top_->host_dst = dst;
    top_->host_kind = kind;
    top_->host_addr = addr;
    top_->host_data[0] = data;
    for (int w = 1; w < 4; ++w) top_->host_data[w] = 0;
    top_->host_valid = 1;
    top_->eval();
    for (int guard = 0; !top_->host_ready; ++guard) {
      if (guard > 1000) throw std::runtime_error("RTL: host port not ready for 1000 NoC clocks");
      noc_clock();
    }
    noc_clock();
    top_->host_valid = 0;
  }
  // The C++ ARM's access to its PE's SRAM: the four 32-bit banks, untimed (the ARM core is not in the RTL).
  void sram_read(int pe, std::vector<std::uint8_t>& img) {
    img.resize(std::size_t(kSramLines) * 16);
    const auto b = banks(pe);
    for (int line = 0; line < kSramLines; ++line)
      for (int w = 0; w < 4; ++w) std::memcpy(&img[std::size_t(line) * 16 + 4 * w], &(*b[w])[line], 4);
  }
  void sram_write(int pe, const std::vector<std::uint8_t>& img) {
    const auto b = banks(pe);
    for (int line = 0; line < kSramLines; ++line)
      for (int w = 0; w < 4; ++w) std::memcpy(&(*b[w])[line], &img[std::size_t(line) * 16 + 4 * w], 4);
  }

 private:
  using Bank = std::remove_reference_t<decltype(std::declval<V&>().rootp->qpe__DOT__g_pe__BRA__0__KET____DOT__u_pe__DOT__u_sram__DOT__bank0)>;
  std::array<Bank*, 4> banks(int pe) {
    auto* r = top_->rootp;
#define S2_BANKS(P)                                                                                        \
  {&r->qpe__DOT__g_pe__BRA__##P##__KET____DOT__u_pe__DOT__u_sram__DOT__bank0,                             \
   &r->qpe__DOT__g_pe__BRA__##P##__KET____DOT__u_pe__DOT__u_sram__DOT__bank1,                             \
   &r->qpe__DOT__g_pe__BRA__##P##__KET____DOT__u_pe__DOT__u_sram__DOT__bank2,                             \
   &r->qpe__DOT__g_pe__BRA__##P##__KET____DOT__u_pe__DOT__u_sram__DOT__bank3}
    switch (pe) {
      case 0: return S2_BANKS(0);
      case 1: return S2_BANKS(1);
      case 2: return S2_BANKS(2);
      default: return S2_BANKS(3);
    }
#undef S2_BANKS
  }
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<V> top_;
};

template <typename V>
class RtlQpe final : public Backend {
 public:
  explicit RtlQpe(const HwConfig& cfg) : cfg_(cfg) { check_rtl_matches(cfg); }

  std::string name() const override { return "rtl"; }
  const HwConfig& config() const override { return cfg_; }

  TaskTrace run(const Task& t, const RunOptions& opt) override {
    const auto wall0 = std::chrono::steady_clock::now();
    TaskTrace tr;
    tr.task_id = t.id;
    tr.backend = name();
    tr.budget_cycles = opt.watchdog_cycles;
    top_.reset();
    top_->flaw_sram2clk = cfg_.flaws.sram2clk;
    top_->flaw_neighbor_conv = cfg_.flaws.neighbor_conv;
    top_->flaw_mm_wide_a = cfg_.flaws.mm_wide_a;

    const SramLayout l = sram_layout(t, cfg_);
    SramImages own;
    if (!opt.sram_images) own = initial_sram_images(t, cfg_, l);
    const SramImages& images = opt.sram_images ? *opt.sram_images : own;
    for (int p = 0; p < kPesPerQpe; ++p) top_.backdoor_write(p, images[p]);

    const std::vector<int> pes = t.pes();
    for (int p : pes) send_descriptor(t, l, p);
    for (int p : pes) top_.host_send(static_cast<unsigned>(p), kPktRegWr, qpe_addr::kStart, 1);

    // run until every PE raised done, or the watchdog budget from the first start is used up
    std::uint64_t first_start = 0;
    bool started = false;
    const std::uint64_t issued_at = top_->cycle;
    // what each PE was doing over the last clocks before the watchdog fired, for the hang report
    const std::uint64_t stall_window = std::min<std::uint64_t>(32, opt.watchdog_cycles);
    std::array<std::array<std::uint64_t, 3>, kPesPerQpe> before{};  // steps, a_wait, b_wait
    while (true) {
      bool all_done = true;
      for (int p : pes) all_done = all_done && ((top_->pe_irq_done >> p) & 1u);
      if (all_done) break;
      if (!started) {
        for (int p : pes) {
          if ((top_->pe_busy >> p) & 1u) {
            started = true;
            first_start = top_.stat(p, kStatStart);
          }
        }
      }
      if (started && opt.watchdog_cycles && top_->cycle - first_start + stall_window == opt.watchdog_cycles)
        for (int p : pes) before[p] = {top_.stat(p, kStatSteps), top_.stat(p, kStatAWait), top_.stat(p, kStatBWait)};
      if (started && opt.watchdog_cycles && top_->cycle - first_start >= opt.watchdog_cycles) break;
      if (!started && top_->cycle - issued_at > 10000) throw std::runtime_error("RTL: task " + t.id + " never started");
      top_.pe_clock();
    }

    tr.completed = true;
    std::uint64_t lo = ~0ull, hi = 0;
    for (int p : pes) {
      PeTrace pt;
      pt.pe = p;
      pt.done = (top_->pe_irq_done >> p) & 1u;
      pt.started = pt.done || ((top_->pe_busy >> p) & 1u);
      pt.start_cycle = top_.stat(p, kStatStart);
      pt.end_cycle = pt.done ? top_.stat(p, kStatEnd) : top_->cycle;
      pt.phases.compute = top_.stat(p, kStatCompute);
      pt.phases.output = top_.stat(p, kStatOutput);
      pt.phases.a_wait = top_.stat(p, kStatAWait);
      pt.phases.b_wait = top_.stat(p, kStatBWait);
      pt.tiles = top_.stat(p, kStatTiles);
      pt.steps = top_.stat(p, kStatSteps);
      pt.phases.setup = pt.tiles;  // one setup clock per tile (cfg.tile_setup_cycles)
      pt.phases_known = true;
      pt.state = pt.done ? "done" : (pt.started ? "running" : "not started");
      if (pt.started && !pt.done) {
        const TaskTiles tiles = task_tiles(t, cfg_);
        const std::uint64_t total = tiles.rows_total() * tiles.column_tiles;
        const char* doing = pt.steps != before[p][0]         ? "stepping"
                            : pt.phases.a_wait != before[p][1] ? "stalled on operand A"
                            : pt.phases.b_wait != before[p][2] ? "stalled on operand B"
                                                               : "writing results or idle";
        pt.state = fmt::format("running: {} of {} tiles done, {} MAC steps; {} over its last {} clocks", pt.tiles,
                               total, pt.steps, doing, stall_window);
      }
      std::vector<std::uint8_t> img = top_.backdoor_read(p, l.total_bytes());
      pt.results = unpack_results(t, cfg_, l, img.data(), img.size());
      tr.completed = tr.completed && pt.done;
      lo = std::min(lo, pt.start_cycle);
      hi = std::max(hi, pt.end_cycle);
      tr.pes.push_back(std::move(pt));
    }
    tr.cycles = hi > lo ? hi - lo : 0;
    tr.elapsed_cycles = top_->cycle > lo ? top_->cycle - lo : 0;
    tr.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return tr;
  }

 private:
  void send_descriptor(const Task& t, const SramLayout& l, int pe) {
    for (const RegisterWrite& w : mla_register_writes(task_registers(t, pe, l)))
      if (w.index != qpe_addr::kStart) top_.host_send(static_cast<unsigned>(pe), kPktRegWr, static_cast<unsigned>(w.index), w.data);
  }

  HwConfig cfg_;
  QpeTop<V> top_;
};

// QPE-DRAM on the RTL (rtl_stubs/README.md, "QPE-DRAM"): the Verilated QPE, the C++ DRAM behind its DRAM
// port (RtlDram, the model's DRAM timing), a C++ ARM per PE driving the PE's ARM port, and the host. The
// ARM runs its PE's commands as the model's ArmCore does (model/pe/arm_core.h): it waits for the DMA or the
// MLA to be idle, writes its registers one per PE clock, and (unless the command is async) waits for the
// DMA to go idle or the MLA's done interrupt; it carries out element-wise operations on the SRAM itself at
// the Table 5.9 cost; it meets the other PEs at a Sync through the host (host latency each way).
template <typename V>
class RtlQpeDram final : public StreamBackend {
 public:
  explicit RtlQpeDram(const HwConfig& cfg) : cfg_(cfg) { check_rtl_matches(cfg); }
  std::string name() const override { return "rtl"; }

  using StreamBackend::run;
  StreamResult run(const TaskStream& s, SystemMemory& mem, const StreamRunOptions& opt) override {
    check_qpe_dram_stream(s, mem);
    std::vector<std::uint8_t>& dram = mem.drams.front();
    dram.resize(s.dram_bytes);
    top_.reset();
    top_->flaw_sram2clk = cfg_.flaws.sram2clk;
    top_->flaw_neighbor_conv = cfg_.flaws.neighbor_conv;
    top_->flaw_mm_wide_a = cfg_.flaws.mm_wide_a;
    std::vector<std::uint8_t> img(std::size_t(kSramLines) * 16, 0);
    for (int p = 0; p < kPesPerQpe; ++p) top_.sram_write(p, img);
    RtlDram port(cfg_, dram);

    const std::uint64_t host_latency = static_cast<std::uint64_t>(cfg_.host_latency_cycles);
    const std::uint64_t start = top_->cycle;
    std::array<Arm, kPesPerQpe> arm;
    for (int p = 0; p < kPesPerQpe; ++p) arm[p].resume_at = start + host_latency;
    std::vector<Sync> syncs;
    StreamResult r;
    while (true) {
      const std::uint64_t now = top_->cycle;
      bool all_done = true;
      for (int p = 0; p < kPesPerQpe; ++p) {
        step(p, arm[p], s.pe[p], syncs, now, opt);
        all_done = all_done && arm[p].state == Arm::Done;
      }
      if (all_done) break;
      if (opt.watchdog_cycles && now - start >= opt.watchdog_cycles) {
        for (int p = 0; p < kPesPerQpe; ++p)
          r.stalled += fmt::format("{}PE {}: {}", p ? "; " : "", p, arm[p].describe(s.pe[p]));
        break;
      }
      drive_arm_port(arm);
      noc_clock_with_dram(port);
      noc_clock_with_dram(port);
    }
    top_->arm_wr = 0;
    r.completed = r.stalled.empty();
    // every transfer is complete when every PE is: anything the DRAM still holds is a protocol error
    if (r.completed && !port.idle()) throw std::logic_error("RTL: the DRAM holds packets after every PE finished");
    std::uint64_t last = 0;
    r.pe_end_cycle.resize(kPesPerQpe);
    r.command_end_cycle.resize(kPesPerQpe);
    for (int p = 0; p < kPesPerQpe; ++p) {
      r.pe_end_cycle[p] = (arm[p].state == Arm::Done ? arm[p].end_cycle : top_->cycle) - start;
      for (std::uint64_t c : arm[p].command_end) r.command_end_cycle[p].push_back(c - start);
      last = std::max(last, r.pe_end_cycle[p]);
      r.arm_cycles += arm[p].arm_cycles;
      for (const StreamCommand& c : s.pe[p]) r.mla_tasks += c.kind == CommandKind::Mla;
    }
    r.cycles = last + host_latency;  // the host hears the last PE a host latency after it finished
    r.dram_ops = port.ops_served();
    return r;
  }

 private:
  // The RTL is one QPE with one DRAM: the chip's streams (more PEs, other DRAMs, other PEs' SRAMs, sync
  // groups) are refused before anything runs.
  void check_qpe_dram_stream(const TaskStream& s, SystemMemory& mem) const {
    StreamLimits lim;
    lim.sram_bytes = static_cast<std::uint32_t>(cfg_.sram_bytes);
    if (cfg_.chip.qpes() != 1 || cfg_.chip.drams.size() != 1)
      throw std::invalid_argument("the Verilated RTL is QPE-DRAM (one QPE, one DRAM); chip '" + cfg_.chip.name + "' has " +
                                  std::to_string(cfg_.chip.qpes()) + " QPEs: run it on the model (--backend model)");
    check_stream(s, lim);
    if (s.pe.size() != kPesPerQpe) throw std::invalid_argument("stream " + s.name + ": the RTL runs streams of 4 PEs");
    if (!s.sync_groups.empty()) throw std::invalid_argument("stream " + s.name + ": the RTL's host syncs all 4 PEs (no sync groups)");
    if (!mem.sram.empty()) throw std::invalid_argument("stream " + s.name + ": the RTL starts from DRAM only (no SRAM images)");
    if (mem.drams.empty()) mem.drams.emplace_back();
  }

  struct Arm {
    enum State { Fetch, PreDma, PreMla, Write, Next, WaitDma, WaitMla, WaitArm, WaitSync, Drain, Done } state = Fetch;
    bool mla_started = false;
    std::size_t next = 0;                 // command being carried out
    std::vector<RegisterWrite> writes;    // registers still to write, one per PE clock
    std::size_t written = 0;
    State after_writes = Fetch;
    std::uint64_t resume_at = 0;          // WaitArm / WaitSync / start: the clock it may go on
    std::size_t syncs = 0;
    std::uint64_t end_cycle = 0, arm_cycles = 0;
    std::vector<std::uint64_t> command_end;  // PE clock each command was done
    std::string describe(const std::vector<StreamCommand>& cmds) const {
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
      return fmt::format("command {} of {} ({} of {}), {}", next, cmds.size(), to_string(cmds[next].kind),
                         cmds[next].operation, names[state]);
    }
  };
  struct Sync {
    int arrived = 0;
    std::uint64_t latest = 0;  // the last PE's arrival at the host
  };

  // Advances PE p's ARM in clock `now` (after the previous clock edge): as many commands as complete at
  // once, then at most one register write for this clock.
  void step(int p, Arm& a, const std::vector<StreamCommand>& cmds, std::vector<Sync>& syncs, std::uint64_t now,
            const StreamRunOptions& opt) {
    if (now < a.resume_at && (a.state == Arm::Fetch || a.state == Arm::WaitArm || a.state == Arm::WaitSync)) return;
    while (true) {
      switch (a.state) {
        case Arm::Done: return;
        case Arm::Fetch: {
          if (a.next == cmds.size()) {
            a.state = Arm::Drain;  // the PE's work ends when its engines are idle
            break;
          }
          const StreamCommand& c = cmds[a.next];
          a.written = 0;
          switch (c.kind) {
            case CommandKind::DmaLoad:
            case CommandKind::DmaStore:
              a.writes = dma_register_writes(c.dma, c.kind == CommandKind::DmaStore);
              a.after_writes = c.async ? Arm::Next : Arm::WaitDma;
              a.state = Arm::PreDma;
              break;
            case CommandKind::Mla:
              a.writes = mla_register_writes(task_registers(c.mla, p, stream_mla_layout(c, cfg_, cfg_.sram_bytes)));
              a.after_writes = c.async ? Arm::Next : Arm::WaitMla;
              a.state = Arm::PreMla;
              break;
            case CommandKind::WaitDma: a.state = Arm::WaitDma; break;
            case CommandKind::WaitMla: a.state = Arm::WaitMla; break;
            case CommandKind::Arm: {
              const std::uint64_t n = arm_op_cycles(c.arm, cfg_.arm);
              a.arm_cycles += n;
              a.resume_at = now + (opt.arm_ops_timed ? n : 0);
              a.state = Arm::WaitArm;
              break;
            }
            case CommandKind::Sync: {
              if (syncs.size() <= a.syncs) syncs.resize(a.syncs + 1);
              Sync& y = syncs[a.syncs];
              y.latest = std::max(y.latest, now + static_cast<std::uint64_t>(cfg_.host_latency_cycles));
              ++y.arrived;
              a.state = Arm::WaitSync;
              break;
            }
          }
          break;
        }
        case Arm::PreDma:
          if (dma_busy(p)) return;
          a.state = Arm::Write;
          break;
        case Arm::PreMla:
          if (!mla_idle(p, a)) return;
          a.state = Arm::Write;
          break;
        case Arm::Write: return;  // drive_arm_port writes it in this clock
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
          top_.sram_read(p, sram_);
          arm_apply(cmds[a.next].arm, sram_.data(), sram_.size());
          top_.sram_write(p, sram_);
          finish(a);
          break;
        case Arm::WaitSync: {
          const Sync& y = syncs[a.syncs];
          if (y.arrived < kPesPerQpe) return;
          const std::uint64_t release = y.latest + static_cast<std::uint64_t>(cfg_.host_latency_cycles);
          if (now < release) {
            a.resume_at = release;
            return;
          }
          ++a.syncs;
          finish(a);
          break;
        }
      }
    }
  }
  bool dma_busy(int p) { return (top_->dma_busy >> p) & 1u; }
  bool mla_idle(int p, const Arm& a) { return !a.mla_started || ((top_->pe_irq_done >> p) & 1u); }
  void finish(Arm& a) {
    a.command_end.push_back(top_->cycle);
    ++a.next;
    a.state = Arm::Fetch;
  }

  void drive_arm_port(std::array<Arm, kPesPerQpe>& arm) {
    unsigned wr = 0;
    for (int p = 0; p < kPesPerQpe; ++p) {
      Arm& a = arm[p];
      if (a.state != Arm::Write) continue;
      const RegisterWrite& w = a.writes[a.written];
      wr |= 1u << p;
      top_->arm_idx = (top_->arm_idx & ~(0x1fu << (5 * p))) | (static_cast<unsigned>(w.index) << (5 * p));
      top_->arm_data[p] = w.data;
      if (w.index == qpe_addr::kStart) a.mla_started = true;
      if (++a.written == a.writes.size()) a.state = a.after_writes;
    }
    top_->arm_wr = wr;
  }

  // One NoC clock with the DRAM at the port: it takes the packet the port offers and offers one that is due.
  void noc_clock_with_dram(RtlDram& port) {
    const std::uint64_t now = top_->cycle;
    DramPortPacket in;
    const bool take = top_->dram_req_valid;
    if (take) {
      in.pe = top_->dram_req_src;
      in.kind = top_->dram_req_kind;
      in.addr = top_->dram_req_addr;
      for (int w = 0; w < 4; ++w) std::memcpy(in.data.data() + 4 * w, &top_->dram_req_data[w], 4);
    }
    top_->dram_req_pop = take;
    bool rsp = true;
    const DramPortPacket* out = port.due(true, now);
    if (!out) {
      rsp = false;
      out = port.due(false, now);
    }
    top_->dram_valid = out != nullptr;
    if (out) {
      top_->dram_dst = out->pe;
      top_->dram_kind = out->kind;
      top_->dram_addr = out->addr;
      top_->dram_be = out->be;
      for (int w = 0; w < 4; ++w) std::memcpy(&top_->dram_data[w], out->data.data() + 4 * w, 4);
    }
    top_->eval();
    const bool sent = out && top_->dram_ready;
    top_.noc_clock();
    top_->dram_req_pop = 0;
    top_->dram_valid = 0;
    if (take) port.receive(in, now);
    if (sent) port.pop(rsp);
  }

  HwConfig cfg_;
  QpeTop<V> top_;
  std::vector<std::uint8_t> sram_;
};

// The RTL build for the configuration's MAC shape, as Impl<Vqpe_...>.
template <typename Base, template <typename> class Impl>
std::unique_ptr<Base> for_mac_shape(const HwConfig& cfg) {
  if (cfg.mac_cols == 16 && cfg.mac_rows == 4) return std::make_unique<Impl<Vqpe_16x4>>(cfg);
  if (cfg.mac_cols == 16 && cfg.mac_rows == 2) return std::make_unique<Impl<Vqpe_16x2>>(cfg);
  if (cfg.mac_cols == 8 && cfg.mac_rows == 4) return std::make_unique<Impl<Vqpe_8x4>>(cfg);
  throw std::runtime_error("no RTL build for a " + cfg.mac_shape() + " MAC array (built: 16x4, 16x2, 8x4)");
}

}  // namespace

std::unique_ptr<Backend> make_rtl_backend(const HwConfig& cfg) { return for_mac_shape<Backend, RtlQpe>(cfg); }

std::unique_ptr<StreamBackend> make_rtl_stream_backend(const HwConfig& cfg) {
  return for_mac_shape<StreamBackend, RtlQpeDram>(cfg);
}

}  // namespace s2
