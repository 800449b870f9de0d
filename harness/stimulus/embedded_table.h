// The vectors/ tables the reports compare with (the thesis's and the silicon's figures), compiled into the
// binary at build time (harness/CMakeLists.txt, stimulus/embed_vectors.cmake), so that vectors/ is their
// only source and the binary needs no file at run time. Read at use: every problem names the file, the
// line and the field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace s2 {

// One embedded file: "vectors/NAME" and its text (the generated source defines them).
struct EmbeddedFile {
  const char* path;
  const char* text;
};
extern const EmbeddedFile kEmbeddedVectors[];
extern const std::size_t kEmbeddedVectorsCount;

// A CSV of figures: '#' lines and blank lines are comments, the first other line names the columns, every
// row has as many cells (an empty cell: not given).
struct FigureTable {
  struct Row {
    int line = 0;  // in the file, from 1
    std::vector<std::string> cells;
  };
  std::string path;
  std::vector<std::string> columns;
  std::vector<Row> rows;

  // The cell of `column` in `row` as written; throws std::invalid_argument naming the file, line and column.
  const std::string& text(const Row& row, const std::string& column) const;
  // The cell as a whole number or a number; nullopt if empty, else throws naming the file, line and field.
  std::optional<std::uint64_t> count(const Row& row, const std::string& column) const;
  std::optional<double> number(const Row& row, const std::string& column) const;
};

// Parses a figure table's text; throws std::invalid_argument naming `path`, the line and the problem.
FigureTable parse_figure_table(std::string_view text, const std::string& path);
// The embedded vectors/ file "vectors/NAME" parsed (once); throws std::invalid_argument if it is not embedded
// or malformed.
const FigureTable& vectors_table(const std::string& name);

}  // namespace s2
