// `s2cosim snn`: an SNN layer's synaptic processing (model/snn_layer.h) in the SNN paper's layouts
// (mapper/snn/layouts.h) on the model and/or the RTL. Per layout: the currents bit-exact against the golden
// reference computed straight from the synapse list (on each backend), the clocks per timestep model against
// RTL (equation 5.1), hangs; and what the paper's Figure 10 reports: PEs, SRAM bytes by kind and as a percentage
// of original_mac's, MLA and ARM clocks per timestep and the time as a percentage of serial_arm's. Every layout
// is a result record (harness/outputs/result.h): JSON, JUnit, HTML and rerun lines as for the other commands.
//
// A layer one PE's budget holds runs on one PE; a larger one on a Dominant PE and Subordinates
// (mapper/snn/deployment.h), inside a QPE (--target qpe) or over a chip's QPEs (--target s2 --preset P). The layer
// is drawn from a seed (--pre, --post, ...) or read from .npy files.
//
// Each finished layout goes to the journal as it finishes (commands/snn_records.h); --resume takes the layouts a
// journal of the same run holds; SIGINT, SIGTERM, SIGHUP and SIGPIPE stop the run after the layout in hand;
// --shard I/N runs a share of the layouts, and `s2cosim merge` of every shard's --json report gives the run's.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "harness/backends/backend.h"
#include "harness/check/check_policy.h"
#include "model/snn_layer.h"

namespace s2 {

struct SnnRequest {
  SnnDraw draw;                  // the layer, drawn (--pre --post --delays --density --rate --timesteps --seed)
  std::string weights_file, spikes_file;  // or read (--weights W.npy --spikes S.npy: both or neither)
  std::string save_layer_dir;    // --save-layer DIR: the layer run, as weights.npy and spikes.npy
  std::string currents_out;      // --currents I.npy: the currents (int32 (T, post)) a backend computed
  std::string layout = "all";    // all | serial_arm | original_mac | operand_stack | echelon | echelon_mixed
  std::string target = "qpe";    // qpe (QPE-DRAM: a Dominant and up to 3 Subordinates) | s2 (a chip preset)
  std::string preset;            // --target s2: prototype (default), spinnaker2, mini
  std::string backend = "both";  // both | model | rtl
  RtlSimOptions rtl_sim;          // --threads, --rtl-eval: how the RTL is simulated
  std::uint64_t budget_bytes = 0;  // a PE's SRAM for the layout (0: the configuration's MLA budget)
  std::string config_file, mac;
  std::vector<std::string> flaws;
  CheckPolicy policy;
  std::string json_out, junit_out, html_out;
  std::string journal;       // each finished layout appended as a JSON line (default with --json F: F.jsonl)
  std::string resume;        // a journal of the same run: its layouts are not run again
  std::string shard = "1/1"; // --shard I/N: the layouts k (in the order run) with k % N == I - 1
  bool quiet = false;
  std::string energy;  // --energy: "default" or an energy table's JSON file ("": no energy)
  std::string sweep;                   // fig9: the paper's Figure 9 sweep instead (commands/snn_sweep.h)
  std::vector<double> sweep_densities; // its densities (default 0.05, 0.1, 0.2)
};

// Returns the exit code: 0 if every layout passed, 1 if not, 2 for bad input (nothing is run then), 3 if an
// output or the journal could not be written, 128 + the signal that stopped it.
int snn(const SnnRequest& req, std::ostream& out, std::ostream& err);

}  // namespace s2
