// rtl_stubs/chip.sv verilated flat (the whole mesh one Verilated model, kCols x kRows QPEs) as a fabric of
// RtlChip (rtl_chip.h), beside LinkedQpes (linked_qpes.h), the fabric the product runs. Only a test builds it
// (tests/chip_sv_equivalence_test.cpp, rtl_stubs/CMakeLists.txt s2_rtl_chip_2x2): flat, Verilator writes every
// QPE's code out again. It has no waveforms (not verilated with tracing).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/backends/rtl/qpe_ports.h"
#include "harness/backends/rtl/qpe_top.h"
#include "model/hw_config.h"

namespace s2 {

template <typename V, int kCols, int kRows>
class FlatChip {
 public:
  using Top = V;
  static constexpr bool kTraceable = false;

  explicit FlatChip(const ChipShape& chip) {
    if (chip.mesh_cols != kCols || chip.mesh_rows != kRows)
      throw std::invalid_argument(fmt::format("the flat chip was verilated as a {}x{} mesh; chip '{}' is {}x{}", kCols, kRows,
                                              chip.name, chip.mesh_cols, chip.mesh_rows));
    ctx_ = std::make_unique<VerilatedContext>();
    ctx_->randReset(0);
    Verilated::threadContextp(ctx_.get());
    top_ = std::make_unique<V>(ctx_.get(), "flat");
    for (int q = 0; q < kCols * kRows; ++q)
      for (int pe = 0; pe < kPesPerQpe; ++pe)
        sram_.emplace_back(*ctx_, fmt::format("flat.chip.g_qpe[{}].u_qpe.g_pe[{}].u_pe.u_sram", q, pe));
    counts_activity_ = has_activity_counters(*ctx_, "flat");
  }
  ~FlatChip() {
    Verilated::threadContextp(ctx_.get());  // as QpeTop's: the scopes are erased from this context
    top_->final();
    top_.reset();
  }

  int qpes() const { return kCols * kRows; }
  std::size_t sram_bytes() const { return sram_.front().bytes(); }
  QpePorts<V> ports(int q) { return QpePorts<V>(*top_, q); }
  std::uint64_t cycle() { return top_->cycle; }
  void sram_read(int q, int pe, std::vector<std::uint8_t>& img) { bank(q, pe).read(img); }
  void sram_write(int q, int pe, const std::vector<std::uint8_t>& img) { bank(q, pe).write(img); }
  // the RTL's activity counters (has_activity_counters), PE `pe` of QPE q's since reset
  bool counts_activity() const { return counts_activity_; }
  Activity activity(int q, int pe) {
    return rtl_pe_activity([&](unsigned sel) {
      top_->sel_qpe = static_cast<unsigned>(q);
      top_->stat_pe = static_cast<unsigned>(pe);
      top_->stat_sel = sel;
      top_->eval();
      return std::uint32_t(top_->stat_value);
    });
  }

  // the whole chip in reset as QpeTop::reset holds one QPE: two NoC clocks, then one out of reset
  void reset(const FlawSwitches& flaws) {
    V& t = *top_;
    t.rst_n = 0;
    t.host_valid = 0;
    t.host_rsp_pop = 0;
    t.bd_we = 0;
    t.arm_wr = 0;
    t.dram_valid = 0;
    t.dram_req_pop = 0;
    t.clk = 0;
    t.eval();
    noc_clock();
    noc_clock();
    t.rst_n = 1;
    noc_clock();
    t.flaw_sram2clk = flaws.sram2clk;
    t.flaw_neighbor_conv = flaws.neighbor_conv;
    t.flaw_mm_wide_a = flaws.mm_wide_a;
  }
  // the mesh is chip.sv's own wiring: one evaluation settles it
  void settle() { top_->eval(); }
  void clock_edge() {
    top_->clk = 1;
    top_->eval();
    top_->clk = 0;
  }

  void start_waves(const std::string&) { throw std::logic_error("RTL: the flat chip has no waveforms"); }
  void dumping(bool) {}
  void stop_waves() {}

 private:
  void noc_clock() {
    top_->clk = 1;
    top_->eval();
    top_->clk = 0;
    top_->eval();
  }
  SramBanks& bank(int q, int pe) { return sram_[static_cast<std::size_t>(q * kPesPerQpe + pe)]; }
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<V> top_;
  std::vector<SramBanks> sram_;  // per chip PE
  bool counts_activity_ = false;
};

}  // namespace s2
