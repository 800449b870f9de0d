#include "harness/commands/regress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
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
  if (req.deviation_threshold != 0.02) s += fmt::format(" --deviation-threshold {}", req.deviation_threshold);
  return s + " --expect-hash " + hash;
}

int regress(const RegressRequest& req, std::ostream& out, std::ostream& err) {
  HwConfig cfg;
  Shard shard;
  try {
    cfg = build_hw_config(req.config_file, req.mac_shape, req.flaws);
    check_expected_hash(cfg, req.expect_hash);
    shard = parse_shard(req.shard);
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
  // --task picks tasks by id, --shard deals what is left round robin; a task keeps its position in the file
  // (its index), so that merged shards come back in the file's order
  std::vector<std::size_t> index;
  std::size_t whole_run_tasks = 0;  // over all shards
  {
    for (const std::string& id : req.task_ids)
      if (std::none_of(tasks.begin(), tasks.end(), [&](const Task& t) { return t.id == id; })) {
        err << "s2cosim: --task " << id << ": " << req.vectors << " has no task with this id\n";
        return 2;
      }
    std::vector<Task> picked;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      if (!req.task_ids.empty() && std::find(req.task_ids.begin(), req.task_ids.end(), tasks[i].id) == req.task_ids.end())
        continue;
      if (shard.takes(whole_run_tasks++)) {
        picked.push_back(tasks[i]);
        index.push_back(i);
      }
    }
    tasks = std::move(picked);
  }
  const std::string journal_file = journal_path(req.json_out, req.journal);
  if (!check_paths({{"--json", req.json_out}, {"--csv", req.csv_out}, {"--html", req.html_out}, {"--junit", req.junit_out},
                    {"--journal", journal_file}},
                   {{"vectors", req.vectors}, {"--config", req.config_file}, {"--resume", req.resume}}, err, journal_file,
                   req.resume))
    return kExitBadInput;
  if (!req.waves_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(req.waves_dir, ec);
    if (ec || !std::filesystem::is_directory(req.waves_dir)) {
      err << "s2cosim: --waves " << req.waves_dir << ": cannot make the directory\n";
      return 2;
    }
  }

  // every finished task goes to the journal as it finishes, after a first record naming the run; SIGINT /
  // SIGTERM stop after the task in hand. --resume takes the tasks a journal of the same run holds.
  nlohmann::ordered_json header{{"journal", "regress"},
                                {"vectors", req.vectors},
                                {"backends", to_string(req.backends)},
                                {"config_hash", config_hash(cfg)}};
  if (!shard.whole() || !req.task_ids.empty()) {  // a journal of one shard or of picked tasks resumes only that
    header["shard"] = req.shard;
    header["tasks"] = req.task_ids;
  }
  // a record is taken only if it was made by this task's definition, with this configuration, threshold and
  // version (its fingerprint) and is whole (its checksum); the others run again
  const std::string hash = config_hash(cfg);
  auto fingerprint = [&](const Task& t) {
    return journal_fingerprint(fmt::format("regress {} {} {}", task_vector_row(t), to_string(req.backends),
                                           req.deviation_threshold),
                               hash);
  };
  std::vector<std::optional<TaskComparison>> done(tasks.size());  // the resumed tasks, by position
  std::vector<bool> taken(tasks.size(), false);
  ResumeTally tally;
  Journal journal;
  try {
    const ResumedJournal resumed = open_run_journal(journal, journal_file, req.resume, header, tally);
    if (!req.resume.empty()) {
      std::map<std::string, std::size_t> position;
      for (std::size_t i = 0; i < tasks.size(); ++i) position.emplace(tasks[i].id, i);
      std::vector<const JournalRecord*> last(tasks.size(), nullptr);
      for (const JournalRecord& jr : resumed.records) {
        const auto at = position.find(jr.record.value("id", ""));
        if (at == position.end()) {
          ++tally.unknown;
          continue;
        }
        last[at->second] = &jr;  // a task run again after a resume has its newer record later in the journal
      }
      for (std::size_t i = 0; i < tasks.size(); ++i) {
        if (!last[i]) continue;
        if (last[i]->fingerprint != fingerprint(tasks[i])) {
          ++tally.changed;
          continue;
        }
        try {
          done[i] = task_comparison_from_json(last[i]->record, tasks[i]);
          taken[i] = true;
          ++tally.taken;
        } catch (const std::exception& e) {
          throw std::runtime_error(fmt::format("{}:{}: task '{}': {}", req.resume, last[i]->line, tasks[i].id, e.what()));
        }
      }
    }
    journal.start(header);
  } catch (const std::exception& e) {
    err << "s2cosim: " << e.what() << "\n";
    return 2;
  }
  if (tally.on()) out << tally.line("tasks") << "\n";
  const StopOnSignal stop_on_signal;
  RunnerOptions opt;
  opt.backends = req.backends;
  opt.compare.deviation_threshold = req.deviation_threshold;
  opt.stop = [&] { return StopOnSignal::signal() != 0 || journal.failed(); };
  opt.resumed = [&](std::size_t i, const Task&) -> std::optional<TaskComparison> {
    if (!done[i]) return std::nullopt;
    return std::move(done[i]);
  };
  Progress progress(tasks.size(), err);
  opt.progress = [&](std::size_t i, std::size_t, const TaskComparison& c) {
    // a continued journal holds the taken records already; a new one gets them again, to be resumed in turn
    if (!(journal.continues() && taken[i]))
      journal.append(task_journal_json(c), fingerprint(c.task));
    progress.step(i + 1, c.task.id + " " + to_string(c.status));
  };
  RunResult r = run_tasks(tasks, cfg, opt);
  progress.clear();
  r.vectors_path = req.vectors;
  const int stopped = StopOnSignal::signal();
  if (journal.failed() && !stopped)
    out << fmt::format("stopped after {} of {} tasks: {}\n", r.tasks.size(), tasks.size(), journal.error());
  if (stopped)
    out << fmt::format("stopped by signal {} after {} of {} tasks: what finished is reported below{}\n", stopped,
                       r.tasks.size(), tasks.size(), journal.on() ? " and in " + journal.path() : "");

  ResultSet results = results_of(r, [&](const TaskComparison& c) { return regress_replay(req, c.task.id, hash); });
  for (std::size_t i = 0; i < results.checks.size(); ++i) results.checks[i].index = index[i];
  results.total = whole_run_tasks;
  // the waveforms of the failing tasks the RTL ran, each a window around where it parts from the model
  if (!req.waves_dir.empty())
    for (std::size_t i = 0; i < r.tasks.size(); ++i) {
      const TaskComparison& c = r.tasks[i];
      if (c.status == Status::Pass || !c.rtl_cycles) continue;
      std::string name = c.task.id;
      for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-' && ch != '.') ch = '_';
      const std::string path = (std::filesystem::path(req.waves_dir) / fmt::format("{}_{}.fst", index[i], name)).string();
      const std::string why = write_task_waves(c.task, cfg, c, path, req.waves_window);
      if (why.empty() || std::filesystem::exists(path)) results.checks[i].waves = path;
      if (!why.empty()) err << "s2cosim: waveform of " << c.task.id << ": " << why << "\n";
    }
  results.shard = shard;
  results.stopped_by_signal = stopped;
  if (!req.quiet) out << format_table(r) << "\n";
  out << format_summary(r);
  if (!shard.whole()) out << "shard: " << format_status_counts(results) << "\n";
  if (const std::string f = format_failures(results); !f.empty()) out << "\nto rerun a failure:\n" << f;
  if (const std::string thesis = format_thesis_comparison(r); !thesis.empty()) out << "\n" << thesis;
  if (const std::string tables = format_neighbour_tables(r); !tables.empty()) out << "\n" << tables;
  out.flush();
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
