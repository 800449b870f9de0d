// The corpus of bad inputs (tests/bad_inputs/<reader>/): every file there must be refused by its reader
// with exactly the error line in the file beside it (NAME.expected; "{file}" stands for the file's path).
// Inputs too big to keep in the repository (a million-layer network, a 40 MB task file) are made here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>

#include "harness/session/journal.h"
#include "harness/commands/design_report.h"
#include "harness/commands/merge.h"
#include "harness/commands/net_runner.h"
#include "harness/stimulus/npy_file.h"
#include "harness/stimulus/snn_files.h"
#include "harness/commands/regress_report.h"
#include "harness/stimulus/task_vectors.h"
#include "mapper/network.h"
#include "mapper/onnx/import.h"
#include "mapper/parser.h"
#include "mapper/splitter.h"
#include "model/energy_table.h"
#include "model/hw_config.h"
#include "model/text_file.h"
#include "test_support.h"

using namespace s2;
namespace fs = std::filesystem;

namespace {

// Each reader as the CLI calls it; returns the first line of the error it throws ("" if it throws none).
const std::map<std::string, std::function<void(const std::string&)>>& readers() {
  static const std::map<std::string, std::function<void(const std::string&)>> r = {
      {"task_vectors", [](const std::string& p) { read_task_vectors(p, HwConfig{}); }},
      {"layer_list", [](const std::string& p) { mapper::parse_network(mapper::read_layer_list(p)); }},
      {"config", [](const std::string& p) { load_hw_config(p); }},
      // an energy table (model/energy_table.h; the --energy option's file)
      {"energy_table", [](const std::string& p) { load_energy_table(p); }},
      {"split_file", [](const std::string& p) { mapper::read_split_file(p); }},
      {"journal", [](const std::string& p) { read_journal(p); }},
      // the task records regress --resume takes from a journal, as it reads them
      {"task_records",
       [](const std::string& p) {
         const auto records = read_journal(p);
         for (std::size_t i = 1; i < records.size(); ++i) {
           try {
             task_comparison_from_json(records[i], Task{});
           } catch (const std::exception& e) {
             throw std::runtime_error(p + ":" + std::to_string(i + 1) + ": " + e.what());
           }
         }
       }},
      // run-net --input
      {"npy", [](const std::string& p) { read_npy(p); }},
      // an ONNX model with its data in external files (--net, s2cosim check): each case a directory of
      // model.onnx and the files it names
      {"onnx", [](const std::string& p) { mapper::import_onnx(p + "/model.onnx"); }},
      // an SNN layer (s2cosim snn --weights, --spikes): each case a directory of weights.npy and spikes.npy, as
      // --save-layer writes them
      {"snn", [](const std::string& p) { read_snn_layer(p + "/weights.npy", p + "/spikes.npy"); }},
      // a shard's --json report as s2cosim merge reads it
      {"shard_report", [](const std::string& p) { check_shard_report(p); }},
      // design-report's inputs: a run-net --whole --energy report, and tools/synth.sh --json's areas
      {"design_report",
       [](const std::string& p) { read_design_report_file(read_text_file(p, 1ull << 30, "run-net JSON report"), p, "16x4"); }},
      {"synth_areas", [](const std::string& p) { parse_synth_areas(read_text_file(p, 1ull << 24, "tools/synth.sh JSON"), p); }},
      // the block runs run-net --resume takes from a journal
      {"block_records",
       [](const std::string& p) {
         const auto records = read_journal(p);
         for (std::size_t i = 1; i < records.size(); ++i) {
           try {
             check_block_record(nlohmann::json::parse(records[i].dump()));
           } catch (const std::exception& e) {
             throw std::runtime_error(p + ":" + std::to_string(i + 1) + ": " + e.what());
           }
         }
       }},
  };
  return r;
}

std::string first_error_line(const std::string& reader, const std::string& path) {
  try {
    readers().at(reader)(path);
  } catch (const std::exception& e) {
    std::string m = e.what();
    m = m.substr(0, m.find('\n'));
    for (std::size_t at; (at = m.find(path)) != std::string::npos;) m.replace(at, path.size(), "{file}");
    return m;
  }
  return "";
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

TEST(BadInputs, EveryFileOfTheCorpusIsRefusedWithItsErrorLine) {
  const fs::path root = test::source_path("tests/bad_inputs");
  std::size_t cases = 0;
  for (const auto& [reader, read] : readers()) {
    const fs::path dir = root / reader;
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    std::size_t here = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string path = entry.path().string();
      if (entry.path().extension() == ".expected") continue;
      SCOPED_TRACE(path);
      ++here;
      const std::string got = first_error_line(reader, path);
      const fs::path expected = path + ".expected";
      if (!fs::exists(expected)) {
        ADD_FAILURE() << "no " << expected.string() << "; the reader said: " << got;
        continue;
      }
      EXPECT_EQ(got, trimmed(test::read_text(expected.string())));
    }
    EXPECT_GE(here, 3u) << reader;
    cases += here;
  }
  EXPECT_GE(cases, 50u);
}

TEST(BadInputs, InputsTooBigForTheRepositoryAreRefusedBeforeTheyAreRead) {
  const test::TempDir dir;
  // a million layers, each a valid line: refused by count
  const std::string net = dir.path("million.net");
  {
    std::ofstream f(net);
    f << "network deep\ninput 8 8 3\n";
    for (int i = 0; i < 1000000; ++i) f << "conv 1 1 3 3\n";
  }
  EXPECT_EQ(first_error_line("layer_list", net), "{file}:10003: expected at most 10000 layers");
  // a task file of 40 MB (sparse: its size alone refuses it)
  const std::string big = dir.path("big.csv");
  std::ofstream(big).close();
  fs::resize_file(big, 40u << 20);
  EXPECT_EQ(first_error_line("task_vectors", big),
            "{file}: expected a task-vector file of at most 33554432 bytes, got 41943040");
  // the same for a journal of more than a gigabyte
  const std::string journal = dir.path("big.jsonl");
  std::ofstream(journal).close();
  fs::resize_file(journal, (1ull << 30) + 1);
  EXPECT_EQ(first_error_line("journal", journal), "{file}: expected a journal of at most 1073741824 bytes, got 1073741825");
}
