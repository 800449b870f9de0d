#include "harness/rtl_qpe_adapter.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <verilated.h>

#include "Vqpe_16x2.h"
#include "Vqpe_16x4.h"
#include "Vqpe_8x4.h"
#include "harness/backend.h"
#include "model/golden.h"
#include "model/sram_layout.h"
#include "model/task_timing.h"

// Verilator's runtime asks for the simulation time; the harness keeps none of its own.
double sc_time_stamp() { return 0; }

namespace s2 {
namespace {

// Host-port packet kinds and task-controller registers (rtl_stubs/s2_pkg.sv).
enum : unsigned { kPktRegWr = 0, kPktMemWr = 1, kPktMemRd = 2 };
enum : unsigned {
  kRegOp = 0, kRegWi, kRegHi, kRegD, kRegWf, kRegHf, kRegC, kRegABase, kRegBBase, kRegOBase, kRegASrc, kRegStart
};
enum : unsigned {
  kStatStart = 0, kStatEnd, kStatCompute, kStatOutput, kStatAWait, kStatBWait, kStatTiles, kStatSteps
};
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

template <typename V>
class RtlQpe final : public Backend {
 public:
  explicit RtlQpe(const HwConfig& cfg) : cfg_(cfg) {
    check_rtl_matches(cfg);
    ctx_ = std::make_unique<VerilatedContext>();
    ctx_->randReset(0);
    top_ = std::make_unique<V>(ctx_.get(), "qpe");
  }
  ~RtlQpe() override { top_->final(); }

  std::string name() const override { return "rtl"; }
  const HwConfig& config() const override { return cfg_; }

  TaskTrace run(const Task& t, const RunOptions& opt) override {
    const auto wall0 = std::chrono::steady_clock::now();
    TaskTrace tr;
    tr.task_id = t.id;
    tr.backend = name();
    tr.budget_cycles = opt.watchdog_cycles;
    reset();
    top_->flaw_sram2clk = cfg_.flaws.sram2clk;
    top_->flaw_neighbor_conv = cfg_.flaws.neighbor_conv;
    top_->flaw_mm_wide_a = cfg_.flaws.mm_wide_a;

    const SramLayout l = sram_layout(t, cfg_);
    SramImages own;
    if (!opt.sram_images) own = initial_sram_images(t, cfg_, l);
    const SramImages& images = opt.sram_images ? *opt.sram_images : own;
    for (int p = 0; p < kPesPerQpe; ++p) backdoor_write(p, images[p]);

    const std::vector<int> pes = t.pes();
    for (int p : pes) send_descriptor(t, l, p);
    for (int p : pes) host_send(static_cast<unsigned>(p), kPktRegWr, kRegStart, 1);

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
            first_start = stat(p, kStatStart);
          }
        }
      }
      if (started && opt.watchdog_cycles && top_->cycle - first_start + stall_window == opt.watchdog_cycles)
        for (int p : pes) before[p] = {stat(p, kStatSteps), stat(p, kStatAWait), stat(p, kStatBWait)};
      if (started && opt.watchdog_cycles && top_->cycle - first_start >= opt.watchdog_cycles) break;
      if (!started && top_->cycle - issued_at > 10000) throw std::runtime_error("RTL: task " + t.id + " never started");
      pe_clock();
    }

    tr.completed = true;
    std::uint64_t lo = ~0ull, hi = 0;
    for (int p : pes) {
      PeTrace pt;
      pt.pe = p;
      pt.done = (top_->pe_irq_done >> p) & 1u;
      pt.started = pt.done || ((top_->pe_busy >> p) & 1u);
      pt.start_cycle = stat(p, kStatStart);
      pt.end_cycle = pt.done ? stat(p, kStatEnd) : top_->cycle;
      pt.phases.compute = stat(p, kStatCompute);
      pt.phases.output = stat(p, kStatOutput);
      pt.phases.a_wait = stat(p, kStatAWait);
      pt.phases.b_wait = stat(p, kStatBWait);
      pt.tiles = stat(p, kStatTiles);
      pt.steps = stat(p, kStatSteps);
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
      std::vector<std::uint8_t> img = backdoor_read(p, l.total_bytes());
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
  void send_descriptor(const Task& t, const SramLayout& l, int pe) {
    const unsigned dst = static_cast<unsigned>(pe);
    const bool mm = t.op == Op::Mm;
    const bool via_noc = !mm || t.a_from_neighbor();
    host_send(dst, kPktRegWr, kRegOp, mm ? 1 : 0);
    host_send(dst, kPktRegWr, kRegWi, static_cast<std::uint32_t>(mm ? t.mm.W_A : t.conv.Wi));
    host_send(dst, kPktRegWr, kRegHi, static_cast<std::uint32_t>(mm ? t.mm.H_A : t.conv.Hi));
    host_send(dst, kPktRegWr, kRegD, static_cast<std::uint32_t>(mm ? t.mm.W_B : t.conv.D));
    host_send(dst, kPktRegWr, kRegWf, static_cast<std::uint32_t>(mm ? 1 : t.conv.Wf));
    host_send(dst, kPktRegWr, kRegHf, static_cast<std::uint32_t>(mm ? 1 : t.conv.Hf));
    host_send(dst, kPktRegWr, kRegC, static_cast<std::uint32_t>(mm ? 0 : t.conv.C));
    host_send(dst, kPktRegWr, kRegABase, l.a_base);
    host_send(dst, kPktRegWr, kRegBBase, l.b_base);
    host_send(dst, kPktRegWr, kRegOBase, l.o_base);
    host_send(dst, kPktRegWr, kRegASrc, (via_noc ? 4u : 0u) | static_cast<unsigned>(t.a_source_pe(pe)));
  }

  HwConfig cfg_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<V> top_;
};

}  // namespace

std::unique_ptr<Backend> make_rtl_backend(const HwConfig& cfg) {
  if (cfg.mac_cols == 16 && cfg.mac_rows == 4) return std::make_unique<RtlQpe<Vqpe_16x4>>(cfg);
  if (cfg.mac_cols == 16 && cfg.mac_rows == 2) return std::make_unique<RtlQpe<Vqpe_16x2>>(cfg);
  if (cfg.mac_cols == 8 && cfg.mac_rows == 4) return std::make_unique<RtlQpe<Vqpe_8x4>>(cfg);
  throw std::runtime_error("no RTL build for a " + cfg.mac_shape() + " MAC array (built: 16x4, 16x2, 8x4)");
}

}  // namespace s2
