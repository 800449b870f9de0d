// The ONNX import (mapper/onnx/import.h): every accepted form gives the layer list, int8 weights, shifts and
// exponents that tests/onnx/make_test_models.py worked out on its own (a numpy run of the float graph and
// docs/real_networks.md's quantization); the QDQ and QLinear forms of each network import to the same; every
// refused form and malformed file is a NetworkError naming the node and op type (tests/onnx/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

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

// The layers as the import gave them equal a layer list's, field by field; shifts as given there, or -1
// everywhere (with_shifts false: a float model without calibration).
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
    if (f.path().extension() != ".onnx" || n.rfind("ok_", 0) == 0 || n.rfind("eq_", 0) == 0) continue;
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
    const Network a = import_onnx(model("eq_" + name + "_a.onnx"), calib);
    const Network b = import_onnx(model("eq_" + name + "_b.onnx"), calib);
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
  EXPECT_NE(bad.problems[1].find("node tanh (Tanh): op type 'Tanh' is not supported: "), std::string::npos) << bad.problems[1];
  EXPECT_NE(bad.problems[1].find("retrain with ReLU"), std::string::npos) << bad.problems[1];
  EXPECT_NE(bad.problems[2].find("node gconv (Conv): group=5"), std::string::npos) << bad.problems[2];
  // the nodes after a refused one are checked against the shape ONNX gives its output, not its input's
  const OnnxCheck one = check_onnx(model("bad_cascade.onnx"));
  ASSERT_EQ(one.problems.size(), 1u) << ::testing::PrintToString(one.problems);
  EXPECT_NE(one.problems[0].find("node asym (Conv): asymmetric pads [1,0,1,0]"), std::string::npos) << one.problems[0];
  const OnnxCheck good = check_onnx(model("eq_batchnorm_a.onnx"));
  EXPECT_TRUE(good.problems.empty()) << ::testing::PrintToString(good.problems);
  ASSERT_TRUE(good.network.has_value());
  const std::string notes = ::testing::PrintToString(good.notes);
  EXPECT_NE(notes.find("node bn (BatchNormalization): folded into node conv (Conv)"), std::string::npos) << notes;
  const OnnxCheck grouped = check_onnx(model("eq_grouped_a.onnx"));
  EXPECT_NE(::testing::PrintToString(grouped.notes).find("2 times the grouped convolution's multiplications"), std::string::npos);
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
    // the biases of the QDQ file are those the script quantized (NAME_quant.json), layer by layer in order
    std::vector<std::vector<std::int32_t>> want_bias;
    const nlohmann::json quant = read_json(dir + name + "_quant.json");  // (a range-for over a temporary's member would dangle)
    for (const auto& l : quant.at("layers")) {
      if (l.contains("bias")) want_bias.push_back(l.at("bias").get<std::vector<std::int32_t>>());
      if (l.contains("projection") && l.at("projection").contains("bias"))
        want_bias.push_back(l.at("projection").at("bias").get<std::vector<std::int32_t>>());
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
