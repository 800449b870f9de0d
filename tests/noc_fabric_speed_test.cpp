// The chip model's NoC fabric (model/noc/fabric.h) evaluated the fast way (PEs that cannot change in a clock
// left alone) against its reference way (set_evaluate_every_clock: every PE with anything busy, every clock):
// the same streams give the same run clock for clock: every DMA-idle and MLA-row event in the same clock
// (with the MLA's phase counts there), every command's end, every statistic of the NoC, the DRAMs and the
// PEs, and the same memories. Random chip streams on the mini and prototype chips, the 2-clock SRAM flaw off
// and on, and a small network's convolution block on the prototype, fuse_reuse and fuse_noreuse. The fast way
// skips the steady states of sealed QPEs (NocFabric::QpeSkip); it runs here with set_check_skips, so that every
// QPE brought back from its skipped periods is also evaluated clock by clock and the two states compared.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "harness/stimulus/chip_random.h"
#include "mapper/distributor.h"
#include "mapper/network.h"
#include "mapper/parser.h"
#include "mapper/splitter.h"
#include "mapper/storage_plan.h"
#include "model/chip/system.h"
#include "model/hw_config.h"
#include "test_networks.h"
#include "test_support.h"

using namespace s2;

namespace {

// SystemC elaborates a design once per process: one system, as large as the largest preset.
System& the_system() {
  static std::unique_ptr<System> system = [] {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    int qpes = 0;
    std::size_t drams = 0;
    for (const ChipShape& preset : {prototype_chip(), spinnaker2_chip()}) {
      qpes = std::max(qpes, preset.qpes());
      drams = std::max(drams, preset.drams.size());
    }
    auto s = std::make_unique<System>("system", qpes, static_cast<int>(drams));
    run_simulation(sc_core::SC_ZERO_TIME);
    return s;
  }();
  return *system;
}

void add_activity(std::ostringstream& o, const char* what, std::size_t i, const Activity& a) {
  o << what << i << ":";
  for (const auto& f : Activity::fields()) o << " " << a.*f.member;
  o << "\n";
}

// QPE clocks the fast way's last run left to steady states (NocFabric::qpe_clocks_skipped)
std::uint64_t last_fast_skipped = 0;

// Runs the streams in order on `mem` (left as they leave it), the fabric the reference way or the fast way,
// and says everything else the run shows: its events as they happen, then each stream's result and the
// fabric's statistics.
std::string run(const HwConfig& cfg, const std::vector<TaskStream>& streams, SystemMemory& mem, bool reference) {
  System& sys = the_system();
  sys.configure(cfg);
  NocFabric& noc = sys.noc();
  noc.set_evaluate_every_clock(reference);
  noc.set_check_skips(!reference);
  std::ostringstream o;
  // the PE clock the events are counted from: the stream's (the simulation's time goes on from run to run)
  std::uint64_t base = 0;
  // System::configure's callbacks, each event written down first
  noc.on_dma_idle([&](int pe, std::uint64_t clock) {
    o << "dma idle PE " << pe << " clock " << clock - base << "\n";
    sys.chip_pe(pe).dma.idle_in(clock);
  });
  noc.on_mla_row([&](int pe, std::uint64_t clock, bool done) {
    const PhaseCycles& ph = noc.mla_phases(pe);
    o << "mla row PE " << pe << " clock " << clock - base << " done " << done << " phases " << ph.compute << " " << ph.output
      << " " << ph.a_wait << " " << ph.b_wait << " " << ph.setup << "\n";
    sys.chip_pe(pe).mla.row_ended(clock, done, ph);
  });
  for (const TaskStream& s : streams) {
    base = static_cast<std::uint64_t>(std::ceil(sc_core::sc_time_stamp() / sys.pe_clock()));
    const StreamResult r = sys.run_stream(s, mem, StreamRunOptions{});
    o << "stream " << s.name << " completed " << r.completed << " cycles " << r.cycles << " arm " << r.arm_cycles
      << " dram ops " << r.dram_ops << " mla tasks " << r.mla_tasks << " active " << r.active_pes << " link "
      << r.busiest_link_from << "->" << r.busiest_link_to << " " << r.busiest_link_packets << "\n";
    for (std::size_t p = 0; p < r.pe_end_cycle.size(); ++p) {
      o << "PE " << p << " end " << r.pe_end_cycle[p] << " commands";
      for (std::uint64_t c : r.command_end_cycle[p]) o << " " << c;
      o << "\n";
    }
    o << "time";
    for (std::uint64_t t : r.pe_time) o << " " << t;
    o << "\ndram busy";
    for (std::uint64_t c : r.dram_busy_cycles) o << " " << c;
    o << "\n";
    add_activity(o, "all", 0, r.activity);
    for (std::size_t i = 0; i < r.pe_activity.size(); ++i) add_activity(o, "pe", i, r.pe_activity[i]);
    for (std::size_t i = 0; i < r.dram_activity.size(); ++i) add_activity(o, "dram", i, r.dram_activity[i]);
    for (std::size_t i = 0; i < r.router_activity.size(); ++i) add_activity(o, "router", i, r.router_activity[i]);
    for (int from = 0; from < cfg.chip.qpes(); ++from)
      for (int to = 0; to < cfg.chip.qpes(); ++to)
        if (noc.link_packets(from, to)) o << "link " << from << "->" << to << " " << noc.link_packets(from, to) << "\n";
  }
  noc.set_evaluate_every_clock(false);
  noc.set_check_skips(false);
  if (!reference) last_fast_skipped = noc.qpe_clocks_skipped();
  return o.str();
}

// The first line in which two runs part (the whole texts are long).
std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream ia(a), ib(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ga = static_cast<bool>(std::getline(ia, la)), gb = static_cast<bool>(std::getline(ib, lb));
    if (!ga && !gb) return "";
    if (!ga || !gb || la != lb) return "line " + std::to_string(line) + ": reference '" + (ga ? la : "(end)") + "', fast '" + (gb ? lb : "(end)") + "'";
  }
}

void expect_same_runs(const HwConfig& cfg, const std::vector<TaskStream>& streams, const SystemMemory& mem,
                      const std::string& what) {
  SystemMemory reference_mem = mem, fast_mem = mem;
  const std::string reference = run(cfg, streams, reference_mem, true), fast = run(cfg, streams, fast_mem, false);
  EXPECT_NE(reference.find("completed 1"), std::string::npos) << what;
  EXPECT_EQ(reference.find("completed 0"), std::string::npos) << what;
  EXPECT_EQ(first_difference(reference, fast), "") << what;
  EXPECT_TRUE(reference_mem.drams == fast_mem.drams) << what;
  EXPECT_TRUE(reference_mem.sram == fast_mem.sram) << what;
}

}  // namespace

TEST(NocFabricSpeed, RandomChipStreamsRunClockForClockAsInTheReference) {
  for (const std::string sys : {"mini", "prototype"})
    for (bool sram2clk : {false, true}) {
      HwConfig cfg = chip_random_config(sys);
      cfg.flaws.sram2clk = sram2clk;
      for (std::uint64_t seed = 1; seed <= 6; ++seed) {
        TaskStream s = random_chip_stream(cfg, seed);
        const SystemMemory mem = random_chip_memory(cfg, s, seed);
        expect_same_runs(cfg, {s}, mem, sys + (sram2clk ? " sram2clk" : "") + " seed " + std::to_string(seed));
      }
    }
}

TEST(NocFabricSpeed, ASmallNetworksConvolutionBlockRunsClockForClockAsInTheReference) {
  using namespace s2::mapper;
  const HwConfig cfg = test::preset_config("prototype");
  const ParsedNetwork n = parse_network(parse_layer_list(test_networks::kSmall, "small"));
  const NetworkSplit split = split_network(n, split_rules(Target::SpiNNaker2, cfg));
  const std::vector<BlockResidency> where = storage_residency(n, split, cfg);
  for (Strategy st : {Strategy::FuseReuse, Strategy::FuseNoreuse}) {
    // CONV_2 (+ POOL_3): its input in the storage QPEs under fuse_reuse
    const BlockStreams bs = distribute(n.blocks[1], split.blocks[1], st, cfg, st == Strategy::FuseReuse ? where[1] : BlockResidency{});
    ASSERT_FALSE(bs.streams.empty());
    std::uint64_t mla_tasks = 0;
    for (const TaskStream& s : bs.streams)
      for (const auto& cmds : s.pe)
        for (const StreamCommand& c : cmds) mla_tasks += c.kind == CommandKind::Mla;
    EXPECT_GT(mla_tasks, 0u);
    expect_same_runs(cfg, bs.streams, SystemMemory{}, std::string("CONV_2 ") + to_string(st));
  }
}

// A convolution deep enough (operand-B rows of 3 x 96) for its QPEs' steady states to be skipped period by
// period (NocFabric's frozen QPEs): clock for clock the same, and the skipping did take place.
TEST(NocFabricSpeed, SteadyStatesOfADeepConvolutionAreSkippedClockForClockAsInTheReference) {
  using namespace s2::mapper;
  const HwConfig cfg = test::preset_config("prototype");
  const ParsedNetwork n = parse_network(
      parse_layer_list("network deep\ninput 16 16 32\nconv 3 3 32 64 pad=same act=relu\nconv 3 3 64 64 pad=same act=relu\n", "deep"));
  const NetworkSplit split = split_network(n, split_rules(Target::SpiNNaker2, cfg));
  const std::vector<BlockResidency> where = storage_residency(n, split, cfg);
  for (Strategy st : {Strategy::FuseReuse, Strategy::FuseNoreuse}) {
    // CONV_2: its input in the storage QPEs under fuse_reuse
    const BlockStreams bs = distribute(n.blocks[1], split.blocks[1], st, cfg, st == Strategy::FuseReuse ? where[1] : BlockResidency{});
    ASSERT_FALSE(bs.streams.empty());
    expect_same_runs(cfg, bs.streams, SystemMemory{}, std::string("deep CONV_1 ") + to_string(st));
    EXPECT_GT(last_fast_skipped, 0u) << to_string(st);
  }
}

