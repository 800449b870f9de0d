// A convolution block's plan (thesis 4.3): its operations, sizes, the SRAM layout every piece shares and
// its DRAM layout; and what every strategy does with one piece: load its input window and filters, run
// the MLA, the block's element-wise operations, store the results. Pooling blocks load their windows the
// same way (pool_streams.h). Inside the distributor only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dram_layout.h"
#include "model/hw_config.h"
#include "model/task_stream.h"
#include "parser.h"
#include "splitter.h"
#include "workers.h"

namespace s2::mapper {

// How a piece's input rows reach the MLA, which only convolves at stride 1 (thesis 2.3.2): a strided
// convolution computes every column at stride 1 and keeps every stride-th (about half the MAC work is
// useful at stride 2: thesis 5.2.2), and skips the rows it does not need.
enum class RowMode {
  Window,    // stride 1: the piece's window, one task
  Gathered,  // 1-row filters, no padding: the DMA loads only every stride-th row, one task over them
  PerRow,    // taller filters: the whole window is loaded, one task per kept output row reads its Hf-row
             // band in place (REG_B_PLANE_ROWS = the window's rows)
};

struct ConvPlan {
  const OperationBlock* b = nullptr;
  const BlockSplit* s = nullptr;
  const Operation* conv = nullptr;
  const Operation* pool = nullptr;  // fused pooling, or null
  std::vector<const Operation*> tail;  // the block's operations after the core, in order
  HwConfig cfg;
  int pad = 0, stride = 1;
  int pad_end = 0;  // a ceil-mode pooling's extra zeros after the last row and column
  bool padded() const { return pad > 0 || pad_end > 0; }
  RowMode rows = RowMode::Window;
  Shape3 in;       // unpadded input
  int Wo = 0, Ho = 0, C = 0;  // convolution output
  int Wx = 0;                 // columns the MLA computes over the whole layer at stride 1: (Wo - 1) * stride + 1
  int Wp = 0, Hp = 0;         // block output (after the fused pooling)
  // common SRAM layout: operand B at 0, A, the results, a second result area for the partial sums of
  // input-channel parts after the first (o2), the shortcut's part (sc), the bias slice
  std::uint32_t a_base = 0, o_base = 0, o2_base = 0, sc_base = 0;
  std::uint32_t bias_base = 0;          // a biased layer: the piece's slice of the bias (int32 per filter)
  std::uint32_t shift_base = 0;         // per-channel QUAN shifts: the piece's slice of them (uint8 per filter)
  std::uint32_t table_base = 0;         // a fused activation's table (256 bytes)
  std::uint32_t layout_end = 0;         // the first byte after the common layout
  std::uint32_t a_group_stride = 0;     // filter groups in SRAM (a piece's input channels)
  std::uint64_t dram_group_stride = 0;  // filter groups in DRAM (all input channels of a filter's group)
  int shift = 0;
  BlockDramMap map;
  std::string padd, core;
  Workers workers;
};

// Whether the block quantizes before its operation `op` (one of ConvPlan::tail).
bool quantized_before(const ConvPlan& p, const Operation* op);
// The core operation's name, its padding and unpadded input (a convolution's or a pooling's).
void set_input(ConvPlan& p, const OperationBlock& b);
// The plan of a block whose core op's output has the shape its windows or values give it (a pooling, an
// element-wise block): workers, block, split, core op and config set, the input as set_input gives it, the
// output's W, H and C from the core op (no packing: Wp = Wo, Hp = Ho).
ConvPlan map_plan(const OperationBlock& b, const BlockSplit& s, const HwConfig& cfg);
// The piece's window as the MLA's operand B holds it (gathered rows: out_h rows).
Task window_task(const ConvPlan& p, const ConvPiece& cp);

// A piece's kept results as the ARM and the DMA walk them: planes x rows x width. Per-row tasks leave
// them [output row][filter][x] (each task's filters side by side), the others [filter][output row][x].
struct ResultView {
  std::uint32_t planes = 0, rows = 0, width = 0;  // width: kept results per row
  std::uint32_t computed = 0;                      // results per row the MLA computed (stride-1 columns)
  std::uint32_t raw_row_stride = 0, raw_plane_stride = 0;  // the MLA's int32 results in SRAM (bytes)
  bool rows_are_filters = false;
};
ResultView result_view(const ConvPlan& p, const ConvPiece& cp, int c);

// The plan of a convolution block: its layouts in SRAM and DRAM (nofuse: with the padded input and the raw
// results in DRAM). Throws std::invalid_argument if the pieces' common SRAM layout does not fit.
ConvPlan conv_plan(const OperationBlock& b, const BlockSplit& s, const HwConfig& cfg, bool nofuse);

// A piece's whole input window in a [D][H][W] tensor at `base` (PADD's result, or the input when the
// block has no padding) and in SRAM (operand B); gathered rows take every stride-th row.
DmaTransfer input_window(const ConvPlan& p, const ConvPiece& cp, std::uint64_t base);
// Operand B of a piece, its window starting at (x0, y0) in padded coordinates: from the padded tensor,
// or the part inside the unpadded input, after which the ARM zeroes the border (PADD_n). The load is
// charged to `load_op`.
void load_ifmap(std::vector<StreamCommand>& out, const ConvPlan& p, const ConvPiece& cp, bool from_padded,
                const std::string& load_op);
// A piece's filters: its filter groups (from the row group of its first filter's slot), each with the piece's
// input channels (all of them: one transfer).
void load_filters(std::vector<StreamCommand>& out, const ConvPlan& p, const ConvPiece& cp);
// The MLA's work on a piece's `c` filters: one task over the window, or one per kept output row (each
// task's results after the previous one's, as result_view() expects).
void run_mla(std::vector<StreamCommand>& out, const ConvPlan& p, const ConvPiece& cp, int c, int shift, std::uint32_t o_base);
// A piece's `c` filters of raw int32 results (every computed column) in the [C][Ho][Wx] int32 tensor
// in DRAM and in SRAM at `sram_addr`, as `v` lays them out there.
DmaTransfer raw_results(const ConvPlan& p, const ConvPiece& cp, const ResultView& v, std::uint32_t sram_addr);
// The same results as the nofuse element-wise streams load them back: filter by filter, rows packed.
ResultView packed_raw_view(const ConvPlan& p, const ConvPiece& cp, int c);
// The block's int8 result of a view (after the fused pooling, if any) in the output or shortcut tensor
// and in SRAM at `sram_addr`, rows packed.
DmaTransfer int8_results(const ConvPlan& p, const ConvPiece& cp, const ResultView& v, std::uint64_t base,
                         std::uint32_t sram_addr);

// The block's element-wise operations after the core operation on one piece whose int32 results (`v`)
// sit at `base`, in the block's order (thesis 4.1): ReLU on the int32 results, quantization into packed
// int8 rows in place (each value lands at or before where it was read; a strided convolution's kept
// columns only), the fused max pooling in place, the shortcut's addition (its part loaded into
// `sc_base`) and ReLU on the int8 sums. Only the operations in `ops` are carried out; each is charged
// to its own name. `fold_passes` (Schedule::Overlapped): a ReLU is no pass of its own where the pass before it
// can clamp at zero: one on the int32 sums before QUAN (QUAN's `_relu` kernel), one right after the shortcut's
// addition (AddInt8's); and a max pooling whose windows tile the piece right after QUAN is no pass of its own
// either: QUAN quantizes each window's largest sum (QuantizeMaxPool, charged to QUAN); nor is the shortcut's
// addition right after QUAN (QuantizeAdd, charged to QUAN; the shortcut's load stays the addition's); the same
// int8 results.
// Returns the view of the int8 result.
ResultView element_wise(std::vector<StreamCommand>& out, const ConvPlan& p, const ConvPiece& cp, ResultView v,
                        std::uint32_t base, std::uint32_t sc_base, const std::vector<const Operation*>& ops,
                        bool fold_passes = false);

// The MLA on a piece whose operands are loaded; a piece split along its input channels (D) goes on with
// its other parts, loading each and adding its partial sums to the first's (ARM, charged to the core
// operation; each part's sums wrap at the accumulator's width, their sum at 32 bits). Then (fused) the
// block's element-wise operations and the store of its int8 result, or (not fused) the store of the raw
// int32 results.
void compute_and_store(std::vector<StreamCommand>& out, const ConvPlan& p, const ConvPiece& cp, int c, int shift, bool fused);

// An fmap part: output columns part iw, rows part ih (ic: a filter part, where a strategy needs one).
struct PieceIndex {
  int iw, ih, ic;
};

// The output's (W, H) parts, rows of parts in order.
std::vector<PieceIndex> fmap_parts(const BlockSplit& s);

// The input parts the PEs are dealt (PePicker), the same in every stream of a block: a piece's fmap part, and a
// grouped convolution's group (whose input channels no other group's pieces read), so that a depthwise layer
// of few fmap parts still spreads over every DRAM's PEs. Without groups, the fmap part.
int input_parts(const ConvPlan& p, std::size_t fmap_parts);
int input_part(const ConvPlan& p, std::size_t fmap_part, int ic);

}  // namespace s2::mapper
