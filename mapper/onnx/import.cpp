// The import's entry points and its two runs over a model (the reader's parts: importer.h).
#include "mapper/onnx/import.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "mapper/onnx/importer.h"

namespace s2::mapper {

namespace onnx_reader {

OnnxCheck Importer::check(const std::string& bytes) {
  OnnxCheck r;
  collect_ = true;
  try {
    parse(bytes);
    read_graph();
  } catch (const NetworkError& e) {
    problems_.push_back(e.what());
  }
  if (problems_.empty()) {
    try {
      walk();
      quantize({});
      net_.notes = notes_;
      r.network = std::move(net_);
    } catch (const NetworkError& e) {
      problems_.push_back(e.what());
    }
  }
  r.problems = problems_;
  r.notes = notes_;
  return r;
}

Network Importer::run(const std::string& bytes, const std::vector<std::vector<float>>& calibration) {
  parse(bytes);
  read_graph();
  walk();
  quantize(calibration);
  net_.notes = notes_;
  return std::move(net_);
}

}  // namespace onnx_reader

using onnx_reader::Importer;

OnnxCheck check_onnx(const std::string& path) {
  std::string bytes;
  {
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec) return OnnxCheck{{path + ": cannot read the ONNX model: " + ec.message()}, {}, std::nullopt};
    if (size > kMaxOnnxFileBytes)
      return OnnxCheck{{path + ": expected an ONNX model of at most " + std::to_string(kMaxOnnxFileBytes) + " bytes, got " +
                        std::to_string(size)},
                       {},
                       std::nullopt};
    std::ifstream f(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  return check_onnx_bytes(bytes, path);
}

OnnxCheck check_onnx_bytes(const std::string& bytes, const std::string& path) {
  OnnxCheck r = Importer(path).check(bytes);
  if (r.network) {
    r.network->source = path;
    r.network->name = std::filesystem::path(path).stem().string();
  }
  return r;
}

Network import_onnx(const std::string& path, const std::vector<std::vector<float>>& calibration) {
  Network net = Importer(path).run(calibration);
  net.source = path;
  net.name = std::filesystem::path(path).stem().string();
  return net;
}

Network parse_onnx(const std::string& bytes, const std::string& path, const std::vector<std::vector<float>>& calibration) {
  Network net = Importer(path).run(bytes, calibration);
  net.source = path;
  net.name = std::filesystem::path(path).stem().string();
  return net;
}

}  // namespace s2::mapper
