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

  // Stream mode (task streams on a System): the MLA tasks run clock by clock in the system's NoC fabric
  // beside the DMAs (on_stream_mla), not on the QPE's tile schedule.
  // `computes_data`: false for a timing-only stream run (the MLAs compute no results).
  void set_stream_mode(bool on, bool computes_data = true);
  // Where a stream's MLA tasks go: f(PE of this QPE, first clock, task).
  void on_stream_mla(std::function<void(int, std::uint64_t, const Task&)> f) { stream_mla_ = std::move(f); }

  // MlaScheduler
  void started(int pe, std::uint64_t start_cycle, const Task& task) override;
  const PeTaskTiming& timing_for(int pe) override;
  bool rows_from_noc() const override { return stream_mode_; }
  bool computes_data() const override { return computes_data_; }
  const HwConfig& config() const override { return cfg_; }
  sc_core::sc_time pe_clock() const override { return pe_clock_; }

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
  bool computes_data_ = true;
  std::function<void(int, std::uint64_t, const Task&)> stream_mla_;
};

}  // namespace s2
