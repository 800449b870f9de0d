// Times the golden kernels (model/golden.h) on VGG-16 layer shapes with every kernel this CPU runs, best of
// REPEATS (default 3), and checks that each gives the scalar reference's results:
//   build/golden_bench [REPEATS]
// Not a test: its figures depend on the machine (docs/figures.md says where they were measured).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "model/golden.h"
#include "model/splitmix64.h"

namespace {

std::vector<std::int8_t> random_bytes(std::size_t n, std::uint64_t seed) {
  s2::SplitMix64 rng{seed};
  std::vector<std::int8_t> v(n);
  for (auto& x : v) x = static_cast<std::int8_t>(rng.next() >> 56);
  return v;
}

// the best wall time of `repeats` runs, in seconds, and the last run's results
double best_seconds(int repeats, const std::function<std::vector<std::int32_t>()>& run, std::vector<std::int32_t>& results) {
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    results = run();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  constexpr int kBits = 29;
  struct Layer {
    const char* name;
    s2::ConvShape conv;  // a convolution, or (C == 0) the matrix multiplication `mm`
    s2::MmShape mm;
  };
  // VGG-16's CONV_2 and CONV_9 with their padding, and FC_14 (a vector times a matrix)
  const Layer layers[] = {{"CONV_2 226x226x64 3x3 x64", {226, 226, 64, 3, 3, 64, 1}, {}},
                          {"CONV_9 30x30x512 3x3 x512", {30, 30, 512, 3, 3, 512, 1}, {}},
                          {"FC_14 25088 x 4096", {}, {25088, 1, 4096, 25088}}};
  std::printf("%-28s %-11s %10s %9s %8s %s\n", "layer", "kernel", "best ms", "GMAC/s", "speedup", "results");
  int failures = 0;
  for (const Layer& l : layers) {
    const bool conv = l.conv.C > 0;
    const s2::ConvShape& s = l.conv;
    const std::size_t a_bytes = conv ? std::size_t(s.C) * s.D * s.Hf * s.Wf : std::size_t(l.mm.H_A) * l.mm.W_A;
    const std::size_t b_bytes = conv ? std::size_t(s.D) * s.Hi * s.Wi : std::size_t(l.mm.H_B) * l.mm.W_B;
    const double macs = conv ? double(s.C) * s.Ho() * s.Wo() * s.D * s.Hf * s.Wf : double(l.mm.H_A) * l.mm.W_A * l.mm.W_B;
    const std::vector<std::int8_t> a = random_bytes(a_bytes, 1), b = random_bytes(b_bytes, 2);
    std::vector<std::int32_t> reference;
    double scalar_seconds = 0;
    for (s2::GoldenKernel k : s2::golden_kernels()) {
      std::vector<std::int32_t> r;
      const double sec = best_seconds(repeats, [&] {
        return conv ? s2::golden_conv(s, a, b, kBits, k) : s2::golden_mm(l.mm, a, b, kBits, k);
      }, r);
      if (k == s2::GoldenKernel::Scalar) {
        reference = r;
        scalar_seconds = sec;
      }
      const bool same = r == reference;
      failures += !same;
      std::printf("%-28s %-11s %10.1f %9.2f %7.1fx %s\n", l.name, s2::golden_kernel_name(k), sec * 1e3, macs / sec / 1e9,
                  scalar_seconds / sec, same ? "equal to scalar" : "DIFFER FROM SCALAR");
    }
    // what the network runner gets: the kernel golden_conv and golden_mm choose without being told
    std::vector<std::int32_t> r;
    const double sec = best_seconds(repeats, [&] {
      return conv ? s2::golden_conv(s, a, b, kBits) : s2::golden_mm(l.mm, a, b, kBits);
    }, r);
    failures += r != reference;
    std::printf("%-28s %-11s %10.1f %9.2f %7.1fx %s\n", l.name, "(chosen)", sec * 1e3, macs / sec / 1e9, scalar_seconds / sec,
                r == reference ? "equal to scalar" : "DIFFER FROM SCALAR");
  }
  return failures == 0 ? 0 : 1;
}
