// s2cosim: the command line. Argument parsing only; the work is done by the s2_harness library.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <iostream>
#include <memory>
#include <optional>
#include <unistd.h>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "harness/commands/tune.h"
#include "harness/commands/bench.h"
#include "harness/stimulus/chip_suite.h"
#include "harness/commands/chip_regress.h"
#include "harness/commands/flaw_limit.h"
#include "harness/session/journal.h"
#include "harness/commands/map_report.h"
#include "harness/commands/design_report.h"
#include "harness/commands/merge.h"
#include "harness/commands/net_runner.h"
#include "harness/outputs/output_files.h"
#include "harness/stimulus/random_vectors.h"
#include "harness/commands/regress_report.h"
#include "harness/outputs/result.h"
#include "harness/commands/regress.h"
#include "harness/commands/snn_runner.h"

namespace {

// The outputs every command that runs checks can write (harness/outputs/result.h).
void add_result_outputs(CLI::App* cmd, std::string& html, std::string& junit) {
  cmd->add_option("--html", html, "write a self-contained HTML report (plots, a table to sort and filter) to FILE");
  cmd->add_option("--junit", junit, "write JUnit XML (one testcase per check, failures with their rerun line) to FILE");
}

void add_config_options(CLI::App* cmd, std::string& config_file, std::string& mac, std::vector<std::string>& flaws) {
  cmd->add_option("--config", config_file, "hardware configuration JSON (fields of s2cosim config)");
  cmd->add_option("--mac", mac, "MAC array shape, columns x rows: 16x4 (default), 16x2 or 8x4");
  cmd->add_option("--flaw", flaws, "switch a prototype flaw on: sram2clk, neighbor_conv, mm_wide_a (repeatable)")
      ->expected(1)
      ->allow_extra_args(false)  // one name per --flaw: a following positional stays a positional
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

// --deviation-bound: a fraction from 0 to 1 (CheckPolicy, deviation_bound_problem), on every command that compares.
void add_deviation_bound(CLI::App* cmd, s2::CheckPolicy& policy) {
  cmd->add_option("--deviation-bound,--deviation-threshold", policy.deviation_bound,
                  "|delta| above this fraction of the RTL's clocks is a deviation: 0 to 1, default 0.02 (2%); "
                  "--deviation-threshold is its older name")
      ->check(CLI::Validator(
          [](std::string& v) {
            double x = 0;
            if (!CLI::detail::lexical_cast(v, x)) return "expected a fraction from 0 to 1 (0.02 is 2%), got '" + v + "'";
            return s2::deviation_bound_problem(x);
          },
          "FRACTION"));
}

// --energy [TABLE]: charge the counts with an energy table (model/energy_table.h): the compiled-in default
// when no table is named ("--energy" alone, or "--energy=default"), else a JSON file.
void add_energy_option(CLI::App* cmd, std::string& energy) {
  cmd->add_option("--energy", energy,
                  "energy per layer and component from the activity counts: --energy alone charges the default table "
                  "(estimates, docs/energy.md), --energy=FILE a JSON table of your own")
      ->expected(0, 1)
      ->default_str("default");
}

// --threads, --rtl-eval: how the chip RTL is simulated (harness/backends/rtl/linked_qpes.h); any choice gives
// the same results, only the wall time differs.
void add_rtl_sim_options(CLI::App* cmd, s2::RtlSimOptions& sim) {
  cmd->add_option("--threads", sim.threads,
                  "threads evaluating the chip RTL's QPEs in parallel (default: the machine's cores; results are the same for any number)")
      ->check(CLI::Range(1, 256));
  cmd->add_option_function<std::string>(
         "--rtl-eval", [&sim](const std::string& v) { sim.active_only = v == "active"; },
         "active (default): evaluate a QPE of the chip RTL only while something is in flight in it or arrives at it; all: "
         "every QPE every clock (the same results, slower)")
      ->check(CLI::IsMember({"all", "active"}));
}

// run-net's --threads and --rtl-eval take lists: the first of each is how the run of record is simulated;
// every other combination runs each block's RTL streams again, held equal to it, for the speed-up targets.
void add_rtl_sim_lists(CLI::App* cmd, s2::RunNetRequest& req) {
  struct Lists {
    std::vector<int> threads;
    std::vector<std::string> evals;
  };
  auto lists = std::make_shared<Lists>();
  cmd->add_option("--threads", lists->threads,
                  "threads evaluating the chip RTL's QPEs in parallel (default: the machine's cores; the same results for any "
                  "number); a list (2,1) runs each block's RTL again with the others, checks it gives the same, and prints the speed-up")
      ->delimiter(',')
      ->check(CLI::Range(1, 256));
  cmd->add_option("--rtl-eval", lists->evals,
                  "active (default): evaluate a QPE of the chip RTL only while something is in flight in it or arrives at it; "
                  "all: every QPE every clock (the same results, slower); a list (active,all) as for --threads")
      ->delimiter(',')
      ->check(CLI::IsMember({"all", "active"}));
  cmd->final_callback([lists, &req] {
    const std::vector<int> threads = lists->threads.empty() ? std::vector<int>{0} : lists->threads;
    const std::vector<std::string> evals = lists->evals.empty() ? std::vector<std::string>{"active"} : lists->evals;
    req.rtl_sim_others.clear();
    for (std::size_t t = 0; t < threads.size(); ++t)
      for (std::size_t e = 0; e < evals.size(); ++e) {
        const s2::RtlSimOptions sim{threads[t], evals[e] == "active"};
        if (t == 0 && e == 0) req.rtl_sim = sim;
        else req.rtl_sim_others.push_back(sim);
      }
  });
}

// A seed: a decimal integer from 0 to 2^64 - 1 (a '-' would wrap to a huge seed).
CLI::Validator seed_validator() {
  return CLI::Validator(
      [](std::string& v) {
        const bool digits = !v.empty() && v.size() <= 20 && v.find_first_not_of("0123456789") == std::string::npos;
        std::uint64_t x = 0;
        return digits && CLI::detail::lexical_cast(v, x) ? std::string()
                                                         : "expected a seed from 0 to 18446744073709551615, got '" + v + "'";
      },
      "SEED");
}

// Standard input, output and error open before anything else is: a file the run opens must never get
// descriptor 1, or the console text would land in it (a journal, a report). A closed standard output is
// held by /dev/null and its stream marked failed, so that the run ends with exit 3 (nothing it printed was seen).
void hold_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int held = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (held >= 0 && held != fd) {
      ::dup2(held, fd);
      ::close(held);
    }
    if (fd == 1) std::cout.setstate(std::ios::badbit);
  }
}

int run(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  hold_standard_descriptors();
  std::signal(SIGXFSZ, SIG_IGN);  // a file-size limit fails the write (EFBIG, exit 3) instead of killing the run
  int rc = 0;
  try {
    rc = run(argc, argv);
  } catch (const std::exception& e) {  // never an abort: say what went wrong
    std::cerr << "s2cosim: " << e.what() << "\n";
    rc = s2::kExitBadInput;
  }
  // what the run printed must have reached standard output (a full disk, a closed pipe)
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "s2cosim: cannot write standard output\n";
    if (rc == s2::kExitPass || rc == s2::kExitFail) rc = s2::kExitOutput;
  }
  return rc;
}

namespace {

// `s2cosim vectors random` and `chip-random`, and `s2cosim config`: what they print or write.
struct VectorsRequest {
  std::uint64_t seed = 2026;
  int count = 240;
  std::string out_file, mac;
  std::vector<std::string> chip_presets, chip_meshes;
};
struct ConfigRequest {
  std::string config_file, mac, preset;
  std::vector<std::string> flaws;
};

// Every command's request, filled in by the parser, and the subcommand that fills it.
struct Requests {
  s2::RegressRequest regress;
  std::string regress_backend = "both";
  ConfigRequest config;
  VectorsRequest vectors;
  s2::ChipRegressRequest chip;
  s2::BenchRequest bench;
  s2::FlawLimitRequest flaw;
  s2::MapRequest map;
  std::string check_file;
  s2::RunNetRequest net;
  s2::MergeRequest merge;
  s2::DesignReportRequest design;
  s2::SnnRequest snn;
  s2::TuneRequest tune;
};
struct Commands {
  CLI::App *regress, *config, *random, *chip_random, *chip, *bench, *flaw, *map, *check, *net, *merge, *snn, *design, *tune;
};

CLI::App* add_regress(CLI::App& app, Requests& q) {
  s2::RegressRequest& req = q.regress;
  CLI::App* regress = app.add_subcommand("regress", "run task vectors on the model and/or the RTL and compare them");
  regress->add_option("vectors", req.vectors, "task-vector CSV (contract 1)")->required();
  add_config_options(regress, req.config_file, req.mac_shape, req.flaws);
  regress->add_option("--json", req.json_out, "write the JSON report (contract 2) to FILE");
  add_energy_option(regress, req.energy);
  regress->add_option("--csv", req.csv_out, "write one CSV row per task to FILE");
  regress->add_option("--journal", req.journal, "append each finished task to FILE as a JSON line (default with --json F: F.jsonl)");
  regress->add_option("--resume", req.resume,
                      "take the tasks a journal of the same run holds (an interrupted run's F.jsonl) and run the rest");
  regress->add_option("--backend", q.regress_backend, "both (default), model or rtl")
      ->check(CLI::IsMember({"both", "model", "rtl"}));
  add_deviation_bound(regress, req.policy);
  regress->add_flag("--quiet,-q", req.quiet, "print the summary only");
  add_result_outputs(regress, req.html_out, req.junit_out);
  regress->add_option("--task", req.task_ids, "run only the task with this id (repeatable)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  regress->add_option("--shard", req.shard, "run shard I of N (I/N, 1-based): the tasks k with k % N == I - 1; "
                                            "s2cosim merge combines the shards' --json reports");
  regress->add_option("--waves", req.waves_dir,
                      "write an FST waveform of every failing task's RTL run into DIR (the task run again, traced)");
  regress->add_option("--waves-window", req.waves_window,
                      "PE clocks the waveform holds: around the first divergence, or before a hang's watchdog (default 2000)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 32));
  regress->add_option("--expect-hash", req.expect_hash,
                      "refuse to run unless the configuration's hash is this (the rerun lines of reports use it)");
  return regress;
}

CLI::App* add_config(CLI::App& app, ConfigRequest& c) {
  CLI::App* config = app.add_subcommand("config", "print the hardware configuration (JSON) and its hash");
  add_config_options(config, c.config_file, c.mac, c.flaws);
  config->add_option("--preset", c.preset, "the chip run-net --target s2 uses: prototype, spinnaker2 or mini (default: QPE-DRAM)");
  return config;
}

// `s2cosim vectors random` and `s2cosim vectors chip-random`.
std::pair<CLI::App*, CLI::App*> add_vectors(CLI::App& app, VectorsRequest& v) {
  CLI::App* vectors = app.add_subcommand("vectors", "generate task vectors");
  vectors->require_subcommand(1);
  CLI::App* random = vectors->add_subcommand("random", "a seeded random suite covering the corners (contract-1 CSV)");
  random->add_option("--seed", v.seed, "seed (default 2026, the committed vectors/random_suite.csv)")->check(seed_validator());
  random->add_option("--count", v.count, "number of tasks (default 240; corners are all covered from 40)")
      ->check(CLI::Range(1, 100000));
  random->add_option("--mac", v.mac, "MAC array shape the tasks must fit: 16x4 (default), 16x2 or 8x4");
  random->add_option("--out,-o", v.out_file, "write to FILE instead of standard output");

  CLI::App* chip_random = vectors->add_subcommand(
      "chip-random", "a seeded suite of random task streams for the chip (a CSV row per stream; s2cosim chip-regress runs it)");
  chip_random->add_option("--seed", v.seed, "seed (default 2026, the committed vectors/chip_random_suite.csv)")
      ->check(seed_validator());
  chip_random->add_option("--count", v.count, "number of streams (default 240), dealt round robin over the systems")
      ->check(CLI::Range(1, 100000));
  chip_random->add_option("--preset", v.chip_presets, "a chip preset the streams run on: mini or prototype (repeatable)")
      ->check(CLI::IsMember({"mini", "prototype"}))
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  chip_random->add_option("--mesh", v.chip_meshes, "a mesh of C x R QPEs (1..6 each) with DRAMs on the west and east edges, e.g. 3x3 (repeatable)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  chip_random->add_option("--out,-o", v.out_file, "write to FILE instead of standard output");
  return {random, chip_random};
}

CLI::App* add_chip_regress(CLI::App& app, s2::ChipRegressRequest& creq) {
  CLI::App* chipcmd = app.add_subcommand(
      "chip-regress", "run a chip suite's random streams (s2cosim vectors chip-random) on the model and/or the RTL and compare them");
  chipcmd->add_option("suite", creq.suite, "chip suite CSV (e.g. vectors/chip_random_suite.csv)")->required();
  chipcmd->add_option("--backend", creq.backend, "both (default), model or rtl")->check(CLI::IsMember({"both", "model", "rtl"}));
  chipcmd->add_option("--stream", creq.streams, "run only the stream with this id (repeatable)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  add_deviation_bound(chipcmd, creq.policy);
  add_rtl_sim_options(chipcmd, creq.rtl_sim);
  chipcmd->add_option("--json", creq.json_out, "write the streams' results as JSON to FILE");
  add_result_outputs(chipcmd, creq.html_out, creq.junit_out);
  chipcmd->add_flag("--quiet,-q", creq.quiet, "print the summary only");
  return chipcmd;
}

CLI::App* add_snn(CLI::App& app, s2::SnnRequest& r) {
  CLI::App* cmd = app.add_subcommand(
      "snn", "an SNN layer's synaptic processing in the SNN paper's layouts on the model and/or the RTL, checked against its golden currents");
  s2::SnnDraw& d = r.draw;
  // a layer one PE holds in every layout (the paper's cortex network, 800 x 200, needs several: docs/snn.md)
  d = {64, 40, 4, 16, 0.1, 0.1, 1};
  cmd->add_option("--pre", d.pre, "pre-neurons (default 64)");
  cmd->add_option("--post", d.post, "post-neurons (default 40)");
  cmd->add_option("--delays", d.delays, "delays: a synapse's delay is drawn from 0 .. delays-1 (default 4)");
  cmd->add_option("--density", d.density, "probability that a pre-post pair is a synapse, 0..1 (default 0.1)");
  cmd->add_option("--rate", d.rate, "probability that a neuron spikes in a timestep, 0..1 (default 0.1)");
  cmd->add_option("--timesteps", d.timesteps, "timesteps (default 16)");
  cmd->add_option("--seed", d.seed, "the layer's seed (default 1)")->check(seed_validator());
  cmd->add_option("--weights", r.weights_file, "the layer's weights instead: .npy, int8, shape (delays, pre, post)");
  cmd->add_option("--spikes", r.spikes_file, "the layer's spikes instead: .npy, uint8 or bool 0/1, shape (timesteps, pre)");
  cmd->add_option("--save-layer", r.save_layer_dir, "write the layer run to DIR (weights.npy, spikes.npy)");
  cmd->add_option("--currents", r.currents_out, "write the currents a backend computed to FILE (.npy, int32, shape (timesteps, post))");
  cmd->add_option("--layout", r.layout, "all (default), serial_arm, original_mac, operand_stack, echelon or echelon_mixed");
  cmd->add_option("--target", r.target, "qpe (default: QPE-DRAM, at most 4 PEs) or s2 (the chip)")->check(CLI::IsMember({"qpe", "s2"}));
  cmd->add_option("--preset", r.preset, "the chip for --target s2: prototype (default), spinnaker2 or mini");
  cmd->add_option("--backend", r.backend, "both (default), model or rtl")->check(CLI::IsMember({"both", "model", "rtl"}));
  add_rtl_sim_options(cmd, r.rtl_sim);
  cmd->add_option("--budget-bytes", r.budget_bytes, "a PE's SRAM for the layout (default: the configuration's MLA budget; the paper's 122880): "
                  "a layer that one PE cannot hold goes to a Dominant PE and Subordinates");
  add_config_options(cmd, r.config_file, r.mac, r.flaws);
  add_deviation_bound(cmd, r.policy);
  cmd->add_option("--json", r.json_out, "write the layouts' results as JSON to FILE");
  add_energy_option(cmd, r.energy);
  cmd->add_option("--journal", r.journal, "append each finished layout to FILE as a JSON line (default with --json F: F.jsonl)");
  cmd->add_option("--resume", r.resume, "take the layouts a journal of the same run holds (an interrupted run's F.jsonl) and run the rest");
  cmd->add_option("--shard", r.shard, "run shard I of N (I/N, 1-based): the layouts k (in the order run) with k % N == I - 1; "
                                      "s2cosim merge combines the shards' --json reports");
  add_result_outputs(cmd, r.html_out, r.junit_out);
  cmd->add_flag("--quiet,-q", r.quiet, "print the summary only");
  cmd->add_option("--sweep", r.sweep, "fig9: the SNN paper's Figure 9 sweep of Echelon Reorder's memory optimization rate instead (no run; --json: its rows, --html: its plots)");
  cmd->add_option("--sweep-density", r.sweep_densities, "a density of the sweep (repeatable; default 0.05, 0.1, 0.2)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  return cmd;
}

CLI::App* add_bench(CLI::App& app, s2::BenchRequest& breq) {
  breq.suites = {"vectors/thesis_qpe_validation.csv", "vectors/random_suite.csv"};
  CLI::App* benchcmd = app.add_subcommand(
      "bench", "measure the promised figures: every suite on both backends, flaws off and sram2clk, in one run");
  benchcmd->add_option("suites", breq.suites, "task-vector files (default: the thesis validation and random suites)");
  benchcmd->add_option("--mac", breq.mac_shapes, "MAC array shapes to run (repeatable; default 16x4)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  add_deviation_bound(benchcmd, breq.policy);
  benchcmd->add_option("--json", breq.json_out, "write the figures as JSON to FILE");
  benchcmd->add_option("--journal", breq.journal, "append each finished task to FILE as a JSON line (default with --json F: F.jsonl)");
  benchcmd->add_option("--resume", breq.resume, "take the tasks a journal of the same bench holds and run the rest");
  add_result_outputs(benchcmd, breq.html_out, breq.junit_out);
  benchcmd->add_option("--shard", breq.shard, "run shard I of N (I/N, 1-based): the tasks k, over every suite, MAC array and flaw "
                                              "setting, with k % N == I - 1; s2cosim merge combines the shards' --json reports");
  return benchcmd;
}

CLI::App* add_flaw_limit(CLI::App& app, s2::FlawLimitRequest& freq) {
  CLI::App* flawcmd = app.add_subcommand(
      "flaw-limit", "find the smallest task that shows an RTL flaw, by bisection, from the comparators' status only");
  flawcmd->add_option("flaw", freq.flaw, "neighbor_conv (searched over weight bytes) or mm_wide_a (over W_A)")->required();
  add_config_options(flawcmd, freq.config_file, freq.mac_shape, freq.other_flaws);
  add_deviation_bound(flawcmd, freq.policy);
  flawcmd->add_option("--json", freq.json_out, "write the result as JSON (contract 3) to FILE");
  flawcmd->add_option("--journal", freq.journal, "append each finished probe to FILE as a JSON line (default with --json F: F.jsonl)");
  flawcmd->add_option("--resume", freq.resume, "take the probes a journal of the same search holds and run the rest");
  add_result_outputs(flawcmd, freq.html_out, freq.junit_out);
  return flawcmd;
}

CLI::App* add_map(CLI::App& app, s2::MapRequest& mreq) {
  CLI::App* mapcmd = app.add_subcommand(
      "map", "split a CNN for QPE-DRAM or SpiNNaker2 (thesis 4.1-4.2): pieces, sizes, MAC and SRAM utilisation");
  mapcmd->add_option("--net", mreq.net, "vgg16 (default), resnet50, a layer-list file (mapper/README.md) or an ONNX model (.onnx, up to 2 GB, its weights inside or in external data files)");
  mapcmd->add_option("--target", mreq.target, "qpe (default, QPE-DRAM) or s2 (SpiNNaker2)")
      ->check(CLI::IsMember({"qpe", "s2"}));
  mapcmd->add_option("--preset", mreq.preset, "the chip for --target s2: prototype (default), spinnaker2 or mini (its split and its limits)");
  mapcmd->add_option("--json", mreq.json_out, "write the split as JSON (contract 3) to FILE");
  mapcmd->add_option("--config", mreq.config_file, "hardware configuration JSON (fields of s2cosim config)");
  mapcmd->add_option("--mac", mreq.mac_shape, "MAC array shape, columns x rows: 16x4 (default), 16x2 or 8x4");
  mapcmd->add_option("--split", mreq.split_file,
                     "split the blocks FILE names as it says, e.g. vectors/thesis_vgg16_s2_split.txt (thesis Appendix I); "
                     "the others as the splitter finds");
  mapcmd->add_flag("--verify", mreq.verify,
                   "compute every block whole and from its pieces with the golden kernels and compare, and distribute every "
                   "block and strategy as run-net would, its streams checked as the backends check them (slow at full size)");
  return mapcmd;
}

CLI::App* add_check(CLI::App& app, std::string& check_file) {
  CLI::App* checkcmd = app.add_subcommand(
      "check", "say whether an ONNX model will run: every node that will not map, each with why and what to change, "
               "and what the import folds, lowers or leaves to the host (exit 0: it will run)");
  checkcmd->add_option("model", check_file,
                       "the ONNX model (.onnx, up to protobuf's 2 GB; its weights inside or in external data files beside "
                       "it, as onnx.save(save_as_external_data=True) writes them)")
      ->required();
  return checkcmd;
}

// run-net's network, target and data options; its outputs and sessions: add_run_net_outputs.
CLI::App* add_run_net(CLI::App& app, s2::RunNetRequest& nreq) {
  CLI::App* netcmd = app.add_subcommand(
      "run-net", "run a CNN's operation blocks on QPE-DRAM or the SpiNNaker2 chip in the distributor's strategies "
                 "(thesis 4.3/4.4, Tables 5.5-5.8)");
  netcmd->add_option("--net", nreq.net, "vgg16 (default), resnet50, a layer-list file (mapper/README.md) or an ONNX model (.onnx, up to 2 GB, its weights inside or in external data files)");
  netcmd->add_option("--target", nreq.target, "qpe (default, QPE-DRAM) or s2 (the SpiNNaker2 chip)")
      ->check(CLI::IsMember({"qpe", "s2"}));
  netcmd->add_flag("--whole", nreq.whole,
                   "run every block with its ARM operations and sum the clocks per thesis Table 5.10 category "
                   "(default strategy fuse_reuse; blocks it does not apply to run fuse_noreuse; each block once, ARM timed, "
                   "unless --core-clocks)");
  netcmd->add_flag("--core-clocks", nreq.core_clocks,
                   "also run every block ARM free (thesis Tables 5.5-5.8's core-operation clocks) and compare model and RTL "
                   "on those runs; on by itself where the report compares with those tables (a run that is not --whole, of "
                   "blocks they give). Otherwise each block runs once per backend, ARM timed (what the chip does), and the "
                   "report's ARM-free figures are left out");
  netcmd->add_flag("--timing-only", nreq.timing_only,
                   "the model's clocks and counts without data, for design-space sweeps: no input or weights staged, no "
                   "result computed, nothing checked (every data field of the report says so); --backend model only");
  netcmd->add_option("--preset", nreq.preset, "the chip for --target s2: prototype (default: the thesis's 6x6 QPEs, 4 DRAMs) or spinnaker2 (the taped-out "
                     "chip's 152 PEs and 2 LPDDR4 channels, with the assumptions it prints) or mini (2x2 QPEs, 2 DRAMs, 2 storage "
                     "QPEs: a scaled-down prototype for fast regression)");
  netcmd->add_option("--strategy", nreq.strategies, "nofuse_noreuse, fuse_noreuse or fuse_reuse (repeatable; default all)")
      ->delimiter(',');
  netcmd->add_option("--layers", nreq.layers, "core operations to run, e.g. CONV_1,FC_21 (default: every block)")
      ->delimiter(',');
  netcmd->add_option("--backend", nreq.backend, "model (default), rtl, or both (comparators per operation and strategy)")
      ->check(CLI::IsMember({"model", "rtl", "both"}));
  add_deviation_bound(netcmd, nreq.policy);
  add_rtl_sim_lists(netcmd, nreq);
  add_energy_option(netcmd, nreq.energy);
  netcmd->add_option("--json", nreq.json_out, "write the results as JSON (contract 3) to FILE");
  netcmd->add_option("--seed", nreq.seed, "seed of the block's input and weight data (default 1)")->check(seed_validator());
  netcmd->add_option("--input", nreq.input_npy,
                     "the network's input, a .npy file (int8, or float32 quantized by the model's input scale, float64 and "
                     "uint8 read as float32; a float ONNX model is quantized on it unless --calibrate is given): every block runs on the data the blocks before it give (docs/real_networks.md)");
  netcmd->add_option("--output", nreq.output_npy, "write the network's output (int8 .npy) as a backend computed it; needs --input");
  netcmd->add_option("--reference", nreq.reference_npy,
                     "the network's output must equal this int8 .npy value for value (e.g. PyTorch's integer reference, "
                     "vectors/nets/), or, a float .npy (the framework's own output), correlate with it at r >= 0.98 with the "
                     "same top-1 or one within an output step (correlation, max error in output steps, top-1/top-5 reported); needs --input");
  netcmd->add_option("--calibrate", nreq.calibrate,
                     "quantize a float ONNX model on these float inputs (a .npy of one input or a stack of them, or a "
                     "directory of .npy files; maxima over all) instead of on --input");
  netcmd->add_option("--config", nreq.config_file, "hardware configuration JSON (fields of s2cosim config)");
  netcmd->add_option("--mac", nreq.mac_shape, "MAC array shape, columns x rows: 16x4 (default), 16x2 or 8x4");
  return netcmd;
}

void add_run_net_outputs(CLI::App* netcmd, s2::RunNetRequest& nreq) {
  netcmd->add_option("--journal", nreq.journal,
                     "append each finished block run to FILE as a JSON line (default with --json F: F.jsonl)");
  netcmd->add_option("--resume", nreq.resume,
                     "take the block runs a journal of the same run holds (an interrupted run's F.jsonl) and run the rest");
  netcmd->add_option("--split", nreq.split_file,
                     "split the blocks FILE names as it says, e.g. vectors/thesis_vgg16_s2_split.txt (thesis Appendix I); "
                     "the others as the splitter finds");
  netcmd->add_option("--mapping", nreq.mapping_file,
                     "run the blocks FILE names as it maps them (s2cosim tune --out's file: a split file whose lines may end in "
                     "strategy=S, which --whole runs, and schedule=thesis|overlapped); the others as the splitter finds");
  netcmd->add_option("--schedule", nreq.schedule,
                     "how each PE works through its pieces: thesis (default: each MLA run, then the ARM's passes one by one, then "
                     "the store) or overlapped (chip fuse_reuse: the MLA computes the next run while the ARM finishes the last "
                     "and the DMA stores it; a ReLU folded into the quantization's pass; docs/usage.md, \"Overlap\")")
      ->check(CLI::IsMember({"thesis", "overlapped"}));
  add_result_outputs(netcmd, nreq.html_out, nreq.junit_out);
  netcmd->add_option("--csv", nreq.csv_out, "write one CSV row per operation block and strategy to FILE");
  netcmd->add_option("--shard", nreq.shard, "run shard I of N (I/N, 1-based): the block runs k with k % N == I - 1; "
                                            "s2cosim merge combines the shards' --json reports");
  netcmd->add_option("--jobs", nreq.jobs,
                     "run the block runs in J processes of s2cosim at once (each a shard of the run, the chip RTL of each on "
                     "cores / J threads unless --threads is given), then report them as one run: the report of --jobs 1 but for "
                     "wall times and speeds (default 1); the wall time falls with the cores, the memory grows with J")
      ->check(CLI::Range(1, 64));
  netcmd->add_option("--waves", nreq.waves_dir,
                     "write FST waveforms of every failing block's RTL run into DIR/BLOCK_STRATEGY/ (a file per QPE; the "
                     "failing stream run again, traced)");
  netcmd->add_option("--waves-window", nreq.waves_window,
                     "PE clocks the waveform holds: around the first differing command, or before a hang's watchdog (default 2000)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 32));
  netcmd->add_option("--expect-hash", nreq.expect_hash,
                     "refuse to run unless the configuration's hash is this (the rerun lines of reports use it)");
}

CLI::App* add_merge(CLI::App& app, s2::MergeRequest& mgreq) {
  CLI::App* mergecmd = app.add_subcommand(
      "merge", "combine the --json reports of a sharded regress, run-net, bench or snn (--shard I/N) into the unsharded run's reports");
  mergecmd->add_option("shards", mgreq.inputs, "the shards' --json reports, in any order")->required();
  mergecmd->add_option("--json", mgreq.json_out, "write the merged JSON report to FILE");
  add_result_outputs(mergecmd, mgreq.html_out, mgreq.junit_out);
  mergecmd->add_option("--csv", mgreq.csv_out, "write one CSV row per check to FILE");
  mergecmd->add_flag("--allow-partial", mgreq.allow_partial,
                     "take shards a signal stopped or that miss checks; their missing checks are reported as not run "
                     "(errors), never as passing");
  return mergecmd;
}

CLI::App* add_tune(CLI::App& app, s2::TuneRequest& t) {
  CLI::App* tunecmd = app.add_subcommand(
      "tune", "search each convolution block's mapping (split, strategy, schedule) with the model as the judge and write it as "
              "a mapping file for run-net --mapping (docs/usage.md, \"Tuning a mapping\")");
  tunecmd->add_option("--net", t.net, "vgg16 (default), resnet50, a layer-list file or an ONNX model");
  tunecmd->add_option("--target", t.target, "s2 (default, SpiNNaker2) or qpe (QPE-DRAM)")->check(CLI::IsMember({"qpe", "s2"}));
  tunecmd->add_option("--preset", t.preset, "the chip for --target s2: prototype (default), spinnaker2 or mini");
  tunecmd->add_option("--objective", t.objective, "clocks (default) or energy (the default energy table, docs/energy.md)")
      ->check(CLI::IsMember({"clocks", "energy"}));
  tunecmd->add_option("--out", t.out, "the mapping file to write")->required();
  tunecmd->add_option("--json", t.json_out, "write the table (per block the default and the found mapping) as JSON to FILE");
  tunecmd->add_option("--journal", t.journal, "the candidates judged, one JSON line each, from which a stopped search resumes "
                                              "(default: the mapping file's name + .jsonl)");
  tunecmd->add_option("--layers", t.layers, "the blocks to tune, e.g. CONV_29 (default: every convolution block)")->delimiter(',');
  tunecmd->add_option("--candidates", t.max_candidates, "splits tried per block, the splitter's first (default 16)")
      ->check(CLI::Range(1, 1000));
  tunecmd->add_option("--jobs", t.jobs,
                      "judge the candidates in J processes of s2cosim at once (each a shard of the search; the whole network's "
                      "runs with run-net --jobs J): the mapping of --jobs 1, found in about 1/J of the time (default 1)")
      ->check(CLI::Range(1, 64));
  tunecmd->add_option("--shard", t.shard, "a worker of --jobs: judge the candidates k (over every block) with k % N == I - 1 "
                                          "into the journal beside --json F, and write no mapping");
  tunecmd->add_flag("!--no-verify", t.verify, "skip the whole network's runs with the default and the found mapping");
  tunecmd->add_option("--config", t.config_file, "hardware configuration JSON (fields of s2cosim config)");
  tunecmd->add_option("--mac", t.mac_shape, "MAC array shape, columns x rows: 16x4 (default), 16x2 or 8x4");
  tunecmd->add_option("--seed", t.seed, "seed of the blocks' data (their clocks do not depend on it)");
  return tunecmd;
}

CLI::App* add_design_report(CLI::App& app, s2::DesignReportRequest& dreq) {
  CLI::App* designcmd = app.add_subcommand(
      "design-report", "put networks' whole runs in every MAC shape and strategy side by side: clocks, energy per component "
                       "and the PE's area (thesis 5.4's question), from run-net --whole --energy --json reports");
  designcmd->add_option("reports", dreq.reports, "the run-net --whole --energy --json reports (one per network, chip and MAC shape; merged shards too)")
      ->required();
  designcmd->add_option("--synth", dreq.synth_json, "one PE's area per MAC shape: the JSON of tools/synth.sh --json FILE");
  designcmd->add_option("--reference", dreq.reference_mac, "the MAC shape the others are compared with (default 16x4)");
  designcmd->add_option("--json", dreq.json_out, "write the design points as JSON (docs/contracts.md) to FILE");
  add_result_outputs(designcmd, dreq.html_out, dreq.junit_out);
  designcmd->add_option("--csv", dreq.csv_out, "write one CSV row per design point to FILE");
  return designcmd;
}

// The text a generator made: to standard output, or written atomically to --out.
int emit(const std::string& text, const std::string& out_file) {
  if (out_file.empty()) std::cout << text;
  else if (!s2::write_outputs({{out_file, [&] { return text; }}}, std::cerr)) return s2::kExitOutput;
  return s2::kExitPass;
}

int run_chip_random(const VectorsRequest& v) {
  std::vector<std::string> systems = v.chip_presets;
  systems.insert(systems.end(), v.chip_meshes.begin(), v.chip_meshes.end());
  if (systems.empty()) systems.push_back("mini");
  for (const std::string& m : v.chip_meshes) {
    const bool mesh = m.size() == 3 && m[1] == 'x' && m[0] >= '1' && m[0] <= '6' && m[2] >= '1' && m[2] <= '6';
    if (!mesh) throw std::invalid_argument("--mesh " + m + ": expected CxR with C and R from 1 to 6, e.g. 3x3");
  }
  std::string command = "s2cosim vectors chip-random --seed " + std::to_string(v.seed) + " --count " + std::to_string(v.count);
  for (const std::string& p : v.chip_presets) command += " --preset " + p;
  for (const std::string& m : v.chip_meshes) command += " --mesh " + m;
  return emit(s2::chip_suite_csv(v.seed, v.count, systems, command), v.out_file);
}

int run_random(const VectorsRequest& v) {
  const s2::HwConfig cfg = s2::build_hw_config("", v.mac, {});
  return emit(s2::random_suite_csv(v.seed, v.count, cfg), v.out_file);
}

int run_config(const ConfigRequest& c) {
  s2::HwConfig cfg = s2::build_hw_config(c.config_file, c.mac, c.flaws);
  if (!c.preset.empty()) {
    s2::apply_preset(cfg, c.preset);
    s2::validate(cfg);
  }
  // the JSON alone on standard output, so that `s2cosim config > F` gives a file --config reads
  std::cout << s2::to_json(cfg).dump(2) << "\n";
  std::cerr << "config hash: " << s2::config_hash(cfg) << "\n";
  return s2::kExitPass;
}

// The command the parser chose, with its request.
int dispatch(const Commands& cmd, Requests& q) {
  // the commands with a journal stop on SIGINT, SIGTERM, SIGHUP and SIGPIPE from here on, after the task in
  // hand, and write what finished (a signal while the inputs are read stops them before the first task)
  std::optional<s2::StopOnSignal> stop_on_signal;
  if (cmd.regress->parsed() || cmd.bench->parsed() || cmd.flaw->parsed() || cmd.net->parsed() || (cmd.snn->parsed() && q.snn.sweep.empty()))
    stop_on_signal.emplace();
  if (cmd.regress->parsed()) {
    q.regress.backends = s2::parse_backend_selection(q.regress_backend);
    return s2::regress(q.regress, std::cout, std::cerr);
  }
  if (cmd.bench->parsed()) return s2::bench(q.bench, std::cout, std::cerr);
  if (cmd.flaw->parsed()) return s2::flaw_limit(q.flaw, std::cout, std::cerr);
  if (cmd.map->parsed()) return s2::map_network(q.map, std::cout, std::cerr);
  if (cmd.net->parsed()) return s2::run_net(q.net, std::cout, std::cerr);
  if (cmd.check->parsed()) return s2::check_model(q.check_file, std::cout, std::cerr);
  if (cmd.merge->parsed()) return s2::merge(q.merge, std::cout, std::cerr);
  if (cmd.design->parsed()) return s2::design_report(q.design, std::cout, std::cerr);
  if (cmd.tune->parsed()) return s2::tune_network(q.tune, std::cout, std::cerr);
  if (cmd.chip->parsed()) return s2::chip_regress(q.chip, std::cout, std::cerr);
  if (cmd.snn->parsed()) return s2::snn(q.snn, std::cout, std::cerr);
  try {
    if (cmd.chip_random->parsed()) return run_chip_random(q.vectors);
    if (cmd.random->parsed()) return run_random(q.vectors);
    return run_config(q.config);
  } catch (const std::exception& e) {
    std::cerr << "s2cosim: " << e.what() << "\n";
    return s2::kExitBadInput;
  }
}

int run(int argc, char** argv) {
  s2::set_program_name(argc > 0 ? argv[0] : "s2cosim");
  CLI::App app{"s2cosim: co-simulation of the SpiNNaker2 QPE: SystemC model against the Verilated RTL"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("s2cosim ") + s2::tool_version());
  Requests q;
  Commands cmd{};
  cmd.regress = add_regress(app, q);
  cmd.config = add_config(app, q.config);
  std::tie(cmd.random, cmd.chip_random) = add_vectors(app, q.vectors);
  cmd.chip = add_chip_regress(app, q.chip);
  cmd.bench = add_bench(app, q.bench);
  cmd.flaw = add_flaw_limit(app, q.flaw);
  cmd.map = add_map(app, q.map);
  cmd.check = add_check(app, q.check_file);
  cmd.net = add_run_net(app, q.net);
  add_run_net_outputs(cmd.net, q.net);
  cmd.merge = add_merge(app, q.merge);
  cmd.design = add_design_report(app, q.design);
  cmd.tune = add_tune(app, q.tune);
  cmd.snn = add_snn(app, q.snn);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return s2::kExitBadInput;
  }
  // run-net --jobs: its workers are this program with the same arguments
  q.net.command_line.assign(argv + std::min(argc, 1), argv + argc);
  q.tune.command_line = q.net.command_line;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  q.net.program = ec ? std::string(argc > 0 ? argv[0] : "") : self.string();
  q.tune.program = q.net.program;
  return dispatch(cmd, q);
}

}  // namespace
