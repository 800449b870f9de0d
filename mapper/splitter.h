// The splitter (thesis 4.2, Appendices A and B): cuts each operation block's core operation into pieces
// that fit one PE's SRAM budget after alignment (equations 2.5/2.6), keeping the MAC array as busy as it
// can be first. Only the core operation is split; the rest of the block follows its pieces.
//
// Convolution block (thesis 4.2.1, order C -> W_o/H_o -> D):
//   1. C alone, the whole input in every piece; if nothing fits, pieces of MAC-rows filters.
//   2. Output width and height into balanced parts (sizes differ by one step; the step is the fused
//      pooling's stride, so that pooling never straddles two pieces): the scheme with the highest MAC
//      utilisation, then the fewest aligned bytes moved into and out of the PEs (Appendix A: overlap
//      and alignment padding), then the fewest pieces.
//   3. Only if no output split fits: input channels D into the fewest equal parts (their partial sums
//      are added by the ARM).
// Pooling block (4.2.2): channels first, then output width and height. MM block (4.2.3, Appendix B):
// the weight's width W_B and height H_B into power-of-two pieces, the largest that fit, square first, then
// the taller (fewer partial sums to add).
// At least `min_pieces` pieces (or as many as a small layer has): 4 for QPE-DRAM, 128 for SpiNNaker2 (which also keeps room for a second
// filter buffer, thesis 5.3.1/5.5).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/hw_config.h"
#include "model/sram_layout.h"
#include "model/task.h"
#include "parser.h"

namespace s2::mapper {

enum class Target { Qpe, SpiNNaker2 };
const char* to_string(Target t);  // "qpe" | "s2"
Target parse_target(const std::string& s);
// The system a target runs on, in cfg.chip: QPE-DRAM for qpe (a preset is an error); for s2 the preset named,
// or the prototype where none is named and cfg has no chip of its own. Throws std::invalid_argument for the user.
void apply_target(HwConfig& cfg, Target t, const std::string& preset);

struct SplitRules {
  Target target = Target::Qpe;
  // all from the configuration (split_rules)
  std::uint64_t min_pieces = 0;            // the PEs that work (fewer for a layer with fewer pieces)
  std::uint64_t work_pes = 0;              // the PEs that work
  // MM blocks: at least this many column (W_B) parts, where a block has its own worker count: the
  // distributor deals column parts to PEs, so fewer parts would leave workers idle
  std::uint64_t min_column_parts = 0;
  std::uint64_t budget_bytes = 0;          // SRAM for MLA data (HwConfig::sram_mla_budget_bytes)
  bool second_filter_buffer = false;       // SpiNNaker2: room for the next filters while migrating
  int mac_rows = 0, mac_cols = 0;
};
SplitRules split_rules(Target t, const HwConfig& cfg);
// The SRAM a piece needs: its aligned operands and results, plus a second weight buffer where the rules
// keep one (the weight is operand A of a convolution, operand B of a matrix multiplication).
std::uint64_t piece_footprint_bytes(const AlignedSizes& a, BlockKind kind, const SplitRules& r);

// The sizes of one dimension's parts in order (e.g. 21,21,21,21,20,... for 224 rows in 11 parts).
struct Parts {
  std::vector<int> sizes;
  int count() const { return static_cast<int>(sizes.size()); }
  int begin(int i) const;  // offset of part i
  int largest() const;
  std::string to_string() const;  // "21x4,20x7"
};
// n into k parts whose sizes are multiples of `step` (the last may be the remainder), differing by at most
// one step; empty if impossible.
Parts balanced_parts(int n, int k, int step);

// One group of identical pieces, as a row of thesis Table G.2.
struct PieceGroup {
  std::uint64_t count = 0;
  std::string shape;                 // e.g. "[226,23,3]x[3,3,3,4]" or "[256,1]x[256,256]"
  AlignedSizes aligned;              // equation 2.5 / 2.6 (output 32 bits per value)
  AlignedSizes raw;                  // before alignment (8-bit operands, 32-bit results)
  double mac_utilization = 0;        // equation 5.3 (valid results / MAC lanes used)
  double sram_utilization = 0;       // equation 5.2: raw total / the SRAM budget
};

// The distributor's strategies (distributor.h, thesis 4.3): what a mapping file may choose per block.
enum class Strategy { NofuseNoreuse, FuseNoreuse, FuseReuse };
const char* to_string(Strategy s);              // "nofuse_noreuse" | "fuse_noreuse" | "fuse_reuse"
Strategy parse_strategy(const std::string& s);  // throws std::invalid_argument listing the names
inline constexpr Strategy kAllStrategies[] = {Strategy::NofuseNoreuse, Strategy::FuseNoreuse, Strategy::FuseReuse};

// How a PE works through its pieces (docs/usage.md, "Overlap"): `thesis`, each run of the MLA, then the ARM's passes
// over its results one by one (ACTI, QUAN, ...), then their store, before the next run starts (the thesis's
// strategies); `overlapped`, the MLA computes the next run into a second result area while the ARM finishes the
// one before and the DMA stores it, and a ReLU on the int32 sums goes into the quantization's pass (its
// saturation clamps at zero). Chip fuse_reuse only, where the second result area fits the SRAM budget;
// elsewhere a block runs as `thesis`.
enum class Schedule { Thesis, Overlapped };
const char* to_string(Schedule s);  // "thesis" | "overlapped"
Schedule parse_schedule(const std::string& s);

struct BlockSplit {
  std::string name;                  // the block's core operation
  Schedule schedule = Schedule::Thesis;
  std::optional<Strategy> strategy;  // a mapping file's strategy for the block (run-net --whole runs it), if any
  BlockKind kind = BlockKind::Convolution;
  // conv: output width, height (before the fused pooling), filters C, input channels D
  // pool: output width, height, channels; mm: W_B, H_B
  Parts w, h, c, d;
  std::uint64_t pieces = 0;
  std::vector<PieceGroup> groups;
  double mac_utilization = 0;        // over all pieces, weighted by their MAC lanes
  double sram_utilization_max = 0;
  std::uint64_t aligned_bytes_moved = 0;  // every piece's aligned inputs, weights and outputs
  std::uint64_t partial_sum_adds = 0;     // element-wise additions of partial results (FCE, D splits)
};

BlockSplit split_block(const OperationBlock& b, const SplitRules& rules);

struct NetworkSplit {
  std::string network;
  SplitRules rules;
  std::vector<BlockSplit> blocks;
};
NetworkSplit split_network(const ParsedNetwork& n, const SplitRules& rules);

// A split chosen by hand instead of searched (thesis 5.5: its splits were "manually adjusted"; Appendix I
// prints them). Convolution blocks only: output width, height, filters and input channels in parts.
struct SplitChoice {
  std::string operation;  // the block's core operation, e.g. CONV_5
  Parts w, h, c, d;       // d empty: the input channels whole
  std::string source;     // "file:line", for errors
  // a mapping file's options (`strategy=S`, `schedule=S`): the strategy run-net --whole runs the block in and its
  // schedule (none: the run's)
  std::optional<Strategy> strategy;
  std::optional<Schedule> schedule;
};
// Parts as `map` prints them: SIZExCOUNT groups joined by commas, e.g. "14x2,12x7". Throws
// std::invalid_argument saying what is wrong.
Parts parse_parts(const std::string& text);
// A split file: one line per block, "OPERATION W_PARTS H_PARTS C_PARTS [D_PARTS]"; '#' starts a comment. A
// mapping file (s2cosim tune's, run-net --mapping) is a split file whose lines may end in options:
// `strategy=nofuse_noreuse|fuse_noreuse|fuse_reuse` and `schedule=thesis|overlapped`.
// Throws std::invalid_argument naming the file, line and field.
inline constexpr std::uintmax_t kMaxSplitFileBytes = 1u << 20;
std::vector<SplitChoice> read_split_file(const std::string& path);
// The same for the text of a split file; `path` names it in messages.
std::vector<SplitChoice> parse_split_file(const std::string& text, const std::string& path);
// The block split as chosen: the parts must cover the output's width and height (in multiples of a fused
// pooling's stride, but the last part), the filters (in multiples of the MAC rows, but the last) and the
// input channels, and the largest piece must fit the rules' SRAM budget. Throws std::invalid_argument
// naming the choice's source, the field and what was expected.
BlockSplit split_block_as(const OperationBlock& b, const SplitRules& rules, const SplitChoice& choice);
// The network's split with the chosen blocks as chosen (a choice naming no block of the network is an
// error) and the others searched.
NetworkSplit split_network(const ParsedNetwork& n, const SplitRules& rules, const std::vector<SplitChoice>& chosen);

// The MLA task of piece (iw, ih, ic, id) of a convolution block: its input window at stride 1 (a strided
// convolution runs at stride 1, and every stride-th result is kept: thesis 5.2.2), input offset in the
// block's padded input, and output offset.
struct ConvPiece {
  ConvShape task;
  int x0 = 0, y0 = 0, c0 = 0, d0 = 0;      // offsets in the padded input (x, y), filters, input channels
  int out_x0 = 0, out_y0 = 0;              // offsets of its results in the convolution's output
  int out_w = 0, out_h = 0;                // results kept
};
ConvPiece conv_piece(const OperationBlock& b, const BlockSplit& s, int iw, int ih, int ic, int id);
// The MLA task of piece (iw, ih) of an MM block: A = the input vector's H_B-part, B = the weight piece.
struct MmPiece {
  MmShape task;
  int col0 = 0, row0 = 0;  // W_B and H_B offsets of the weight piece
};
MmPiece mm_piece(const OperationBlock& b, const BlockSplit& s, int iw, int ih);

// An element-wise operation's parameters for c channels of a piece, in SRAM: its table (256 bytes, or 256 per
// channel), an affine's int32 m and o per channel, a channel multiply's int8 factors (aligned to 16 bytes).
std::uint64_t elementwise_param_bytes(const ElementwiseSpec& e, int c);

}  // namespace s2::mapper
