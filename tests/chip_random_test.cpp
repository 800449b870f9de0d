// The chip's random streams (harness/stimulus/chip_random.h): the generator is deterministic, every stream it makes
// can run (check_stream) and is race-free (find_stream_race, which is tested on racy streams too), the
// suite file is read back and malformed ones are refused with file, line and field, and a small slice of the
// committed suite runs on both backends bit-exact, every command of every PE ending in the same clock on both.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "harness/backends/backend.h"
#include "harness/stimulus/chip_random.h"
#include "harness/stimulus/chip_suite.h"
#include "harness/stimulus/stream_checks.h"
#include "harness/commands/chip_regress.h"
#include "harness/outputs/result.h"
#include "harness/check/comparators.h"
#include "harness/stimulus/task_vectors.h"
#include "model/task_stream.h"
#include "test_support.h"

using namespace s2;

namespace {

using namespace s2::test;

const std::vector<std::string> kSystems = {"mini", "3x3", "2x3", "1x1", "prototype"};

StreamCommand dma(CommandKind kind, MemoryRef remote, std::uint64_t addr, std::uint32_t sram, std::uint32_t bytes,
                  bool async = false) {
  StreamCommand c;
  c.kind = kind;
  c.operation = "T";
  c.dma.remote = remote;
  c.dma.dram_addr = addr;
  c.dma.sram_addr = sram;
  c.dma.row_bytes = bytes;
  c.async = async;
  return c;
}
StreamCommand plain(CommandKind kind, int group = 0) {
  StreamCommand c;
  c.kind = kind;
  c.sync_group = group;
  return c;
}

}  // namespace

TEST(ChipRandom, TheSameSeedGivesTheSameStreamAndMemory) {
  for (const std::string& sys : kSystems) {
    const HwConfig cfg = chip_random_config(sys);
    for (std::uint64_t seed : {0ull, 1ull, 2026ull, 0xffffffffffffffffull}) {
      const TaskStream a = random_chip_stream(cfg, seed), b = random_chip_stream(cfg, seed);
      EXPECT_EQ(chip_stream_summary(a), chip_stream_summary(b)) << sys << " seed " << seed;
      const SystemMemory ma = random_chip_memory(cfg, a, seed), mb = random_chip_memory(cfg, b, seed);
      EXPECT_EQ(ma.drams, mb.drams);
      EXPECT_EQ(ma.sram, mb.sram);
    }
    EXPECT_NE(chip_stream_summary(random_chip_stream(cfg, 1)), chip_stream_summary(random_chip_stream(cfg, 2))) << sys;
  }
}

TEST(ChipRandom, EveryStreamCanRunAndIsRaceFree) {
  // and holds what the suite is for: narrow rows, unaligned addresses, SRAM-to-SRAM transfers, neighbour
  // operand A, async commands, Sync groups
  std::size_t streams = 0, narrow = 0, unaligned = 0, sram_sram = 0, neighbour = 0, async = 0, groups = 0, multi_kb = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (const std::string& sys : kSystems) {
    const HwConfig cfg = chip_random_config(sys);
    const StreamLimits lim = stream_limits(cfg);
    for (std::uint64_t seed = 0; seed < 60; ++seed) {
      const TaskStream s = random_chip_stream(cfg, seed);
      SCOPED_TRACE(sys + " seed " + std::to_string(seed) + ": " + chip_stream_summary(s));
      ASSERT_NO_THROW(check_stream(s, lim));
      ASSERT_EQ(find_stream_race(s, cfg), "");
      ASSERT_EQ(find_unspecified_read(s, cfg), "");
      ++streams;
      groups += s.sync_groups.size() > 1;
      for (const auto& cmds : s.pe)
        for (const StreamCommand& c : cmds) {
          async += c.async;
          if (c.kind == CommandKind::Mla) neighbour += c.mla.a_from_neighbor();
          if (c.kind != CommandKind::DmaLoad && c.kind != CommandKind::DmaStore) continue;
          narrow += c.dma.row_bytes <= 16;
          multi_kb += c.dma.bytes() >= 2048;
          unaligned += c.dma.sram_addr % 16 != 0 && c.dma.dram_addr % 16 != 0;
          sram_sram += c.dma.remote.kind == MemoryRef::Kind::Sram;
        }
    }
  }
  std::printf("%zu streams in %.1f s: %zu narrow-row transfers, %zu of at least 2 KB, %zu unaligned on both sides, %zu "
              "between SRAMs, %zu MLA tasks with a neighbour's operand A, %zu async commands, %zu streams with several Sync groups\n",
              streams, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), narrow, multi_kb,
              unaligned, sram_sram, neighbour, async, groups);
  EXPECT_GT(narrow, streams);
  EXPECT_GT(multi_kb, streams / 4);
  EXPECT_GT(unaligned, streams);
  EXPECT_GT(sram_sram, streams / 2);
  EXPECT_GT(neighbour, streams / 4);
  EXPECT_GT(async, streams);
  EXPECT_GT(groups, streams / 4);
}

// --timing-only's model runs (StreamRunOptions::timing_only): every clock and count as with data, and no byte
// moved, computed or written (the memories as they were).
TEST(ChipRandom, ATimingOnlyRunTakesTheSameClocksAndLeavesTheMemoriesAlone) {
  for (const std::string sys : {"mini", "3x3"}) {
    const HwConfig cfg = chip_random_config(sys);
    auto model = make_model_stream_backend(cfg);
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      const TaskStream s = random_chip_stream(cfg, seed);
      const SystemMemory initial = random_chip_memory(cfg, s, seed);
      SystemMemory with_data = initial, without = initial;
      StreamRunOptions opt, timing;
      timing.timing_only = true;
      const StreamResult a = model->run(s, with_data, opt), b = model->run(s, without, timing);
      ASSERT_TRUE(a.completed && b.completed) << sys << " seed " << seed;
      EXPECT_EQ(a.cycles, b.cycles) << sys << " seed " << seed;
      EXPECT_EQ(a.pe_end_cycle, b.pe_end_cycle) << sys << " seed " << seed;
      EXPECT_EQ(a.command_end_cycle, b.command_end_cycle) << sys << " seed " << seed;
      EXPECT_EQ(a.dram_ops, b.dram_ops) << sys << " seed " << seed;
      EXPECT_EQ(a.activity.named(), b.activity.named()) << sys << " seed " << seed;
      ASSERT_EQ(a.pe_activity.size(), b.pe_activity.size());
      for (std::size_t p = 0; p < a.pe_activity.size(); ++p)
        EXPECT_EQ(a.pe_activity[p].named(), b.pe_activity[p].named()) << sys << " seed " << seed << " PE " << p;
      // the run with data changed something, the run without nothing (DRAM images come back sized to the stream)
      EXPECT_TRUE(with_data.drams != initial.drams || with_data.sram != initial.sram) << sys << " seed " << seed;
      for (std::size_t d = 0; d < without.drams.size(); ++d) {
        std::vector<std::uint8_t> want = d < initial.drams.size() ? initial.drams[d] : std::vector<std::uint8_t>{};
        want.resize(without.drams[d].size(), 0);
        EXPECT_EQ(without.drams[d], want) << sys << " seed " << seed << " DRAM " << d;
      }
      EXPECT_EQ(without.sram, initial.sram) << sys << " seed " << seed;
    }
  }
}

TEST(ChipRandom, TheRaceCheckerFindsRaces) {
  const HwConfig cfg = chip_random_config("mini");
  const MemoryRef dram{MemoryRef::Kind::Dram, 0};
  {  // two PEs store to the same DRAM bytes with nothing between them
    TaskStream s = empty_stream(cfg, "racy");
    s.pe[0].push_back(dma(CommandKind::DmaStore, dram, 100, 0, 32));
    s.pe[5].push_back(dma(CommandKind::DmaStore, dram, 120, 0, 32));
    EXPECT_NE(find_stream_race(s, cfg).find("PE 0 command 0 (dma_store T) and PE 5 command 0"), std::string::npos)
        << find_stream_race(s, cfg);
    s.pe[5].front().dma.dram_addr = 132;  // next to it
    EXPECT_EQ(find_stream_race(s, cfg), "");
  }
  {  // a PE reads what another writes: racy without a Sync, ordered with one
    TaskStream s = empty_stream(cfg, "racy");
    s.pe[0].push_back(dma(CommandKind::DmaStore, dram, 100, 0, 32));
    s.pe[5].push_back(dma(CommandKind::DmaLoad, dram, 100, 0, 32));
    EXPECT_NE(find_stream_race(s, cfg), "");
    s.sync_groups = {{0, 5}};
    s.pe[0].push_back(plain(CommandKind::Sync));
    s.pe[5].insert(s.pe[5].begin(), plain(CommandKind::Sync));
    EXPECT_EQ(find_stream_race(s, cfg), "");
    // an async store is not finished at the Sync unless waited for
    s.pe[0].front().async = true;
    EXPECT_NE(find_stream_race(s, cfg), "");
    s.pe[0].insert(s.pe[0].begin() + 1, plain(CommandKind::WaitDma));
    EXPECT_EQ(find_stream_race(s, cfg), "");
  }
  {  // an async load and an ARM operation on its bytes; the DMA's next command orders them, an MLA's does not
    TaskStream s = empty_stream(cfg, "racy");
    s.pe[1].push_back(dma(CommandKind::DmaLoad, dram, 0, 64, 64, true));
    StreamCommand relu = plain(CommandKind::Arm);
    relu.arm.kind = ArmOpKind::Relu8;
    relu.arm.src = 100;
    relu.arm.width = 4;
    relu.arm.src_row_stride = 4;
    s.pe[1].push_back(relu);
    EXPECT_NE(find_stream_race(s, cfg), "");
    s.pe[1].insert(s.pe[1].begin() + 1, dma(CommandKind::DmaLoad, dram, 0, 4096, 16));
    EXPECT_EQ(find_stream_race(s, cfg), "");
  }
  {  // an MLA reading operand A from a neighbour whose DMA writes it at the same time
    TaskStream s = empty_stream(cfg, "racy");
    StreamCommand m = plain(CommandKind::Mla);
    m.mla.op = Op::Mm;
    m.mla.mm = {8, 4, 16, 8};
    m.mla.a_src_shift = 1;
    m.a_base = 0x1000;
    m.b_base = 0x2000;
    m.o_base = 0x3000;
    s.pe[0].push_back(m);
    s.pe[1].push_back(dma(CommandKind::DmaLoad, dram, 0, 0x1010, 4));
    EXPECT_NE(find_stream_race(s, cfg).find("SRAM of PE 1"), std::string::npos) << find_stream_race(s, cfg);
    s.pe[1].front().dma.sram_addr = 0x1020;  // past A (32 bytes)
    EXPECT_EQ(find_stream_race(s, cfg), "");
  }
}

TEST(ChipRandom, TheBytesAnMlaTaskLeavesUnspecifiedAreKnownAndReadingThemIsFound) {
  // an MM with W_B = 6: results (i, j) for j < 6 at o_base + (i * 16 + j) * 4; the RTL writes j = 6, 7 too
  const HwConfig cfg = chip_random_config("mini");
  const MemoryRef dram{MemoryRef::Kind::Dram, 0};
  TaskStream s = empty_stream(cfg, "racy");
  StreamCommand m = plain(CommandKind::Mla);
  m.mla.op = Op::Mm;
  m.mla.mm = {8, 3, 6, 8};
  m.a_base = 0x1000;
  m.b_base = 0x2000;
  m.o_base = 0x3000;
  s.pe[0].push_back(m);
  s.pe[0].push_back(dma(CommandKind::DmaStore, dram, 0, 0x3000, 24));
  s.pe[0].back().dma.rows = 4;
  s.pe[0].back().dma.sram_row_stride = 64;
  s.pe[0].back().dma.dram_row_stride = 24;
  EXPECT_EQ(find_unspecified_read(s, cfg), "");
  using Ranges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
  EXPECT_EQ(chip_stream_unspecified(s, cfg).at(0), (Ranges{{0x3018, 0x3020}, {0x3058, 0x3060}, {0x3098, 0x30a0}, {0x30d8, 0x30e0}}));
  s.pe[0].back().dma.row_bytes = 25;  // one byte of the padding lanes
  EXPECT_NE(find_unspecified_read(s, cfg).find("PE 0 command 1 (dma_store T) reads bytes 0x3000..0x3019 of the SRAM of PE 0"),
            std::string::npos)
      << find_unspecified_read(s, cfg);
  // a load over them makes them defined again
  s.pe[0].insert(s.pe[0].begin() + 1, dma(CommandKind::DmaLoad, dram, 0, 0x3000, 256));
  EXPECT_EQ(find_unspecified_read(s, cfg), "");
  EXPECT_EQ(chip_stream_unspecified(s, cfg).count(0), 0u);
  // another PE's load of them, as unspecified as its own
  s.pe[0].erase(s.pe[0].begin() + 1);
  s.pe[0].back().dma.row_bytes = 24;
  s.pe[5].push_back(dma(CommandKind::DmaLoad, {MemoryRef::Kind::Sram, 0}, 0x3010, 0, 16));
  EXPECT_NE(find_unspecified_read(s, cfg).find("PE 5 command 0"), std::string::npos) << find_unspecified_read(s, cfg);
}

TEST(ChipRandom, SuiteFilesAreReadBackAndMalformedOnesRefusedWithFileLineAndField) {
  const std::string csv = chip_suite_csv(7, 4, {"mini", "3x3"}, "s2cosim vectors chip-random --seed 7 --count 4");
  const std::vector<ChipSuiteRow> rows = parse_chip_suite(csv, "suite.csv");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1].system, "3x3");
  EXPECT_EQ(rows[1].summary, chip_stream_summary(random_chip_stream(chip_random_config("3x3"), rows[1].seed)));
  EXPECT_EQ(chip_suite_csv(7, 4, {"mini", "3x3"}, "s2cosim vectors chip-random --seed 7 --count 4"), csv);

  auto refused = [](const std::string& text) {
    try {
      parse_chip_suite(text, "bad.csv");
    } catch (const VectorError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  const std::string head = "# a comment\nid,seed,system,summary\n";
  EXPECT_EQ(refused(head + "c0,12x,mini,s\n"), "bad.csv:3: field 'seed': expected a non-negative integer below 2^64, got '12x'");
  EXPECT_EQ(refused(head + "c0,99999999999999999999,mini,s\n"),
            "bad.csv:3: field 'seed': expected a non-negative integer below 2^64, got '99999999999999999999'");
  EXPECT_EQ(refused(head + "c0,1,7x1,s\n"),
            "bad.csv:3: field 'system': expected mini, prototype or a mesh CxR with C and R from 1 to 6 (e.g. 3x3), got '7x1'");
  EXPECT_EQ(refused(head + "c0,1,mini,s\n\nc0,2,mini,s\n"), "bad.csv:5: field 'id': expected an id no other row has, got 'c0'");
  EXPECT_EQ(refused(head + "c 0,1,mini,s\n"),
            "bad.csv:3: field 'id': expected an id of 1 to 64 letters, digits, '_', '-' or '.', got 'c 0'");
  EXPECT_EQ(refused(head + "c0,1,mini,\n"),
            "bad.csv:3: field 'summary': expected the stream's summary (as s2cosim vectors chip-random writes it), got ''");
  EXPECT_EQ(refused(head + "c0,1,mini,a,b\n"),
            "bad.csv:3: expected 4 cells as the header has (id,seed,system,summary; no commas in a cell), got 5");
  EXPECT_EQ(refused("id,seed,summary\nc0,1,s\n"),
            "bad.csv:1: header: no column 'system' (expected the header id,seed,system,summary)");
  EXPECT_EQ(refused("# nothing\n"), "bad.csv: no header line (expected id,seed,system,summary)");
  EXPECT_EQ(refused(head), "bad.csv: no streams (expected a row per stream after the header)");
  // every problem, one per line
  EXPECT_EQ(refused(head + "c0,x,mini,s\nc1,1,9x9,s\n"),
            "bad.csv:3: field 'seed': expected a non-negative integer below 2^64, got 'x'\n"
            "bad.csv:4: field 'system': expected mini, prototype or a mesh CxR with C and R from 1 to 6 (e.g. 3x3), got '9x9'");
  EXPECT_THROW(read_chip_suite("/nonexistent/suite.csv"), std::runtime_error);
}

TEST(ChipRandom, TheCommittedSuiteIsTheGeneratorsOutput) {
  const std::string command = "s2cosim vectors chip-random --seed 2026 --count 240 --preset mini --mesh 3x3";
  EXPECT_EQ(read_text(source_path("vectors/chip_random_suite.csv")), chip_suite_csv(2026, 240, {"mini", "3x3"}, command))
      << "regenerate it with build/" << command << " -o vectors/chip_random_suite.csv";
}

TEST(ChipRandom, ChipRegressRefusesBadInputWithExitCode2) {
  const TempDir dir;
  auto run = [](ChipRegressRequest req) {
    std::ostringstream out, err;
    const int code = chip_regress(req, out, err);
    return std::make_pair(code, err.str());
  };
  ChipRegressRequest req;
  req.suite = dir.write("bad.csv", "id,seed,system,summary\nc0,1,mini,s\nc1,-4,mini,s\n");
  auto [code, err] = run(req);
  EXPECT_EQ(code, 2);
  EXPECT_EQ(err, "s2cosim chip-regress: " + req.suite +
                     ":3: field 'seed': expected a non-negative integer below 2^64, got '-4'\n");
  req.suite = source_path("vectors/chip_random_suite.csv");
  req.streams = {"c000", "nope"};
  std::tie(code, err) = run(req);
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("--stream nope: " + req.suite + " has no stream with this id"), std::string::npos) << err;
  req.suite = dir.path("missing.csv");
  req.streams.clear();
  std::tie(code, err) = run(req);
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("missing.csv: cannot open the chip suite file"), std::string::npos) << err;
}

TEST(ChipRandom, ARowWhoseStreamTheGeneratorNoLongerMakesIsAnError) {
  const TempDir dir;
  const std::vector<ChipSuiteRow> rows = chip_suite_rows(3, 1, {"mini"});
  ChipRegressRequest req;
  req.suite = dir.write("drift.csv", "id,seed,system,summary\nc0," + std::to_string(rows[0].seed) + ",mini,an older summary\n");
  req.json_out = dir.path("drift.json");
  std::ostringstream out, err;
  EXPECT_EQ(chip_regress(req, out, err), 1);
  const nlohmann::json j = read_json(req.json_out);
  EXPECT_EQ(j["streams"][0]["status"], "error");
  EXPECT_NE(j["streams"][0]["message"].get<std::string>().find(req.suite + ":2: the generator makes another stream"),
            std::string::npos);
  EXPECT_NE(out.str().find("rerun: "), std::string::npos) << out.str();
}

TEST(ChipRandom, ASliceOfTheCommittedSuiteRunsBitExactAndClockForClockOnBothBackends) {
  const std::string suite = source_path("vectors/chip_random_suite.csv");
  const std::vector<ChipSuiteRow> rows = read_chip_suite(suite);
  ASSERT_GE(rows.size(), 200u);
  std::size_t mini = 0, mesh = 0;
  for (const ChipSuiteRow& r : rows) (r.system == "mini" ? mini : mesh) += 1;
  EXPECT_GE(mini, 100u);
  EXPECT_GE(mesh, 100u);
  // the first four rows, two of each system, and two where an MLA and the DMAs beside it slow each other down
  // (a store reading its SRAM behind the MLA's fetches; an MLA behind the NoC slave serving another PE's load:
  // -20.0% and -14.8% while the model's MLAs were outside its NoC): on the backends directly, every byte
  // compared but the unspecified ones (the MLA's padding lanes, which the backends are known to leave
  // differently), and every command's end
  std::vector<std::string> ids;
  std::vector<const ChipSuiteRow*> slice;
  for (std::size_t i = 0; i < 4; ++i) slice.push_back(&rows[i]);
  for (const ChipSuiteRow& r : rows)
    if (r.id == "c034" || r.id == "c105") slice.push_back(&r);
  ASSERT_EQ(slice.size(), 6u);
  for (const ChipSuiteRow* row : slice) {
    const ChipSuiteRow& r = *row;
    ids.push_back(r.id);
    const HwConfig cfg = chip_random_config(r.system);
    const TaskStream s = random_chip_stream(cfg, r.seed);
    ASSERT_EQ(chip_stream_summary(s), r.summary) << r.id << ": the generator no longer makes the committed stream";
    const SystemMemory start = random_chip_memory(cfg, s, r.seed);
    SystemMemory model_mem = start, rtl_mem = start;
    const StreamResult model = make_model_stream_backend(cfg)->run(s, model_mem, StreamRunOptions{false});
    ASSERT_TRUE(model.completed) << r.id << ": " << model.stalled;
    StreamRunOptions opt{false};
    opt.watchdog_cycles = 4 * model.cycles + 100000;
    const StreamResult rtl = make_rtl_stream_backend(cfg)->run(s, rtl_mem, opt);
    ASSERT_TRUE(rtl.completed) << r.id << ": " << rtl.stalled;
    EXPECT_EQ(rtl_mem.drams, model_mem.drams) << r.id;
    EXPECT_EQ(model.cycles, rtl.cycles) << r.id;
    EXPECT_EQ(model.command_end_cycle, rtl.command_end_cycle) << r.id << ": " << describe_command_deviation(command_deviation(s, model, rtl));
    const auto unspecified = chip_stream_unspecified(s, cfg);
    std::size_t lanes = 0;
    for (auto& [pe, image] : model_mem.sram) {
      std::vector<std::uint8_t> a = image, b = rtl_mem.sram.at(pe);
      if (const auto u = unspecified.find(pe); u != unspecified.end())
        for (const auto& [lo, hi] : u->second)
          for (std::uint64_t k = lo; k < hi; ++k) {
            lanes += a[k] != b[k];
            a[k] = b[k] = 0;
          }
      EXPECT_EQ(a, b) << r.id << " SRAM of PE " << pe;
    }
    std::printf("%s (%s): model %llu, RTL %llu PE clocks, delta %+.2f%%; %zu unspecified bytes differ\n", r.id.c_str(),
                r.system.c_str(), static_cast<unsigned long long>(model.cycles), static_cast<unsigned long long>(rtl.cycles),
                100 * *cycle_delta(rtl.cycles, model.cycles), lanes);
  }
  // and through chip-regress, as a user runs them: the same verdict, a rerun line per stream
  const TempDir dir;
  ChipRegressRequest req;
  req.suite = suite;
  req.streams = ids;
  req.json_out = dir.path("slice.json");
  req.junit_out = dir.path("slice.xml");
  std::ostringstream out, err;
  const int code = chip_regress(req, out, err);
  std::printf("%s", out.str().c_str());
  EXPECT_EQ(code, 0) << err.str();
  const nlohmann::json j = read_json(req.json_out);
  ASSERT_EQ(j["streams"].size(), 6u);
  for (const auto& st : j["streams"]) {
    EXPECT_EQ(st["bit_exact"], true) << st.dump();
    EXPECT_EQ(st["status"], "pass") << st.dump();
    EXPECT_EQ(st["replay"], program_name() + " chip-regress " + shell_quote(suite) + " --stream " +
                                st["id"].get<std::string>() + " --backend both");
  }
  EXPECT_EQ(j["summary"]["bit_exact"], 6);
  EXPECT_EQ(j["results"]["checks"].size(), 6u);
  EXPECT_NE(read_text(req.junit_out).find("<testcase classname=\"mini\" name=\"c000\""), std::string::npos);
}
