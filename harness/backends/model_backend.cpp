// The reference-model backend: the SystemC TLM-2.0 QPE (model/qpe/qpe.h).
#include <chrono>
#include <algorithm>
#include <cstdlib>
#include <memory>

#include "harness/backends/backend.h"
#include "model/golden.h"
#include "model/chip/system.h"
#include "model/sram_layout.h"

namespace s2 {
namespace {

// SystemC elaborates a design once per process; every model backend shares this one system, built as
// large as the largest preset or the first configuration that asks for more (a QPE task uses QPE 0 only).
System& shared_system(const HwConfig& cfg) {
  static std::unique_ptr<System> system = [&] {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    int qpes = cfg.chip.qpes();
    std::size_t drams = cfg.chip.drams.size();
    for (const ChipShape& preset : {prototype_chip(), spinnaker2_chip()}) {
      qpes = std::max(qpes, preset.qpes());
      drams = std::max(drams, preset.drams.size());
    }
    auto q = std::make_unique<System>("system", qpes, static_cast<int>(drams));
    run_simulation(sc_core::SC_ZERO_TIME);  // elaborate: multi-sockets complete their bindings here
    return q;
  }();
  return *system;
}

class ModelBackend final : public Backend {
 public:
  // The system is elaborated here, once per process, not inside a task's wall time (as the RTL's model is
  // built before its first task is timed): bench's per-suite figures would otherwise charge it to the first.
  explicit ModelBackend(const HwConfig& cfg) : cfg_(cfg), hash_(config_hash(cfg)) { shared_system(cfg_); }
  std::string name() const override { return "model"; }
  const HwConfig& config() const override { return cfg_; }

  TaskTrace run(const Task& t, const RunOptions& opt) override {
    const auto wall0 = std::chrono::steady_clock::now();
    Qpe& qpe = shared_system(cfg_).qpe(0);
    qpe.configure(cfg_, hash_);
    const SramLayout l = sram_layout(t, cfg_);
    SramImages own;
    if (!opt.sram_images) own = initial_sram_images(t, cfg_, l);
    TaskTrace tr = qpe.run_task(t, l, opt.sram_images ? *opt.sram_images : own, opt.watchdog_cycles);
    for (PeTrace& pt : tr.pes) {
      const Sram& sram = qpe.pe(pt.pe).sram;
      pt.results = unpack_results(t, cfg_, l, sram.data(), std::min<std::size_t>(sram.size(), l.total_bytes()));
    }
    tr.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return tr;
  }

 private:
  HwConfig cfg_;
  std::string hash_;
};

class ModelStreamBackend final : public StreamBackend {
 public:
  explicit ModelStreamBackend(const HwConfig& cfg) : cfg_(cfg) { shared_system(cfg_); }
  std::string name() const override { return "model"; }
  using StreamBackend::run;
  StreamResult run(const TaskStream& s, SystemMemory& mem, const StreamRunOptions& opt) override {
    System& system = shared_system(cfg_);
    system.configure(cfg_);
    return system.run_stream(s, mem, opt);
  }

 private:
  HwConfig cfg_;
};

}  // namespace

std::unique_ptr<StreamBackend> make_model_stream_backend(const HwConfig& cfg) {
  return std::make_unique<ModelStreamBackend>(cfg);
}

std::unique_ptr<Backend> make_model_backend(const HwConfig& cfg) { return std::make_unique<ModelBackend>(cfg); }

}  // namespace s2
