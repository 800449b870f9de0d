// run-net's data along the network: the network it runs (an ONNX model calibrated on --input or --calibrate),
// --input quantized to the network's input, every block's data computed along the network by the golden
// kernels, and the network's output checked (--output, --reference).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/commands/net_block_run.h"
#include "harness/commands/net_runner.h"
#include "harness/stimulus/npy_file.h"
#include "mapper/network.h"
#include "mapper/splitter.h"

namespace s2 {

// The network run-net runs: an ONNX model quantized on the float input given (its calibration,
// docs/real_networks.md), or on --calibrate's set; or a built-in network or layer list.
mapper::Network load_run_net_network(const RunNetRequest& req, const NpyTensor* input, std::vector<std::string>& notes);

// run-net --input: the network's input as int8 [D][H][W]. A float input is quantized with the network's
// input exponent (round half to even, saturated, as the import's calibration assumed).
std::vector<std::int8_t> network_input(const mapper::Network& net, const NpyTensor& t, const std::string& path);

// run-net --input: every block's data, computed along the network with the golden kernels from the input
// (each block's input is what the block before it must give). Every block run then starts from the right
// data, so that a block that goes wrong shows in its own run, not in every block after it.
struct NetworkData {
  std::vector<BlockInputs> blocks;  // indexed as the network's blocks
  std::vector<std::int8_t> output;          // the last block's golden output
  // every block's golden output as its DRAM output region holds it: run_block's cache, so that no block's
  // golden kernels run twice
  std::map<std::string, std::vector<std::uint8_t>> golden;
};
NetworkData golden_chain(const mapper::ParsedNetwork& n, const mapper::NetworkSplit& split, const HwConfig& cfg,
                         std::vector<std::int8_t> input, std::uint64_t seed);

// --output, --reference: the network's output as a backend computed it (`output`, in `strategy`), beside
// the golden chain's and the reference's: one more result record, "network output" (index `index`), and its
// part of the JSON report. `write_failed`: --output could not be written (said on `err`).
struct NetworkOutputCheck {
  CheckResult check;
  nlohmann::json record;
  bool write_failed = false;
};
NetworkOutputCheck check_network_output(const RunNetRequest& req, const mapper::ParsedNetwork& n, const mapper::Network& net,
                                        const BlockOutput& output, const std::string& strategy,
                                        const std::vector<std::int8_t>& golden_output, const NpyTensor* reference,
                                        std::size_t index, const std::string& hash, std::ostream& out, std::ostream& err);

}  // namespace s2
