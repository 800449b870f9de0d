#include "harness/commands/net_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>

#include <sys/resource.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/backends/backend.h"
#include "harness/check/comparators.h"
#include "harness/session/journal.h"
#include "harness/outputs/output_files.h"
#include "harness/stimulus/block_data.h"
#include "harness/stimulus/npy_file.h"
#include "harness/session/progress.h"
#include "harness/commands/regress_report.h"
#include "harness/outputs/result.h"
#include "model/json_field.h"
#include "harness/commands/regress.h"
#include "mapper/distributor.h"
#include "mapper/network.h"
#include "mapper/onnx_import.h"
#include "mapper/parser.h"
#include "mapper/splitter.h"
#include "model/noc/mesh.h"
#include "model/pe/arm_ops.h"

namespace s2 {

namespace {

struct ThesisRow {
  const char* net;
  const char* target;
  const char* operation;
  std::uint64_t clocks[3];  // nofuse_noreuse, fuse_noreuse, fuse_reuse; 0 = not applicable
};
// Thesis Table 5.5 (QPE-DRAM) and 5.7 (SpiNNaker2), VGG-16: SpiNNaker2Py with the mapper, only the core
// operation simulated, element-wise operations free. Also in vectors/thesis_mapping_clocks.csv.
constexpr ThesisRow kThesisRows[] = {
    {"vgg16", "qpe", "CONV_1", {2294223, 835667, 1065837}},
    {"vgg16", "qpe", "CONV_5", {16207531, 11050716, 9697264}},
    {"vgg16", "qpe", "CONV_9", {12616201, 12417980, 10838832}},
    {"vgg16", "qpe", "CONV_11", {6369574, 6262524, 5419584}},
    {"vgg16", "qpe", "CONV_15", {3261186, 3254902, 2918496}},
    {"vgg16", "qpe", "FC_21", {546718, 532670, 0}},
    {"vgg16", "s2", "CONV_1", {494729, 114249, 119254}},
    {"vgg16", "s2", "CONV_5", {4139243, 3557807, 381753}},
    {"vgg16", "s2", "CONV_9", {2538019, 2437194, 413733}},
    {"vgg16", "s2", "CONV_11", {1409122, 1302970, 263877}},
    {"vgg16", "s2", "CONV_15", {1457186, 1446968, 189908}},
    {"vgg16", "s2", "FC_21", {150355, 132044, 0}},
};

// Thesis Table 5.10: whole networks on SpiNNaker2, fuse_reuse, ARM operations estimated with Table 5.9.
struct ThesisNetworkRow {
  const char* category;
  std::uint64_t vgg16, resnet50;
};
constexpr ThesisNetworkRow kThesisNetworkRows[] = {
    {"CONV", 4026732, 2901614}, {"FC", 3894744, 66513},    {"PADD", 340608, 355240}, {"MAT_ELE", 0, 351232},
    {"ACTI", 932352, 585312},   {"QUAN", 932352, 585312}, {"POOL", 694272, 28224},  {"sum", 10821060, 4873447},
};

// The Table 5.10 category of an operation (thesis naming: CONV_SC_14 is a convolution, FCE_19 the
// partial sums of a matrix multiplication).
std::string category_of(const std::string& operation) {
  for (const char* c : {"MAT_ELE", "CONV", "FCE", "FC", "PADD", "ACTI", "QUAN", "POOL"})
    if (operation.rfind(c, 0) == 0) return std::string(c) == "FCE" ? "FC" : c;
  return "CONV";
}

// One backend's run of a block's streams.
struct BackendRun {
  std::uint64_t core_cycles = 0, block_cycles = 0, block_cycles_arm_timed = 0;
  bool completed = true, data_match = false;
  std::string first_difference, stalled;
  double wall_s = 0;
};

struct StreamRow {
  std::string operation;  // the stream's operation (nofuse) or the block's core operation (fused)
  std::uint64_t cycles = 0, cycles_arm_timed = 0, arm_cycles = 0, dram_ops = 0, mla_tasks = 0;
  std::optional<std::uint64_t> rtl_cycles;
  bool completed = false;
};

struct BlockRun {
  std::string block;
  mapper::Strategy strategy;
  mapper::Reuse reuse = mapper::Reuse::None;
  std::vector<StreamRow> streams;
  std::uint64_t arm_cycles = 0;
  std::optional<BackendRun> model, rtl;
  std::optional<double> delta;  // equation 5.1, core operation, ARM free
  Status status = Status::Pass;  // hang, mismatch, deviation (both backends) or pass; error if it threw
  std::string error;             // what it threw
  std::string asked;             // --whole: the strategy this block run stands for, where another ran
  std::string waves;             // --waves: the directory of the failing stream's waveform (a file per QPE)
  std::string where;            // a deviation: the commands of the core stream where model and RTL part
  std::string rtl_refused;      // why the RTL could not run the block (it ran on the model only)
  std::optional<StreamResult> model_core;  // the model's run of the core stream (ARM free): where the time goes
  nlohmann::json phases;  // the model's core stream: a worker's clocks on weight loads and MLA tasks (phase_clocks)
  std::map<std::string, double> categories;  // model, ARM timed: the block's clocks per Table 5.10 category
  nlohmann::json record;  // taken from a journal (--resume): its record, reported as it stands
  bool ok() const {
    return (!model || (model->completed && model->data_match)) && (!rtl || (rtl->completed && rtl->data_match));
  }
};

// The comparators' status of a block run: hang (a backend did not finish), mismatch (a backend's output
// differs from the golden block), deviation (both ran and |delta| is above the bound), else pass.
Status block_status(const BlockRun& r, double deviation_bound) {
  Findings f;
  f.error = !r.error.empty();
  f.hang = (r.model && !r.model->completed) || (r.rtl && !r.rtl->completed);
  f.mismatch = (r.model && !r.model->data_match) || (r.rtl && !r.rtl->data_match);
  f.delta = r.delta;
  return classify(f, deviation_bound);
}

// What kept a block run from passing on its data, in one line: what it threw, a backend that did not finish
// (and what it waited for), a backend whose output differs from the golden block; "" if none of these.
std::string block_problem(const BlockRun& r) {
  if (!r.error.empty()) return r.error;
  if (r.model && !r.model->completed) return "MODEL HANG " + r.model->stalled;
  if (r.rtl && !r.rtl->completed) return "RTL HANG " + r.rtl->stalled;
  if (r.model && !r.model->data_match) return "MISMATCH (model) " + r.model->first_difference;
  if (r.rtl && !r.rtl->data_match) return "MISMATCH (RTL) " + r.rtl->first_difference;
  return "";
}

// The first byte of the block output the streams left in `mem` that differs from the golden output, or "".
std::string first_difference(const std::vector<std::uint8_t>& golden, const mapper::BlockStreams& bs, const SystemMemory& mem) {
  const std::vector<std::uint8_t> got = gather_block_output(bs, mem);
  for (std::size_t i = 0; i < golden.size(); ++i)
    if (got[i] != golden[i])
      return fmt::format("output byte {}: golden {}, got {}", i, static_cast<int>(static_cast<std::int8_t>(golden[i])),
                         static_cast<int>(static_cast<std::int8_t>(got[i])));
  return "";
}

// A worker's clocks, averaged over the PEs of the stream that load weights, on loads of the block's weights
// from DRAM and on MLA tasks (the OctopuScheduler paper's "weight fetch" and "MLA" times): each command's end
// minus the end of the one before it on the same PE. Only PEs whose commands are all synchronous count (an
// async command's end is when it was issued); null if none.
nlohmann::json phase_clocks(const TaskStream& st, const StreamResult& r, const mapper::BlockDramMap& map) {
  double fetch = 0, mla = 0;
  std::uint64_t pes = 0;
  for (std::size_t p = 0; p < st.pe.size() && p < r.command_end_cycle.size(); ++p) {
    const std::vector<StreamCommand>& cmds = st.pe[p];
    const std::vector<std::uint64_t>& ends = r.command_end_cycle[p];
    if (cmds.empty() || ends.size() != cmds.size() ||
        std::any_of(cmds.begin(), cmds.end(), [](const StreamCommand& c) { return c.async; }))
      continue;
    double f = 0, m = 0;
    bool loads_weights = false;
    for (std::size_t k = 0; k < cmds.size(); ++k) {
      const double took = double(ends[k]) - double(k ? ends[k - 1] : 0);
      const StreamCommand& c = cmds[k];
      if (c.kind == CommandKind::Mla) m += took;
      if (c.kind == CommandKind::DmaLoad && c.dma.remote.kind == MemoryRef::Kind::Dram && c.dma.dram_addr >= map.weights &&
          c.dma.dram_addr < map.weights + map.weight_bytes) {
        f += took;
        loads_weights = true;
      }
    }
    if (!loads_weights) continue;
    fetch += f;
    mla += m;
    ++pes;
  }
  if (!pes) return nullptr;
  return {{"weight_fetch_cycles", fetch / double(pes)}, {"mla_cycles", mla / double(pes)}, {"pes", pes}};
}

// Runs the block's streams on the model (ARM free and ARM timed) and, if given, on the RTL (ARM free, the
// figure the thesis's tables and the comparison use), each on its own copy of the block's DRAM image.
struct WaveRequest {
  std::string dir;  // empty: no waveforms
  std::uint64_t window = 2000;
  std::ostream* err = nullptr;
};

// The block's output as a backend left it (run-net --output): the RTL's where it ran to the end, else the model's.
struct BlockOutput {
  std::vector<std::uint8_t> bytes;
  std::string backend;  // "RTL" | "model" | "" (none finished)
};

BlockRun run_block(const mapper::OperationBlock& b, const mapper::BlockSplit& s, mapper::Strategy strategy,
                   const mapper::BlockResidency& where,
                   const HwConfig& cfg, StreamBackend* model, StreamBackend* rtl, std::uint64_t seed,
                   const BlockInputs& data, std::map<std::string, std::vector<std::uint8_t>>& golden_cache,
                   const WaveRequest& waves, BlockOutput* output, const CheckPolicy& policy) {
  BlockRun r;
  r.block = b.name();
  r.strategy = strategy;
  const mapper::BlockStreams bs = mapper::distribute(b, s, strategy, cfg, where);
  r.reuse = bs.reuse;
  const std::vector<std::uint8_t> image = block_dram_image(b, s, bs, cfg, seed, data);
  std::vector<std::uint8_t>& golden = golden_cache[b.name()];
  if (golden.empty()) golden = golden_block_output(b, s, bs, cfg, image);
  // what the RTL lacks is found before anything runs: the block then runs on the model only
  if (rtl)
    for (const TaskStream& st : bs.streams)
      if (r.rtl_refused.empty()) r.rtl_refused = rtl->refusal(st);
  if (!r.rtl_refused.empty()) rtl = nullptr;
  const bool core_only = bs.streams.size() == 1;
  auto is_core = [&](const StreamRow& row) { return row.operation == b.name() || core_only; };
  for (const TaskStream& st : bs.streams) {
    StreamRow row;
    row.operation = st.name.substr(0, st.name.find(' '));
    r.streams.push_back(row);
  }
  std::optional<StreamResult> model_core, rtl_core;  // the core stream's runs (ARM free), to locate a deviation
  std::size_t core_index = 0;
  for (std::size_t i = 0; i < r.streams.size(); ++i)
    if (is_core(r.streams[i])) core_index = i;
  if (model) {
    const auto wall0 = std::chrono::steady_clock::now();
    BackendRun m;
    SystemMemory dram = stage_block_memory(bs, cfg, image), timed = dram;
    for (std::size_t i = 0; i < bs.streams.size(); ++i) {
      StreamRow& row = r.streams[i];
      const StreamResult free_arm = model->run(bs.streams[i], dram, StreamRunOptions{false});
      if (!free_arm.completed) {  // the model's watchdog: a model bug, reported as what it waited for
        row.completed = m.completed = false;
        m.stalled = bs.streams[i].name + ": " + free_arm.stalled;
        break;
      }
      const StreamResult with_arm = model->run(bs.streams[i], timed, StreamRunOptions{true});
      row.cycles = free_arm.cycles;
      row.cycles_arm_timed = with_arm.cycles;
      row.arm_cycles = with_arm.arm_cycles;
      row.dram_ops = free_arm.dram_ops;
      row.mla_tasks = free_arm.mla_tasks;
      row.completed = free_arm.completed && with_arm.completed;
      m.completed = m.completed && row.completed;
      if (!with_arm.completed) {
        m.stalled = bs.streams[i].name + " (ARM operations timed): " + with_arm.stalled;
        break;
      }
      m.block_cycles += row.cycles;
      m.block_cycles_arm_timed += row.cycles_arm_timed;
      r.arm_cycles += row.arm_cycles;
      if (is_core(row)) m.core_cycles = row.cycles;
      if (i == core_index) model_core = free_arm;
    }
    r.model_core = model_core;
    if (model_core) r.phases = phase_clocks(bs.streams[core_index], *model_core, bs.map);
    // Table 5.10 categories: a stream of one primitive operation (nofuse) is its category; a fused stream's
    // ARM-free clocks are its core operation's, and what the ARM operations add to it is shared out among
    // their categories by their Table 5.9 clocks (an approximation where ARM work overlaps other PEs')
    for (std::size_t i = 0; i < bs.streams.size(); ++i) {
      const StreamRow& row = r.streams[i];
      if (bs.streams.size() > 1) {
        r.categories[category_of(row.operation)] += double(row.cycles_arm_timed);
        continue;
      }
      r.categories[category_of(b.name())] += double(row.cycles);
      std::map<std::string, double> arm;
      double total = 0;
      for (const auto& cmds : bs.streams[i].pe)
        for (const StreamCommand& c : cmds)
          if (c.kind == CommandKind::Arm) {
            const double n = double(arm_op_cycles(c.arm, cfg.arm));
            arm[category_of(c.operation)] += n;
            total += n;
          }
      const double extra = double(row.cycles_arm_timed) - double(row.cycles);
      if (total <= 0) r.categories[category_of(b.name())] += extra;
      for (const auto& [cat, n] : arm) r.categories[cat] += extra * n / total;
    }
    m.first_difference = first_difference(golden, bs, dram);
    if (m.first_difference.empty()) m.first_difference = first_difference(golden, bs, timed);
    if (output && m.completed) *output = {gather_block_output(bs, dram), "model"};
    m.data_match = m.first_difference.empty();
    m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    r.model = m;
  }
  // a hang is a stream that runs far past what the model needs (or 2^31 clocks without the model)
  const StreamBudget& budget = policy.stream_budget;
  auto rtl_watchdog = [&](std::size_t i) { return model ? budget.cycles(r.streams[i].cycles) : budget.rtl_only_cycles; };
  std::optional<std::size_t> rtl_hung;  // the stream the RTL did not finish
  if (rtl) {
    const auto wall0 = std::chrono::steady_clock::now();
    BackendRun t;
    SystemMemory dram = stage_block_memory(bs, cfg, image);
    for (std::size_t i = 0; i < bs.streams.size(); ++i) {
      StreamRow& row = r.streams[i];
      StreamRunOptions opt{false};
      opt.watchdog_cycles = rtl_watchdog(i);
      const StreamResult res = rtl->run(bs.streams[i], dram, opt);
      row.rtl_cycles = res.cycles;
      t.block_cycles += res.cycles;
      if (is_core(row)) t.core_cycles = res.cycles;
      if (i == core_index) rtl_core = res;
      if (!model) {
        row.dram_ops = res.dram_ops;
        row.mla_tasks = res.mla_tasks;
        row.completed = res.completed;
      }
      if (!res.completed) {
        t.completed = false;
        rtl_hung = i;
        t.stalled = bs.streams[i].name + ": " + res.stalled;
        break;  // what follows depends on this stream's results
      }
    }
    if (t.completed) t.first_difference = first_difference(golden, bs, dram);
    if (output && t.completed) *output = {gather_block_output(bs, dram), "RTL"};
    t.data_match = t.completed && t.first_difference.empty();
    t.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    r.rtl = t;
  }
  if (r.model && r.rtl) r.delta = cycle_delta(r.rtl->core_cycles, r.model->core_cycles);
  r.status = block_status(r, policy.deviation_bound);
  if (r.model && r.rtl) {
    if (r.status == Status::Deviation && model_core && rtl_core) {
      const TaskStream& core = bs.streams[core_index];
      r.where = describe_command_deviation(command_deviation(core, *model_core, *rtl_core));
      // on the chip, also the DRAMs, SRAMs and links the differing transfers use
      if (cfg.chip.qpes() > 1)
        if (const std::string places = describe_place_deviation(place_deviation(core, *model_core, *rtl_core, cfg)); !places.empty())
          r.where += "; by place, " + places;
    }
  }
  // --waves: the failing stream run again on the RTL, traced, after the block's streams before it: the last
  // clocks before the watchdog fired (a hang), else a window around the first command whose end differs
  // from the model's (with none, the core stream's end)
  if (!waves.dir.empty() && rtl && r.rtl && r.status != Status::Pass) {
    const std::size_t f = rtl_hung.value_or(core_index);
    WaveWindow w;
    w.path = (std::filesystem::path(waves.dir) / (r.block + "_" + mapper::to_string(strategy))).string();
    if (rtl_hung) {
      w.end_cycle = rtl_watchdog(f) + 1;
      w.begin_cycle = w.end_cycle > waves.window ? w.end_cycle - waves.window : 0;
    } else {
      std::optional<std::uint64_t> d;
      if (model_core && rtl_core)
        for (std::size_t p = 0; p < model_core->command_end_cycle.size() && p < rtl_core->command_end_cycle.size(); ++p)
          for (std::size_t k = 0; k < model_core->command_end_cycle[p].size() && k < rtl_core->command_end_cycle[p].size(); ++k) {
            const std::uint64_t m = model_core->command_end_cycle[p][k], t = rtl_core->command_end_cycle[p][k];
            if (m != t && (!d || std::min(m, t) < *d)) d = std::min(m, t);
          }
      const std::uint64_t at = d.value_or(rtl_core ? rtl_core->cycles : 0);
      w.begin_cycle = at > waves.window / 2 ? at - waves.window / 2 : 0;
      w.end_cycle = w.begin_cycle + waves.window;
    }
    try {
      SystemMemory dram = stage_block_memory(bs, cfg, image);
      for (std::size_t i = 0; i <= f; ++i) {
        StreamRunOptions opt{false};
        opt.watchdog_cycles = rtl_watchdog(i);
        if (i == f) opt.waves = &w;
        rtl->run(bs.streams[i], dram, opt);
      }
      r.waves = w.path;
    } catch (const std::exception& e) {
      if (waves.err) *waves.err << "s2cosim run-net: waveform of " << r.block << " " << mapper::to_string(strategy) << ": " << e.what() << "\n";
    }
  }
  return r;
}

std::string pct(double v) { return fmt::format("{:+.1f}%", 100.0 * v); }

bool target_is_chip(const RunNetRequest& req) { return req.target == "s2"; }

// Where the core stream's time went: the shares of the PEs' clocks (PEs with work, from the host's start
// to the stream's end) and the busiest link and DRAM.
nlohmann::json time_report(const StreamResult& r, const HwConfig& cfg) {
  nlohmann::json j;
  const double total = double(r.cycles) * double(std::max<std::uint64_t>(r.active_pes, 1));
  double accounted = 0;
  for (std::size_t k = 0; k < r.pe_time.size(); ++k) {
    j["shares"][to_string(static_cast<PeTime>(k))] = double(r.pe_time[k]) / total;
    accounted += double(r.pe_time[k]);
  }
  j["shares"]["other"] = 1.0 - accounted / total;
  j["pes"] = r.active_pes;
  if (r.busiest_link_from >= 0)
    j["busiest_link"] = {{"from", qpe_name(cfg.chip, r.busiest_link_from)},
                         {"to", qpe_name(cfg.chip, r.busiest_link_to)},
                         {"packets", r.busiest_link_packets},
                         {"packets_per_cycle", double(r.busiest_link_packets) / double(std::max<std::uint64_t>(r.cycles, 1))}};
  std::size_t d = 0;
  for (std::size_t i = 1; i < r.dram_busy_cycles.size(); ++i)
    if (r.dram_busy_cycles[i] > r.dram_busy_cycles[d]) d = i;
  if (!r.dram_busy_cycles.empty())
    j["busiest_dram"] = {{"dram", d},
                         {"busy_cycles", r.dram_busy_cycles[d]},
                         {"busy_share", double(r.dram_busy_cycles[d]) / double(std::max<std::uint64_t>(r.cycles, 1))}};
  return j;
}

// One backend's fields of a block run's record, each key prefixed with "model_" or "rtl_"; only the model
// times the block with ARM clocks too (block_cycles_arm_timed). backend_run_from_json reads them back.
void put_backend_run(nlohmann::json& o, const std::string& prefix, const BackendRun& b, bool arm_timed) {
  o[prefix + "cycles"] = b.core_cycles;
  o[prefix + "block_cycles"] = b.block_cycles;
  if (arm_timed) o[prefix + "block_cycles_arm_timed"] = b.block_cycles_arm_timed;
  o[prefix + "completed"] = b.completed;
  o[prefix + "data_match"] = b.data_match;
  if (!b.first_difference.empty()) o[prefix + "first_difference"] = b.first_difference;
  if (!b.stalled.empty()) o[prefix + "stalled"] = b.stalled;
  o[prefix + "wall_s"] = b.wall_s;
}

BackendRun backend_run_from_json(const nlohmann::json& o, const std::string& prefix, bool arm_timed) {
  BackendRun b;
  b.core_cycles = json_member<std::uint64_t>(o, (prefix + "cycles").c_str());
  b.block_cycles = json_member_or<std::uint64_t>(o, (prefix + "block_cycles").c_str(), 0);
  if (arm_timed)
    b.block_cycles_arm_timed = json_member_or<std::uint64_t>(o, (prefix + "block_cycles_arm_timed").c_str(), 0);
  b.completed = json_member_or<bool>(o, (prefix + "completed").c_str(), true);
  b.data_match = json_member_or<bool>(o, (prefix + "data_match").c_str(), false);
  b.first_difference = json_member_or<std::string>(o, (prefix + "first_difference").c_str(), "");
  b.stalled = json_member_or<std::string>(o, (prefix + "stalled").c_str(), "");
  b.wall_s = json_member_or<double>(o, (prefix + "wall_s").c_str(), 0.0);
  return b;
}

// A block run's record in run-net's JSON (contract 3, operations[]) and journal.
nlohmann::json operation_json(const BlockRun& r, const HwConfig& cfg, std::optional<std::uint64_t> thesis) {
  if (!r.record.is_null()) return r.record;
  nlohmann::json o;
  o["name"] = r.block;
  o["strategy"] = mapper::to_string(r.strategy);
  o["reuse"] = mapper::to_string(r.reuse);
  if (!r.error.empty()) {  // it threw: nothing ran to the end
    o["status"] = to_string(r.status);
    o["error"] = r.error;
    o["completed"] = false;
    o["data_match"] = false;
    o["streams"] = nlohmann::json::array();
    return o;
  }
  const BackendRun& main_run = r.model ? *r.model : *r.rtl;
  if (r.model) {
    put_backend_run(o, "model_", *r.model, true);
    o["arm_cycles"] = r.arm_cycles;
  }
  if (r.model_core) {
    o["model_time"] = time_report(*r.model_core, cfg);
    if (!r.phases.is_null()) o["model_time"]["phases"] = r.phases;
  }
  if (!r.categories.empty()) o["category_cycles"] = r.categories;
  if (r.rtl) put_backend_run(o, "rtl_", *r.rtl, false);
  if (r.delta) o["delta"] = *r.delta;
  o["status"] = to_string(r.status);
  if (!r.asked.empty()) o["asked_strategy"] = r.asked;
  if (!r.where.empty()) o["deviation_where"] = r.where;
  if (!r.rtl_refused.empty()) o["rtl_refused"] = r.rtl_refused;
  if (!r.waves.empty()) o["waves"] = r.waves;
  o["completed"] = (!r.model || r.model->completed) && (!r.rtl || r.rtl->completed);
  // RTL results against the golden block where the RTL ran (contract 3), else the model's
  o["data_match"] = main_run.data_match && (!r.rtl || r.rtl->data_match);
  const std::string diff = r.rtl && !r.rtl->first_difference.empty() ? r.rtl->first_difference : main_run.first_difference;
  if (!diff.empty()) o["first_difference"] = diff;
  if (thesis) {
    o["thesis_cycles"] = *thesis;
    o["thesis_deviation"] = (double(main_run.core_cycles) - double(*thesis)) / double(*thesis);
  }
  o["streams"] = nlohmann::json::array();
  for (const StreamRow& row : r.streams) {
    nlohmann::json sj = {{"operation", row.operation}, {"dram_ops", row.dram_ops}, {"mla_tasks", row.mla_tasks}};
    if (r.model) {
      sj["model_cycles"] = row.cycles;
      sj["model_cycles_arm_timed"] = row.cycles_arm_timed;
      sj["arm_cycles"] = row.arm_cycles;
    }
    if (row.rtl_cycles) sj["rtl_cycles"] = *row.rtl_cycles;
    o["streams"].push_back(sj);
  }
  return o;
}

std::string describe_time(const nlohmann::json& t) {
  try {
    const nlohmann::json& sh = t.at("shares");
    auto share = [&](const char* k) { return 100 * json_field<double>(sh.at(k)); };
    std::string s = fmt::format(
        "{} PEs' clocks: MLA {:.0f}%, DRAM {:.0f}%, NoC {:.0f}%, sync {:.0f}%, ARM {:.0f}%, other {:.0f}%",
        json_field<std::uint64_t>(t.at("pes")), share("mla"), share("dram"), share("noc"), share("sync"), share("arm"),
        share("other"));
    if (t.contains("busiest_dram")) {
      const nlohmann::json& d = t.at("busiest_dram");
      s += fmt::format("; busiest DRAM {} ({:.0f}% busy)", json_field<std::size_t>(d.at("dram")),
                       100 * json_field<double>(d.at("busy_share")));
    }
    if (t.contains("busiest_link")) {
      const nlohmann::json& l = t.at("busiest_link");
      s += fmt::format("; busiest link {} -> {} ({} packets, {:.2f} per clock)", json_field<std::string>(l.at("from")),
                       json_field<std::string>(l.at("to")), json_field<std::uint64_t>(l.at("packets")),
                       json_field<double>(l.at("packets_per_cycle")));
    }
    return s;
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("field 'model_time': ") + e.what());
  }
}

// A block run as its record holds it (for --resume): what the reports read, not the model's time line.
// Throws std::invalid_argument naming the field of a malformed record.
BlockRun block_run_from_json(const nlohmann::json& o) {
  if (!o.is_object()) throw std::invalid_argument("expected a JSON object");
  BlockRun r;
  r.record = o;
  r.block = json_member<std::string>(o, "name");
  r.strategy = mapper::parse_strategy(json_member<std::string>(o, "strategy"));
  const std::string reuse = json_member_or<std::string>(o, "reuse", "none");
  r.reuse = reuse == "ifmap" ? mapper::Reuse::Ifmap : reuse == "filter" ? mapper::Reuse::Filter : mapper::Reuse::None;
  r.arm_cycles = json_member_or<std::uint64_t>(o, "arm_cycles", 0);
  if (o.contains("model_cycles")) r.model = backend_run_from_json(o, "model_", true);
  if (o.contains("rtl_cycles")) r.rtl = backend_run_from_json(o, "rtl_", false);
  if (o.contains("delta")) r.delta = json_member<double>(o, "delta");
  r.asked = json_member_or<std::string>(o, "asked_strategy", "");
  r.error = json_member_or<std::string>(o, "error", "");
  if (o.contains("status")) {
    try {
      r.status = parse_status(json_member<std::string>(o, "status"));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("field 'status': ") + e.what());
    }
    if (r.status == Status::Deviation && (!r.model || !r.rtl))
      throw std::invalid_argument("field 'status': a deviation needs model_cycles and rtl_cycles");
  } else {
    r.status = block_status(r, CheckPolicy{}.deviation_bound);  // a journal written before every block run had a status (and a policy)
  }
  r.where = json_member_or<std::string>(o, "deviation_where", "");
  r.rtl_refused = json_member_or<std::string>(o, "rtl_refused", "");
  r.waves = json_member_or<std::string>(o, "waves", "");
  if (r.status == Status::Error && r.error.empty()) throw std::invalid_argument("field 'error': an error status needs its message");
  if (r.error.empty() && !r.model && !r.rtl) throw std::invalid_argument("field 'model_cycles': a block run needs model_cycles or rtl_cycles");
  if (o.contains("category_cycles")) {
    const nlohmann::json& cats = o.at("category_cycles");
    if (!cats.is_object()) throw std::invalid_argument("field 'category_cycles': expected an object");
    for (const auto& [cat, v] : cats.items()) r.categories[cat] = json_member<double>(cats, cat.c_str());
  }
  if (!o.contains("streams") || !o.at("streams").is_array()) throw std::invalid_argument("field 'streams': expected a list");
  for (const auto& sj : o.at("streams")) {
    if (!sj.is_object()) throw std::invalid_argument("field 'streams': expected a list of objects");
    StreamRow row;
    row.operation = json_member<std::string>(sj, "operation");
    row.dram_ops = json_member_or<std::uint64_t>(sj, "dram_ops", 0);
    row.mla_tasks = json_member_or<std::uint64_t>(sj, "mla_tasks", 0);
    row.cycles = json_member_or<std::uint64_t>(sj, "model_cycles", 0);
    row.cycles_arm_timed = json_member_or<std::uint64_t>(sj, "model_cycles_arm_timed", 0);
    row.arm_cycles = json_member_or<std::uint64_t>(sj, "arm_cycles", 0);
    if (sj.contains("rtl_cycles")) row.rtl_cycles = json_member<std::uint64_t>(sj, "rtl_cycles");
    row.completed = json_member_or<bool>(o, "completed", true);
    r.streams.push_back(row);
  }
  if (o.contains("model_time")) describe_time(o.at("model_time"));  // refuses a time report it cannot print
  return r;
}


}  // namespace

std::optional<std::uint64_t> thesis_network_clocks(const std::string& net, const std::string& category) {
  for (const ThesisNetworkRow& t : kThesisNetworkRows)
    if (category == t.category) {
      if (net == "vgg16") return t.vgg16;
      if (net == "resnet50") return t.resnet50;
    }
  return std::nullopt;
}

// The OctopuScheduler paper's Table II and Section V.B: its MLP (vectors/octopus_mlp.net) on the taped-out
// SpiNNaker2, batch 1, in microseconds, the only silicon measurement the project has.
struct SiliconLayer {
  const char* block;  // ours
  const char* paper;  // the paper's name
  double us;
  int workers;
};
constexpr SiliconLayer kOctopusMlpLayers[] = {{"FC_1", "FC1+ReLU", 323, 8}, {"FC_2", "FC2+ReLU", 217, 4}, {"FC_3", "FC3", 80, 1}};
constexpr double kOctopusFc1WeightFetchUs = 192, kOctopusFc1MlaUs = 29, kOctopusTotalUs = 688;
constexpr double kOctopusSetupUs = 12, kOctopusSoftmaxUs = 50, kOctopusCleanupUs = 9, kOctopusSchedulingUsPerLayer = 13;

const std::vector<std::string>& network_categories() {
  static const std::vector<std::string> c = [] {
    std::vector<std::string> v;
    for (const ThesisNetworkRow& t : kThesisNetworkRows) v.push_back(t.category);
    return v;
  }();
  return c;
}

std::optional<std::uint64_t> thesis_mapping_clocks(const std::string& net, const std::string& target,
                                                   const std::string& operation, const std::string& strategy) {
  const int k = static_cast<int>(mapper::parse_strategy(strategy));
  for (const ThesisRow& t : kThesisRows)
    if (net == t.net && target == t.target && operation == t.operation && t.clocks[k]) return t.clocks[k];
  return std::nullopt;
}

void check_block_record(const nlohmann::json& record) { block_run_from_json(record); }

std::map<std::string, std::map<std::string, double>> category_sums(const nlohmann::json& operations) {
  std::map<std::string, std::map<std::string, double>> sums;
  for (const nlohmann::json& o : operations) {
    if (!o.contains("category_cycles")) continue;
    const std::string st = o.contains("asked_strategy") ? o.at("asked_strategy").get<std::string>() : o.at("strategy").get<std::string>();
    for (const auto& [cat, v] : o.at("category_cycles").items()) {
      sums[st][cat] += v.get<double>();
      sums[st]["sum"] += v.get<double>();
    }
  }
  return sums;
}

nlohmann::json run_net_report_json(nlohmann::json head, const nlohmann::json& operations, const ResultSet& results) {
  if (head.value("whole", false)) {
    for (const auto& [st, cats] : category_sums(operations))
      for (const std::string& cat : network_categories()) {
        const auto it = cats.find(cat);
        head["category_cycles"][st][cat] = it == cats.end() ? 0 : static_cast<std::uint64_t>(std::llround(it->second));
      }
  }
  head["total"] = results.total;
  head["operations"] = operations;
  head["results"] = results_json(results);
  return head;
}

std::string run_net_replay(const RunNetRequest& req, const std::string& block, const std::string& strategy,
                           const std::string& hash) {
  std::string s = shell_quote(program_name()) + " run-net --net " + shell_quote(req.net) + " --target " + req.target;
  if (!req.preset.empty()) s += " --preset " + shell_quote(req.preset);
  s += " --layers " + shell_quote(block) + " --strategy " + strategy + " --backend " + req.backend;
  s += " --seed " + std::to_string(req.seed);
  if (!req.input_npy.empty()) s += " --input " + shell_quote(req.input_npy);
  if (!req.calibrate.empty()) s += " --calibrate " + shell_quote(req.calibrate);
  if (!req.split_file.empty()) s += " --split " + shell_quote(req.split_file);
  if (!req.config_file.empty()) s += " --config " + shell_quote(req.config_file);
  if (!req.mac_shape.empty()) s += " --mac " + shell_quote(req.mac_shape);
  return s + " --expect-hash " + hash;
}

namespace {

// The command line that reruns the whole network on its input and checks its output again.
std::string run_net_output_replay(const RunNetRequest& req, const std::string& strategy, const std::string& hash) {
  std::string s = shell_quote(program_name()) + " run-net --net " + shell_quote(req.net) + " --target " + req.target;
  if (!req.preset.empty()) s += " --preset " + shell_quote(req.preset);
  if (!strategy.empty()) s += " --strategy " + strategy;
  if (req.whole) s += " --whole";
  s += " --backend " + req.backend + " --seed " + std::to_string(req.seed) + " --input " + shell_quote(req.input_npy);
  if (!req.calibrate.empty()) s += " --calibrate " + shell_quote(req.calibrate);
  if (!req.reference_npy.empty()) s += " --reference " + shell_quote(req.reference_npy);
  if (!req.split_file.empty()) s += " --split " + shell_quote(req.split_file);
  if (!req.config_file.empty()) s += " --config " + shell_quote(req.config_file);
  if (!req.mac_shape.empty()) s += " --mac " + shell_quote(req.mac_shape);
  return s + " --expect-hash " + hash;
}

// The calibration set of --calibrate: every float input of a .npy file (one input, or a stack of them along
// the first axis) or of each .npy file of a directory (in name order), `values` each.
std::vector<std::vector<float>> calibration_set(const std::string& where, std::size_t values, std::vector<std::string>& notes) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  if (fs::is_directory(where, ec)) {
    for (const auto& e : fs::directory_iterator(where, ec))
      if (e.path().extension() == ".npy") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw std::invalid_argument("--calibrate " + where + ": the directory holds no .npy file");
  } else {
    files.push_back(where);
  }
  std::vector<std::vector<float>> set;
  for (const std::string& f : files) {
    const NpyTensor t = read_npy(f);
    if (!t.is_float) throw std::invalid_argument("--calibrate " + f + ": int8 values; a calibration set is the float inputs");
    if (!t.converted_from.empty()) notes.push_back("--calibrate " + f + ": " + t.converted_from + " read as float32");
    if (values == 0 || t.float32.size() % values != 0)
      throw std::invalid_argument(fmt::format("--calibrate {}: shape {} is not a whole number of the model's inputs of {} values",
                                              f, t.shape_text(), values));
    for (std::size_t k = 0; k < t.float32.size(); k += values)
      set.emplace_back(t.float32.begin() + static_cast<std::ptrdiff_t>(k), t.float32.begin() + static_cast<std::ptrdiff_t>(k + values));
  }
  return set;
}

// The network run-net runs: an ONNX model quantized on the float input given (its calibration,
// docs/real_networks.md), or on --calibrate's set; or a built-in network or layer list.
mapper::Network load_run_net_network(const RunNetRequest& req, const NpyTensor* input, std::vector<std::string>& notes) {
  const std::string& net = req.net;
  if (!req.calibrate.empty() && !net.ends_with(".onnx"))
    throw std::invalid_argument("--calibrate: " + net + " is not an ONNX model; only a float ONNX model is calibrated");
  if (!net.ends_with(".onnx") || (!input && req.calibrate.empty())) return mapper::load_network(net);
  std::vector<std::vector<float>> calibration;
  if (!req.calibrate.empty()) {
    const mapper::Network shape = mapper::import_onnx(net);  // its input's size
    calibration = calibration_set(req.calibrate, static_cast<std::size_t>(shape.input.elements()), notes);
    notes.push_back(fmt::format("calibration: {} input{} of {} (maxima over all of them)", calibration.size(),
                                calibration.size() == 1 ? "" : "s", req.calibrate));
  } else if (input->is_float) {
    calibration.push_back(input->float32);
    notes.push_back("calibration: on the --input it runs (give a calibration set with --calibrate)");
  }
  mapper::Network n = mapper::import_onnx(net, calibration);
  // a float model is quantized on its input; an int8 input gives it nothing to calibrate on
  if (!n.input_exponent)
    throw std::invalid_argument(net + " is a float model: it is quantized on a float input (docs/real_networks.md), "
                                "so --input must be float32 (or --calibrate given), not int8");
  return n;
}

// run-net --input: the network's input as int8 [D][H][W]. A float input is quantized with the network's
// input exponent (round half to even, saturated, as the import's calibration assumed).
std::vector<std::int8_t> network_input(const mapper::Network& net, const NpyTensor& t, const std::string& path) {
  const mapper::Shape3& in = net.input;
  // the model's shape, or it with a batch of 1 in front: (C, H, W) or (1, C, H, W); a vector (N,) or (1, N)
  // (a one-channel (1, H, W) map is the first form, not a batch)
  const std::vector<std::size_t> chw{std::size_t(in.D), std::size_t(in.H), std::size_t(in.W)};
  std::vector<std::vector<std::size_t>> forms{chw};
  if (in.H == 1 && in.D == 1) forms.push_back({std::size_t(in.W)});
  for (std::size_t k = 0, n = forms.size(); k < n; ++k) {
    std::vector<std::size_t> batched{1};
    batched.insert(batched.end(), forms[k].begin(), forms[k].end());
    forms.push_back(batched);
  }
  if (std::find(forms.begin(), forms.end(), t.shape) == forms.end())
    throw std::invalid_argument(fmt::format("--input {}: shape {}, expected ({}, {}, {}) or (1, {}, {}, {}) (a batch of 1) for {}'s "
                                            "input {}", path, t.shape_text(), in.D, in.H, in.W, in.D, in.H, in.W, net.name,
                                            mapper::to_string(in)));
  if (!t.is_float) return t.int8;
  if (!net.input_exponent)
    throw std::invalid_argument("--input " + path + ": a float input needs the network's input scale, which " + net.name +
                                " does not have (a layer list: give the input as int8)");
  std::vector<std::int8_t> q(t.float32.size());
  const double scale = std::ldexp(1.0, *net.input_exponent);
  for (std::size_t i = 0; i < q.size(); ++i) {
    if (!std::isfinite(t.float32[i])) throw std::invalid_argument(fmt::format("--input {}: value {} is not finite", path, i));
    q[i] = static_cast<std::int8_t>(std::clamp(std::nearbyint(double(t.float32[i]) * scale), -128.0, 127.0));
  }
  return q;
}

// --reference with a float array (a framework's own output): how close the int8 output, read at its
// exponent (and, for a model whose final Softmax or Sigmoid the host applies, after it), comes to it.
constexpr double kMinCorrelation = 0.98;
struct FloatComparison {
  double correlation = 0, max_error_steps = 0;
  bool top1 = false, top5 = false;  // the reference's largest value is the output's largest / among its 5 largest
};
FloatComparison compare_float(const std::vector<std::int8_t>& y, int exponent, const std::vector<float>& ref,
                              const std::string& host_activation) {
  std::vector<double> a(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) a[i] = std::ldexp(double(y[i]), -exponent);
  if (host_activation == "Softmax" && !a.empty()) {
    const double m = *std::max_element(a.begin(), a.end());
    double sum = 0;
    for (double& v : a) sum += (v = std::exp(v - m));
    for (double& v : a) v /= sum;
  } else if (host_activation == "Sigmoid") {
    for (double& v : a) v = 1 / (1 + std::exp(-v));
  }
  FloatComparison r;
  const double n = double(a.size());
  double ma = 0, mr = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ma += a[i] / n;
    mr += ref[i] / n;
  }
  double sab = 0, saa = 0, srr = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (ref[i] - mr);
    saa += (a[i] - ma) * (a[i] - ma);
    srr += (ref[i] - mr) * (ref[i] - mr);
    // one output step is 2^-exponent (after a host activation: in its output's units, still so scaled)
    r.max_error_steps = std::max(r.max_error_steps, std::fabs(a[i] - ref[i]) * std::ldexp(1.0, exponent));
  }
  r.correlation = saa > 0 && srr > 0 ? sab / std::sqrt(saa * srr) : (saa == srr ? 1.0 : 0.0);
  if (!a.empty()) {
    const std::size_t best = static_cast<std::size_t>(std::max_element(ref.begin(), ref.end()) - ref.begin());
    std::vector<std::size_t> order(a.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    // ties broken by index, as argmax takes the first
    std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return a[i] > a[j]; });
    r.top1 = order[0] == best;
    r.top5 = std::find(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(5, order.size())), best) !=
             order.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(5, order.size()));
  }
  return r;
}

// run-net --input: every block's data, computed along the network with the golden kernels from the input
// (each block's input is what the block before it must give). Every block run then starts from the right
// data, so that a block that goes wrong shows in its own run, not in every block after it.
struct NetworkData {
  std::vector<BlockInputs> blocks;  // indexed as the network's blocks
  std::vector<std::int8_t> output;          // the last block's golden output
  // every block's golden output as its DRAM output region holds it: run_block's cache, so that no block's
  // golden kernels run twice
  std::map<std::string, std::vector<std::uint8_t>> golden;
};
NetworkData golden_chain(const mapper::ParsedNetwork& n, const mapper::NetworkSplit& split, const HwConfig& cfg,
                         std::vector<std::int8_t> input, std::uint64_t seed) {
  NetworkData d;
  std::map<std::string, std::vector<std::int8_t>> maps{{"input", std::move(input)}};
  for (std::size_t i = 0; i < n.blocks.size(); ++i) {
    const mapper::OperationBlock& b = n.blocks[i];
    BlockInputs bi;
    bi.input = maps.at(b.inputs.at(0));
    if (b.inputs.size() > 1) bi.shortcut = maps.at(b.inputs[1]);
    std::optional<mapper::BlockStreams> bs;
    std::string why;
    for (mapper::Strategy st : {mapper::Strategy::FuseNoreuse, mapper::Strategy::NofuseNoreuse, mapper::Strategy::FuseReuse})
      if (!bs && mapper::distributable(b, split.blocks[i], st, cfg, why.empty() ? &why : nullptr))
        bs = mapper::distribute(b, split.blocks[i], st, cfg);
    if (!bs)
      throw std::invalid_argument(b.name() + ": no strategy distributes it (" + why + "), so the blocks after it have no input");
    const std::vector<std::uint8_t> image = block_dram_image(b, split.blocks[i], *bs, cfg, seed, bi);
    const std::vector<std::uint8_t> out = golden_block_output(b, split.blocks[i], *bs, cfg, image);
    maps[b.name()] = std::vector<std::int8_t>(out.begin(), out.end());
    d.golden[b.name()] = out;
    d.blocks.push_back(std::move(bi));
  }
  if (!n.blocks.empty()) d.output = maps[n.blocks.back().name()];
  return d;
}

// The shape run-net --output gives the network's output: [1, N] after a fully connected layer, else [1, C, H, W].
std::vector<std::size_t> output_shape(const mapper::OperationBlock& last) {
  const mapper::Shape3 o = last.out();
  if (last.kind == mapper::BlockKind::MatMul) return {1, std::size_t(o.elements())};
  return {1, std::size_t(o.D), std::size_t(o.H), std::size_t(o.W)};
}

// A block as the run sees it, for its journal records' fingerprint: every operation with its shapes, window,
// padding, shift and weights, the blocks it reads, its workers, and its split.
std::string block_definition(const mapper::OperationBlock& b, const mapper::BlockSplit& split) {
  std::string d = fmt::format("{} {} workers {} inputs", mapper::to_string(b.kind), b.name(), b.workers);
  for (const std::string& in : b.inputs) d += " " + in;
  for (const mapper::Operation& op : b.ops) {
    d += fmt::format("; {} {} {}->{} {}x{} s{} p{} pool{} shift {}", op.name, mapper::to_string(op.kind), mapper::to_string(op.in),
                     mapper::to_string(op.out), op.Wf, op.Hf, op.stride, op.pad, static_cast<int>(op.pool), op.shift);
    if (op.weights)
      d += " weights " + text_hash(std::string_view(reinterpret_cast<const char*>(op.weights->data()), op.weights->size()));
  }
  d += fmt::format("; split {} {} {} {}", split.w.to_string(), split.h.to_string(), split.c.to_string(), split.d.to_string());
  return d;
}

}  // namespace

int run_net(const RunNetRequest& req, std::ostream& out, std::ostream& err) {
  const auto wall0 = std::chrono::steady_clock::now();
  std::vector<mapper::Strategy> strategies;
  mapper::ParsedNetwork n;
  mapper::NetworkSplit split;
  std::vector<mapper::SplitChoice> chosen;  // --split
  HwConfig cfg;
  Shard shard;
  std::optional<NpyTensor> input_tensor;  // --input
  std::optional<NpyTensor> reference;     // --reference
  const bool wants_output = !req.output_npy.empty() || !req.reference_npy.empty();
  mapper::Network net;
  std::vector<std::string> input_notes;   // conversions, calibration, a final activation left to the host
  NetworkData data;                       // --input: every block's data along the network
  try {
    cfg = build_hw_config(req.config_file, req.mac_shape, {});
    shard = parse_shard(req.shard);
    const mapper::Target target = mapper::parse_target(req.target);
    if (req.backend != "model" && req.backend != "rtl" && req.backend != "both")
      throw std::invalid_argument("--backend " + req.backend + ": expected model, rtl or both");
    if (target == mapper::Target::Qpe) {
      if (!req.preset.empty()) throw std::invalid_argument("--preset " + req.preset + ": a chip preset needs --target s2");
      cfg.chip = qpe_dram_chip();
    } else {
      if (!req.preset.empty() || cfg.chip.qpes() == 1) apply_preset(cfg, req.preset.empty() ? "prototype" : req.preset);
      validate(cfg);
    }
    for (const std::string& s : req.strategies) {
      const mapper::Strategy st = mapper::parse_strategy(s);
      if (std::find(strategies.begin(), strategies.end(), st) != strategies.end())
        throw std::invalid_argument("--strategy " + s + ": given twice (each strategy runs once)");
      strategies.push_back(st);
    }
    if (strategies.empty() && req.whole) strategies.push_back(mapper::Strategy::FuseReuse);  // Table 5.10's
    if (strategies.empty()) strategies.assign(std::begin(mapper::kAllStrategies), std::end(mapper::kAllStrategies));
    // every output a file of its own, none an input, all writable, before anything is read or run
    const std::string journal_file = journal_path(req.json_out, req.journal);
    const bool net_file = req.net != "vgg16" && req.net != "resnet50";
    if (!check_paths({{"--json", req.json_out}, {"--html", req.html_out}, {"--junit", req.junit_out}, {"--csv", req.csv_out},
                      {"--output", req.output_npy}, {"--journal", journal_file}},
                     {{"--net", net_file ? req.net : ""}, {"--config", req.config_file}, {"--input", req.input_npy},
                      {"--reference", req.reference_npy}, {"--split", req.split_file}, {"--resume", req.resume}},
                     err, journal_file, req.resume))
      return kExitBadInput;
    if (!req.input_npy.empty()) input_tensor = read_npy(req.input_npy);
    if (input_tensor && !input_tensor->converted_from.empty())
      input_notes.push_back("--input " + req.input_npy + ": " + input_tensor->converted_from + " read as float32" +
                            (input_tensor->converted_from == "uint8" ? " (values 0..255 as they are: scale them as the model "
                                                                       "was trained, e.g. to [0, 1], if it expects that)"
                                                                     : ""));
    net = load_run_net_network(req, input_tensor ? &*input_tensor : nullptr, input_notes);
    if (!net.host_activation.empty())
      input_notes.push_back(fmt::format("the model's final {} is left to the host: the network's output is its input (int8 * "
                                        "2^-exponent); apply {} to that", net.host_activation, net.host_activation));
    n = mapper::parse_network(net);
    if (wants_output) {
      // the output is the last block's, as the whole network computes it
      const std::string opt = req.output_npy.empty() ? "--reference" : "--output";
      if (req.input_npy.empty()) throw std::invalid_argument(opt + " needs --input (the network's output for a real input)");
      if (!shard.whole()) throw std::invalid_argument(opt + ": a shard may not run the last block; run it unsharded");
      if (!req.layers.empty() && std::find(req.layers.begin(), req.layers.end(), n.blocks.back().name()) == req.layers.end())
        throw std::invalid_argument(opt + ": --layers leaves out the network's last block, " + n.blocks.back().name());
      if (!check_writable(req.output_npy, err)) return 2;
    }
    if (!req.reference_npy.empty()) {
      reference = read_npy(req.reference_npy);
      const std::uint64_t values = static_cast<std::uint64_t>(n.blocks.back().out().elements());
      if (reference->size() != values)
        throw std::invalid_argument(fmt::format("--reference {}: {} {}, expected {} values (the output of {})",
                                                req.reference_npy, reference->is_float ? "float" : "int8",
                                                reference->shape_text(), values, n.blocks.back().name()));
      if (reference->is_float && !net.output_exponent)
        throw std::invalid_argument("--reference " + req.reference_npy + ": a float reference needs the network's output "
                                    "scale, which " + net.name + " does not have (a layer list: give an int8 reference)");
    }
    // thesis 5.4 compares the MAC arrays on SpiNNaker2 with "the same split scheme": the 16x4 one
    HwConfig split_cfg = cfg;
    if (target == mapper::Target::SpiNNaker2) set_mac_shape(split_cfg, "16x4");
    if (!req.split_file.empty()) chosen = mapper::read_split_file(req.split_file);
    split = mapper::split_network(n, mapper::split_rules(target, split_cfg), chosen);
    for (const std::string& l : req.layers)
      if (!n.find(l)) throw std::invalid_argument("--layers: " + n.name + " has no operation block " + l);
    check_expected_hash(cfg, req.expect_hash);
    if (input_tensor) data = golden_chain(n, split, cfg, network_input(net, *input_tensor, req.input_npy), req.seed);
  } catch (const std::exception& e) {
    err << "s2cosim run-net: " << e.what() << "\n";
    return 2;
  }

  std::unique_ptr<StreamBackend> model, rtl;
  try {
    if (req.backend != "rtl") model = make_model_stream_backend(cfg);
    if (req.backend != "model") rtl = req.rtl_backend ? req.rtl_backend(cfg) : make_rtl_stream_backend(cfg);
  } catch (const std::exception& e) {
    err << "s2cosim run-net: " << e.what() << "\n";
    return 2;
  }
  std::map<std::string, std::vector<std::uint8_t>> golden = std::move(data.golden);  // per block, computed once
  std::vector<BlockRun> runs;
  // the thesis's tables are for the 16x4 MAC array (Tables 5.11/5.12, the other arrays, are withheld) and,
  // on the chip, for the prototype
  const bool thesis_mac = cfg.mac_shape() == "16x4" && (!target_is_chip(req) || cfg.chip.name == "prototype");
  auto thesis_clocks = [&](const std::string& op, const std::string& strategy) -> std::optional<std::uint64_t> {
    if (!thesis_mac) return std::nullopt;
    return thesis_mapping_clocks(n.name, req.target, op, strategy);
  };
  std::vector<std::string> skipped, substituted;
  std::map<std::string, std::map<std::string, double>> category_cycles;  // --whole: per strategy asked
  const std::string system = target_is_chip(req)
                                 ? fmt::format("the SpiNNaker2 chip '{}' ({} QPEs with PEs in a {}x{} mesh, {} DRAMs)",
                                               cfg.chip.name, cfg.chip.qpes() - static_cast<int>(cfg.chip.routers_without_pes.size()),
                                               cfg.chip.mesh_cols, cfg.chip.mesh_rows, cfg.chip.drams.size())
                                 : std::string("QPE-DRAM");
  out << fmt::format("{} on {}, backend {}, config hash {}\n", n.name, system, req.backend, config_hash(cfg));
  out << "clocks: PE clocks at " << cfg.pe_clock_mhz << " MHz from the host's start to the host hearing the last PE; "
         "'ARM free' takes the element-wise operations as instant (as the thesis's Tables 5.5-5.8), 'ARM timed' "
         "charges Table 5.9's clocks (model only); the RTL runs ARM free\n";
  for (const std::string& a : cfg.chip.assumptions) out << "assumption (preset " << cfg.chip.name << "): " << a << "\n";
  // a layer's own worker count (workers=N) says how many PEs, not which
  const std::string workers_assumption =
      "a layer with a worker count (workers=N) runs on the PEs of the QPEs nearest a DRAM, in QPE order, each loading "
      "from its nearest DRAM (which PEs the OctopuScheduler paper used is not published)";
  const bool has_workers = std::any_of(n.blocks.begin(), n.blocks.end(), [](const mapper::OperationBlock& b) { return b.workers > 0; });
  if (has_workers) out << "assumption: " << workers_assumption << "\n";
  for (const std::string& note : net.notes) out << "import: " << note << "\n";
  for (const std::string& note : input_notes) out << "note: " << note << "\n";
  const bool biased = std::any_of(n.blocks.begin(), n.blocks.end(), [](const mapper::OperationBlock& b) { return b.core_op().bias != nullptr; });
  if (biased)
    out << "assumption: a layer's bias is added by the ARM in its first pass over the int32 sums, "
        << cfg.arm.bias_add_per_pixel << " clocks per pixel more (arm_clocks.bias_add_per_pixel; Table 5.9 has no bias)\n";
  if (!chosen.empty()) {
    out << "split: " << chosen.size() << " blocks as " << req.split_file << " chooses (";
    for (std::size_t i = 0; i < chosen.size(); ++i) out << (i ? ", " : "") << chosen[i].operation;
    out << "), the others as the splitter finds\n";
  }
  if (target_is_chip(req) && cfg.mac_shape() != "16x4")
    out << "split: the 16x4 MAC array's scheme on the " << cfg.mac_shape() << " array too (thesis 5.4: \"the same split "
           "scheme\")\n";
  if (target_is_chip(req))
    out << "assumption: each DRAM holds a copy of the block's image and serves the PEs nearest it (model/README.md, "
           "The chip)\n";
  out << "\n";
  const std::string rtl_head = rtl ? fmt::format(" {:>12} {:>8}", "RTL", model ? "delta" : "") : "";
  out << fmt::format("{:<10} {:<15} {:<6} {:<9} {:>12} {:>12} {:>10} {:>10} {:>8}{}  {}\n", "block", "strategy", "reuse",
                     "operation", model ? "ARM free" : "", model ? "ARM timed" : "", model ? "ARM clk" : "", "DRAM ops",
                     "MLA", rtl_head, "data");
  bool all_ok = true;
  // every finished block run goes to the journal as it finishes, after a first record naming the run;
  // SIGINT / SIGTERM stop after the block in hand. --resume takes the runs a journal of the same run holds.
  nlohmann::ordered_json header = {{"journal", "run-net"},       {"network", n.name},       {"target", req.target},
                           {"backend", req.backend},     {"seed", req.seed},        {"config_hash", config_hash(cfg)},
                           {"split_file", req.split_file}, {"whole", req.whole}};
  if (!shard.whole()) header["shard"] = req.shard;  // a shard's journal resumes that shard only
  if (!req.input_npy.empty()) {  // a run on real data resumes only a run on the same data
    const std::vector<std::int8_t>& x = data.blocks.front().input;
    header["input"] = req.input_npy;
    if (!req.calibrate.empty()) header["calibrate"] = req.calibrate;
    header["input_hash"] = text_hash(std::string_view(reinterpret_cast<const char*>(x.data()), x.size()));
  }
  // (block, strategy) -> the last whole record and its fingerprint
  std::map<std::pair<std::string, std::string>, std::pair<nlohmann::json, std::string>> resumed;
  // what made a block run: the block's operations, inputs and split, the strategy it ran, the seed and input
  // data (the header's), the configuration and the version
  const std::string hash = config_hash(cfg);
  auto fingerprint = [&](std::size_t block, mapper::Strategy st) {
    return journal_fingerprint(fmt::format("run-net {} {} {} {}", block_definition(n.blocks[block], split.blocks[block]),
                                           mapper::to_string(st), header.dump(), policy_hash(req.policy)),
                               hash);
  };
  ResumeTally tally;
  Journal journal;
  try {
    {
      const ResumedJournal records = open_run_journal(journal, journal_path(req.json_out, req.journal), req.resume, header, tally);
      for (const JournalRecord& jr : records.records) {
        const nlohmann::json record = nlohmann::json::parse(jr.record.dump());
        try {
          const BlockRun br = block_run_from_json(record);  // refuses a malformed record before anything runs
          resumed[{br.block, mapper::to_string(br.strategy)}] = {record, jr.fingerprint};
        } catch (const std::exception& e) {
          throw std::runtime_error(fmt::format("{}:{}: {}", req.resume, jr.line, e.what()));
        }
      }
    }
    journal.start(header);
  } catch (const std::exception& e) {
    err << "s2cosim run-net: " << e.what() << "\n";
    return 2;
  }
  const StopOnSignal stop_on_signal;
  int stopped = 0;
  // fuse_reuse on the chip: which blocks read their input from, and leave their output in, the storage QPEs
  const std::vector<mapper::BlockResidency> residency = mapper::storage_residency(n, split, cfg);
  // the block runs in order, each with its index k in the whole run (--shard deals them round robin)
  auto wanted = [&](const mapper::OperationBlock& b) {
    return req.layers.empty() || std::find(req.layers.begin(), req.layers.end(), b.name()) != req.layers.end();
  };
  std::size_t total_runs = 0, shard_runs = 0;
  for (const mapper::OperationBlock& b : n.blocks)
    if (wanted(b))
      for (std::size_t s = 0; s < strategies.size(); ++s) shard_runs += shard.takes(total_runs++);
  std::vector<std::size_t> run_index;  // of runs[i] in the whole run
  BlockOutput network_output;          // --output: the last block's output, and the strategy it ran
  std::string output_strategy;
  Progress progress(shard_runs, err);
  std::size_t k = 0;
  for (std::size_t i = 0; i < n.blocks.size() && !stopped; ++i) {
    const mapper::OperationBlock& b = n.blocks[i];
    if (!wanted(b)) continue;
    for (mapper::Strategy asked : strategies) {
      const std::size_t index = k++;
      if (!shard.takes(index)) continue;
      if ((stopped = StopOnSignal::signal()) != 0 || journal.failed()) break;
      std::string why;
      mapper::Strategy st = asked;
      if (req.whole) {
        // the whole network: a block the strategy does not apply to runs the next that does
        for (mapper::Strategy s : {asked, mapper::Strategy::FuseNoreuse, mapper::Strategy::NofuseNoreuse})
          if (static_cast<int>(s) <= static_cast<int>(asked) && mapper::distributable(b, split.blocks[i], s, cfg, nullptr)) {
            st = s;
            break;
          }
      }
      if (!mapper::distributable(b, split.blocks[i], st, cfg, &why)) {
        skipped.push_back(fmt::format("{} {}: {}", b.name(), mapper::to_string(st), why));
        continue;
      }
      if (st != asked) substituted.push_back(fmt::format("{} ran {} for {}", b.name(), mapper::to_string(st), mapper::to_string(asked)));
      BlockRun r;
      bool taken = false;
      try {
        const auto done = resumed.find({b.name(), mapper::to_string(st)});
        if (done != resumed.end() && done->second.second != fingerprint(i, st)) ++tally.changed;  // run again
        if (done != resumed.end() && done->second.second == fingerprint(i, st)) {
          r = block_run_from_json(done->second.first);
          taken = true;
          ++tally.taken;
        } else {
          // --output: the network's last block, in the first strategy that runs it
          const bool keep = wants_output && i + 1 == n.blocks.size() && output_strategy.empty();
          r = run_block(b, split.blocks[i], st, st == mapper::Strategy::FuseReuse ? residency[i] : mapper::BlockResidency{},
                        cfg, model.get(), rtl.get(), req.seed, data.blocks.empty() ? BlockInputs{} : data.blocks[i],
                        golden, WaveRequest{req.waves_dir, req.waves_window, &err}, keep ? &network_output : nullptr,
                        req.policy);
          if (keep) output_strategy = mapper::to_string(st);
        }
      } catch (const std::exception& e) {
        // what a backend or the distributor threw: the block run is an error, the run goes on
        err << "s2cosim run-net: " << b.name() << " " << mapper::to_string(st) << ": " << e.what() << "\n";
        r = BlockRun{};
        r.block = b.name();
        r.strategy = st;
        r.error = e.what();
        r.status = Status::Error;
      }
      if (st != asked) r.asked = mapper::to_string(asked);
      all_ok = all_ok && r.status == Status::Pass;
      progress.clear();  // the block's lines go to the terminal first, the progress line after them
      if (!r.error.empty()) {
        out << fmt::format("{:<10} {:<15} ERROR {}\n", r.block, mapper::to_string(r.strategy), r.error);
        if (!(taken && journal.continues())) journal.append(operation_json(r, cfg, std::nullopt), fingerprint(i, st));
        progress.step(runs.size() + 1, fmt::format("{} {} {}", r.block, mapper::to_string(r.strategy), to_string(r.status)));
        runs.push_back(std::move(r));
        run_index.push_back(index);
        continue;
      }
      const std::string problem = block_problem(r), data = problem.empty() ? "ok" : problem;
      for (const StreamRow& row : r.streams) {
        std::string rtl_cells;
        if (rtl) {
          std::string d;
          if (model && row.rtl_cycles) d = pct(cycle_delta(*row.rtl_cycles, row.cycles).value_or(0.0));
          rtl_cells = fmt::format(" {:>12} {:>8}", row.rtl_cycles ? std::to_string(*row.rtl_cycles) : "-", d);
        }
        const auto num = [&](std::uint64_t v) { return model ? std::to_string(v) : std::string(); };
        out << fmt::format("{:<10} {:<15} {:<6} {:<9} {:>12} {:>12} {:>10} {:>10} {:>8}{}  {}\n", r.block,
                           mapper::to_string(r.strategy), mapper::to_string(r.reuse), row.operation, num(row.cycles),
                           num(row.cycles_arm_timed), num(row.arm_cycles), row.dram_ops, row.mla_tasks, rtl_cells, data);
      }
      if (r.model_core)
        out << fmt::format("{:<10} {:<15} time ({}): {}\n", r.block, mapper::to_string(r.strategy), r.model_core->cycles,
                           describe_time(time_report(*r.model_core, cfg)));
      else if (r.record.contains("model_time"))
        out << fmt::format("{:<10} {:<15} time ({}): {}\n", r.block, mapper::to_string(r.strategy),
                           r.model ? r.model->core_cycles : 0, describe_time(r.record.at("model_time")));
      if (!r.rtl_refused.empty())
        out << fmt::format("{:<10} {:<15} not on the RTL (model only): {}\n", r.block, mapper::to_string(r.strategy), r.rtl_refused);
      if (r.model && r.rtl)
        out << fmt::format("{:<10} {:<15} comparator: {} (core operation: model {}, RTL {}, delta {}){}\n", r.block,
                           mapper::to_string(r.strategy), to_string(r.status), r.model->core_cycles, r.rtl->core_cycles,
                           r.delta ? pct(*r.delta) : "-",
                           r.where.empty() ? "" : "; model - RTL by command, all PEs: " + r.where);
      out.flush();
      // a continued journal holds the taken records already
      if (!(taken && journal.continues()))
        journal.append(operation_json(r, cfg, thesis_clocks(r.block, mapper::to_string(r.strategy))), fingerprint(i, st));
      progress.step(runs.size() + 1, fmt::format("{} {} {}", r.block, mapper::to_string(r.strategy), to_string(r.status)));
      runs.push_back(std::move(r));
      run_index.push_back(index);
    }
  }
  progress.clear();
  // --output, --reference: the network's output as a backend computed it, beside the golden chain's and the
  // reference's; one more result record, "network output"
  nlohmann::json output_record;
  std::optional<CheckResult> output_check;
  if (wants_output) {
    const std::vector<std::size_t> shape = output_shape(n.blocks.back());
    CheckResult c;
    c.name = "network output";
    c.group = n.name;
    c.index = total_runs;
    c.labels = {{"block", n.blocks.back().name()}, {"strategy", output_strategy}, {"backend", network_output.backend}};
    c.replay = run_net_output_replay(req, output_strategy, config_hash(cfg));
    if (network_output.backend.empty()) {
      c.status = Status::Error;
      c.message = fmt::format("{} did not finish on any backend{}", n.blocks.back().name(),
                              output_strategy.empty() ? " (it was not run here; a block run taken from a journal keeps no data)" : "");
      out << "\nnetwork output: not written: " << c.message << "\n";
    } else {
      const std::vector<std::int8_t> y(network_output.bytes.begin(), network_output.bytes.end());
      const bool golden_equal = y == data.output;
      try {
        if (!req.output_npy.empty()) write_npy(req.output_npy, shape, y);
      } catch (const std::exception& e) {
        err << "s2cosim run-net: --output " << e.what() << "\n";
        return 2;
      }
      std::string shape_text;
      for (std::size_t d : shape) shape_text += (shape_text.empty() ? "" : ", ") + std::to_string(d);
      out << fmt::format("\nnetwork output: {}int8, shape ({}), from the {} ({}); it {} the golden kernels' run of the whole network",
                         req.output_npy.empty() ? "" : req.output_npy + ", ", shape_text, network_output.backend, output_strategy,
                         golden_equal ? "equals" : "DIFFERS FROM");
      if (net.output_exponent) out << fmt::format("; a value is int8 * 2^-{}", *net.output_exponent);
      if (shape.size() == 2 && !y.empty())
        out << fmt::format("; largest at index {}", std::max_element(y.begin(), y.end()) - y.begin());
      out << "\n";
      output_record = {{"shape", shape}, {"backend", network_output.backend}, {"strategy", output_strategy},
                       {"equals_golden", golden_equal}};
      if (!req.output_npy.empty()) output_record["file"] = req.output_npy;
      if (net.output_exponent) output_record["exponent"] = *net.output_exponent;
      if (!golden_equal) {
        c.status = Status::Mismatch;
        c.message = "the network's output differs from the golden kernels' run of the whole network";
      }
      if (!net.host_activation.empty()) output_record["host_activation"] = net.host_activation;
      if (reference && reference->is_float) {
        const FloatComparison fc = compare_float(y, *net.output_exponent, reference->float32, net.host_activation);
        output_record["reference"] = req.reference_npy;
        output_record["float_reference"] = {{"correlation", fc.correlation},
                                            {"max_error_steps", fc.max_error_steps},
                                            {"top1_agrees", fc.top1},
                                            {"top5_agrees", fc.top5},
                                            {"threshold", kMinCorrelation},
                                            {"host_activation_applied", !net.host_activation.empty()}};
        const bool ok = fc.correlation >= kMinCorrelation && fc.top1;
        out << fmt::format("network output against the float reference {}{}: correlation {:.4f}, max error {:.1f} output steps, "
                           "top-1 {}, top-5 {} ({}: r >= {} and the same top-1)\n",
                           req.reference_npy, net.host_activation.empty() ? "" : " (" + net.host_activation + " applied on the host)",
                           fc.correlation, fc.max_error_steps, fc.top1 ? "agrees" : "DIFFERS", fc.top5 ? "agrees" : "DIFFERS",
                           ok ? "pass" : "FAIL", kMinCorrelation);
        if (!ok) {
          c.status = Status::Mismatch;
          c.message = fmt::format("against the float reference {}: correlation {:.4f} (at least {} wanted), top-1 {}",
                                  req.reference_npy, fc.correlation, kMinCorrelation, fc.top1 ? "agrees" : "differs");
        }
      } else if (reference) {
        // the first value that differs, and how many do
        std::size_t differ = 0, first = y.size();
        for (std::size_t i = 0; i < y.size(); ++i)
          if (y[i] != reference->int8[i]) {
            first = std::min(first, i);
            ++differ;
          }
        output_record["reference"] = req.reference_npy;
        output_record["equals_reference"] = differ == 0;
        if (differ == 0) {
          out << "network output: equals the reference " << req.reference_npy << ", value for value\n";
        } else {
          c.status = Status::Mismatch;
          c.message = fmt::format("{} of {} values differ from the reference {}; the first, value {}: reference {}, got {}", differ,
                                  y.size(), req.reference_npy, first, int(reference->int8[first]), int(y[first]));
          out << "network output: " << c.message << "\n";
        }
      }
    }
    all_ok = all_ok && c.status == Status::Pass;
    output_check = std::move(c);
  }
  // the block runs' records (contract 3, operations[]): the journal's, the JSON report's, and the Table 5.10
  // sums are made of them, so that merged shards sum the same numbers in the same order
  nlohmann::json operations = nlohmann::json::array();
  for (const BlockRun& r : runs)
    operations.push_back(operation_json(r, cfg, thesis_clocks(r.block, mapper::to_string(r.strategy))));
  if (req.whole) category_cycles = category_sums(operations);
  if (tally.on()) out << "\n" << tally.line("block runs") << "\n";
  if (journal.failed() && !stopped)
    out << fmt::format("\nstopped after {} block runs: {}\n", runs.size(), journal.error());
  if (stopped)
    out << fmt::format("\nstopped by signal {} after {} block runs: what finished is reported below{}\n", stopped,
                       runs.size(), journal.on() ? " and in " + journal.path() : "");

  // thesis Tables 5.5-5.8 layout: the core operation's clocks per strategy
  const std::string table = std::string("Table ") + (req.target == "qpe" ? (n.name == "resnet50" ? "5.6" : "5.5")
                                                                                      : (n.name == "resnet50" ? "5.8" : "5.7"));
  out << "\nclocks per operation and strategy (thesis " << table << " layout; core operation, ARM free, "
      << (model ? "model" : "RTL") << ")\n";
  out << fmt::format("{:<10} {:>24} {:>24} {:>24}  {}\n", "operation", "nofuse_noreuse", "fuse_noreuse", "fuse_reuse",
                     "ranking vs thesis");
  std::map<std::string, std::map<int, const BlockRun*>> by_block;
  std::vector<std::string> order, rank_lines;
  for (const BlockRun& r : runs) {
    if (!r.error.empty()) continue;
    if (!by_block.count(r.block)) order.push_back(r.block);
    by_block[r.block][static_cast<int>(r.strategy)] = &r;
  }
  for (const std::string& name : order) {
    std::string line = fmt::format("{:<10}", name);
    std::vector<std::pair<std::uint64_t, int>> model_rank, thesis_rank;
    for (int k = 0; k < 3; ++k) {
      const auto it = by_block[name].find(k);
      const auto thesis = thesis_clocks(name, mapper::to_string(mapper::Strategy(k)));
      std::string cell = "-";
      if (it != by_block[name].end()) {
        const BlockRun& br = *it->second;
        const std::uint64_t m = br.model ? br.model->core_cycles : br.rtl->core_cycles;
        cell = std::to_string(m);
        if (thesis) {
          cell += " (" + pct((double(m) - double(*thesis)) / double(*thesis)) + ")";
          model_rank.push_back({m, k});
          thesis_rank.push_back({*thesis, k});
        }
      }
      line += fmt::format(" {:>24}", cell);
    }
    std::string rank = "-";
    if (model_rank.size() >= 2) {
      std::sort(model_rank.begin(), model_rank.end());
      std::sort(thesis_rank.begin(), thesis_rank.end());
      bool same = true;
      for (std::size_t k = 0; k < model_rank.size(); ++k) same = same && model_rank[k].second == thesis_rank[k].second;
      rank = same ? "same" : "DIFFERS";
      rank_lines.push_back(same ? "same" : "differs");
    }
    out << line << "  " << rank << "\n";
  }
  bool any_thesis = false;
  for (const BlockRun& r : runs)
    any_thesis = any_thesis || thesis_clocks(r.block, mapper::to_string(r.strategy)).has_value();
  if (any_thesis) out << "(in brackets: deviation from the thesis's " << table << " clocks, where it gives them)\n";
  else if (target_is_chip(req) && cfg.chip.name != "prototype")
    out << "(the thesis measured the prototype chip only: no comparison for '" << cfg.chip.name << "')\n";
  else if (!thesis_mac)
    out << "(the thesis's clocks for the " << cfg.mac_shape() << " MAC array, Tables 5.11/5.12, are withheld from this "
           "project: no comparison)\n";
  else out << "(the project holds no thesis clocks for " << n.name << " on this target: VGG-16's Tables 5.5 and 5.7 only)\n";

  // --whole: thesis Table 5.10's layout
  int category_cells = 0, category_within = 0;
  std::optional<bool> sum_within;
  if (req.whole && model) {
    out << "\nclocks per category of operation (thesis Table 5.10 layout; every block run, ARM operations timed at "
           "Table 5.9's clocks, model)\n";
    std::string head = fmt::format("{:<10}", "category");
    for (const auto& [st, cats] : category_cycles) head += fmt::format(" {:>24}", st);
    out << head << "\n";
    for (const std::string& cat : network_categories()) {
      std::string line = fmt::format("{:<10}", cat);
      for (const auto& [st, cats] : category_cycles) {
        const auto it = cats.find(cat);
        const std::uint64_t v = it == cats.end() ? 0 : static_cast<std::uint64_t>(std::llround(it->second));
        std::string cell = std::to_string(v);
        const auto thesis = thesis_mac ? thesis_network_clocks(n.name, cat) : std::nullopt;
        if (st == "fuse_reuse" && thesis && req.layers.empty()) {
          if (*thesis > 0) {
            const double dev = (double(v) - double(*thesis)) / double(*thesis);
            cell += " (" + pct(dev) + ")";
            if (cat == "sum") sum_within = std::abs(dev) <= req.policy.net.thesis_sum_deviation;
            else {
              ++category_cells;
              category_within += std::abs(dev) <= req.policy.net.thesis_category_deviation;
            }
          } else {
            cell += v == 0 ? " (0 as thesis)" : " (thesis 0)";
            if (cat != "sum") {
              ++category_cells;
              category_within += v == 0;
            }
          }
        }
        line += fmt::format(" {:>24}", cell);
      }
      out << line << "\n";
    }
    if (req.layers.empty() && thesis_mac && thesis_network_clocks(n.name, "sum"))
      out << "(in brackets: deviation from the thesis's Table 5.10, fuse_reuse; the thesis added Table 5.9 estimates to "
             "the simulated MLA clocks, the model runs the ARM operations in the streams and shares what they add "
             "among their categories by their Table 5.9 clocks)\n";
    for (const std::string& line : substituted) out << "strategy: " << line << "\n";
  }

  // the OctopuScheduler MLP on the spinnaker2 preset: per layer in microseconds beside the silicon's
  nlohmann::json silicon;
  if (model && n.name == "octopus_mlp" && target_is_chip(req) && cfg.chip.name == "spinnaker2") {
    const double mhz = cfg.pe_clock_mhz;
    out << fmt::format("\nagainst silicon (the OctopuScheduler paper's Table II: this MLP on the taped-out SpiNNaker2, batch 1; "
                       "model clocks in microseconds at the preset's assumed {:.0f} MHz PE clock)\n", mhz);
    out << fmt::format("{:<10} {:<10} {:>8} {:>16} {:>16} {:>14} {:>12} {:>14}\n", "block", "paper", "workers", "model ARM free",
                       "model ARM timed", "RTL ARM free", "silicon", "model/silicon");
    double model_sum = 0, silicon_sum = 0;
    silicon = nlohmann::json::array();
    for (const SiliconLayer& l : kOctopusMlpLayers) {
      const auto it = std::find_if(runs.begin(), runs.end(), [&](const BlockRun& r) { return r.block == l.block && r.model; });
      if (it == runs.end()) continue;
      const double free_us = double(it->model->block_cycles) / mhz, timed_us = double(it->model->block_cycles_arm_timed) / mhz;
      const nlohmann::json phases = !it->phases.is_null() ? it->phases
                                    : it->record.contains("model_time") ? it->record["model_time"].value("phases", nlohmann::json())
                                                                         : nlohmann::json();
      const std::string workers = phases.is_null() ? "-" : std::to_string(phases.value("pes", 0)) + " (" + std::to_string(l.workers) + ")";
      const std::string rtl_us = it->rtl ? fmt::format("{:.1f} us", double(it->rtl->block_cycles) / mhz) : "-";
      out << fmt::format("{:<10} {:<10} {:>8} {:>13.1f} us {:>13.1f} us {:>14} {:>9.0f} us {:>14.2f}\n", l.block, l.paper, workers,
                         free_us, timed_us, rtl_us, l.us, timed_us / l.us);
      model_sum += timed_us;
      silicon_sum += l.us;
      nlohmann::json row = {{"block", l.block}, {"paper_layer", l.paper}, {"silicon_us", l.us},
                            {"model_us_arm_free", free_us}, {"model_us_arm_timed", timed_us}};
      if (it->rtl) row["rtl_us_arm_free"] = double(it->rtl->block_cycles) / mhz;
      if (std::string(l.block) == "FC_1" && !phases.is_null()) {
        const double fetch = phases.value("weight_fetch_cycles", 0.0) / mhz, mla = phases.value("mla_cycles", 0.0) / mhz;
        out << fmt::format("{:<10} weight fetch: model {:.1f} us per worker (mean of {}), silicon {:.0f} us on average; MLA: model {:.1f} us "
                           "per worker, silicon {:.0f} us\n",
                           l.block, fetch, phases.value("pes", 0), kOctopusFc1WeightFetchUs, mla, kOctopusFc1MlaUs);
        row["model_weight_fetch_us"] = fetch;
        row["silicon_weight_fetch_us"] = kOctopusFc1WeightFetchUs;
        row["model_mla_us"] = mla;
        row["silicon_mla_us"] = kOctopusFc1MlaUs;
      }
      silicon.push_back(row);
    }
    out << fmt::format("the three layers: model {:.1f} us (ARM timed), silicon {:.0f} us ({:.2f}); the whole model on silicon: {:.0f} us\n",
                       model_sum, silicon_sum, silicon_sum > 0 ? model_sum / silicon_sum : 0.0, kOctopusTotalUs);
    out << fmt::format("not predicted: setup {:.0f} us, softmax {:.0f} us (on an ARM; this network has none), cleanup {:.0f} us, and the "
                       "scheduler's overhead per layer ({:.0f} us on average by the paper: loading the layer's description from DRAM, "
                       "waking the workers, storing time stamps), which the model has no software for; the paper does not break the "
                       "rest of a layer's time down further than weight fetch and MLA\n",
                       kOctopusSetupUs, kOctopusSoftmaxUs, kOctopusCleanupUs, kOctopusSchedulingUsPerLayer);
  }

  // the targets, as far as this run measured them
  int thesis_cells = 0, thesis_within = 0, ranked = 0, ranked_same = 0, compared = 0, compared_ok = 0;
  std::vector<std::string> compared_ops, failed_ops;  // operations compared; those with a run not passing
  for (const BlockRun& r : runs) {
    if (!r.error.empty()) continue;
    const BackendRun& main_run = r.model ? *r.model : *r.rtl;
    if (const auto thesis = thesis_clocks(r.block, mapper::to_string(r.strategy))) {
      ++thesis_cells;
      thesis_within += std::abs(double(main_run.core_cycles) - double(*thesis)) <= req.policy.net.thesis_block_deviation * double(*thesis);
    }
    if (r.model && r.rtl) {
      ++compared;
      compared_ok += r.status == Status::Pass;
      if (std::find(compared_ops.begin(), compared_ops.end(), r.block) == compared_ops.end()) compared_ops.push_back(r.block);
      if (r.status != Status::Pass) failed_ops.push_back(r.block);
    }
  }
  for (const std::string& line : rank_lines) {
    ++ranked;
    ranked_same += line == "same";
  }
  out << "\ntargets (measured by this run):\n";
  auto target = [&](bool met, const std::string& what) { out << fmt::format("  [{}] {}\n", met ? "met " : "MISS", what); };
  if (thesis_cells)
    target(thesis_within == thesis_cells,
           fmt::format("{} within {:g}% of the thesis's {} clocks: {} of {} operation-strategy cells", model ? "model" : "RTL",
                       100 * req.policy.net.thesis_block_deviation, table, thesis_within, thesis_cells));
  if (ranked)
    target(ranked_same == ranked, fmt::format("strategies rank as in the thesis: {} of {} operations (among the strategies run)",
                                              ranked_same, ranked));
  if (compared) {
    std::string ops;
    for (const std::string& o : compared_ops)
      if (std::find(failed_ops.begin(), failed_ops.end(), o) == failed_ops.end()) ops += (ops.empty() ? "" : ", ") + o;
    target(compared_ok == compared, fmt::format("model within {:g}% of the RTL and bit-exact: {} of {} operation-strategy runs "
                                                "(operations passing on every strategy run: {})",
                                                100 * req.policy.deviation_bound, compared_ok, compared, ops.empty() ? "none" : ops));
  }
  if (category_cells)
    target(category_within == category_cells,
           fmt::format("whole network within {:g}% of Table 5.10 per category: {} of {} categories",
                       100 * req.policy.net.thesis_category_deviation, category_within, category_cells));
  if (sum_within)
    target(*sum_within, fmt::format("whole network within {:g}% of Table 5.10's sum", 100 * req.policy.net.thesis_sum_deviation));
  if (req.whole && model && !rtl && req.layers.empty()) {  // (the model alone: with the RTL the wall time is the RTL's)
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    target(wall < 20.0, fmt::format("whole network on the model, data checked, in under 20 s wall: {:.1f} s", wall));
  }
  // how fast each backend simulated: every stream it ran (the model: ARM free and ARM timed; the RTL: ARM
  // free), wall seconds inside it
  double model_wall = 0, simulated = 0, rtl_wall = 0, rtl_simulated = 0;
  for (const BlockRun& r : runs) {
    if (r.rtl) {
      rtl_wall += r.rtl->wall_s;
      for (const StreamRow& row : r.streams) rtl_simulated += double(row.rtl_cycles.value_or(0));
    }
    if (!r.model) continue;
    model_wall += r.model->wall_s;
    for (const StreamRow& row : r.streams) simulated += double(row.cycles) + double(row.cycles_arm_timed);
  }
  const double model_rate = model_wall > 0 ? simulated / model_wall : 0.0;
  const double rtl_rate = rtl_wall > 0 ? rtl_simulated / rtl_wall : 0.0;
  const bool both_rates = model_rate > 0 && rtl_rate > 0;
  if (both_rates && target_is_chip(req))
    target(model_rate >= 100 * rtl_rate,
           fmt::format("model at least 100x the RTL's simulated chip clocks per wall second on these runs: {:.0f}x", model_rate / rtl_rate));
  if (!thesis_cells && !ranked && !compared && !category_cells && !(both_rates && target_is_chip(req)))
    out << "  none measured: no thesis clocks for these operations, and no RTL run (--backend both)\n";
  for (const std::string& s : skipped) out << "not run: " << s << "\n";
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  if (model)
    out << fmt::format("\nmodel speed: {:.0f} simulated PE clocks in {:.1f} s wall inside the model ({:.2e} clocks per "
                       "second; each block's streams run twice, ARM free and ARM timed, and its data checked); peak memory "
                       "{:.0f} MB\n",
                       simulated, model_wall, model_rate, double(usage.ru_maxrss) / 1024.0);
  if (rtl && rtl_wall > 0)
    out << fmt::format("RTL speed: {:.0f} simulated PE clocks in {:.1f} s wall inside the RTL ({:.2e} clocks per second; "
                       "each block's streams run once, ARM free, and its data checked){}\n",
                       rtl_simulated, rtl_wall, rtl_rate,
                       both_rates ? fmt::format("; the model is {:.0f}x as fast", model_rate / rtl_rate) : "");

  // the result records every output reads (harness/outputs/result.h)
  ResultSet results;
  results.command = "run-net";
  results.title = fmt::format("{} on {}, backend {}", n.name, system, req.backend);
  results.config = to_json(cfg);
  results.config_hash = config_hash(cfg);
  results.policy = req.policy;
  results.hardware = hw_config_line(cfg);
  results.total = total_runs + (output_check ? 1 : 0);
  results.shard = shard;
  results.stopped_by_signal = stopped;
  for (const std::string& a : cfg.chip.assumptions) results.notes.push_back("assumption (preset " + cfg.chip.name + "): " + a);
  if (has_workers) results.notes.push_back("assumption: " + workers_assumption);
  {
    // sorted, as merge sorts the notes of shards
    std::vector<std::string> notes;
    for (const std::string& line : substituted) notes.push_back("strategy: " + line);
    for (const std::string& line : skipped) notes.push_back("not run: " + line);
    std::sort(notes.begin(), notes.end());
    results.notes.insert(results.notes.end(), notes.begin(), notes.end());
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const BlockRun& r = runs[i];
    CheckResult c;
    c.index = run_index[i];
    c.name = r.block + " " + mapper::to_string(r.strategy);
    c.group = n.name;
    c.status = r.status;
    c.labels = {{"block", r.block}, {"strategy", mapper::to_string(r.strategy)}, {"reuse", mapper::to_string(r.reuse)}};
    if (!r.asked.empty()) c.labels.emplace_back("for", r.asked);
    if (r.model) c.model_cycles = r.model->core_cycles, c.model_wall_s = r.model->wall_s;
    if (r.rtl) c.rtl_cycles = r.rtl->core_cycles, c.rtl_wall_s = r.rtl->wall_s;
    c.delta = r.delta;
    if (const auto t = thesis_clocks(r.block, mapper::to_string(r.strategy))) {
      c.thesis_cycles = *t;
      c.thesis_source = "thesis " + table;
    }
    c.message = block_problem(r);
    if (c.message.empty() && r.status == Status::Deviation)
      c.message = fmt::format("delta {} (core operation: model {} clk, RTL {} clk)", pct(*r.delta), r.model->core_cycles, r.rtl->core_cycles);
    if (!r.rtl_refused.empty()) c.message += (c.message.empty() ? "" : "; ") + ("not on the RTL (model only): " + r.rtl_refused);
    c.where = r.where;
    c.waves = r.waves;
    c.replay = run_net_replay(req, r.block, mapper::to_string(r.strategy), config_hash(cfg));
    results.checks.push_back(std::move(c));
  }
  if (output_check) results.checks.push_back(std::move(*output_check));
  if (req.whole && model)
    for (const auto& [st, cats] : category_cycles)
      for (const std::string& cat : network_categories()) {
        const auto it = cats.find(cat);
        CategoryClocks cc{st, cat, it == cats.end() ? 0 : static_cast<std::uint64_t>(std::llround(it->second)), std::nullopt};
        if (st == "fuse_reuse" && thesis_mac && req.layers.empty()) cc.thesis = thesis_network_clocks(n.name, cat);
        results.categories.push_back(cc);
      }
  if (!shard.whole()) out << "\nshard: " << format_status_counts(results) << "\n";
  if (const std::string f = format_failures(results); !f.empty()) out << "\nto rerun a failure:\n" << f;

  std::string json_text;
  if (!req.json_out.empty()) {
    {
      nlohmann::json head;
      head["network"] = n.name;
      head["target"] = req.target;
      head["backend"] = req.backend;
      head["seed"] = req.seed;
      head["config"] = to_json(cfg);
      head["config_hash"] = config_hash(cfg);
      if (model_rate > 0) head["model_clocks_per_s"] = model_rate;
      if (rtl_rate > 0) head["rtl_clocks_per_s"] = rtl_rate;
      if (!req.split_file.empty()) head["split_file"] = req.split_file;
      if (stopped) head["stopped_by_signal"] = stopped;  // the operations that finished before the stop
      if (req.whole) head["whole"] = true;
      if (!silicon.is_null()) head["silicon"] = silicon;
      if (!req.input_npy.empty()) head["input"] = req.input_npy;
      if (!output_record.is_null()) head["output"] = output_record;
      if (tally.on()) head["resume"] = tally.json();
      json_text = run_net_report_json(head, operations, results).dump(2) + "\n";
    }
  }
  // every output is tried, whatever became of the others; the block runs are in the journal already
  const bool json_written = write_outputs({{req.json_out, [&] { return json_text; }}}, err);
  const bool rest_written = write_result_outputs(results, {req.html_out, req.junit_out, req.csv_out}, err);
  const bool written = json_written && rest_written;
  if (stopped) return StopOnSignal::exit_code(stopped);
  if (journal.failed()) {
    err << "s2cosim run-net: " << journal.error() << ": the run stopped after the block in hand\n";
    return kExitOutput;
  }
  if (!written) return kExitOutput;
  return all_ok ? kExitPass : kExitFail;
}

int check_model(const std::string& path, std::ostream& out, std::ostream& err) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    err << "s2cosim check: " << path << ": no such file\n";
    return 2;
  }
  if (!path.ends_with(".onnx")) {
    err << "s2cosim check: " << path << ": expected an ONNX model (.onnx)\n";
    return 2;
  }
  const mapper::OnnxCheck c = mapper::check_onnx(path);
  for (const std::string& n : c.notes) out << "note: " << n << "\n";
  std::vector<std::string> problems = c.problems;
  if (c.network) {
    try {
      const mapper::ParsedNetwork p = mapper::parse_network(*c.network);
      HwConfig cfg = build_hw_config("", "", {});
      cfg.chip = qpe_dram_chip();
      const mapper::NetworkSplit split = mapper::split_network(p, mapper::split_rules(mapper::Target::Qpe, cfg), {});
      out << fmt::format("{}: {} layers, {} operation blocks on QPE-DRAM", path, c.network->layers.size(), split.blocks.size());
      if (!c.network->host_activation.empty()) out << "; its final " << c.network->host_activation << " on the host";
      out << "\n";
    } catch (const std::exception& e) {
      problems.push_back(e.what());
    }
  }
  for (const std::string& p : problems) out << "will not map: " << p << "\n";
  if (!problems.empty()) {
    out << fmt::format("{}: {} problem{}; the network will not run until each is changed\n", path, problems.size(),
                       problems.size() == 1 ? "" : "s");
    return 1;
  }
  out << path << ": the network will run (s2cosim run-net --net " << path << " --input X.npy)\n";
  return 0;
}

}  // namespace s2
