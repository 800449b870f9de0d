#include "harness/check/activity_comparator.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace s2 {

namespace {
bool listed(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }
}  // namespace

bool ActivityComparison::deviates() const {
  return std::any_of(counts.begin(), counts.end(), [](const CountDelta& d) { return d.off; });
}

std::optional<double> ActivityComparison::worst(std::string* which, std::optional<bool> time) const {
  std::optional<double> w;
  for (const CountDelta& d : counts) {
    if (time && d.time != *time) continue;
    const double v = d.delta ? std::fabs(*d.delta) : (d.model > 0 ? INFINITY : 0.0);
    if (!w || v > *w) {
      w = v;
      if (which) *which = d.count;
    }
  }
  return w;
}

std::string ActivityComparison::describe() const {
  std::string out;
  for (const CountDelta& d : counts) {
    if (!d.off) continue;
    if (!out.empty()) out += "; ";
    out += fmt::format("{} model {} rtl {} ({})", d.count, d.model, d.rtl,
                       d.delta ? fmt::format("{:+.2f}%{}", 100 * *d.delta, d.time ? " of the RTL's PE clocks" : "")
                               : std::string("rtl counted none"));
  }
  return out;
}

ActivityComparison compare_activity(const Activity& model, const Activity& rtl, const std::vector<std::string>& model_unavailable,
                                    const std::vector<std::string>& rtl_unavailable, const CheckPolicy& policy) {
  ActivityComparison c;
  const std::uint64_t span = rtl.pe_busy_cycles + rtl.pe_idle_cycles;
  for (const Activity::Field& f : Activity::fields()) {
    if (listed(model_unavailable, f.name) || listed(rtl_unavailable, f.name)) {
      c.unavailable.push_back(f.name);
      continue;
    }
    const bool time = f.member == &Activity::pe_busy_cycles || f.member == &Activity::pe_idle_cycles;
    CountDelta d{f.name, model.*f.member, rtl.*f.member, std::nullopt, false, time};
    const std::uint64_t against = time ? span : d.rtl;
    if (d.model == d.rtl) {
      d.delta = 0.0;  // equal, zeros included
    } else if (against > 0) {
      d.delta = (static_cast<double>(d.model) - static_cast<double>(d.rtl)) / static_cast<double>(against);
      d.off = std::fabs(*d.delta) > (time ? policy.deviation_bound : policy.activity_deviation_bound);
      c.max_abs_delta = std::max(c.max_abs_delta.value_or(0.0), std::fabs(*d.delta));
    } else {
      d.off = d.model > 0;
    }
    c.counts.push_back(std::move(d));
  }
  return c;
}

ActivityComparison compare_activity(const BackendActivity& a, const CheckPolicy& policy) {
  if (!a.model || !a.rtl) return {};
  return compare_activity(*a.model, *a.rtl, a.model_unavailable, a.rtl_unavailable, policy);
}

BackendActivity finished_activity(const StreamResult* model, const StreamResult* rtl) {
  BackendActivity a;
  if (model && model->completed) a.model = model->activity, a.model_unavailable = model->activity_unavailable;
  if (rtl && rtl->completed) a.rtl = rtl->activity, a.rtl_unavailable = rtl->activity_unavailable;
  return a;
}

ActivityFloor activity_floor(const Task& t) {
  ActivityFloor f;
  const std::uint64_t pes = t.pes().size();
  f.mac_ops = pes * t.macs_per_pe();
  // int8 operands, int32 results (thesis equations 2.5 / 2.6 before alignment)
  if (t.op == Op::Conv) {
    const ConvShape& s = t.conv;
    f.operand_a_read_bytes = pes * std::uint64_t(s.Wf) * s.Hf * s.D * s.C;
    f.operand_b_read_bytes = pes * std::uint64_t(s.Wi) * s.Hi * s.D;
    f.result_write_bytes = pes * 4 * std::uint64_t(s.Wo()) * s.Ho() * s.C;
  } else {
    const MmShape& s = t.mm;
    f.operand_a_read_bytes = pes * std::uint64_t(s.W_A) * s.H_A;
    f.operand_b_read_bytes = pes * std::uint64_t(s.W_B) * s.H_B;
    f.result_write_bytes = pes * 4 * std::uint64_t(s.W_B) * s.H_A;
  }
  return f;
}

std::vector<std::string> activity_below_floor(const Activity& a, const ActivityFloor& f, const std::vector<std::string>& unavailable) {
  std::vector<std::string> out;
  const auto check = [&](const char* what, std::uint64_t got, std::uint64_t floor, std::initializer_list<const char*> counts) {
    for (const char* c : counts)
      if (listed(unavailable, c)) return;
    if (got < floor) out.push_back(fmt::format("{} {} < {} the work implies", what, got, floor));
  };
  check("mac_ops", a.mac_ops, f.mac_ops, {"mac_ops"});
  check("operand A bytes read (sram_read_bytes_mla_a + sram_read_bytes_dma)", a.sram_read_bytes_mla_a + a.sram_read_bytes_dma,
        f.operand_a_read_bytes, {"sram_read_bytes_mla_a", "sram_read_bytes_dma"});
  check("sram_read_bytes_mla_b", a.sram_read_bytes_mla_b, f.operand_b_read_bytes, {"sram_read_bytes_mla_b"});
  check("sram_write_bytes_mla_out", a.sram_write_bytes_mla_out, f.result_write_bytes, {"sram_write_bytes_mla_out"});
  check("dram_read_bytes", a.dram_read_bytes, f.dram_read_bytes, {"dram_read_bytes"});
  check("dram_write_bytes", a.dram_write_bytes, f.dram_write_bytes, {"dram_write_bytes"});
  return out;
}

}  // namespace s2
