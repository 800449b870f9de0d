#include "harness/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <stdexcept>

#include "harness/journal.h"
#include "harness/report.h"
#include "harness/task_vectors.h"

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
                                const BudgetOptions& opt) {
  if (model_cycles && *model_cycles > 0)
    return std::max(opt.min_cycles, static_cast<std::uint64_t>(opt.model_factor * static_cast<double>(*model_cycles)));
  return static_cast<std::uint64_t>(opt.rtl_only_factor * static_cast<double>(mla_work_cycles(t, cfg))) +
         opt.rtl_only_base;
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
    if (model) mres = run_one(*model, t, rtl_budget_cycles(t, cfg, std::nullopt, opt.budget), im);
    if (rtl) {
      std::optional<std::uint64_t> estimate;
      if (mres.ok() && mres.trace->completed) estimate = mres.trace->cycles;
      rres = run_one(*rtl, t, rtl_budget_cycles(t, cfg, estimate, opt.budget), im);
    }
    TaskComparison c;
    try {
      c = compare_task(t, cfg, rres, mres, opt.compare);
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

HwConfig build_hw_config(const std::string& config_file, const std::string& mac_shape,
                         const std::vector<std::string>& flaws) {
  HwConfig cfg;
  if (!config_file.empty()) cfg = load_hw_config(config_file);
  if (!mac_shape.empty()) set_mac_shape(cfg, mac_shape);
  for (const std::string& f : flaws) enable_flaw(cfg, f);
  return cfg;
}

// Fails early (exit 2) rather than after a long run.
bool check_writable(const std::string& path, std::ostream& err) {
  if (path.empty()) return true;
  const bool existed = std::filesystem::exists(path);
  bool ok;
  {
    std::ofstream f(path, std::ios::app);
    ok = static_cast<bool>(f);
  }
  if (ok && !existed) std::filesystem::remove(path);  // leave nothing behind if the run does not finish
  if (ok) return true;
  err << "s2cosim: cannot write '" << path << "'\n";
  return false;
}

int regress(const RegressRequest& req, std::ostream& out, std::ostream& err) {
  HwConfig cfg;
  try {
    cfg = build_hw_config(req.config_file, req.mac_shape, req.flaws);
  } catch (const std::exception& e) {
    err << "s2cosim: " << e.what() << "\n";
    return 2;
  }
  std::vector<Task> tasks;
  try {
    tasks = read_task_vectors(req.vectors, cfg);
  } catch (const VectorError& e) {
    err << e.what() << "\n"
        << fmt::format("s2cosim: {} problem{} in {}; nothing was run\n", e.problems().size(),
                       e.problems().size() == 1 ? "" : "s", req.vectors);
    return 2;
  }
  if (!check_writable(req.json_out, err) || !check_writable(req.csv_out, err)) return 2;

  // every finished task goes to the journal as it finishes, after a first record naming the run; SIGINT /
  // SIGTERM stop after the task in hand. --resume takes the tasks a journal of the same run holds.
  const nlohmann::ordered_json header{{"journal", "regress"},
                                      {"vectors", req.vectors},
                                      {"backends", to_string(req.backends)},
                                      {"config_hash", config_hash(cfg)}};
  std::vector<nlohmann::ordered_json> resumed;
  std::vector<TaskComparison> done;  // the resumed tasks, in order
  Journal journal;
  try {
    if (!req.resume.empty()) {
      resumed = read_journal_of_run(req.resume, header);
      if (resumed.size() > tasks.size())
        throw std::runtime_error(fmt::format("{}: holds {} tasks, {} has {}", req.resume, resumed.size(),
                                             req.vectors, tasks.size()));
      for (std::size_t i = 0; i < resumed.size(); ++i) {
        if (resumed[i].value("id", "") != tasks[i].id)
          throw std::runtime_error(fmt::format("{}:{}: task '{}', where {} has '{}'", req.resume, i + 2,
                                               resumed[i].value("id", ""), req.vectors, tasks[i].id));
        try {
          done.push_back(task_comparison_from_json(resumed[i], tasks[i]));
        } catch (const std::exception& e) {
          throw std::runtime_error(fmt::format("{}:{}: task '{}': {}", req.resume, i + 2, tasks[i].id, e.what()));
        }
      }
    }
    journal = Journal(journal_path(req.json_out, req.journal));
    journal.append(header);
  } catch (const std::exception& e) {
    err << "s2cosim: " << e.what() << "\n";
    return 2;
  }
  if (!req.resume.empty())
    out << fmt::format("resumed: {} tasks from {} are not run again\n", resumed.size(), req.resume);
  const StopOnSignal stop_on_signal;
  RunnerOptions opt;
  opt.backends = req.backends;
  opt.compare.deviation_threshold = req.deviation_threshold;
  opt.stop = [] { return StopOnSignal::signal() != 0; };
  opt.resumed = [&](std::size_t i, const Task&) -> std::optional<TaskComparison> {
    if (i >= done.size()) return std::nullopt;
    return std::move(done[i]);
  };
  opt.progress = [&](std::size_t i, std::size_t n, const TaskComparison& c) {
    journal.append(task_journal_json(c));
    if (!req.quiet) err << fmt::format("[{}/{}] {} {}\n", i + 1, n, c.task.id, to_string(c.status)) << std::flush;
  };
  RunResult r;
  try {
    r = run_tasks(tasks, cfg, opt);
  } catch (const std::exception& e) {  // the journal could not be written
    err << "s2cosim: " << e.what() << "\n";
    return 2;
  }
  r.vectors_path = req.vectors;
  const int stopped = StopOnSignal::signal();
  if (stopped)
    out << fmt::format("stopped by signal {} after {} of {} tasks: what finished is reported below{}\n", stopped,
                       r.tasks.size(), tasks.size(), journal.on() ? " and in " + journal.path() : "");

  if (!req.quiet) out << format_table(r) << "\n";
  out << format_summary(r);
  if (const std::string thesis = format_thesis_comparison(r); !thesis.empty()) out << "\n" << thesis;
  if (const std::string tables = format_neighbour_tables(r); !tables.empty()) out << "\n" << tables;
  out.flush();
  try {
    if (!req.json_out.empty()) {
      nlohmann::ordered_json j = report_json(r);
      if (stopped) j["stopped_by_signal"] = stopped;  // the tasks that finished before the stop
      write_text_file(req.json_out, j.dump(2) + "\n");
    }
    if (!req.csv_out.empty()) write_text_file(req.csv_out, report_csv(r));
  } catch (const std::exception& e) {
    err << "s2cosim: " << e.what() << "\n";
    return 2;
  }
  if (stopped) return StopOnSignal::exit_code(stopped);
  return summarize(r).all_passed() ? 0 : 1;
}

}  // namespace s2
