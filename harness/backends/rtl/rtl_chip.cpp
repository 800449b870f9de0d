// Task streams on the RTL backend: RtlChip (rtl_chip.h) over the linked Verilated QPEs (linked_qpes.h), the
// build for the configuration's MAC shape, with its traced build for waveforms.
#include "harness/backends/rtl/rtl_chip.h"

#include <memory>

#include "harness/backends/backend.h"
#include "harness/backends/rtl/linked_qpes.h"
#include "harness/backends/rtl/qpe_top.h"

namespace s2 {
namespace {

template <typename V, typename VT>
using LinkedRtlChip = RtlChip<LinkedQpes<V>, LinkedQpes<VT>>;

}  // namespace

std::unique_ptr<StreamBackend> make_rtl_stream_backend(const HwConfig& cfg) {
  return for_mac_shape<StreamBackend, LinkedRtlChip>(cfg);
}

}  // namespace s2
