// The ONNX import (mapper/onnx/import.h): every accepted form gives the layer list, int8 weights, shifts and
// exponents that tests/onnx/make_test_models.py worked out on its own (a numpy run of the float graph and
// docs/real_networks.md's quantization); the QDQ and QLinear forms of each network import to the same; every
// refused form and malformed file is a NetworkError naming the node and op type (tests/onnx/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "mapper/activations.h"
#include "mapper/network.h"
#include "mapper/onnx/import.h"
#include "mapper/parser.h"
#include "test_support.h"

using namespace s2::mapper;
using namespace s2::test;

namespace {

std::string model(const std::string& name) { return source_path("tests/onnx/" + name); }

// An .expect file: a layer list, each weighted layer followed by "#weights v v ...", and "#exponents IN OUT".
struct Expected {
  Network net;
  std::vector<std::vector<std::int8_t>> weights;  // per layer; empty: none
  int e_in = 0, e_out = 0;
};

Expected read_expected(const std::string& name) {
  const std::string path = model(name + ".expect");
  const std::string text = read_text(path);
  Expected e{parse_layer_list(text, path), {}, 0, 0};
  e.weights.resize(e.net.layers.size());
  std::istringstream in(text);
  int layer = -1;
  bool exponents = false;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string kw;
    if (!(words >> kw) || kw == "#" || kw == "input" || kw == "network" ||
        (kw[0] == '#' && kw != "#weights" && kw != "#exponents"))
      continue;
    if (kw == "#weights") {
      for (int v; words >> v;) e.weights.at(static_cast<std::size_t>(layer)).push_back(static_cast<std::int8_t>(v));
    } else if (kw == "#exponents") {
      exponents = static_cast<bool>(words >> e.e_in >> e.e_out);
    } else {
      ++layer;
    }
  }
  EXPECT_EQ(layer + 1, static_cast<int>(e.net.layers.size())) << path;
  EXPECT_TRUE(exponents) << path << " has no #exponents line";
  return e;
}

std::vector<std::vector<float>> read_calibration(const std::string& name) {
  std::istringstream in(read_text(model(name + "_calib.txt")));
  std::vector<std::vector<float>> inputs;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    inputs.emplace_back();
    for (std::string w; words >> w;) inputs.back().push_back(std::strtof(w.c_str(), nullptr));
  }
  return inputs;
}

// A layer's per-channel shifts (none: empty).
std::vector<std::uint8_t> shifts_of(const LayerSpec& l) { return l.shifts ? *l.shifts : std::vector<std::uint8_t>{}; }

// The bias the ARM adds for a layer whose quantizer gave `bias` (a JSON layer with "shift" and maybe "shifts"):
// each channel's plus QUAN's rounding term 2^(shift-1) (docs/real_networks.md, "Rounding").
std::vector<std::int32_t> with_rounding(const nlohmann::json& l) {
  auto b = l.at("bias").get<std::vector<std::int32_t>>();
  for (std::size_t c = 0; c < b.size(); ++c) {
    const int s = l.contains("shifts") ? l.at("shifts").at(c).get<int>() : l.at("shift").get<int>();
    if (s > 0) b[c] += std::int32_t(1) << (s - 1);
  }
  return b;
}

// The layers as the import gave them equal a layer list's, field by field; shifts (and per-channel shifts) as
// given there, or -1 and none everywhere (with_shifts false: a float model without calibration).
void expect_layers(const Network& got, const Network& want, bool with_shifts, const std::string& what) {
  EXPECT_EQ(got.input, want.input) << what;
  ASSERT_EQ(got.layers.size(), want.layers.size()) << what;
  for (std::size_t i = 0; i < want.layers.size(); ++i) {
    const LayerSpec& g = got.layers[i];
    const LayerSpec& w = want.layers[i];
    const std::string at = what + ", layer " + std::to_string(i + 1) + " (list line " + std::to_string(w.line) + ")";
    EXPECT_EQ(g.kind, w.kind) << at;
    EXPECT_EQ(g.Wf, w.Wf) << at;
    EXPECT_EQ(g.Hf, w.Hf) << at;
    EXPECT_EQ(g.D, w.D) << at;
    EXPECT_EQ(g.C, w.C) << at;
    EXPECT_EQ(g.stride, w.stride) << at;
    EXPECT_EQ(g.pad, w.pad) << at;
    EXPECT_EQ(g.relu, w.relu) << at;
    EXPECT_EQ(g.pool, w.pool) << at;
    EXPECT_EQ(g.shortcut, w.shortcut) << at;
    EXPECT_EQ(g.shift, with_shifts ? w.shift : -1) << at;
    EXPECT_EQ(shifts_of(g), with_shifts ? shifts_of(w) : std::vector<std::uint8_t>{}) << at;
  }
}

void expect_weights(const Network& got, const Expected& want, const std::string& what) {
  ASSERT_EQ(got.layers.size(), want.weights.size()) << what;
  for (std::size_t i = 0; i < want.weights.size(); ++i) {
    const std::string at = what + ", layer " + std::to_string(i + 1);
    if (want.weights[i].empty()) {
      EXPECT_EQ(got.layers[i].weights, nullptr) << at;
      continue;
    }
    ASSERT_NE(got.layers[i].weights, nullptr) << at;
    EXPECT_EQ(*got.layers[i].weights, want.weights[i]) << at;
  }
}

// The whole expectation: layers, shifts, weights and exponents; and the parser takes the network.
void expect_import(const Network& got, const Expected& want, const std::string& what) {
  expect_layers(got, want.net, true, what);
  expect_weights(got, want, what);
  EXPECT_EQ(got.input_exponent, std::optional<int>(want.e_in)) << what;
  EXPECT_EQ(got.output_exponent, std::optional<int>(want.e_out)) << what;
  EXPECT_NO_THROW(parse_network(got)) << what;
}

// The network with each grouped convolution written as one over all its input channels, its filters zero outside
// their group (block-diagonal weights): what an exporter writes for a grouped Conv when it expands it.
Network as_block_diagonal(Network n) {
  for (LayerSpec& l : n.layers) {
    if (l.kind != LayerKind::Conv || l.groups == 1 || !l.weights) continue;
    const std::size_t k = std::size_t(l.Hf) * l.Wf, D = std::size_t(l.D), Dg = D / std::size_t(l.groups),
                      Cg = std::size_t(l.C / l.groups);
    std::vector<std::int8_t> full(std::size_t(l.C) * D * k, 0);
    for (std::size_t c = 0; c < std::size_t(l.C); ++c)
      std::copy_n(l.weights->begin() + std::ptrdiff_t(c * Dg * k), Dg * k, full.begin() + std::ptrdiff_t((c * D + c / Cg * Dg) * k));
    l.weights = std::make_shared<const std::vector<std::int8_t>>(std::move(full));
    l.groups = 1;
  }
  return n;
}

const std::vector<std::string> kAccepted = {"ok_conv_chain", "ok_pools",         "ok_fc", "ok_rounding", "ok_reshape",
                                            "ok_residual",   "ok_residual_plain"};

// The error import_onnx gives, or "" if it imports.
std::string error_of(const std::string& path, const std::vector<std::vector<float>>& calibration = {}) {
  try {
    import_onnx(path, calibration);
  } catch (const NetworkError& e) {
    return e.what();
  }
  return "";
}

struct Refusal {
  std::string file, node, op, why;
  bool calibrated = false;  // refused when calibrated on an input of ones
};

// tests/onnx/refused.txt: "file | node | op type | what the message says".
std::vector<Refusal> refusals() {
  std::istringstream in(read_text(model("refused.txt")));
  std::vector<Refusal> v;
  auto trim = [](std::string s) {
    s.erase(0, s.find_first_not_of(' '));
    s.erase(s.find_last_not_of(' ') + 1);
    return s;
  };
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, '|');) f.push_back(trim(x));
    while (f.size() < 5) f.emplace_back();
    v.push_back({f[0], f[1], f[2], f[3], f[4] == "ones"});
  }
  return v;
}

}  // namespace

TEST(OnnxImport, FloatModelsQuantizeOnTheirCalibrationAsWorkedOutIndependently) {
  for (const std::string& name : kAccepted) {
    SCOPED_TRACE(name);
    const Expected want = read_expected(name);
    const std::vector<std::vector<float>> calib = read_calibration(name);
    ASSERT_FALSE(calib.empty());
    expect_import(import_onnx(model(name + ".onnx"), calib), want, name + ".onnx");
  }
}

TEST(OnnxImport, FloatModelsWithoutCalibrationKeepTheDistributorsShiftAndNoExponents) {
  for (const std::string& name : kAccepted) {
    SCOPED_TRACE(name);
    const Expected want = read_expected(name);
    const Network got = import_onnx(model(name + ".onnx"));
    expect_layers(got, want.net, false, name);
    expect_weights(got, want, name);  // the weights' quantization needs no calibration
    EXPECT_FALSE(got.input_exponent.has_value());
    EXPECT_FALSE(got.output_exponent.has_value());
    EXPECT_EQ(got.source, model(name + ".onnx"));
    EXPECT_EQ(got.name, name);
  }
}

TEST(OnnxImport, QdqAndQlinearFormsImportTheirOwnScalesToTheSameNetwork) {
  for (const std::string& name : kAccepted) {
    SCOPED_TRACE(name);
    const Expected want = read_expected(name);
    for (const char* form : {"_qdq", "_qlinear"})
      expect_import(import_onnx(model(name + form + ".onnx")), want, name + form + ".onnx");
    // a quantized model's scales are its own: a calibration changes nothing
    expect_import(import_onnx(model(name + "_qdq.onnx"), read_calibration(name)), want, name + "_qdq.onnx calibrated");
  }
}

TEST(OnnxImport, LoadNetworkReadsAnOnnxPath) {
  const Network n = load_network(model("ok_residual.onnx"));
  expect_layers(n, read_expected("ok_residual").net, false, "load_network");
  // the thesis's names: the projection and the addition carry the number of the unit's last convolution
  const ParsedNetwork p = parse_network(n);
  ASSERT_NE(p.find("CONV_SC_5"), nullptr);
  EXPECT_NE(p.find("CONV_SC_5")->core_op().weights, nullptr);
  EXPECT_EQ(p.find("CONV_SC_5")->core_op().stride, 2);
  EXPECT_EQ(p.find("FC_7")->core_op().out.W, 4);
}

TEST(OnnxImport, RefusedModelsNameTheNodeTheOpTypeAndTheReason) {
  int seen = 0;
  for (const Refusal& r : refusals()) {
    if (r.file.rfind("bad_", 0) != 0) continue;
    ++seen;
    const std::string path = model(r.file);
    std::vector<std::vector<float>> calibration;
    if (r.calibrated) {
      const long long n = import_onnx(path).input.elements();  // it imports without calibration
      calibration.assign(1, std::vector<float>(static_cast<std::size_t>(n), 1.0f));
    }
    const std::string e = error_of(path, calibration);
    ASSERT_FALSE(e.empty()) << r.file << " imported";
    EXPECT_EQ(e.rfind(path + ": ", 0), 0u) << e;
    if (!r.node.empty()) {
      EXPECT_NE(e.find(": node " + r.node + " (" + r.op + "): "), std::string::npos) << r.file << ": " << e;
    }
    EXPECT_NE(e.find(r.why), std::string::npos) << r.file << ": expected '" << r.why << "' in: " << e;
  }
  EXPECT_GE(seen, 30);
}

TEST(OnnxImport, MalformedFilesAreNetworkErrors) {
  int seen = 0;
  for (const Refusal& r : refusals()) {
    if (r.file.rfind("broken_", 0) != 0) continue;
    ++seen;
    const std::string path = model(r.file);
    const std::string e = error_of(path);
    ASSERT_FALSE(e.empty()) << r.file << " imported";
    EXPECT_EQ(e.rfind(path + ": ", 0), 0u) << e;
    EXPECT_NE(e.find(r.why), std::string::npos) << r.file << ": expected '" << r.why << "' in: " << e;
  }
  EXPECT_GE(seen, 8);
  // every file of the folder is an accepted model's or listed as refused: a new one without an entry fails
  std::vector<std::string> listed;
  for (const Refusal& r : refusals()) listed.push_back(r.file);
  for (const auto& f : std::filesystem::directory_iterator(model(""))) {
    const std::string n = f.path().filename().string();
    if (f.path().extension() != ".onnx" || n.rfind("ok_", 0) == 0 || n.rfind("eq_", 0) == 0 || n.rfind("graph_", 0) == 0 ||
        n.rfind("per_channel", 0) == 0)
      continue;
    EXPECT_NE(std::find(listed.begin(), listed.end(), n), listed.end()) << n << " is not in refused.txt";
  }
}

// tests/onnx/equivalent.txt: what an exporter writes (eq_NAME_a.onnx: a BatchNormalization, Identity and
// Dropout, a Pad, MatMul + Add, a grouped Conv, a final Softmax, ReLU6, QLinearConv's bias) imports to the same
// layers, int8 weights, int32 biases, shifts and exponents as the network written plainly (eq_NAME_b.onnx).
TEST(OnnxImport, WhatExportersWriteImportsAsTheSameNetworkWrittenPlainly) {
  std::istringstream in(read_text(model("equivalent.txt")));
  int seen = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::string name = line.substr(0, line.find(' '));
    SCOPED_TRACE(name);
    ++seen;
    const std::vector<std::vector<float>> calib = read_calibration("eq_" + name);
    Network a = import_onnx(model("eq_" + name + "_a.onnx"), calib);
    const Network b = import_onnx(model("eq_" + name + "_b.onnx"), calib);
    if (name == "grouped") a = as_block_diagonal(a);  // a grouped conv (per-group tasks) against its b's zeros
    expect_layers(a, b, true, name);
    ASSERT_EQ(a.layers.size(), b.layers.size());
    for (std::size_t i = 0; i < a.layers.size(); ++i) {
      const LayerSpec& la = a.layers[i];
      const LayerSpec& lb = b.layers[i];
      ASSERT_EQ(la.weights == nullptr, lb.weights == nullptr) << "layer " << i + 1;
      if (la.weights) {
        EXPECT_EQ(*la.weights, *lb.weights) << "layer " << i + 1;
      }
      ASSERT_EQ(la.bias == nullptr, lb.bias == nullptr) << "layer " << i + 1;
      if (la.bias) {
        EXPECT_EQ(*la.bias, *lb.bias) << "layer " << i + 1;
      }
      EXPECT_EQ(la.clamp_high, lb.clamp_high) << "layer " << i + 1;
    }
    EXPECT_EQ(a.input_exponent, b.input_exponent);
    EXPECT_EQ(a.output_exponent, b.output_exponent);
    EXPECT_NO_THROW(parse_network(a));
    if (name == "softmax") {
      EXPECT_EQ(a.host_activation, "Softmax");
      EXPECT_EQ(b.host_activation, "");
    }
    if (name == "flatten_out") {  // run-net writes the output as [1, N]
      EXPECT_TRUE(a.output_flattened);
      EXPECT_FALSE(b.output_flattened);
    }
    if (name == "shape_arithmetic") {
      const std::string notes = ::testing::PrintToString(a.notes);
      EXPECT_NE(notes.find("its batch dimension is symbolic ('batch'); run with a batch of 1"), std::string::npos) << notes;
    }
    if (name == "relu6") {
      // QUAN saturates at the quantized 6: floor(6 * 2^e_y), the clip being the last layer
      ASSERT_TRUE(a.output_exponent.has_value());
      const int want = std::min(127, static_cast<int>(std::floor(std::ldexp(6.0, *a.output_exponent))));
      EXPECT_EQ(a.layers.back().clamp_high, want);
      EXPECT_LT(want, 127);  // the calibration saw values above 6
      EXPECT_EQ(b.layers.back().clamp_high, want);
      EXPECT_TRUE(a.layers.back().relu);
    }
    if (name == "batchnorm" || name == "identity_dropout" || name == "pad" || name == "grouped" || name == "qlinear_bias") {
      ASSERT_NE(a.layers.front().bias, nullptr);  // the convolution's bias, non-zero
    }
  }
  EXPECT_GE(seen, 14);
}

// s2cosim check: every node that will not map, all at once (the import stops at the first), each naming the
// node and what to change; a model that will run has none, and notes on what the import folded.
TEST(OnnxImport, CheckListsEveryProblemAtOnce) {
  const OnnxCheck bad = check_onnx(model("bad_many.onnx"));
  EXPECT_FALSE(bad.network.has_value());
  ASSERT_EQ(bad.problems.size(), 3u) << ::testing::PrintToString(bad.problems);
  EXPECT_NE(bad.problems[0].find("node dil (Conv): dilations"), std::string::npos) << bad.problems[0];
  EXPECT_NE(bad.problems[1].find("node elu (Elu): op type 'Elu' is not supported: "), std::string::npos) << bad.problems[1];
  EXPECT_NE(bad.problems[1].find("retrain with one of them"), std::string::npos) << bad.problems[1];
  EXPECT_NE(bad.problems[2].find("node gconv (Conv): group=5"), std::string::npos) << bad.problems[2];
  // the graph forms: a reduction over channels, a Transpose, a Slice with a step, each once (the convolutions
  // after them fit the shapes ONNX gives their outputs)
  const OnnxCheck graph = check_onnx(model("bad_many_graph.onnx"));
  ASSERT_EQ(graph.problems.size(), 3u) << ::testing::PrintToString(graph.problems);
  EXPECT_NE(graph.problems[0].find("node mean (ReduceMean): reduces axes [1]"), std::string::npos) << graph.problems[0];
  EXPECT_NE(graph.problems[1].find("node tr (Transpose): transposes a feature map"), std::string::npos) << graph.problems[1];
  EXPECT_NE(graph.problems[2].find("node slice (Slice): step 2"), std::string::npos) << graph.problems[2];
  // the nodes after a refused one are checked against the shape ONNX gives its output, not its input's
  const OnnxCheck one = check_onnx(model("bad_cascade.onnx"));
  ASSERT_EQ(one.problems.size(), 1u) << ::testing::PrintToString(one.problems);
  EXPECT_NE(one.problems[0].find("node dil (Conv): dilations [2,2]"), std::string::npos) << one.problems[0];
  const OnnxCheck good = check_onnx(model("eq_batchnorm_a.onnx"));
  EXPECT_TRUE(good.problems.empty()) << ::testing::PrintToString(good.problems);
  ASSERT_TRUE(good.network.has_value());
  const std::string notes = ::testing::PrintToString(good.notes);
  EXPECT_NE(notes.find("node bn (BatchNormalization): folded into node conv (Conv)"), std::string::npos) << notes;
  const OnnxCheck grouped = check_onnx(model("eq_grouped_a.onnx"));
  EXPECT_NE(::testing::PrintToString(grouped.notes).find("group=2: runs as per-group tasks, each over its group's 2 input channels"),
            std::string::npos) << ::testing::PrintToString(grouped.notes);
  ASSERT_TRUE(grouped.network.has_value());
  EXPECT_EQ(grouped.network->layers.front().groups, 2);
  const OnnxCheck softmax = check_onnx(model("eq_softmax_a.onnx"));
  ASSERT_TRUE(softmax.network.has_value());
  EXPECT_EQ(softmax.network->host_activation, "Softmax");
  const OnnxCheck logsoftmax = check_onnx(model("eq_logsoftmax_a.onnx"));
  ASSERT_TRUE(logsoftmax.network.has_value());
  EXPECT_EQ(logsoftmax.network->host_activation, "LogSoftmax");
}

// A bias is quantized at the sums' scale, round half to even: checked on a float model whose exponents the
// test knows (ok_fc's biases are zero: none).
TEST(OnnxImport, ZeroBiasesGiveNoBias) {
  const Network n = import_onnx(model("ok_fc.onnx"), read_calibration("ok_fc"));
  for (const LayerSpec& l : n.layers) EXPECT_EQ(l.bias, nullptr);
}

TEST(OnnxImport, FilesThatCannotBeReadAreNetworkErrors) {
  const TempDir dir;
  EXPECT_NE(error_of(dir.path("none.onnx")).find("cannot read"), std::string::npos);
  // a file over protobuf's 2 GB - 1 is refused before it is read (a sparse file: nothing is written), and the
  // message says how such a model is saved
  const std::string big = dir.write("big.onnx", "");
  std::filesystem::resize_file(big, kMaxOnnxFileBytes + 1);
  EXPECT_EQ(kMaxOnnxFileBytes, 2147483647u);
  EXPECT_EQ(error_of(big), big + ": expected an ONNX model of at most 2147483647 bytes (protobuf's limit for one message), "
                                 "got 2147483648: save it with its weights in an external file "
                                 "(onnx.save(model, path, save_as_external_data=True))");
  EXPECT_EQ(check_onnx(big).problems, std::vector<std::string>{error_of(big)});
  // every prefix of a good model is refused or imports; none crashes
  const std::string good = read_text(model("ok_residual_qdq.onnx"));
  for (std::size_t n = 0; n < good.size(); n += 97) {
    const std::string cut = dir.write("cut.onnx", good.substr(0, n));
    EXPECT_NO_THROW({
      try {
        import_onnx(cut);
      } catch (const NetworkError&) {
      }
    }) << n;
  }
}

// The old 64 MB cap is gone: a model of 65 MB (ok_conv_chain.onnx with a 65 MB doc_string appended as
// ModelProto's field 6, which protobuf merges into the message) imports as the model does, from the file
// and from its bytes.
TEST(OnnxImport, AModelOverTheOld64MBCapImports) {
  const TempDir dir;
  std::string bytes = read_text(model("ok_conv_chain.onnx"));
  const std::size_t n = (65u << 20);
  bytes += '\x32';  // field 6, length-delimited
  for (std::size_t v = n; ; v >>= 7) {  // its length as a varint
    if (v < 0x80) {
      bytes += static_cast<char>(v);
      break;
    }
    bytes += static_cast<char>((v & 0x7f) | 0x80);
  }
  bytes.append(n, 'x');
  const std::string big = dir.write("big.onnx", bytes);
  ASSERT_GT(std::filesystem::file_size(big), 64u << 20);
  const std::vector<std::vector<float>> calib = read_calibration("ok_conv_chain");
  const Expected want = read_expected("ok_conv_chain");
  expect_import(import_onnx(big, calib), want, "ok_conv_chain with 65 MB of doc_string");
  expect_import(parse_onnx(bytes, big, calib), want, "ok_conv_chain with 65 MB of doc_string, as bytes");
  EXPECT_TRUE(check_onnx(big).problems.empty()) << ::testing::PrintToString(check_onnx(big).problems);
}

// tests/onnx/external/: ok_conv_chain.onnx saved as onnx.save(save_as_external_data=True) writes it, all its
// tensors in one file and one file per tensor: both import to the same layers, weights, biases, shifts and
// exponents as the model with its data inside, calibrated or not, and s2cosim check takes them.
TEST(OnnxImport, ModelsWithExternalDataImportAsWithTheirDataInside) {
  const std::vector<std::vector<float>> calib = read_calibration("ok_conv_chain");
  const Network inside = import_onnx(model("ok_conv_chain.onnx"), calib);
  const Network inside_plain = import_onnx(model("ok_conv_chain.onnx"));
  for (const std::string name : {"external/one_file.onnx", "external/per_tensor/model.onnx"}) {
    SCOPED_TRACE(name);
    for (const bool calibrated : {true, false}) {
      const Network got = calibrated ? import_onnx(model(name), calib) : import_onnx(model(name));
      const Network& want = calibrated ? inside : inside_plain;
      expect_layers(got, want, true, name);
      ASSERT_EQ(got.layers.size(), want.layers.size());
      for (std::size_t i = 0; i < got.layers.size(); ++i) {
        ASSERT_EQ(got.layers[i].weights == nullptr, want.layers[i].weights == nullptr) << "layer " << i + 1;
        if (want.layers[i].weights) {
          EXPECT_EQ(*got.layers[i].weights, *want.layers[i].weights) << "layer " << i + 1;
        }
        ASSERT_EQ(got.layers[i].bias == nullptr, want.layers[i].bias == nullptr) << "layer " << i + 1;
        if (want.layers[i].bias) {
          EXPECT_EQ(*got.layers[i].bias, *want.layers[i].bias) << "layer " << i + 1;
        }
        EXPECT_EQ(got.layers[i].shift, want.layers[i].shift) << "layer " << i + 1;
      }
      EXPECT_EQ(got.input_exponent, want.input_exponent);
      EXPECT_EQ(got.output_exponent, want.output_exponent);
    }
    const OnnxCheck check = check_onnx(model(name));
    EXPECT_TRUE(check.problems.empty()) << ::testing::PrintToString(check.problems);
    EXPECT_TRUE(check.network.has_value());
  }
  expect_import(import_onnx(model("external/one_file.onnx"), calib), read_expected("ok_conv_chain"), "one_file.onnx");
}

// What the external-data reader refuses, each naming the model, the tensor, the file and what was expected:
// a file that is missing or too short, a location outside the model's directory, an offset or length beyond
// the data, dims that declare more than the file holds, keys it does not know; s2cosim check says the same.
TEST(OnnxImport, ExternalDataThatIsMissingShortOrOutsideIsRefused) {
  const std::string dir = model("external/");
  const std::string t = ": initializer 'conv1_w': ";
  const std::pair<const char*, std::string> cases[] = {
      {"bad_missing", t + "its external data file " + dir + "missing.data does not exist or is not a file"},
      {"bad_short", t + "its external data file " + dir +
                        "bad_short.data holds 200 bytes: expected 432 from offset 0 (its dims [4,3,3,3]), got 200"},
      {"bad_outside", t + "its external data location '../ok_conv_chain.onnx' leaves the model's directory"},
      {"bad_outside_deep",
       t + "its external data location 'per_tensor/../../ok_conv_chain.onnx' leaves the model's directory"},
      {"bad_absolute",
       t + "its external data location '/etc/hostname' is an absolute path; expected one relative to the model's directory"},
      {"bad_offset", t + "its external data file " + dir +
                         "one_file.data holds 4372 bytes: expected 432 from offset 4376 (its dims [4,3,3,3]), got 0"},
      {"bad_offset_end", t + "its external data file " + dir +
                             "one_file.data holds 4372 bytes: expected 432 from offset 4272 (its dims [4,3,3,3]), got 100"},
      {"bad_length", t + "its external data file " + dir + "one_file.data: length 400 bytes, its dims [4,3,3,3] need 432"},
      {"bad_offset_text", t + "external data's offset '-4' is not a byte count"},
      {"bad_key", t + "external data key 'basepath' is not known (location, offset, length, checksum are)"},
      {"bad_dims", t + "its external data file " + dir +
                       "one_file.data holds 4372 bytes: expected 118747255799808 from offset 0 (its dims "
                       "[1099511627776,3,3,3]), got 4372"},
  };
  for (const auto& [name, why] : cases) {
    const std::string path = model(std::string("external/") + name + ".onnx");
    EXPECT_EQ(error_of(path), path + why);
    EXPECT_EQ(check_onnx(path).problems, std::vector<std::string>{path + why});
  }
}

TEST(OnnxImport, CalibrationOfTheWrongSizeIsRefused) {
  const std::string path = model("ok_fc.onnx");
  const std::string e = error_of(path, {std::vector<float>(23, 0.5f)});
  EXPECT_NE(e.find("calibration input 1 has 23 values; the model's input [24,1,1] has 24"), std::string::npos) << e;
  // an input that leaves a map all zero gives it no exponent
  const std::string z = error_of(path, {std::vector<float>(24, 0.0f)});
  EXPECT_NE(z.find("all zeros"), std::string::npos) << z;
}

// vectors/nets/ (tools/make_reference_nets.py): the reference networks' QDQ and QLinear files import to the
// layer list with shifts the script wrote, and the float model's weights quantize to the QDQ file's. (The
// float model calibrated on NAME_input.npy is tests/real_networks_test.cpp's, which reads .npy files.)
TEST(OnnxImport, ReferenceNetworksImportToTheirLayerLists) {
  for (const std::string name : {"mlp", "tiny_cnn", "res_cnn", "stride_cnn", "lenet_bias", "bn_res_cnn", "dw_cnn"}) {
    SCOPED_TRACE(name);
    const std::string dir = source_path("vectors/nets/");
    const Network want = read_layer_list(dir + name + ".net");
    const Network qdq = import_onnx(dir + name + "_qdq.onnx");
    expect_layers(qdq, want, true, name + "_qdq.onnx");
    for (std::size_t i = 0; i < want.layers.size() && i < qdq.layers.size(); ++i)
      EXPECT_EQ(qdq.layers[i].groups, want.layers[i].groups) << name << ", layer " << i + 1;  // dw_cnn's depthwise CONV_2
    EXPECT_TRUE(qdq.input_exponent.has_value());
    EXPECT_NO_THROW(parse_network(qdq));
    std::vector<const Network*> others;
    const Network flt = import_onnx(dir + name + ".onnx");
    expect_layers(flt, want, false, name + ".onnx");
    others.push_back(&flt);
    std::optional<Network> qlinear;
    if (std::filesystem::exists(dir + name + "_qlinear.onnx")) {
      qlinear = import_onnx(dir + name + "_qlinear.onnx");
      expect_layers(*qlinear, want, true, name + "_qlinear.onnx");
      EXPECT_EQ(qlinear->input_exponent, qdq.input_exponent);
      EXPECT_EQ(qlinear->output_exponent, qdq.output_exponent);
      others.push_back(&*qlinear);
    }
    // the biases of the QDQ file are those the script quantized (NAME_quant.json), layer by layer in order, each
    // with QUAN's rounding term
    std::vector<std::vector<std::int32_t>> want_bias;
    const nlohmann::json quant = read_json(dir + name + "_quant.json");  // (a range-for over a temporary's member would dangle)
    for (const auto& l : quant.at("layers")) {
      if (l.contains("bias")) want_bias.push_back(with_rounding(l));
      if (l.contains("projection") && l.at("projection").contains("bias")) want_bias.push_back(with_rounding(l.at("projection")));
    }
    std::vector<std::vector<std::int32_t>> got_bias;
    for (const LayerSpec& l : qdq.layers)
      if (l.bias) got_bias.push_back(*l.bias);
    EXPECT_EQ(got_bias, want_bias);
    for (const Network* o : others)
      for (std::size_t i = 0; i < qdq.layers.size(); ++i) {
        ASSERT_EQ(o->layers[i].weights == nullptr, qdq.layers[i].weights == nullptr) << "layer " << i + 1;
        if (qdq.layers[i].weights) {
          EXPECT_EQ(*o->layers[i].weights, *qdq.layers[i].weights) << "layer " << i + 1;
        }
      }
  }
}

// ---------------------------------------------------------------- graphs (issue 45)

namespace {

// The layer a layer's `inputs` name (-1: "input"), by the names the network's layers carry.
std::vector<int> input_layers(const Network& n, std::size_t i) {
  std::vector<int> v;
  for (const std::string& m : n.layers[i].inputs) {
    int k = -2;
    if (m == "input") k = -1;
    for (std::size_t j = 0; j < i; ++j)
      if (n.layers[j].name == m) k = static_cast<int>(j);
    v.push_back(k);
  }
  return v;
}

// Two networks alike layer by layer: kinds, sizes, shifts, the maps each reads (as layer numbers: the names
// differ), slices, groups, end padding, the element-wise operations' shifts and ReLU.
void expect_graph(const Network& got, const Network& want, const std::string& what) {
  EXPECT_EQ(got.input, want.input) << what;
  ASSERT_EQ(got.layers.size(), want.layers.size()) << what;
  for (std::size_t i = 0; i < want.layers.size(); ++i) {
    const LayerSpec& g = got.layers[i];
    const LayerSpec& w = want.layers[i];
    const std::string at = what + ", layer " + std::to_string(i + 1);
    ASSERT_EQ(g.kind, w.kind) << at;
    EXPECT_EQ(input_layers(got, i), input_layers(want, i)) << at;
    switch (w.kind) {
      case LayerKind::Conv:
      case LayerKind::Fc:
      case LayerKind::Pool:
        EXPECT_EQ(g.Wf, w.Wf) << at;
        EXPECT_EQ(g.Hf, w.Hf) << at;
        EXPECT_EQ(g.stride, w.stride) << at;
        EXPECT_EQ(g.pad, w.pad) << at;
        EXPECT_EQ(g.pad_end, w.pad_end) << at;
        if (w.kind != LayerKind::Pool) {
          EXPECT_EQ(g.D, w.D) << at;
          EXPECT_EQ(g.C, w.C) << at;
          EXPECT_EQ(g.relu, w.relu) << at;
          EXPECT_EQ(g.shift, w.shift) << at;
          EXPECT_EQ(shifts_of(g), shifts_of(w)) << at;
        } else {
          EXPECT_EQ(g.pool, w.pool) << at;
        }
        break;
      case LayerKind::ResidualEnd:
        EXPECT_EQ(g.shortcut, w.shortcut) << at;
        EXPECT_EQ(g.relu, w.relu) << at;
        break;
      case LayerKind::Slice:
        EXPECT_EQ(g.first, w.first) << at;
        EXPECT_EQ(g.count, w.count) << at;
        break;
      case LayerKind::Shuffle:
        EXPECT_EQ(g.groups, w.groups) << at;
        break;
      case LayerKind::Elementwise:
        ASSERT_NE(g.elementwise, nullptr) << at;
        EXPECT_EQ(g.elementwise->op, w.elementwise->op == EltOp::Mul && g.elementwise->op == EltOp::ChannelMul
                                         ? EltOp::ChannelMul : w.elementwise->op) << at;
        if (w.elementwise->op != EltOp::Table) {  // (a table has no ReLU of its own)
          EXPECT_EQ(g.elementwise->relu, w.elementwise->relu) << at;
        }
        if (w.elementwise->op == EltOp::Table) {
          EXPECT_EQ(g.elementwise->table, w.elementwise->table) << at << " " << g.elementwise->function;
        } else if (w.elementwise->op != EltOp::Affine) {
          EXPECT_EQ(g.elementwise->shift, w.elementwise->shift) << at;
          EXPECT_EQ(g.elementwise->shift_a, w.elementwise->shift_a) << at;
          EXPECT_EQ(g.elementwise->shift_b, w.elementwise->shift_b) << at;
        }
        break;
      default:
        break;
    }
  }
}

}  // namespace

// vectors/nets/'s graph networks (tools/make_reference_nets.py: concat, ceil-mode pooling, an affine BatchNorm,
// slices and a shuffle, tables, channel and element-wise multiplications, Add, a residual end with in=): their
// QDQ files import to the layer lists the script wrote, the affines' integers to its NAME_quant.json; the float
// files (without calibration) to the same layers.
TEST(OnnxImport, GraphReferenceNetworksImportToTheirLayerLists) {
  for (const std::string name : {"fire_cnn", "dense_cnn", "shuffle_cnn", "se_cnn"}) {
    SCOPED_TRACE(name);
    const std::string dir = source_path("vectors/nets/");
    const Network want = read_layer_list(dir + name + ".net");
    const Network qdq = import_onnx(dir + name + "_qdq.onnx");
    expect_graph(qdq, want, name + "_qdq.onnx");
    EXPECT_NO_THROW(parse_network(qdq));
    const nlohmann::json quant = read_json(dir + name + "_quant.json");
    std::size_t affine = 0;
    for (const auto& l : quant.at("layers")) {
      if (l.at("op") != "affine") continue;
      while (affine < qdq.layers.size() &&
             !(qdq.layers[affine].elementwise && qdq.layers[affine].elementwise->op == EltOp::Affine))
        ++affine;
      ASSERT_LT(affine, qdq.layers.size());
      const ElementwiseSpec& e = *qdq.layers[affine++].elementwise;
      EXPECT_EQ(e.shift, l.at("S").get<int>());
      EXPECT_EQ(e.scale, l.at("m").get<std::vector<std::int32_t>>());
      EXPECT_EQ(e.offset, l.at("o").get<std::vector<std::int32_t>>());
    }
    EXPECT_EQ(qdq.input_exponent, std::optional<int>(quant.at("input").at("e").get<int>()));
    EXPECT_EQ(qdq.output_exponent, std::optional<int>(quant.at("output").at("e").get<int>()));
    const Network flt = import_onnx(dir + name + ".onnx");
    ASSERT_EQ(flt.layers.size(), want.layers.size());
    for (std::size_t i = 0; i < flt.layers.size(); ++i) {
      EXPECT_EQ(flt.layers[i].kind, want.layers[i].kind) << "layer " << i + 1;
      EXPECT_EQ(input_layers(flt, i), input_layers(want, i)) << "layer " << i + 1;
    }
  }
}

namespace {

// A float32 .npy file's values, C order (the reference networks' inputs; the harness's reader is not linked here).
std::vector<float> read_npy_f32(const std::string& path) {
  const std::string b = read_text(path);
  EXPECT_EQ(b.rfind("\x93NUMPY", 0), 0u) << path;
  const std::size_t len = static_cast<unsigned char>(b[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(b[9])) << 8);
  const std::string header = b.substr(10, len);
  EXPECT_NE(header.find("'<f4'"), std::string::npos) << header;
  EXPECT_NE(header.find("'fortran_order': False"), std::string::npos) << header;
  std::vector<float> v((b.size() - 10 - len) / 4);
  std::memcpy(v.data(), b.data() + 10 + len, v.size() * 4);
  return v;
}

}  // namespace

// The float files calibrated on NAME_input.npy, as the script calibrated them: every exponent, shift, table and
// element-wise shift as in the layer list (a concatenation's group on the largest |value| over its maps).
TEST(OnnxImport, GraphReferenceNetworksCalibrateAsTheScriptDid) {
  // (shuffle_cnn.onnx writes its chunk as SplitToSequence whose sizes come from shape arithmetic: ConstantOfShape,
  // Equal, Where, Expand)
  for (const std::string name : {"fire_cnn", "dense_cnn", "shuffle_cnn", "se_cnn"}) {
    SCOPED_TRACE(name);
    const std::string dir = source_path("vectors/nets/");
    const Network want = read_layer_list(dir + name + ".net");
    const Network flt = import_onnx(dir + name + ".onnx", {read_npy_f32(dir + name + "_input.npy")});
    expect_graph(flt, want, name + ".onnx calibrated");
    const nlohmann::json quant = read_json(dir + name + "_quant.json");
    EXPECT_EQ(flt.input_exponent, std::optional<int>(quant.at("input").at("e").get<int>()));
    EXPECT_EQ(flt.output_exponent, std::optional<int>(quant.at("output").at("e").get<int>()));
  }
}

// A float graph of every new form: Split, Concat, Slice, a channel shuffle, LeakyRelu, PRelu (a table per
// channel), Tanh, HardSigmoid, Mul of two maps, SiLU as x * Sigmoid(x) (one table), ReduceMean, a channel Mul,
// an affine BatchNorm with its Relu, ceil-mode max pooling, ReduceMax keepdims=0 and a Gemm.
TEST(OnnxImport, AGraphOfEveryFormImportsLayerByLayer) {
  const std::string path = model("graph_ops.onnx");
  const Network n = import_onnx(path);
  using K = LayerKind;
  const std::vector<K> kinds = {K::Conv,        K::Slice,       K::Slice,       K::Conv,        K::Concat,
                                K::Shuffle,     K::Slice,       K::Elementwise, K::Elementwise, K::Elementwise,
                                K::Elementwise, K::Elementwise, K::Elementwise, K::Pool,        K::Elementwise,
                                K::Elementwise, K::Pool,        K::Pool,        K::Fc};
  ASSERT_EQ(n.layers.size(), kinds.size());
  for (std::size_t i = 0; i < kinds.size(); ++i) EXPECT_EQ(n.layers[i].kind, kinds[i]) << "layer " << i + 1;
  const auto& L = n.layers;
  EXPECT_TRUE(L[0].relu);
  EXPECT_EQ(std::make_pair(L[1].first, L[1].count), std::make_pair(0, 3));
  EXPECT_EQ(std::make_pair(L[2].first, L[2].count), std::make_pair(3, 5));
  EXPECT_EQ(L[2].inputs, std::vector<std::string>{L[0].name});  // the second slice reads the ReLU's map again
  EXPECT_EQ(L[0].name, "r1");
  EXPECT_TRUE(L[3].inputs.empty());
  EXPECT_EQ(L[4].inputs, (std::vector<std::string>{"sa", "cb_out"}));
  EXPECT_EQ(L[1].name, "sa");
  EXPECT_EQ(L[5].groups, 2);
  EXPECT_EQ(std::make_pair(L[6].first, L[6].count), std::make_pair(1, 4));
  auto elt = [&](std::size_t i) { return *L[i].elementwise; };
  EXPECT_EQ(elt(7).function, "leakyrelu(alpha=0.1)");
  EXPECT_EQ(elt(8).tables(), 4);  // PRelu: a slope per channel
  EXPECT_EQ(elt(9).function, "tanh");
  EXPECT_EQ(elt(10).function, "hardsigmoid(alpha=0.25, beta=0.5)");
  EXPECT_EQ(L[10].inputs, std::vector<std::string>{L[8].name});  // HardSigmoid reads the PRelu's map
  EXPECT_EQ(elt(11).op, EltOp::Mul);
  EXPECT_EQ(L[11].inputs, (std::vector<std::string>{"th", "hs"}));
  EXPECT_EQ(elt(12).function, "silu");  // x * Sigmoid(x): one table of x
  EXPECT_TRUE(L[12].inputs.empty());
  EXPECT_EQ(L[13].pool, PoolType::Avg);  // ReduceMean over H and W
  EXPECT_EQ(std::make_pair(L[13].Wf, L[13].Hf), std::make_pair(8, 8));
  EXPECT_EQ(elt(14).op, EltOp::ChannelMul);
  EXPECT_EQ(L[14].inputs, (std::vector<std::string>{"silu", "gate"}));  // the map first, its factors second
  EXPECT_EQ(elt(15).op, EltOp::Affine);
  EXPECT_TRUE(elt(15).relu);
  EXPECT_TRUE(L[15].relu);
  EXPECT_EQ(L[16].pool, PoolType::Max);  // 3x3/2 ceil_mode on 8x8: 4x4, one zero row and column at the end
  EXPECT_EQ(L[16].pad_end, 1);
  EXPECT_EQ(L[17].pool, PoolType::Max);  // ReduceMax over H and W, then flattened
  EXPECT_EQ(std::make_pair(L[17].Wf, L[17].Hf), std::make_pair(4, 4));
  EXPECT_EQ(L[18].D, 4);
  // without calibration: placeholder exponents, said so
  const std::string notes = ::testing::PrintToString(n.notes);
  EXPECT_NE(notes.find("placeholder exponent 4"), std::string::npos) << notes;
  EXPECT_EQ(elt(9).table, activation_table(default_activation("tanh"), 4, 4));
  // calibrated: every map's exponent known; the tables are the activations' at them
  const Network c = import_onnx(path, read_calibration("graph_ops"));
  ASSERT_EQ(c.layers.size(), kinds.size());
  EXPECT_TRUE(c.output_exponent.has_value());
  EXPECT_EQ(c.layers[0].shift >= 0, true);
  EXPECT_NO_THROW(parse_network(c));
  const OnnxCheck check = check_onnx(path);
  EXPECT_TRUE(check.problems.empty()) << ::testing::PrintToString(check.problems);
}

// Weights per output channel (docs/real_networks.md, "Per-channel weight scales"): the float model calibrated and
// its QDQ twin with per-channel scales give the exponents, shifts, weights and biases make_test_models.py worked
// out (per_channel.json), c2's channel of tiny weights at shift 31 with a note; uncalibrated, the weights are per
// channel all the same and there are no shifts.
TEST(OnnxImport, PerChannelWeightScalesAreThoseWorkedOutIndependently) {
  const nlohmann::json want = read_json(model("per_channel.json"));
  const Network flt = import_onnx(model("per_channel.onnx"), read_calibration("per_channel"));
  const Network qdq = import_onnx(model("per_channel_qdq.onnx"));
  const Network bare = import_onnx(model("per_channel.onnx"));
  for (const Network* n : {&flt, &qdq}) {
    const std::string what = n == &flt ? "per_channel.onnx" : "per_channel_qdq.onnx";
    SCOPED_TRACE(what);
    const std::vector<std::size_t> at = {0, 1, 3};  // c1, c2, fc (the global pooling between)
    ASSERT_EQ(n->layers.size(), 4u);
    EXPECT_EQ(n->input_exponent, std::optional<int>(want.at("exponents").at(0).get<int>()));
    EXPECT_EQ(n->output_exponent, std::optional<int>(want.at("exponents").at(1).get<int>()));
    for (std::size_t k = 0; k < at.size(); ++k) {
      const nlohmann::json& l = want.at("layers").at(k);
      const LayerSpec& g = n->layers[at[k]];
      SCOPED_TRACE(l.at("name").get<std::string>());
      const auto shifts = l.at("shifts").get<std::vector<std::uint8_t>>();
      EXPECT_EQ(shifts_of(g), shifts);
      EXPECT_EQ(g.shift, *std::min_element(shifts.begin(), shifts.end()));
      std::vector<std::int8_t> w;
      for (const int x : l.at("weights").get<std::vector<int>>()) w.push_back(static_cast<std::int8_t>(x));
      ASSERT_NE(g.weights, nullptr);
      EXPECT_EQ(*g.weights, w);
      if (l.contains("bias")) {
        ASSERT_NE(g.bias, nullptr);
        EXPECT_EQ(*g.bias, with_rounding(l));
      }
      if (n == &flt && k != 1) {
        EXPECT_EQ(*bare.layers[at[k]].weights, w) << "uncalibrated (c2's cap needs e_x, e_y)";
      }
      EXPECT_EQ(bare.layers[at[k]].shifts, nullptr);
      EXPECT_EQ(bare.layers[at[k]].shift, -1);
    }
    EXPECT_NO_THROW(parse_network(*n));
  }
  auto note = [](const Network& n, const std::string& what) {
    return std::count_if(n.notes.begin(), n.notes.end(), [&](const std::string& s) { return s.find(what) != std::string::npos; });
  };
  EXPECT_EQ(note(flt, "weights per output channel, exponents"), 3);
  EXPECT_EQ(note(flt, "tiny weights taken at shift 31"), 1);
  EXPECT_EQ(note(qdq, "weights per output channel, exponents"), 3);
}

// A QDQ graph whose exponents are known: the affine's m, o and S, the SiLU and LeakyRelu tables, the Add's,
// Mul's and channel Mul's shifts as make_test_models.py worked them out on its own (graph_qdq.json).
TEST(OnnxImport, QdqGraphIntegersAreThoseWorkedOutIndependently) {
  const Network n = import_onnx(model("graph_qdq.onnx"));
  const nlohmann::json want = read_json(model("graph_qdq.json"));
  ASSERT_EQ(n.layers.size(), 7u);
  for (const std::size_t i : {0, 1, 2, 3, 4, 6}) {
    ASSERT_EQ(n.layers[i].kind, LayerKind::Elementwise) << i;
    ASSERT_NE(n.layers[i].elementwise, nullptr) << i;
  }
  EXPECT_EQ(n.layers[5].kind, LayerKind::Pool);  // ReduceMean: keeps its input's exponent
  auto elt = [&](std::size_t i) { return *n.layers[i].elementwise; };
  EXPECT_EQ(elt(0).op, EltOp::Affine);
  EXPECT_TRUE(elt(0).relu);
  EXPECT_EQ(elt(0).shift, want.at("affine").at("S").get<int>());
  EXPECT_EQ(elt(0).scale, want.at("affine").at("m").get<std::vector<std::int32_t>>());
  EXPECT_EQ(elt(0).offset, want.at("affine").at("o").get<std::vector<std::int32_t>>());
  auto ints8 = [](const nlohmann::json& j) {
    std::vector<std::int8_t> v;
    for (const int x : j.get<std::vector<int>>()) v.push_back(static_cast<std::int8_t>(x));
    return v;
  };
  EXPECT_EQ(elt(1).function, "silu");
  EXPECT_EQ(elt(1).table, ints8(want.at("silu")));
  EXPECT_EQ(elt(2).table, ints8(want.at("leaky")));
  EXPECT_EQ(elt(3).op, EltOp::Add);
  EXPECT_EQ(elt(3).shift_a, want.at("add").at("shift_a").get<int>());
  EXPECT_EQ(elt(3).shift_b, want.at("add").at("shift_b").get<int>());
  EXPECT_EQ(elt(3).shift, want.at("add").at("shift").get<int>());
  EXPECT_EQ(elt(4).op, EltOp::Mul);
  EXPECT_EQ(elt(4).shift, want.at("mul").at("shift").get<int>());
  EXPECT_EQ(elt(6).op, EltOp::ChannelMul);
  EXPECT_EQ(elt(6).shift, want.at("channel_mul").at("shift").get<int>());
  EXPECT_EQ(n.input_exponent, std::optional<int>(want.at("exponents")[0].get<int>()));
  EXPECT_EQ(n.output_exponent, std::optional<int>(want.at("exponents")[1].get<int>()));
}

// Forms that were refused as not a chain: a map read by an Add of two branches (a residual end with in=), a unit
// in a unit's branch, a Relu after a pooling (a table), a BatchNorm after a pooling (an affine), a Sigmoid inside
// the graph (a table), ceil-mode max pooling after a ReLU (pad_end).
TEST(OnnxImport, GraphFormsThatWereRefusedImport) {
  // two convolutions of the input side by side: an element-wise Add (neither is computed from the other)
  const Network two = import_onnx(model("graph_two_branches.onnx"));
  ASSERT_EQ(two.layers.size(), 3u);
  ASSERT_EQ(two.layers[2].kind, LayerKind::Elementwise);
  EXPECT_EQ(two.layers[2].elementwise->op, EltOp::Add);
  EXPECT_EQ(two.layers[2].inputs, (std::vector<std::string>{"c1_out", "c2_out"}));
  EXPECT_EQ(two.layers[1].inputs, std::vector<std::string>{"input"});
  const Network nested = import_onnx(model("graph_nested.onnx"));
  // the inner unit as a chain has it (b1's map read by b2 and the inner Add); the outer Add adds two maps
  ASSERT_EQ(nested.layers.size(), 6u);
  EXPECT_EQ(nested.layers[2].kind, LayerKind::ResidualBegin);
  EXPECT_EQ(nested.layers[4].kind, LayerKind::ResidualEnd);
  EXPECT_TRUE(nested.layers[4].inputs.empty());
  ASSERT_EQ(nested.layers[5].kind, LayerKind::Elementwise);
  EXPECT_EQ(nested.layers[5].elementwise->op, EltOp::Add);
  EXPECT_EQ(nested.layers[5].inputs, (std::vector<std::string>{"a", "inner"}));
  const Network relu = import_onnx(model("graph_relu_after_pool.onnx"));
  ASSERT_EQ(relu.layers.back().kind, LayerKind::Elementwise);
  EXPECT_EQ(relu.layers.back().elementwise->function, "relu");
  const Network bn = import_onnx(model("graph_bn_after_pool.onnx"));
  ASSERT_EQ(bn.layers.back().kind, LayerKind::Elementwise);
  EXPECT_EQ(bn.layers.back().elementwise->op, EltOp::Affine);
  const Network sig = import_onnx(model("graph_sigmoid_mid.onnx"));
  ASSERT_EQ(sig.layers.size(), 3u);
  EXPECT_EQ(sig.layers[1].elementwise->function, "sigmoid");
  const Network ceil = import_onnx(model("graph_maxpool_ceil.onnx"));
  EXPECT_EQ(ceil.layers.back().pad_end, 1);
  // opset 14's HardSwish op: a table; a BatchNorm after it is an affine, with a note that it could fold into the
  // convolution after it
  const Network hs = import_onnx(model("graph_hardswish.onnx"));
  ASSERT_EQ(hs.layers.size(), 4u);
  EXPECT_EQ(hs.layers[1].elementwise->function, "hardswish");
  EXPECT_EQ(hs.layers[2].elementwise->op, EltOp::Affine);
  const std::string notes = ::testing::PrintToString(hs.notes);
  EXPECT_NE(notes.find("node bn (BatchNormalization): its affine could fold into the next convolution, node c2 (Conv)"),
            std::string::npos) << notes;
  for (const Network* n : {&two, &nested, &relu, &bn, &sig, &ceil, &hs}) EXPECT_NO_THROW(parse_network(*n)) << n->name;
}
