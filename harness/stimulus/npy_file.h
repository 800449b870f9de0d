// Tensors in NumPy's .npy format, for run-net --input and --output: read and written by xtensor's xnpy
// (Debian's libxtensor-dev), not by a parser of our own. int8 and float32, and float64 and uint8 read as
// float32; C order. For readers that check dtype and shape themselves (the SNN layer's files,
// stimulus/snn_files.h): the header alone, then a one-byte dtype's values (int8, uint8, bool) as they are; and
// the bytes of an int8, uint8 or int32 file to write.
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

// "(1, 3, 16, 16)", "(5,)"
std::string npy_shape_text(const std::vector<std::size_t>& shape);

// A file's bytes as read_npy reads them: throws std::runtime_error "PATH: ..." for a file that is missing,
// cannot be read or is larger than kMaxNpyFileBytes.
std::string read_npy_file(const std::string& path);

// A .npy header, read before any of the data it describes (xtensor's parser, given only a header of the form
// NumPy writes).
struct NpyHeader {
  std::string descr;              // the dtype as the header writes it: '|i1', '|u1', '|b1', '<f4', '<i4', ...
  bool fortran_order = false;
  std::vector<std::size_t> shape;
  std::size_t data_at = 0;        // the data's first byte in the file
};
// Throws std::runtime_error "PATH: ..." for bytes that are not .npy, of another format version than 1.0 or
// 2.0, or whose header runs past their end or is not as NumPy writes it. Neither dtype nor order is checked.
NpyHeader parse_npy_header(const std::string& bytes, const std::string& path);
// The values of a file of one-byte values (int8 '|i1', uint8 '|u1' or bool '|b1'; which one is the caller's
// to check) as its bytes are, C order: a bool file's byte is not forced to 0 or 1, nor an int8's sign
// extended. Throws std::runtime_error "PATH: ..." for another dtype, Fortran order, or data shorter or longer
// than the shape needs.
std::vector<std::uint8_t> npy_byte_values(const std::string& bytes, const NpyHeader& header, const std::string& path);

// The bytes of a .npy file (format 1.0, C order, as xtensor writes it) holding `values` in `shape`: int8
// '|i1', uint8 '|u1', int32 '<i4'. Throws std::invalid_argument if the shape does not hold as many values.
std::string npy_bytes(const std::vector<std::size_t>& shape, const std::vector<std::int8_t>& values);
std::string npy_bytes(const std::vector<std::size_t>& shape, const std::vector<std::uint8_t>& values);
std::string npy_bytes(const std::vector<std::size_t>& shape, const std::vector<std::int32_t>& values);

}  // namespace s2
