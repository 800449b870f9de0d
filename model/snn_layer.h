// An SNN layer's synaptic processing, the workload SpiNNaker2 is built for (Huang et al. 2023, "Efficient
// synaptic processing ... Echelon Reorder", section 2.2): int8 weights W[d][pre][post] (pre-neuron i reaches
// post-neuron j through delay d where W[d][i][j] != 0; one synapse usually has one delay, the format allows
// any), spikes s[t][pre] in {0, 1} for T timesteps, and the layer's synaptic input currents
//   I[t][post] = sum over d < delays and i of W[d][i][j] * s[t - d][i]   (s before t = 0 is 0), int32.
// The neurons' own update (leak, threshold) stays on the ARM and is not part of it. Plain data: the mapper
// lays it out as task streams (mapper/snn/), both backends run them, and snn_currents is what they are
// checked against.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace s2 {

struct SnnLayer {
  int delays = 1, pre = 0, post = 0, timesteps = 0;
  std::vector<std::int8_t> weights;  // [delays][pre][post]
  std::vector<std::uint8_t> spikes;  // [timesteps][pre], each 0 or 1

  std::int8_t weight(int d, int i, int j) const {
    return weights[(std::size_t(d) * std::size_t(pre) + std::size_t(i)) * std::size_t(post) + std::size_t(j)];
  }
  bool spike(int t, int i) const { return spikes[std::size_t(t) * std::size_t(pre) + std::size_t(i)] != 0; }
  std::size_t synapses() const;      // non-zero weights
  std::size_t spike_count() const;
};

// The largest layer the tool takes: the currents of the largest fan-in (delays x pre x 128) stay within the
// MLA's 29-bit accumulators, and a layer's weights within 64 MB.
struct SnnLimits {
  static constexpr int kMaxDelays = 64;
  static constexpr int kMaxNeurons = 65536;  // pre or post
  static constexpr int kMaxTimesteps = 1 << 20;
  static constexpr std::uint64_t kMaxWeightBytes = 64ull << 20;
  static constexpr std::uint64_t kMaxFanIn = (1ull << 28) / 128 - 1;  // delays x pre
};

// Throws std::invalid_argument naming the field for a layer whose sizes are out of range or disagree with
// its arrays, or whose spikes are not 0 or 1 (the first offending value by index).
void check_snn_layer(const SnnLayer& l);

// The golden currents, straight from the synapse list (every non-zero W[d][i][j], every timestep its
// pre-neuron spiked), not through any layout: [timesteps][post], int32.
std::vector<std::int32_t> snn_currents(const SnnLayer& l);

// A random layer as the paper's constructed networks draw one: each pre-post pair is a synapse with
// probability `density`, of one delay drawn uniformly from 0..delays-1 and a non-zero int8 weight drawn
// uniformly from [-128, 127] without 0; spikes Bernoulli(`rate`) per neuron and timestep. The same seed
// gives the same layer on every machine (splitmix64).
struct SnnDraw {
  int pre = 0, post = 0, delays = 1, timesteps = 0;
  double density = 0.1, rate = 0.1;
  std::uint64_t seed = 1;
};
SnnLayer draw_snn_layer(const SnnDraw& d);

}  // namespace s2
