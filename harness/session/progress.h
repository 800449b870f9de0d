// Progress of a long run on a terminal: done/total and an estimate of the time left, redrawn in place on
// one line of standard error. Nothing at all when standard error is not a terminal (a log file, a pipe, CI),
// and nothing for the first seconds of a run, so that short runs print as before.
#pragma once

#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <string>

namespace s2 {

class Progress {
 public:
  // On when `out` is std::cerr and standard error is a terminal. S2COSIM_PROGRESS_AFTER_S (seconds, default
  // 2) sets when the line first shows.
  Progress(std::size_t total, std::ostream& out);
  ~Progress() { clear(); }
  void clear();  // takes the line away (before the run prints its results)
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  bool on() const { return on_; }
  // after each check: `done` of the total finished, `last` the one that just did (e.g. "CONV_9 fuse_reuse pass")
  void step(std::size_t done, const std::string& last);
  // "[12/240] 5.0%, 1m20s left: CONV_9 fuse_reuse pass" (time left: the mean time per check so far times
  // the checks left; "?" before the first check)
  static std::string line(std::size_t done, std::size_t total, double elapsed_s, const std::string& last);

 private:
  std::size_t total_;
  std::ostream& out_;
  bool on_ = false, shown_ = false;
  double after_s_ = 2.0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace s2
