// The import's entry points and its two runs over a model (the reader's parts: importer.h).
#include "mapper/onnx/import.h"

#include <filesystem>

#include "mapper/onnx/importer.h"

namespace s2::mapper {

namespace onnx_reader {

OnnxCheck Importer::check(const std::string* bytes) {
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

Network Importer::run(const std::string* bytes, const std::vector<std::vector<float>>& calibration) {
  parse(bytes);
  read_graph();
  walk();
  quantize(calibration);
  net_.notes = notes_;
  return std::move(net_);
}

}  // namespace onnx_reader

using onnx_reader::Importer;

namespace {

OnnxCheck named(OnnxCheck r, const std::string& path) {
  if (r.network) {
    r.network->source = path;
    r.network->name = std::filesystem::path(path).stem().string();
  }
  return r;
}

}  // namespace

OnnxCheck check_onnx(const std::string& path) { return named(Importer(path).check(nullptr), path); }

OnnxCheck check_onnx_bytes(const std::string& bytes, const std::string& path) {
  return named(Importer(path).check(&bytes), path);
}

Network import_onnx(const std::string& path, const std::vector<std::vector<float>>& calibration) {
  Network net = Importer(path).run(nullptr, calibration);
  net.source = path;
  net.name = std::filesystem::path(path).stem().string();
  return net;
}

Network parse_onnx(const std::string& bytes, const std::string& path, const std::vector<std::vector<float>>& calibration) {
  Network net = Importer(path).run(&bytes, calibration);
  net.source = path;
  net.name = std::filesystem::path(path).stem().string();
  return net;
}

}  // namespace s2::mapper
