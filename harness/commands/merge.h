// `s2cosim merge`: combines the JSON reports of a sharded run (`regress`, `run-net`, `bench` or `snn` with --shard I/N) into
// the report the unsharded run writes, equal to it apart from wall times (and what is made of them), and
// writes its HTML, JUnit and CSV as the run would have.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace s2 {

struct MergeRequest {
  std::vector<std::string> inputs;  // the shards' --json reports, in any order
  std::string json_out, html_out, junit_out, csv_out;
  // take shards a signal stopped or that miss checks: the missing checks are reported as not run (status
  // error, JUnit <error>), never as passing (a bench's missing tasks are run)
  bool allow_partial = false;
};
// Exit code: 0 every merged check passed, 1 some did not, 2 bad input (a file unreadable or not a shard
// report, shards of different runs, a shard given twice or missing, a shard stopped or missing checks without
// --allow-partial; nothing is written then), 3 an output could not be written.
int merge(const MergeRequest& req, std::ostream& out, std::ostream& err);
// Reads one shard report as merge does; throws std::runtime_error naming the file and the field of a malformed
// one (the bad-input corpus and the fuzz target call it; `text` is the file's content).
void check_shard_report(const std::string& path);
void check_shard_report_text(const std::string& text, const std::string& path);

}  // namespace s2
