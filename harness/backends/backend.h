// The one interface both the reference model and the RTL implement: run one task, return a trace.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <array>
#include <vector>

#include "model/golden.h"
#include "model/hw_config.h"
#include "model/sram_layout.h"
#include "model/task.h"
#include "model/task_stream.h"
#include "model/trace.h"

namespace s2 {

// A result word that was never written: both backends fill result areas with it before a task. It is
// not a 29-bit sign extension, so no correct result can equal it.
inline constexpr std::uint32_t kUnwrittenResult = 0x7fffffffu;

// What every backend loads before a task: each PE's operands at the layout's places (make_operands),
// and its result area filled with kUnwrittenResult.
inline std::array<std::vector<std::uint8_t>, kPesPerQpe> initial_sram_images(const Task& t, const HwConfig& cfg,
                                                                              const SramLayout& l) {
  std::array<std::vector<std::uint8_t>, kPesPerQpe> images;
  for (int p = 0; p < kPesPerQpe; ++p) {
    images[p] = pack_sram_image(t, cfg, l, make_operands(t, p));
    for (std::uint32_t b = l.o_base; b + 4 <= l.o_base + l.o_bytes; b += 4)
      for (int k = 0; k < 4; ++k) images[p][b + k] = static_cast<std::uint8_t>(kUnwrittenResult >> (8 * k));
  }
  return images;
}

using SramImages = std::array<std::vector<std::uint8_t>, kPesPerQpe>;

struct RunOptions {
  std::uint64_t watchdog_cycles = 0;  // stop after this many PE clocks from the start (0 = no limit)
  const WaveWindow* waves = nullptr;  // dump this window of the run (null: no waveform, nothing traced)
  // The task's initial SRAM images (initial_sram_images), prepared once by the caller for every backend,
  // so that drawing test data is not counted as backend time. If null the backend prepares them itself.
  const SramImages* sram_images = nullptr;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Loads the task's data (make_operands) into SRAM, runs it, and reads the results back.
  virtual TaskTrace run(const Task& task, const RunOptions& options) = 0;
  virtual const HwConfig& config() const = 0;
};

std::unique_ptr<Backend> make_model_backend(const HwConfig& cfg);

// Stream backends run a task stream (model/task_stream.h) on the system of their configuration
// (HwConfig::chip), starting from `mem` and leaving in it what the stream wrote. Throws
// std::invalid_argument, before anything runs, for a stream the system cannot run.
class StreamBackend {
 public:
  virtual ~StreamBackend() = default;
  virtual std::string name() const = 0;
  virtual StreamResult run(const TaskStream& s, SystemMemory& mem, const StreamRunOptions& opt) = 0;
  // Why this backend cannot run `s` at all (what run would refuse with, for something the backend lacks,
  // not for a bad stream), or "" if it can: lets a caller run the stream elsewhere without losing anything.
  virtual std::string refusal(const TaskStream& s) const {
    (void)s;
    return "";
  }
  // One DRAM (QPE-DRAM): `dram` in and out.
  StreamResult run(const TaskStream& s, std::vector<std::uint8_t>& dram, const StreamRunOptions& opt) {
    SystemMemory mem;
    mem.drams.push_back(std::move(dram));
    StreamResult r = run(s, mem, opt);
    dram = std::move(mem.drams.front());
    return r;
  }
};
// The model of cfg.chip (QPE-DRAM or the chip).
std::unique_ptr<StreamBackend> make_model_stream_backend(const HwConfig& cfg);

// How the chip RTL is simulated, not what it is: a run's results are the same for every choice, only its
// wall time differs (tests/chip_rtl_eval_test.cpp holds them equal).
struct RtlSimOptions {
  int threads = 0;           // threads evaluating the QPEs in parallel, the caller's included; 0: the machine's cores
  bool active_only = true;   // evaluate a QPE only while something is in flight in it or arrives at it (--rtl-eval active)
  int resolved_threads() const;  // threads, 0 resolved to the machine's cores
  std::string describe() const;  // "2 threads, active QPEs only"
};
// QPE-DRAM or the chip on the Verilated RTL (harness/backends/rtl/rtl_chip.h); throws as make_rtl_backend does.
std::unique_ptr<StreamBackend> make_rtl_stream_backend(const HwConfig& cfg, const RtlSimOptions& sim = {});
// Throws std::runtime_error if no RTL build matches cfg (MAC shape, or parameters the RTL fixes).
std::unique_ptr<Backend> make_rtl_backend(const HwConfig& cfg);

}  // namespace s2
