// An SNN layer's files (harness/stimulus/snn_files.h, harness/outputs/snn_outputs.h): a layer saved and read
// back equal, bool spikes in NumPy's bytes made here by hand, the currents' int32 file parsed by hand, and
// every refusal with its message, absurd headers refused before anything of their size is allocated.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/outputs/snn_outputs.h"
#include "harness/stimulus/npy_file.h"
#include "harness/stimulus/snn_files.h"
#include "model/snn_layer.h"
#include "test_support.h"

// The largest single allocation while `g_watch` is set: the reader must not allocate what a header claims
// before the file shows it has the data.
namespace {
std::atomic<bool> g_watch{false};
std::atomic<std::size_t> g_largest{0};
}  // namespace

// malloc and free underneath both; GCC takes free() on what operator new returned for a mismatch
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
  if (g_watch && n > g_largest) g_largest = n;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

using namespace s2;
namespace fs = std::filesystem;

namespace {

// A .npy file's bytes as NumPy writes them, made byte by byte (so the reader is not checked only against
// xtensor's writer): magic, version 1.0, the header's length (2 bytes, little-endian), the header padded
// with spaces so that the data starts at a multiple of 64, a newline, the data.
std::string npy_by_hand(const std::string& descr, const std::string& shape, const std::string& data, bool fortran = false) {
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string b = "\x93NUMPY";
  b += '\x01';
  b += '\x00';
  b += static_cast<char>(header.size() & 0xff);
  b += static_cast<char>(header.size() >> 8);
  return b + header + data;
}

std::string bytes_of(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += static_cast<char>(static_cast<std::uint8_t>(x));
  return s;
}

// The message parse_snn_layer throws for the two files' bytes ("" if it throws none), named W.npy and S.npy.
std::string refusal(const std::string& weights, const std::string& spikes) {
  try {
    parse_snn_layer(weights, "W.npy", spikes, "S.npy");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

void expect_equal_layers(const SnnLayer& got, const SnnLayer& want) {
  EXPECT_EQ(got.delays, want.delays);
  EXPECT_EQ(got.pre, want.pre);
  EXPECT_EQ(got.post, want.post);
  EXPECT_EQ(got.timesteps, want.timesteps);
  EXPECT_EQ(got.weights, want.weights);
  EXPECT_EQ(got.spikes, want.spikes);
}

}  // namespace

TEST(SnnFiles, SavedLayerReadsBackEqual) {
  const test::TempDir tmp;
  SnnDraw draw;
  draw.pre = 13;
  draw.post = 7;
  draw.delays = 3;
  draw.timesteps = 20;
  draw.density = 0.4;
  draw.rate = 0.3;
  draw.seed = 29;
  const SnnLayer layer = draw_snn_layer(draw);
  ASSERT_GT(layer.synapses(), 0u);
  ASSERT_GT(layer.spike_count(), 0u);
  const std::string dir = tmp.path("saved/layer");  // made, parents too
  save_snn_layer(layer, dir);
  const SnnLayer back = read_snn_layer(dir + "/weights.npy", dir + "/spikes.npy");
  expect_equal_layers(back, layer);
  EXPECT_EQ(snn_currents(back), snn_currents(layer));
  // the dtypes the reader is meant to take, and nothing left beside the two files (written through a
  // temporary and renamed)
  EXPECT_NE(test::read_text(dir + "/weights.npy").find("'descr': '|i1'"), std::string::npos);
  EXPECT_NE(test::read_text(dir + "/spikes.npy").find("'descr': '|u1'"), std::string::npos);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"spikes.npy", "weights.npy"}));
  // saved again over the first files: replaced whole
  SnnLayer other = layer;
  other.spikes.assign(other.spikes.size(), 1);
  save_snn_layer(other, dir);
  expect_equal_layers(read_snn_layer(dir + "/weights.npy", dir + "/spikes.npy"), other);
}

TEST(SnnFiles, BoolSpikesAndInt8WeightsInNumPysBytes) {
  const test::TempDir tmp;
  // W[2][3][2]: -128 (0x80), 127, -1 among zeros; spikes bool (4, 3)
  const std::vector<int> w = {0, -128, 127, 0, 0, 0, /* d1 */ 0, 0, 0, -1, 5, 0};
  const std::vector<int> s = {1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 1};
  const std::string weights = tmp.write("W.npy", npy_by_hand("|i1", "(2, 3, 2)", bytes_of(w)));
  const std::string spikes = tmp.write("S.npy", npy_by_hand("|b1", "(4, 3)", bytes_of(s)));
  const SnnLayer l = read_snn_layer(weights, spikes);
  EXPECT_EQ(l.delays, 2);
  EXPECT_EQ(l.pre, 3);
  EXPECT_EQ(l.post, 2);
  EXPECT_EQ(l.timesteps, 4);
  EXPECT_EQ(l.weights, std::vector<std::int8_t>(w.begin(), w.end()));
  EXPECT_EQ(l.spikes, std::vector<std::uint8_t>(s.begin(), s.end()));
  EXPECT_EQ(l.weight(0, 0, 1), -128);
  EXPECT_EQ(l.weight(1, 1, 1), -1);
  // uint8 spikes of the same values read alike
  const SnnLayer u = parse_snn_layer(test::read_text(weights), "W.npy", npy_by_hand("|u1", "(4, 3)", bytes_of(s)), "S.npy");
  EXPECT_EQ(u.spikes, l.spikes);
}

TEST(SnnFiles, CurrentsAreInt32InTheirShape) {
  const test::TempDir tmp;
  const std::vector<std::int32_t> currents = {1, -2, 70000, -70000, 2147483647, -2147483647 - 1};
  const std::string path = tmp.path("I.npy");
  write_snn_currents(path, 3, 2, currents);
  const std::string b = test::read_text(path);
  ASSERT_GE(b.size(), 10u);
  EXPECT_EQ(b.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t header_bytes = static_cast<std::uint8_t>(b[8]) | static_cast<std::size_t>(static_cast<std::uint8_t>(b[9])) << 8;
  ASSERT_EQ(b.size(), 10 + header_bytes + 4 * currents.size());
  std::string compact;
  for (char c : b.substr(10, header_bytes))
    if (c != ' ') compact += c;
  EXPECT_EQ(compact, "{'descr':'<i4','fortran_order':False,'shape':(3,2),}\n");
  for (std::size_t k = 0; k < currents.size(); ++k) {
    std::uint32_t v = 0;
    for (int byte = 3; byte >= 0; --byte) v = v << 8 | static_cast<std::uint8_t>(b[10 + header_bytes + 4 * k + std::size_t(byte)]);
    EXPECT_EQ(static_cast<std::int32_t>(v), currents[k]) << k;
  }
  // a size that disagrees: refused, nothing written
  const std::string bad = tmp.path("bad.npy");
  EXPECT_THROW(write_snn_currents(bad, 2, 2, currents), std::invalid_argument);
  EXPECT_FALSE(fs::exists(bad));
}

TEST(SnnFiles, AnInvalidLayerIsNotSaved) {
  const test::TempDir tmp;
  SnnDraw draw;
  draw.pre = 4;
  draw.post = 4;
  draw.timesteps = 3;
  SnnLayer l = draw_snn_layer(draw);
  l.spikes[5] = 2;
  const std::string dir = tmp.path("never");
  EXPECT_THROW(save_snn_layer(l, dir), std::invalid_argument);
  EXPECT_FALSE(fs::exists(dir));
  // a directory that cannot be made: named
  l.spikes[5] = 1;
  const std::string file = tmp.write("a_file", "x");
  try {
    save_snn_layer(l, file + "/layer");
    ADD_FAILURE() << "saved under a file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot make the directory '" + file + "/layer'"), std::string::npos) << e.what();
  }
}

TEST(SnnFiles, EveryRefusalNamesFileFieldAndExpectation) {
  const std::string w122 = npy_by_hand("|i1", "(1, 2, 2)", bytes_of({1, 2, 3, 4}));
  const std::string s32 = npy_by_hand("|u1", "(3, 2)", bytes_of({0, 1, 1, 0, 0, 0}));
  ASSERT_EQ(refusal(w122, s32), "");
  struct Case {
    const char* what;
    std::string weights, spikes, message;
  };
  const std::vector<Case> cases = {
      {"not .npy", "garbage...", s32, "W.npy: not a .npy file (no \\x93NUMPY magic)"},
      {"weights float32", npy_by_hand("<f4", "(1, 2, 2)", std::string(16, '\0')), s32,
       "W.npy: weights dtype '<f4', expected int8 ('|i1')"},
      {"weights uint8", npy_by_hand("|u1", "(1, 2, 2)", std::string(4, '\0')), s32,
       "W.npy: weights dtype '|u1', expected int8 ('|i1')"},
      {"weights 2-D", npy_by_hand("|i1", "(2, 2)", std::string(4, '\0')), s32,
       "W.npy: weights shape (2, 2): 2 dimensions, expected 3 (delays, pre, post)"},
      {"weights Fortran order", npy_by_hand("|i1", "(1, 2, 2)", std::string(4, '\0'), true), s32,
       "W.npy: expected C order, got fortran_order True"},
      {"65 delays", npy_by_hand("|i1", "(65, 1, 1)", std::string(65, '\0')), npy_by_hand("|u1", "(1, 1)", "\x01"),
       "W.npy: weights shape (65, 1, 1): 65 delays (its dimension 0), expected 1..64"},
      {"no post-neurons", npy_by_hand("|i1", "(1, 2, 0)", ""), s32,
       "W.npy: weights shape (1, 2, 0): 0 post-neurons (its dimension 2), expected 1..65536"},
      {"pre beyond int", npy_by_hand("|i1", "(1, 4294967297, 1)", ""), s32,
       "W.npy: weights shape (1, 4294967297, 1): 4294967297 pre-neurons (its dimension 1), expected 1..65536"},
      {"weights of 128 MB", npy_by_hand("|i1", "(32, 65536, 64)", ""), s32,
       "W.npy: weights shape (32, 65536, 64): 134217728 weight bytes (delays x pre x post), expected at most 67108864 (64 MB)"},
      {"fan-in", npy_by_hand("|i1", "(64, 65536, 1)", ""), s32,
       "W.npy: weights shape (64, 65536, 1): a fan-in of delays x pre = 4194304 could overflow the MLA's 29-bit "
       "accumulators, expected at most 2097151"},
      {"spikes int8", w122, npy_by_hand("|i1", "(3, 2)", std::string(6, '\0')),
       "S.npy: spikes dtype '|i1', expected uint8 ('|u1') or bool ('|b1')"},
      {"spikes 1-D", w122, npy_by_hand("|u1", "(6,)", std::string(6, '\0')),
       "S.npy: spikes shape (6,): 1 dimensions, expected 2 (timesteps, pre)"},
      {"pre disagrees", npy_by_hand("|i1", "(1, 13, 2)", std::string(26, '\0')), npy_by_hand("|u1", "(5, 12)", std::string(60, '\0')),
       "S.npy: spikes shape (5, 12): 12 pre-neurons, but W.npy has 13 (its dimension 1)"},
      {"2^40 timesteps", w122, npy_by_hand("|b1", "(1099511627776, 2)", std::string(2, '\0')),
       "S.npy: spikes shape (1099511627776, 2): 1099511627776 timesteps (its dimension 0), expected 1..1048576"},
      {"weights truncated", npy_by_hand("|i1", "(1, 2, 2)", std::string(3, '\0')), s32,
       "W.npy: shape (1, 2, 2) needs 4 data bytes, the file has 3"},
      {"spikes longer than their shape", w122, npy_by_hand("|u1", "(3, 2)", std::string(7, '\0')),
       "S.npy: shape (3, 2) needs 6 data bytes, the file has 7"},
      {"spike 2", w122, npy_by_hand("|u1", "(3, 2)", bytes_of({0, 1, 1, 0, 2, 0})), "S.npy: spike [2][0] is 2, expected 0 or 1"},
      {"bool byte 255", w122, npy_by_hand("|b1", "(3, 2)", bytes_of({0, 1, 1, 255, 0, 0})), "S.npy: spike [1][1] is 255, expected 0 or 1"},
  };
  for (const Case& c : cases) EXPECT_EQ(refusal(c.weights, c.spikes), c.message) << c.what;
  // a missing file, through the reader of paths
  const test::TempDir tmp;
  const std::string spikes = tmp.write("S.npy", s32);
  try {
    read_snn_layer(tmp.path("none.npy"), spikes);
    ADD_FAILURE() << "read a missing file";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), tmp.path("none.npy") + ": cannot open the .npy file");
  }
}

TEST(SnnFiles, AbsurdHeadersAreRefusedBeforeTheirSizeIsAllocated) {
  // within SnnLimits but with no data behind them (64 MB of weights, a million timesteps of 65536 spikes),
  // and beyond them: the largest allocation stays far below what the headers claim
  const std::string w122 = npy_by_hand("|i1", "(1, 2, 2)", bytes_of({1, 2, 3, 4}));
  const std::vector<std::pair<std::string, std::string>> files = {
      {npy_by_hand("|i1", "(64, 1024, 1024)", std::string(4, '\0')), npy_by_hand("|u1", "(1, 1024)", std::string(1024, '\0'))},
      {npy_by_hand("|i1", "(1, 65536, 1)", std::string(65536, '\0')), npy_by_hand("|u1", "(1048576, 65536)", std::string(4, '\0'))},
      {w122, npy_by_hand("|b1", "(999999999999999999, 2)", "")},
  };
  for (const auto& [weights, spikes] : files) {
    g_largest = 0;
    g_watch = true;
    const std::string m = refusal(weights, spikes);
    g_watch = false;
    EXPECT_NE(m, "");
    EXPECT_LT(g_largest.load(), std::size_t(256) << 10) << m;
  }
}

TEST(SnnFiles, RunNetsNpyReaderIsUnchanged) {
  // uint8 still converted to float32 for run-net; bool still refused by it, with the same message
  const NpyTensor u = parse_npy(npy_by_hand("|u1", "(3,)", bytes_of({0, 7, 255})), "U.npy");
  EXPECT_TRUE(u.is_float);
  EXPECT_EQ(u.converted_from, "uint8");
  EXPECT_EQ(u.float32, (std::vector<float>{0.0f, 7.0f, 255.0f}));
  try {
    parse_npy(npy_by_hand("|b1", "(3,)", bytes_of({0, 1, 1})), "B.npy");
    ADD_FAILURE() << "run-net's reader took a bool file";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "B.npy: expected dtype int8 ('|i1'), float32 ('<f4'), float64 ('<f8') or uint8 ('|u1'), got '|b1'");
  }
  // the bytes of an int8 file as write_npy writes them
  const test::TempDir tmp;
  write_npy(tmp.path("x.npy"), {2, 2}, {1, -1, 2, -2});
  EXPECT_EQ(test::read_text(tmp.path("x.npy")), npy_bytes({2, 2}, std::vector<std::int8_t>{1, -1, 2, -2}));
  EXPECT_EQ(test::read_text(tmp.path("x.npy")), npy_by_hand("|i1", "(2, 2)", bytes_of({1, -1, 2, -2})));
  EXPECT_THROW(npy_bytes({2, 3}, std::vector<std::int8_t>{1}), std::invalid_argument);
}
