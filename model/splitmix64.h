// splitmix64: a small pseudo-random generator that gives the same sequence on every platform and compiler
// (the std distributions do not), for test data and generated task suites.
#pragma once

#include <cstdint>

namespace s2 {

struct SplitMix64 {
  std::uint64_t state = 0;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

}  // namespace s2
