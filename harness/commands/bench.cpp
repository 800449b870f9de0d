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
namespace {

// One suite on one MAC array with the flaws off or sram2clk: a row of the bench's table.
struct Row {
  std::string suite, mac, flaws;
  RunSummary s;
  std::size_t bit_exact = 0;
  std::uint64_t model_clocks = 0;  // simulated QPE clocks of the tasks the model ran
  double hdl_worst = 0.0;
  int hdl_rows = 0, hdl_within = 0;
  // the activity counts: the largest |(model - rtl) / rtl| of any event count of any task, and where; the
  // same of the clock counts (busy, idle: against the RTL's span, as the comparator takes them)
  std::optional<double> count_worst, clock_count_worst;
  std::string count_worst_at, clock_count_worst_at;
};
// the model's cost against the length of a task (its simulated clocks), over every task of the bench, in
// decades of clocks: a schedule whose cost grows with the clocks shows as wall time growing with them
struct Decade {
  std::size_t tasks = 0;
  std::uint64_t clocks = 0;
  double model_wall_s = 0.0;
};
// A task's record: by suite, MAC shape, flaws and position in the suite.
using RecordKey = std::tuple<std::string, std::string, std::string, std::size_t>;

// What the bench has measured so far, and where it goes.
struct BenchState {
  Shard shard;
  std::vector<Row> rows;
  std::map<int, Decade> by_length;
  double rtl_wall = 0.0, model_wall = 0.0;
  nlohmann::json task_records = nlohmann::json::array();  // every task's journal record, for merge
  std::size_t k = 0;  // a task's index in the whole bench (suites x MAC arrays x flaws), over all shards
  std::size_t done_tasks = 0;
  // the tasks taken from a journal (--resume) or the shards (merge), with their fingerprints ("" for merge's)
  std::map<RecordKey, JournalRecord> resumed;
  ResumeTally tally;
  Journal journal;
  ResultSet results;
  bool stop() const { return StopOnSignal::signal() != 0 || journal.failed(); }
};

// Every finished task goes to the journal as it finishes, after a first record naming the bench; --resume
// takes the tasks a journal of the same bench holds (by suite, MAC shape, flaws and position), merge the
// shards' records. False (said on `err`) for bad input.
bool open_bench_journal(const BenchRequest& req, BenchState& b, std::ostream& err) {
  nlohmann::ordered_json header{{"journal", "bench"}, {"suites", req.suites}, {"mac", req.mac_shapes}};
  if (!b.shard.whole()) header["shard"] = req.shard;  // a shard's journal resumes that shard only
  auto take = [&](const nlohmann::ordered_json& rec, std::string fingerprint, std::size_t line, const std::string& where) {
    try {
      b.resumed[{json_field<std::string>(rec.at("suite")), json_field<std::string>(rec.at("mac")),
                 json_field<std::string>(rec.at("flaws")), json_field<std::size_t>(rec.at("index"))}] =
          JournalRecord{rec, std::move(fingerprint), line};
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("{}:{}: a task record needs suite, mac and flaws (strings) and index "
                                           "(an integer): {}", where, line, e.what()));
    }
  };
  // merge's bench runs only what its shards lack: no journal of its own
  const std::string journal_file = req.merged.empty() ? journal_path(req.json_out, req.journal) : req.journal;
  std::vector<NamedPath> inputs{{"--resume", req.resume}};
  for (const std::string& s : req.suites) inputs.push_back({"suite", s});
  if (!check_paths({{"--json", req.json_out}, {"--html", req.html_out}, {"--junit", req.junit_out}, {"--journal", journal_file}},
                   inputs, err, journal_file, req.resume))
    return false;
  try {
    for (const JournalRecord& jr : open_run_journal(b.journal, journal_file, req.resume, header, b.tally).records)
      take(jr.record, jr.fingerprint, jr.line, req.resume);
    for (std::size_t i = 0; i < req.merged.size(); ++i) take(req.merged[i], "", i + 1, "a shard's tasks[]");
    b.journal.start(header);
  } catch (const std::exception& e) {
    err << "s2cosim: " << e.what() << "\n";
    return false;
  }
  return true;
}

// done/total on a terminal: every suite's tasks, on every MAC array, flaws off and on
std::size_t count_tasks(const BenchRequest& req) {
  std::size_t total = 0;
  for (const std::string& suite : req.suites) {
    try {
      total += read_task_vectors(suite, HwConfig{}).size() * req.mac_shapes.size() * 2;
    } catch (const std::exception&) {  // reported with its file and line when the suite is read to run
    }
  }
  return total;
}

// The result records' title, configuration and policy; the checks come as the suites run.
ResultSet bench_results_head(const BenchRequest& req) {
  ResultSet results;
  results.command = "bench";
  for (const std::string& suite : req.suites) results.title += (results.title.empty() ? "" : ", ") + suite;
  results.title += " on both backends, flaws off and sram2clk";
  const HwConfig cfg;  // the configuration without the flaw that every row differs from by its MAC array and flaw
  results.config = to_json(cfg);
  results.config_hash = config_hash(cfg);
  results.policy = req.policy;
  std::string macs;
  for (const std::string& x : req.mac_shapes) macs += (macs.empty() ? "" : ", ") + x;
  results.hardware = "MAC " + macs + "; flaws off and sram2clk (each row's MAC array and flaws are its labels)";
  return results;
}

// One suite on one configuration, as the bench names it.
struct SuiteRun {
  const std::string& suite;
  const std::string& mac;
  const std::string flaws;  // "sram2clk" or "none"
  const HwConfig& cfg;
};

// The row of a suite's run: its summary, bit-exactness, model clocks, and the RTL against the thesis's HDL
// clocks (the thesis's prototype had a 16x4 MAC array and the 2-clock SRAM flaw); every task also into the
// model's cost by task length.
Row measure_row(const BenchRequest& req, const SuiteRun& sr, const RunResult& r, BenchState& b) {
  Row row{sr.suite, sr.mac, sr.flaws, summarize(r), 0, 0, 0.0, 0, 0, std::nullopt, std::nullopt, "", ""};
  const bool thesis_prototype = sr.cfg.flaws.sram2clk && sr.cfg.mac_cols == 16 && sr.cfg.mac_rows == 4;
  for (const TaskComparison& c : r.tasks) {
    if (c.data_match() == true && c.model_data_match() == true) ++row.bit_exact;
    std::string count;
    if (const auto w = c.activity_delta.worst(&count, false); w && (!row.count_worst || *w > *row.count_worst))
      row.count_worst = w, row.count_worst_at = c.task.id + " " + count;
    if (const auto w = c.activity_delta.worst(&count, true); w && (!row.clock_count_worst || *w > *row.clock_count_worst))
      row.clock_count_worst = w, row.clock_count_worst_at = c.task.id + " " + count;
    row.model_clocks += c.model_cycles.value_or(0);
    if (c.model_cycles && *c.model_cycles > 0) {
      Decade& d = b.by_length[static_cast<int>(std::floor(std::log10(double(*c.model_cycles))))];
      ++d.tasks;
      d.clocks += *c.model_cycles;
      d.model_wall_s += c.model_wall_s;
    }
    if (c.task.thesis_hdl_clocks && c.rtl_cycles && thesis_prototype) {
      const double d = (double(*c.rtl_cycles) - double(c.task.thesis_hdl_clocks)) / double(c.task.thesis_hdl_clocks);
      ++row.hdl_rows;
      row.hdl_worst = std::max(row.hdl_worst, std::fabs(d));
      if (std::fabs(d) <= req.policy.bench.thesis_hdl_deviation) ++row.hdl_within;
    }
  }
  return row;
}

// Every task of a suite's run as a result record, its rerun line a regress of its suite with this MAC array and flaw.
void add_checks(const BenchRequest& req, const SuiteRun& sr, const RunResult& r, const std::vector<std::size_t>& index,
                BenchState& b) {
  RegressRequest again;
  again.vectors = sr.suite;
  again.mac_shape = sr.mac;
  again.policy = req.policy;
  if (sr.cfg.flaws.sram2clk) again.flaws = {"sram2clk"};
  const std::string hash = config_hash(sr.cfg);
  const ResultSet part = results_of(r, [&](const TaskComparison& c) { return regress_replay(again, c.task.id, hash); });
  for (std::size_t i = 0; i < part.checks.size(); ++i) {
    CheckResult c = part.checks[i];
    c.name += fmt::format(" [{}, {}]", sr.mac, sr.flaws);
    c.labels.insert(c.labels.begin(), {{"mac", sr.mac}, {"flaws", sr.flaws}});
    c.index = index[i];
    b.results.checks.push_back(std::move(c));
  }
}

// This shard's tasks of a suite (--shard), each known by its position in the suite (pos) and in the bench (index).
void pick_shard(std::vector<Task>& tasks, BenchState& b, std::vector<std::size_t>& pos, std::vector<std::size_t>& index) {
  std::vector<Task> picked;
  for (std::size_t i = 0; i < tasks.size(); ++i, ++b.k)
    if (b.shard.takes(b.k)) {
      picked.push_back(tasks[i]);
      pos.push_back(i);
      index.push_back(b.k);
    }
  tasks = std::move(picked);
}

// A suite on one configuration: its tasks run (or taken from the journal or the shards), each into the
// journal, the row and the result records. Returns 0, or the exit code of bad input.
int run_suite(const BenchRequest& req, const SuiteRun& sr, BenchState& b, Progress& progress, std::ostream& err) {
  std::vector<Task> tasks;
  try {
    tasks = read_task_vectors(sr.suite, sr.cfg);
  } catch (const std::exception& e) {
    err << e.what() << "\ns2cosim: nothing was run\n";
    return kExitBadInput;
  }
  std::vector<std::size_t> pos, index;
  pick_shard(tasks, b, pos, index);
  if (!progress.on())
    err << fmt::format("bench: {} on {} with {}...\n", sr.suite, sr.mac, sr.cfg.flaws.sram2clk ? "sram2clk" : "flaws off")
        << std::flush;
  const std::string hash = config_hash(sr.cfg);
  auto fingerprint = [&](const Task& t, std::size_t p) {
    return journal_fingerprint(fmt::format("bench {} {} {} {} {} {}", sr.suite, sr.mac, sr.flaws, p, task_vector_row(t),
                                           policy_hash(req.policy)),
                               hash);
  };
  std::vector<bool> taken(tasks.size(), false);
  RunnerOptions opt;
  opt.policy = req.policy;
  opt.stop = [&] { return b.stop(); };
  opt.resumed = [&](std::size_t i, const Task& t) -> std::optional<TaskComparison> {
    const auto it = b.resumed.find({sr.suite, sr.mac, sr.flaws, pos[i]});
    if (it == b.resumed.end()) return std::nullopt;
    const JournalRecord& jr = it->second;
    // the task's definition, the configuration, the policy or the version changed since the record was made: run it again
    if (!jr.fingerprint.empty() && jr.fingerprint != fingerprint(t, pos[i])) {
      ++b.tally.changed;
      return std::nullopt;
    }
    if (jr.record.value("id", "") != t.id)
      throw std::runtime_error(fmt::format("{}: task {} of {} is '{}' in the shards, '{}' in the file",
                                           jr.fingerprint.empty() ? "merge" : req.resume, pos[i], sr.suite,
                                           jr.record.value("id", ""), t.id));
    try {
      TaskComparison c = task_comparison_from_json(jr.record, t);
      taken[i] = true;
      if (!jr.fingerprint.empty()) ++b.tally.taken;
      return c;
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("{}:{}: task '{}': {}", req.resume, jr.line, t.id, e.what()));
    }
  };
  opt.progress = [&](std::size_t i, std::size_t, const TaskComparison& c) {
    nlohmann::ordered_json rec{{"suite", sr.suite}, {"mac", sr.mac}, {"flaws", sr.flaws}, {"index", pos[i]}};
    rec.update(task_journal_json(c));
    // a continued journal holds the taken records already
    if (!(b.journal.continues() && taken[i])) b.journal.append(rec, fingerprint(c.task, pos[i]));
    b.task_records.push_back(nlohmann::json::parse(rec.dump()));
    progress.step(++b.done_tasks, fmt::format("{} {} {}: {} {}", sr.suite, sr.mac, sr.flaws, c.task.id, to_string(c.status)));
  };
  RunResult r;
  try {
    r = run_tasks(tasks, sr.cfg, opt);
  } catch (const std::exception& e) {  // a resumed record could not be read
    err << "s2cosim: " << e.what() << "\n";
    return kExitBadInput;
  }
  b.rows.push_back(measure_row(req, sr, r, b));
  b.rtl_wall += r.rtl_wall_s;
  b.model_wall += r.model_wall_s;
  add_checks(req, sr, r, index, b);
  return 0;
}

// Every suite on every MAC array, flaws off and sram2clk, until a signal or the journal stops the bench.
int run_suites(const BenchRequest& req, BenchState& b, std::ostream& err) {
  Progress progress(count_tasks(req), err);
  for (const std::string& mac : req.mac_shapes) {
    for (const bool flaw : {false, true}) {
      HwConfig cfg;
      try {
        set_mac_shape(cfg, mac);
      } catch (const std::exception& e) {
        err << "s2cosim: " << e.what() << "\n";
        return kExitBadInput;
      }
      cfg.flaws.sram2clk = flaw;
      for (const std::string& suite : req.suites) {
        if (const int rc = run_suite(req, SuiteRun{suite, mac, flaw ? "sram2clk" : "none", cfg}, b, progress, err)) return rc;
        if (b.stop()) return 0;
      }
    }
  }
  return 0;
}

// per row: the speed ratio (RTL wall seconds / model wall seconds) and the model's simulated QPE clocks per
// wall second, so that a configuration the model is slow on shows, not only the total
double speed_ratio(double rtl, double model) { return model > 0 ? rtl / model : 0.0; }

// The table of rows, then the model's wall time by task length.
void print_rows(const BenchState& b, std::ostream& out) {
  out << fmt::format("{:<34} {:>5} {:>8} {:>6} {:>6} {:>10} {:>10} {:>9} {:>9} {:>8} {:>7} {:>12}\n", "suite", "MAC",
                     "flaws", "tasks", "pass", "bit-exact", "max|d|", "median|d|", "RTL s", "model s", "ratio",
                     "model Mclk/s");
  for (const Row& r : b.rows) {
    out << fmt::format("{:<34} {:>5} {:>8} {:>6} {:>6} {:>10} {:>9.2f}% {:>8.2f}% {:>9.2f} {:>8.3f} {:>6.1f}x {:>12.1f}\n",
                       r.suite, r.mac, r.flaws, r.s.tasks, r.s.counts.at(Status::Pass), r.bit_exact,
                       r.s.max_abs_delta.value_or(0.0) * 100.0, r.s.median_abs_delta.value_or(0.0) * 100.0,
                       r.s.rtl_wall_s, r.s.model_wall_s, speed_ratio(r.s.rtl_wall_s, r.s.model_wall_s),
                       r.s.model_wall_s > 0 ? double(r.model_clocks) / r.s.model_wall_s / 1e6 : 0.0);
  }
  out << fmt::format("\nthe model's wall time against the task's length (every task above; model_schedule \"{}\"):\n",
                     HwConfig{}.model_schedule);
  out << fmt::format("  {:>20} {:>6} {:>16} {:>16}\n", "model clocks", "tasks", "model us/task", "model ns/clock");
  for (const auto& [decade, d] : b.by_length) {
    out << fmt::format("  {:>20} {:>6} {:>16.1f} {:>16.2f}\n",
                       fmt::format("{}..{}", static_cast<std::uint64_t>(std::pow(10.0, decade) + 0.5),
                                   static_cast<std::uint64_t>(std::pow(10.0, decade + 1) + 0.5)), d.tasks,
                       d.model_wall_s / double(d.tasks) * 1e6, d.model_wall_s / double(d.clocks) * 1e9);
  }
}

// The figures the targets judge, over every row.
struct Figures {
  double worst = 0.0, worst_median = 0.0;  // |delta|: the largest, the largest median of a row
  std::size_t tasks = 0, exact = 0;
  double ratio = 0.0;  // RTL wall seconds / model wall seconds, over everything run
};
Figures figures_of(const BenchState& b) {
  Figures f;
  for (const Row& r : b.rows) {
    f.worst = std::max(f.worst, r.s.max_abs_delta.value_or(1.0));
    f.worst_median = std::max(f.worst_median, r.s.median_abs_delta.value_or(1.0));
    f.tasks += r.s.tasks;
    f.exact += r.bit_exact;
  }
  f.ratio = speed_ratio(b.rtl_wall, b.model_wall);
  return f;
}

// Each target met or missed (printed unless a signal stopped the bench); true if every one is met.
bool judge_targets(const BenchTargets& want, const BenchState& b, const Figures& f, bool print, std::ostream& out) {
  bool ok = true;
  if (print) out << "\ntargets:\n";
  auto target = [&](bool met, const std::string& what) {
    ok = ok && met;
    if (print) out << fmt::format("  [{}] {}\n", met ? "met " : "MISS", what);
  };
  for (const Row& r : b.rows) {
    if (r.hdl_rows == 0) continue;
    target(r.hdl_within == r.hdl_rows,
           fmt::format("RTL within {:g}% of the thesis's HDL clocks ({} {}): {} of {} rows, worst {:.2f}%",
                       100 * want.thesis_hdl_deviation, r.suite, r.mac, r.hdl_within, r.hdl_rows, r.hdl_worst * 100.0));
  }
  target(f.worst <= want.max_abs_delta, fmt::format("model within {:g}% of the RTL on every task: worst |delta| {:.2f}%",
                                                    100 * want.max_abs_delta, f.worst * 100.0));
  target(f.worst_median <= want.median_abs_delta,
         fmt::format("median |delta| within {:g}% in every suite: worst median {:.2f}%", 100 * want.median_abs_delta,
                     f.worst_median * 100.0));
  for (const Row& r : b.rows) {
    const std::string row = fmt::format("{} {} {}", r.suite, r.mac, r.flaws);
    target(r.count_worst && *r.count_worst <= want.max_abs_count_delta,
           r.count_worst ? fmt::format("activity event counts of the model within {:g}% of the RTL's on every task ({}): worst {:.3f}% ({})",
                                       100 * want.max_abs_count_delta, row, 100 * *r.count_worst, r.count_worst_at)
                         : fmt::format("activity event counts of the model within {:g}% of the RTL's ({}): no task has both backends' counts",
                                       100 * want.max_abs_count_delta, row));
    // busy and idle clocks are time: held to the clocks' target, against the RTL's span
    if (r.clock_count_worst)
      target(*r.clock_count_worst <= want.max_abs_delta,
             fmt::format("busy and idle PE clocks of the model within {:g}% of the RTL's span on every task ({}): worst {:.3f}% ({})",
                         100 * want.max_abs_delta, row, 100 * *r.clock_count_worst, r.clock_count_worst_at));
  }
  target(f.exact == f.tasks, fmt::format("bit-exact against the golden results (flaws off and sram2clk): {} of {} tasks",
                                         f.exact, f.tasks));
  // the reference model's promise (issue 13): row_speed_ratio on every suite and configuration, and overall
  const Row* slowest = nullptr;
  for (const Row& r : b.rows)
    if (!slowest || speed_ratio(r.s.rtl_wall_s, r.s.model_wall_s) < speed_ratio(slowest->s.rtl_wall_s, slowest->s.model_wall_s))
      slowest = &r;
  if (slowest) {
    std::size_t fast = 0;
    for (const Row& r : b.rows) fast += speed_ratio(r.s.rtl_wall_s, r.s.model_wall_s) >= want.row_speed_ratio;
    target(fast == b.rows.size() && f.ratio >= want.row_speed_ratio,
           fmt::format("model at least {:g}x faster than the RTL on every suite and configuration and overall: {} of {} "
                       "rows, slowest {:.1f}x ({} {} {}), overall {:.1f}x",
                       want.row_speed_ratio, fast, b.rows.size(), speed_ratio(slowest->s.rtl_wall_s, slowest->s.model_wall_s),
                       slowest->suite, slowest->mac, slowest->flaws, f.ratio));
  }
  target(f.ratio >= want.speed_ratio, fmt::format("model at least {:g}x faster than the RTL: {:.1f}x ({:.2f} s RTL / {:.3f} s "
                                                  "model, {} tasks, wall seconds inside the backends, one run)",
                                                  want.speed_ratio, f.ratio, b.rtl_wall, b.model_wall, f.tasks));
  return ok;
}

std::string bench_json(const BenchRequest& req, const BenchState& b, const Figures& f, int stopped) {
  nlohmann::json j;
  j["tool"] = "s2cosim";
  j["command"] = "bench";
  j["speed_ratio"] = f.ratio;
  j["rtl_wall_s"] = b.rtl_wall;
  j["model_wall_s"] = b.model_wall;
  j["max_abs_delta"] = f.worst;
  if (stopped) j["stopped_by_signal"] = stopped;
  for (const auto& [decade, d] : b.by_length)
    j["model_cost_by_task_length"].push_back({{"min_clocks", static_cast<std::uint64_t>(std::pow(10.0, decade) + 0.5)},
                                              {"tasks", d.tasks},
                                              {"clocks", d.clocks},
                                              {"model_wall_s", d.model_wall_s}});
  for (const Row& r : b.rows) {
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
                           {"thesis_hdl_worst_abs_deviation", r.hdl_worst},
                           {"max_abs_count_delta", r.count_worst ? nlohmann::json(*r.count_worst) : nlohmann::json(nullptr)},
                           {"max_abs_count_delta_at", r.count_worst_at},
                           {"max_abs_clock_count_delta", r.clock_count_worst ? nlohmann::json(*r.clock_count_worst) : nlohmann::json(nullptr)},
                           {"max_abs_clock_count_delta_at", r.clock_count_worst_at}});
  }
  j["suite_files"] = req.suites;
  j["mac"] = req.mac_shapes;
  j["tasks"] = b.task_records;  // the journal's records: merge makes the whole bench's report from them
  j["results"] = results_json(b.results);
  if (b.tally.on()) j["resume"] = b.tally.json();
  return j.dump(2) + "\n";
}

}  // namespace

int bench(const BenchRequest& req, std::ostream& out, std::ostream& err) {
  BenchState b;
  try {
    validate(req.policy);
    b.shard = parse_shard(req.shard);
  } catch (const std::exception& e) {
    err << "s2cosim: " << e.what() << "\n";
    return kExitBadInput;
  }
  if (!open_bench_journal(req, b, err)) return kExitBadInput;
  if (b.tally.on()) out << b.tally.line("tasks") << "\n";
  const StopOnSignal stop_on_signal;
  b.results = bench_results_head(req);
  if (const int rc = run_suites(req, b, err)) return rc;
  const int stopped = StopOnSignal::signal();
  if (stopped)
    out << fmt::format("stopped by signal {}: what finished is below{}; the targets are not judged\n", stopped,
                       b.journal.on() ? " and in " + b.journal.path() + " (--resume it)" : "");
  print_rows(b, out);
  if (!b.shard.whole())
    out << fmt::format("\nshard {}/{}: the figures are this shard's {} of {} tasks; `s2cosim merge` of every shard's --json "
                       "report gives the bench's\n", b.shard.index, b.shard.count, b.results.checks.size(), b.k);
  const Figures f = figures_of(b);
  const bool ok = judge_targets(req.policy.bench, b, f, !stopped, out);
  b.results.total = b.k;
  b.results.shard = b.shard;
  b.results.stopped_by_signal = stopped;
  const std::string json_text = req.json_out.empty() ? "" : bench_json(req, b, f, stopped);
  // every output is tried, whatever became of the others; the tasks are in the journal already
  const bool json_written = write_outputs({{req.json_out, [&] { return json_text; }}}, err);
  const bool rest_written = write_result_outputs(b.results, {req.html_out, req.junit_out, ""}, err);
  return finished_run_exit_code(StopOnSignal::signal(), b.journal, json_written && rest_written, ok, "bench", err);
}

}  // namespace s2
