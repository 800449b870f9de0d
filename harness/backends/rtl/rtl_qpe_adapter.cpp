#include "harness/backends/rtl/rtl_qpe_adapter.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
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
#include "model/golden.h"
#include "model/pe/pe_registers.h"
#include "model/qpe/task_timing.h"
#include "model/sram_layout.h"

// Verilator's runtime asks for the simulation time; the harness keeps none of its own.
double sc_time_stamp() { return 0; }

namespace s2 {
namespace {

using namespace rtl_protocol;

// V: the QPE build that runs; VT: its traced build, which a run asking for waves goes to (V == VT: this is it)
template <typename V, typename VT>
class RtlQpe final : public Backend {
 public:
  explicit RtlQpe(const HwConfig& cfg) : cfg_(cfg) { check_rtl_matches(cfg, qpe_->sram_bytes()); }

  std::string name() const override { return "rtl"; }
  const HwConfig& config() const override { return cfg_; }

  TaskTrace run(const Task& t, const RunOptions& opt) override {
    const auto wall0 = std::chrono::steady_clock::now();
    TaskTrace tr;
    tr.task_id = t.id;
    tr.backend = name();
    tr.budget_cycles = opt.watchdog_cycles;
    if constexpr (!std::is_same_v<V, VT>) {
      if (opt.waves) {
        if (!traced_) traced_ = std::make_unique<RtlQpe<VT, VT>>(cfg_);
        return traced_->run(t, opt);
      }
    }
    QpeTop<V>& top = *qpe_;
    top.reset();
    if (opt.waves) top.start_waves(opt.waves->path);
    top->flaw_sram2clk = cfg_.flaws.sram2clk;
    top->flaw_neighbor_conv = cfg_.flaws.neighbor_conv;
    top->flaw_mm_wide_a = cfg_.flaws.mm_wide_a;

    const SramLayout l = sram_layout(t, cfg_);
    SramImages own;
    if (!opt.sram_images) own = initial_sram_images(t, cfg_, l);
    const SramImages& images = opt.sram_images ? *opt.sram_images : own;
    for (int p = 0; p < kPesPerQpe; ++p) top.backdoor_write(p, images[p]);

    const std::vector<int> pes = t.pes();
    for (int p : pes) send_descriptor(t, l, p);
    for (int p : pes) top.host_send(static_cast<unsigned>(p), kPktRegWr, qpe_addr::kStart, 1);

    // run until every PE raised done, or the watchdog budget from the first start is used up
    std::uint64_t first_start = 0;
    bool started = false;
    const std::uint64_t issued_at = top->cycle;
    // what each PE was doing over the last clocks before the watchdog fired, for the hang report
    const std::uint64_t stall_window = std::min<std::uint64_t>(32, opt.watchdog_cycles);
    std::array<std::array<std::uint64_t, 3>, kPesPerQpe> before{};  // steps, a_wait, b_wait
    while (true) {
      bool all_done = true;
      for (int p : pes) all_done = all_done && ((top->pe_irq_done >> p) & 1u);
      if (all_done) break;
      if (!started) {
        for (int p : pes) {
          if ((top->pe_busy >> p) & 1u) {
            started = true;
            first_start = top.stat(p, kStatStart);
          }
        }
      }
      if (started && opt.watchdog_cycles && top->cycle - first_start + stall_window == opt.watchdog_cycles)
        for (int p : pes) before[p] = {top.stat(p, kStatSteps), top.stat(p, kStatAWait), top.stat(p, kStatBWait)};
      if (started && opt.watchdog_cycles && top->cycle - first_start >= opt.watchdog_cycles) break;
      if (!started && top->cycle - issued_at > 10000) throw std::runtime_error("RTL: task " + t.id + " never started");
      if (opt.waves) {
        const std::uint64_t rel = started ? top->cycle - first_start : 0;
        top.dumping(started && rel >= opt.waves->begin_cycle && rel < opt.waves->end_cycle);
      }
      top.pe_clock();
    }
    top.stop_waves();

    tr.completed = true;
    std::uint64_t lo = ~0ull, hi = 0;
    for (int p : pes) {
      PeTrace pt;
      pt.pe = p;
      pt.done = (top->pe_irq_done >> p) & 1u;
      pt.started = pt.done || ((top->pe_busy >> p) & 1u);
      pt.start_cycle = top.stat(p, kStatStart);
      pt.end_cycle = pt.done ? top.stat(p, kStatEnd) : top->cycle;
      pt.phases.compute = top.stat(p, kStatCompute);
      pt.phases.output = top.stat(p, kStatOutput);
      pt.phases.a_wait = top.stat(p, kStatAWait);
      pt.phases.b_wait = top.stat(p, kStatBWait);
      pt.tiles = top.stat(p, kStatTiles);
      pt.steps = top.stat(p, kStatSteps);
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
      std::vector<std::uint8_t> img = top.backdoor_read(p, l.total_bytes());
      pt.results = unpack_results(t, cfg_, l, img.data(), img.size());
      tr.completed = tr.completed && pt.done;
      lo = std::min(lo, pt.start_cycle);
      hi = std::max(hi, pt.end_cycle);
      tr.pes.push_back(std::move(pt));
    }
    // the counters run from the reset before this task: every PE's, those outside the task too (an SRAM that
    // served operand A)
    Activity outside;
    if (top.counts_activity()) {
      for (int p = 0; p < kPesPerQpe; ++p) {
        const auto it = std::find_if(tr.pes.begin(), tr.pes.end(), [&](const PeTrace& pt) { return pt.pe == p; });
        if (it != tr.pes.end()) it->activity = top.activity(p);
        else outside += top.activity(p);
      }
    } else {
      tr.activity_unavailable = rtl_counter_counts();
    }
    sum_task_activity(tr, outside);
    tr.cycles = hi > lo ? hi - lo : 0;
    tr.elapsed_cycles = top->cycle > lo ? top->cycle - lo : 0;
    // the router's counters (the host's packets are not counted: rtl_stubs/README.md, "Activity")
    const QpePorts<V> ports(top.top(), 0);
    tr.activity.noc_packets = ports.noc_packets();
    tr.activity.noc_packet_hops = ports.noc_packet_hops();
    if (!QpePorts<V>::kCountsNoc) tr.activity_unavailable.insert(tr.activity_unavailable.end(), {"noc_packets", "noc_packet_hops"});
    tr.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return tr;
  }

 private:
  void send_descriptor(const Task& t, const SramLayout& l, int pe) {
    for (const RegisterWrite& w : mla_register_writes(task_registers(t, pe, l)))
      if (w.index != qpe_addr::kStart) qpe_->host_send(static_cast<unsigned>(pe), kPktRegWr, static_cast<unsigned>(w.index), w.data);
  }

  HwConfig cfg_;
  std::unique_ptr<QpeTop<V>> qpe_ = std::make_unique<QpeTop<V>>();
  std::unique_ptr<RtlQpe<VT, VT>> traced_;  // made for the first run that asks for waves
};

}  // namespace

std::unique_ptr<Backend> make_rtl_backend(const HwConfig& cfg) { return for_mac_shape<Backend, RtlQpe>(cfg); }

}  // namespace s2
