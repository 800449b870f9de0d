#include "network.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "model/splitmix64.h"
#include "model/text_file.h"
#include "mapper/activations.h"
#include "mapper/onnx/import.h"

namespace s2::mapper {

std::string to_string(const Shape3& s) {
  std::string t = "[";  // appended piecewise: GCC 12 warns falsely (-Wrestrict) on "[" + std::string
  t += std::to_string(s.W);
  t += ",";
  t += std::to_string(s.H);
  t += ",";
  t += std::to_string(s.D);
  t += "]";
  return t;
}

const char* to_string(EltOp op) {
  switch (op) {
    case EltOp::Table: return "table";
    case EltOp::Affine: return "affine";
    case EltOp::Add: return "add";
    case EltOp::Mul: return "mul";
    case EltOp::ChannelMul: return "channel_mul";
  }
  return "?";
}

namespace {

// line 0: the file as a whole
[[noreturn]] void fail(const std::string& source, int line, const std::string& what) {
  throw NetworkError(source + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + what);
}

int to_int(const std::string& source, int line, const std::string& field, const std::string& text, int min, int max) {
  int v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && p == text.data() + text.size() && v > max))
    fail(source, line, "field " + field + ": expected at most " + std::to_string(max) + ", got " + text);
  if (ec != std::errc() || p != text.data() + text.size())
    fail(source, line, "field " + field + ": expected an integer, got '" + text + "'");
  if (v < min) fail(source, line, "field " + field + ": expected at least " + std::to_string(min) + ", got " + text);
  return v;
}

}  // namespace

Network parse_layer_list(const std::string& text, const std::string& source) {
  Network net;
  net.source = source;
  std::istringstream in(text);
  std::string raw;
  int line = 0;
  bool have_input = false;
  while (std::getline(in, raw)) {
    ++line;
    if (const auto hash = raw.find('#'); hash != std::string::npos) raw.erase(hash);
    std::istringstream words(raw);
    std::vector<std::string> pos;  // positional words
    std::vector<std::pair<std::string, std::string>> opts;
    for (std::string w; words >> w;) {
      if (const auto eq = w.find('='); eq != std::string::npos) opts.emplace_back(w.substr(0, eq), w.substr(eq + 1));
      else if (!opts.empty()) fail(source, line, "'" + w + "': positional fields come before key=value options");
      else pos.push_back(w);
    }
    if (pos.empty()) {
      if (!opts.empty()) fail(source, line, "a line needs a keyword before its options");
      continue;
    }
    const std::string kw = pos[0];
    auto need = [&](std::size_t n, const char* form) {
      if (pos.size() != n) fail(source, line, "'" + kw + "' expects: " + form);
    };
    auto field = [&](std::size_t i, const char* name, int min, int max) { return to_int(source, line, name, pos[i], min, max); };
    LayerSpec l;
    l.line = line;
    // options each keyword accepts; the rest are errors (a typo must not pass silently)
    std::vector<std::string> allowed;
    if (kw == "network") {
      need(2, "network NAME");
      net.name = pos[1];
    } else if (kw == "input") {
      need(4, "input W H D");
      net.input = {field(1, "W", 1, kMaxSide), field(2, "H", 1, kMaxSide), field(3, "D", 1, kMaxChannels)};
      if (net.input.elements() > kMaxMapValues)
        fail(source, line, "expected an input of at most " + std::to_string(kMaxMapValues) + " values, got " +
                               std::to_string(net.input.elements()));
      have_input = true;
    } else if (kw == "conv") {
      need(5, "conv Wf Hf D C [stride=S] [pad=same|valid|N] [act=relu|none] [shift=N] [bias=seed|none] [groups=G] [workers=N]");
      l.kind = LayerKind::Conv;
      l.Wf = field(1, "Wf", 1, kMaxSide);
      l.Hf = field(2, "Hf", 1, kMaxSide);
      l.D = field(3, "D", 1, kMaxChannels);
      l.C = field(4, "C", 1, kMaxChannels);
      allowed = {"stride", "pad", "act", "shift", "shifts", "bias", "groups", "workers"};
    } else if (kw == "pool") {
      need(4, "pool max|avg Wf Hf [stride=S] [pad=same|valid|N] [workers=N]");
      l.kind = LayerKind::Pool;
      if (pos[1] == "max") l.pool = PoolType::Max;
      else if (pos[1] == "avg") l.pool = PoolType::Avg;
      else fail(source, line, "field type: expected max or avg, got '" + pos[1] + "'");
      l.Wf = field(2, "Wf", 1, kMaxSide);
      l.Hf = field(3, "Hf", 1, kMaxSide);
      l.stride = l.Wf;
      allowed = {"stride", "pad", "padend", "workers"};
    } else if (kw == "fc") {
      need(3, "fc IN OUT [act=relu|none] [shift=N] [bias=seed|none] [workers=N]");
      l.kind = LayerKind::Fc;
      l.D = field(1, "IN", 1, static_cast<int>(kMaxMapValues));
      l.C = field(2, "OUT", 1, kMaxChannels);
      allowed = {"act", "shift", "shifts", "bias", "workers"};
    } else if (kw == "concat") {
      need(1, "concat in=A,B[,...] [as=NAME]");
      l.kind = LayerKind::Concat;
    } else if (kw == "slice") {
      need(3, "slice FIRST COUNT [in=A] [as=NAME]");
      l.kind = LayerKind::Slice;
      l.first = field(1, "FIRST", 0, kMaxChannels - 1);
      l.count = field(2, "COUNT", 1, kMaxChannels);
    } else if (kw == "shuffle") {
      need(2, "shuffle G [in=A] [as=NAME]");
      l.kind = LayerKind::Shuffle;
      l.groups = field(1, "G", 1, kMaxChannels);
    } else if (kw == "act" || kw == "affine" || kw == "add" || kw == "mul") {
      l.kind = LayerKind::Elementwise;
      if (kw == "act") {
        need(2, "act FUNC [ein=E] [eout=E] [alpha=X] [beta=X] [in=A] [as=NAME] [workers=N]");
        allowed = {"ein", "eout", "alpha", "beta", "workers"};
      } else {
        need(1, kw == "affine" ? "affine [shift=N] [act=relu|none] [in=A] [as=NAME] [workers=N]"
                : kw == "add"  ? "add in=A,B [shift=N] [shifta=N] [shiftb=N] [act=relu|none] [as=NAME] [workers=N]"
                               : "mul in=A,B [shift=N] [as=NAME] [workers=N]");
        allowed = kw == "affine" ? std::vector<std::string>{"shift", "act", "workers"}
                  : kw == "add"  ? std::vector<std::string>{"shift", "shifta", "shiftb", "act", "workers"}
                                 : std::vector<std::string>{"shift", "workers"};
        l.relu = false;
      }
    } else if (kw == "residual") {
      if (pos.size() != 2 || (pos[1] != "begin" && pos[1] != "end"))
        fail(source, line, "'residual' expects: residual begin | residual end shortcut=identity|projection [stride=S] [act=relu|none] [shift=N] [bias=seed|none]");
      l.kind = pos[1] == "begin" ? LayerKind::ResidualBegin : LayerKind::ResidualEnd;
      if (l.kind == LayerKind::ResidualEnd) allowed = {"shortcut", "stride", "act", "shift", "shifts", "bias"};
    } else {
      fail(source, line, "unknown keyword '" + kw +
                             "' (expected network, input, conv, pool, fc, residual, concat, slice, shuffle, act, affine, add or mul)");
    }
    if (kw == "network" || kw == "input") {
      if (!opts.empty()) fail(source, line, "'" + kw + "' takes no options");
      continue;
    }
    bool shortcut_given = false;
    // every layer reads maps by name and names its output (a graph, docs/real_networks.md)
    allowed.push_back("in");
    allowed.push_back("as");
    ElementwiseSpec elt;
    Activation act;
    int ein = 4, eout = 4;
    if (kw == "act") {
      try {
        act = default_activation(pos[1]);
      } catch (const std::invalid_argument& e) {
        fail(source, line, std::string("field FUNC: ") + e.what());
      }
    }
    auto real = [&](const std::string& f, const std::string& v) {
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(x)) fail(source, line, "field " + f + ": expected a number, got '" + v + "'");
      return x;
    };
    for (const auto& [k, v] : opts) {
      if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
        fail(source, line, "unknown option '" + k + "' for " + kw);
      if (k == "in") {
        std::stringstream names(v);
        for (std::string n; std::getline(names, n, ',');) {
          if (n.empty()) fail(source, line, "field in: an empty map name in '" + v + "'");
          l.inputs.push_back(n);
        }
        if (l.inputs.empty()) fail(source, line, "field in: expected map names, e.g. in=A,B");
        continue;
      }
      if (k == "as") {
        if (v.empty() || v.find(',') != std::string::npos) fail(source, line, "field as: expected one map name, got '" + v + "'");
        l.name = v;
        continue;
      }
      if (k == "ein" || k == "eout") {
        (k == "ein" ? ein : eout) = to_int(source, line, k, v, -31, 31);
        continue;
      }
      if (k == "alpha" || k == "beta") {
        (k == "alpha" ? act.alpha : act.beta) = real(k, v);
        continue;
      }
      if (k == "shifts") {  // QUAN's shift per output channel, comma-separated
        auto s = std::make_shared<std::vector<std::uint8_t>>();
        std::stringstream list(v);
        for (std::string n; std::getline(list, n, ',');)
          s->push_back(static_cast<std::uint8_t>(to_int(source, line, "shifts", n, 0, 31)));
        if (s->empty()) fail(source, line, "field shifts: expected one shift per output channel, e.g. shifts=7,8,7,9");
        l.shifts = std::move(s);
        continue;
      }
      if (k == "padend") {
        l.pad_end = to_int(source, line, "padend", v, 0, kMaxSide);
        continue;
      }
      if (k == "shifta" || k == "shiftb") {
        (k == "shifta" ? elt.shift_a : elt.shift_b) = to_int(source, line, k, v, 0, 21);
        continue;
      }
      if (k == "stride") {
        l.stride = to_int(source, line, "stride", v, 1, kMaxSide);
      } else if (k == "pad") {
        if (v == "valid") l.pad = 0;
        else if (v == "same") {
          // the same size at stride 1 (ceil(W/S) at stride S): (F-1)/2 on every side, for odd filters
          if (l.Wf != l.Hf || l.Wf % 2 == 0)
            fail(source, line, "field pad: 'same' needs a square filter of odd size; give the padding as a number");
          l.pad = (l.Wf - 1) / 2;
        } else l.pad = to_int(source, line, "pad", v, 0, kMaxSide);
      } else if (k == "act") {
        if (v == "relu") l.relu = true;
        else if (v == "none") l.relu = false;
        else fail(source, line, "field act: expected relu or none, got '" + v + "'");
      } else if (k == "workers") {
        l.workers = to_int(source, line, "workers", v, 1, kMaxChannels);
      } else if (k == "groups") {
        l.groups = to_int(source, line, "groups", v, 1, kMaxChannels);
      } else if (k == "shift") {
        l.shift = to_int(source, line, "shift", v, 0, 31);  // of a 32-bit sum
      } else if (k == "bias") {
        if (v == "seed") l.bias_drawn = true;
        else if (v == "none") l.bias_drawn = false;
        else fail(source, line, "field bias: expected seed or none, got '" + v + "'");
      } else if (k == "shortcut") {
        shortcut_given = true;
        if (v == "identity") l.shortcut = Shortcut::Identity;
        else if (v == "projection") l.shortcut = Shortcut::Projection;
        else fail(source, line, "field shortcut: expected identity or projection, got '" + v + "'");
      }
    }
    if (l.kind == LayerKind::Elementwise) {
      elt.op = kw == "act" ? EltOp::Table : kw == "affine" ? EltOp::Affine : kw == "add" ? EltOp::Add : EltOp::Mul;
      elt.relu = (kw == "affine" || kw == "add") && l.relu;  // (a table is its own function; mul has no act=)
      elt.shift = l.shift >= 0 ? l.shift : (kw == "affine" ? 8 : 0);
      if (kw == "act") {
        elt.table = activation_table(act, ein, eout);
        elt.function = to_string(act);
      } else if (kw == "affine") {
        // a layer list has no trained values: m in [2^(shift-2), 2^shift] (the map scaled by 1/4 to 1) and
        // o within a few output steps, drawn from the line (the channels are known to the parser: drawn here
        // for as many as a layer may have, and cut to the input's channels there)
        elt.function = "drawn";
      }
      l.elementwise = std::make_shared<const ElementwiseSpec>(std::move(elt));
    }
    if ((kw == "add" || kw == "mul") && l.inputs.size() != 2)
      fail(source, line, "field in: '" + kw + "' reads two maps, in=A,B");
    if (l.kind == LayerKind::Concat && l.inputs.size() < 2)
      fail(source, line, "field in: 'concat' reads two or more maps, in=A,B[,...]");
    if (l.kind == LayerKind::ResidualEnd && !shortcut_given)
      fail(source, line, "field shortcut: 'residual end' needs shortcut=identity or shortcut=projection");
    if (l.kind == LayerKind::ResidualEnd && l.shortcut == Shortcut::Identity && l.stride != 1)
      fail(source, line, "field stride: an identity shortcut has no stride");
    if (l.kind == LayerKind::ResidualEnd && l.shortcut == Shortcut::Identity && l.bias_drawn)
      fail(source, line, "field bias: an identity shortcut has no convolution to bias (bias= is for a projection)");
    if (l.kind == LayerKind::ResidualEnd && l.shortcut == Shortcut::Identity && l.shifts)
      fail(source, line, "field shifts: an identity shortcut has no quantization (shifts= is for a projection)");
    if (l.kind == LayerKind::ResidualEnd && l.shortcut == Shortcut::Identity && l.shift >= 0)
      fail(source, line, "field shift: an identity shortcut has no quantization (shift= is for a projection)");
    if (!have_input) fail(source, line, "the 'input W H D' line must come before the first layer");
    if (net.layers.size() >= kMaxLayers) fail(source, line, "expected at most " + std::to_string(kMaxLayers) + " layers");
    net.layers.push_back(l);
  }
  if (!have_input) fail(source, line, "no 'input W H D' line");
  if (net.name.empty()) net.name = source;
  return net;
}

std::vector<std::int32_t> drawn_bias(int line, int outputs, int shift) {
  SplitMix64 rng{0x6a09e667f3bcc909ull ^ static_cast<std::uint64_t>(line)};  // the same on every machine
  const std::int64_t half = std::int64_t(1) << std::clamp(shift + 3, 0, 30);
  std::vector<std::int32_t> b(static_cast<std::size_t>(outputs));
  for (auto& v : b) v = static_cast<std::int32_t>(static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(2 * half)) - half);
  return b;
}

void draw_affine(int line, int channels, ElementwiseSpec& e) {
  SplitMix64 rng{0xbb67ae8584caa73bull ^ static_cast<std::uint64_t>(line)};  // the same on every machine
  const std::int64_t lo = std::int64_t(1) << std::clamp(e.shift - 2, 0, 29), hi = std::int64_t(1) << std::clamp(e.shift, 0, 29);
  const std::int64_t half = std::int64_t(1) << std::clamp(e.shift + 3, 0, 29);
  e.scale.resize(static_cast<std::size_t>(channels));
  e.offset.resize(static_cast<std::size_t>(channels));
  for (int c = 0; c < channels; ++c) {
    e.scale[std::size_t(c)] = static_cast<std::int32_t>(lo + static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(hi - lo + 1)));
    e.offset[std::size_t(c)] = static_cast<std::int32_t>(static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(2 * half)) - half);
  }
}

Network read_layer_list(const std::string& path) {
  std::string text;
  try {
    text = read_text_file(path, kMaxFileBytes, "layer list");
  } catch (const std::runtime_error& e) {
    throw NetworkError(e.what());
  }
  return parse_layer_list(text, path);
}

const std::string& vgg16_layer_list() {
  // thesis 2.2 and Tables G.1/I.1: 13 convolutions 3x3 (SAME), 5 max pools 2x2/2, 3 fully connected
  // layers; the last one has 1024 outputs in the thesis's tables (not ImageNet's 1000)
  static const std::string text = R"(# VGG-16 as the thesis maps it (thesis 2.2, Appendices G and I)
network vgg16
input 224 224 3
conv 3 3 3 64 pad=same          # CONV_1
conv 3 3 64 64 pad=same         # CONV_2
pool max 2 2 stride=2           # POOL_3
conv 3 3 64 128 pad=same        # CONV_4
conv 3 3 128 128 pad=same       # CONV_5
pool max 2 2 stride=2           # POOL_6
conv 3 3 128 256 pad=same       # CONV_7
conv 3 3 256 256 pad=same       # CONV_8
conv 3 3 256 256 pad=same       # CONV_9
pool max 2 2 stride=2           # POOL_10
conv 3 3 256 512 pad=same       # CONV_11
conv 3 3 512 512 pad=same       # CONV_12
conv 3 3 512 512 pad=same       # CONV_13
pool max 2 2 stride=2           # POOL_14
conv 3 3 512 512 pad=same       # CONV_15
conv 3 3 512 512 pad=same       # CONV_16
conv 3 3 512 512 pad=same       # CONV_17
pool max 2 2 stride=2           # POOL_18
fc 25088 4096                   # FC_19
fc 4096 4096                    # FC_20
fc 4096 1024                    # FC_21 (1024 outputs, as in thesis Table G.1)
)";
  return text;
}

const std::string& resnet50_layer_list() {
  static const std::string text = [] {
    // He et al.'s ResNet-50 (v1: the stride of a stage sits on its first 1x1 convolution, which is what
    // makes the thesis's CONV_42 and CONV_SC_14 stride-2 layers, thesis 5.2.2)
    std::string t = "# ResNet-50 (thesis 2.2; stride 2 on the first 1x1 convolution of stages 3-5)\n"
                    "network resnet50\ninput 224 224 3\n"
                    "conv 7 7 3 64 stride=2 pad=3       # CONV_1\n"
                    "pool max 3 3 stride=2 pad=1        # POOL_2 (a pooling block: stride != window)\n";
    int in = 64;
    const int mid[4] = {64, 128, 256, 512}, blocks[4] = {3, 4, 6, 3};
    for (int s = 0; s < 4; ++s) {
      for (int b = 0; b < blocks[s]; ++b) {
        const int m = mid[s], out = 4 * m, stride = (b == 0 && s > 0) ? 2 : 1;
        t += "residual begin\n";
        t += "conv 1 1 " + std::to_string(in) + " " + std::to_string(m) + " stride=" + std::to_string(stride) + "\n";
        t += "conv 3 3 " + std::to_string(m) + " " + std::to_string(m) + " pad=same\n";
        t += "conv 1 1 " + std::to_string(m) + " " + std::to_string(out) + " act=none\n";
        t += b == 0 ? "residual end shortcut=projection stride=" + std::to_string(stride) + "\n"
                    : "residual end shortcut=identity\n";
        in = out;
      }
    }
    t += "pool avg 7 7 stride=1             # POOL_51, global average pool\n";
    t += "fc 2048 1000 act=none             # FC_52\n";
    return t;
  }();
  return text;
}

namespace {
// The networks built in, by the name a user gives instead of a file.
const std::map<std::string, const std::string& (*)()>& builtin_networks() {
  static const std::map<std::string, const std::string& (*)()> table = {{"vgg16", vgg16_layer_list},
                                                                         {"resnet50", resnet50_layer_list}};
  return table;
}
}  // namespace

bool is_builtin_network(const std::string& name) { return builtin_networks().contains(name); }

Network load_network(const std::string& name_or_path) {
  if (const auto it = builtin_networks().find(name_or_path); it != builtin_networks().end())
    return parse_layer_list(it->second(), "built-in " + it->first);
  if (name_or_path.ends_with(".onnx")) return import_onnx(name_or_path);  // float: no calibration, shifts by rule
  return read_layer_list(name_or_path);
}

}  // namespace s2::mapper
