#include "harness/pipeline/task_runner.h"

#include <memory>
#include <stdexcept>

namespace s2 {

const char* to_string(BackendSelection b) {
  switch (b) {
    case BackendSelection::Both:
      return "both";
    case BackendSelection::Model:
      return "model";
    case BackendSelection::Rtl:
      return "rtl";
  }
  return "?";
}

BackendSelection parse_backend_selection(const std::string& s) {
  if (s == "both") return BackendSelection::Both;
  if (s == "model") return BackendSelection::Model;
  if (s == "rtl") return BackendSelection::Rtl;
  throw std::invalid_argument("backend '" + s + "': expected both, model or rtl");
}

std::uint64_t rtl_budget_cycles(const Task& t, const HwConfig& cfg, std::optional<std::uint64_t> model_cycles,
                                const TaskBudget& budget) {
  if (model_cycles && *model_cycles > 0)
    return std::max(budget.min_cycles, static_cast<std::uint64_t>(budget.model_factor * static_cast<double>(*model_cycles)));
  return static_cast<std::uint64_t>(budget.rtl_only_factor * static_cast<double>(mla_work_cycles(t, cfg))) +
         budget.rtl_only_base;
}

namespace {

BackendResult run_one(Backend& b, const Task& t, std::uint64_t watchdog, const SramImages* images) {
  BackendResult r;
  r.ran = true;
  try {
    RunOptions o;
    o.watchdog_cycles = watchdog;
    o.sram_images = images;
    r.trace = b.run(t, o);
  } catch (const std::exception& e) {
    r.error = e.what();
  } catch (...) {
    r.error = "unknown exception";
  }
  return r;
}

// Stands in for a backend that could not be made: every run fails with the reason.
class UnavailableBackend final : public Backend {
 public:
  UnavailableBackend(std::string name, std::string why, const HwConfig& cfg)
      : name_(std::move(name)), why_(std::move(why)), cfg_(cfg) {}
  std::string name() const override { return name_; }
  TaskTrace run(const Task&, const RunOptions&) override { throw std::runtime_error(why_); }
  const HwConfig& config() const override { return cfg_; }

 private:
  std::string name_, why_;
  HwConfig cfg_;
};

template <typename Make>
std::unique_ptr<Backend> make_or_placeholder(const char* name, Make make, const HwConfig& cfg) {
  try {
    return make(cfg);
  } catch (const std::exception& e) {
    return std::make_unique<UnavailableBackend>(name, std::string("cannot create the backend: ") + e.what(), cfg);
  }
}

}  // namespace

RunResult run_tasks(const std::vector<Task>& tasks, const HwConfig& cfg, Backend* rtl, Backend* model,
                    const RunnerOptions& opt) {
  RunResult r;
  r.cfg = cfg;
  r.policy = opt.policy;
  r.backends = rtl && model ? BackendSelection::Both : (rtl ? BackendSelection::Rtl : BackendSelection::Model);
  r.tasks.reserve(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    if (opt.stop && opt.stop()) break;
    const Task& t = tasks[i];
    if (opt.resumed) {
      if (std::optional<TaskComparison> done = opt.resumed(i, t)) {
        r.rtl_wall_s += done->rtl_wall_s;
        r.model_wall_s += done->model_wall_s;
        r.tasks.push_back(std::move(*done));
        if (opt.progress) opt.progress(i, tasks.size(), r.tasks.back());
        continue;
      }
    }
    BackendResult mres, rres;
    // the test data is drawn once and loaded into both backends; drawing it is not backend time
    std::optional<SramImages> images;
    try {
      images = initial_sram_images(t, cfg, sram_layout(t, cfg));
    } catch (const std::exception&) {
      // each backend then prepares (and reports the failure) itself
    }
    const SramImages* im = images ? &*images : nullptr;
    if (model) mres = run_one(*model, t, rtl_budget_cycles(t, cfg, std::nullopt, opt.policy.task_budget), im);
    if (rtl) {
      std::optional<std::uint64_t> estimate;
      if (mres.ok() && mres.trace->completed) estimate = mres.trace->cycles;
      rres = run_one(*rtl, t, rtl_budget_cycles(t, cfg, estimate, opt.policy.task_budget), im);
    }
    TaskComparison c;
    try {
      c = compare_task(t, cfg, rres, mres, opt.policy);
    } catch (const std::exception& e) {
      c = TaskComparison{};
      c.task = t;
      c.status = Status::Error;
      c.error = std::string("comparison failed: ") + e.what();
    }
    if (rres.ok()) c.rtl_wall_s = rres.trace->wall_s;
    if (mres.ok()) c.model_wall_s = mres.trace->wall_s;
    r.rtl_wall_s += c.rtl_wall_s;
    r.model_wall_s += c.model_wall_s;
    r.tasks.push_back(std::move(c));
    if (opt.progress) opt.progress(i, tasks.size(), r.tasks.back());
  }
  return r;
}

RunResult run_tasks(const std::vector<Task>& tasks, const HwConfig& cfg, const RunnerOptions& opt) {
  std::unique_ptr<Backend> rtl, model;
  if (opt.backends != BackendSelection::Model) rtl = make_or_placeholder("rtl", make_rtl_backend, cfg);
  if (opt.backends != BackendSelection::Rtl) model = make_or_placeholder("model", make_model_backend, cfg);
  RunResult r = run_tasks(tasks, cfg, rtl.get(), model.get(), opt);
  r.backends = opt.backends;
  return r;
}

}  // namespace s2
