// Real networks end to end (docs/real_networks.md): ONNX models with their trained weights and a real input
// through the importer, the mapper, the distributor and both backends, against reference outputs PyTorch
// computed in exact integer arithmetic (vectors/nets/, made by tools/make_reference_nets.py). And .npy files
// in and out.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "harness/commands/net_runner.h"
#include "harness/stimulus/npy_file.h"
#include "test_support.h"

using namespace s2;
using namespace s2::test;

namespace {

std::string net_file(const std::string& name) { return source_path("vectors/nets/" + name); }

TEST(Npy, RoundTripAndNumpysOwnFiles) {
  const TempDir dir;
  const std::vector<std::int8_t> v{-128, -1, 0, 1, 127, 5};
  write_npy(dir.path("a.npy"), {1, 2, 3}, v);
  const NpyTensor t = read_npy(dir.path("a.npy"));
  EXPECT_FALSE(t.is_float);
  EXPECT_EQ(t.shape, (std::vector<std::size_t>{1, 2, 3}));
  EXPECT_EQ(t.int8, v);
  EXPECT_EQ(t.shape_text(), "(1, 2, 3)");
  // written by NumPy (tools/make_reference_nets.py): a float32 input and an int8 reference
  const NpyTensor x = read_npy(net_file("tiny_cnn_input.npy"));
  EXPECT_TRUE(x.is_float);
  EXPECT_EQ(x.shape, (std::vector<std::size_t>{1, 3, 16, 16}));
  EXPECT_EQ(x.float32.size(), 3u * 16 * 16);
  const NpyTensor y = read_npy(net_file("tiny_cnn_reference.npy"));
  EXPECT_FALSE(y.is_float);
  EXPECT_EQ(y.shape, (std::vector<std::size_t>{1, 10}));
}

struct NetRun {
  int exit = -1;
  std::string out, err;
  std::vector<std::int8_t> output;
  // every block's output equalled its golden block on every backend, and the network's output the golden
  // chain's. (The exit code is 1 also for a cycle deviation between model and RTL: these tiny layers are
  // far from the layers the model's timing is calibrated on; the data is what this file tests.)
  bool data_ok() const {
    return exit != 2 && out.find("MISMATCH") == std::string::npos && out.find("HANG") == std::string::npos &&
           out.find(" ERROR ") == std::string::npos && out.find("equals the golden kernels' run") != std::string::npos;
  }
};


NetRun run(const std::string& model, const std::string& input, const std::string& target, const std::string& backend,
           const std::vector<std::string>& strategies, const std::string& reference = "") {
  const TempDir dir;
  RunNetRequest req;
  req.net = net_file(model);
  req.input_npy = net_file(input);
  req.output_npy = dir.path("y.npy");
  req.target = target;
  if (target == "s2") req.preset = "mini";
  req.backend = backend;
  req.strategies = strategies;
  req.whole = true;  // a block the strategy does not apply to runs the next that does
  if (!reference.empty()) req.reference_npy = net_file(reference);
  std::ostringstream out, err;
  NetRun r;
  r.exit = run_net(req, out, err);
  r.out = out.str();
  r.err = err.str();
  if (r.exit != 2) r.output = read_npy(req.output_npy).int8;
  return r;
}

// Each model form (float with its calibration input, QDQ, QLinear) on QPE-DRAM, both backends, and the
// network's output equals PyTorch's bit for bit. The "hot" inputs run through the same quantized network
// (QDQ, QLinear: no calibration) and saturate QUAN and the residual additions (vectors/nets/README.md).
struct NetCase {
  std::string name, form, input;  // form: "" (float), "_qdq", "_qlinear"; input: "" or "_hot"
};
void PrintTo(const NetCase& c, std::ostream* os) { *os << c.name << c.form << ".onnx on " << c.name << "_input" << c.input << ".npy"; }
class ReferenceNet : public ::testing::TestWithParam<NetCase> {};

TEST_P(ReferenceNet, OutputEqualsPyTorchsOnBothBackends) {
  const NetCase& c = GetParam();
  const NetRun r = run(c.name + c.form + ".onnx", c.name + "_input" + c.input + ".npy", "qpe", "both", {"fuse_noreuse"},
                       c.name + "_reference" + c.input + ".npy");
  ASSERT_TRUE(r.data_ok()) << r.out << r.err;
  EXPECT_NE(r.out.find("from the RTL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("equals the reference"), std::string::npos) << r.out;  // run-net --reference says so too
  EXPECT_EQ(r.output, read_npy(net_file(c.name + "_reference" + c.input + ".npy")).int8) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Nets, ReferenceNet,
                         ::testing::Values(NetCase{"mlp", "", ""}, NetCase{"mlp", "_qdq", ""}, NetCase{"mlp", "_qlinear", ""},
                                           NetCase{"tiny_cnn", "", ""}, NetCase{"tiny_cnn", "_qdq", ""},
                                           NetCase{"tiny_cnn", "_qlinear", ""}, NetCase{"res_cnn", "", ""},
                                           NetCase{"res_cnn", "_qdq", ""}, NetCase{"stride_cnn", "", ""},
                                           NetCase{"stride_cnn", "_qdq", ""}, NetCase{"mlp", "_qdq", "_hot"},
                                           NetCase{"tiny_cnn", "_qlinear", "_hot"}, NetCase{"res_cnn", "_qdq", "_hot"},
                                           NetCase{"stride_cnn", "_qdq", "_hot"},
                                           // as PyTorch users write them: biases, BatchNorm folded by the
                                           // exporter, ReLU6, a depthwise convolution
                                           NetCase{"lenet_bias", "", ""}, NetCase{"lenet_bias", "_qdq", ""},
                                           NetCase{"lenet_bias", "_qdq", "_hot"}, NetCase{"bn_res_cnn", "", ""},
                                           NetCase{"bn_res_cnn", "_qdq", ""}, NetCase{"bn_res_cnn", "_qdq", "_hot"},
                                           NetCase{"dw_cnn", "", ""}, NetCase{"dw_cnn", "_qdq", ""},
                                           NetCase{"dw_cnn", "_qdq", "_hot"},
                                           // graphs: a fire module and ceil-mode pooling, a dense block with
                                           // pre-activation BatchNorm, ShuffleNet units, squeeze-and-excitation
                                           // with SiLU, Hardswish and an add of two maps
                                           NetCase{"fire_cnn", "", ""}, NetCase{"fire_cnn", "_qdq", ""},
                                           NetCase{"fire_cnn", "_qdq", "_hot"}, NetCase{"dense_cnn", "", ""},
                                           NetCase{"dense_cnn", "_qdq", ""}, NetCase{"dense_cnn", "_qdq", "_hot"},
                                           NetCase{"shuffle_cnn", "", ""}, NetCase{"shuffle_cnn", "_qdq", ""},
                                           NetCase{"shuffle_cnn", "_qdq", "_hot"}, NetCase{"se_cnn", "", ""},
                                           NetCase{"se_cnn", "_qdq", ""}, NetCase{"se_cnn", "_qdq", "_hot"}),
                         [](const auto& info) {
                           const NetCase& c = info.param;
                           return c.name + (c.form.empty() ? "_float" : c.form) + c.input;
                         });

// Every strategy of the distributor computes the same network output.
TEST(RealNetworks, EveryStrategyGivesPyTorchsOutput) {
  for (const std::string name : {"res_cnn", "stride_cnn", "lenet_bias", "bn_res_cnn", "dw_cnn"})
    for (const std::string st : {"nofuse_noreuse", "fuse_reuse"}) {
      const NetRun r = run(name + "_qdq.onnx", name + "_input.npy", "qpe", "model", {st});
      ASSERT_TRUE(r.data_ok()) << name << " " << st << "\n" << r.out << r.err;
      EXPECT_EQ(r.output, read_npy(net_file(name + "_reference.npy")).int8) << name << " " << st;
    }
}

// On the chip (the mini preset: storage QPEs and two DRAMs), both backends.
TEST(RealNetworks, OnTheChipOutputEqualsPyTorchs) {
  for (const std::string name : {"tiny_cnn", "res_cnn", "stride_cnn", "lenet_bias", "bn_res_cnn", "dw_cnn"}) {
    const NetRun r = run(name + "_qdq.onnx", name + "_input.npy", "s2", "both", {"fuse_reuse"});
    ASSERT_TRUE(r.data_ok()) << name << "\n" << r.out << r.err;
    EXPECT_EQ(r.output, read_npy(net_file(name + "_reference.npy")).int8) << name;
  }
}

// A float .npy of `descr` ('<f4' or '<f8') and shape text "(1, 10)", as NumPy writes it.
template <typename T>
void write_float_npy(const std::string& path, const std::string& descr, const std::string& shape, const std::vector<T>& v) {
  std::ofstream o(path, std::ios::binary);
  std::string h = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  h += std::string(64 - (10 + h.size() + 1) % 64, ' ') + "\n";
  o << "\x93NUMPY" << char(1) << char(0) << char(h.size() & 0xff) << char(h.size() >> 8) << h;
  o.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
}

// NumPy's default float64 is read as float32 (with a note): the same output; --calibrate gives the
// calibration set apart from the input (here the input itself: the same exponents, the same output; a
// directory with the hot input too: other exponents, a network that still runs).
TEST(RealNetworks, Float64InputsAndACalibrationSetApartFromTheInput) {
  const TempDir dir;
  const NpyTensor x = read_npy(net_file("lenet_bias_input.npy"));
  const std::vector<double> x64(x.float32.begin(), x.float32.end());
  write_float_npy(dir.path("x64.npy"), "<f8", "(1, 1, 28, 28)", x64);
  RunNetRequest req;
  req.net = net_file("lenet_bias.onnx");
  req.input_npy = dir.path("x64.npy");
  req.output_npy = dir.path("y.npy");
  req.strategies = {"fuse_noreuse"};
  req.reference_npy = net_file("lenet_bias_reference.npy");
  req.calibrate = net_file("lenet_bias_input.npy");
  std::ostringstream out, err;
  run_net(req, out, err);
  EXPECT_NE(out.str().find("note: --input " + req.input_npy + ": float64 read as float32"), std::string::npos) << out.str() << err.str();
  EXPECT_NE(out.str().find("calibration: 1 input of " + req.calibrate), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("equals the reference"), std::string::npos) << out.str();
  // a directory of two calibration inputs
  std::filesystem::create_directory(dir.path("calib"));
  std::filesystem::copy_file(net_file("lenet_bias_input.npy"), dir.path("calib") + "/a.npy");
  std::filesystem::copy_file(net_file("lenet_bias_input_hot.npy"), dir.path("calib") + "/b.npy");
  req.calibrate = dir.path("calib");
  req.reference_npy.clear();
  std::ostringstream out2, err2;
  EXPECT_NE(run_net(req, out2, err2), 2) << err2.str();
  EXPECT_NE(out2.str().find("calibration: 2 inputs of "), std::string::npos) << out2.str();
  // uint8 (an image as it was saved): read as float32, values as they are, with a note
  {
    std::ofstream o(dir.path("x8.npy"), std::ios::binary);
    std::string h = "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 28, 28), }";
    h += std::string(64 - (10 + h.size() + 1) % 64, ' ') + "\n";
    o << "\x93NUMPY" << char(1) << char(0) << char(h.size() & 0xff) << char(h.size() >> 8) << h;
    for (int i = 0; i < 784; ++i) o << static_cast<char>(static_cast<unsigned char>(i % 256));
  }
  req.input_npy = dir.path("x8.npy");
  req.calibrate.clear();
  std::ostringstream out4, err4;
  EXPECT_NE(run_net(req, out4, err4), 2) << err4.str();
  EXPECT_NE(out4.str().find(": uint8 read as float32 (values 0..255 as they are"), std::string::npos) << out4.str();
  req.input_npy = dir.path("x64.npy");
  // a calibration file whose size is not a whole number of inputs
  req.calibrate = net_file("tiny_cnn_input.npy");
  std::ostringstream out3, err3;
  EXPECT_EQ(run_net(req, out3, err3), 2);
  EXPECT_NE(err3.str().find("is not a whole number of the model's inputs of 784 values"), std::string::npos) << err3.str();
}

// s2cosim check: 0 for a model that will run, 1 with every problem, 2 for no file.
TEST(RealNetworks, CheckSaysWhetherAModelWillRun) {
  std::ostringstream out, err;
  EXPECT_EQ(check_model(net_file("dw_cnn.onnx"), out, err), 0) << out.str() << err.str();
  EXPECT_NE(out.str().find("the network will run"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("group=8 (depthwise): runs as per-group tasks"), std::string::npos) << out.str();
  std::ostringstream out2, err2;
  EXPECT_EQ(check_model(source_path("tests/onnx/bad_many.onnx"), out2, err2), 1) << out2.str();
  EXPECT_NE(out2.str().find("3 problems"), std::string::npos) << out2.str();
  std::ostringstream out3, err3;
  EXPECT_EQ(check_model(net_file("none.onnx"), out3, err3), 2);
}

// The float reference of a framework: the float model's own output (PyTorch's, here the dequantized integer
// reference is not it) is compared by correlation, largest error in output steps and top-1/top-5.
TEST(RealNetworks, AFloatReferenceIsComparedByCorrelationAndTopClasses) {
  const TempDir dir;
  RunNetRequest req;
  req.net = net_file("lenet_bias.onnx");
  req.input_npy = net_file("lenet_bias_input.npy");
  // the float stand-in for a framework's output: the reference's own values, dequantized (r = 1)
  const NpyTensor ref = read_npy(net_file("lenet_bias_reference.npy"));
  std::vector<float> f;
  for (const std::int8_t v : ref.int8) f.push_back(static_cast<float>(std::ldexp(double(v), -5)));
  const std::string path = dir.path("ref_f32.npy");
  write_float_npy(path, "<f4", "(1, 10)", f);
  req.reference_npy = path;
  req.strategies = {"fuse_noreuse"};
  req.json_out = dir.path("r.json");
  std::ostringstream out, err;
  run_net(req, out, err);
  EXPECT_NE(out.str().find("against the float reference"), std::string::npos) << out.str() << err.str();
  EXPECT_NE(out.str().find("correlation 1.0000, max error 0.0 output steps, top-1 agrees, top-5 agrees (pass"),
            std::string::npos) << out.str();
  const nlohmann::json j = read_json(req.json_out);
  EXPECT_EQ(j.at("output").at("float_reference").at("top1_agrees"), true) << j.at("output");
  // another class made the reference's top, half an output step above the output's top class: a tie the
  // int8 output cannot resolve, which passes and says so; three steps above: a different top-1, which fails
  const std::size_t top = static_cast<std::size_t>(std::max_element(f.begin(), f.end()) - f.begin());
  std::size_t other = top == 0 ? 1 : 0;  // the runner-up, so that the correlation stays high
  for (std::size_t i = 0; i < f.size(); ++i)
    if (i != top && f[i] > f[other]) other = i;
  for (const double steps : {0.5, 3.0}) {
    std::vector<float> g = f;
    g[other] = g[top] + static_cast<float>(std::ldexp(steps, -5));
    write_float_npy(path, "<f4", "(1, 10)", g);
    std::ostringstream o2, e2;
    run_net(req, o2, e2);
    const nlohmann::json k = read_json(req.json_out).at("output").at("float_reference");
    EXPECT_EQ(k.at("top1_agrees"), false);
    EXPECT_NEAR(k.at("top1_margin_steps").get<double>(), steps, 1e-4);
    if (steps < 1) {
      EXPECT_EQ(k.at("top1_tie"), true);
      EXPECT_NE(o2.str().find("top-1 is a tie (the reference's top class 0.50 output steps above the output's"), std::string::npos) << o2.str();
      EXPECT_NE(o2.str().find("(pass: r >= 0.98"), std::string::npos) << o2.str();
    } else {
      EXPECT_EQ(k.at("top1_tie"), false);
      EXPECT_NE(o2.str().find("top-1 DIFFERS (the reference's top class 3.0 output steps above"), std::string::npos) << o2.str();
      EXPECT_NE(o2.str().find("(FAIL: r >= 0.98"), std::string::npos) << o2.str();
    }
  }
}

// A one-channel input saved without its batch, (1, 28, 28), is the model's (1, H, W) map.
TEST(RealNetworks, AOneChannelInputWithoutBatchIsTaken) {
  const TempDir dir;
  const NpyTensor x = read_npy(net_file("lenet_bias_input_int8.npy"));
  ASSERT_EQ(x.shape, (std::vector<std::size_t>{1, 1, 28, 28}));
  write_npy(dir.path("x.npy"), {1, 28, 28}, x.int8);
  RunNetRequest req;
  req.net = net_file("lenet_bias_qdq.onnx");
  req.input_npy = dir.path("x.npy");
  req.output_npy = dir.path("y.npy");
  req.strategies = {"fuse_noreuse"};
  req.reference_npy = net_file("lenet_bias_reference.npy");
  std::ostringstream out, err;
  run_net(req, out, err);
  EXPECT_NE(out.str().find("equals the reference"), std::string::npos) << out.str() << err.str();
}

// An int8 input (already quantized) gives the same output as the float one it was quantized from.
TEST(RealNetworks, Int8InputIsTakenAsItIs) {
  for (const std::string input : {"", "_hot"}) {
    const NetRun r = run("res_cnn_qdq.onnx", "res_cnn_input" + input + "_int8.npy", "qpe", "model", {"fuse_noreuse"});
    ASSERT_TRUE(r.data_ok()) << r.out << r.err;
    EXPECT_EQ(r.output, read_npy(net_file("res_cnn_reference" + input + ".npy")).int8) << input;
  }
}

// --reference: an output that differs from it is a mismatch, in the console, the exit code and the result
// records (JUnit, HTML), with the first differing value and a rerun line.
TEST(RealNetworks, AnOutputThatDiffersFromTheReferenceIsAMismatch) {
  const TempDir dir;
  RunNetRequest req;
  req.net = net_file("tiny_cnn_qdq.onnx");
  req.input_npy = net_file("tiny_cnn_input.npy");
  req.reference_npy = net_file("tiny_cnn_reference_hot.npy");  // another input's output
  req.strategies = {"fuse_noreuse"};
  req.json_out = dir.path("r.json");
  std::ostringstream out, err;
  EXPECT_EQ(run_net(req, out, err), 1) << out.str() << err.str();
  const nlohmann::json j = read_json(req.json_out);
  const auto& checks = j.at("results").at("checks");
  ASSERT_FALSE(checks.empty());
  const auto& last = checks.back();
  EXPECT_EQ(last.at("name"), "network output");
  EXPECT_EQ(last.at("status"), "mismatch");
  EXPECT_NE(last.at("message").get<std::string>().find("differ from the reference"), std::string::npos) << last;
  EXPECT_NE(last.at("replay").get<std::string>().find("--reference"), std::string::npos) << last;
  EXPECT_EQ(j.at("output").at("equals_reference"), false);
  EXPECT_EQ(j.at("results").at("total").get<int>(), static_cast<int>(checks.size()));
}

TEST(RealNetworks, BadRequestsAreRefusedWithExitCode2) {
  const TempDir dir;
  auto refused = [&](RunNetRequest req, const std::string& says) {
    std::ostringstream out, err;
    EXPECT_EQ(run_net(req, out, err), 2) << out.str();
    EXPECT_NE(err.str().find(says), std::string::npos) << err.str();
  };
  RunNetRequest req;
  req.net = net_file("tiny_cnn_qdq.onnx");
  req.output_npy = dir.path("y.npy");
  refused(req, "--output needs --input");
  req.input_npy = net_file("mlp_input.npy");  // 64 values for a 3x16x16 input
  refused(req, "shape (1, 64), expected (3, 16, 16)");
  RunNetRequest list;
  list.net = net_file("tiny_cnn.net");  // a layer list has no input scale
  list.input_npy = net_file("tiny_cnn_input.npy");
  refused(list, "a float input needs the network's input scale");
  RunNetRequest float_model;  // a float model needs a float input to be quantized on
  float_model.net = net_file("tiny_cnn.onnx");
  float_model.input_npy = net_file("tiny_cnn_input_int8.npy");
  refused(float_model, "is a float model: it is quantized on a float input");
  RunNetRequest wrong_reference;  // the reference must be int8 with as many values as the output
  wrong_reference.net = net_file("tiny_cnn_qdq.onnx");
  wrong_reference.input_npy = net_file("tiny_cnn_input.npy");
  wrong_reference.reference_npy = net_file("tiny_cnn_input.npy");
  refused(wrong_reference, "expected 10 values");
  req.input_npy = net_file("tiny_cnn_input.npy");
  req.layers = {"CONV_1"};
  refused(req, "--layers leaves out the network's last block");
  // malformed ONNX files: exit 2, the file and what is wrong named, nothing run
  for (const auto& [file, says] : std::vector<std::pair<std::string, std::string>>{
           {"broken_truncated.onnx", "not an ONNX model"},
           {"broken_missing_init.onnx", "node c1 (Conv)"},
           {"broken_wrong_init_shape.onnx", "node c1 (Conv): weights 'w1' have shape"}}) {
    RunNetRequest bad;
    bad.net = source_path("tests/onnx/" + file);
    bad.input_npy = net_file("tiny_cnn_input.npy");
    refused(bad, bad.net + ": " + says);
  }
}

}  // namespace

namespace {

// The OctopuScheduler paper's MLP on the spinnaker2 preset with its worker counts: each layer in
// microseconds beside the silicon's (Table II), FC1's weight fetch and MLA time beside the paper's, and the
// preset's assumptions printed. (Only what is printed and that the workers are the paper's is tested: the
// gap to silicon is a measurement, in docs/figures.md.)
TEST(Silicon, OctopusMlpPrintsEveryLayerBesideTheSilicon) {
  const TempDir dir;
  RunNetRequest req;
  req.net = source_path("vectors/octopus_mlp.net");
  req.target = "s2";
  req.preset = "spinnaker2";
  req.strategies = {"fuse_noreuse"};
  req.whole = true;
  req.json_out = dir.path("r.json");
  std::ostringstream out, err;
  ASSERT_EQ(run_net(req, out, err), 0) << out.str() << err.str();
  const std::string o = out.str();
  for (const char* s : {"against silicon", "FC1+ReLU", "323 us", "217 us", "80 us", "688 us", "silicon 192 us", "silicon 29 us",
                        "8 (8)", "4 (4)", "1 (1)", "assumption (preset spinnaker2): PE clock", "assumption: a layer with a worker count",
                        "not predicted"})
    EXPECT_NE(o.find(s), std::string::npos) << s << "\n" << o;
  const nlohmann::json j = read_json(req.json_out);
  ASSERT_EQ(j.at("silicon").size(), 3u);
  // a --whole run: the blocks ran ARM timed alone, so there is no ARM-free figure
  for (const auto& row : j["silicon"]) EXPECT_FALSE(row.contains("model_us_arm_free")) << row;
  const auto& fc1 = j["silicon"][0];
  EXPECT_EQ(fc1.at("block"), "FC_1");
  EXPECT_GT(fc1.at("model_weight_fetch_us").get<double>(), 0.0);
  EXPECT_GT(fc1.at("model_mla_us").get<double>(), 0.0);
  // a worker's weight fetch and MLA time fit in the layer's time
  EXPECT_LT(fc1["model_weight_fetch_us"].get<double>() + fc1["model_mla_us"].get<double>(), fc1.at("model_us_arm_timed").get<double>());
  // --core-clocks: the ARM-free figures beside them, the ARM-timed ones the same
  req.core_clocks = true;
  req.json_out = dir.path("core.json");
  std::ostringstream out2, err2;
  ASSERT_EQ(run_net(req, out2, err2), 0) << out2.str() << err2.str();
  const nlohmann::json c = read_json(req.json_out);
  ASSERT_EQ(c.at("silicon").size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& row = c["silicon"][i];
    EXPECT_EQ(row.at("model_us_arm_timed"), j["silicon"][i].at("model_us_arm_timed"));
    EXPECT_GT(row.at("model_us_arm_timed").get<double>(), row.at("model_us_arm_free").get<double>() - 1e-9);
  }
  EXPECT_LT(c["silicon"][0]["model_weight_fetch_us"].get<double>() + c["silicon"][0]["model_mla_us"].get<double>(),
            c["silicon"][0].at("model_us_arm_free").get<double>());
}

}  // namespace

namespace {

// A journal of a run on real data resumes only a run on the same data (its header names the input and the
// hash of the int8 data the network ran on).
TEST(RealNetworks, AJournalResumesOnlyARunOnTheSameInput) {
  const TempDir dir;
  RunNetRequest req;
  req.net = net_file("tiny_cnn_qdq.onnx");
  req.input_npy = net_file("tiny_cnn_input.npy");
  req.strategies = {"fuse_noreuse"};
  req.json_out = dir.path("a.json");
  std::ostringstream out, err;
  ASSERT_EQ(run_net(req, out, err), 0) << out.str() << err.str();
  RunNetRequest again = req;
  again.json_out = dir.path("b.json");
  again.resume = dir.path("a.json.jsonl");
  std::ostringstream out2, err2;
  EXPECT_EQ(run_net(again, out2, err2), 0) << err2.str();
  EXPECT_NE(out2.str().find("resumed: 3 block runs"), std::string::npos) << out2.str();
  again.input_npy = net_file("tiny_cnn_input_hot.npy");
  again.json_out = dir.path("c.json");
  std::ostringstream out3, err3;
  EXPECT_EQ(run_net(again, out3, err3), 2);
  EXPECT_NE(err3.str().find("a journal of another run: its input"), std::string::npos) << err3.str();
}

}  // namespace
