#include "harness/commands/flaw_limit.h"

#include "harness/commands/regress_report.h"
#include "harness/outputs/result.h"

#include <fmt/format.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

#include "harness/backends/backend.h"
#include "harness/session/journal.h"
#include "harness/outputs/output_files.h"
#include "harness/commands/regress_report.h"
#include "harness/outputs/result.h"
#include "harness/commands/regress.h"
#include "harness/stimulus/task_vectors.h"

namespace s2 {
namespace {

// One family of tasks along the searched dimension, and the samples of the dimensions it must not depend on.
struct Family {
  std::string dimension;
  std::function<Task(int)> make;                   // member for search variable v (D or W_A)
  std::function<std::uint64_t(int)> dimension_of;  // the reported dimension of member v
  struct Sample {
    std::string dimension, value;
    std::function<Task(int)> make;
  };
  std::vector<Sample> samples;
};

Task conv_task(int wi, int hi, int d) {
  Task t;
  t.op = Op::Conv;
  t.conv = {wi, hi, d, 3, 3, 4, 1};
  t.a_src_shift = 1;
  t.seed = 1;
  t.id = fmt::format("neighbor_conv_{}x{}x{}_f3x3x{}x4", wi, hi, d, d);
  return t;
}

Task mm_task(int w_a, int h_a, int w_b) {
  Task t;
  t.op = Op::Mm;
  t.mm = {w_a, h_a, w_b, w_a};
  t.a_src_shift = 1;
  t.seed = 1;
  t.id = fmt::format("mm_wide_a_a{}x{}_b{}x{}", w_a, h_a, w_b, w_a);
  return t;
}

Family family_of(const std::string& flaw) {
  Family f;
  if (flaw == "neighbor_conv") {
    f.dimension = "weight_bytes";
    f.make = [](int d) { return conv_task(40, 5, d); };
    f.dimension_of = [](int d) { return std::uint64_t(3) * 3 * std::uint64_t(d) * 4; };
    for (auto [wi, hi] : {std::pair{18, 3}, std::pair{100, 4}, std::pair{226, 8}})
      f.samples.push_back({"ifmap Wi x Hi", fmt::format("{}x{}", wi, hi), [w = wi, h = hi](int d) { return conv_task(w, h, d); }});
    return f;
  }
  if (flaw == "mm_wide_a") {
    f.dimension = "W_A";
    f.make = [](int w_a) { return mm_task(w_a, 4, 32); };
    f.dimension_of = [](int w_a) { return std::uint64_t(w_a); };
    for (auto [h_a, w_b] : {std::pair{1, 32}, std::pair{13, 5}, std::pair{8, 200}})
      f.samples.push_back({"H_A, W_B", fmt::format("{}, {}", h_a, w_b), [h = h_a, w = w_b](int w_a) { return mm_task(w_a, h, w); }});
    return f;
  }
  throw std::invalid_argument("flaw-limit: no search for flaw '" + flaw +
                              "': expected neighbor_conv or mm_wide_a (sram2clk changes timing, which the model "
                              "predicts, so it has no limit to find)");
}

// Thrown between probes when SIGINT / SIGTERM asked the search to stop.
struct Stopped {
  int signal;        // 0: stopped for `why`
  std::string why;
};

class Prober {
 public:
  Prober(const HwConfig& cfg, const CheckPolicy& policy, ProbeLog* log, int* resumed)
      : cfg_(cfg), hash_(config_hash(cfg)), log_(log), resumed_(resumed) {
    opt_.policy = policy;
  }
  std::string status(const Task& t) {
    if (log_) {
      if (const auto it = log_->done.find({hash_, task_vector_row(t)}); it != log_->done.end()) {
        ++*resumed_;
        return it->second;
      }
    }
    if (const int sig = StopOnSignal::signal()) throw Stopped{sig, ""};
    if (log_ && log_->stop)
      if (std::string why = log_->stop(); !why.empty()) throw Stopped{0, std::move(why)};
    if (!rtl_) rtl_ = make_rtl_backend(cfg_), model_ = make_model_backend(cfg_);
    RunResult r = run_tasks({t}, cfg_, rtl_.get(), model_.get(), opt_);
    const std::string s = to_string(r.tasks.front().status);
    if (log_ && log_->finished) log_->finished(hash_, t, s);
    return s;
  }

 private:
  HwConfig cfg_;
  RunnerOptions opt_;
  std::string hash_;
  ProbeLog* log_;
  int* resumed_;
  std::unique_ptr<Backend> rtl_, model_;
};

bool shows(const std::string& status) { return status != "pass"; }

}  // namespace

namespace {

void find_limit(const std::string& flaw, const HwConfig& base, std::ostream* progress, ProbeLog* log,
                const CheckPolicy& policy, FlawLimitResult& r) {
  const Family fam = family_of(flaw);
  r.flaw = flaw;
  r.dimension = fam.dimension;
  HwConfig with = base;
  enable_flaw(with, flaw);
  Prober on(with, policy, log, &r.resumed);

  auto fits = [&](const Task& t) { return validate_task(t, with).empty(); };
  auto probe = [&](int v) {
    FlawProbe p;
    p.task = fam.make(v);
    p.dimension = fam.dimension_of(v);
    p.what = fmt::format("{} {} ({})", fam.dimension, p.dimension, shape_string(p.task));
    p.status = on.status(p.task);
    ++r.simulations;
    if (progress) *progress << fmt::format("probe {}: {} -> {}\n", r.simulations, p.what, p.status) << std::flush;
    r.search.push_back(p);
    return shows(p.status);
  };

  // the largest member that fits the SRAM budget: the search's upper end
  int hi = 1;
  while (fits(fam.make(hi * 2))) hi *= 2;
  for (int step = hi / 2; step > 0; step /= 2)
    if (fits(fam.make(hi + step))) hi += step;
  int lo = 1;
  if (probe(lo)) {
    r.why_not = fmt::format("the smallest task of the family already shows it ({} {})", fam.dimension, fam.dimension_of(lo));
    return;
  }
  if (!probe(hi)) {
    r.why_not = fmt::format("no task of the family up to the SRAM budget shows it ({} {} passes)", fam.dimension,
                            fam.dimension_of(hi));
    return;
  }
  // invariant: lo passes, hi shows the flaw (bisection assumes one change along the dimension)
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    if (probe(mid)) hi = mid;
    else lo = mid;
  }
  r.found = true;
  r.limit = fam.dimension_of(hi);
  r.last_pass = fam.dimension_of(lo);
  r.reproducer = fam.make(hi);
  for (const FlawProbe& p : r.search)
    if (p.dimension == r.limit) r.reproducer_status = p.status;

  // the reproducer with the flaw off must pass, or the symptom is not the flaw's
  {
    Prober off(base, policy, log, &r.resumed);
    r.control_status = off.status(r.reproducer);
    ++r.independence_simulations;
  }
  r.independence_holds = true;
  for (const Family::Sample& s : fam.samples) {
    IndependenceCheck c;
    c.dimension = s.dimension;
    c.value = s.value;
    const Task below = s.make(lo), at = s.make(hi);
    if (!fits(below) || !fits(at)) continue;
    c.below = on.status(below);
    c.at = on.status(at);
    r.independence_simulations += 2;
    c.holds = !shows(c.below) && shows(c.at);
    r.independence_holds = r.independence_holds && c.holds;
    if (progress)
      *progress << fmt::format("independence: {} = {}: below the limit {}, at the limit {}\n", c.dimension, c.value,
                               c.below, c.at)
                << std::flush;
    r.independence.push_back(c);
  }
}

}  // namespace

FlawLimitResult find_flaw_limit(const std::string& flaw, const HwConfig& base, std::ostream* progress, ProbeLog* log,
                                const CheckPolicy& policy) {
  FlawLimitResult r;
  try {
    find_limit(flaw, base, progress, log, policy, r);
  } catch (const Stopped& s) {
    r.stopped_by_signal = s.signal;
    r.found = false;
    r.why_not = s.signal ? fmt::format("stopped by signal {} after {} probes", s.signal, r.search.size())
                         : fmt::format("stopped after {} probes: {}", r.search.size(), s.why);
  }
  return r;
}


std::string format_flaw_limit(const FlawLimitResult& r, const HwConfig& cfg, const CheckPolicy& policy) {
  std::string s = fmt::format("flaw-limit {} over {} (status of each probe from the comparators only)\n", r.flaw, r.dimension);
  for (const FlawProbe& p : r.search) s += fmt::format("  {:<60} {}\n", p.what, p.status);
  if (!r.found) return s + fmt::format("limit not found: {}\n", r.why_not);
  s += fmt::format("limit: {} = {} shows the flaw ({}); {} = {} passes; {} simulations\n", r.dimension, r.limit,
                   r.reproducer_status, r.dimension, r.last_pass, r.simulations);
  s += fmt::format("control: the reproducer with {} off: {}\n", r.flaw, r.control_status);
  s += "reproducer (contract-1 task vector):\n  " + task_vector_header() + "\n  " + task_vector_row(r.reproducer) + "\n";
  s += "independence (just below the limit / at the limit):\n";
  for (const IndependenceCheck& c : r.independence)
    s += fmt::format("  {} = {:<10} {:<10} {:<10} {}\n", c.dimension, c.value, c.below, c.at, c.holds ? "holds" : "DOES NOT HOLD");
  s += fmt::format("independence {} ({} more simulations)\n", r.independence_holds ? "holds" : "does not hold",
                   r.independence_simulations);
  s += "hardware: " + hw_config_line(cfg) + "\nconfig hash: " + config_hash(cfg) + "\n";
  s += "policy: " + policy_line(policy) + "\n";
  return s;
}

std::string flaw_limit_json(const FlawLimitResult& r, const HwConfig& cfg, const CheckPolicy& policy) {
  nlohmann::json j;
  j["flaw"] = r.flaw;
  j["dimension"] = r.dimension;
  j["found"] = r.found;
  j["limit"] = r.found ? nlohmann::json(r.limit) : nlohmann::json(nullptr);
  j["last_pass"] = r.found ? nlohmann::json(r.last_pass) : nlohmann::json(nullptr);
  j["simulations"] = r.simulations;
  j["reproducer"] = r.found ? nlohmann::json(task_vector_row(r.reproducer)) : nlohmann::json(nullptr);
  j["reproducer_header"] = task_vector_header();
  j["reproducer_status"] = r.reproducer_status;
  j["control_status"] = r.control_status;
  if (!r.found) j["why_not"] = r.why_not;
  nlohmann::json probes = nlohmann::json::array();
  for (const FlawProbe& p : r.search) probes.push_back({{"dimension", p.dimension}, {"task", shape_string(p.task)}, {"status", p.status}});
  j["probes"] = probes;
  nlohmann::json ind = nlohmann::json::array();
  for (const IndependenceCheck& c : r.independence)
    ind.push_back({{"dimension", c.dimension}, {"value", c.value}, {"below", c.below}, {"at", c.at}, {"holds", c.holds}});
  j["independence"] = ind;
  j["independence_holds"] = r.independence_holds;
  j["independence_simulations"] = r.independence_simulations;
  if (r.stopped_by_signal) j["stopped_by_signal"] = r.stopped_by_signal;
  j["config"] = to_json(cfg);
  j["config_hash"] = config_hash(cfg);
  j["policy"] = to_json(policy);
  return j.dump(2) + "\n";
}

namespace {

// The search's probes as result records (harness/outputs/result.h): each probe of the search with the flaw on, then
// the reproducer with it off. A probe that is not `pass` shows the flaw; its rerun line feeds the probe's
// contract-1 row to `s2cosim regress` on standard input.
ResultSet flaw_limit_results(const FlawLimitRequest& req, const FlawLimitResult& r, const HwConfig& base, const HwConfig& with) {
  ResultSet rs;
  rs.command = "flaw-limit";
  rs.title = req.flaw + (r.found ? fmt::format(": {} {} shows it first", r.dimension, r.limit) : ": no limit found");
  rs.config = to_json(with);
  rs.config_hash = config_hash(with);
  rs.policy = req.policy;
  rs.hardware = hw_config_line(with);
  rs.stopped_by_signal = r.stopped_by_signal;
  rs.notes.push_back("a probe whose status is not pass shows the flaw; the search bisects " + r.dimension +
                     " between a passing and a failing probe (thesis 5.1.2)");
  auto replay = [&](const Task& t, const HwConfig& cfg, bool flaw_on) {
    std::string s = "printf '%s\\n' " + shell_quote(task_vector_header()) + " " + shell_quote(task_vector_row(t)) + " | " +
                    shell_quote(program_name()) + " regress /dev/stdin";
    if (!req.config_file.empty()) s += " --config " + shell_quote(req.config_file);
    if (!req.mac_shape.empty()) s += " --mac " + shell_quote(req.mac_shape);
    for (const std::string& f : req.other_flaws) s += " --flaw " + shell_quote(f);
    if (flaw_on) s += " --flaw " + shell_quote(req.flaw);
    if (req.policy.deviation_bound != CheckPolicy{}.deviation_bound)
      s += fmt::format(" --deviation-bound {}", req.policy.deviation_bound);
    return s + " --expect-hash " + config_hash(cfg);
  };
  auto add = [&](const std::string& name, const Task& t, const std::string& status, const HwConfig& cfg, bool flaw_on) {
    CheckResult c;
    c.index = rs.checks.size();
    c.name = name;
    c.group = req.flaw;
    c.status = parse_status(status);
    c.labels = {{"flaw", flaw_on ? "on" : "off"}, {"task", task_vector_row(t)}};
    if (c.status != Status::Pass) c.message = flaw_on ? "shows the flaw (" + status + ")" : "fails with the flaw off (" + status + ")";
    c.replay = replay(t, cfg, flaw_on);
    rs.checks.push_back(std::move(c));
  };
  for (const FlawProbe& p : r.search) add(p.what, p.task, p.status, with, true);
  if (r.found && !r.control_status.empty()) add("control: the reproducer with the flaw off", r.reproducer, r.control_status, base, false);
  rs.total = rs.checks.size();
  return rs;
}

}  // namespace

int flaw_limit(const FlawLimitRequest& req, std::ostream& out, std::ostream& err) {
  HwConfig base;
  try {
    validate(req.policy);
    family_of(req.flaw);  // rejects flaws without a search
    base = build_hw_config(req.config_file, req.mac_shape, req.other_flaws);
    HwConfig with = base;
    enable_flaw(with, req.flaw);
    if (config_hash(with) == config_hash(base))  // already on (--flaw or --config): nothing to switch
      throw std::invalid_argument(req.flaw + " is on in the base configuration: the search switches it on and off itself");
  } catch (const std::exception& e) {
    err << "s2cosim: " << e.what() << "\n";
    return 2;
  }
  const std::string journal_file = journal_path(req.json_out, req.journal);
  if (!check_paths({{"--json", req.json_out}, {"--html", req.html_out}, {"--junit", req.junit_out}, {"--journal", journal_file}},
                   {{"--config", req.config_file}, {"--resume", req.resume}}, err, journal_file, req.resume))
    return kExitBadInput;
  HwConfig with = base;
  enable_flaw(with, req.flaw);
  // every probe goes to the journal as it finishes, after a first record naming the search; --resume takes
  // the probes a journal of the same search holds (a probe is known by its configuration and task)
  const nlohmann::ordered_json header{{"journal", "flaw-limit"}, {"flaw", req.flaw}, {"config_hash", config_hash(with)}};
  ProbeLog log;
  Journal journal;
  ResumeTally tally;
  // a probe is its configuration, task and policy: the fingerprint adds the version that ran it
  auto fingerprint = [&](const std::string& hash, const std::string& row) {
    return journal_fingerprint("flaw-limit " + row + " " + policy_hash(req.policy), hash);
  };
  try {
    {
      const ResumedJournal records = open_run_journal(journal, journal_file, req.resume, header, tally);
      for (const JournalRecord& jr : records.records) {
        const auto& p = jr.record;
        if (!p.contains("config_hash") || !p.contains("task") || !p.contains("status") || !p["task"].is_string() ||
            !p["status"].is_string() || !p["config_hash"].is_string())
          throw std::runtime_error(fmt::format("{}:{}: a probe record needs config_hash, task and status (strings)",
                                               req.resume, jr.line));
        const std::string hash = p["config_hash"].get<std::string>(), row = p["task"].get<std::string>();
        if (jr.fingerprint != fingerprint(hash, row)) {
          ++tally.changed;
          continue;
        }
        log.done[{hash, row}] = p["status"].get<std::string>();
      }
    }
    journal.start(header);
  } catch (const std::exception& e) {
    err << "s2cosim: " << e.what() << "\n";
    return 2;
  }
  log.finished = [&](const std::string& hash, const Task& t, const std::string& status) {
    const std::string row = task_vector_row(t);
    journal.append(nlohmann::ordered_json{{"config_hash", hash}, {"task", row}, {"status", status}}, fingerprint(hash, row));
  };
  log.stop = [&] { return journal.failed() ? journal.error() : std::string(); };
  const StopOnSignal stop_on_signal;
  const FlawLimitResult r = find_flaw_limit(req.flaw, base, &err, &log, req.policy);
  tally.taken = static_cast<std::size_t>(r.resumed);
  if (tally.on()) out << tally.line("probes") << "\n";
  if (r.stopped_by_signal)
    out << fmt::format("stopped by signal {}: the probes that finished are below{}\n", r.stopped_by_signal,
                       journal.on() ? " and in " + journal.path() + " (--resume it)" : "");
  out << format_flaw_limit(r, with, req.policy);
  // every output is tried, whatever became of the others; the probes are in the journal already
  const bool json_written = write_outputs({{req.json_out, [&] { return flaw_limit_json(r, with, req.policy); }}}, err);
  const bool rest_written = write_result_outputs(flaw_limit_results(req, r, base, with), {req.html_out, req.junit_out, ""}, err);
  const bool written = json_written && rest_written;
  if (r.stopped_by_signal) return StopOnSignal::exit_code(r.stopped_by_signal);
  if (journal.failed()) {
    err << "s2cosim: " << journal.error() << ": the search stopped before its next probe\n";
    return kExitOutput;
  }
  if (!written) return kExitOutput;
  return r.found ? kExitPass : kExitFail;
}

}  // namespace s2
