// s2cosim run-net: runs a network's operation blocks on QPE-DRAM in the distributor's strategies and
// prints the clocks per operation and strategy as thesis Tables 5.5/5.6 do, next to the thesis's
// figures where it published them (published_figures.h), and writes contract-3 JSON. The pipeline's steps
// live in net_block_run.h (a block run, the policy numbers), net_data.h (the data along the network),
// net_records.h (records and JSON) and net_tables.h (the console's tables).
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/backends/backend.h"
#include "harness/commands/published_figures.h"
#include "harness/outputs/result.h"

namespace s2 {

struct RunNetRequest {
  std::string net = "vgg16";
  std::string target = "qpe";
  std::vector<std::string> strategies;  // empty: all three
  std::vector<std::string> layers;      // core operation names; empty: every block the distributor runs
  std::string backend = "model";        // model | rtl | both
  std::string json_out, config_file, mac_shape;
  std::string preset;  // --target s2: the chip (empty: the configuration file's chip, else prototype)
  std::string split_file;  // blocks split as the file says (mapper/README.md, "Split files")
  std::string mapping_file;  // a mapping (s2cosim tune's): a split file whose lines may name a strategy and schedule
  std::string schedule = "thesis";  // every block's (mapper::Schedule): thesis | overlapped
  std::string journal;     // JSON Lines journal of finished block runs (default: JSON report + ".jsonl")
  std::string resume;      // a journal of the same run: its block runs are taken, not run again
  // every block (or those of `layers`), ARM operations timed, summed per thesis Table 5.10 category; a
  // block the strategy does not apply to runs fuse_noreuse (then nofuse_noreuse)
  bool whole = false;
  // --core-clocks: also run every block ARM free (thesis Tables 5.5-5.8's core-operation clocks) and compare
  // model and RTL on those runs, as a run that is not --whole does by itself where its report compares blocks
  // with those tables. Without it (core-clock mode off) each backend runs every stream once, ARM timed.
  bool core_clocks = false;
  std::uint64_t seed = 1;
  // a real input (.npy, int8 or float32; a float ONNX model is quantized on it) instead of seeded data: every
  // block gets the data the blocks before it give (docs/real_networks.md); --output writes the network's output
  std::string input_npy, output_npy;
  // --reference: the network's output must equal this int8 .npy (e.g. PyTorch's integer reference), or, a
  // float .npy (the framework's own output), correlate with it (r >= 0.98) with the same top-1 class (or one within an output step)
  std::string reference_npy;
  // --calibrate: the float inputs a float ONNX model is quantized on (a .npy of one input or a stack of
  // them, or a directory of .npy files), instead of the --input it runs
  std::string calibrate;
  std::string html_out, junit_out, csv_out;  // the reports of harness/outputs/result.h (empty: none)
  std::string shard = "1/1";                 // --shard I/N: the block runs k with k % N == I - 1
  std::string expect_hash;                   // refuse to run unless the configuration has this hash
  std::string waves_dir;                     // --waves: an FST waveform per QPE of every failing block's RTL run
  std::uint64_t waves_window = 2000;         // PE clocks around the first divergence, or before the watchdog
  CheckPolicy policy;  // the deviation bound (--deviation-bound), the streams' watchdog, the thesis targets
  std::string energy;  // --energy: "default" or an energy table's JSON file ("": no energy)
  // the RTL backend (empty: the project's, make_rtl_stream_backend); a user's adapter, or a test's, may
  // stand in for it here without touching the runner
  std::function<std::unique_ptr<StreamBackend>(const HwConfig&)> rtl_backend;
  RtlSimOptions rtl_sim;  // --threads, --rtl-eval: how the RTL is simulated (not what it computes)
  // --threads 2,1 / --rtl-eval active,all: other ways to simulate it, each block's RTL run repeated under each
  // and held equal to the run of record's; their wall times give the speed-ups the targets judge
  std::vector<RtlSimOptions> rtl_sim_others;
  // --timing-only: the model's clocks and counts without data (none staged, computed or checked; for design-space
  // sweeps); every data field of the report says "not checked" (null)
  bool timing_only = false;
  // --jobs J: the block runs in J processes of `program` at once (each a --shard of the run, its RTL on
  // cores / J threads unless --threads is given), then reported as one run; `command_line` is the run's own
  // (the program's arguments after its name), which the workers get
  int jobs = 1;
  std::string program;
  std::vector<std::string> command_line;
};

// Exit code: 0 all ran, every result matched the golden block and (with both backends) every comparator
// passed; 1 otherwise; 2 bad input; 128 + the signal (130, 143) when SIGINT or SIGTERM stopped it (after
// the block in hand; what finished is reported and in the journal).
// Reads a block run's journal record as run-net --resume does; throws std::invalid_argument naming the
// field of a malformed one (the fuzz target and the bad-input corpus call it).
void check_block_record(const nlohmann::json& record);
int run_net(const RunNetRequest& req, std::ostream& out, std::ostream& err);
// How the run's chip RTL is simulated: --threads and --rtl-eval, and with --jobs each worker's (the machine's
// cores over the jobs unless --threads is given).
RtlSimOptions rtl_sim_as_run(const RunNetRequest& req);

// s2cosim check F.onnx: every node of the model that will not map, all at once, each with why and what to
// change, then what the import folds, lowers or leaves to the host; the network is then parsed and split for
// QPE-DRAM. Exit code: 0 the network will run, 1 it will not (each problem printed), 2 no such file.
int check_model(const std::string& path, std::ostream& out, std::ostream& err);

// Thesis Table 5.10's sums from run-net's operations[] records (their category_cycles, per strategy asked;
// "sum" over all categories), in the records' order: a merge of shards sums the same numbers in the same order.
std::map<std::string, std::map<std::string, double>> category_sums(const nlohmann::json& operations);
// The block runs held to a bound (operations[].bound with the run's clocks), per strategy asked: the clocks and
// the bounds summed, and how many blocks each term bounds (the JSON report's bound_sums).
struct BoundSum {
  int blocks = 0;
  std::uint64_t block_cycles = 0, bound_cycles = 0;
  std::map<std::string, int> bound_by;
};
std::map<std::string, BoundSum> bound_sums(const nlohmann::json& operations);
// run-net's JSON report (contract 3): `head` (network, target, backend, seed, config, ...), the category
// sums under --whole, `total`, the operations[] records and the results (harness/outputs/result.h).
nlohmann::json run_net_report_json(nlohmann::json head, const nlohmann::json& operations, const ResultSet& results);
// A run-net command line for this request: the network, target and preset, then `options` (" --..." each: what
// the rerun is of), then the split, configuration and MAC shape, checked against the configuration's hash.
std::string run_net_command_line(const RunNetRequest& req, const std::string& options, const std::string& hash);
// The command line that reruns exactly one block in one strategy of this request; `mode`: the options that
// give the rerun the run's core-clock mode where the block alone would not (" --core-clocks" or " --whole").
std::string run_net_replay(const RunNetRequest& req, const std::string& block, const std::string& strategy,
                           const std::string& hash, const std::string& mode = "");

}  // namespace s2
