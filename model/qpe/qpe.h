// The QPE in the model: four PEs and the NoC router, with the host interface. It is also the MLAs'
// scheduler: the PEs of a QPE contend for the router and for each other's SRAM ports, so their tile
// timing is worked out for all of them together (task_timing.h), once per task.
#pragma once

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "model/qpe/host.h"
#include "model/qpe/noc_router.h"
#include "model/pe/pe.h"
#include "model/sram_layout.h"
#include "model/systemc.h"
#include "model/qpe/tile_schedule.h"
#include "model/trace.h"

namespace s2 {

// The MLA timings a QPE has worked out, shared by the QPEs of a chip (the same task on the same PEs in
// step takes the same clocks on every QPE).
struct QpeTimingCache {
  std::string config_hash;
  std::map<std::string, std::unique_ptr<TileSchedule>> schedules;  // by configuration hash
  std::map<std::string, PeTaskTiming> stream_timings;              // by task, PEs in step and PE
};

class Qpe : public sc_core::sc_module, public MlaScheduler {
 public:
  Host host;
  NocRouter router;

  explicit Qpe(sc_core::sc_module_name name);
  void configure(const HwConfig& cfg) { configure(cfg, config_hash(cfg)); }
  // `hash` is config_hash(cfg), worked out once by a caller that configures often (per task, per QPE)
  void configure(const HwConfig& cfg, const std::string& hash);
  Pe& pe(int i) { return *pes_[i]; }
  void share_timing_cache(std::shared_ptr<QpeTimingCache> cache) { cache_ = std::move(cache); }

  // Loads `images` (one SRAM image per PE, from address 0), runs `t` on its PEs, returns the trace
  // (results not read back: they are in pe(p).sram). Drives sc_start(); call from outside the simulation.
  TaskTrace run_task(const Task& t, const SramLayout& l, const std::array<std::vector<std::uint8_t>, kPesPerQpe>& images,
                     std::uint64_t watchdog_cycles);
  std::uint64_t rows_resolved() const { return timing_.rows_resolved; }
  std::uint64_t rows_extrapolated() const { return timing_.rows_extrapolated; }

  // Stream mode (QPE-DRAM task streams): each PE's MLA tasks are timed on their own start (timing_for).
  void set_stream_mode(bool on);

  // MlaScheduler
  void started(int pe, std::uint64_t start_cycle, const Task& task) override;
  void finished(int pe) override;
  void joined(int pe) override;
  const PeTaskTiming& timing_for(int pe) override;
  // In a stream, PEs whose tasks start within kStreamJoinWindowCycles of each other are timed in step from
  // the start (the RTL's PEs fall into step behind the DRAM, starting their tasks a few tens of clocks
  // apart); a task running when another PE's MLA joins or finishes is timed again from then on.
  static constexpr std::uint64_t kStreamJoinWindowCycles = 64;
  // (a task that ends sooner, timed with the PEs busy at its start, is timed when it ends: a wait longer
  // than the task would hold its PE's next command back)
  std::uint64_t timing_delay_cycles(int pe) override {
    return stream_mode_ ? std::min(kStreamJoinWindowCycles, timing_for(pe).cycles()) : 16;
  }
  const HwConfig& config() const override { return cfg_; }
  sc_core::sc_time pe_clock() const override { return pe_clock_; }
  void mla_traffic(int pe, int source, double words_per_cycle, double port_accesses_per_cycle) override {
    if (mla_traffic_) mla_traffic_(pe, source, words_per_cycle, port_accesses_per_cycle);
  }
  // Where the MLAs' traffic goes (the system's NoC): f(PE, source PE, words per clock, own port accesses per
  // clock), PEs of this QPE.
  void on_mla_traffic(std::function<void(int, int, double, double)> f) { mla_traffic_ = std::move(f); }

 private:
  HwConfig cfg_;
  sc_core::sc_time pe_clock_, noc_clock_;
  std::array<std::unique_ptr<Pe>, kPesPerQpe> pes_;
  std::shared_ptr<QpeTimingCache> cache_ = std::make_shared<QpeTimingCache>();
  TileSchedule* schedule_ = nullptr;
  Task task_;
  std::array<bool, kPesPerQpe> active_{};
  std::array<std::uint64_t, kPesPerQpe> start_{};
  TaskTiming timing_;
  bool timing_valid_ = false;
  bool stream_mode_ = false;
  std::array<Task, kPesPerQpe> stream_task_;
  std::function<void(int, int, double, double)> mla_traffic_;
};

}  // namespace s2
