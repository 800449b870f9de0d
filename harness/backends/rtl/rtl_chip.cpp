// Task streams on the RTL backend: RtlChip (rtl_chip.h) over the linked Verilated QPEs (linked_qpes.h), the
// build for the configuration's MAC shape, with its traced build for waveforms.
#include "harness/backends/rtl/rtl_chip.h"

#include <algorithm>
#include <memory>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "harness/backends/backend.h"
#include "harness/backends/rtl/linked_qpes.h"
#include "harness/backends/rtl/qpe_top.h"

namespace s2 {
namespace {

template <typename V, typename VT>
using LinkedRtlChip = RtlChip<LinkedQpes<V>, LinkedQpes<VT>>;

}  // namespace

int RtlSimOptions::resolved_threads() const {
  return threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}
std::string RtlSimOptions::describe() const {
  const int n = resolved_threads();
  return fmt::format("{} thread{}, {}", n, n == 1 ? "" : "s", active_only ? "active QPEs only" : "every QPE every clock");
}

std::unique_ptr<StreamBackend> make_rtl_stream_backend(const HwConfig& cfg, const RtlSimOptions& sim) {
  return for_mac_shape<StreamBackend, LinkedRtlChip>(cfg, sim);
}

}  // namespace s2
