#include "harness/stimulus/embedded_table.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

namespace s2 {

namespace {

std::string trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return "";
  return std::string(s.substr(first, s.find_last_not_of(" \t\r") - first + 1));
}

std::vector<std::string> cells_of(std::string_view line) {
  std::vector<std::string> cells;
  for (std::size_t at = 0;;) {
    const std::size_t comma = line.find(',', at);
    cells.push_back(trimmed(line.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at)));
    if (comma == std::string_view::npos) return cells;
    at = comma + 1;
  }
}

}  // namespace

FigureTable parse_figure_table(std::string_view text, const std::string& path) {
  FigureTable t;
  t.path = path;
  int line_number = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++line_number;
    const std::string content = trimmed(line);
    if (content.empty() || content[0] == '#') continue;
    std::vector<std::string> cells = cells_of(line);
    if (t.columns.empty()) {
      for (const std::string& c : cells)
        if (c.empty() || std::count(cells.begin(), cells.end(), c) > 1)
          throw std::invalid_argument(fmt::format("{}:{}: column '{}' is empty or named twice", path, line_number, c));
      t.columns = std::move(cells);
      continue;
    }
    if (cells.size() != t.columns.size())
      throw std::invalid_argument(
          fmt::format("{}:{}: {} fields, the header names {}", path, line_number, cells.size(), t.columns.size()));
    t.rows.push_back({line_number, std::move(cells)});
  }
  if (t.columns.empty()) throw std::invalid_argument(path + ": no header line");
  return t;
}

const std::string& FigureTable::text(const Row& row, const std::string& column) const {
  const auto it = std::find(columns.begin(), columns.end(), column);
  if (it == columns.end()) throw std::invalid_argument(fmt::format("{}:{}: no column '{}'", path, row.line, column));
  return row.cells[static_cast<std::size_t>(it - columns.begin())];
}

std::optional<std::uint64_t> FigureTable::count(const Row& row, const std::string& column) const {
  const std::string& cell = text(row, column);
  if (cell.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(cell.c_str(), &end, 10);
  if (errno || *end || !std::isdigit(static_cast<unsigned char>(cell[0])))
    throw std::invalid_argument(fmt::format("{}:{}: field '{}': '{}' is not a whole number", path, row.line, column, cell));
  return v;
}

std::optional<double> FigureTable::number(const Row& row, const std::string& column) const {
  const std::string& cell = text(row, column);
  if (cell.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(cell.c_str(), &end);
  if (errno || *end)
    throw std::invalid_argument(fmt::format("{}:{}: field '{}': '{}' is not a number", path, row.line, column, cell));
  return v;
}

const FigureTable& vectors_table(const std::string& name) {
  static std::mutex lock;
  static std::map<std::string, FigureTable> parsed;
  const std::string path = "vectors/" + name;
  const std::lock_guard<std::mutex> hold(lock);
  if (const auto it = parsed.find(path); it != parsed.end()) return it->second;
  for (std::size_t i = 0; i < kEmbeddedVectorsCount; ++i)
    if (path == kEmbeddedVectors[i].path) return parsed.emplace(path, parse_figure_table(kEmbeddedVectors[i].text, path)).first->second;
  throw std::invalid_argument(path + ": not compiled into this binary (harness/CMakeLists.txt, S2_EMBEDDED_VECTORS)");
}

}  // namespace s2
