#include "harness/check/check_policy.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "model/hw_config.h"
#include "model/json_field.h"

namespace s2 {

std::string deviation_bound_problem(double bound) {
  if (std::isfinite(bound) && bound >= 0.0 && bound <= 1.0) return "";
  return fmt::format("expected a fraction from 0 to 1 (0.02 is 2%), got {}", bound);
}

void validate(const CheckPolicy& p) {
  if (const std::string why = deviation_bound_problem(p.deviation_bound); !why.empty())
    throw std::invalid_argument("--deviation-bound: " + why);
  if (const std::string why = deviation_bound_problem(p.activity_deviation_bound); !why.empty())
    throw std::invalid_argument("activity deviation bound: " + why);
}

nlohmann::ordered_json to_json(const CheckPolicy& p) {
  const TaskBudget& t = p.task_budget;
  const StreamBudget& s = p.stream_budget;
  const BenchTargets& b = p.bench;
  const NetTargets& n = p.net;
  return {{"deviation_bound", p.deviation_bound},
          {"activity_deviation_bound", p.activity_deviation_bound},
          {"long_run_factor", p.long_run_factor},
          {"task_watchdog",
           {{"min_cycles", t.min_cycles},
            {"model_factor", t.model_factor},
            {"rtl_only_factor", t.rtl_only_factor},
            {"rtl_only_base_cycles", t.rtl_only_base}}},
          {"stream_watchdog",
           {{"model_factor", s.model_factor}, {"slack_cycles", s.slack_cycles}, {"rtl_only_cycles", s.rtl_only_cycles}}},
          {"bench_targets",
           {{"thesis_hdl_deviation", b.thesis_hdl_deviation},
            {"max_abs_delta", b.max_abs_delta},
            {"median_abs_delta", b.median_abs_delta},
            {"speed_ratio", b.speed_ratio},
            {"row_speed_ratio", b.row_speed_ratio},
            {"max_abs_count_delta", b.max_abs_count_delta}}},
          {"net_targets",
           {{"thesis_block_deviation", n.thesis_block_deviation},
            {"thesis_category_deviation", n.thesis_category_deviation},
            {"thesis_sum_deviation", n.thesis_sum_deviation},
            {"float_reference_correlation", n.float_reference_correlation},
            {"whole_model_wall_seconds", n.whole_model_wall_seconds},
            {"whole_timing_only_wall_seconds", n.whole_timing_only_wall_seconds},
            {"chip_speed_ratio", n.chip_speed_ratio},
            {"rtl_two_thread_speedup", n.rtl_two_thread_speedup},
            {"rtl_active_speedup", n.rtl_active_speedup},
            {"whole_both_wall_seconds", n.whole_both_wall_seconds}}}};
}

std::string policy_hash(const CheckPolicy& p) { return text_hash(to_json(p).dump()); }

std::string policy_line(const CheckPolicy& p) {
  const TaskBudget& t = p.task_budget;
  const StreamBudget& s = p.stream_budget;
  return fmt::format("deviation bound {:g}% (activity counts {:g}%), a PE longer than {:g}x the model flagged; watchdog: a task {:g}x the model's "
                     "clocks (at least {}; RTL alone {:g}x its MLA work + {}), a stream {}x + {} (policy hash {})",
                     100 * p.deviation_bound, 100 * p.activity_deviation_bound, p.long_run_factor, t.model_factor, t.min_cycles, t.rtl_only_factor,
                     t.rtl_only_base, s.model_factor, s.slack_cycles, policy_hash(p));
}

namespace {

// The member `key` of `j`, an object: "field 'KEY': missing" or "... expected an object" otherwise.
const nlohmann::json& object_member(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) throw std::invalid_argument(std::string("field '") + key + "': missing");
  if (!j.at(key).is_object()) throw std::invalid_argument(std::string("field '") + key + "': expected an object");
  return j.at(key);
}

}  // namespace

CheckPolicy check_policy_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("expected an object");
  CheckPolicy p;
  p.deviation_bound = json_member<double>(j, "deviation_bound");
  // reports from before activity counts were compared were judged without them: the defaults stand in
  p.activity_deviation_bound = json_member_or<double>(j, "activity_deviation_bound", p.activity_deviation_bound);
  p.long_run_factor = json_member<double>(j, "long_run_factor");
  const nlohmann::json& t = object_member(j, "task_watchdog");
  p.task_budget = {json_member<std::uint64_t>(t, "min_cycles"), json_member<double>(t, "model_factor"),
                   json_member<double>(t, "rtl_only_factor"), json_member<std::uint64_t>(t, "rtl_only_base_cycles")};
  const nlohmann::json& s = object_member(j, "stream_watchdog");
  p.stream_budget = {json_member<std::uint64_t>(s, "model_factor"), json_member<std::uint64_t>(s, "slack_cycles"),
                     json_member<std::uint64_t>(s, "rtl_only_cycles")};
  const nlohmann::json& b = object_member(j, "bench_targets");
  p.bench = {json_member<double>(b, "thesis_hdl_deviation"), json_member<double>(b, "max_abs_delta"),
             json_member<double>(b, "median_abs_delta"), json_member<double>(b, "speed_ratio"),
             json_member<double>(b, "row_speed_ratio"), json_member_or<double>(b, "max_abs_count_delta", 0.01)};
  const nlohmann::json& n = object_member(j, "net_targets");
  p.net = {json_member<double>(n, "thesis_block_deviation"), json_member<double>(n, "thesis_category_deviation"),
           json_member<double>(n, "thesis_sum_deviation"), json_member<double>(n, "float_reference_correlation"),
           json_member<double>(n, "whole_model_wall_seconds"),
           json_member_or<double>(n, "whole_timing_only_wall_seconds", NetTargets{}.whole_timing_only_wall_seconds),
           json_member<double>(n, "chip_speed_ratio"),
           json_member_or<double>(n, "rtl_two_thread_speedup", NetTargets{}.rtl_two_thread_speedup),
           json_member_or<double>(n, "rtl_active_speedup", NetTargets{}.rtl_active_speedup),
           json_member_or<double>(n, "whole_both_wall_seconds", NetTargets{}.whole_both_wall_seconds)};
  return p;
}

}  // namespace s2
