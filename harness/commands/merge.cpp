#include "harness/commands/merge.h"

#include <algorithm>
#include <filesystem>
#include <cmath>
#include <map>
#include <numeric>
#include <ostream>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "harness/commands/bench.h"
#include "harness/session/journal.h"
#include "harness/commands/net_runner.h"
#include "harness/outputs/output_files.h"
#include "harness/commands/regress_report.h"
#include "harness/commands/snn_records.h"
#include "harness/outputs/result.h"
#include "model/text_file.h"

namespace s2 {

namespace {

constexpr std::uintmax_t kMaxReportBytes = 1ull << 30;

struct ShardReport {
  std::string path;
  // the file parsed once, keys in the file's order: a regress task record, and a check's labels (the CSV's and
  // HTML's columns), come out of the merge in the order the run wrote them
  nlohmann::ordered_json top;
  ResultSet results;
  nlohmann::ordered_json records;  // tasks[] (regress, bench), operations[] (run-net) or layouts[] (snn), one per check, in order
};

ShardReport parse_shard(const std::string& text, const std::string& path) {
  ShardReport s;
  s.path = path;
  try {
    s.top = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not JSON: " + e.what());
  }
  if (!s.top.is_object() || !s.top.contains("results"))
    throw std::runtime_error(path + ": field 'results': missing (a --json report of regress, run-net, bench or snn, written by this version)");
  try {
    s.results = results_from_json(s.top.at("results"));
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": field 'results': " + e.what());
  }
  if (s.top.contains("config")) s.results.config = nlohmann::json::parse(s.top.at("config").dump());
  const char* records = s.results.command == "run-net" ? "operations"
                        : s.results.command == "regress" || s.results.command == "bench" ? "tasks"
                        : s.results.command == "snn"                                       ? "layouts"
                                                                                           : nullptr;
  if (!records)
    throw std::runtime_error(path + ": a report of '" + s.results.command + "': merge takes regress, run-net, bench and snn reports");
  if (!s.top.contains(records) || !s.top.at(records).is_array())
    throw std::runtime_error(path + ": field '" + records + "': expected a list");
  s.records = s.top.at(records);
  // what the merged report is made with must have its type
  auto need = [&](const char* field, bool ok, const char* what) {
    if (!ok) throw std::runtime_error(fmt::format("{}: field '{}': expected {}", path, field, what));
  };
  auto strings = [&](const char* f) {
    if (!s.top.contains(f) || !s.top.at(f).is_array()) return false;
    for (const auto& v : s.top.at(f))
      if (!v.is_string()) return false;
    return true;
  };
  if (s.results.command == "regress")
    for (const char* f : {"vectors", "backends"}) need(f, s.top.contains(f) && s.top.at(f).is_string(), "a string");
  if (s.results.command == "bench")
    for (const char* f : {"suite_files", "mac"}) need(f, strings(f), "a list of strings");
  for (const auto& r : s.records) need(records, r.is_object(), "a list of objects");
  // a block run is read as run-net --resume reads it: merge sums its categories again
  if (s.results.command == "run-net")
    for (std::size_t i = 0; i < s.records.size(); ++i) {
      try {
        check_block_record(nlohmann::json::parse(s.records[i].dump()));
      } catch (const std::exception& e) {
        throw std::runtime_error(fmt::format("{}: operations[{}]: {}", path, i, e.what()));
      }
    }
  if (s.records.size() != s.results.checks.size())
    throw std::runtime_error(fmt::format("{}: {} {} records for {} results: not a report this tool wrote", path, s.records.size(),
                                         records, s.results.checks.size()));
  // a layout's entry and its check are the same layout
  if (s.results.command == "snn")
    for (std::size_t i = 0; i < s.records.size(); ++i)
      need(records, s.records[i].value("layout", nlohmann::ordered_json()) == s.results.checks[i].name,
           "entries whose layout is their check's name");
  return s;
}

ShardReport read_shard(const std::string& path) {
  // a report a run wrote: a regular file (a device or FIFO is refused before a byte is read)
  return parse_shard(read_file_bounded(path, kMaxReportBytes, "JSON report", true), path);
}

// The fields that make two shards parts of one run.
std::vector<std::string> identity_fields(const std::string& command) {
  if (command == "regress") return {"vectors", "backends", "config_hash"};
  if (command == "bench") return {"suite_files", "mac"};
  if (command == "snn") return snn_identity_fields();
  return {"network", "target", "backend", "seed", "config_hash", "split_file", "mapping_file", "whole", "timing_only", "layers",
          "core_clocks", "compared_arm_timing"};
}

// The checks shard I of N of a run of `total` checks holds when it finished.
std::size_t expected_checks(const Shard& s, std::size_t total) {
  const std::size_t first = static_cast<std::size_t>(s.index - 1), n = static_cast<std::size_t>(s.count);
  return total > first ? (total - first + n - 1) / n : 0;
}

// Why a shard's report is not its whole shard ("" if it is): a signal stopped it, or checks are missing (a
// run-net block run a block cannot run is no check, so only the signal tells there).
std::string incomplete(const ShardReport& s) {
  if (s.results.stopped_by_signal)
    return fmt::format("shard {}/{} was stopped by signal {} before it finished", s.results.shard.index, s.results.shard.count,
                       s.results.stopped_by_signal);
  if (s.results.command != "run-net") {
    const std::size_t want = expected_checks(s.results.shard, s.results.total);
    if (s.results.checks.size() < want)
      return fmt::format("shard {}/{} holds {} of its {} checks", s.results.shard.index, s.results.shard.count,
                         s.results.checks.size(), want);
  }
  return "";
}

}  // namespace

namespace {

// --allow-partial: the checks a stopped or short shard lacks, as errors "not run" (their names unknown: the
// shard never reached them), at the positions the shard would have held.
void add_missing_checks(const ShardReport& s, std::vector<std::pair<CheckResult, nlohmann::ordered_json>>& into) {
  const std::string why = incomplete(s);
  if (why.empty()) return;
  std::set<std::size_t> have;
  for (const CheckResult& c : s.results.checks) have.insert(c.index);
  auto add = [&](std::size_t index, const std::string& name) {
    CheckResult c;
    c.index = index;
    c.name = name;
    c.group = "not run";
    c.status = Status::Error;
    c.message = "not run: " + why;
    nlohmann::ordered_json record{{"id", name}, {"status", "error"}, {"error", c.message}};
    into.emplace_back(std::move(c), std::move(record));
  };
  if (s.results.command == "run-net") {  // how many block runs are missing is not known: one check says so
    add(s.results.total + static_cast<std::size_t>(s.results.shard.index), fmt::format("shard {}/{}: the block runs after its last",
                                                                                         s.results.shard.index, s.results.shard.count));
    return;
  }
  for (std::size_t k = static_cast<std::size_t>(s.results.shard.index - 1); k < s.results.total;
       k += static_cast<std::size_t>(s.results.shard.count))
    if (!have.count(k)) add(k, fmt::format("check {} (shard {}/{})", k, s.results.shard.index, s.results.shard.count));
}

}  // namespace

void check_shard_report(const std::string& path) { read_shard(path); }
void check_shard_report_text(const std::string& text, const std::string& path) { parse_shard(text, path); }

namespace {

// The shards must be every shard of one run, each once, each whole (or --allow-partial); throws saying which not.
void check_one_run(const std::vector<ShardReport>& shards, bool allow_partial) {
  const ShardReport& first = shards.front();
  std::set<int> seen;
  for (const ShardReport& s : shards) {
    for (const std::string& f : identity_fields(first.results.command)) {
      const nlohmann::ordered_json a = first.top.value(f, nlohmann::ordered_json()), b = s.top.value(f, nlohmann::ordered_json());
      if (a != b)
        throw std::runtime_error(fmt::format("{}: field '{}' is {}, {} has {}: shards of different runs", s.path, f, b.dump(),
                                             first.path, a.dump()));
    }
    if (s.results.config_hash != first.results.config_hash)
      throw std::runtime_error(fmt::format("{}: field 'config_hash' is \"{}\", {} has \"{}\": shards of different runs", s.path,
                                           s.results.config_hash, first.path, first.results.config_hash));
    if (to_json(s.results.policy) != to_json(first.results.policy))
      throw std::runtime_error(fmt::format("{}: judged by another policy than {} ({}; {}): shards of different runs", s.path,
                                           first.path, policy_line(s.results.policy), policy_line(first.results.policy)));
    const auto table_of = [](const ShardReport& r) {
      return r.results.energy_table ? "energy table '" + r.results.energy_table->name + "' (hash " +
                                          energy_table_hash(*r.results.energy_table) + ")"
                                    : std::string("no energy table");
    };
    if (table_of(s) != table_of(first))
      throw std::runtime_error(fmt::format("{}: charged by {}, {} by {}: shards of different runs", s.path, table_of(s),
                                           first.path, table_of(first)));
    if (s.results.command != first.results.command || s.results.title != first.results.title ||
        s.results.total != first.results.total)
      throw std::runtime_error(fmt::format("{}: a shard of another run than {} (command, title or total differ)", s.path, first.path));
    if (s.results.shard.count != first.results.shard.count)
      throw std::runtime_error(fmt::format("{}: shard {}/{}, {} is {}/{}", s.path, s.results.shard.index, s.results.shard.count,
                                           first.path, first.results.shard.index, first.results.shard.count));
    if (!seen.insert(s.results.shard.index).second)
      throw std::runtime_error(fmt::format("{}: shard {}/{} is given twice", s.path, s.results.shard.index, s.results.shard.count));
  }
  std::string missing;
  for (int i = 1; i <= first.results.shard.count; ++i)
    if (!seen.count(i)) missing += fmt::format("{}{}/{}", missing.empty() ? "" : ", ", i, first.results.shard.count);
  if (!missing.empty()) throw std::runtime_error("shards missing: " + missing + " (the merged report would not be the whole run)");
  for (const ShardReport& s : shards) {
    const std::string why = incomplete(s);
    if (!why.empty() && !allow_partial)
      throw std::runtime_error(s.path + ": " + why + "; resume that shard (--resume its journal) and merge again, or "
                               "merge with --allow-partial to report its missing checks as not run");
  }
}

// The checks of every shard in the whole run's order (the missing ones of a partial shard as not run), each
// with its record (tasks[] or operations[]). False (said on `err`) if a check is in two shards.
bool merge_checks(const std::vector<ShardReport>& shards, ResultSet& merged, std::vector<nlohmann::ordered_json>& records,
                  std::ostream& err) {
  merged.checks.clear();
  merged.shard = Shard{};
  merged.stopped_by_signal = 0;
  std::vector<std::pair<std::size_t, nlohmann::ordered_json>> indexed;
  std::vector<CheckResult> checks;
  for (const ShardReport& s : shards) {
    merged.merged_shards.push_back(s.results.shard);
    if (s.results.stopped_by_signal) merged.stopped_by_signal = s.results.stopped_by_signal;
    for (std::size_t i = 0; i < s.results.checks.size(); ++i) {
      checks.push_back(s.results.checks[i]);
      indexed.emplace_back(s.results.checks[i].index, s.records[i]);
    }
    if (merged.command == "bench") continue;  // the bench runs what its shards lack
    std::vector<std::pair<CheckResult, nlohmann::ordered_json>> missing;
    add_missing_checks(s, missing);
    for (auto& [c, record] : missing) {
      if (merged.command == "run-net") record = nlohmann::ordered_json{{"name", c.name}, {"strategy", "nofuse_noreuse"}, {"status", "error"}, {"error", c.message}};
      if (merged.command == "snn") record = nlohmann::ordered_json{{"layout", c.name}, {"status", "error"}, {"message", c.message}};
      indexed.emplace_back(c.index, std::move(record));
      checks.push_back(std::move(c));
    }
  }
  std::vector<std::size_t> order(checks.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return checks[a].index < checks[b].index; });
  for (std::size_t i = 1; i < order.size(); ++i)
    if (checks[order[i]].index == checks[order[i - 1]].index) {
      err << fmt::format("s2cosim merge: check {} ('{}') is in two shards\n", checks[order[i]].index, checks[order[i]].name);
      return false;
    }
  for (std::size_t i : order) {
    merged.checks.push_back(checks[i]);
    records.push_back(std::move(indexed[i].second));
  }
  return true;
}

// Notes every shard has (assumptions) first, as the run prints them; the others (one shard's substitutions
// and blocks not run) sorted, as the unsharded run sorts them.
std::vector<std::string> merge_notes(const std::vector<ShardReport>& shards) {
  const ShardReport& first = shards.front();
  if (shards.size() == 1) return first.results.notes;
  std::vector<std::string> common, rest;
  for (const std::string& n : first.results.notes) {
    const bool everywhere = std::all_of(shards.begin(), shards.end(), [&](const ShardReport& s) {
      return std::find(s.results.notes.begin(), s.results.notes.end(), n) != s.results.notes.end();
    });
    if (everywhere && std::find(common.begin(), common.end(), n) == common.end()) common.push_back(n);
  }
  for (const ShardReport& s : shards)
    for (const std::string& n : s.results.notes)
      if (std::find(common.begin(), common.end(), n) == common.end() && std::find(rest.begin(), rest.end(), n) == rest.end())
        rest.push_back(n);
  std::sort(rest.begin(), rest.end());
  common.insert(common.end(), rest.begin(), rest.end());
  return common;
}

// The bench's report is made from its tasks' records, as --resume makes it: every task taken from the shards,
// none run again (the suites must be where the shards read them), judged by the shards' policy.
int merge_bench(const MergeRequest& req, const ShardReport& first, std::vector<nlohmann::ordered_json> records,
                std::size_t shards, std::ostream& out, std::ostream& err) {
  BenchRequest b;
  b.suites = first.top.at("suite_files").get<std::vector<std::string>>();
  b.mac_shapes = first.top.at("mac").get<std::vector<std::string>>();
  b.json_out = req.json_out;
  b.html_out = req.html_out;
  b.junit_out = req.junit_out;
  b.policy = first.results.policy;
  b.merged = std::move(records);
  out << fmt::format("merged {} shard reports of s2cosim bench: {}\n", shards, first.results.title);
  return bench(b, out, err);
}

// run-net's report from every shard's block runs in the whole run's order, with Table 5.10's sums made again
// (a shard may hold no block run of a strategy: the categories are made again for every strategy run, in the
// run's order, with the thesis's figure any shard gives).
std::string merged_run_net_report(const std::vector<ShardReport>& shards, const std::vector<nlohmann::ordered_json>& records,
                                  ResultSet& merged) {
  const ShardReport& first = shards.front();
  nlohmann::json operations = nlohmann::json::array();
  for (const nlohmann::ordered_json& r : records) operations.push_back(nlohmann::json::parse(r.dump()));
  std::map<std::pair<std::string, std::string>, std::optional<std::uint64_t>> thesis;
  for (const ShardReport& s : shards)
    for (const CategoryClocks& c : s.results.categories)
      if (c.thesis) thesis[{c.strategy, c.category}] = c.thesis;
  merged.categories.clear();
  if (first.top.value("whole", false))
    for (const auto& [st, cats] : category_sums(operations))
      for (const std::string& cat : network_categories()) {
        const auto it = cats.find(cat);
        merged.categories.push_back({st, cat, it == cats.end() ? 0 : static_cast<std::uint64_t>(std::llround(it->second)),
                                     thesis.count({st, cat}) ? thesis[{st, cat}] : std::nullopt});
      }
  nlohmann::json head;
  for (const char* f : {"network", "target", "backend", "seed", "config", "config_hash", "split_file", "mapping_file", "whole",
                        "timing_only", "layers", "core_clocks", "compared_arm_timing"})
    if (first.top.contains(f)) head[f] = nlohmann::json::parse(first.top.at(f).dump());
  if (merged.stopped_by_signal) head["stopped_by_signal"] = merged.stopped_by_signal;
  return run_net_report_json(head, operations, merged).dump(2);
}

// snn's report from every shard's layouts[] entries in the whole run's order, the percentages relative to
// original_mac and serial_arm made again across the shards.
std::string merged_snn_report(const ShardReport& first, std::vector<nlohmann::ordered_json>& records, ResultSet& merged) {
  nlohmann::ordered_json head;
  for (const char* f : {"command", "layer", "target", "system", "backend", "budget_bytes"})
    if (first.top.contains(f)) head[f] = first.top.at(f);
  if (merged.stopped_by_signal) head["stopped_by_signal"] = merged.stopped_by_signal;
  nlohmann::ordered_json layouts = nlohmann::ordered_json::array();
  for (nlohmann::ordered_json& r : records) layouts.push_back(std::move(r));
  const nlohmann::ordered_json report = snn_report_json(head, std::move(layouts), merged);
  merged.figures = snn_report_figures(report.at("layouts"));
  return report.dump(2);
}

}  // namespace

int merge(const MergeRequest& req, std::ostream& out, std::ostream& err) {
  std::vector<ShardReport> shards;
  try {
    if (req.inputs.empty()) throw std::runtime_error("no shard reports given");
    for (const std::string& p : req.inputs) shards.push_back(read_shard(p));
    check_one_run(shards, req.allow_partial);
  } catch (const std::exception& e) {
    err << "s2cosim merge: " << e.what() << "\n";
    return 2;
  }
  std::vector<NamedPath> inputs;
  for (const std::string& p : req.inputs) inputs.push_back({"shard", p});
  if (!check_paths({{"--json", req.json_out}, {"--html", req.html_out}, {"--junit", req.junit_out}, {"--csv", req.csv_out}},
                   inputs, err))
    return kExitBadInput;

  const ShardReport& first = shards.front();
  ResultSet merged = first.results;
  std::vector<nlohmann::ordered_json> records;
  if (!merge_checks(shards, merged, records, err)) return 2;
  merged.notes = merge_notes(shards);
  if (merged.command == "bench") return merge_bench(req, first, std::move(records), shards.size(), out, err);
  std::string report;
  if (merged.command == "regress") {
    nlohmann::ordered_json tasks = nlohmann::ordered_json::array();
    for (nlohmann::ordered_json& r : records) tasks.push_back(std::move(r));
    report = regress_report_json(tasks, merged, first.top.value("vectors", ""), first.top.value("backends", "")).dump(2);
  } else if (merged.command == "snn") {
    report = merged_snn_report(first, records, merged);
  } else {
    report = merged_run_net_report(shards, records, merged);
  }
  out << fmt::format("merged {} shard reports of s2cosim {}: {}\n", shards.size(), merged.command, merged.title);
  out << format_status_counts(merged) << "\n";
  if (const std::string f = format_failures(merged); !f.empty()) out << "\nto rerun a failure:\n" << f;
  const bool json_written = write_outputs({{req.json_out, [&] { return report + "\n"; }}}, err);
  const bool rest_written = write_result_outputs(merged, {req.html_out, req.junit_out, req.csv_out}, err);
  const bool written = json_written && rest_written;
  if (!written) return kExitOutput;
  return summarize(merged).all_passed() ? kExitPass : kExitFail;
}

}  // namespace s2
