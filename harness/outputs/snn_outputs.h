// An SNN layer's files as `s2cosim snn` will write them: the layer it drew (`--save-layer DIR`: DIR/weights.npy
// int8 (delays, pre, post), DIR/spikes.npy uint8 (timesteps, pre), which stimulus/snn_files.h reads back) and
// the currents it computed (`--currents I.npy`: int32 (timesteps, post)). Each file written atomically
// (output_files.h's write_text_file): a run stopped while writing leaves it as it was. The reader is in
// stimulus/ and the writers here because stimulus/ may not include outputs/ (harness/README.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/snn_layer.h"

namespace s2 {

// Creates `dir` if it does not exist. Throws std::invalid_argument for a layer check_snn_layer refuses (nothing
// written), std::runtime_error naming the directory or file that cannot be made or written.
void save_snn_layer(const SnnLayer& layer, const std::string& dir);
// Throws std::invalid_argument if `currents` does not hold timesteps x post values (nothing written),
// std::runtime_error naming the file if it cannot be written.
void write_snn_currents(const std::string& path, int timesteps, int post, const std::vector<std::int32_t>& currents);

}  // namespace s2
