// The published figures run-net and map compare with: the thesis's (Tables 5.5-5.8, 5.10, G.2) and the
// silicon's (the OctopuScheduler paper's Table II). vectors/ is their only source (compiled in:
// harness/stimulus/embedded_table.h), and a network gets them for what it is, its layers, never its name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mapper/parser.h"

namespace s2 {

// The thesis's network (a built-in network named in vectors/thesis_tables.csv: "vgg16", "resnet50") whose
// layers are the network's (kinds, shapes, windows, strides, padding, activations, the blocks each reads),
// or "" if none is.
std::string thesis_network(const mapper::ParsedNetwork& n);
// The thesis table of clocks per operation and strategy for that network (thesis_network's, "" for any
// other) on a target ("qpe", "s2"), e.g. "Table 5.5": the layout run-net prints in.
std::string thesis_table(const std::string& thesis_net, const std::string& target);

// The thesis's clocks for an operation and strategy (Table 5.5, VGG-16 on QPE-DRAM, and 5.7 on SpiNNaker2;
// SpiNNaker2Py with the element-wise operations taken as free), if it published them; `net` is
// thesis_network's name (vectors/thesis_mapping_clocks.csv).
std::optional<std::uint64_t> thesis_mapping_clocks(const std::string& net, const std::string& target,
                                                   const std::string& operation, const std::string& strategy);
// Thesis Table 5.10 (whole networks on SpiNNaker2, fuse_reuse): the clocks of a category (CONV, FC, PADD,
// MAT_ELE, ACTI, QUAN, POOL, sum; vectors/thesis_network_clocks.csv).
std::optional<std::uint64_t> thesis_network_clocks(const std::string& net, const std::string& category);
// The Table 5.10 categories in the thesis's order, "sum" last.
const std::vector<std::string>& network_categories();
// Thesis Table G.2's MAC utilisation of an operation split for a target, as printed (two decimals;
// vectors/thesis_mac_utilization.csv).
std::optional<double> thesis_mac_utilization(const std::string& net, const std::string& target, const std::string& operation);

// The OctopuScheduler paper's silicon figures (vectors/octopus_silicon_layers.csv, octopus_silicon_times.csv),
// in microseconds.
struct SiliconLayer {
  std::string block;  // ours, e.g. FC_1
  std::string paper;  // the paper's name of the layer
  int workers = 0;    // the PEs the paper gave it
  double us = 0;
  std::optional<double> weight_fetch_us, mla_us;  // a worker's, where the paper gives them
};
struct SiliconFigures {
  std::vector<SiliconLayer> layers;
  double whole_model_us = 0, setup_us = 0, softmax_us = 0, cleanup_us = 0, scheduling_us_per_layer = 0;
};
// The silicon's figures if the network's operation blocks are the paper's MLP's (block by block, the same
// kind and place and the same input and output), else none.
std::optional<SiliconFigures> silicon_figures(const mapper::ParsedNetwork& n);

}  // namespace s2
