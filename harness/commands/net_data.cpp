#include "harness/commands/net_data.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "harness/outputs/output_files.h"
#include "mapper/distributor.h"
#include "mapper/onnx/import.h"
#include "mapper/parser.h"

namespace s2 {

namespace {

// The command line that reruns the whole network on its input and checks its output again.
std::string run_net_output_replay(const RunNetRequest& req, const std::string& strategy, const std::string& hash) {
  std::string options;
  if (!strategy.empty()) options += " --strategy " + strategy;
  if (req.whole) options += " --whole";
  if (req.core_clocks) options += " --core-clocks";
  options += " --backend " + req.backend + " --seed " + std::to_string(req.seed) + " --input " + shell_quote(req.input_npy);
  if (!req.calibrate.empty()) options += " --calibrate " + shell_quote(req.calibrate);
  if (!req.reference_npy.empty()) options += " --reference " + shell_quote(req.reference_npy);
  return run_net_command_line(req, options, hash);
}

// The calibration set of --calibrate: every float input of a .npy file (one input, or a stack of them along
// the first axis) or of each .npy file of a directory (in name order), `values` each.
std::vector<std::vector<float>> calibration_set(const std::string& where, std::size_t values, std::vector<std::string>& notes) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  if (fs::is_directory(where, ec)) {
    for (const auto& e : fs::directory_iterator(where, ec))
      if (e.path().extension() == ".npy") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw std::invalid_argument("--calibrate " + where + ": the directory holds no .npy file");
  } else {
    files.push_back(where);
  }
  std::vector<std::vector<float>> set;
  for (const std::string& f : files) {
    const NpyTensor t = read_npy(f);
    if (!t.is_float) throw std::invalid_argument("--calibrate " + f + ": int8 values; a calibration set is the float inputs");
    if (!t.converted_from.empty()) notes.push_back("--calibrate " + f + ": " + t.converted_from + " read as float32");
    if (values == 0 || t.float32.size() % values != 0)
      throw std::invalid_argument(fmt::format("--calibrate {}: shape {} is not a whole number of the model's inputs of {} values",
                                              f, t.shape_text(), values));
    for (std::size_t k = 0; k < t.float32.size(); k += values)
      set.emplace_back(t.float32.begin() + static_cast<std::ptrdiff_t>(k), t.float32.begin() + static_cast<std::ptrdiff_t>(k + values));
  }
  return set;
}

// --reference with a float array (a framework's own output): how close the int8 output, read at its
// exponent (and, for a model whose final Softmax, LogSoftmax or Sigmoid the host applies, after it), comes to it.
struct FloatComparison {
  double correlation = 0, max_error_steps = 0;
  bool top1 = false, top5 = false;  // the reference's largest value is the output's largest / among its 5 largest
  // top-1 differs, but the reference puts the output's top class less than one output step (2^-exponent,
  // before the host activation) below its own: a tie the int8 output cannot resolve
  bool top1_tie = false;
  double top1_margin_steps = 0;  // the reference's top class above the output's, in output steps
};
FloatComparison compare_float(const std::vector<std::int8_t>& y, int exponent, const std::vector<float>& ref,
                              const std::string& host_activation) {
  std::vector<double> a(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) a[i] = std::ldexp(double(y[i]), -exponent);
  if ((host_activation == "Softmax" || host_activation == "LogSoftmax") && !a.empty()) {
    const double m = *std::max_element(a.begin(), a.end());
    double sum = 0;
    for (double v : a) sum += std::exp(v - m);
    for (double& v : a) v = host_activation == "Softmax" ? std::exp(v - m) / sum : v - m - std::log(sum);
  } else if (host_activation == "Sigmoid") {
    for (double& v : a) v = 1 / (1 + std::exp(-v));
  }
  FloatComparison r;
  const double n = double(a.size());
  double ma = 0, mr = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ma += a[i] / n;
    mr += ref[i] / n;
  }
  double sab = 0, saa = 0, srr = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (ref[i] - mr);
    saa += (a[i] - ma) * (a[i] - ma);
    srr += (ref[i] - mr) * (ref[i] - mr);
    // one output step is 2^-exponent (after a host activation: in its output's units, still so scaled)
    r.max_error_steps = std::max(r.max_error_steps, std::fabs(a[i] - ref[i]) * std::ldexp(1.0, exponent));
  }
  r.correlation = saa > 0 && srr > 0 ? sab / std::sqrt(saa * srr) : (saa == srr ? 1.0 : 0.0);
  if (!a.empty()) {
    const std::size_t best = static_cast<std::size_t>(std::max_element(ref.begin(), ref.end()) - ref.begin());
    std::vector<std::size_t> order(a.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    // ties broken by index, as argmax takes the first
    std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return a[i] > a[j]; });
    r.top1 = order[0] == best;
    // the reference's values before the host activation (up to a constant), where an output step is 2^-exponent
    auto logit = [&](std::size_t i) {
      const double p = ref[i];
      if (host_activation == "Softmax") return std::log(std::max(p, 1e-300));
      if (host_activation == "Sigmoid") return std::log(std::max(p, 1e-300) / std::max(1 - p, 1e-300));
      return p;
    };
    r.top1_margin_steps = (logit(best) - logit(order[0])) * std::ldexp(1.0, exponent);
    r.top1_tie = !r.top1 && r.top1_margin_steps < 1;
    r.top5 = std::find(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(5, order.size())), best) !=
             order.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(5, order.size()));
  }
  return r;
}

// The shape run-net --output gives the network's output: [1, N] after a fully connected layer or a model's
// final Flatten, else [1, C, H, W].
std::vector<std::size_t> output_shape(const mapper::OperationBlock& last, const mapper::Network& net) {
  const mapper::Shape3 o = last.out();
  if (last.kind == mapper::BlockKind::MatMul || net.output_flattened) return {1, std::size_t(o.elements())};
  return {1, std::size_t(o.D), std::size_t(o.H), std::size_t(o.W)};
}

// --reference: the network's output `y` against the reference, into the record; the check fails where it differs.
void compare_with_reference(const RunNetRequest& req, const mapper::Network& net, const std::vector<std::int8_t>& y,
                            const NpyTensor& reference, CheckResult& c, nlohmann::json& output_record, std::ostream& out) {
  output_record["reference"] = req.reference_npy;
  if (reference.is_float) {
    const FloatComparison fc = compare_float(y, *net.output_exponent, reference.float32, net.host_activation);
    const double min_correlation = req.policy.net.float_reference_correlation;
    output_record["float_reference"] = {{"correlation", fc.correlation},
                                        {"max_error_steps", fc.max_error_steps},
                                        {"top1_agrees", fc.top1},
                                        {"top1_tie", fc.top1_tie},
                                        {"top1_margin_steps", fc.top1_margin_steps},
                                        {"top5_agrees", fc.top5},
                                        {"threshold", min_correlation},
                                        {"host_activation_applied", !net.host_activation.empty()}};
    const bool ok = fc.correlation >= min_correlation && (fc.top1 || fc.top1_tie);
    const std::string top1 =
        fc.top1 ? "agrees"
                : fc.top1_tie ? fmt::format("is a tie (the reference's top class {:.2f} output steps above the output's: "
                                            "below int8 resolution)", fc.top1_margin_steps)
                              : fmt::format("DIFFERS (the reference's top class {:.1f} output steps above the output's)", fc.top1_margin_steps);
    out << fmt::format("network output against the float reference {}{}: correlation {:.4f}, max error {:.1f} output steps, "
                       "top-1 {}, top-5 {} ({}: r >= {} and the same top-1, or one within an output step)\n",
                       req.reference_npy, net.host_activation.empty() ? "" : " (" + net.host_activation + " applied on the host)",
                       fc.correlation, fc.max_error_steps, top1, fc.top5 ? "agrees" : "DIFFERS", ok ? "pass" : "FAIL",
                       min_correlation);
    if (!ok) {
      c.status = Status::Mismatch;
      c.message = fmt::format("against the float reference {}: correlation {:.4f} (at least {} wanted), top-1 {}",
                              req.reference_npy, fc.correlation, min_correlation,
                              fc.top1 || fc.top1_tie ? "agrees" : "differs by " + fmt::format("{:.1f}", fc.top1_margin_steps) + " output steps");
    }
    return;
  }
  // the first value that differs, and how many do
  std::size_t differ = 0, first = y.size();
  for (std::size_t i = 0; i < y.size(); ++i)
    if (y[i] != reference.int8[i]) {
      first = std::min(first, i);
      ++differ;
    }
  output_record["equals_reference"] = differ == 0;
  if (differ == 0) {
    out << "network output: equals the reference " << req.reference_npy << ", value for value\n";
  } else {
    c.status = Status::Mismatch;
    c.message = fmt::format("{} of {} values differ from the reference {}; the first, value {}: reference {}, got {}", differ,
                            y.size(), req.reference_npy, first, int(reference.int8[first]), int(y[first]));
    out << "network output: " << c.message << "\n";
  }
}

}  // namespace

mapper::Network load_run_net_network(const RunNetRequest& req, const NpyTensor* input, std::vector<std::string>& notes) {
  const std::string& net = req.net;
  if (!req.calibrate.empty() && !net.ends_with(".onnx"))
    throw std::invalid_argument("--calibrate: " + net + " is not an ONNX model; only a float ONNX model is calibrated");
  if (!net.ends_with(".onnx") || (!input && req.calibrate.empty())) return mapper::load_network(net);
  std::vector<std::vector<float>> calibration;
  if (!req.calibrate.empty()) {
    const mapper::Network shape = mapper::import_onnx(net);  // its input's size
    calibration = calibration_set(req.calibrate, static_cast<std::size_t>(shape.input.elements()), notes);
    notes.push_back(fmt::format("calibration: {} input{} of {} (maxima over all of them)", calibration.size(),
                                calibration.size() == 1 ? "" : "s", req.calibrate));
  } else if (input->is_float) {
    calibration.push_back(input->float32);
    notes.push_back("calibration: on the --input it runs (give a calibration set with --calibrate)");
  }
  mapper::Network n = mapper::import_onnx(net, calibration);
  // a float model is quantized on its input; an int8 input gives it nothing to calibrate on
  if (!n.input_exponent)
    throw std::invalid_argument(net + " is a float model: it is quantized on a float input (docs/real_networks.md), "
                                "so --input must be float32 (or --calibrate given), not int8");
  return n;
}

std::vector<std::int8_t> network_input(const mapper::Network& net, const NpyTensor& t, const std::string& path) {
  const mapper::Shape3& in = net.input;
  // the model's shape, or it with a batch of 1 in front: (C, H, W) or (1, C, H, W); a vector (N,) or (1, N)
  // (a one-channel (1, H, W) map is the first form, not a batch)
  const std::vector<std::size_t> chw{std::size_t(in.D), std::size_t(in.H), std::size_t(in.W)};
  std::vector<std::vector<std::size_t>> forms{chw};
  if (in.H == 1 && in.D == 1) forms.push_back({std::size_t(in.W)});
  for (std::size_t k = 0, n = forms.size(); k < n; ++k) {
    std::vector<std::size_t> batched{1};
    batched.insert(batched.end(), forms[k].begin(), forms[k].end());
    forms.push_back(batched);
  }
  if (std::find(forms.begin(), forms.end(), t.shape) == forms.end())
    throw std::invalid_argument(fmt::format("--input {}: shape {}, expected ({}, {}, {}) or (1, {}, {}, {}) (a batch of 1) for {}'s "
                                            "input {}", path, t.shape_text(), in.D, in.H, in.W, in.D, in.H, in.W, net.name,
                                            mapper::to_string(in)));
  if (!t.is_float) return t.int8;
  if (!net.input_exponent)
    throw std::invalid_argument("--input " + path + ": a float input needs the network's input scale, which " + net.name +
                                " does not have (a layer list: give the input as int8)");
  std::vector<std::int8_t> q(t.float32.size());
  const double scale = std::ldexp(1.0, *net.input_exponent);
  for (std::size_t i = 0; i < q.size(); ++i) {
    if (!std::isfinite(t.float32[i])) throw std::invalid_argument(fmt::format("--input {}: value {} is not finite", path, i));
    q[i] = static_cast<std::int8_t>(std::clamp(std::nearbyint(double(t.float32[i]) * scale), -128.0, 127.0));
  }
  return q;
}

NetworkData golden_chain(const mapper::ParsedNetwork& n, const mapper::NetworkSplit& split, const HwConfig& cfg,
                         std::vector<std::int8_t> input, std::uint64_t seed) {
  NetworkData d;
  std::map<std::string, std::vector<std::int8_t>> maps{{"input", std::move(input)}};
  // a block's output or the input by name; a view's channels gathered from where they lie
  auto map_named = [&](const std::string& name) {
    const mapper::MapView* v = n.find_view(name);
    if (!v) return maps.at(name);
    const std::size_t plane = std::size_t(v->shape.W) * v->shape.H;
    std::vector<std::int8_t> m(plane * v->channels.size());
    for (std::size_t k = 0; k < v->channels.size(); ++k) {
      const std::vector<std::int8_t>& from = maps.at(v->channels[k].map);
      std::copy_n(from.begin() + static_cast<std::ptrdiff_t>(plane * std::size_t(v->channels[k].channel)), plane,
                  m.begin() + static_cast<std::ptrdiff_t>(plane * k));
    }
    return m;
  };
  for (std::size_t i = 0; i < n.blocks.size(); ++i) {
    const mapper::OperationBlock& b = n.blocks[i];
    BlockInputs bi;
    bi.input = map_named(b.inputs.at(0));
    if (b.inputs.size() > 1) bi.shortcut = map_named(b.inputs[1]);
    std::optional<mapper::BlockStreams> bs;
    std::string why;
    for (mapper::Strategy st : {mapper::Strategy::FuseNoreuse, mapper::Strategy::NofuseNoreuse, mapper::Strategy::FuseReuse})
      if (!bs && mapper::distributable(b, split.blocks[i], st, cfg, why.empty() ? &why : nullptr))
        bs = mapper::distribute(b, split.blocks[i], st, cfg);
    if (!bs)
      throw std::invalid_argument(b.name() + ": no strategy distributes it (" + why + "), so the blocks after it have no input");
    const std::vector<std::uint8_t> image = block_dram_image(b, split.blocks[i], *bs, cfg, seed, bi);
    const std::vector<std::uint8_t> out = golden_block_output(b, split.blocks[i], *bs, cfg, image);
    maps[b.name()] = std::vector<std::int8_t>(out.begin(), out.end());
    d.golden[b.name()] = out;
    d.blocks.push_back(std::move(bi));
  }
  if (!n.blocks.empty()) d.output = maps[n.blocks.back().name()];
  return d;
}

NetworkOutputCheck check_network_output(const RunNetRequest& req, const mapper::ParsedNetwork& n, const mapper::Network& net,
                                        const BlockOutput& output, const std::string& strategy,
                                        const std::vector<std::int8_t>& golden_output, const NpyTensor* reference,
                                        std::size_t index, const std::string& hash, std::ostream& out, std::ostream& err) {
  NetworkOutputCheck r;
  CheckResult& c = r.check;
  const std::vector<std::size_t> shape = output_shape(n.blocks.back(), net);
  c.name = "network output";
  c.group = n.name;
  c.index = index;
  c.labels = {{"block", n.blocks.back().name()}, {"strategy", strategy}, {"backend", output.backend}};
  c.replay = run_net_output_replay(req, strategy, hash);
  if (output.backend.empty()) {
    c.status = Status::Error;
    c.message = fmt::format("{} did not finish on any backend{}", n.blocks.back().name(),
                            strategy.empty() ? " (it was not run here; a block run taken from a journal keeps no data)" : "");
    out << "\nnetwork output: not written: " << c.message << "\n";
    return r;
  }
  const std::vector<std::int8_t> y(output.bytes.begin(), output.bytes.end());
  const bool golden_equal = y == golden_output;
  try {
    if (!req.output_npy.empty()) write_npy(req.output_npy, shape, y);
  } catch (const std::exception& e) {
    err << "s2cosim run-net: --output " << e.what() << "\n";
    r.write_failed = true;
    return r;
  }
  std::string shape_text;
  for (std::size_t d : shape) shape_text += (shape_text.empty() ? "" : ", ") + std::to_string(d);
  out << fmt::format("\nnetwork output: {}int8, shape ({}), from the {} ({}); it {} the golden kernels' run of the whole network",
                     req.output_npy.empty() ? "" : req.output_npy + ", ", shape_text, output.backend, strategy,
                     golden_equal ? "equals" : "DIFFERS FROM");
  if (net.output_exponent) out << fmt::format("; a value is int8 * 2^-{}", *net.output_exponent);
  if (shape.size() == 2 && !y.empty()) out << fmt::format("; largest at index {}", std::max_element(y.begin(), y.end()) - y.begin());
  out << "\n";
  r.record = {{"shape", shape}, {"backend", output.backend}, {"strategy", strategy}, {"equals_golden", golden_equal}};
  if (!req.output_npy.empty()) r.record["file"] = req.output_npy;
  if (net.output_exponent) r.record["exponent"] = *net.output_exponent;
  if (!golden_equal) {
    c.status = Status::Mismatch;
    c.message = "the network's output differs from the golden kernels' run of the whole network";
  }
  if (!net.host_activation.empty()) r.record["host_activation"] = net.host_activation;
  if (reference) compare_with_reference(req, net, y, *reference, c, r.record, out);
  return r;
}

}  // namespace s2
