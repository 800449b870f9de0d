#include "harness/session/workers.h"

#include "harness/session/progress.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace s2 {

std::vector<std::string> without_options(const std::vector<std::string>& args, const std::vector<std::string>& drop) {
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < args.size(); ++i) {
    bool dropped = false;
    for (const std::string& name : drop) {
      if (args[i] == name) {  // "--opt VALUE"
        ++i;
        dropped = true;
        break;
      }
      if (args[i].rfind(name + "=", 0) == 0) {  // "--opt=VALUE"
        dropped = true;
        break;
      }
    }
    if (!dropped) kept.push_back(args[i]);
  }
  return kept;
}

namespace {

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

pid_t start_worker(const std::string& program, const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start a worker (" + program + "): " + std::strerror(rc));
  return pid;
}

}  // namespace

std::vector<WorkerRun> run_workers(const std::string& program, const std::vector<std::string>& args, int jobs,
                                   const std::string& dir, const std::function<void()>& poll) {
  std::vector<WorkerRun> runs(static_cast<std::size_t>(jobs));
  std::vector<pid_t> pids;
  std::string start_error;
  for (int i = 1; i <= jobs && start_error.empty(); ++i) {
    WorkerRun& w = runs[static_cast<std::size_t>(i - 1)];
    const std::string json = dir + "/" + std::to_string(i) + ".json";
    w.journal = json + ".jsonl";
    w.log = dir + "/" + std::to_string(i) + ".log";
    std::vector<std::string> argv{program};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--shard", std::to_string(i) + "/" + std::to_string(jobs), "--json", json});
    try {
      pids.push_back(start_worker(program, argv, w.log));
    } catch (const std::exception& e) {
      start_error = e.what();
    }
  }
  // wait for every worker started, polling the caller's progress meanwhile
  std::size_t left = pids.size();
  while (left > 0) {
    for (std::size_t k = 0; k < pids.size(); ++k) {
      if (pids[k] <= 0) continue;
      int status = 0;
      const pid_t r = waitpid(pids[k], &status, WNOHANG);
      if (r == pids[k] || (r < 0 && errno != EINTR)) {
        runs[k].exit_code = r == pids[k] ? exit_code_of(status) : -1;
        pids[k] = 0;
        --left;
      }
    }
    if (left > 0) {
      if (poll) poll();
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }
  if (!start_error.empty()) throw std::runtime_error(start_error);
  return runs;
}

std::vector<WorkerRun> run_workers_with_progress(const std::string& program, const std::vector<std::string>& args, int jobs,
                                                 const std::string& dir, std::size_t total, std::size_t held, std::ostream& err) {
  Progress progress(total, err);
  const auto done = [&] {
    std::size_t n = held;
    for (int i = 1; i <= jobs; ++i) {
      std::ifstream f(dir + "/" + std::to_string(i) + ".json.jsonl");
      const auto lines = static_cast<std::size_t>(std::count(std::istreambuf_iterator<char>(f), {}, '\n'));
      n += lines > 0 ? lines - 1 : 0;  // (its header)
    }
    return std::min(n, total);
  };
  try {
    std::vector<WorkerRun> runs = run_workers(program, args, jobs, dir, [&] { progress.step(done(), std::to_string(jobs) + " workers"); });
    progress.clear();
    return runs;
  } catch (...) {
    progress.clear();
    remove_worker_dir(dir);
    throw;
  }
}

std::string last_lines(const std::string& path, int lines) {
  std::ifstream f(path);
  std::vector<std::string> all;
  for (std::string line; std::getline(f, line);) all.push_back(line);
  std::string text;
  for (std::size_t i = all.size() > static_cast<std::size_t>(lines) ? all.size() - static_cast<std::size_t>(lines) : 0; i < all.size(); ++i)
    text += "  " + all[i] + "\n";
  return text;
}

std::string make_worker_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/s2cosim-jobs-XXXXXX";
  if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot make a scratch directory for the workers (" + pattern + "): " + std::strerror(errno));
  return pattern;
}

void remove_worker_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);  // (a scratch directory left behind is no error)
}

}  // namespace s2
