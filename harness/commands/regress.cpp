#include "harness/commands/regress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <stdexcept>

#include "harness/session/journal.h"
#include "harness/outputs/output_files.h"
#include "harness/session/progress.h"
#include "harness/outputs/result.h"
#include "harness/commands/regress_report.h"
#include "harness/stimulus/task_vectors.h"

namespace s2 {

void check_expected_hash(const HwConfig& cfg, const std::string& expect) {
  if (!expect.empty() && config_hash(cfg) != expect)
    throw std::invalid_argument(fmt::format(
        "--expect-hash {}: this configuration's hash is {}; the configuration differs from the run being replayed "
        "(compare `s2cosim config` with the report's \"config\")",
        expect, config_hash(cfg)));
}

std::string write_task_waves(const Task& t, const HwConfig& cfg, const TaskComparison& c, const std::string& path,
                             std::uint64_t window) {
  if (!c.rtl_cycles) return "the RTL returned no clocks";
  WaveWindow w;
  w.path = path;
  if (!c.hung_pes.empty()) {
    w.end_cycle = c.rtl_elapsed_cycles + 1;
    w.begin_cycle = w.end_cycle > window ? w.end_cycle - window : 0;
  } else {
    const std::uint64_t d = first_divergence_cycle(c).value_or(0);
    w.begin_cycle = d > window / 2 ? d - window / 2 : 0;
    w.end_cycle = w.begin_cycle + window;
  }
  try {
    const std::unique_ptr<Backend> rtl = make_rtl_backend(cfg);
    const SramImages images = initial_sram_images(t, cfg, sram_layout(t, cfg));
    RunOptions opt;
    opt.watchdog_cycles = c.rtl_budget_cycles;
    opt.sram_images = &images;
    opt.waves = &w;
    const TaskTrace again = rtl->run(t, opt);
    if (again.cycles != *c.rtl_cycles)
      return fmt::format("the traced rerun took {} clocks, the run {}: the waveform may not show the failure", again.cycles,
                         *c.rtl_cycles);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

std::string regress_replay(const RegressRequest& req, const std::string& id, const std::string& hash) {
  std::string s = shell_quote(program_name()) + " regress " + shell_quote(req.vectors) + " --task " + shell_quote(id);
  s += std::string(" --backend ") + to_string(req.backends);
  if (!req.config_file.empty()) s += " --config " + shell_quote(req.config_file);
  if (!req.mac_shape.empty()) s += " --mac " + shell_quote(req.mac_shape);
  for (const std::string& f : req.flaws) s += " --flaw " + shell_quote(f);
  if (req.policy.deviation_bound != CheckPolicy{}.deviation_bound)
    s += fmt::format(" --deviation-bound {}", req.policy.deviation_bound);
  return s + " --expect-hash " + hash;
}

namespace {

// What a regress run works on once its inputs are read and checked.
struct RegressPlan {
  HwConfig cfg;
  std::string hash;  // config_hash(cfg)
  Shard shard;
  std::vector<Task> tasks;          // the tasks --task and --shard pick, in the file's order
  std::vector<std::size_t> index;   // each one's position in the file
  std::size_t whole_run_tasks = 0;  // over all shards
  std::string journal_file;
  std::optional<EnergyTable> energy;  // --energy
};

// --task picks tasks by id, --shard deals what is left round robin; a task keeps its position in the file
// (its index), so that merged shards come back in the file's order. False (said on `err`) for an unknown id.
bool pick_tasks(const RegressRequest& req, std::vector<Task> all, RegressPlan& plan, std::ostream& err) {
  for (const std::string& id : req.task_ids)
    if (std::none_of(all.begin(), all.end(), [&](const Task& t) { return t.id == id; })) {
      err << "s2cosim: --task " << id << ": " << req.vectors << " has no task with this id\n";
      return false;
    }
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (!req.task_ids.empty() && std::find(req.task_ids.begin(), req.task_ids.end(), all[i].id) == req.task_ids.end())
      continue;
    if (plan.shard.takes(plan.whole_run_tasks++)) {
      plan.tasks.push_back(std::move(all[i]));
      plan.index.push_back(i);
    }
  }
  return true;
}

// The configuration, the policy, the vectors, the tasks to run and every output path, checked before anything
// runs; the first problem is said on `err` (false then: bad input).
bool plan_regress(const RegressRequest& req, RegressPlan& plan, std::ostream& err) {
  try {
    validate(req.policy);
    plan.cfg = build_hw_config(req.config_file, req.mac_shape, req.flaws);
    check_expected_hash(plan.cfg, req.expect_hash);
    plan.shard = parse_shard(req.shard);
    if (!req.energy.empty()) plan.energy = energy_table_named(req.energy);
  } catch (const std::exception& e) {
    err << "s2cosim: " << e.what() << "\n";
    return false;
  }
  plan.hash = config_hash(plan.cfg);
  std::vector<Task> all;
  try {
    all = read_task_vectors(req.vectors, plan.cfg);
  } catch (const VectorError& e) {
    err << e.what() << "\n"
        << fmt::format("s2cosim: {} problem{} in {}; nothing was run\n", e.problems().size(),
                       e.problems().size() == 1 ? "" : "s", req.vectors);
    return false;
  }
  if (!pick_tasks(req, std::move(all), plan, err)) return false;
  plan.journal_file = journal_path(req.json_out, req.journal);
  if (!check_paths({{"--json", req.json_out}, {"--csv", req.csv_out}, {"--html", req.html_out}, {"--junit", req.junit_out},
                    {"--journal", plan.journal_file}},
                   {{"vectors", req.vectors}, {"--config", req.config_file}, {"--resume", req.resume},
                    {"--energy", req.energy == "default" ? std::string() : req.energy}},
                   err,
                   plan.journal_file, req.resume))
    return false;
  if (!req.waves_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(req.waves_dir, ec);
    if (ec || !std::filesystem::is_directory(req.waves_dir)) {
      err << "s2cosim: --waves " << req.waves_dir << ": cannot make the directory\n";
      return false;
    }
  }
  return true;
}

// A task's journal record is taken only if it was made by this task's definition, with this configuration,
// policy and version (its fingerprint) and is whole (its checksum); the others run again.
std::string task_fingerprint(const RegressRequest& req, const RegressPlan& plan, const Task& t) {
  return journal_fingerprint(
      fmt::format("regress {} {} {}", task_vector_row(t), to_string(req.backends), policy_hash(req.policy)), plan.hash);
}

// What a journal of the same run held, by task position.
struct ResumedTasks {
  std::vector<std::optional<TaskComparison>> done;
  std::vector<bool> taken;
  ResumeTally tally;
};

// Opens the run's journal (its first record names the run) and, with --resume, takes the tasks a journal of
// the same run holds. Throws for a journal that cannot be opened or read.
ResumedTasks open_journal(const RegressRequest& req, const RegressPlan& plan, Journal& journal) {
  nlohmann::ordered_json header{{"journal", "regress"},
                                {"vectors", req.vectors},
                                {"backends", to_string(req.backends)},
                                {"config_hash", plan.hash}};
  if (!plan.shard.whole() || !req.task_ids.empty()) {  // a journal of one shard or of picked tasks resumes only that
    header["shard"] = req.shard;
    header["tasks"] = req.task_ids;
  }
  const std::vector<Task>& tasks = plan.tasks;
  ResumedTasks r{std::vector<std::optional<TaskComparison>>(tasks.size()), std::vector<bool>(tasks.size(), false), {}};
  const ResumedJournal resumed = open_run_journal(journal, plan.journal_file, req.resume, header, r.tally);
  if (!req.resume.empty()) {
    std::map<std::string, std::size_t> position;
    for (std::size_t i = 0; i < tasks.size(); ++i) position.emplace(tasks[i].id, i);
    std::vector<const JournalRecord*> last(tasks.size(), nullptr);
    for (const JournalRecord& jr : resumed.records) {
      const auto at = position.find(jr.record.value("id", ""));
      if (at == position.end()) {
        ++r.tally.unknown;
        continue;
      }
      last[at->second] = &jr;  // a task run again after a resume has its newer record later in the journal
    }
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      if (!last[i]) continue;
      if (last[i]->fingerprint != task_fingerprint(req, plan, tasks[i])) {
        ++r.tally.changed;
        continue;
      }
      try {
        r.done[i] = task_comparison_from_json(last[i]->record, tasks[i]);
        r.taken[i] = true;
        ++r.tally.taken;
      } catch (const std::exception& e) {
        throw std::runtime_error(fmt::format("{}:{}: task '{}': {}", req.resume, last[i]->line, tasks[i].id, e.what()));
      }
    }
  }
  journal.start(header);
  return r;
}

// The tasks on the backends, each finished one into the journal; SIGINT / SIGTERM stop after the task in hand.
RunResult run_planned_tasks(const RegressRequest& req, const RegressPlan& plan, Journal& journal, ResumedTasks& resumed,
                            std::ostream& err) {
  RunnerOptions opt;
  opt.backends = req.backends;
  opt.policy = req.policy;
  opt.stop = [&] { return StopOnSignal::signal() != 0 || journal.failed(); };
  opt.resumed = [&](std::size_t i, const Task&) -> std::optional<TaskComparison> {
    if (!resumed.done[i]) return std::nullopt;
    return std::move(resumed.done[i]);
  };
  Progress progress(plan.tasks.size(), err);
  opt.progress = [&](std::size_t i, std::size_t, const TaskComparison& c) {
    // a continued journal holds the taken records already; a new one gets them again, to be resumed in turn
    if (!(journal.continues() && resumed.taken[i])) journal.append(task_journal_json(c), task_fingerprint(req, plan, c.task));
    progress.step(i + 1, c.task.id + " " + to_string(c.status));
  };
  RunResult r = run_tasks(plan.tasks, plan.cfg, opt);
  progress.clear();
  r.vectors_path = req.vectors;
  return r;
}

// The waveforms of the failing tasks the RTL ran (--waves), each a window around where it parts from the model.
void write_failing_waves(const RegressRequest& req, const RegressPlan& plan, const RunResult& r, ResultSet& results,
                         std::ostream& err) {
  for (std::size_t i = 0; i < r.tasks.size(); ++i) {
    const TaskComparison& c = r.tasks[i];
    if (c.status == Status::Pass || !c.rtl_cycles) continue;
    std::string name = c.task.id;
    for (char& ch : name)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-' && ch != '.') ch = '_';
    const std::string path = (std::filesystem::path(req.waves_dir) / fmt::format("{}_{}.fst", plan.index[i], name)).string();
    const std::string why = write_task_waves(c.task, plan.cfg, c, path, req.waves_window);
    if (why.empty() || std::filesystem::exists(path)) results.checks[i].waves = path;
    if (!why.empty()) err << "s2cosim: waveform of " << c.task.id << ": " << why << "\n";
  }
}

// The console: the table (unless --quiet), the summary, the failures with their rerun lines, the thesis's tables.
void print_run(const RegressRequest& req, const RunResult& r, const ResultSet& results, std::ostream& out) {
  if (!req.quiet) out << format_table(r) << "\n";
  out << format_summary(r);
  if (!results.shard.whole()) out << "shard: " << format_status_counts(results) << "\n";
  if (const std::string f = format_failures(results); !f.empty()) out << "\nto rerun a failure:\n" << f;
  if (const std::string thesis = format_thesis_comparison(r); !thesis.empty()) out << "\n" << thesis;
  if (const std::string tables = format_neighbour_tables(r); !tables.empty()) out << "\n" << tables;
  if (const std::string counts = format_activity_and_energy(results); !counts.empty()) out << "\n" << counts;
  out.flush();
}

}  // namespace

int regress(const RegressRequest& req, std::ostream& out, std::ostream& err) {
  RegressPlan plan;
  if (!plan_regress(req, plan, err)) return kExitBadInput;
  Journal journal;
  ResumedTasks resumed;
  try {
    resumed = open_journal(req, plan, journal);
  } catch (const std::exception& e) {
    err << "s2cosim: " << e.what() << "\n";
    return kExitBadInput;
  }
  const ResumeTally& tally = resumed.tally;
  if (tally.on()) out << tally.line("tasks") << "\n";
  const StopOnSignal stop_on_signal;
  const RunResult r = run_planned_tasks(req, plan, journal, resumed, err);
  const int stopped = StopOnSignal::signal();
  if (journal.failed() && !stopped)
    out << fmt::format("stopped after {} of {} tasks: {}\n", r.tasks.size(), plan.tasks.size(), journal.error());
  if (stopped)
    out << fmt::format("stopped by signal {} after {} of {} tasks: what finished is reported below{}\n", stopped,
                       r.tasks.size(), plan.tasks.size(), journal.on() ? " and in " + journal.path() : "");

  ResultSet results = results_of(r, [&](const TaskComparison& c) { return regress_replay(req, c.task.id, plan.hash); });
  for (std::size_t i = 0; i < results.checks.size(); ++i) results.checks[i].index = plan.index[i];
  results.total = plan.whole_run_tasks;
  if (plan.energy) {
    results.energy_table = plan.energy;
    for (CheckResult& c : results.checks) charge_energy(c, *plan.energy, plan.cfg.pe_clock_mhz);
  }
  if (!req.waves_dir.empty()) write_failing_waves(req, plan, r, results, err);
  results.shard = plan.shard;
  results.stopped_by_signal = stopped;
  print_run(req, r, results, out);
  // every output is tried, whatever became of the others; the results are in the journal already
  const bool json_written = write_outputs({{req.json_out,
                                            [&] {
                                              nlohmann::ordered_json j = report_json(r, results);
                                              if (tally.on()) j["resume"] = tally.json();
                                              return j.dump(2) + "\n";
                                            }}},
                                          err);
  const bool rest_written = write_result_outputs(results, {req.html_out, req.junit_out, req.csv_out}, err);
  return finished_run_exit_code(stopped, journal, json_written && rest_written, summarize(results).all_passed(), "run", err);
}

}  // namespace s2
