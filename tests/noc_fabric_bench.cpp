// The chip model's NoC fabric timed on one block of a network (a program, not a test): what an evaluated
// component edge costs, and how much of the work the fabric's shortcuts leave out. Prints one line per way of
// evaluating it:
//   fast       the model's own (PEs that cannot change left alone, steady states of sealed QPEs skipped)
//   no-skip    the same without skipping steady states (NocFabric::set_skip_periods(false))
//   reference  every PE with anything busy in every clock (NocFabric::set_evaluate_every_clock)
// Each gives the same clocks (tests/noc_fabric_speed_test.cpp holds them to it); the program checks that too.
//   build/noc_fabric_bench [--modes=fast,no-skip,reference] [BLOCK [STRATEGY [PRESET [NET]]]]
//   (default: every mode; CONV_9 fuse_reuse prototype vgg16). One mode alone (--modes=fast) is what an instruction
//   count under valgrind --tool=callgrind wants: a figure that does not wander with the machine's load. Count it on
//   a build configured with -DS2_NATIVE=OFF: -march=native emits AVX-512, which Debian 12's valgrind 3.19 stops on
//   (SIGILL). Fewer instructions need not mean less time: docs/figures.md, "The fabric's cost per edge".
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "mapper/distributor.h"
#include "mapper/network.h"
#include "mapper/parser.h"
#include "mapper/splitter.h"
#include "mapper/storage_plan.h"
#include "model/chip/system.h"
#include "model/hw_config.h"

using namespace s2;

namespace {

struct Figures {
  std::uint64_t cycles = 0, pe_edges = 0, router_edges = 0, skipped = 0;
  double wall_s = 0;
};

Figures run(System& sys, const HwConfig& cfg, const std::vector<TaskStream>& streams, const std::string& mode) {
  sys.configure(cfg);
  NocFabric& noc = sys.noc();
  noc.set_evaluate_every_clock(mode == "reference");
  noc.set_skip_periods(mode == "fast");
  Figures f;
  SystemMemory mem;
  const auto t0 = std::chrono::steady_clock::now();
  for (const TaskStream& s : streams) {
    const StreamResult r = sys.run_stream(s, mem, StreamRunOptions{});
    if (!r.completed) throw std::runtime_error("stream " + s.name + " did not finish: " + r.stalled);
    f.cycles += r.cycles;
    f.pe_edges += noc.pe_edges_evaluated();
    f.router_edges += noc.router_edges_evaluated();
    f.skipped += noc.qpe_clocks_skipped();
  }
  f.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  noc.set_evaluate_every_clock(false);
  noc.set_skip_periods(true);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> every_mode = {"fast", "no-skip", "reference"};
  std::vector<std::string> modes = every_mode;
  if (argc > 1 && std::string(argv[1]).rfind("--modes=", 0) == 0) {
    modes.clear();
    std::string list = std::string(argv[1]).substr(8);
    for (std::size_t at = 0; at <= list.size();) {
      const std::size_t comma = std::min(list.find(',', at), list.size());
      modes.push_back(list.substr(at, comma - at));
      at = comma + 1;
    }
    for (const std::string& m : modes)
      if (std::find(every_mode.begin(), every_mode.end(), m) == every_mode.end()) {
        std::cerr << "noc_fabric_bench: --modes: '" << m << "' is not one of fast, no-skip, reference\n";
        return 2;
      }
    --argc;
    ++argv;
  }
  const std::string block = argc > 1 ? argv[1] : "CONV_9", strategy = argc > 2 ? argv[2] : "fuse_reuse",
                    preset = argc > 3 ? argv[3] : "prototype", net = argc > 4 ? argv[4] : "vgg16";
  try {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    HwConfig cfg;
    apply_preset(cfg, preset);
    validate(cfg);
    using namespace s2::mapper;
    const ParsedNetwork n = parse_network(net == "vgg16" ? parse_layer_list(vgg16_layer_list(), "vgg16")
                                          : net == "resnet50" ? parse_layer_list(resnet50_layer_list(), "resnet50")
                                                              : read_layer_list(net));
    const NetworkSplit split = split_network(n, split_rules(Target::SpiNNaker2, cfg));
    const std::vector<BlockResidency> where = storage_residency(n, split, cfg);
    const Strategy st = parse_strategy(strategy);
    std::size_t b = 0;
    while (b < n.blocks.size() && n.blocks[b].name() != block) ++b;
    if (b == n.blocks.size()) throw std::invalid_argument("no block " + block + " in " + net);
    const BlockStreams bs = distribute(n.blocks[b], split.blocks[b], st, cfg, st == Strategy::FuseReuse ? where[b] : BlockResidency{});
    System sys("system", cfg.chip.qpes(), static_cast<int>(cfg.chip.drams.size()));
    run_simulation(sc_core::SC_ZERO_TIME);
    std::cout << fmt::format("noc fabric bench: {} {} {} on {} ({} QPEs), one thread, timing and data as run-net's model run (ARM timed)\n",
                             net, block, strategy, preset, cfg.chip.qpes());
    std::uint64_t cycles = 0;
    for (const std::string& mode : modes) {
      const Figures f = run(sys, cfg, bs.streams, mode);
      if (cycles && f.cycles != cycles) throw std::logic_error(fmt::format("{} took {} clocks, {} {}", mode, f.cycles, modes.front(), cycles));
      cycles = f.cycles;
      const double edges = double(f.pe_edges + f.router_edges);
      std::cout << fmt::format("  {:<9} {:>9} PE clocks, {:>11} PE edges + {:>11} router edges evaluated, {:>10} QPE clocks skipped; "
                               "{:6.2f} s: {:5.1f} ns per evaluated component edge, {:.3g} PE clocks per second\n",
                               mode, f.cycles, f.pe_edges, f.router_edges, f.skipped, f.wall_s, 1e9 * f.wall_s / std::max(edges, 1.0),
                               double(f.cycles) / f.wall_s);
    }
  } catch (const std::exception& e) {
    std::cerr << "noc_fabric_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
