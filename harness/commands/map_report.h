// s2cosim map: a network's split scheme for QPE-DRAM or SpiNNaker2, printed like thesis Appendix G
// (pieces per dimension, piece sizes before and after alignment, MAC and SRAM utilisation) and written
// as contract-3 JSON.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "harness/commands/published_figures.h"  // thesis_mac_utilization, Table G.2
#include "mapper/splitter.h"
#include "model/hw_config.h"

namespace s2 {

struct MapRequest {
  std::string net = "vgg16";   // vgg16 | resnet50 | a layer-list file
  std::string target = "qpe";  // qpe | s2
  std::string preset;          // s2: the chip (prototype when empty), as run-net --preset
  std::string json_out;
  std::string config_file, mac_shape;
  std::string split_file;  // blocks split as the file says (mapper/README.md, "Split files")
  bool verify = false;  // compute every block whole and in pieces, and compare (thesis 5.1.1)
};

std::string format_split(const mapper::ParsedNetwork& n, const mapper::NetworkSplit& s);
std::string split_json(const mapper::ParsedNetwork& n, const mapper::NetworkSplit& s, const HwConfig& cfg);
// Each block's lower bound on the target's chip (mapper/block_bound.h): its terms, the one that sets it, the sum.
std::string format_bounds(const mapper::ParsedNetwork& n, const HwConfig& cfg);
// Exit code: 0, 1 if --verify found a piece-wise result that differs, 2 for bad input (an inconsistent network names its file, line, layer and field).
int map_network(const MapRequest& req, std::ostream& out, std::ostream& err);

}  // namespace s2
