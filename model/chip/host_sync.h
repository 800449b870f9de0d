// The host's side of a Sync (thesis 3.4): each PE of a Sync group sends the host a message at its Sync;
// once the group's last message is in, the host releases them all, its release reaching a PE a host
// latency and the hops to the PE's agent after the latest message came in (model/chip/system.h). The
// model's System (SystemC) and the RTL backend's host (clocked) both keep their Syncs here, so their
// Syncs cannot drift apart. `Time` is the caller's: sc_time in the model, PE clocks in the RTL.
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <utility>
#include <vector>

#include "model/task_stream.h"

namespace s2 {

template <typename Time>
class HostSync {
 public:
  // A stream starts: its groups' sizes, no message in.
  void start(const TaskStream& s) {
    points_.clear();
    const std::size_t groups = s.sync_groups.empty() ? 1 : s.sync_groups.size();
    group_size_.assign(groups, 0);
    for (std::size_t g = 0; g < groups; ++g) group_size_[g] = static_cast<int>(s.sync_group_members(static_cast<int>(g)).size());
  }
  // A PE's message for the `index`-th Sync of `group` reaches the host at `at_host`; true if it was the
  // group's last.
  bool arrive(int group, std::size_t index, Time at_host) {
    Point& p = points_[{group, index}];
    p.latest = std::max(p.latest, at_host);
    return ++p.arrived == group_size_[static_cast<std::size_t>(group)];
  }
  // Whether every PE of the group has reached the Sync (the host can release them).
  bool complete(int group, std::size_t index) const {
    const auto it = points_.find({group, index});
    return it != points_.end() && it->second.arrived == group_size_[static_cast<std::size_t>(group)];
  }
  // The last message's arrival at the host.
  Time latest(int group, std::size_t index) const { return points_.at({group, index}).latest; }

 private:
  struct Point {
    int arrived = 0;
    Time latest{};  // zero
  };
  std::map<std::pair<int, std::size_t>, Point> points_;  // by group and index
  std::vector<int> group_size_;
};

}  // namespace s2
