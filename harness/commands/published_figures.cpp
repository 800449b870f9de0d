#include "harness/commands/published_figures.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/stimulus/embedded_table.h"
#include "mapper/distributor.h"
#include "mapper/network.h"

namespace s2 {

namespace {

std::string shape_text(const mapper::Shape3& s) { return fmt::format("{}x{}x{}", s.W, s.H, s.D); }

// What a network is, as the figures depend on it: its input and, per block, the blocks it reads and each
// operation's kind, shapes, window, stride, padding and pooling (activations are operations of their own).
// Not its name, weights, shifts or workers.
std::string layers_of(const mapper::ParsedNetwork& n) {
  std::string s = shape_text(n.input);
  for (const mapper::OperationBlock& b : n.blocks) {
    s += fmt::format("\n{} <-", mapper::to_string(b.kind));
    for (const std::string& in : b.inputs) s += " " + in;
    for (const mapper::Operation& op : b.ops)
      s += fmt::format("; {} {} {}->{} {}x{} s{} p{} pool{}", op.name, mapper::to_string(op.kind), shape_text(op.in),
                       shape_text(op.out), op.Wf, op.Hf, op.stride, op.pad, static_cast<int>(op.pool));
  }
  return s;
}

// The layers of every network thesis_tables.csv names, built once.
const std::vector<std::pair<std::string, std::string>>& thesis_networks() {
  static std::once_flag once;
  static std::vector<std::pair<std::string, std::string>> nets;
  std::call_once(once, [] {
    const FigureTable& t = vectors_table("thesis_tables.csv");
    for (const FigureTable::Row& row : t.rows) {
      const std::string& net = t.text(row, "net");
      if (net.empty() || std::any_of(nets.begin(), nets.end(), [&](const auto& n) { return n.first == net; })) continue;
      try {
        nets.emplace_back(net, layers_of(mapper::parse_network(mapper::load_network(net))));
      } catch (const std::exception& e) {
        throw std::invalid_argument(fmt::format("{}:{}: field 'net': {}", t.path, row.line, e.what()));
      }
    }
  });
  return nets;
}

}  // namespace

std::string thesis_network(const mapper::ParsedNetwork& n) {
  const std::string layers = layers_of(n);
  for (const auto& [net, its_layers] : thesis_networks())
    if (its_layers == layers) return net;
  return "";
}

std::string thesis_table(const std::string& thesis_net, const std::string& target) {
  const FigureTable& t = vectors_table("thesis_tables.csv");
  for (const std::string& net : {thesis_net, std::string()})
    for (const FigureTable::Row& row : t.rows)
      if (t.text(row, "target") == target && t.text(row, "net") == net) return "Table " + t.text(row, "table");
  throw std::invalid_argument(t.path + ": no table for target " + target);
}

std::optional<std::uint64_t> thesis_mapping_clocks(const std::string& net, const std::string& target,
                                                   const std::string& operation, const std::string& strategy) {
  const std::string column = mapper::to_string(mapper::parse_strategy(strategy));
  const FigureTable& t = vectors_table("thesis_mapping_clocks.csv");
  for (const FigureTable::Row& row : t.rows)
    if (t.text(row, "net") == net && t.text(row, "target") == target && t.text(row, "operation") == operation)
      return t.count(row, column);
  return std::nullopt;
}

std::optional<std::uint64_t> thesis_network_clocks(const std::string& net, const std::string& category) {
  const FigureTable& t = vectors_table("thesis_network_clocks.csv");
  if (net.empty() || net == "category" || std::find(t.columns.begin(), t.columns.end(), net) == t.columns.end())
    return std::nullopt;
  for (const FigureTable::Row& row : t.rows)
    if (t.text(row, "category") == category) return t.count(row, net);
  return std::nullopt;
}

const std::vector<std::string>& network_categories() {
  static const std::vector<std::string> c = [] {
    const FigureTable& t = vectors_table("thesis_network_clocks.csv");
    std::vector<std::string> v;
    for (const FigureTable::Row& row : t.rows) v.push_back(t.text(row, "category"));
    return v;
  }();
  return c;
}

std::optional<double> thesis_mac_utilization(const std::string& net, const std::string& target, const std::string& operation) {
  const FigureTable& t = vectors_table("thesis_mac_utilization.csv");
  for (const FigureTable::Row& row : t.rows)
    if (t.text(row, "net") == net && t.text(row, "target") == target && t.text(row, "operation") == operation)
      return t.number(row, "mac_utilization");
  return std::nullopt;
}

std::optional<SiliconFigures> silicon_figures(const mapper::ParsedNetwork& n) {
  const FigureTable& layers = vectors_table("octopus_silicon_layers.csv");
  if (layers.rows.size() != n.blocks.size()) return std::nullopt;
  SiliconFigures f;
  for (std::size_t i = 0; i < n.blocks.size(); ++i) {
    const FigureTable::Row& row = layers.rows[i];
    const mapper::Operation& core = n.blocks[i].core_op();
    if (layers.text(row, "block") != core.name || layers.text(row, "input") != shape_text(core.in) ||
        layers.text(row, "output") != shape_text(core.out))
      return std::nullopt;
    auto required = [&](const char* column) {
      const std::optional<double> v = layers.number(row, column);
      if (!v) throw std::invalid_argument(fmt::format("{}:{}: field '{}' is empty", layers.path, row.line, column));
      return *v;
    };
    f.layers.push_back({core.name, layers.text(row, "paper_layer"), static_cast<int>(required("workers")), required("silicon_us"),
                        layers.number(row, "weight_fetch_us"), layers.number(row, "mla_us")});
  }
  const FigureTable& times = vectors_table("octopus_silicon_times.csv");
  auto time = [&](const char* figure) {
    for (const FigureTable::Row& row : times.rows)
      if (times.text(row, "figure") == figure)
        if (const std::optional<double> us = times.number(row, "us")) return *us;
    throw std::invalid_argument(fmt::format("{}: no figure '{}'", times.path, figure));
  };
  f.whole_model_us = time("whole_model");
  f.setup_us = time("setup");
  f.softmax_us = time("softmax");
  f.cleanup_us = time("cleanup");
  f.scheduling_us_per_layer = time("scheduling_per_layer");
  return f;
}

}  // namespace s2
