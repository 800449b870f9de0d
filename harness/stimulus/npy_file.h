// Tensors in NumPy's .npy format, for run-net --input and --output: read and written by xtensor's xnpy
// (Debian's libxtensor-dev), not by a parser of our own. int8 and float32, and float64 and uint8 read as
// float32; C order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace s2 {

inline constexpr std::uintmax_t kMaxNpyFileBytes = 256u << 20;

struct NpyTensor {
  std::vector<std::size_t> shape;
  bool is_float = false;                // float32 (else int8)
  std::vector<std::int8_t> int8;        // when !is_float
  std::vector<float> float32;           // when is_float
  // a float64 or uint8 file, read into float32 (values as they are; float64 rounded to the nearest float):
  // "float64" or "uint8", else "" (run-net prints a note)
  std::string converted_from;
  std::size_t size() const { return is_float ? float32.size() : int8.size(); }
  std::string shape_text() const;       // "(1, 3, 16, 16)"
};

// Throws std::runtime_error "PATH: ..." for a file that is missing, larger than kMaxNpyFileBytes, not
// .npy, of another dtype than int8, float32, float64 or uint8, in Fortran order, or shorter or longer than its header says.
NpyTensor read_npy(const std::string& path);
// The same for a file's bytes; `path` names it in messages.
NpyTensor parse_npy(const std::string& bytes, const std::string& path);
// Writes int8 values of the given shape; throws std::runtime_error naming the file if it cannot.
void write_npy(const std::string& path, const std::vector<std::size_t>& shape, const std::vector<std::int8_t>& values);

}  // namespace s2
