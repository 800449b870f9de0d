#include "model/snn_layer.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/splitmix64.h"

namespace s2 {

std::size_t SnnLayer::synapses() const {
  return static_cast<std::size_t>(std::count_if(weights.begin(), weights.end(), [](std::int8_t w) { return w != 0; }));
}

std::size_t SnnLayer::spike_count() const {
  return static_cast<std::size_t>(std::count_if(spikes.begin(), spikes.end(), [](std::uint8_t s) { return s != 0; }));
}

namespace {

// the sizes alone, before any array is allocated
void check_sizes(const SnnLayer& l) {
  auto range = [](const char* field, long long v, long long lo, long long hi) {
    if (v < lo || v > hi)
      throw std::invalid_argument(std::string("SNN layer: ") + field + " is " + std::to_string(v) + ", expected " +
                                  std::to_string(lo) + ".." + std::to_string(hi));
  };
  range("delays", l.delays, 1, SnnLimits::kMaxDelays);
  range("pre", l.pre, 1, SnnLimits::kMaxNeurons);
  range("post", l.post, 1, SnnLimits::kMaxNeurons);
  range("timesteps", l.timesteps, 1, SnnLimits::kMaxTimesteps);
  const std::uint64_t w = std::uint64_t(l.delays) * std::uint64_t(l.pre) * std::uint64_t(l.post);
  if (w > SnnLimits::kMaxWeightBytes)
    throw std::invalid_argument("SNN layer: weights of " + std::to_string(w) + " bytes (delays x pre x post), more than " +
                                std::to_string(SnnLimits::kMaxWeightBytes) + " (64 MB)");
  if (std::uint64_t(l.delays) * std::uint64_t(l.pre) > SnnLimits::kMaxFanIn)
    throw std::invalid_argument("SNN layer: a fan-in of delays x pre = " + std::to_string(std::uint64_t(l.delays) * l.pre) +
                                " could overflow the MLA's 29-bit accumulators (at most " +
                                std::to_string(SnnLimits::kMaxFanIn) + ")");
}

}  // namespace

void check_snn_layer(const SnnLayer& l) {
  check_sizes(l);
  const std::uint64_t w = std::uint64_t(l.delays) * std::uint64_t(l.pre) * std::uint64_t(l.post);
  if (l.weights.size() != w)
    throw std::invalid_argument("SNN layer: weights hold " + std::to_string(l.weights.size()) + " values, expected delays x pre x post = " +
                                std::to_string(w));
  const std::uint64_t s = std::uint64_t(l.timesteps) * std::uint64_t(l.pre);
  if (l.spikes.size() != s)
    throw std::invalid_argument("SNN layer: spikes hold " + std::to_string(l.spikes.size()) + " values, expected timesteps x pre = " +
                                std::to_string(s));
  for (std::size_t k = 0; k < l.spikes.size(); ++k)
    if (l.spikes[k] > 1)
      throw std::invalid_argument("SNN layer: spike [" + std::to_string(k / std::size_t(l.pre)) + "][" +
                                  std::to_string(k % std::size_t(l.pre)) + "] is " + std::to_string(l.spikes[k]) +
                                  ", expected 0 or 1");
}

std::vector<std::int32_t> snn_currents(const SnnLayer& l) {
  check_snn_layer(l);
  std::vector<std::int32_t> cur(std::size_t(l.timesteps) * std::size_t(l.post), 0);
  for (int d = 0; d < l.delays; ++d)
    for (int i = 0; i < l.pre; ++i)
      for (int j = 0; j < l.post; ++j) {
        const std::int32_t w = l.weight(d, i, j);
        if (w == 0) continue;
        // a spike of i at t reaches j at t + d
        for (int t = d; t < l.timesteps; ++t)
          if (l.spike(t - d, i)) cur[std::size_t(t) * std::size_t(l.post) + std::size_t(j)] += w;
      }
  return cur;
}

SnnLayer draw_snn_layer(const SnnDraw& d) {
  auto unit = [](const char* field, double v) {
    if (!(v >= 0.0 && v <= 1.0))
      throw std::invalid_argument(std::string("SNN layer: ") + field + " is " + std::to_string(v) + ", expected 0..1");
  };
  unit("density", d.density);
  unit("rate", d.rate);
  SnnLayer l;
  l.delays = d.delays;
  l.pre = d.pre;
  l.post = d.post;
  l.timesteps = d.timesteps;
  check_sizes(l);
  l.weights.assign(std::size_t(l.delays) * std::size_t(l.pre) * std::size_t(l.post), 0);
  l.spikes.assign(std::size_t(l.timesteps) * std::size_t(l.pre), 0);
  SplitMix64 rng{d.seed};
  auto uniform = [&rng] { return double(rng.next() >> 11) * (1.0 / 9007199254740992.0); };  // [0, 1)
  for (int i = 0; i < l.pre; ++i)
    for (int j = 0; j < l.post; ++j) {
      if (uniform() >= d.density) continue;
      const int delay = static_cast<int>(rng.next() % std::uint64_t(l.delays));
      int w = static_cast<int>(rng.next() % 255) - 128;  // -128..126, then skip 0
      if (w >= 0) ++w;
      l.weights[(std::size_t(delay) * std::size_t(l.pre) + std::size_t(i)) * std::size_t(l.post) + std::size_t(j)] =
          static_cast<std::int8_t>(w);
    }
  for (auto& s : l.spikes) s = uniform() < d.rate ? 1 : 0;
  check_snn_layer(l);
  return l;
}

}  // namespace s2
