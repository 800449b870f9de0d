#include "harness/outputs/output_files.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "model/text_file.h"

namespace s2 {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (a report would block on it or be lost)";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string parent_of(const std::string& path) {
  const std::filesystem::path p(path);
  const std::filesystem::path parent = p.parent_path();
  return parent.empty() ? "." : parent.string();
}

// The file `path` names, links resolved; "" if it cannot be resolved.
std::string resolved(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? "" : p.string();
}

struct Identity {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  std::string name;  // resolved
};

Identity identity(const std::string& path) {
  Identity id;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) id.exists = true, id.dev = st.st_dev, id.ino = st.st_ino;
  id.name = resolved(path);
  return id;
}

bool same(const Identity& a, const Identity& b) {
  if (a.exists && b.exists) return a.dev == b.dev && a.ino == b.ino;
  return !a.name.empty() && a.name == b.name;
}

}  // namespace

std::string output_path_problem(const std::string& path) {
  if (path.empty()) return "an empty name";
  if (first_invalid_utf8(path)) return "the name is not UTF-8 (reports name their files in UTF-8 JSON)";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) return std::string(kind_of(st.st_mode)) + ", expected a regular file or a new name";
    if (::access(path.c_str(), W_OK) != 0) return std::string("cannot be written (") + std::strerror(errno) + ")";
  } else if (errno != ENOENT) {
    return std::string("cannot be looked up (") + std::strerror(errno) + ")";
  } else {
    struct stat dir {};
    const std::string parent = parent_of(path);
    if (::stat(parent.c_str(), &dir) != 0)
      return "its directory " + parent + " cannot be looked up (" + std::strerror(errno) + ")";
    if (!S_ISDIR(dir.st_mode)) return parent + " is not a directory";
  }
  // a report is written to a temporary file beside it and renamed: the directory must take new files
  const std::string parent = parent_of(path);
  if (::access(parent.c_str(), W_OK | X_OK) != 0)
    return "its directory " + parent + " cannot be written (" + std::strerror(errno) + ")";
  return "";
}

bool check_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs, std::ostream& err,
                 const std::string& journal, const std::string& resume) {
  std::vector<std::pair<const NamedPath*, Identity>> seen;
  for (const NamedPath& o : outputs) {
    if (o.path.empty()) continue;
    if (const std::string why = output_path_problem(o.path); !why.empty()) {
      err << "s2cosim: " << o.option << " " << o.path << ": " << why << "\n";
      return false;
    }
    const Identity id = identity(o.path);
    for (const auto& [other, oid] : seen)
      if (same(id, oid)) {
        err << fmt::format("s2cosim: {} {}: the same file as {} {}; every output needs a file of its own\n", o.option, o.path,
                           other->option, other->path);
        return false;
      }
    seen.emplace_back(&o, id);
  }
  for (const NamedPath& in : inputs) {
    if (in.path.empty()) continue;
    // an input's name reaches the reports (rerun lines, "vectors", "input"): JSON holds UTF-8 only
    if (first_invalid_utf8(in.path)) {
      err << "s2cosim: " << in.option << " " << in.path << ": the name is not UTF-8 (reports name their inputs in UTF-8 JSON)\n";
      return false;
    }
    const Identity iid = identity(in.path);
    for (const auto& [o, oid] : seen) {
      if (!same(iid, oid)) continue;
      if (in.path == resume && o->path == journal) continue;  // the run continues the journal it resumes
      err << fmt::format("s2cosim: {} {}: the same file as {} {}; the run would write over its input\n", o->option, o->path,
                         in.option, in.path);
      return false;
    }
  }
  return true;
}

void write_text_file(const std::string& path, const std::string& text) {
  // the file a link names is replaced, not the link
  std::string target = path;
  std::error_code ec;
  if (std::filesystem::is_symlink(path, ec)) {
    const std::filesystem::path p = std::filesystem::canonical(path, ec);
    if (ec) throw std::runtime_error("cannot write '" + path + "': " + ec.message());
    target = p.string();
  }
  struct stat st {};
  const bool exists = ::stat(target.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) throw std::runtime_error("cannot write '" + path + "': " + kind_of(st.st_mode));
  const std::filesystem::path t(target);
  const std::string temp =
      (t.parent_path() / fmt::format(".{}.{}.tmp", t.filename().string(), static_cast<long>(::getpid()))).string();
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, exists ? (st.st_mode & 07777) : 0666);
  if (fd < 0) throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno));
  auto fail = [&](int e) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw std::runtime_error("cannot write '" + path + "': " + std::strerror(e) + "; the file is as it was");
  };
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(n < 0 ? errno : EIO);
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) fail(errno);
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(temp.c_str());
    throw std::runtime_error("cannot write '" + path + "': " + std::strerror(e) + "; the file is as it was");
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const int e = errno;
    ::unlink(temp.c_str());
    throw std::runtime_error("cannot write '" + path + "': " + std::strerror(e) + "; the file is as it was");
  }
}

bool check_writable(const std::string& path, std::ostream& err) {
  if (path.empty()) return true;
  if (const std::string why = output_path_problem(path); !why.empty()) {
    err << "s2cosim: cannot write '" << path << "': " << why << "\n";
    return false;
  }
  return true;
}

bool write_outputs(const std::vector<std::pair<std::string, std::function<std::string()>>>& outputs, std::ostream& err) {
  bool ok = true;
  for (const auto& [path, text] : outputs) {
    if (path.empty()) continue;
    try {
      write_text_file(path, text());
    } catch (const std::exception& e) {
      err << "s2cosim: " << e.what() << "\n";
      ok = false;
    }
  }
  return ok;
}

const char* tool_version() { return S2COSIM_VERSION; }

std::string flaws_string(const HwConfig& cfg) {
  std::string s;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!s.empty()) s += ',';
    s += name;
  };
  add(cfg.flaws.sram2clk, "sram2clk");
  add(cfg.flaws.neighbor_conv, "neighbor_conv");
  add(cfg.flaws.mm_wide_a, "mm_wide_a");
  return s.empty() ? "none" : s;
}

std::string hw_config_line(const HwConfig& cfg) {
  return fmt::format(
      "MAC {} (columns x rows), {}-bit accumulators, SRAM {} KB ({} KB for MLA data), PE {} MHz, NoC {} MHz, "
      "flaws: {}",
      cfg.mac_shape(), cfg.accumulator_bits, cfg.sram_bytes / 1024, cfg.sram_mla_budget_bytes / 1024, cfg.pe_clock_mhz,
      cfg.noc_clock_mhz, flaws_string(cfg));
}

}  // namespace s2
