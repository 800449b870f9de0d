#include "harness/outputs/snn_outputs.h"

#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "harness/outputs/output_files.h"
#include "harness/stimulus/npy_file.h"

namespace s2 {

void save_snn_layer(const SnnLayer& layer, const std::string& dir) {
  check_snn_layer(layer);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot make the directory '" + dir + "': " + ec.message());
  const auto d = std::size_t(layer.delays), pre = std::size_t(layer.pre), post = std::size_t(layer.post);
  write_text_file((std::filesystem::path(dir) / "weights.npy").string(), npy_bytes({d, pre, post}, layer.weights));
  write_text_file((std::filesystem::path(dir) / "spikes.npy").string(), npy_bytes({std::size_t(layer.timesteps), pre}, layer.spikes));
}

void write_snn_currents(const std::string& path, int timesteps, int post, const std::vector<std::int32_t>& currents) {
  if (timesteps < 0 || post < 0 || currents.size() != std::size_t(timesteps) * std::size_t(post))
    throw std::invalid_argument("SNN currents: " + std::to_string(currents.size()) + " values, expected timesteps x post = " +
                                std::to_string(timesteps) + " x " + std::to_string(post));
  write_text_file(path, npy_bytes({std::size_t(timesteps), std::size_t(post)}, currents));
}

}  // namespace s2
