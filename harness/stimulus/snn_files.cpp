#include "harness/stimulus/snn_files.h"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "harness/stimulus/npy_file.h"

namespace s2 {

namespace {

// A dimension of a file's shape in range, named as the layer names it ("W.npy: weights shape (65, 3, 4): 65
// delays (its dimension 0), expected 1..64"); checked before the value is narrowed to an int.
int dimension(const std::string& field, const std::vector<std::size_t>& shape, std::size_t axis, const char* what, std::size_t most) {
  const std::size_t v = shape[axis];
  if (v < 1 || v > most)
    throw std::runtime_error(field + ": " + std::to_string(v) + " " + what + " (its dimension " + std::to_string(axis) +
                             "), expected 1.." + std::to_string(most));
  return static_cast<int>(v);
}

// The weights' header: int8 (delays, pre, post) within SnnLimits. Sets the layer's delays, pre and post.
void check_weights_header(const NpyHeader& h, const std::string& name, SnnLayer& l) {
  auto fail = [&](const std::string& why) { return std::runtime_error(name + ": " + why); };
  if (h.descr != "|i1") throw fail("weights dtype '" + h.descr + "', expected int8 ('|i1')");
  const std::string field = "weights shape " + npy_shape_text(h.shape);
  if (h.shape.size() != 3) throw fail(field + ": " + std::to_string(h.shape.size()) + " dimensions, expected 3 (delays, pre, post)");
  l.delays = dimension(name + ": " + field, h.shape, 0, "delays", SnnLimits::kMaxDelays);
  l.pre = dimension(name + ": " + field, h.shape, 1, "pre-neurons", SnnLimits::kMaxNeurons);
  l.post = dimension(name + ": " + field, h.shape, 2, "post-neurons", SnnLimits::kMaxNeurons);
  const std::uint64_t bytes = std::uint64_t(l.delays) * std::uint64_t(l.pre) * std::uint64_t(l.post);
  if (bytes > SnnLimits::kMaxWeightBytes)
    throw fail(field + ": " + std::to_string(bytes) + " weight bytes (delays x pre x post), expected at most " +
               std::to_string(SnnLimits::kMaxWeightBytes) + " (64 MB)");
  const std::uint64_t fan_in = std::uint64_t(l.delays) * std::uint64_t(l.pre);
  if (fan_in > SnnLimits::kMaxFanIn)
    throw fail(field + ": a fan-in of delays x pre = " + std::to_string(fan_in) + " could overflow the MLA's 29-bit accumulators, expected at most " +
               std::to_string(SnnLimits::kMaxFanIn));
}

// The spikes' header: uint8 or bool (timesteps, pre), pre as the weights have it. Sets the layer's timesteps.
void check_spikes_header(const NpyHeader& h, const std::string& name, const std::string& weights_name, SnnLayer& l) {
  auto fail = [&](const std::string& why) { return std::runtime_error(name + ": " + why); };
  if (h.descr != "|u1" && h.descr != "|b1") throw fail("spikes dtype '" + h.descr + "', expected uint8 ('|u1') or bool ('|b1')");
  const std::string field = "spikes shape " + npy_shape_text(h.shape);
  if (h.shape.size() != 2) throw fail(field + ": " + std::to_string(h.shape.size()) + " dimensions, expected 2 (timesteps, pre)");
  l.timesteps = dimension(name + ": " + field, h.shape, 0, "timesteps", SnnLimits::kMaxTimesteps);
  if (h.shape[1] != std::size_t(l.pre))
    throw fail(field + ": " + std::to_string(h.shape[1]) + " pre-neurons, but " + weights_name + " has " + std::to_string(l.pre) +
               " (its dimension 1)");
}

}  // namespace

SnnLayer parse_snn_layer(const std::string& weights_bytes, const std::string& weights_name, const std::string& spikes_bytes,
                         const std::string& spikes_name) {
  SnnLayer l;
  const NpyHeader w = parse_npy_header(weights_bytes, weights_name);
  check_weights_header(w, weights_name, l);
  const NpyHeader s = parse_npy_header(spikes_bytes, spikes_name);
  check_spikes_header(s, spikes_name, weights_name, l);
  const std::vector<std::uint8_t> weight_bytes = npy_byte_values(weights_bytes, w, weights_name);
  l.weights.assign(weight_bytes.begin(), weight_bytes.end());  // two's complement, as the file holds them
  l.spikes = npy_byte_values(spikes_bytes, s, spikes_name);
  for (std::size_t k = 0; k < l.spikes.size(); ++k)
    if (l.spikes[k] > 1)
      throw std::runtime_error(spikes_name + ": spike [" + std::to_string(k / std::size_t(l.pre)) + "][" +
                               std::to_string(k % std::size_t(l.pre)) + "] is " + std::to_string(l.spikes[k]) + ", expected 0 or 1");
  return l;
}

SnnLayer read_snn_layer(const std::string& weights_npy, const std::string& spikes_npy) {
  const std::string weights = read_npy_file(weights_npy);
  return parse_snn_layer(weights, weights_npy, read_npy_file(spikes_npy), spikes_npy);
}

}  // namespace s2
