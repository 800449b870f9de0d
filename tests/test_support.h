// Helpers shared by the GoogleTest files in tests/ (header-only; everything is in namespace s2::test).
// A test file includes it and says `using namespace s2::test;` inside its own anonymous namespace.
//
//   files          source_path, smoke_csv, read_text, read_json, without_wall_times, TempDir, shell (Ran)
//   journals       lines_in, run_and_signal (a command in a child process, signalled once its journal has grown)
//   configuration  config(shape, sram2clk), mac_shape_configs, mac_shape_configs_with_sram2clk
//   tasks          make_task, make_mm_task, make_conv_task, and the directed tasks of rtl_mla_tile_test.cpp and
//                  model_timing_test.cpp (mm_tile, conv_tile, multi_tile_conv, multi_tile_mm)
//   streams        empty_stream (a chip stream with no command), packed_transfer (a DMA command)
//   checks         run_with_watchdog, expect_golden, ExpectedTiming / expect_lone_pe_timing
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "harness/backends/backend.h"
#include "model/golden.h"

#ifndef S2_SOURCE_DIR
#error "S2_SOURCE_DIR must name the source tree (tests/CMakeLists.txt defines it)"
#endif

namespace s2::test {

// ---------------------------------------------------------------- files

// A path inside the source tree, e.g. source_path("vectors/smoke.csv").
inline std::string source_path(const std::string& rel) { return std::string(S2_SOURCE_DIR) + "/" + rel; }
inline std::string smoke_csv() { return source_path("vectors/smoke.csv"); }

// The whole file as bytes; a test failure if it cannot be opened.
inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot open " << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The file parsed as JSON; a test failure if it cannot be opened.
inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot open " << path;
  return nlohmann::json::parse(in);
}

// A JSON report with every wall-clock field (a key ending in "wall_s", and "speed_ratio", made of them: the
// only ones two runs of the same inputs may differ in) removed, at any depth.
inline bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
// A JSON value without the object keys `drop(key)` names, at any depth.
template <typename Drop>
nlohmann::json without_keys(const nlohmann::json& x, const Drop& drop) {
  if (x.is_object()) {
    nlohmann::json y = nlohmann::json::object();
    for (const auto& [k, v] : x.items())
      if (!drop(k)) y[k] = without_keys(v, drop);
    return y;
  }
  if (x.is_array()) {
    nlohmann::json y = nlohmann::json::array();
    for (const auto& v : x) y.push_back(without_keys(v, drop));
    return y;
  }
  return x;
}
// A report without what depends on the wall clock: *wall_s, *clocks_per_s (simulation speeds), speed_ratio;
// and without "resume" (what a resumed run took from its journal: the one thing it may say beyond the run's).
inline nlohmann::json without_wall_times(const nlohmann::json& x) {
  return without_keys(x, [](const std::string& k) {
    return ends_with(k, "wall_s") || ends_with(k, "clocks_per_s") || k == "speed_ratio" || k == "resume";
  });
}

// A fresh directory for the running test case, <tmp>/s2_<Suite>_<Test>_<pid>, removed with everything in it
// at the end.
struct Ran {
  int exit_code = -1;
  std::string out;  // standard output and standard error, as the shell gives them
};

// Runs a shell command in the source tree (as a user of a fresh clone would); its output and exit code.
inline Ran shell(const std::string& command) {
  std::string dir = "'";
  for (char c : std::string(S2_SOURCE_DIR)) dir += c == '\'' ? std::string("'\\''") : std::string(1, c);
  Ran r;
  const std::string full = "cd " + dir + "' && " + command + " 2>&1";
  FILE* p = popen(full.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class TempDir {
 public:
  TempDir() {
    namespace fs = std::filesystem;
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name)
      if (c == '/') c = '_';
    path_ = fs::temp_directory_path() / ("s2_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // The path of a file of that name in the directory (not created).
  std::string path(const std::string& name) const { return (path_ / name).string(); }

  // Writes `text` to a file of that name in the directory; returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::filesystem::path p = path_ / name;
    std::ofstream f(p, std::ios::binary);
    f << text;
    EXPECT_TRUE(f.good()) << "cannot write " << p;
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

// The whole lines a file holds, each ended by its newline (0 if it does not exist). A line being written is not
// counted: a reader can see the first pages of a long write before the rest.
inline std::size_t lines_in(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::size_t n = 0;
  for (char c; in.get(c);) n += c == '\n';
  return n;
}

// Runs `run` (a command: returns its exit code) in a child process, sends `sig` once `journal` holds at
// least `records` lines (the run's first record included), and returns the child's wait status; if the
// child ends first, its own status.
template <typename Run>
int run_and_signal(Run run, const std::string& journal, std::size_t records, int sig) {
  const pid_t child = fork();
  if (child == 0) {
    std::ostringstream out, err;
    _exit(run(out, err));
  }
  while (lines_in(journal) < records) {
    int status = 0;
    if (waitpid(child, &status, WNOHANG) == child) return status;  // finished first
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  kill(child, sig);
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

// ---------------------------------------------------------------- configurations

// The default configuration on one MAC-array build, with or without the 2-clock SRAM flaw.
inline HwConfig config(const std::string& shape, bool sram2clk) {
  HwConfig cfg;
  set_mac_shape(cfg, shape);
  cfg.flaws.sram2clk = sram2clk;
  return cfg;
}

// The default configuration on a chip preset (mini, prototype, spinnaker2), validated.
inline HwConfig preset_config(const std::string& preset) {
  HwConfig cfg;
  apply_preset(cfg, preset);
  validate(cfg);
  return cfg;
}

// The default configuration on each MAC-array build the RTL is verilated for.
inline std::vector<HwConfig> mac_shape_configs() {
  std::vector<HwConfig> v;
  for (const char* s : {"16x4", "16x2", "8x4"}) {
    HwConfig c;
    set_mac_shape(c, s);
    v.push_back(c);
  }
  return v;
}
// Every configuration the RTL is built for, with and without the 2-clock SRAM.
inline std::vector<HwConfig> mac_shape_configs_with_sram2clk() {
  std::vector<HwConfig> out;
  for (const HwConfig& c : mac_shape_configs()) {
    out.push_back(c);
    HwConfig slow = c;
    slow.flaws.sram2clk = true;
    out.push_back(slow);
  }
  return out;
}

// ---------------------------------------------------------------- tasks

// A task with random data and operand A from the own SRAM; pe -1 runs it on all 4 PEs. make_mm_task and
// make_conv_task also give it its shape.
inline Task make_task(const std::string& id, Op op, int pe, std::uint64_t seed) {
  Task t;
  t.id = id;
  t.op = op;
  t.pe = pe;
  t.seed = seed;
  return t;
}
inline Task make_mm_task(const std::string& id, const MmShape& mm, int pe, std::uint64_t seed) {
  Task t = make_task(id, Op::Mm, pe, seed);
  t.mm = mm;
  return t;
}
inline Task make_conv_task(const std::string& id, const ConvShape& conv, int pe, std::uint64_t seed) {
  Task t = make_task(id, Op::Conv, pe, seed);
  t.conv = conv;
  return t;
}

// One MLA tile on PE 0 (the clock counts are derived at the top of tests/rtl_mla_tile_test.cpp).
inline Task mm_tile() { return make_mm_task("mm_tile", MmShape{4, 4, 16, 4}, 0, 21); }
inline Task conv_tile() { return make_conv_task("conv_tile", ConvShape{16, 1, 4, 1, 1, 4, 1}, 0, 22); }
// Several tiles, odd sizes, refills (Wf = 5), padded filter groups / rows of A; fewer rows than one of the
// model's resolve windows. pe -1: all 4 PEs.
inline Task multi_tile_conv(int pe) { return make_conv_task("multi_tile_conv", ConvShape{27, 6, 3, 5, 3, 6, 1}, pe, 5); }
inline Task multi_tile_mm(int pe) { return make_mm_task("multi_tile_mm", MmShape{21, 7, 37, 21}, pe, 6); }

// ---------------------------------------------------------------- streams

// A stream for every PE of cfg's chip with no command yet, a 64 KB DRAM image.
inline TaskStream empty_stream(const HwConfig& cfg, const std::string& name = "test") {
  TaskStream s;
  s.name = name;
  s.pe.assign(static_cast<std::size_t>(cfg.chip.qpes() * kPesPerQpe), {});
  s.dram_bytes = 1 << 16;
  return s;
}

// A DMA command (operation "MOVE") of `rows` rows of `row_bytes` bytes, packed on both sides, between `remote`
// (a DRAM or a PE's SRAM) at `remote_addr` and the own SRAM at `own_addr`.
inline StreamCommand packed_transfer(CommandKind kind, MemoryRef remote, std::uint64_t remote_addr, std::uint32_t own_addr,
                                     std::uint32_t row_bytes, std::uint32_t rows) {
  StreamCommand c;
  c.kind = kind;
  c.operation = "MOVE";
  c.dma.remote = remote;
  c.dma.dram_addr = remote_addr;
  c.dma.dram_row_stride = row_bytes;
  c.dma.sram_addr = own_addr;
  c.dma.sram_row_stride = row_bytes;
  c.dma.row_bytes = row_bytes;
  c.dma.rows = rows;
  return c;
}

// ---------------------------------------------------------------- running and checking

inline TaskTrace run_with_watchdog(Backend& backend, const Task& t, std::uint64_t watchdog_cycles) {
  RunOptions opt;
  opt.watchdog_cycles = watchdog_cycles;
  return backend.run(t, opt);
}

// Every PE of the trace completed and left exactly the golden results.
inline void expect_golden(const Task& t, const HwConfig& cfg, const TaskTrace& tr) {
  ASSERT_TRUE(tr.completed) << t.id << " on " << cfg.mac_shape();
  std::vector<PeOperands> ops;
  for (int p = 0; p < kPesPerQpe; ++p) ops.push_back(make_operands(t, p));
  ASSERT_EQ(tr.pes.size(), t.pes().size());
  for (const PeTrace& pt : tr.pes) {
    EXPECT_TRUE(pt.done) << "PE " << pt.pe;
    EXPECT_EQ(pt.results, golden_results(t, pt.pe, ops, cfg)) << t.id << " PE " << pt.pe << " on " << cfg.mac_shape();
  }
}

// Hand-derived clocks of a task on one PE: the task's clocks and the PE's phase counters.
struct ExpectedTiming {
  std::uint64_t cycles, compute, output, a_wait, b_wait, tiles, steps;
};

// The trace holds exactly one PE, whose clocks, phases, tiles and steps are `e`.
inline void expect_lone_pe_timing(const TaskTrace& tr, const ExpectedTiming& e) {
  ASSERT_EQ(tr.pes.size(), 1u);
  const PeTrace& p = tr.pes[0];
  EXPECT_EQ(tr.cycles, e.cycles);
  EXPECT_EQ(p.cycles(), e.cycles);
  EXPECT_EQ(p.phases.compute, e.compute);
  EXPECT_EQ(p.phases.output, e.output);
  EXPECT_EQ(p.phases.a_wait, e.a_wait);
  EXPECT_EQ(p.phases.b_wait, e.b_wait);
  EXPECT_EQ(p.tiles, e.tiles);
  EXPECT_EQ(p.steps, e.steps);
}

}  // namespace s2::test
