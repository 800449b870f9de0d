#include "harness/session/progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

namespace s2 {

Progress::Progress(std::size_t total, std::ostream& out)
    : total_(total), out_(out), start_(std::chrono::steady_clock::now()) {
  on_ = out.rdbuf() == std::cerr.rdbuf() && isatty(STDERR_FILENO) == 1;
  if (const char* a = std::getenv("S2COSIM_PROGRESS_AFTER_S")) after_s_ = std::atof(a);
}

void Progress::clear() {
  if (shown_) out_ << "\r\033[K" << std::flush;
  shown_ = false;
}

std::string Progress::line(std::size_t done, std::size_t total, double elapsed_s, const std::string& last) {
  std::string left = "?";
  if (done > 0 && done <= total) {
    const long s = std::lround(elapsed_s / double(done) * double(total - done));
    left = s >= 3600 ? fmt::format("{}h{:02}m", s / 3600, s / 60 % 60) : s >= 60 ? fmt::format("{}m{:02}s", s / 60, s % 60)
                                                                                   : fmt::format("{}s", s);
  }
  return fmt::format("[{}/{}] {:.1f}%, {} left{}", done, total, total ? 100.0 * double(done) / double(total) : 100.0, left,
                     last.empty() ? "" : ": " + last);
}

void Progress::step(std::size_t done, const std::string& last) {
  if (!on_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (elapsed < after_s_) return;
  std::string l = line(done, total_, elapsed, last);
  if (l.size() > 120) l = l.substr(0, 117) + "...";
  out_ << "\r\033[K" << l << std::flush;
  shown_ = true;
}

}  // namespace s2
