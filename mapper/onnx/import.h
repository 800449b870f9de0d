// An ONNX model as the mapper's Network: the layers the hardware runs, their trained int8 weights and each
// layer's QUAN shift (docs/real_networks.md says what the integers mean; mapper/README.md, "ONNX models",
// what is accepted and how it maps to layer-list lines). Read with Debian's libonnx (onnx_proto).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mapper/network.h"

namespace s2::mapper {

// The largest model file read (checked before anything is read): protobuf parses one message of at most
// 2 GB - 1 (its sizes are int); a larger model keeps its weights in external files (onnx.save(...,
// save_as_external_data=True)), which are read tensor by tensor, each bounded by what its file holds.
inline constexpr std::uintmax_t kMaxOnnxFileBytes = 2147483647u;

// Reads an ONNX model as a Network (docs/real_networks.md). A float model is quantized: weights per tensor,
// activations on `calibration` (the network's float inputs, each [C][H][W] flattened); with no calibration,
// layers keep shift -1 (the distributor's test-data rule) and the exponents stay unset. A quantized model
// (QuantizeLinear / DequantizeLinear, QLinearConv, QLinearMatMul) brings its own scales; `calibration` is
// not used. Throws NetworkError: "FILE: node NAME (OPTYPE): reason" for what the hardware or the import
// cannot take, "FILE: reason" for a file that is not a usable model.
Network import_onnx(const std::string& path, const std::vector<std::vector<float>>& calibration = {});
// s2cosim check: every node of the model that will not map, all at once, each "FILE: node NAME (OPTYPE): why"
// with what to change; if none, the import's whole-graph checks (the chain, the scales). `network` is the
// imported network (without calibration) when nothing is refused; `notes` what the import folded, lowered
// or left to the host.
struct OnnxCheck {
  std::vector<std::string> problems, notes;
  std::optional<Network> network;
};
OnnxCheck check_onnx(const std::string& path);
OnnxCheck check_onnx_bytes(const std::string& bytes, const std::string& path);  // the fuzz target calls it

// The same for a file's bytes; `path` names it in messages (the fuzz target calls it).
Network parse_onnx(const std::string& bytes, const std::string& path, const std::vector<std::vector<float>>& calibration = {});

}  // namespace s2::mapper
