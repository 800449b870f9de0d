#include "harness/check/comparators.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "harness/backends/backend.h"
#include "model/golden.h"
#include "model/noc/mesh.h"

namespace s2 {

const char* to_string(Status s) {
  switch (s) {
    case Status::Pass:
      return "pass";
    case Status::Mismatch:
      return "mismatch";
    case Status::Hang:
      return "hang";
    case Status::EarlyStop:
      return "early_stop";
    case Status::Deviation:
      return "deviation";
    case Status::Error:
      return "error";
  }
  return "?";
}

Status classify(const Findings& f, double deviation_bound) {
  if (f.error) return Status::Error;
  if (f.hang) return Status::Hang;
  if (f.early_stop) return Status::EarlyStop;
  if (f.mismatch) return Status::Mismatch;
  if (f.delta && std::fabs(*f.delta) > deviation_bound) return Status::Deviation;
  if (f.activity_deviation) return Status::Deviation;
  return Status::Pass;
}

std::optional<double> cycle_delta(std::uint64_t rtl_cycles, std::uint64_t model_cycles) {
  if (rtl_cycles == 0) return std::nullopt;
  return (static_cast<double>(model_cycles) - static_cast<double>(rtl_cycles)) / static_cast<double>(rtl_cycles);
}

std::vector<std::vector<std::int32_t>> golden_for_task(const Task& t, const HwConfig& cfg) {
  std::vector<PeOperands> ops;
  for (int p = 0; p < kPesPerQpe; ++p) ops.push_back(make_operands(t, p));
  std::vector<std::vector<std::int32_t>> golden(kPesPerQpe);
  for (int p : t.pes()) golden[p] = golden_results(t, p, ops, cfg);
  return golden;
}

std::optional<Mismatch> compare_pe_results(const Task& t, const HwConfig& cfg, int pe,
                                           const std::vector<std::int32_t>& golden,
                                           const std::vector<std::int32_t>& got, const std::string& backend) {
  Mismatch m;
  m.backend = backend;
  m.pe = pe;
  if (got.size() != golden.size()) {
    m.missing = true;
    m.differing = golden.size();
    if (!golden.empty()) m.expected = golden[0];
    return m;
  }
  bool found = false;
  for (std::size_t i = 0; i < golden.size(); ++i) {
    if (golden[i] == got[i]) continue;
    if (!found) {
      found = true;
      m.index = i;
      m.expected = golden[i];
      m.got = got[i];
      m.unwritten = static_cast<std::uint32_t>(got[i]) == kUnwrittenResult;
      const ResultPos pos = result_position(t, i);
      m.row = pos.row;
      m.column = pos.column;
      m.tile = result_tile(t, cfg, i);
    }
    ++m.differing;
  }
  if (!found) return std::nullopt;
  return m;
}

namespace {
const PeTrace* find_pe(const TaskTrace& tr, int pe) {
  for (const PeTrace& p : tr.pes)
    if (p.pe == pe) return &p;
  return nullptr;
}

std::size_t count_unwritten(const std::vector<std::int32_t>& v) {
  return static_cast<std::size_t>(std::count_if(
      v.begin(), v.end(), [](std::int32_t x) { return static_cast<std::uint32_t>(x) == kUnwrittenResult; }));
}

// Cycles a PE spent on the task so far (0 if it never started).
std::uint64_t pe_cycles(const PeTrace& p) {
  if (!p.started && !p.done) return 0;
  return p.end_cycle >= p.start_cycle ? p.cycles() : 0;
}

std::string pe_list(const std::vector<int>& pes) {
  std::string s;
  for (int p : pes) {
    if (!s.empty()) s += ',';
    s += std::to_string(p);
  }
  return s;
}
}  // namespace

DataCheck check_data(const Task& t, const HwConfig& cfg, const std::vector<std::vector<std::int32_t>>& golden,
                     const TaskTrace& trace, const std::string& backend) {
  DataCheck d;
  d.checked = true;
  for (int p : t.pes()) {
    static const std::vector<std::int32_t> kNone;
    const PeTrace* pt = find_pe(trace, p);
    const std::vector<std::int32_t>& want = p < static_cast<int>(golden.size()) ? golden[p] : kNone;
    std::optional<Mismatch> m = compare_pe_results(t, cfg, p, want, pt ? pt->results : kNone, backend);
    if (!m) continue;
    d.differing += m->differing;
    if (pt && !m->missing) d.unwritten += count_unwritten(pt->results);
    d.bad_pes.push_back(p);
    if (!d.first) d.first = *m;
    d.first_per_pe.push_back(*m);
  }
  d.match = d.bad_pes.empty();
  return d;
}

std::string describe(const Mismatch& m) {
  if (m.missing) return fmt::format("PE {}: no results read back ({} expected)", m.pe, m.differing);
  return fmt::format("PE {} tile {} row {} col {}: expected {}, got {}{}; {} differ", m.pe, m.tile, m.row, m.column,
                     m.expected, m.got, m.unwritten ? " (never written)" : "", m.differing);
}

TaskComparison compare_task(const Task& t, const HwConfig& cfg, const std::vector<std::vector<std::int32_t>>& golden,
                            const BackendResult& rtl, const BackendResult& model, const CheckPolicy& policy) {
  TaskComparison c;
  c.task = t;
  c.rtl_ran = rtl.ran;
  c.model_ran = model.ran;
  if (rtl.ran && !rtl.trace) c.rtl_error = rtl.error.empty() ? "backend failed" : rtl.error;
  if (model.ran && !model.trace) c.model_error = model.error.empty() ? "backend failed" : model.error;

  const TaskTrace* rt = rtl.ok() ? &*rtl.trace : nullptr;
  const TaskTrace* mt = model.ok() ? &*model.trace : nullptr;
  if (rt) {
    c.rtl_cycles = rt->cycles;
    c.rtl_completed = rt->completed;
    c.rtl_budget_cycles = rt->budget_cycles;
    c.rtl_elapsed_cycles = rt->elapsed_cycles;
    c.rtl_wall_s = rt->wall_s;
    c.rtl_data = check_data(t, cfg, golden, *rt, "rtl");
  }
  if (mt) {
    c.model_cycles = mt->cycles;
    c.model_completed = mt->completed;
    c.model_wall_s = mt->wall_s;
    c.model_data = check_data(t, cfg, golden, *mt, "model");
  }
  if (rt && mt && rt->completed && mt->completed) c.delta = cycle_delta(rt->cycles, mt->cycles);

  for (int p : t.pes()) {
    PeComparison pc;
    pc.pe = p;
    const PeTrace* rp = rt ? find_pe(*rt, p) : nullptr;
    const PeTrace* mp = mt ? find_pe(*mt, p) : nullptr;
    if (rt) {
      pc.rtl_state = rp ? rp->state : "missing from trace";
      pc.rtl_done = rp && rp->done;
      pc.rtl_cycles = rp ? pe_cycles(*rp) : 0;
      if (rp && rp->phases_known) pc.rtl_phases = rp->phases;
      pc.rtl_data_ok = std::find(c.rtl_data.bad_pes.begin(), c.rtl_data.bad_pes.end(), p) == c.rtl_data.bad_pes.end();
      for (const Mismatch& m : c.rtl_data.first_per_pe)
        if (m.pe == p) pc.rtl_differing = m.differing;
      if (rp) pc.rtl_unwritten = count_unwritten(rp->results);
    }
    if (mt) {
      pc.model_state = mp ? mp->state : "missing from trace";
      pc.model_done = mp && mp->done;
      pc.model_cycles = mp ? pe_cycles(*mp) : 0;
      if (mp && mp->phases_known) pc.model_phases = mp->phases;
      pc.model_data_ok =
          std::find(c.model_data.bad_pes.begin(), c.model_data.bad_pes.end(), p) == c.model_data.bad_pes.end();
      for (const Mismatch& m : c.model_data.first_per_pe)
        if (m.pe == p) pc.model_differing = m.differing;
    }
    if (pc.rtl_done && pc.model_done) pc.delta = cycle_delta(*pc.rtl_cycles, *pc.model_cycles);
    if (pc.rtl_phases && pc.model_phases) {
      const PhaseCycles& r = *pc.rtl_phases;
      const PhaseCycles& m = *pc.model_phases;
      auto add = [&](const char* name, std::uint64_t rv, std::uint64_t mv) {
        PhaseDelta d{name, rv, mv, rv == 0 && mv == 0 ? std::optional<double>(0.0) : cycle_delta(rv, mv)};
        pc.phase_deltas.push_back(std::move(d));
      };
      add("compute", r.compute, m.compute);
      add("output", r.output, m.output);
      add("a_wait", r.a_wait, m.a_wait);
      add("b_wait", r.b_wait, m.b_wait);
      add("setup", r.setup, m.setup);
    }
    // an RTL PE running far longer than the model predicts (done or not)
    if (rp && mp && mp->done && pc.rtl_cycles && pc.model_cycles && *pc.model_cycles > 0 &&
        static_cast<double>(*pc.rtl_cycles) > policy.long_run_factor * static_cast<double>(*pc.model_cycles)) {
      pc.long_run = true;
      c.long_run_pes.push_back(p);
      c.flags.push_back(fmt::format("long run: RTL PE {} ran {} cycles{}, {:.2f}x the model's {} (limit {:.2f}x)", p,
                                    *pc.rtl_cycles, rp->done ? "" : " and had not finished",
                                    static_cast<double>(*pc.rtl_cycles) / static_cast<double>(*pc.model_cycles),
                                    *pc.model_cycles, policy.long_run_factor));
    }
    if (rt && !pc.rtl_done) {
      c.hung_pes.push_back(p);
      c.flags.push_back(fmt::format("hang: RTL PE {} not done after {} cycles (state '{}', budget {} cycles)", p,
                                    pc.rtl_cycles.value_or(0), pc.rtl_state, rt->budget_cycles));
    }
    if (rt && pc.rtl_done && pc.rtl_data_ok == false) {
      c.early_stop_pes.push_back(p);
      c.flags.push_back(
          fmt::format("early stop: RTL PE {} raised done after {} cycles with {} wrong results ({} never "
                      "written)",
                      p, pc.rtl_cycles.value_or(0), pc.rtl_differing, pc.rtl_unwritten));
    }
    if (mt && !pc.model_done)
      c.flags.push_back(fmt::format("model PE {} did not finish (state '{}')", p, pc.model_state));
    c.pes.push_back(std::move(pc));
  }
  if (rt && mt && rt->completed && mt->completed == false)
    c.flags.push_back("the model did not complete the task but the RTL did");

  // the counts: each backend's against what the task implies, then model against RTL when both finished
  const ActivityFloor floor = activity_floor(t);
  const auto count = [&](const TaskTrace* tr, const char* who, std::optional<Activity>& a, std::vector<std::string>& unavailable) {
    if (!tr) return;
    a = tr->activity;
    unavailable = tr->activity_unavailable;
    if (!tr->completed) return;
    for (const std::string& line : activity_below_floor(tr->activity, floor, tr->activity_unavailable)) {
      c.activity_floor.push_back(std::string(who) + ": " + line);
      c.flags.push_back(fmt::format("{} activity below what the task implies: {}", who, line));
    }
  };
  count(rt, "rtl", c.activity.rtl, c.activity.rtl_unavailable);
  count(mt, "model", c.activity.model, c.activity.model_unavailable);
  if (rt && mt && rt->completed && mt->completed) {
    c.activity_delta = compare_activity(mt->activity, rt->activity, mt->activity_unavailable, rt->activity_unavailable,
                                  policy);
    if (c.activity_delta.deviates())
      c.flags.push_back(fmt::format("activity counts differ by more than {:g}%: {}", 100 * policy.activity_deviation_bound,
                                    c.activity_delta.describe()));
  }

  Findings f;
  if (!rtl.ran && !model.ran) {
    f.error = true;
    c.error = "no backend ran the task";
  } else if (!c.rtl_error.empty() || !c.model_error.empty()) {
    f.error = true;
    if (!c.rtl_error.empty()) c.error = "rtl: " + c.rtl_error;
    if (!c.model_error.empty()) {
      if (!c.error.empty()) c.error += "; ";
      c.error += "model: " + c.model_error;
    }
  }
  // the model predicts a hang: against a finished RTL that is a disagreement; alone, a hang unless its data
  // already differ
  const bool model_hang = mt && !mt->completed;
  f.hang = (rt && !rt->completed) || (model_hang && !rt && c.model_data.match);
  f.early_stop = !c.early_stop_pes.empty();
  f.mismatch = (rt && !c.rtl_data.match) || (mt && !c.model_data.match) || (model_hang && rt);
  f.delta = c.delta;
  f.activity_deviation = c.activity_delta.deviates() || !c.activity_floor.empty();
  c.status = classify(f, policy.deviation_bound);
  if (c.status == Status::Hang && !rt)
    for (const PeComparison& pc : c.pes)
      if (!pc.model_done) c.hung_pes.push_back(pc.pe);
  if (c.status == Status::Mismatch && c.rtl_data.checked && c.rtl_data.match && !c.model_data.match)
    c.flags.push_back(fmt::format("model results differ from golden on PE {}", pe_list(c.model_data.bad_pes)));
  return c;
}

TaskComparison compare_task(const Task& t, const HwConfig& cfg, const BackendResult& rtl, const BackendResult& model,
                            const CheckPolicy& policy) {
  return compare_task(t, cfg, golden_for_task(t, cfg), rtl, model, policy);
}

namespace {

// Each command's clocks (its end minus the previous command's end; the drain after the last as index
// cmds.size()) in the model minus the RTL, summed under the keys `keys(pe, index)` gives it. Empty if
// either run is incomplete.
template <typename Keys>
std::vector<CommandDeviation> deviation_by(const TaskStream& s, const StreamResult& model, const StreamResult& rtl, Keys keys) {
  std::map<std::string, CommandDeviation> by;
  for (int p = 0; p < static_cast<int>(s.pe.size()); ++p) {
    const auto& cmds = s.pe[static_cast<std::size_t>(p)];
    const auto& m = model.command_end_cycle[static_cast<std::size_t>(p)];
    const auto& r = rtl.command_end_cycle[static_cast<std::size_t>(p)];
    if (!model.completed || !rtl.completed || m.size() != cmds.size() || r.size() != cmds.size()) return {};
    std::uint64_t m0 = 0, r0 = 0;
    for (std::size_t i = 0; i <= cmds.size(); ++i) {
      const bool drain = i == cmds.size();
      const std::uint64_t m1 = drain ? model.pe_end_cycle[static_cast<std::size_t>(p)] : m[i];
      const std::uint64_t r1 = drain ? rtl.pe_end_cycle[static_cast<std::size_t>(p)] : r[i];
      for (const std::string& what : keys(p, i)) {
        CommandDeviation& d = by[what];
        d.what = what;
        d.clocks += (static_cast<std::int64_t>(m1) - static_cast<std::int64_t>(m0)) -
                    (static_cast<std::int64_t>(r1) - static_cast<std::int64_t>(r0));
        ++d.commands;
      }
      m0 = m1;
      r0 = r1;
    }
  }
  std::vector<CommandDeviation> v;
  for (auto& [k, d] : by) v.push_back(d);
  std::stable_sort(v.begin(), v.end(), [](const CommandDeviation& a, const CommandDeviation& b) {
    return std::abs(a.clocks) > std::abs(b.clocks);
  });
  return v;
}

}  // namespace

std::vector<CommandDeviation> command_deviation(const TaskStream& s, const StreamResult& model, const StreamResult& rtl) {
  return deviation_by(s, model, rtl, [&](int p, std::size_t i) {
    const auto& cmds = s.pe[static_cast<std::size_t>(p)];
    return std::vector<std::string>{i == cmds.size() ? "drain" : std::string(to_string(cmds[i].kind)) + " " + cmds[i].operation};
  });
}

std::vector<CommandDeviation> place_deviation(const TaskStream& s, const StreamResult& model, const StreamResult& rtl,
                                              const HwConfig& cfg) {
  const Mesh mesh(cfg.chip);
  return deviation_by(s, model, rtl, [&](int p, std::size_t i) {
    std::vector<std::string> places;
    const auto& cmds = s.pe[static_cast<std::size_t>(p)];
    if (i == cmds.size() || (cmds[i].kind != CommandKind::DmaLoad && cmds[i].kind != CommandKind::DmaStore)) return places;
    const MemoryRef& far = cmds[i].dma.remote;
    const int q = p / kPesPerQpe;
    int far_qpe = 0;
    if (far.kind == MemoryRef::Kind::Sram) {
      places.push_back(fmt::format("PE {}'s SRAM", far.index));
      far_qpe = far.index / kPesPerQpe;
    } else {
      places.push_back(fmt::format("DRAM {}", far.index));
      far_qpe = mesh.dram_router(far.index, q);
    }
    for (const std::vector<int>& route : {mesh.route(q, far_qpe), mesh.route(far_qpe, q)})
      for (std::size_t k = 0; k + 1 < route.size(); ++k)
        places.push_back(qpe_name(cfg.chip, route[k]) + "->" + qpe_name(cfg.chip, route[k + 1]));
    return places;
  });
}

std::string describe_command_deviation(const std::vector<CommandDeviation>& d, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < d.size() && i < n; ++i)
    s += fmt::format("{}{} {:+} clocks ({})", i ? ", " : "", d[i].what, d[i].clocks, d[i].commands);
  return s;
}

std::string describe_place_deviation(const std::vector<CommandDeviation>& d, std::size_t n) {
  std::vector<CommandDeviation> ends, links;
  for (const CommandDeviation& x : d) (x.what.rfind("QPE(", 0) == 0 ? links : ends).push_back(x);
  std::string s;
  if (!ends.empty()) s += "far ends: " + describe_command_deviation(ends, n);
  if (!links.empty()) s += (s.empty() ? "" : "; ") + std::string("links: ") + describe_command_deviation(links, n);
  return s;
}

std::optional<std::uint64_t> first_divergence_cycle(const TaskComparison& c) {
  if (!c.rtl_cycles) return std::nullopt;
  std::optional<std::uint64_t> first;
  for (const PeComparison& p : c.pes)
    if (p.rtl_cycles && p.model_cycles && *p.rtl_cycles != *p.model_cycles) {
      const std::uint64_t end = std::min(*p.rtl_cycles, *p.model_cycles);
      if (!first || end < *first) first = end;
    }
  return first ? first : c.rtl_cycles;
}

}  // namespace s2
