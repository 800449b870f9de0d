// A run spread over processes of the tool itself (run-net --jobs): the same command, each worker a shard of it
// (--shard I/N, the runs k with k % N == I - 1) writing its JSON report and its journal into a scratch
// directory. The caller takes the workers' finished records from their journals, as --resume takes an
// interrupted run's, and reports the whole run as one process would have: what a worker did not finish (it
// failed, or a signal stopped it) the caller runs itself.
#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace s2 {

struct WorkerRun {
  std::string journal;  // DIR/I.json.jsonl
  std::string log;      // DIR/I.log: the worker's standard output and error
  int exit_code = -1;   // as a shell gives it (128 + the signal that killed it)
};

// The arguments `args` (the command line after the program's name) without the options `drop` (each with its
// value, as "--opt VALUE" or "--opt=VALUE"): what every worker gets before its own --shard, --json and journal.
std::vector<std::string> without_options(const std::vector<std::string>& args, const std::vector<std::string>& drop);

// Starts `jobs` workers of `program` at once, worker I (1-based) with `args` followed by --shard I/jobs and
// --json DIR/I.json (its journal DIR/I.json.jsonl), its standard output and error into DIR/I.log, and waits for
// all of them, calling `poll` about twice a second while any runs. Throws std::runtime_error if a worker cannot
// be started (those already started are waited for first).
std::vector<WorkerRun> run_workers(const std::string& program, const std::vector<std::string>& args, int jobs,
                                   const std::string& dir, const std::function<void()>& poll);

// run_workers with a progress line on `err` (Progress: on a terminal only): `total` records in all, `held` of
// them had before the workers start, each worker's finished records counted from its journal (a line each after
// its header); the scratch directory `dir` is removed if a worker cannot be started (and the error rethrown).
std::vector<WorkerRun> run_workers_with_progress(const std::string& program, const std::vector<std::string>& args, int jobs,
                                                 const std::string& dir, std::size_t total, std::size_t held, std::ostream& err);

// The last `lines` lines of a worker's log, for a message about it.
std::string last_lines(const std::string& path, int lines);

// A scratch directory for the workers (under $TMPDIR or /tmp), and its removal with everything in it.
std::string make_worker_dir();
void remove_worker_dir(const std::string& dir);

}  // namespace s2
