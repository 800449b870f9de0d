#include "harness/commands/bench.h"

#include <cmath>
#include <map>
#include <tuple>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/session/journal.h"
#include "harness/outputs/output_files.h"
#include "harness/commands/regress_report.h"
#include "harness/commands/regress.h"
#include "harness/stimulus/task_vectors.h"
#include "harness/session/progress.h"
#include "harness/outputs/result.h"
#include "model/json_field.h"

namespace s2 {

int bench(const BenchRequest& req, std::ostream& out, std::ostream& err) {
  struct Row {
    std::string suite, mac, flaws;
    RunSummary s;
    std::size_t bit_exact = 0;
    std::uint64_t model_clocks = 0;  // simulated QPE clocks of the tasks the model ran
    double hdl_worst = 0.0;
    int hdl_rows = 0, hdl_within = 0;
  };
  // the model's cost against the length of a task (its simulated clocks), over every task of the bench, in
  // decades of clocks: a schedule whose cost grows with the clocks shows as wall time growing with them
  struct Decade {
    std::size_t tasks = 0;
    std::uint64_t clocks = 0;
    double model_wall_s = 0.0;
  };
  std::map<int, Decade> by_length;
  std::vector<Row> rows;
  double rtl_wall = 0.0, model_wall = 0.0;
  // every finished task goes to the journal as it finishes, after a first record naming the bench;
  // --resume takes the tasks a journal of the same bench holds (by suite, MAC shape, flaws and position)
  nlohmann::ordered_json header{{"journal", "bench"}, {"suites", req.suites}, {"mac", req.mac_shapes}};
  Shard shard;
  try {
    shard = parse_shard(req.shard);
  } catch (const std::exception& e) {
    err << "s2cosim: " << e.what() << "\n";
    return 2;
  }
  if (!shard.whole()) header["shard"] = req.shard;  // a shard's journal resumes that shard only
  nlohmann::json task_records = nlohmann::json::array();  // every task's journal record, for merge
  std::size_t k = 0;  // a task's index in the whole bench (suites x MAC arrays x flaws), over all shards
  // a task's record, by suite, MAC shape, flaws and position, with its fingerprint ("" for merge's records)
  std::map<std::tuple<std::string, std::string, std::string, std::size_t>, JournalRecord> resumed;
  auto take = [&](const nlohmann::ordered_json& rec, std::string fingerprint, std::size_t line, const std::string& where) {
    try {
      resumed[{json_field<std::string>(rec.at("suite")), json_field<std::string>(rec.at("mac")),
               json_field<std::string>(rec.at("flaws")), json_field<std::size_t>(rec.at("index"))}] =
          JournalRecord{rec, std::move(fingerprint), line};
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("{}:{}: a task record needs suite, mac and flaws (strings) and index "
                                           "(an integer): {}", where, line, e.what()));
    }
  };
  // merge's bench runs only what its shards lack: no journal of its own
  const std::string journal_file = req.merged.empty() ? journal_path(req.json_out, req.journal) : req.journal;
  {
    std::vector<NamedPath> inputs{{"--resume", req.resume}};
    for (const std::string& s : req.suites) inputs.push_back({"suite", s});
    if (!check_paths({{"--json", req.json_out}, {"--html", req.html_out}, {"--junit", req.junit_out}, {"--journal", journal_file}},
                     inputs, err, journal_file, req.resume))
      return kExitBadInput;
  }
  ResumeTally tally;
  Journal journal;
  try {
    for (const JournalRecord& jr : open_run_journal(journal, journal_file, req.resume, header, tally).records)
      take(jr.record, jr.fingerprint, jr.line, req.resume);
    for (std::size_t i = 0; i < req.merged.size(); ++i) take(req.merged[i], "", i + 1, "a shard's tasks[]");
    journal.start(header);
  } catch (const std::exception& e) {
    err << "s2cosim: " << e.what() << "\n";
    return 2;
  }
  if (tally.on()) out << tally.line("tasks") << "\n";
  // done/total on a terminal: every suite's tasks, on every MAC array, flaws off and on
  std::size_t total_tasks = 0, done_tasks = 0;
  for (const std::string& suite : req.suites) {
    try {
      total_tasks += read_task_vectors(suite, HwConfig{}).size() * req.mac_shapes.size() * 2;
    } catch (const std::exception&) {  // reported with its file and line when the suite is read to run
    }
  }
  Progress progress(total_tasks, err);
  const StopOnSignal stop_on_signal;
  ResultSet results;
  results.command = "bench";
  for (const std::string& suite : req.suites) results.title += (results.title.empty() ? "" : ", ") + suite;
  results.title += " on both backends, flaws off and sram2clk";
  {
    const HwConfig cfg;  // the configuration without the flaw that every row differs from by its MAC array and flaw
    results.config = to_json(cfg);
    results.config_hash = config_hash(cfg);
    results.hardware = "MAC " + [&] {
      std::string m;
      for (const std::string& x : req.mac_shapes) m += (m.empty() ? "" : ", ") + x;
      return m;
    }() + "; flaws off and sram2clk (each row's MAC array and flaws are its labels)";
  }
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
        // --shard: this shard's tasks, each known by its position in the suite (pos) and in the bench (index)
        std::vector<std::size_t> pos, index;
        {
          std::vector<Task> picked;
          for (std::size_t i = 0; i < tasks.size(); ++i, ++k)
            if (shard.takes(k)) {
              picked.push_back(tasks[i]);
              pos.push_back(i);
              index.push_back(k);
            }
          tasks = std::move(picked);
        }
        if (!progress.on()) err << fmt::format("bench: {} on {} with {}...\n", suite, mac, flaw ? "sram2clk" : "flaws off") << std::flush;
        const std::string flaws = flaw ? "sram2clk" : "none";
        RunnerOptions opt;
        opt.stop = [&] { return StopOnSignal::signal() != 0 || journal.failed(); };
        const std::string hash = config_hash(cfg);
        auto fingerprint = [&](const Task& t, std::size_t p) {
          return journal_fingerprint(fmt::format("bench {} {} {} {} {}", suite, mac, flaws, p, task_vector_row(t)), hash);
        };
        std::vector<bool> taken(tasks.size(), false);
        opt.resumed = [&](std::size_t i, const Task& t) -> std::optional<TaskComparison> {
          const auto it = resumed.find({suite, mac, flaws, pos[i]});
          if (it == resumed.end()) return std::nullopt;
          const JournalRecord& jr = it->second;
          // the task's definition, the configuration or the version changed since the record was made: run it again
          if (!jr.fingerprint.empty() && jr.fingerprint != fingerprint(t, pos[i])) {
            ++tally.changed;
            return std::nullopt;
          }
          if (jr.record.value("id", "") != t.id)
            throw std::runtime_error(fmt::format("{}: task {} of {} is '{}' in the shards, '{}' in the file",
                                                 jr.fingerprint.empty() ? "merge" : req.resume, pos[i], suite,
                                                 jr.record.value("id", ""), t.id));
          try {
            TaskComparison c = task_comparison_from_json(jr.record, t);
            taken[i] = true;
            if (!jr.fingerprint.empty()) ++tally.taken;
            return c;
          } catch (const std::exception& e) {
            throw std::runtime_error(fmt::format("{}:{}: task '{}': {}", req.resume, jr.line, t.id, e.what()));
          }
        };
        opt.progress = [&](std::size_t i, std::size_t, const TaskComparison& c) {
          nlohmann::ordered_json rec{{"suite", suite}, {"mac", mac}, {"flaws", flaws}, {"index", pos[i]}};
          rec.update(task_journal_json(c));
          // a continued journal holds the taken records already
          if (!(journal.continues() && taken[i])) journal.append(rec, fingerprint(c.task, pos[i]));
          task_records.push_back(nlohmann::json::parse(rec.dump()));
          progress.step(++done_tasks, fmt::format("{} {} {}: {} {}", suite, mac, flaws, c.task.id, to_string(c.status)));
        };
        RunResult r;
        try {
          r = run_tasks(tasks, cfg, opt);
        } catch (const std::exception& e) {  // a resumed record could not be read
          err << "s2cosim: " << e.what() << "\n";
          return kExitBadInput;
        }
        Row row{suite, mac, flaws, summarize(r)};
        for (const TaskComparison& c : r.tasks) {
          if (c.data_match() == true && c.model_data_match() == true) ++row.bit_exact;
          row.model_clocks += c.model_cycles.value_or(0);
          if (c.model_cycles && *c.model_cycles > 0) {
            Decade& d = by_length[static_cast<int>(std::floor(std::log10(double(*c.model_cycles))))];
            ++d.tasks;
            d.clocks += *c.model_cycles;
            d.model_wall_s += c.model_wall_s;
          }
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
        // every task as a result record, its rerun line a regress of its suite with this MAC array and flaw
        RegressRequest again;
        again.vectors = suite;
        again.mac_shape = mac;
        if (flaw) again.flaws = {"sram2clk"};
        const ResultSet part = results_of(r, [&](const TaskComparison& c) { return regress_replay(again, c.task.id, hash); });
        for (std::size_t i = 0; i < part.checks.size(); ++i) {
          CheckResult c = part.checks[i];
          c.name += fmt::format(" [{}, {}]", mac, flaws);
          c.labels.insert(c.labels.begin(), {{"mac", mac}, {"flaws", flaws}});
          c.index = index[i];
          results.checks.push_back(std::move(c));
        }
        if (StopOnSignal::signal() || journal.failed()) break;
      }
      if (StopOnSignal::signal() || journal.failed()) break;
    }
    if (StopOnSignal::signal() || journal.failed()) break;
  }
  progress.clear();
  if (const int sig = StopOnSignal::signal()) {
    out << fmt::format("stopped by signal {}: what finished is below{}; the targets are not judged\n", sig,
                       journal.on() ? " and in " + journal.path() + " (--resume it)" : "");
  }

  bool ok = true;
  // per row: the speed ratio (RTL wall seconds / model wall seconds) and the model's simulated QPE clocks per
  // wall second, so that a configuration the model is slow on shows, not only the total
  auto speed_ratio = [](double rtl, double model) { return model > 0 ? rtl / model : 0.0; };
  out << fmt::format("{:<34} {:>5} {:>8} {:>6} {:>6} {:>10} {:>10} {:>9} {:>9} {:>8} {:>7} {:>12}\n", "suite", "MAC",
                     "flaws", "tasks", "pass", "bit-exact", "max|d|", "median|d|", "RTL s", "model s", "ratio",
                     "model Mclk/s");
  for (const Row& r : rows) {
    out << fmt::format("{:<34} {:>5} {:>8} {:>6} {:>6} {:>10} {:>9.2f}% {:>8.2f}% {:>9.2f} {:>8.3f} {:>6.1f}x {:>12.1f}\n",
                       r.suite, r.mac, r.flaws, r.s.tasks, r.s.counts.at(Status::Pass), r.bit_exact,
                       r.s.max_abs_delta.value_or(0.0) * 100.0, r.s.median_abs_delta.value_or(0.0) * 100.0,
                       r.s.rtl_wall_s, r.s.model_wall_s, speed_ratio(r.s.rtl_wall_s, r.s.model_wall_s),
                       r.s.model_wall_s > 0 ? double(r.model_clocks) / r.s.model_wall_s / 1e6 : 0.0);
  }
  out << fmt::format("\nthe model's wall time against the task's length (every task above; model_schedule \"{}\"):\n",
                     HwConfig{}.model_schedule);
  out << fmt::format("  {:>20} {:>6} {:>16} {:>16}\n", "model clocks", "tasks", "model us/task", "model ns/clock");
  for (const auto& [decade, d] : by_length) {
    out << fmt::format("  {:>20} {:>6} {:>16.1f} {:>16.2f}\n",
                       fmt::format("{}..{}", static_cast<std::uint64_t>(std::pow(10.0, decade) + 0.5),
                                   static_cast<std::uint64_t>(std::pow(10.0, decade + 1) + 0.5)), d.tasks,
                       d.model_wall_s / double(d.tasks) * 1e6, d.model_wall_s / double(d.clocks) * 1e9);
  }
  const int stopped = StopOnSignal::signal();
  if (!shard.whole())
    out << fmt::format("\nshard {}/{}: the figures are this shard's {} of {} tasks; `s2cosim merge` of every shard's --json "
                       "report gives the bench's\n", shard.index, shard.count, results.checks.size(), k);
  if (!stopped) out << "\ntargets:\n";
  auto target = [&](bool met, const std::string& what) {
    ok = ok && met;
    if (!stopped) out << fmt::format("  [{}] {}\n", met ? "met " : "MISS", what);
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
  const double ratio = speed_ratio(rtl_wall, model_wall);
  // the reference model's promise (issue 13): 500x the RTL on every suite and configuration, and overall
  const Row* slowest = nullptr;
  for (const Row& r : rows)
    if (!slowest || speed_ratio(r.s.rtl_wall_s, r.s.model_wall_s) < speed_ratio(slowest->s.rtl_wall_s, slowest->s.model_wall_s))
      slowest = &r;
  if (slowest) {
    std::size_t at_500 = 0;
    for (const Row& r : rows) at_500 += speed_ratio(r.s.rtl_wall_s, r.s.model_wall_s) >= 500.0;
    target(at_500 == rows.size() && ratio >= 500.0,
           fmt::format("model at least 500x faster than the RTL on every suite and configuration and overall: {} of {} "
                       "rows, slowest {:.1f}x ({} {} {}), overall {:.1f}x",
                       at_500, rows.size(), speed_ratio(slowest->s.rtl_wall_s, slowest->s.model_wall_s), slowest->suite,
                       slowest->mac, slowest->flaws, ratio));
  }
  target(ratio >= 100.0, fmt::format("model at least 100x faster than the RTL: {:.1f}x ({:.2f} s RTL / {:.3f} s model, "
                                     "{} tasks, wall seconds inside the backends, one run)",
                                     ratio, rtl_wall, model_wall, tasks));
  results.total = k;
  results.shard = shard;
  results.stopped_by_signal = stopped;
  std::string json_text;
  if (!req.json_out.empty()) {
    nlohmann::json j;
    j["tool"] = "s2cosim";
    j["command"] = "bench";
    j["speed_ratio"] = ratio;
    j["rtl_wall_s"] = rtl_wall;
    j["model_wall_s"] = model_wall;
    j["max_abs_delta"] = worst;
    if (stopped) j["stopped_by_signal"] = stopped;
    for (const auto& [decade, d] : by_length)
      j["model_cost_by_task_length"].push_back({{"min_clocks", static_cast<std::uint64_t>(std::pow(10.0, decade) + 0.5)},
                                                {"tasks", d.tasks},
                                                {"clocks", d.clocks},
                                                {"model_wall_s", d.model_wall_s}});
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
                             {"speed_ratio", speed_ratio(r.s.rtl_wall_s, r.s.model_wall_s)},
                             {"model_clocks", r.model_clocks},
                             {"thesis_hdl_rows", r.hdl_rows},
                             {"thesis_hdl_within_10pct", r.hdl_within},
                             {"thesis_hdl_worst_abs_deviation", r.hdl_worst}});
    }
    j["suite_files"] = req.suites;
    j["mac"] = req.mac_shapes;
    j["tasks"] = task_records;  // the journal's records: merge makes the whole bench's report from them
    j["results"] = results_json(results);
    if (tally.on()) j["resume"] = tally.json();
    json_text = j.dump(2) + "\n";
  }
  // every output is tried, whatever became of the others; the tasks are in the journal already
  const bool json_written = write_outputs({{req.json_out, [&] { return json_text; }}}, err);
  const bool rest_written = write_result_outputs(results, {req.html_out, req.junit_out, ""}, err);
  return finished_run_exit_code(StopOnSignal::signal(), journal, json_written && rest_written, ok, "bench", err);
}

}  // namespace s2
