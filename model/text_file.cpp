#include "model/text_file.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

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

std::string read_text_file(const std::string& path, std::uintmax_t max_bytes, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open the " + what);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw std::runtime_error(path + ": a directory, expected the " + what);
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > max_bytes)
    throw std::runtime_error(path + ": expected a " + what + " of at most " + std::to_string(max_bytes) + " bytes, got " +
                             std::to_string(size));
  // a pipe or a special file has no size: read at most one byte more than allowed
  std::string text(static_cast<std::size_t>(std::min<std::uintmax_t>(ec ? max_bytes + 1 : size, max_bytes + 1)), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > max_bytes)
    throw std::runtime_error(path + ": expected a " + what + " of at most " + std::to_string(max_bytes) +
                             " bytes, got more");
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
