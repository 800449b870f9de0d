// libFuzzer target: the journal reader, its checksum and fingerprint check (verify_journal), and the records
// --resume takes from it (regress's tasks, run-net's block runs). Any input must end in
// records or a std::runtime_error, std::invalid_argument or JSON exception naming what is wrong; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/session/journal.h"
#include "harness/commands/net_runner.h"
#include "harness/commands/regress_report.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    int cut = 0;
    const auto records = s2::parse_journal(text, "fuzz.jsonl", &cut);
    s2::Task t;
    t.id = "t";
    for (const auto& r : records) {
      try {
        if (r.contains("strategy")) {  // a run-net block run
          s2::check_block_record(nlohmann::json::parse(r.dump()));
        } else {
          const s2::TaskComparison c = s2::task_comparison_from_json(r, t);
          (void)s2::task_json(c);  // the report the resumed record goes into
        }
      } catch (const nlohmann::json::exception&) {
      } catch (const std::runtime_error&) {
      } catch (const std::invalid_argument&) {
      }
    }
  } catch (const std::runtime_error&) {
  }
  // the verified reading --resume does: the first record must name the run and hold its checksum; a line cut,
  // not JSON or failing its checksum is counted, never taken
  try {
    const s2::ResumedJournal j = s2::verify_journal(text, "fuzz.jsonl", nlohmann::ordered_json{{"journal", "regress"}});
    for (const s2::JournalRecord& r : j.records)
      if (r.record.contains("checksum") || r.record.contains("fingerprint")) __builtin_trap();  // stripped before use
  } catch (const std::runtime_error&) {
  }
  return 0;
}
