#include "harness/stimulus/npy_file.h"

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include <xtensor/xadapt.hpp>
#include <xtensor/xnpy.hpp>

namespace s2 {

std::string npy_shape_text(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string NpyTensor::shape_text() const { return npy_shape_text(shape); }

namespace {

// Where the header starts and ends, as the format's prefix gives it (magic, version, then its length in 2
// or 4 little-endian bytes); xtensor parses the header. Needed to check the data's size against the shape
// before xtensor allocates it.
struct HeaderSpan {
  std::size_t begin = 0, end = 0;
};
HeaderSpan header_span(const std::string& bytes) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) throw std::runtime_error("not a .npy file (no \\x93NUMPY magic)");
  const auto u8 = [&](std::size_t i) { return static_cast<std::size_t>(static_cast<unsigned char>(bytes[i])); };
  if (u8(6) == 1 && u8(7) == 0) return {10, 10 + (u8(8) | u8(9) << 8)};
  if (u8(6) == 2 && u8(7) == 0 && bytes.size() >= 12) return {12, 12 + (u8(8) | u8(9) << 8 | u8(10) << 16 | u8(11) << 24)};
  throw std::runtime_error("expected .npy format version 1.0 or 2.0, got " + std::to_string(u8(6)) + "." + std::to_string(u8(7)));
}

// The header; throws std::runtime_error saying what is wrong (the caller names the file).
NpyHeader header_of(const std::string& bytes) {
  const HeaderSpan span = header_span(bytes);
  if (span.end > bytes.size() || span.end == span.begin) throw std::runtime_error("the header runs past the end of the file");
  NpyHeader h;
  h.data_at = span.end;
  const std::string header = bytes.substr(span.begin, span.end - span.begin);
  // xtensor's header parser has undefined behaviour on some malformed headers (found by fuzz_npy): it is
  // given only a header of the form NumPy writes, keys in its order
  std::string compact;
  for (char ch : header)
    if (ch != ' ') compact += ch;
  static const std::regex numpy_form(R"(\{'descr':'[<>|=][a-zA-Z][0-9]{1,2}','fortran_order':(True|False),'shape':\((\d{1,18},)*\d{0,18}\),?\}\n)");
  if (!std::regex_match(compact, numpy_form))
    throw std::runtime_error("expected a .npy header as NumPy writes it, e.g. {'descr': '|i1', 'fortran_order': False, "
                             "'shape': (1, 3, 4), }");
  try {
    xt::detail::parse_header(header, h.descr, &h.fortran_order, h.shape);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("the .npy header is not a dictionary of descr, fortran_order and shape: ") + e.what());
  }
  return h;
}

// C order, and exactly the data bytes the shape needs (checked before anything of that size is allocated).
void check_data(const std::string& bytes, const NpyHeader& h, std::size_t value_bytes) {
  if (h.fortran_order) throw std::runtime_error("expected C order, got fortran_order True");
  // an empty array is no input; and xtensor's strides multiply the other dimensions, which must fit too
  for (std::size_t d : h.shape)
    if (d == 0) throw std::runtime_error("shape " + npy_shape_text(h.shape) + " has a dimension of 0: the array is empty");
  std::size_t n = 1;
  for (std::size_t d : h.shape) {
    if (n > (bytes.size() + 1) / d)
      throw std::runtime_error("shape " + npy_shape_text(h.shape) + " needs more data bytes than the file's " + std::to_string(bytes.size()));
    n *= d;
  }
  const std::size_t want = n * value_bytes;
  if (bytes.size() - h.data_at != want)
    throw std::runtime_error("shape " + npy_shape_text(h.shape) + " needs " + std::to_string(want) + " data bytes, the file has " +
                             std::to_string(bytes.size() - h.data_at));
}

template <class T>
std::string npy_bytes_of(const std::vector<std::size_t>& shape, const std::vector<T>& values) {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  if (n != values.size())
    throw std::invalid_argument(".npy shape " + npy_shape_text(shape) + " holds " + std::to_string(n) + " values, given " +
                                std::to_string(values.size()));
  std::vector<T> copy = values;
  return xt::dump_npy(xt::adapt(copy, shape));
}

}  // namespace

std::string read_npy_file(const std::string& path) {
  auto fail = [&](const std::string& why) { return std::runtime_error(path + ": " + why); };
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw fail("cannot open the .npy file");
  if (size > kMaxNpyFileBytes)
    throw fail("expected a .npy file of at most " + std::to_string(kMaxNpyFileBytes) + " bytes, got " + std::to_string(size));
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof()) throw fail("cannot read the .npy file");
  return bytes;
}

NpyTensor read_npy(const std::string& path) { return parse_npy(read_npy_file(path), path); }

NpyTensor parse_npy(const std::string& bytes, const std::string& path) {
  NpyTensor t;
  try {
    const NpyHeader h = header_of(bytes);
    const std::string& descr = h.descr;
    t.shape = h.shape;
    if (descr != "|i1" && descr != "<f4" && descr != "<f8" && descr != "|u1")
      throw std::runtime_error("expected dtype int8 ('|i1'), float32 ('<f4'), float64 ('<f8') or uint8 ('|u1'), got '" + descr + "'");
    t.is_float = descr != "|i1";
    if (descr == "<f8") t.converted_from = "float64";
    if (descr == "|u1") t.converted_from = "uint8";
    check_data(bytes, h, descr == "<f8" ? 8 : descr == "<f4" ? 4 : 1);
    std::istringstream s(bytes);
    xt::detail::npy_file f = xt::detail::load_npy_file(s);
    if (f.m_shape != t.shape) throw std::runtime_error("the header could not be read consistently");
    if (descr == "<f8") {
      const auto a = std::move(f).cast<double>();
      for (const double v : a) t.float32.push_back(static_cast<float>(v));
    } else if (descr == "|u1") {
      const auto a = std::move(f).cast<std::uint8_t>();
      for (const std::uint8_t v : a) t.float32.push_back(static_cast<float>(v));
    } else if (t.is_float) {
      const auto a = std::move(f).cast<float>();
      t.float32.assign(a.begin(), a.end());
    } else {
      const auto a = std::move(f).cast<std::int8_t>();
      t.int8.assign(a.begin(), a.end());
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  return t;
}

NpyHeader parse_npy_header(const std::string& bytes, const std::string& path) {
  try {
    return header_of(bytes);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

std::vector<std::uint8_t> npy_byte_values(const std::string& bytes, const NpyHeader& header, const std::string& path) {
  try {
    if (header.descr != "|i1" && header.descr != "|u1" && header.descr != "|b1")
      throw std::runtime_error("expected a dtype of one byte, int8 ('|i1'), uint8 ('|u1') or bool ('|b1'), got '" + header.descr + "'");
    check_data(bytes, header, 1);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  // the bytes themselves, not through xtensor's cast: a bool read as C++ bool from a byte other than 0 or 1
  // would be undefined behaviour, and such a byte is for the caller to refuse by name
  return std::vector<std::uint8_t>(bytes.begin() + static_cast<std::ptrdiff_t>(header.data_at), bytes.end());
}

std::string npy_bytes(const std::vector<std::size_t>& shape, const std::vector<std::int8_t>& values) { return npy_bytes_of(shape, values); }
std::string npy_bytes(const std::vector<std::size_t>& shape, const std::vector<std::uint8_t>& values) { return npy_bytes_of(shape, values); }
std::string npy_bytes(const std::vector<std::size_t>& shape, const std::vector<std::int32_t>& values) { return npy_bytes_of(shape, values); }

void write_npy(const std::string& path, const std::vector<std::size_t>& shape, const std::vector<std::int8_t>& values) {
  try {
    const std::string bytes = npy_bytes(shape, values);
    std::ofstream out(path, std::ios::binary);
    if (!out) throw std::runtime_error("cannot open it for writing");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) throw std::runtime_error("cannot write it");
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

}  // namespace s2
