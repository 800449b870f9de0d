// The reference-model backend: the SystemC TLM-2.0 QPE (model/qpe/qpe.h).
#include <chrono>
#include <cstdlib>
#include <memory>

#include "harness/backend.h"
#include "model/golden.h"
#include "model/chip/qpe_dram.h"
#include "model/sram_layout.h"

namespace s2 {
namespace {

// SystemC elaborates a design once per process; every model backend shares this one QPE-DRAM (a QPE
// task uses its QPE only).
QpeDram& shared_qpe_dram() {
  static std::unique_ptr<QpeDram> system = [] {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    auto q = std::make_unique<QpeDram>("qpe_dram");
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaborate: multi-sockets complete their bindings here
    return q;
  }();
  return *system;
}
Qpe& shared_qpe() { return shared_qpe_dram().qpe; }

class ModelBackend final : public Backend {
 public:
  explicit ModelBackend(const HwConfig& cfg) : cfg_(cfg) {}
  std::string name() const override { return "model"; }
  const HwConfig& config() const override { return cfg_; }

  TaskTrace run(const Task& t, const RunOptions& opt) override {
    const auto wall0 = std::chrono::steady_clock::now();
    Qpe& qpe = shared_qpe();
    qpe.configure(cfg_);
    const SramLayout l = sram_layout(t, cfg_);
    SramImages own;
    if (!opt.sram_images) own = initial_sram_images(t, cfg_, l);
    TaskTrace tr = qpe.run_task(t, l, opt.sram_images ? *opt.sram_images : own, opt.watchdog_cycles);
    for (PeTrace& pt : tr.pes) {
      const std::vector<std::uint8_t> img = qpe.read_sram(pt.pe, l.total_bytes());
      pt.results = unpack_results(t, cfg_, l, img.data(), img.size());
    }
    tr.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return tr;
  }

 private:
  HwConfig cfg_;
};

class ModelStreamBackend final : public StreamBackend {
 public:
  explicit ModelStreamBackend(const HwConfig& cfg) : cfg_(cfg) {}
  std::string name() const override { return "model"; }
  StreamResult run(const TaskStream& s, std::vector<std::uint8_t>& dram, const StreamRunOptions& opt) override {
    QpeDram& q = shared_qpe_dram();
    q.configure(cfg_);
    StreamResult r = q.run_stream(s, dram, opt);
    dram = q.dram.contents();
    return r;
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
