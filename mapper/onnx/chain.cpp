#include <set>

#include "mapper/onnx/importer.h"

namespace s2::mapper::onnx_reader {

void Importer::merge(const Node& at, const std::string& a, const std::string& b, const std::string& calib) {
  const std::string why = scales_.merge(acts_.at(a).cls, acts_.at(b).cls, calib);
  if (!why.empty()) fail_at(at, why);
}

void Importer::walk() {
  for (std::size_t k = 0; k < nodes_.size(); ++k)
    for (const std::string& m : nodes_[k].in) readers_[m].push_back(k);
  std::string cur = input_;
  std::set<std::size_t> seen;
  for (std::size_t guard = 0; guard <= nodes_.size(); ++guard) {
    const auto& r = readers_[cur];
    if (cur == output_) {
      if (!r.empty())
        fail_at(nodes_[r[0]], "reads the graph's output " + in_quotes(cur) + ", which must be the chain's end");
      break;
    }
    if (r.empty())
      fail(producer_.at(cur) + ": its output " + in_quotes(cur) +
           " is not used and is not the graph's output (the graph is not a chain)");
    if (r.size() == 1) {
      const Node& n = nodes_[r[0]];
      if (n.op == Op::Add)
        fail_at(n, "adds " + in_quotes(n.in[0]) + " and " + in_quotes(n.in[1]) +
                       ", which are not a residual unit's input and its branch (the graph is not a chain with "
                       "residual units)");
      seen.insert(r[0]);
      cur = emit(n, cur);
    } else if (r.size() == 2) {
      cur = residual(cur, seen);
    } else {
      fail(producer_.at(cur) + ": its output " + in_quotes(cur) + " is read by " + std::to_string(r.size()) +
           " nodes; the hardware runs a chain whose residual units fork in two");
    }
  }
  if (cur != output_) fail("the walk from the graph's input never reached its output " + in_quotes(output_));
  for (std::size_t k = 0; k < nodes_.size(); ++k)
    if (!seen.count(k)) fail_at(nodes_[k], "is not on the chain from the graph's input to its output");
  if (net_.layers.empty()) fail("the model has no layers");
  if (net_.layers.size() > kMaxLayers) fail("expected at most " + std::to_string(kMaxLayers) + " layers");
  final_ = cur;
}

std::string Importer::emit(const Node& n, const std::string& cur) {
  LayerSpec l;
  l.line = n.index;
  switch (n.op) {
    case Op::Conv:
    case Op::Fc:
      l.kind = n.op == Op::Conv ? LayerKind::Conv : LayerKind::Fc;
      l.Wf = n.kW;
      l.Hf = n.kH;
      l.D = n.D;
      l.C = n.C;
      l.stride = n.stride;
      l.pad = n.pad;
      l.groups = n.groups;
      l.relu = false;
      weighted_.push_back({net_.layers.size(), &n, cur, n.out});
      relu_layer_ = net_.layers.size();
      relu_map_ = n.out;
      net_.layers.push_back(l);
      return n.out;
    case Op::Relu:
    case Op::Clip:
      // a Clip right after a layer's Relu (F.relu6 exports as Relu, then Clip(0, 6)): the same layer
      if (n.op == Op::Clip && relu_map_ != cur && !after_relu_map_.empty() && after_relu_map_ == cur) {
        relu_map_ = cur;
        relu_layer_ = after_relu_layer_;
      }
      if (relu_map_ != cur || relu_layer_ >= net_.layers.size())
        fail_at(
            n,
            "follows no Conv, Gemm, MatMul or residual Add directly; the hardware applies a ReLU only inside such a "
            "layer, before its QUAN");
      if (n.op == Op::Clip) {
        if (net_.layers[relu_layer_].kind != LayerKind::Conv && net_.layers[relu_layer_].kind != LayerKind::Fc)
          fail_at(n, "follows a residual Add: a Clip's bound is applied by a Conv's or Gemm's QUAN only");
        clip_high_[relu_layer_] = n.hi;
      }
      net_.layers[relu_layer_].relu = true;
      // the layer's map is the one after its ReLU; an identity unit's keeps the shortcut's exponent
      merge(n, cur, n.out, scales_.calib[cls(cur)] == cur ? n.out : scales_.calib[cls(cur)]);
      for (Weighted& w : weighted_)
        if (w.out == cur) w.out = n.out;
      relu_map_.clear();
      non_negative_.insert(n.out);
      after_relu_map_ = n.op == Op::Relu ? n.out : std::string();
      after_relu_layer_ = relu_layer_;
      return n.out;
    case Op::MaxPool:
    case Op::AvgPool:
      if (n.op == Op::MaxPool && n.pad > 0 && !non_negative_.count(cur))
        fail_at(n,
                "padded max pooling of a map that may be negative: the hardware pads with zeros, ONNX with minus "
                "infinity; they agree only after a ReLU (docs/real_networks.md)");
      l.kind = LayerKind::Pool;
      l.pool = n.op == Op::MaxPool ? PoolType::Max : PoolType::Avg;
      l.Wf = n.kW;
      l.Hf = n.kH;
      l.stride = n.stride;
      l.pad = n.pad;
      net_.layers.push_back(l);
      relu_map_.clear();
      if (non_negative_.count(cur)) non_negative_.insert(n.out);
      return n.out;
    case Op::Flatten: {
      // into a fully connected layer, or as the graph's output (a convolutional head's [C,1,1] map, or any
      // map: [C][H][W] in SRAM and DRAM is already the flattened order)
      const auto& r = readers_[n.out];
      const bool last = r.empty() && n.out == output_;
      if (!last && (r.size() != 1 || nodes_[r[0]].op != Op::Fc))
        fail_at(n, "flattens a map that no fully connected layer reads next; the hardware flattens only into one, or as the graph's output");
      if (last) net_.output_flattened = true;
      relu_map_.clear();
      return n.out;
    }
    case Op::Add:
      break;  // the walk's residual()
  }
  fail_at(n, "is not a layer of a chain");
}

std::string Importer::residual(const std::string& x, std::set<std::size_t>& seen) {
  // each branch: the nodes from x to the Add that joins them, each read by the next alone
  auto branch = [&](std::size_t first, std::vector<std::size_t>& path) -> std::size_t {
    std::size_t k = first;
    for (std::size_t guard = 0; guard <= nodes_.size(); ++guard) {
      if (nodes_[k].op == Op::Add) return k;
      path.push_back(k);
      const std::string& o = nodes_[k].out;
      const auto& r = readers_[o];
      if (o == output_)
        fail_at(nodes_[k],
                "ends a branch of the residual unit from " + in_quotes(x) + " at the graph's output, without an Add");
      if (r.size() != 1)
        fail_at(nodes_[k], r.empty() ? "its output " + in_quotes(o) +
                                           " is not used (the graph is not a chain with residual units)"
                                     : "its output " + in_quotes(o) + " is read by " + std::to_string(r.size()) +
                                           " nodes inside a residual unit; residual units cannot nest");
      k = r[0];
    }
    fail_at(nodes_[first], "a residual branch that does not end");
  };
  const auto& r = readers_[x];
  std::vector<std::size_t> p0, p1;
  const std::size_t j0 = branch(r[0], p0), j1 = branch(r[1], p1);
  const Node& add = nodes_[j0];
  if (j0 != j1)
    fail_at(add, "adds a branch of the residual unit from " + in_quotes(x) + " that " + nodes_[j1].label +
                     " adds too: the two branches must meet in one Add");
  if (p0.empty() && p1.empty()) fail_at(add, "adds " + in_quotes(x) + " to itself; expected a residual unit");
  // the shortcut: x itself, or a 1x1 convolution of it without padding (when both branches are one such
  // convolution, the Add's second operand, as PyTorch's ResNet writes out + shortcut)
  auto projection = [&](const std::vector<std::size_t>& p) {
    if (p.size() != 1) return false;
    const Node& n = nodes_[p[0]];
    return n.op == Op::Conv && n.kW == 1 && n.kH == 1 && n.pad == 0 && n.groups == 1;
  };
  const std::vector<std::size_t>* main = nullptr;
  const std::vector<std::size_t>* shortcut = nullptr;
  if (p0.empty() || p1.empty()) {
    main = p0.empty() ? &p1 : &p0;
    shortcut = p0.empty() ? &p0 : &p1;
  } else if (projection(p0) || projection(p1)) {
    const bool second_is_p1 = add.in[1] == nodes_[p1.back()].out;
    const bool sc1 = projection(p1) && (!projection(p0) || second_is_p1);
    main = sc1 ? &p0 : &p1;
    shortcut = sc1 ? &p1 : &p0;
  } else {
    fail_at(add, "a residual unit's shortcut must be its input " + in_quotes(x) +
                     " itself or a 1x1 Conv of it (no padding, no ReLU); here both branches compute more");
  }
  LayerSpec begin;
  begin.kind = LayerKind::ResidualBegin;
  begin.line = nodes_[main->front()].index;
  net_.layers.push_back(begin);
  relu_map_.clear();
  std::string cur = x;
  for (const std::size_t k : *main) {
    if (nodes_[k].op == Op::Flatten) fail_at(nodes_[k], "flattens inside a residual unit");
    seen.insert(k);
    cur = emit(nodes_[k], cur);
  }
  if (net_.layers.back().kind != LayerKind::Conv)
    fail_at(add,
            "the branch of a residual unit must end with a Conv (and its ReLU); the hardware adds the shortcut in "
            "the last convolution's block");
  seen.insert(j0);
  LayerSpec end;
  end.kind = LayerKind::ResidualEnd;
  end.line = add.index;
  end.relu = false;
  if (shortcut->empty()) {
    end.shortcut = Shortcut::Identity;
    // docs/real_networks.md: the branch's last convolution quantizes to the shortcut's exponent
    const std::string calib = scales_.calib[cls(x)];
    merge(add, x, cur, calib);
    merge(add, x, add.out, calib);
  } else {
    const Node& sc = nodes_[shortcut->front()];
    seen.insert(shortcut->front());
    end.shortcut = Shortcut::Projection;
    end.stride = sc.stride;
    weighted_.push_back({net_.layers.size(), &sc, x, sc.out});
    // both quantize to the exponent calibrated for the sum (after its ReLU, set below)
    merge(add, sc.out, cur, add.out);
    merge(add, sc.out, add.out, add.out);
  }
  net_.layers.push_back(end);
  relu_layer_ = net_.layers.size() - 1;
  relu_map_ = add.out;
  const auto& ra = readers_[add.out];
  if (ra.size() == 1 && nodes_[ra[0]].op == Op::Relu && add.out != output_) {
    seen.insert(ra[0]);
    return emit(nodes_[ra[0]], add.out);
  }
  return add.out;
}

}  // namespace s2::mapper::onnx_reader
