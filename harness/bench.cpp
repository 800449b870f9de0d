#include "harness/bench.h"

#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/report.h"
#include "harness/runner.h"
#include "harness/task_vectors.h"

namespace s2 {

int bench(const BenchRequest& req, std::ostream& out, std::ostream& err) {
  struct Row {
    std::string suite, mac, flaws;
    RunSummary s;
    std::size_t bit_exact = 0;
    double hdl_worst = 0.0;
    int hdl_rows = 0, hdl_within = 0;
  };
  std::vector<Row> rows;
  double rtl_wall = 0.0, model_wall = 0.0;
  for (const std::string& mac : req.mac_shapes) {
    for (const bool flaw : {false, true}) {
      HwConfig cfg;
      try {
        set_mac_shape(cfg, mac);
      } catch (const std::exception& e) {
        err << "s2cosim: " << e.what() << "\n";
        return 2;
      }
      cfg.flaws.sram2clk = flaw;
      for (const std::string& suite : req.suites) {
        std::vector<Task> tasks;
        try {
          tasks = read_task_vectors(suite, cfg);
        } catch (const std::exception& e) {
          err << e.what() << "\ns2cosim: nothing was run\n";
          return 2;
        }
        err << fmt::format("bench: {} on {} with {}...\n", suite, mac, flaw ? "sram2clk" : "flaws off") << std::flush;
        RunnerOptions opt;
        const RunResult r = run_tasks(tasks, cfg, opt);
        Row row{suite, mac, flaw ? "sram2clk" : "none", summarize(r)};
        for (const TaskComparison& c : r.tasks) {
          if (c.data_match() == true && c.model_data_match() == true) ++row.bit_exact;
          // the thesis's prototype had a 16x4 MAC array and the 2-clock SRAM flaw
          if (c.task.thesis_hdl_clocks && c.rtl_cycles && flaw && cfg.mac_cols == 16 && cfg.mac_rows == 4) {
            const double d = (double(*c.rtl_cycles) - double(c.task.thesis_hdl_clocks)) / double(c.task.thesis_hdl_clocks);
            ++row.hdl_rows;
            row.hdl_worst = std::max(row.hdl_worst, std::fabs(d));
            if (std::fabs(d) <= 0.10) ++row.hdl_within;
          }
        }
        rtl_wall += r.rtl_wall_s;
        model_wall += r.model_wall_s;
        rows.push_back(row);
      }
    }
  }

  bool ok = true;
  out << fmt::format("{:<34} {:>5} {:>8} {:>6} {:>6} {:>10} {:>10} {:>9} {:>9} {:>8}\n", "suite", "MAC", "flaws", "tasks",
                     "pass", "bit-exact", "max|d|", "median|d|", "RTL s", "model s");
  for (const Row& r : rows) {
    out << fmt::format("{:<34} {:>5} {:>8} {:>6} {:>6} {:>10} {:>9.2f}% {:>8.2f}% {:>9.2f} {:>8.3f}\n", r.suite, r.mac,
                       r.flaws, r.s.tasks, r.s.counts.at(Status::Pass), r.bit_exact,
                       r.s.max_abs_delta.value_or(0.0) * 100.0, r.s.median_abs_delta.value_or(0.0) * 100.0,
                       r.s.rtl_wall_s, r.s.model_wall_s);
  }
  out << "\ntargets:\n";
  auto target = [&](bool met, const std::string& what) {
    ok = ok && met;
    out << fmt::format("  [{}] {}\n", met ? "met " : "MISS", what);
  };
  for (const Row& r : rows) {
    if (r.hdl_rows == 0) continue;
    target(r.hdl_within == r.hdl_rows,
           fmt::format("RTL within 10% of the thesis's HDL clocks ({} {}): {} of {} rows, worst {:.2f}%", r.suite, r.mac,
                       r.hdl_within, r.hdl_rows, r.hdl_worst * 100.0));
  }
  double worst = 0.0, worst_median = 0.0;
  std::size_t tasks = 0, exact = 0, exact_due = 0;
  for (const Row& r : rows) {
    worst = std::max(worst, r.s.max_abs_delta.value_or(1.0));
    worst_median = std::max(worst_median, r.s.median_abs_delta.value_or(1.0));
    tasks += r.s.tasks;
    exact += r.bit_exact;
    exact_due += r.s.tasks;
  }
  target(worst <= 0.02, fmt::format("model within 2% of the RTL on every task: worst |delta| {:.2f}%", worst * 100.0));
  target(worst_median <= 0.005,
         fmt::format("median |delta| within 0.5% in every suite: worst median {:.2f}%", worst_median * 100.0));
  target(exact == exact_due, fmt::format("bit-exact against the golden results (flaws off and sram2clk): {} of {} tasks",
                                         exact, exact_due));
  const double ratio = model_wall > 0 ? rtl_wall / model_wall : 0.0;
  target(ratio >= 100.0, fmt::format("model at least 100x faster than the RTL: {:.1f}x ({:.2f} s RTL / {:.3f} s model, "
                                     "{} tasks, wall seconds inside the backends, one run)",
                                     ratio, rtl_wall, model_wall, tasks));
  if (!req.json_out.empty()) {
    nlohmann::json j;
    j["tool"] = "s2cosim";
    j["command"] = "bench";
    j["speed_ratio"] = ratio;
    j["rtl_wall_s"] = rtl_wall;
    j["model_wall_s"] = model_wall;
    j["max_abs_delta"] = worst;
    for (const Row& r : rows) {
      j["suites"].push_back({{"suite", r.suite},
                             {"mac", r.mac},
                             {"flaws", r.flaws},
                             {"tasks", r.s.tasks},
                             {"pass", r.s.counts.at(Status::Pass)},
                             {"bit_exact", r.bit_exact},
                             {"max_abs_delta", r.s.max_abs_delta.value_or(0.0)},
                             {"median_abs_delta", r.s.median_abs_delta.value_or(0.0)},
                             {"rtl_wall_s", r.s.rtl_wall_s},
                             {"model_wall_s", r.s.model_wall_s},
                             {"thesis_hdl_rows", r.hdl_rows},
                             {"thesis_hdl_within_10pct", r.hdl_within},
                             {"thesis_hdl_worst_abs_deviation", r.hdl_worst}});
    }
    write_text_file(req.json_out, j.dump(2) + "\n");
  }
  return ok ? 0 : 1;
}

}  // namespace s2
