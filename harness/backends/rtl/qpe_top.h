// The Verilated QPE (rtl_stubs/qpe.sv) as every RTL backend drives it: its builds per MAC-array shape, the
// parameters the RTL fixes, and the QPE's clock, reset, statistics, host-port, backdoor and SRAM signals.
// The chip's own signals (mesh links, DRAM and ARM ports) are qpe_ports.h's and linked_qpes.h's.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <verilated.h>
#include <verilated_fst_c.h>
#include <verilated_syms.h>

#include "Vqpe_16x2.h"
#include "Vqpe_16x2___024root.h"
#include "Vqpe_16x2_trace.h"
#include "Vqpe_16x2_trace___024root.h"
#include "Vqpe_16x4.h"
#include "Vqpe_16x4___024root.h"
#include "Vqpe_16x4_trace.h"
#include "Vqpe_16x4_trace___024root.h"
#include "Vqpe_8x4.h"
#include "Vqpe_8x4___024root.h"
#include "Vqpe_8x4_trace.h"
#include "Vqpe_8x4_trace___024root.h"
#include "harness/backends/rtl/rtl_qpe_adapter.h"
#include "model/activity.h"
#include "model/hw_config.h"
#include "model/task.h"

namespace s2 {

// The parameters the RTL was built with (rtl_stubs/*.sv; its SRAM: SramBanks::bytes()); a config asking for
// others cannot run on it.
inline void check_rtl_matches(const HwConfig& c, std::size_t rtl_sram_bytes) {
  const HwConfig rtl;  // the RTL's fixed parameters equal the defaults
  auto need = [](bool ok, const std::string& what) {
    if (!ok) throw std::runtime_error("the RTL in rtl_stubs/ was built with " + what + "; change the RTL parameters to run this configuration");
  };
  need(c.accumulator_bits == rtl.accumulator_bits, "29-bit accumulators");
  need(std::size_t(c.sram_bytes) == rtl_sram_bytes, fmt::format("{} KB of SRAM per PE", rtl_sram_bytes / 1024));
  need(c.sram_access_cycles == rtl.sram_access_cycles, "1 PE clock per SRAM access (sram2clk flaw: 2)");
  need(c.router_latency_noc_cycles == rtl.router_latency_noc_cycles, "a router latency of 4 NoC clocks");
  need(c.router_out_fifo_packets == rtl.router_out_fifo_packets, "4-packet router output FIFOs");
  need(c.noc_if_out_fifo_packets == rtl.noc_if_out_fifo_packets, "4-packet NoC interface FIFOs");
  need(c.noc_payload_bytes == rtl.noc_payload_bytes, "128-bit NoC payloads");
  need(c.operand_a_buffer_words == rtl.operand_a_buffer_words, "2 operand-A words");
  need(c.tile_setup_cycles == rtl.tile_setup_cycles, "1 setup clock per tile");
  need(c.noc_clock_mhz == 2 * c.pe_clock_mhz, "a NoC clock of twice the PE clock");
}

// A PE's SRAM in a Verilated model: the four 32-bit banks of rtl_stubs/sram.sv (public), a 128-bit line across
// them, found by the SRAM's scope name ("<model>.qpe.g_pe[1].u_pe.u_sram"). The C++ ARM's view of its PE's
// SRAM: untimed, as the ARM core is not in the RTL. Its size is what the RTL was built with (sram.sv LINES).
class SramBanks {
 public:
  SramBanks(const VerilatedContext& ctx, const std::string& scope) {
    const VerilatedScope* s = ctx.scopeFind(scope.c_str());
    if (!s) throw std::logic_error("RTL: no SRAM scope '" + scope + "' in the Verilated model");
    for (int b = 0; b < 4; ++b) {
      const VerilatedVar* v = s->varFind(("bank" + std::to_string(b)).c_str());
      if (!v || v->vltype() != VLVT_UINT32 || v->udims() != 1)
        throw std::logic_error("RTL: " + scope + " has no 32-bit bank" + std::to_string(b) + " array (rtl_stubs/sram.sv)");
      bank_[static_cast<std::size_t>(b)] = static_cast<std::uint32_t*>(v->datap());
      lines_ = v->elements(1);
    }
  }
  int lines() const { return lines_; }
  std::size_t bytes() const { return std::size_t(lines_) * 16; }
  // the whole SRAM into `img` (resized to bytes()), or from it
  void read(std::vector<std::uint8_t>& img) const {
    img.resize(bytes());
    for (int line = 0; line < lines_; ++line)
      for (std::size_t w = 0; w < 4; ++w) std::memcpy(&img[std::size_t(line) * 16 + 4 * w], &bank_[w][line], 4);
  }
  void write(const std::vector<std::uint8_t>& img) {
    if (img.size() < bytes()) throw std::logic_error("RTL: an SRAM image smaller than the SRAM");
    for (int line = 0; line < lines_; ++line)
      for (std::size_t w = 0; w < 4; ++w) std::memcpy(&bank_[w][line], &img[std::size_t(line) * 16 + 4 * w], 4);
  }

 private:
  std::array<std::uint32_t*, 4> bank_{};
  int lines_ = 0;
};

// Whether a Verilated model has rtl_stubs/'s activity counters: s2_pkg.svh publishes ACT_COUNTERS (verilator
// public) in the compilation unit's scope, "<model>.$unit". A user's own QPE RTL without them reads its
// counts as not available (rtl_counter_counts), never as zero.
inline bool has_activity_counters(const VerilatedContext& ctx, const std::string& model) {
  const VerilatedScope* s = ctx.scopeFind((model + ".$unit").c_str());
  const VerilatedVar* v = s ? s->varFind("ACT_COUNTERS") : nullptr;
  return v && v->vltype() == VLVT_UINT32 && *static_cast<const std::uint32_t*>(v->datap()) == rtl_protocol::kActCounters;
}

// The counts the RTL's counters give (model/activity.h names); the rest are the C++ ARM's and DRAMs' own.
inline const std::vector<std::string>& rtl_counter_counts() {
  static const std::vector<std::string> names = {
      "mac_ops", "mac_padding_ops", "sram_read_bytes_mla_a", "sram_read_bytes_mla_b", "sram_write_bytes_mla_out",
      "sram_read_bytes_dma", "sram_write_bytes_dma", "pe_busy_cycles", "pe_idle_cycles"};
  return names;
}

// One PE's activity counters (s2_pkg.svh ACT_*, 64 bits as two 32-bit halves), `stat(sel)` reading its
// statistics port. pe_busy_cycles: clocks with its MLA or DMA busy since reset; pe_idle_cycles is left to
// the backend (it knows the run's span).
template <typename Stat>
Activity rtl_pe_activity(Stat&& stat) {
  using namespace rtl_protocol;
  auto counter = [&](unsigned k) {
    return std::uint64_t(stat(kStatActBase + 2 * k)) | std::uint64_t(stat(kStatActBase + 2 * k + 1)) << 32;
  };
  Activity a;
  a.mac_ops = counter(kActMacOps);
  a.mac_padding_ops = counter(kActMacPaddingOps);
  a.sram_read_bytes_mla_a = counter(kActSramRdMlaA);
  a.sram_read_bytes_mla_b = counter(kActSramRdMlaB);
  a.sram_write_bytes_mla_out = counter(kActSramWrMlaOut);
  a.sram_read_bytes_dma = counter(kActSramRdDma);
  a.sram_write_bytes_dma = counter(kActSramWrDma);
  a.pe_busy_cycles = counter(kActBusyCycles);
  return a;
}

// The Verilated QPE and the ways into it every backend here uses: clocks, reset, statistics, the host port,
// the backdoor, and the SRAM arrays themselves (the C++ ARM's view of its PE's SRAM).
template <typename V>
class QpeTop {
 public:
  // a build verilated with FST tracing (Vqpe_*_trace) can write waveforms (start_waves)
  static constexpr bool kTraceable = requires(V& v, VerilatedFstC* f) { v.trace(f, 99); };

  explicit QpeTop(const std::string& name = "qpe") {
    ctx_ = std::make_unique<VerilatedContext>();
    ctx_->randReset(0);
    if constexpr (kTraceable) ctx_->traceEverOn(true);
    Verilated::threadContextp(ctx_.get());
    top_ = std::make_unique<V>(ctx_.get(), name.c_str());
    for (int pe = 0; pe < kPesPerQpe; ++pe)
      sram_.emplace_back(*ctx_, fmt::format("{}.qpe.g_pe[{}].u_pe.u_sram", name, pe));
    counts_activity_ = has_activity_counters(*ctx_, name);
    find_free_running_state(name);
  }
  // Verilator registers the SRAM arrays' public scopes with the thread's current context and erases them
  // from it on destruction: that must be this model's context, not one already gone.
  ~QpeTop() {
    Verilated::threadContextp(ctx_.get());
    stop_waves();
    top_->final();
    top_.reset();
  }
  V* operator->() { return top_.get(); }
  V& top() { return *top_; }
  // a PE's SRAM as the RTL was built
  std::size_t sram_bytes() const { return sram_.front().bytes(); }

  // An FST waveform to `path`; it records the clocks while dumping(true). Time runs in NoC half-periods of
  // 1 ns (the NoC clock at 500 MHz: one PE clock is 4 ns).
  void start_waves(const std::string& path) {
    if constexpr (kTraceable) {
      fst_ = std::make_unique<VerilatedFstC>();
      top_->trace(fst_.get(), 99);
      fst_->open(path.c_str());
      if (!fst_->isOpen()) throw std::runtime_error("RTL: cannot write the waveform '" + path + "'");
    } else {
      throw std::logic_error("RTL: waveforms need the traced build (Vqpe_*_trace)");
    }
  }
  void dumping(bool on) { dumping_ = on && fst_; }
  void stop_waves() {
    if (fst_) fst_->close();
    fst_.reset();
    dumping_ = false;
  }

  // one NoC clock: rising edge, then falling edge
  void noc_clock() {
    top_->clk = 1;
    eval();
    top_->clk = 0;
    eval();
  }
  void pe_clock() {
    noc_clock();
    noc_clock();
  }
  // the rising edge of a NoC clock, after the inputs were settled by eval(); the falling edge is evaluated
  // with the next clock's inputs
  void clock_edge() {
    top_->clk = 1;
    eval();
    top_->clk = 0;
  }
  // reset, at mesh position (x, y)
  void reset(int x = 0, int y = 0) {
    top_->qpe_x = static_cast<unsigned>(x);
    top_->qpe_y = static_cast<unsigned>(y);
    top_->mesh_in_valid = 0;
    top_->mesh_out_pop = 0;
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
  // Activity-driven evaluation (rtl_stubs/README.md): a QPE that reports `quiescent` (nothing in flight but
  // units waiting for a packet: a clock would change none of its registers) and publishes its free-running
  // state (the PE clock enable `ce` and the PE clock count `cycle_q`) may go unevaluated while its inputs are
  // quiet; advance_idle then moves that state on by the NoC clock edges it missed, exactly as they would
  // have. A QPE RTL without them is evaluated every clock.
  bool can_sleep() const { return ce_ != nullptr; }
  bool quiescent() {
    if constexpr (requires(V& v) { v.quiescent; }) return top_->quiescent != 0;
    else return false;
  }
  // only the next NoC clock edge would change nothing but ce and cycle_q (qpe.sv `edge_quiet`: not a PE clock
  // edge, the router with nothing to do), or quiescent
  bool edge_quiet() {
    if constexpr (requires(V& v) { v.edge_quiet; }) return top_->edge_quiet != 0;
    else return quiescent();
  }
  // the PE clock count after `edges` more NoC clock edges with nothing else happening: one every second edge,
  // on the edges that find ce set
  std::uint32_t cycle_after(std::uint64_t edges) const {
    return *cycle_ + static_cast<std::uint32_t>((edges + (*ce_ & 1u)) / 2);
  }
  void advance_idle(std::uint64_t edges) {
    const std::uint32_t c = cycle_after(edges);
    *ce_ = static_cast<CData>((*ce_ ^ edges) & 1u);
    *cycle_ = c;
  }
  // the RTL has the activity counters (has_activity_counters); then activity(pe) reads a PE's
  bool counts_activity() const { return counts_activity_; }
  Activity activity(int pe) {
    return rtl_pe_activity([&](unsigned sel) { return stat(pe, sel); });
  }
  void backdoor_write(int pe, const std::vector<std::uint8_t>& img) {
    if (img.size() > sram_bytes()) throw std::runtime_error(fmt::format("RTL: SRAM image larger than {} KB", sram_bytes() / 1024));
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
  // The C++ ARM's access to its PE's SRAM (SramBanks): untimed.
  void sram_read(int pe, std::vector<std::uint8_t>& img) const { sram_[static_cast<std::size_t>(pe)].read(img); }
  void sram_write(int pe, const std::vector<std::uint8_t>& img) { sram_[static_cast<std::size_t>(pe)].write(img); }

 private:
  // every clock edge's evaluation goes through here, to be recorded when a waveform is dumping
  void eval() {
    top_->eval();
    if (dumping_) fst_->dump(time_ns_);
    ++time_ns_;
  }
  // the QPE's ce and cycle_q (qpe.sv, public), if it reports quiescent and has them: then it can sleep
  void find_free_running_state(const std::string& name) {
    if constexpr (requires(V& v) { v.quiescent; }) {
      const VerilatedScope* s = ctx_->scopeFind((name + ".qpe").c_str());
      const VerilatedVar* ce = s ? s->varFind("ce") : nullptr;
      const VerilatedVar* cycle = s ? s->varFind("cycle_q") : nullptr;
      if (ce && cycle && ce->vltype() == VLVT_UINT8 && cycle->vltype() == VLVT_UINT32) {
        ce_ = static_cast<CData*>(ce->datap());
        cycle_ = static_cast<IData*>(cycle->datap());
      }
    }
  }
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<V> top_;
  std::vector<SramBanks> sram_;  // per PE
  bool counts_activity_ = false;
  CData* ce_ = nullptr;
  IData* cycle_ = nullptr;
  bool dumping_ = false;
  std::unique_ptr<VerilatedFstC> fst_;
  std::uint64_t time_ns_ = 0;
};

// The RTL build for the configuration's MAC shape and its traced build, as Impl<Vqpe_..., Vqpe_..._trace>.
template <typename Base, template <typename, typename> class Impl, typename... Args>
std::unique_ptr<Base> for_mac_shape(const HwConfig& cfg, const Args&... args) {
  if (cfg.mac_cols == 16 && cfg.mac_rows == 4) return std::make_unique<Impl<Vqpe_16x4, Vqpe_16x4_trace>>(cfg, args...);
  if (cfg.mac_cols == 16 && cfg.mac_rows == 2) return std::make_unique<Impl<Vqpe_16x2, Vqpe_16x2_trace>>(cfg, args...);
  if (cfg.mac_cols == 8 && cfg.mac_rows == 4) return std::make_unique<Impl<Vqpe_8x4, Vqpe_8x4_trace>>(cfg, args...);
  throw std::runtime_error("no RTL build for a " + cfg.mac_shape() + " MAC array (built: 16x4, 16x2, 8x4)");
}

}  // namespace s2
