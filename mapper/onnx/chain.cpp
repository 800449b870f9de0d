#include <cmath>
#include <set>

#include "mapper/onnx/importer.h"

namespace s2::mapper::onnx_reader {

void Importer::merge(const Node& at, const std::string& a, const std::string& b, const std::string& calib) {
  const std::string why = scales_.merge(acts_.at(a).cls, acts_.at(b).cls, calib);
  if (!why.empty()) fail_at(at, why);
}

void Importer::fuse_tables() {
  std::map<std::string, int> reads;
  for (const Node& n : nodes_)
    for (const std::string& m : n.in) ++reads[m];
  for (Node& n : nodes_) {
    if (n.op != Op::Mul || n.channel) continue;
    for (std::size_t k = 0; k < 2; ++k) {
      const auto t = table_of_.find(n.in[k]);
      if (t == table_of_.end()) continue;
      const Node& f = nodes_[t->second];
      if (f.in[0] != n.in[1 - k] || f.times_x || f.acts.size() != 1 || reads[n.in[k]] != 1 || n.in[k] == output_) continue;
      n.op = Op::Table;
      n.acts = f.acts;
      n.times_x = true;
      n.in = {f.in[0]};
      // SiLU and HardSwish as the activations they are (PyTorch's float32 1/6 for HardSigmoid's alpha is 1/6)
      const Activation& a = f.acts[0];
      if (a.function == "sigmoid" || (a.function == "hardsigmoid" && std::fabs(a.alpha - 1.0 / 6) < 1e-7 && a.beta == 0.5)) {
        n.acts = {default_activation(a.function == "sigmoid" ? "silu" : "hardswish")};
        n.times_x = false;
      }
      fused_.insert(t->second);
      notes_.push_back(n.label + ": x * " + to_string(f.acts[0]) + "(x) with " + f.label + ": one table of x on the ARM");
      break;
    }
  }
}

void Importer::walk() {
  fuse_tables();
  for (std::size_t k = 0; k < nodes_.size(); ++k) {
    node_of_[nodes_[k].out] = k;
    if (fused_.count(k)) continue;
    for (const std::string& m : nodes_[k].in) readers_[m].push_back(k);
  }
  seen_.assign(nodes_.size(), false);
  for (const std::size_t k : fused_) seen_[k] = true;
  // a 1x1 convolution without padding read by one Add alone may be that Add's projection: its Add decides
  for (std::size_t k = 0; k < nodes_.size(); ++k) {
    const Node& n = nodes_[k];
    const auto& r = readers_[n.out];
    if (n.op == Op::Conv && n.kW == 1 && n.kH == 1 && n.pad == 0 && r.size() == 1 && nodes_[r[0]].op == Op::Add &&
        n.out != output_)
      projections_.insert(k);
  }
  if (const auto& r = readers_[output_]; !r.empty())
    fail_at(nodes_[r[0]], "reads the graph's output " + in_quotes(output_) + ", which must be the network's end");
  map_layer_[input_] = -1;
  chain_ = input_;
  for (std::size_t k = 0; k < nodes_.size(); ++k) {
    if (seen_[k]) continue;
    Node& n = nodes_[k];
    if (readers_[n.out].empty() && n.out != output_)
      fail(n.label + ": its output " + in_quotes(n.out) + " is not used and is not the graph's output (a branch that leads nowhere)");
    for (const std::string& m : n.in)
      if (n.op != Op::Add && !map_layer_.count(m))
        fail_at(n, "reads " + in_quotes(m) + ", which no layer before it computes (a graph out of topological order?)");
    std::vector<std::size_t> main, shortcut;
    std::size_t add = 0;
    if (n.in.size() == 1 && map_layer_.at(n.in[0]) == map_layer_.at(chain_) &&
        chain_unit(n.in[0], main, shortcut, add)) {
      residual(n.in[0], main, shortcut, add);
      continue;
    }
    if (projections_.count(k)) continue;
    if (n.op == Op::Add) {
      graph_add(k);
      continue;
    }
    seen_[k] = true;
    emit(n);
  }
  for (std::size_t k = 0; k < nodes_.size(); ++k)
    if (!seen_[k]) fail_at(nodes_[k], "is not on a path from the graph's input to its output");
  if (net_.layers.empty()) fail("the model has no layers");
  if (net_.layers.size() > kMaxLayers) fail("expected at most " + std::to_string(kMaxLayers) + " layers");
  if (const auto o = map_layer_.find(output_); o == map_layer_.end() || o->second != static_cast<int>(net_.layers.size()) - 1)
    fail("the graph's output " + in_quotes(output_) + " is not the last layer's output (the hardware's output is the last block's)");
  final_ = output_;
}

std::string Importer::map_name(const std::string& m) {
  const int l = map_layer_.at(m);
  if (l < 0) return "input";
  LayerSpec& spec = net_.layers[static_cast<std::size_t>(l)];
  if (spec.name.empty()) spec.name = layer_out_[static_cast<std::size_t>(l)];
  return spec.name;
}

void Importer::push_layer(LayerSpec l, const std::vector<std::string>& in, const std::string& out, bool list_inputs) {
  if (list_inputs || (!in.empty() && map_layer_.at(in[0]) != map_layer_.at(chain_)))
    for (const std::string& m : in) l.inputs.push_back(map_name(m));
  map_layer_[out] = static_cast<int>(net_.layers.size());
  net_.layers.push_back(std::move(l));
  layer_out_.push_back(out);
  chain_ = out;
}

bool Importer::last_layer_out(const std::string& m) const {
  const auto it = map_layer_.find(m);
  const auto r = readers_.find(m);
  return it != map_layer_.end() && it->second >= 0 && it->second == static_cast<int>(net_.layers.size()) - 1 &&
         layer_out_.back() == m && r != readers_.end() && r->second.size() == 1;
}

void Importer::emit(Node& n) {
  LayerSpec l;
  l.line = n.index;
  const std::string x = n.in[0];
  const bool non_negative_in = non_negative_.count(x) != 0;
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
      weighted_.push_back({net_.layers.size(), &n, x, n.out});
      push_layer(l, n.in, n.out, false);
      return;
    case Op::Relu:
    case Op::Clip: {
      // the layer just emitted takes it in (its ACTI, or its element-wise operation's max(0, .)), if nothing
      // else reads the map before it
      const int li = last_layer_out(x) ? map_layer_.at(x) : -1;
      LayerSpec* last = li >= 0 ? &net_.layers[static_cast<std::size_t>(li)] : nullptr;
      Elementwise* elt = nullptr;
      for (Elementwise& e : elementwise_)
        if (last && e.layer == static_cast<std::size_t>(li)) elt = &e;
      const bool weighted = last && (last->kind == LayerKind::Conv || last->kind == LayerKind::Fc);
      bool joins = false;
      if (n.op == Op::Clip)  // F.relu6 exports as Relu, then Clip(0, 6): the same layer
        joins = weighted && (!last->relu || x == after_relu_map_) && !clip_high_.count(static_cast<std::size_t>(li));
      else
        joins = last && !last->relu &&
                (weighted || last->kind == LayerKind::ResidualEnd ||
                 (elt && (elt->node->op == Op::Add || elt->node->op == Op::Affine) && !elt->relu));
      if (!joins) {
        // a table of its own on the ARM
        if (n.op == Op::Clip && n.hi != 6)
          fail_at(n, "follows no Conv, Gemm or MatMul directly (QUAN applies its bound there); on its own it is taken "
                     "as a table for max 6 (ReLU6) only, this one has max " + std::to_string(n.hi));
        n.op = Op::Table;
        n.acts = {default_activation(n.hi == 6 ? "relu6" : "relu")};
        emit(n);
        return;
      }
      if (n.op == Op::Clip) clip_high_[static_cast<std::size_t>(li)] = n.hi;
      last->relu = true;
      if (elt) elt->relu = true;
      // the layer's map is the one after its ReLU; an identity unit's keeps the shortcut's exponent
      merge(n, x, n.out, scales_.calib[cls(x)] == x ? n.out : scales_.calib[cls(x)]);
      for (Weighted& w : weighted_)
        if (w.out == x) w.out = n.out;
      if (elt && elt->out == x) elt->out = n.out;
      map_layer_[n.out] = li;
      layer_out_[static_cast<std::size_t>(li)] = n.out;
      if (chain_ == x) chain_ = n.out;
      non_negative_.insert(n.out);
      after_relu_map_ = n.op == Op::Relu ? n.out : std::string();
      return;
    }
    case Op::MaxPool:
    case Op::AvgPool:
      if (n.op == Op::MaxPool && (n.pad > 0 || n.pad_end > 0) && !non_negative_in)
        fail_at(n, std::string(n.pad > 0 ? "padded" : "ceil_mode") +
                       " max pooling of a map that may be negative: the hardware pads with zeros, ONNX with minus "
                       "infinity; they agree only after a ReLU (docs/real_networks.md)");
      l.kind = LayerKind::Pool;
      l.pool = n.op == Op::MaxPool ? PoolType::Max : PoolType::Avg;
      l.Wf = n.kW;
      l.Hf = n.kH;
      l.stride = n.stride;
      l.pad = n.pad;
      l.pad_end = n.pad_end;
      push_layer(l, n.in, n.out, false);
      if (non_negative_in) non_negative_.insert(n.out);
      return;
    case Op::Flatten: {
      // into a fully connected layer, or as the graph's output (a convolutional head's [C,1,1] map, or any
      // map: [C][H][W] in SRAM and DRAM is already the flattened order)
      const auto& r = readers_[n.out];
      const bool last = r.empty() && n.out == output_;
      if (!last && (r.size() != 1 || nodes_[r[0]].op != Op::Fc))
        fail_at(n, "flattens a map that no fully connected layer reads next; the hardware flattens only into one, or as the graph's output");
      if (last) net_.output_flattened = true;
      map_layer_[n.out] = map_layer_.at(x);
      if (chain_ == x) chain_ = n.out;
      return;
    }
    case Op::Concat: {
      l.kind = LayerKind::Concat;
      l.relu = false;
      push_layer(l, n.in, n.out, true);
      if (std::all_of(n.in.begin(), n.in.end(), [&](const std::string& m) { return non_negative_.count(m) != 0; }))
        non_negative_.insert(n.out);
      return;
    }
    case Op::Slice:
    case Op::Shuffle:
      l.kind = n.op == Op::Slice ? LayerKind::Slice : LayerKind::Shuffle;
      l.relu = false;
      l.first = n.first;
      l.count = n.count;
      if (n.op == Op::Shuffle) l.groups = n.groups;
      push_layer(l, n.in, n.out, false);
      if (non_negative_in) non_negative_.insert(n.out);
      return;
    case Op::Table:
    case Op::Affine:
    case Op::Mul: {
      l.kind = LayerKind::Elementwise;
      l.relu = false;
      elementwise_.push_back({net_.layers.size(), &n, n.in, n.out, false});
      push_layer(l, n.in, n.out, n.in.size() > 1);
      if (n.op == Op::Table)
        notes_.push_back(n.label + ": a table on the ARM (" + (n.times_x ? "x * " + to_string(n.acts[0]) + "(x)" : to_string(n.acts[0])) +
                         (n.acts.size() > 1 ? ", one per channel" : "") + ")");
      if (n.op == Op::Table && std::all_of(n.acts.begin(), n.acts.end(), [](const Activation& a) {
            return a.function == "relu" || a.function == "relu6";
          }))
        non_negative_.insert(n.out);
      const auto& r = readers_[n.out];
      if (n.op == Op::Affine && r.size() == 1 && nodes_[r[0]].op == Op::Conv)
        notes_.push_back(n.label + ": its affine could fold into the next convolution, " + nodes_[r[0]].label +
                         ", but runs on the ARM (folding across that convolution's zero padding is not exact)");
      return;
    }
    case Op::Add:
      break;  // the walk's graph_add() or residual()
  }
  fail_at(n, "is not a layer");
}

bool Importer::chain_unit(const std::string& x, std::vector<std::size_t>& main, std::vector<std::size_t>& shortcut,
                          std::size_t& add) const {
  const auto rx = readers_.find(x);
  if (rx == readers_.end() || rx->second.size() != 2 || rx->second[0] == rx->second[1]) return false;
  // each branch: nodes of one input from x to the Add that joins them, each read by the next alone
  auto branch = [&](std::size_t k, std::vector<std::size_t>& path) -> std::optional<std::size_t> {
    for (std::size_t guard = 0; guard <= nodes_.size(); ++guard) {
      const Node& n = nodes_[k];
      if (n.op == Op::Add) return k;
      if (n.in.size() != 1 || n.op == Op::Flatten || n.out == output_) return std::nullopt;
      path.push_back(k);
      const auto r = readers_.find(n.out);
      if (r == readers_.end() || r->second.size() != 1) return std::nullopt;
      k = r->second[0];
    }
    return std::nullopt;
  };
  std::vector<std::size_t> p0, p1;
  const auto j0 = branch(rx->second[0], p0), j1 = branch(rx->second[1], p1);
  if (!j0 || !j1 || *j0 != *j1 || (p0.empty() && p1.empty())) return false;
  const Node& a = nodes_[*j0];
  // the shortcut: x itself, or a 1x1 convolution of it without padding (when both branches are one such
  // convolution, the Add's second operand, as PyTorch's ResNet writes out + shortcut)
  auto projection = [&](const std::vector<std::size_t>& p) {
    if (p.size() != 1) return false;
    const Node& n = nodes_[p[0]];
    return n.op == Op::Conv && n.kW == 1 && n.kH == 1 && n.pad == 0 && n.groups == 1;
  };
  if (p0.empty() || p1.empty()) {
    main = p0.empty() ? p1 : p0;
    shortcut.clear();
  } else if (projection(p0) || projection(p1)) {
    const bool second_is_p1 = a.in[1] == nodes_[p1.back()].out;
    const bool sc1 = projection(p1) && (!projection(p0) || second_is_p1);
    main = sc1 ? p0 : p1;
    shortcut = sc1 ? p1 : p0;
  } else {
    return false;
  }
  // the branch ends with a Conv (and its ReLU): the hardware adds the shortcut in its block
  std::size_t last = main.size();
  while (last > 0 && (nodes_[main[last - 1]].op == Op::Relu || nodes_[main[last - 1]].op == Op::Clip)) --last;
  if (last == 0 || nodes_[main[last - 1]].op != Op::Conv) return false;
  add = *j0;
  return true;
}

void Importer::residual(const std::string& x, const std::vector<std::size_t>& main,
                        const std::vector<std::size_t>& shortcut, std::size_t j) {
  const Node& add = nodes_[j];
  LayerSpec begin;
  begin.kind = LayerKind::ResidualBegin;
  begin.line = nodes_[main.front()].index;
  net_.layers.push_back(begin);
  layer_out_.emplace_back();
  for (const std::size_t k : main) {
    seen_[k] = true;
    emit(nodes_[k]);
  }
  if (net_.layers.back().kind != LayerKind::Conv)
    fail_at(add,
            "the branch of a residual unit must end with a Conv (and its ReLU); the hardware adds the shortcut in "
            "the last convolution's block");
  const std::string cur = chain_;
  seen_[j] = true;
  LayerSpec end;
  end.kind = LayerKind::ResidualEnd;
  end.line = add.index;
  end.relu = false;
  if (shortcut.empty()) {
    end.shortcut = Shortcut::Identity;
    // docs/real_networks.md: the branch's last convolution quantizes to the shortcut's exponent
    const std::string calib = scales_.calib[cls(x)];
    merge(add, x, cur, calib);
    merge(add, x, add.out, calib);
  } else {
    const Node& sc = nodes_[shortcut.front()];
    seen_[shortcut.front()] = true;
    end.shortcut = Shortcut::Projection;
    end.stride = sc.stride;
    weighted_.push_back({net_.layers.size(), &sc, x, sc.out});
    // both quantize to the exponent calibrated for the sum (after its ReLU, set below)
    merge(add, sc.out, cur, add.out);
    merge(add, sc.out, add.out, add.out);
  }
  push_layer(end, {}, add.out, false);
  relu_after(add);
  if (shortcut.empty()) calibrate_sum_too(add);
}

void Importer::relu_after(const Node& add) {
  const auto& ra = readers_[add.out];
  if (ra.size() == 1 && nodes_[ra[0]].op == Op::Relu && add.out != output_ && !seen_[ra[0]]) {
    seen_[ra[0]] = true;
    emit(nodes_[ra[0]]);
  }
}

void Importer::calibrate_sum_too(const Node& add) {
  const auto& ra = readers_[add.out];
  const bool relu = ra.size() == 1 && nodes_[ra[0]].op == Op::Relu && seen_[ra[0]] && map_layer_.count(nodes_[ra[0]].out);
  const int c = scales_.root(cls(add.out));
  scales_.also[static_cast<std::size_t>(c)].push_back(relu ? nodes_[ra[0]].out : add.out);
}

bool Importer::depends_on(const std::string& m, const std::string& x) const {
  std::set<std::string> seen;
  std::vector<std::string> todo{m};
  while (!todo.empty()) {
    const std::string a = todo.back();
    todo.pop_back();
    if (a == x) return true;
    const auto p = node_of_.find(a);
    if (p == node_of_.end() || !seen.insert(a).second) continue;
    for (const std::string& i : nodes_[p->second].in) todo.push_back(i);
  }
  return false;
}

void Importer::graph_add(std::size_t k) {
  Node& add = nodes_[k];
  seen_[k] = true;
  const std::string a = add.in[0], b = add.in[1];
  // a 1x1 convolution that waits for this Add to say whether it is its projection
  auto deferred = [&](const std::string& m) -> std::optional<std::size_t> {
    const auto p = node_of_.find(m);
    if (p == node_of_.end() || !projections_.count(p->second) || seen_[p->second]) return std::nullopt;
    return p->second;
  };
  auto emit_now = [&](std::size_t p) {
    seen_[p] = true;
    emit(nodes_[p]);
  };
  // the map the branch's last convolution (just emitted, read by this Add alone) gives, a branch from x: the
  // unit's input, what its shortcut adds or projects (two maps computed side by side are added element-wise)
  auto branch_end = [&](const std::string& m, const std::string& x) {
    return last_layer_out(m) && net_.layers.back().kind == LayerKind::Conv && depends_on(m, x);
  };
  // one exponent for the maps the residual end joins (a quantized model's may differ: then an element-wise Add)
  auto one_scale = [&](std::initializer_list<std::string> maps) {
    std::optional<int> e;
    for (const std::string& m : maps) {
      const auto& me = scales_.e[cls(m)];
      if (e && me && *e != *me) return false;
      if (me) e = me;
    }
    return true;
  };
  // both operands 1x1 convolutions: the first is the branch, the second the shortcut (out + shortcut)
  if (const auto pa = deferred(a), pb = deferred(b); pa && pb) emit_now(*pa);
  for (const auto& [s, o] : {std::pair{b, a}, std::pair{a, b}}) {
    const auto p = deferred(s);
    if (!p || !branch_end(o, nodes_[*p].in[0]) || !one_scale({nodes_[*p].out, o, add.out})) continue;
    const Node& sc = nodes_[*p];
    seen_[*p] = true;
    LayerSpec end;
    end.kind = LayerKind::ResidualEnd;
    end.line = add.index;
    end.relu = false;
    end.shortcut = Shortcut::Projection;
    end.stride = sc.stride;
    weighted_.push_back({net_.layers.size(), &sc, sc.in[0], sc.out});
    merge(add, sc.out, o, add.out);
    merge(add, sc.out, add.out, add.out);
    push_layer(end, {sc.in[0]}, add.out, true);
    relu_after(add);
    return;
  }
  for (const std::string& m : {a, b})
    if (const auto p = deferred(m)) emit_now(*p);
  for (const std::string& m : {a, b})
    if (!map_layer_.count(m)) fail_at(add, "reads " + in_quotes(m) + ", which no layer before it computes");
  for (const auto& [s, o] : {std::pair{b, a}, std::pair{a, b}}) {
    if (s == o || !branch_end(o, s) || !one_scale({s, o, add.out})) continue;
    LayerSpec end;
    end.kind = LayerKind::ResidualEnd;
    end.line = add.index;
    end.relu = false;
    end.shortcut = Shortcut::Identity;
    const std::string calib = scales_.calib[cls(s)];
    merge(add, s, o, calib);
    merge(add, s, add.out, calib);
    push_layer(end, {s}, add.out, true);
    relu_after(add);
    calibrate_sum_too(add);
    return;
  }
  LayerSpec l;
  l.kind = LayerKind::Elementwise;
  l.line = add.index;
  l.relu = false;
  elementwise_.push_back({net_.layers.size(), &add, add.in, add.out, false});
  push_layer(l, add.in, add.out, true);
  relu_after(add);
}

}  // namespace s2::mapper::onnx_reader
