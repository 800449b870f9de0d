#include "model/text_file.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace s2 {

std::optional<std::size_t> first_invalid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    std::uint32_t cp = 0, min = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07, min = 0x10000;
    } else {
      return i;
    }
    for (std::size_t k = 1; k <= n; ++k) {
      if (i + k >= s.size()) return i;
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (d & 0x3F);
    }
    // overlong forms, UTF-16 surrogates and values beyond Unicode are not UTF-8
    if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return i;
    i += n + 1;
  }
  return std::nullopt;
}

namespace {

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

std::string read_file_bounded(const std::string& path, std::uintmax_t max_bytes, const std::string& what,
                              bool regular_only) {
  // O_NONBLOCK: opening a FIFO nobody writes must not wait forever; reads block again below
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(path + ": cannot open the " + what + " (" + std::strerror(errno) + ")");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw std::runtime_error(path + ": cannot open the " + what + " (" + std::strerror(errno) + ")");
  if (S_ISDIR(st.st_mode)) throw std::runtime_error(path + ": a directory, expected the " + what);
  if (regular_only && !S_ISREG(st.st_mode))
    throw std::runtime_error(path + ": " + file_kind(st.st_mode) + ", expected the " + what + " (a regular file)");
  const bool sized = S_ISREG(st.st_mode);
  if (sized && static_cast<std::uintmax_t>(st.st_size) > max_bytes)
    throw std::runtime_error(path + ": expected a " + what + " of at most " + std::to_string(max_bytes) + " bytes, got " +
                             std::to_string(st.st_size));
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  // a pipe or a special file has no size: read at most one byte more than allowed
  std::string text;
  text.reserve(static_cast<std::size_t>(sized ? static_cast<std::uintmax_t>(st.st_size) : std::min<std::uintmax_t>(max_bytes, 1u << 20)));
  char buf[1 << 16];
  while (text.size() <= max_bytes) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uintmax_t>(sizeof buf, max_bytes + 1 - text.size()));
    const ssize_t n = ::read(fd, buf, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(path + ": cannot read the " + what + " (" + std::strerror(errno) + ")");
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  if (text.size() > max_bytes)
    throw std::runtime_error(path + ": expected a " + what + " of at most " + std::to_string(max_bytes) +
                             " bytes, got more");
  return text;
}

std::string read_text_file(const std::string& path, std::uintmax_t max_bytes, const std::string& what) {
  const std::string text = read_file_bounded(path, max_bytes, what);
  if (const auto bad = first_invalid_utf8(text)) {
    std::size_t line = 1, column = 1;
    for (std::size_t k = 0; k < *bad; ++k) {
      if (text[k] == '\n') ++line, column = 1;
      else ++column;
    }
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(text[*bad])));
    throw std::runtime_error(path + ":" + std::to_string(line) + ":" + std::to_string(column) +
                             ": expected UTF-8 text, got byte " + byte);
  }
  return text;
}

}  // namespace s2
