// The program a system runs (thesis 4.3, 4.4): per PE of the chip, a list of commands its ARM core carries
// out one after the other: DMA transfers between the PE's SRAM and a DRAM or another PE's SRAM, MLA
// tasks, ARM element-wise operations, and synchronisation of groups of PEs through the host. QPE-DRAM is
// the one-QPE, one-DRAM case. The distributor (mapper/distributor.h) writes streams; every backend that
// models the system executes them (docs/contracts.md, "Task streams").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/activity.h"
#include "model/task.h"

namespace s2 {

// The memory at the far end of a DMA transfer: DRAM `index`, or the SRAM of chip PE `index` (QPE q's PE p
// is q * kPesPerQpe + p; QPEs numbered row by row, ChipShape::qpe_index).
struct MemoryRef {
  enum class Kind { Dram, Sram };
  Kind kind = Kind::Dram;
  int index = 0;
  bool operator==(const MemoryRef& o) const { return kind == o.kind && index == o.index; }
};
std::string to_string(const MemoryRef& m);  // "DRAM 2", "SRAM of PE 17 (QPE 4, PE 1)"

// A 3-D strided copy: `planes` x `rows` rows of `row_bytes` bytes between the PE's SRAM and `remote`;
// the dram_* fields address the remote memory (a DRAM, or another PE's SRAM). Each side has its strides.
struct DmaTransfer {
  MemoryRef remote;
  std::uint64_t dram_addr = 0;
  std::uint64_t dram_row_stride = 0, dram_plane_stride = 0;
  std::uint32_t sram_addr = 0;
  std::uint32_t sram_row_stride = 0, sram_plane_stride = 0;
  std::uint32_t row_bytes = 0, rows = 1, planes = 1;
  std::uint64_t bytes() const { return std::uint64_t(row_bytes) * rows * planes; }
};

// ARM element-wise operations (thesis 4.1; costs: arm_op_cycles, docs/arm_clocks.md). Data sits in the PE's SRAM as planes of
// rows: `planes` x `height` x `width` values, `src_row_stride` bytes between rows of the source.
enum class ArmOpKind {
  Pad,          // int8 in place: zero a border of `pad_*` pixels around each width x height plane
  Relu32,       // int32 in place: max(0, x)
  Quantize,     // int32 -> int8: x >> shift, saturated to [-128, 127]
  MaxPool8,     // int8 -> int8: window x window_h maximum every `stride` pixels
  AddInt32,     // int32: dst += src (partial sums of a split reduction, FCE_x)
  AddInt8,      // int8: dst = dst + src saturated to [-128, 127] (a residual block's shortcut, MAT_ELE_x); [0, 127] with relu
  Relu8,        // int8 in place: max(0, x)
  AvgPool8,     // int8 -> int8: window x window_h sum / (window x window_h) (truncated toward zero) every `stride` pixels
  // SNN synaptic processing on the ARM (mapper/snn/; costs are assumptions, ArmOpClocks):
  MacInt8,      // int32 dst[plane][row][x] += sum over k < depth of a(row, k) * w[plane][k][x]: a at src (int8,
                // src_row_stride per row, a_col_stride per k; zero values skipped, as a spike-driven loop does),
                // w at `weights` (int8, weights_row_stride per k, weights_plane_stride per plane), wrapping
  PermuteWords, // 32-bit words in place, per plane of `width` words: new[table[s]] = old[s], table at `table`
                // (uint16 per word; a permutation), cycle by cycle with one word held (the paper's Circle Reverse)
  Copy8,        // int8 planes x height rows of `width` bytes from src to dst (each side its strides)
  // A network's element-wise operations on int8 maps (mapper's Elementwise blocks; docs/real_networks.md), each
  // saturated to [-128, 127] (to [0, 127] with `relu`); `>>` is arithmetic, r = 2^(shift-1) if shift > 0, else 0:
  Table8,       // in place: x = t[x + 128], the 256-byte table of plane d at table + d * table_plane_step
  Affine8,      // in place: x = (x * m + o) >> shift, plane d's int32 m and o at table + 8 d (wrapping 32-bit)
  AddScaled8,   // dst = ((dst << shift_a) + (src << shift_b) + r) >> shift
  Mul8,         // dst = (dst * src + r) >> shift
  ChannelMul8,  // in place: x = (x * f[d] + r) >> shift, plane d's int8 factor f[d] at table + d
  // A max pooling folded into the quantization (the overlapped schedule's fused pooling): int32 -> int8, output
  // (y, x) of plane d = Quantize's value of the largest of its window x window_h sums every `stride` pixels, each
  // plus plane d's bias (wrapping): the same int8 as Quantize then MaxPool8, the quantization being monotone.
  // height x width are the sums' (as MaxPool8's input), col_step as Quantize's; the bias and the shift are one per
  // plane (bias_plane_step; bias_row_step and bias_col_step 0).
  QuantizeMaxPool,
  // The shortcut's addition folded into the quantization (the overlapped schedule): int32 -> int8, each value
  // Quantize's (bias, shift, saturate_high; saturate_low must be -128), then plus the int8 at the same place of
  // `addend` (laid out as the destination: dst_row_stride, its plane stride), saturated to [-128, 127] ([0, 127]
  // with `relu`): the same int8 as Quantize then AddInt8, in one pass.
  QuantizeAdd,
};
const char* to_string(ArmOpKind k);

struct ArmCommand {
  ArmOpKind kind = ArmOpKind::Relu32;
  std::uint32_t src = 0, dst = 0;              // SRAM byte addresses (in place ops use src)
  std::uint32_t planes = 1, height = 1, width = 1;
  std::uint32_t src_row_stride = 0, dst_row_stride = 0;  // bytes
  std::uint32_t src_plane_stride = 0;          // bytes, 0 = height x src_row_stride
  std::uint32_t dst_plane_stride = 0;          // bytes, 0 = height x dst_row_stride (pooling: output rows)
  std::uint32_t pad_left = 0, pad_right = 0, pad_top = 0, pad_bottom = 0;  // Pad: width/height include them
  int shift = 0;                               // Quantize, Affine8, AddScaled8, Mul8, ChannelMul8: right shift
  int window = 2;                              // MaxPool8, AvgPool8, QuantizeMaxPool: the window's width (output = (width - window) / stride + 1 columns)
  int window_h = 0;                            // MaxPool8, AvgPool8, QuantizeMaxPool: its height, 0 = window (a global pooling of a non-square map)
  int stride = 0;                              // MaxPool8, AvgPool8, QuantizeMaxPool: 0 = window
  // Relu32, Quantize, AddInt32: the source's pixel x of a row is its column x * col_step (AddInt32: the
  // destination's too) (a strided convolution's
  // MLA computes every column at stride 1; the ARM takes every col_step-th). Width counts pixels taken.
  std::uint32_t col_step = 1;
  // Relu32, Quantize: a layer's per-channel int32 bias, added (wrapping, 32 bits) to each value before the
  // ReLU or the shift, by the first of them to pass over the sums (the distributor sets it on that one
  // only). The bias is data like the weights: it sits in the block's DRAM image and the DMA loads the
  // piece's slice into SRAM at `bias_addr` (int32 values) before the ARM reads it. Value (d, y, x) of the
  // command takes the int32 at bias_addr + 4 * (d * bias_plane_step + y * bias_row_step + x * bias_col_step):
  // a convolution's planes are its filters (or, one task per output row, its rows are), an FC's columns are.
  bool add_bias = false;
  std::uint32_t bias_addr = 0;
  // Quantize: a right shift per output channel (a layer quantized with per-channel weight scales), the uint8 at
  // shift_addr + (d * bias_plane_step + y * bias_row_step + x * bias_col_step) instead of `shift`: the DMA loads
  // the piece's slice of them as it does the bias's, and the steps index both
  bool per_channel_shift = false;
  std::uint32_t shift_addr = 0;
  std::uint32_t bias_plane_step = 0, bias_row_step = 0, bias_col_step = 0;
  // Quantize: the largest int8 result (127; lower for a clamp such as ReLU6's at the quantized 6)
  int saturate_high = 127;
  // Quantize: the smallest, -128 or 0 (a ReLU on the int32 sums folded into the pass: its `_relu` kernel)
  int saturate_low = -128;
  // MacInt8: operand a's bytes between consecutive k (1: a plain vector; 4: the MLA's operand-A layout of
  // four rows), the weights, and the reduction's length
  std::uint32_t a_col_stride = 1, depth = 0;
  std::uint32_t weights = 0, weights_row_stride = 0, weights_plane_stride = 0;
  // PermuteWords: where its table sits; Table8, Affine8, ChannelMul8: their table, parameters or factors
  std::uint32_t table = 0;
  // QuantizeAdd: the int8 map added (SRAM byte address, the destination's layout)
  std::uint32_t addend = 0;
  std::uint32_t table_plane_step = 0;  // Table8: bytes between planes' tables (0: one table for all)
  int shift_a = 0, shift_b = 0;        // AddScaled8: the operands' left shifts
  bool relu = false;                   // Affine8, AddScaled8, AddInt8: max(0, .) before saturating (AddInt8's `_relu` kernel)
  int pool_stride() const { return stride > 0 ? stride : window; }
  int window_height() const { return window_h > 0 ? window_h : window; }
  std::size_t source_plane_stride() const {
    return src_plane_stride > 0 ? src_plane_stride : std::size_t(height) * src_row_stride;
  }
  std::size_t destination_plane_stride(std::size_t rows) const {
    return dst_plane_stride > 0 ? dst_plane_stride : rows * dst_row_stride;
  }
};

// DmaLoad, DmaStore and Mla wait for the engine to be idle, program it, and then wait for it to finish,
// unless `async`: then the ARM goes on at once and a later WaitDma / WaitMla (or the engine's next command)
// waits for it. The engines run alongside each other: a DMA moves the next piece while the MLA computes.
enum class CommandKind { DmaLoad, DmaStore, Mla, Arm, Sync, WaitDma, WaitMla };
const char* to_string(CommandKind k);

struct StreamCommand {
  CommandKind kind = CommandKind::Sync;
  std::string operation;  // the thesis operation it belongs to (CONV_1, ACTI_1, ...), for the report
  DmaTransfer dma;        // DmaLoad (remote -> SRAM), DmaStore (SRAM -> remote)
  Task mla;               // Mla: shape and operand-A source (strides as sram_layout(mla) gives them)
  std::uint32_t a_base = 0, b_base = 0, o_base = 0;  // Mla: where operands and results sit
  ArmCommand arm;         // Arm
  bool async = false;     // DmaLoad, DmaStore, Mla: do not wait for the engine to finish
  int sync_group = 0;     // Sync: the group of PEs it meets (TaskStream::sync_groups)
};

// A command of each kind, as the mapper's strategies and the chip's random streams write them (async false,
// sync group 0; set those after).
StreamCommand dma_command(CommandKind kind, const std::string& operation, const DmaTransfer& transfer);
StreamCommand arm_command(const std::string& operation, const ArmCommand& arm);
StreamCommand mla_command(const std::string& operation, const Task& task, std::uint32_t a_base, std::uint32_t b_base,
                          std::uint32_t o_base);
StreamCommand sync_command();

struct TaskStream {
  std::string name;       // e.g. "CONV_1 fuse_reuse"
  // per chip PE (index q * kPesPerQpe + p); QPE-DRAM streams have kPesPerQpe
  std::vector<std::vector<StreamCommand>> pe = std::vector<std::vector<StreamCommand>>(kPesPerQpe);
  std::uint64_t dram_bytes = 0;  // bytes every DRAM the stream addresses holds (from 0)
  // The PEs of each Sync group; none given: group 0 is every PE of the stream. The k-th Sync of group g
  // of a PE meets the k-th Sync of group g of every other PE of the group.
  std::vector<std::vector<int>> sync_groups;
  std::vector<int> sync_group_members(int g) const;
};

// A waveform of a run: an FST trace of the PE clocks [begin_cycle, end_cycle), counted from the task's first
// start (a task) or the host's start (a stream), written to `path` (a task: the file; a stream: a directory
// that gets one file per QPE, qpe_xX_yY.fst). Only the RTL has waveforms; the model ignores it.
struct WaveWindow {
  std::string path;
  std::uint64_t begin_cycle = 0, end_cycle = 0;
};

struct StreamRunOptions {
  bool arm_ops_timed = true;  // false: element-wise operations complete at once (thesis Tables 5.5-5.8)
  const WaveWindow* waves = nullptr;  // dump this window of the run (null: no waveform, nothing traced)
  // give up after this many PE clocks and report what each PE waited for (`hang`); 0: the RTL has no
  // limit, the model takes stream_cycle_bound
  std::uint64_t watchdog_cycles = 0;
  // clocks and counts only (run-net --timing-only): no byte moved by a DMA, no MLA result computed, no
  // element-wise operation applied; the memories are left as they were. The timing does not depend on data.
  bool timing_only = false;
};

// A bound no run of `s` may reach, on any backend that works: every PE's commands one after the other
// (DMA transfers at 2 clocks per byte plus 64 per row, MLA tasks at 8 clocks per step or result write
// (mla_work_cycles), element-wise operations at their ARM clocks (arm_op_cycles), 10000 clocks per Sync), summed over
// the PEs, times 4, plus a million. The model's watchdog when none is given.
std::uint64_t stream_cycle_bound(const TaskStream& s, const HwConfig& cfg);

// Where a PE's time goes (PE clocks its ARM spent): waiting for its MLA, for DMA transfers with a DRAM, for
// DMA transfers between PEs' SRAMs over the NoC, at Syncs for other PEs, on element-wise operations.
enum class PeTime { Mla, Dram, Noc, Sync, Arm, kCount };
const char* to_string(PeTime t);  // "mla", "dram", "noc", "sync", "arm"

struct StreamResult {
  bool completed = false;
  std::string stalled;       // if not completed: what each PE was waiting for when the watchdog fired
  std::uint64_t cycles = 0;  // PE clocks from the host's start to the host hearing the last PE finish
  std::vector<std::uint64_t> pe_end_cycle;  // per PE of the stream, from the host's start
  // the PE clock (from the host's start) at which each PE's ARM was done with each of its commands (an
  // async command: when it was issued), for locating where two backends part (command_deviation)
  std::vector<std::vector<std::uint64_t>> command_end_cycle;
  std::uint64_t arm_cycles = 0;                          // ARM clocks of the element-wise ops, all PEs
  std::uint64_t dram_ops = 0;                            // 16-byte DRAM operations served
  std::uint64_t mla_tasks = 0;
  // model: PE clocks by PeTime, summed over the PEs with commands (the rest of their time: the host's
  // hand-over, and waiting for the last PE after their own end)
  std::array<std::uint64_t, static_cast<std::size_t>(PeTime::kCount)> pe_time{};
  std::uint64_t active_pes = 0;
  std::vector<std::uint64_t> dram_busy_cycles;  // model: per DRAM, clocks it served requests
  // model: the mesh link that carried the most packets (-1: no packet left its QPE)
  int busiest_link_from = -1, busiest_link_to = -1;
  std::uint64_t busiest_link_packets = 0;
  // What the backend did, counted where it happened (model/activity.h): the whole run; per PE of the system
  // (the counts of its MLA, SRAM and ARM); per DRAM (its bytes); per router (packets entering the NoC there,
  // and the links they leave it by). Each part holds only its own counts; the total holds them all.
  Activity activity;
  std::vector<Activity> pe_activity, dram_activity, router_activity;
  std::vector<std::string> activity_unavailable;  // counts this backend cannot observe: "not available"
  // RTL, how it was simulated (not part of what it did: any simulation gives the same figures above): QPE
  // NoC clocks evaluated, of all QPEs' NoC clocks simulated (activity-driven evaluation skips the rest)
  std::uint64_t qpe_clocks_evaluated = 0, qpe_clocks_simulated = 0;
};

// The memories a system's run starts from and leaves: its DRAMs (each resized to the stream's dram_bytes),
// and the SRAMs of the PEs listed in `sram` (loaded before the run from address 0, read back after it).
struct SystemMemory {
  std::vector<std::vector<std::uint8_t>> drams;
  std::map<int, std::vector<std::uint8_t>> sram;
};

// What a stream may address: the system's PEs and DRAMs.
struct StreamLimits {
  int pes = kPesPerQpe, drams = 1;
  std::uint32_t sram_bytes = 128 * 1024;
  std::vector<int> qpes_without_pes;  // mesh positions with a router only (ChipShape::routers_without_pes)
};

// What a stream may address on the system of cfg.chip (its PEs, DRAMs and SRAM size), for every backend.
StreamLimits stream_limits(const HwConfig& cfg);

// The memory one backend needs to run the stream, estimated before anything is allocated: an image of
// dram_bytes for each DRAM of the system, every PE's SRAM and the commands. What a backend allocates besides
// (its queues and traces) does not grow with the stream's data or the configuration's latencies and clocks.
std::uint64_t stream_memory_bytes(const TaskStream& s, const StreamLimits& limits);
// The most stream_memory_bytes may be: 8 GiB, so that both backends of a co-simulation and the harness's
// own copies of the images fit in a machine of 24 GB.
inline constexpr std::uint64_t kMaxStreamMemoryBytes = 8ull << 30;

// Throws std::invalid_argument naming the PE and command index of the first command that cannot run: a
// PE or memory beyond the system, SRAM or DRAM ranges out of bounds, a Sync of an unknown group or of a
// group the PE is not in, or a Sync that can never be met (group members with different Sync counts, or
// PEs waiting for each other in different orders); and a stream whose stream_memory_bytes exceeds
// kMaxStreamMemoryBytes, naming what it would need.
void check_stream(const TaskStream& s, const StreamLimits& limits);

}  // namespace s2
