#include "harness/commands/net_block_run.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "mapper/block_bound.h"
#include "model/pe/arm_ops.h"

namespace s2 {

namespace {

// The Table 5.10 category of an operation (thesis naming: CONV_SC_14 is a convolution, FCE_19 the
// partial sums of a matrix multiplication); a network's element-wise operations on the ARM (tables, affines,
// adds and multiplies of maps: LUT_n, AFFINE_n, ADD_n, MUL_n), which the thesis's networks do not have, are ELT.
std::string category_of(const std::string& operation) {
  for (const char* c : {"MAT_ELE", "CONV", "FCE", "FC", "PADD", "ACTI", "QUAN", "POOL"})
    if (operation.rfind(c, 0) == 0) return std::string(c) == "FCE" ? "FC" : c;
  for (const char* c : {"LUT_", "AFFINE_", "ADD_", "MUL_"})
    if (operation.rfind(c, 0) == 0) return "ELT";
  return "CONV";
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

// A block distributed in a strategy, its DRAM image and golden output: what each backend's run starts from.
struct BlockSetup {
  const mapper::BlockStreams& bs;
  const CheckPolicy& policy;
  const std::vector<std::uint8_t>& image;
  const std::vector<std::uint8_t>& golden;
  std::size_t core_index = 0;  // the core stream (the block's core operation, or the only stream)
  bool timing_only = false;    // no data: `image` and `golden` are empty (run_block)
  bool is_core(const std::string& operation, const std::string& block) const {
    return operation == block || bs.streams.size() == 1;
  }
};

// The RTL's watchdog for stream i of a block run: the policy's, from the model's clocks if the model ran it.
std::uint64_t rtl_watchdog(const BlockRun& r, std::size_t i, const StreamBudget& budget) {
  return r.model ? budget.cycles(r.streams[i].cycles) : budget.rtl_only_cycles;
}

// Table 5.10 categories: a stream of one primitive operation (nofuse) is its category; a fused stream's
// ARM-free clocks are its core operation's, and what the ARM operations add to it is shared out among
// their categories by their ARM clocks (an approximation where ARM work overlaps other PEs').
// Without an ARM-free run (BlockRun::arm_timed) what the ARM operations add is not measured: it is taken as
// the ARM clocks (arm_op_cycles) of the ARM commands of the PE with the most of them (the PEs' ARM work
// runs side by side, so the busiest PE's is what the stream waits for, less where it overlaps other work),
// shared out the same way; the core operation gets the rest of the stream's ARM-timed clocks.
void share_categories(BlockRun& r, const mapper::OperationBlock& b, const mapper::BlockStreams& bs, const HwConfig& cfg) {
  for (std::size_t i = 0; i < bs.streams.size(); ++i) {
    const StreamRow& row = r.streams[i];
    if (bs.streams.size() > 1) {
      r.categories[category_of(row.operation)] += double(row.cycles_arm_timed);
      continue;
    }
    std::map<std::string, double> arm;
    double total = 0, most = 0;  // every PE's ARM commands' clocks; the most one PE's add up to
    for (const auto& cmds : bs.streams[i].pe) {
      double on_pe = 0;
      for (const StreamCommand& c : cmds)
        if (c.kind == CommandKind::Arm) {
          const double n = double(arm_op_cycles(c.arm, cfg));
          arm[category_of(c.operation)] += n;
          total += n;
          on_pe += n;
        }
      most = std::max(most, on_pe);
    }
    const double timed = double(row.cycles_arm_timed);
    const double extra = r.arm_timed ? std::min(most, timed) : timed - double(row.cycles);
    r.categories[category_of(b.name())] += r.arm_timed ? timed - extra : double(row.cycles);
    if (total <= 0) r.categories[category_of(b.name())] += extra;
    for (const auto& [cat, n] : arm) r.categories[cat] += extra * n / total;
  }
}

// the counts a backend could not observe in any of a block's streams, each once
void merge_unavailable(std::vector<std::string>& into, const std::vector<std::string>& more) {
  for (const std::string& k : more)
    if (std::find(into.begin(), into.end(), k) == into.end()) into.push_back(k);
}

// Whether timing the ARM's element-wise operations can change a run of `s`: only its ARM commands wait for
// their ARM clocks (model/pe/arm_core.cpp), so a stream without one runs the same either way.
bool arm_timing_matters(const TaskStream& s) {
  for (const std::vector<StreamCommand>& pe : s.pe)
    for (const StreamCommand& c : pe)
      if (c.kind == CommandKind::Arm) return true;
  return false;
}

// The model's run. In core-clock mode every stream ARM free and ARM timed, each on its own copy of the image;
// returns the core stream's ARM-free run. Streams without ARM commands before the first with one run once: both
// runs would be the same (arm_timing_matters), and so are the memories they leave, until the first that differs.
// Where the runs compared are ARM timed (BlockRun::arm_timed), every stream once, ARM timed: the BackendRun's
// figures of the runs compared and its ARM-timed ones are that one run's.
std::optional<StreamResult> run_on_model(BlockRun& r, const mapper::OperationBlock& b, const BlockSetup& s,
                                         const HwConfig& cfg, StreamBackend& model, BlockOutput* output) {
  const auto wall0 = std::chrono::steady_clock::now();
  const mapper::BlockStreams& bs = s.bs;
  std::optional<StreamResult> model_core;
  BackendRun m;
  SystemMemory dram = stage_block_memory(bs, cfg, s.image), timed;
  bool apart = false;  // the ARM-timed runs have their own memory (`timed`), no longer the ARM-free runs' (`dram`)
  for (std::size_t i = 0; i < bs.streams.size(); ++i) {
    StreamRow& row = r.streams[i];
    if (!r.arm_timed && !apart && arm_timing_matters(bs.streams[i])) {
      timed = dram;
      apart = true;
    }
    StreamRunOptions first_opt{r.arm_timed}, timed_opt{true};
    first_opt.timing_only = timed_opt.timing_only = s.timing_only;
    const StreamResult first = model.run(bs.streams[i], dram, first_opt);  // (ARM free in core-clock mode)
    if (!first.completed) {  // the model's watchdog: a model bug, reported as what it waited for
      row.completed = m.completed = false;
      m.stalled = bs.streams[i].name + (r.arm_timed ? " (ARM operations timed): " : ": ") + first.stalled;
      break;
    }
    const StreamResult with_arm = apart ? model.run(bs.streams[i], timed, timed_opt) : first;
    m.simulated_cycles += first.cycles + (apart ? with_arm.cycles : 0);
    row.cycles = first.cycles;
    row.cycles_arm_timed = with_arm.cycles;
    row.arm_cycles = with_arm.arm_cycles;
    row.dram_ops = first.dram_ops;
    row.mla_tasks = first.mla_tasks;
    row.completed = first.completed && with_arm.completed;
    m.completed = m.completed && row.completed;
    if (!with_arm.completed) {
      m.stalled = bs.streams[i].name + " (ARM operations timed): " + with_arm.stalled;
      break;
    }
    m.block_cycles += row.cycles;
    m.block_cycles_arm_timed += row.cycles_arm_timed;
    m.activity += first.activity;
    if (!m.activity_arm_timed) m.activity_arm_timed.emplace();
    *m.activity_arm_timed += with_arm.activity;
    merge_unavailable(m.activity_unavailable, first.activity_unavailable);
    r.arm_cycles += row.arm_cycles;
    if (s.is_core(row.operation, b.name())) m.core_cycles = row.cycles;
    if (i == s.core_index) model_core = first;
  }
  r.model_core = model_core;
  if (model_core) r.phases = phase_clocks(bs.streams[s.core_index], *model_core, bs.map);
  share_categories(r, b, bs, cfg);
  if (s.timing_only) {
    m.data_checked = false;
  } else {
    m.first_difference = first_difference(s.golden, bs, dram);
    if (m.first_difference.empty() && apart) m.first_difference = first_difference(s.golden, bs, timed);
    if (output && m.completed) *output = {gather_block_output(bs, dram), "model"};
    m.data_match = m.first_difference.empty();
  }
  m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  r.model = m;
  return model_core;
}

// How the RTL runs stream i of a block run: ARM timed or free as the runs compared, under its watchdog.
StreamRunOptions rtl_options(const BlockRun& r, std::size_t i, const StreamBudget& budget) {
  StreamRunOptions opt{r.arm_timed};
  opt.watchdog_cycles = rtl_watchdog(r, i, budget);
  return opt;
}

// The RTL's run of record, every stream's result and the memories it left, for rerun_on_rtl.
struct RtlRecord {
  std::vector<StreamResult> results;
  SystemMemory memory;
};

// The RTL's run: every stream ARM free (core-clock mode) or ARM timed, as the runs compared, up to the first it
// does not finish (what follows depends on its results). Returns the core stream's run; `hung` gets the stream it
// did not finish.
std::optional<StreamResult> run_on_rtl(BlockRun& r, const mapper::OperationBlock& b, const BlockSetup& s,
                                       const HwConfig& cfg, StreamBackend& rtl, BlockOutput* output,
                                       std::optional<std::size_t>& hung, RtlRecord* record) {
  const auto wall0 = std::chrono::steady_clock::now();
  const mapper::BlockStreams& bs = s.bs;
  std::optional<StreamResult> rtl_core;
  BackendRun t;
  SystemMemory dram = stage_block_memory(bs, cfg, s.image);
  for (std::size_t i = 0; i < bs.streams.size(); ++i) {
    StreamRow& row = r.streams[i];
    const StreamResult res = rtl.run(bs.streams[i], dram, rtl_options(r, i, s.policy.stream_budget));
    if (record) record->results.push_back(res);
    row.rtl_cycles = res.cycles;
    t.block_cycles += res.cycles;
    t.simulated_cycles += res.cycles;
    t.activity += res.activity;
    t.qpe_clocks_evaluated += res.qpe_clocks_evaluated;
    t.qpe_clocks_simulated += res.qpe_clocks_simulated;
    merge_unavailable(t.activity_unavailable, res.activity_unavailable);
    if (s.is_core(row.operation, b.name())) t.core_cycles = res.cycles;
    if (i == s.core_index) rtl_core = res;
    if (!r.model) {
      row.dram_ops = res.dram_ops;
      row.mla_tasks = res.mla_tasks;
      row.completed = res.completed;
    }
    if (!res.completed) {
      t.completed = false;
      hung = i;
      t.stalled = bs.streams[i].name + ": " + res.stalled;
      break;  // what follows depends on this stream's results
    }
  }
  if (t.completed) t.first_difference = first_difference(s.golden, bs, dram);
  if (output && t.completed) *output = {gather_block_output(bs, dram), "RTL"};
  t.data_match = t.completed && t.first_difference.empty();
  t.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  r.rtl = t;
  if (record) record->memory = std::move(dram);
  return rtl_core;
}

// What differs between two RTL runs of one stream, or "" (every figure the run reports, not its wall time).
std::string rtl_result_difference(const StreamResult& a, const StreamResult& b) {
  if (a.completed != b.completed) return a.completed ? "it did not finish" : "it finished";
  if (a.cycles != b.cycles) return fmt::format("{} PE clocks against {}", b.cycles, a.cycles);
  if (a.pe_end_cycle != b.pe_end_cycle) return "a PE's end clock";
  if (a.command_end_cycle != b.command_end_cycle) return "a command's end clock";
  if (a.dram_ops != b.dram_ops) return "its DRAM operations";
  if (a.activity.named() != b.activity.named()) return "its activity counts";
  auto differ = [](const std::vector<Activity>& x, const std::vector<Activity>& y) {
    if (x.size() != y.size()) return true;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (x[i].named() != y[i].named()) return true;
    return false;
  };
  if (differ(a.pe_activity, b.pe_activity) || differ(a.router_activity, b.router_activity) || differ(a.dram_activity, b.dram_activity))
    return "a PE's, router's or DRAM's activity counts";
  return "";
}

// The block's streams on the RTL again, simulated each other way asked for, from the same image: each must
// give what the run of record gave (`record`, run_on_rtl's), stream by stream and byte by byte; its wall time
// is what the speed-up targets compare (the record's also holds its output check against the golden block, which
// equal memories make needless here: the ratios lean, slightly, against the run of record).
void rerun_on_rtl(BlockRun& r, const BlockSetup& s, const HwConfig& cfg, const RtlRecord& record, const RtlSimCompare& sims) {
  const mapper::BlockStreams& bs = s.bs;
  for (const auto& [sim, rtl] : sims.others) {
    RtlSimulationRun sr;
    sr.sim = sim;
    const auto wall0 = std::chrono::steady_clock::now();
    SystemMemory memory = stage_block_memory(bs, cfg, s.image);
    for (std::size_t i = 0; i < record.results.size() && sr.difference.empty(); ++i) {
      const StreamResult res = rtl->run(bs.streams[i], memory, rtl_options(r, i, s.policy.stream_budget));
      if (const std::string d = rtl_result_difference(record.results[i], res); !d.empty()) sr.difference = bs.streams[i].name + ": " + d;
    }
    if (sr.difference.empty() && (memory.drams != record.memory.drams || memory.sram != record.memory.sram))
      sr.difference = "the memories it left";
    sr.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    if (!sr.difference.empty() && r.error.empty())
      r.error = fmt::format("the RTL simulated with {} gave another result than with {}: {}", sim.describe(), sims.record.describe(),
                            sr.difference);
    r.rtl_simulations.push_back(sr);
  }
}

// --waves: the failing stream run again on the RTL, traced, after the block's streams before it: the last
// clocks before the watchdog fired (a hang), else a window around the first command whose end differs
// from the model's (with none, the core stream's end)
void write_waves(BlockRun& r, const BlockSetup& s, const HwConfig& cfg, StreamBackend& rtl, const WaveRequest& waves,
                 const std::optional<StreamResult>& model_core, const std::optional<StreamResult>& rtl_core,
                 std::optional<std::size_t> rtl_hung) {
  const std::size_t f = rtl_hung.value_or(s.core_index);
  WaveWindow w;
  w.path = (std::filesystem::path(waves.dir) / (r.block + "_" + mapper::to_string(r.strategy))).string();
  if (rtl_hung) {
    w.end_cycle = rtl_watchdog(r, f, s.policy.stream_budget) + 1;
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
    SystemMemory dram = stage_block_memory(s.bs, cfg, s.image);
    for (std::size_t i = 0; i <= f; ++i) {
      StreamRunOptions opt = rtl_options(r, i, s.policy.stream_budget);
      if (i == f) opt.waves = &w;
      rtl.run(s.bs.streams[i], dram, opt);
    }
    r.waves = w.path;
  } catch (const std::exception& e) {
    if (waves.err)
      *waves.err << "s2cosim run-net: waveform of " << r.block << " " << mapper::to_string(r.strategy) << ": " << e.what() << "\n";
  }
}

// The counts of a block run that finished: each backend's against the block's floor, model against RTL.
void check_block_activity(BlockRun& r, const ActivityFloor& floor, const CheckPolicy& policy) {
  for (const auto& [who, run] : {std::pair{"model", &r.model}, std::pair{"rtl", &r.rtl}})
    if (*run && (*run)->completed)
      for (const std::string& line : activity_below_floor((*run)->activity, floor, (*run)->activity_unavailable))
        r.activity_findings.push_back(std::string(who) + " " + kBelowBlockFloor + ": " + line);
  if (r.model && r.rtl && r.model->completed && r.rtl->completed) {
    r.activity_delta = compare_activity(r.model->activity, r.rtl->activity, r.model->activity_unavailable,
                                        r.rtl->activity_unavailable, policy);
    if (r.activity_delta.deviates())
      r.activity_findings.push_back(fmt::format("activity counts differ by more than {:g}%: {}",
                                                100 * policy.activity_deviation_bound, r.activity_delta.describe()));
  }
}

}  // namespace

Status block_status(const BlockRun& r, double deviation_bound) {
  Findings f;
  f.error = !r.error.empty();
  f.hang = (r.model && !r.model->completed) || (r.rtl && !r.rtl->completed);
  f.mismatch = (r.model && r.model->data_checked && !r.model->data_match) || (r.rtl && r.rtl->data_checked && !r.rtl->data_match);
  f.delta = r.delta;
  f.activity_deviation = !r.activity_findings.empty();
  return classify(f, deviation_bound);
}

ActivityFloor block_activity_floor(const mapper::OperationBlock& b, const mapper::BlockResidency& where) {
  const mapper::BlockWork w = mapper::block_work(b);
  ActivityFloor f;
  f.mac_ops = w.mac_ops;
  // int8 maps and weights (an element-wise block reads its second map from DRAM in every strategy)
  f.dram_read_bytes = w.weight_bytes + w.second_map_bytes + (where.input_in_storage ? 0 : w.input_read_bytes);
  f.dram_write_bytes = where.output_in_storage ? 0 : w.output_bytes;
  return f;
}

std::optional<std::uint64_t> bounded_cycles(const BlockRun& r) {
  if (!r.error.empty()) return std::nullopt;
  if (r.model && r.model->completed) return r.model->block_cycles_arm_timed;
  if (r.rtl && r.rtl->completed && r.arm_timed) return r.rtl->block_cycles;
  return std::nullopt;
}

void check_block_bound(BlockRun& r, const mapper::BlockBound& bound, double deviation_bound) {
  r.bound = bound;
  if (!r.error.empty()) return;
  const std::uint64_t least = bound.cycles();
  auto check = [&](const char* who, const std::optional<BackendRun>& run, bool arm_timed) {
    const std::uint64_t cycles = arm_timed ? run->block_cycles : run->block_cycles_arm_timed;
    if (run->completed && cycles < least)
      r.activity_findings.push_back(fmt::format("{} {}: {} < {} ({})", who, kBelowBound, cycles, least, mapper::bound_terms(bound)));
  };
  if (r.model) check("model", r.model, false);
  if (r.rtl && r.arm_timed) check("rtl", r.rtl, true);
  r.status = block_status(r, deviation_bound);
}

BackendActivity block_activity(const BlockRun& r) {
  BackendActivity a;
  if (r.model) a.model = r.model->activity, a.model_unavailable = r.model->activity_unavailable;
  if (r.rtl) a.rtl = r.rtl->activity, a.rtl_unavailable = r.rtl->activity_unavailable;
  return a;
}

std::string block_problem(const BlockRun& r) {
  if (!r.error.empty()) return r.error;
  if (r.model && !r.model->completed) return "MODEL HANG " + r.model->stalled;
  if (r.rtl && !r.rtl->completed) return "RTL HANG " + r.rtl->stalled;
  if (r.model && r.model->data_checked && !r.model->data_match) return "MISMATCH (model) " + r.model->first_difference;
  if (r.rtl && r.rtl->data_checked && !r.rtl->data_match) return "MISMATCH (RTL) " + r.rtl->first_difference;
  return "";
}

BlockRun run_block(const mapper::OperationBlock& b, const mapper::BlockSplit& s, mapper::Strategy strategy,
                   const mapper::BlockResidency& where, const HwConfig& cfg, StreamBackend* model, StreamBackend* rtl,
                   std::uint64_t seed, const BlockInputs& data,
                   std::map<std::string, std::vector<std::uint8_t>>& golden_cache, const WaveRequest& waves,
                   BlockOutput* output, const CheckPolicy& policy, const RtlSimCompare& rtl_sims, bool timing_only,
                   bool core_clocks) {
  if (timing_only && (rtl || output))
    throw std::invalid_argument("timing only: the model alone runs without data (no RTL run, no output to keep)");
  BlockRun r;
  r.block = b.name();
  r.strategy = strategy;
  r.arm_timed = !core_clocks;
  const mapper::BlockStreams bs = mapper::distribute(b, s, strategy, cfg, where);
  r.reuse = bs.reuse;
  r.schedule = mapper::to_string(bs.schedule);
  r.schedule_note = bs.schedule_note;
  const std::vector<std::uint8_t> image = timing_only ? std::vector<std::uint8_t>{} : block_dram_image(b, s, bs, cfg, seed, data);
  std::vector<std::uint8_t>& golden = golden_cache[b.name()];
  if (golden.empty() && !timing_only) golden = golden_block_output(b, s, bs, cfg, image);
  // what the RTL lacks is found before anything runs: the block then runs on the model only
  if (rtl)
    for (const TaskStream& st : bs.streams)
      if (r.rtl_refused.empty()) r.rtl_refused = rtl->refusal(st);
  if (!r.rtl_refused.empty()) rtl = nullptr;
  BlockSetup setup{bs, policy, image, golden};
  setup.timing_only = timing_only;
  for (const TaskStream& st : bs.streams) {
    StreamRow row;
    row.operation = st.name.substr(0, st.name.find(' '));
    r.streams.push_back(row);
  }
  for (std::size_t i = 0; i < r.streams.size(); ++i)
    if (setup.is_core(r.streams[i].operation, b.name())) setup.core_index = i;
  // the core stream's runs compared, to locate a deviation
  std::optional<StreamResult> model_core, rtl_core;
  if (model) model_core = run_on_model(r, b, setup, cfg, *model, output);
  std::optional<std::size_t> rtl_hung;  // the stream the RTL did not finish
  RtlRecord record;
  if (rtl) rtl_core = run_on_rtl(r, b, setup, cfg, *rtl, output, rtl_hung, rtl_sims.others.empty() ? nullptr : &record);
  if (rtl && r.rtl) rerun_on_rtl(r, setup, cfg, record, rtl_sims);
  if (r.model && r.rtl) r.delta = cycle_delta(r.rtl->core_cycles, r.model->core_cycles);
  check_block_activity(r, block_activity_floor(b, where), policy);
  r.status = block_status(r, policy.deviation_bound);
  if (r.model && r.rtl && r.status == Status::Deviation && model_core && rtl_core) {
    const TaskStream& core = bs.streams[setup.core_index];
    r.where = describe_command_deviation(command_deviation(core, *model_core, *rtl_core));
    // on the chip, also the DRAMs, SRAMs and links the differing transfers use
    if (cfg.chip.qpes() > 1)
      if (const std::string places = describe_place_deviation(place_deviation(core, *model_core, *rtl_core, cfg)); !places.empty())
        r.where += "; by place, " + places;
  }
  if (!waves.dir.empty() && rtl && r.rtl && r.status != Status::Pass)
    write_waves(r, setup, cfg, *rtl, waves, model_core, rtl_core, rtl_hung);
  return r;
}

}  // namespace s2
