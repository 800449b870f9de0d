// s2cosim tune: a mapping per block, searched with the exact model as the judge (docs/usage.md, "Tuning a
// mapping"). For each convolution block it tries splits (output rows and columns, filters per part), strategies and
// schedules, runs each candidate's streams on the model (timing only: clocks and counts), skips a candidate whose
// own lower bound (its MAC lanes, padding included, over the PEs its strategy uses, or the block's bound) cannot
// beat the best so far, and keeps the best by the objective. It writes a mapping file (run-net --mapping), a
// table per block (the default mapping, the found one, clocks, energy, the block's bound) and a journal from which
// a stopped search resumes, then runs the whole network with the default and the found mapping (--whole) and
// reports both sums.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace s2 {

struct TuneRequest {
  std::string net = "vgg16";
  std::string target = "s2";  // qpe | s2
  std::string preset;         // s2: the chip (prototype when empty)
  std::string config_file, mac_shape;
  std::string objective = "clocks";  // clocks | energy (the default energy table's picojoules)
  std::string out;                   // the mapping file
  std::string json_out;
  std::string journal;               // default: out + ".jsonl"
  std::vector<std::string> layers;   // blocks to tune (default: every convolution block)
  int max_candidates = 16;           // splits tried per block, the splitter's first
  bool verify = true;                // run the whole network with the default and the found mapping
  std::uint64_t seed = 1;
  // --jobs J: the candidates are judged in J worker processes of s2cosim at once (each `tune ... --shard I/J`,
  // the candidates k over every block with k % J == I - 1), whose journals this process then takes; the
  // whole network's runs take run-net --jobs J. A worker (--shard) judges its share into the journal beside its
  // --json (F.jsonl) and writes no mapping; its --journal, if given, is read only (candidates it holds are not
  // judged again).
  int jobs = 1;
  std::string shard;
  std::string program;                    // this program (the workers')
  std::vector<std::string> command_line;  // the arguments after the program's name
};

// Exit code: 0 done (the mapping written), 1 a candidate or the verification failed, 2 bad input.
int tune_network(const TuneRequest& req, std::ostream& out, std::ostream& err);

}  // namespace s2
