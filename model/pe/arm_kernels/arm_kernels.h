/* The PE's ARM operations as the Cortex-M4F runs them: plain C kernels over the PE's SRAM, one per operation
 * (model/pe/arm_ops.h says what each computes; these compute the same). Built twice from the same source: for
 * the ARM (tools/arm_clocks.py compiles them with arm-none-eabi-gcc -mcpu=cortex-m4 -mfloat-abi=hard -mthumb
 * -O2 and counts their loops' clocks from the disassembly) and for the host (tests hold each kernel's results to
 * arm_apply's on random commands). Plain C, one value per iteration, the golden code's loops: no SIMD
 * intrinsics, no hand unrolling, so the clocks are the compiler's and the TRM's, not tuned ones
 * (docs/arm_clocks.md). */
#ifndef S2_ARM_KERNELS_H
#define S2_ARM_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One command's fields (model/task_stream.h, ArmCommand), as SRAM byte offsets and counts. */
struct s2k_cmd {
  uint32_t src, dst, planes, height, width;
  uint32_t src_row_stride, dst_row_stride, src_plane_stride, dst_plane_stride; /* plane strides resolved */
  uint32_t pad_left, pad_right, pad_top, pad_bottom;
  int32_t shift, saturate_high;
  uint32_t window, window_h, stride, col_step;
  uint32_t bias_addr, shift_addr, bias_plane_step, bias_row_step, bias_col_step;
  uint32_t a_col_stride, depth, weights, weights_row_stride, weights_plane_stride;
  uint32_t table, table_plane_step;
  int32_t shift_a, shift_b, relu;
  uint32_t addend;
};

/* Each takes the PE's SRAM (byte 0 at `sram`) and a command; none checks bounds (arm_apply does, before). Where a
 * kernel reads something once that arm_apply reads per value, the command must not write it: a plane's table,
 * parameters or factor (table8, affine8, channel_mul8: read once per plane), PermuteWords' table; and Copy8 copies
 * each row forward, so no row's destination starts inside its own source after the source's start. The
 * distributor's commands never do; tests/arm_kernels_test.cpp draws its random commands within these rules. */
void s2k_pad(uint8_t* sram, const struct s2k_cmd* c);                 /* int8 border, 32-bit words */
void s2k_relu32(uint8_t* sram, const struct s2k_cmd* c);              /* int32 in place */
void s2k_relu32_bias(uint8_t* sram, const struct s2k_cmd* c);         /* + the channel's bias */
void s2k_quantize(uint8_t* sram, const struct s2k_cmd* c);            /* int32 -> int8 */
void s2k_quantize_bias(uint8_t* sram, const struct s2k_cmd* c);       /* + the channel's bias */
void s2k_quantize_shift(uint8_t* sram, const struct s2k_cmd* c);      /* the channel's shift */
void s2k_quantize_bias_shift(uint8_t* sram, const struct s2k_cmd* c); /* + bias, the channel's shift */
/* the same four to [0, 127]: a ReLU before the quantization folded into its pass (USAT) */
void s2k_quantize_relu(uint8_t* sram, const struct s2k_cmd* c);
void s2k_quantize_bias_relu(uint8_t* sram, const struct s2k_cmd* c);
void s2k_quantize_shift_relu(uint8_t* sram, const struct s2k_cmd* c);
void s2k_quantize_bias_shift_relu(uint8_t* sram, const struct s2k_cmd* c);
void s2k_maxpool8(uint8_t* sram, const struct s2k_cmd* c);
/* a 2-D max pooling folded into the quantization: each window's largest biased int32 sum quantized (the bias and
 * shift one per plane), the same four and their four to [0, 127] */
void s2k_quantize_maxpool(uint8_t* sram, const struct s2k_cmd* c);
void s2k_quantize_maxpool_bias(uint8_t* sram, const struct s2k_cmd* c);
void s2k_quantize_maxpool_shift(uint8_t* sram, const struct s2k_cmd* c);
void s2k_quantize_maxpool_bias_shift(uint8_t* sram, const struct s2k_cmd* c);
void s2k_quantize_maxpool_relu(uint8_t* sram, const struct s2k_cmd* c);
void s2k_quantize_maxpool_bias_relu(uint8_t* sram, const struct s2k_cmd* c);
void s2k_quantize_maxpool_shift_relu(uint8_t* sram, const struct s2k_cmd* c);
void s2k_quantize_maxpool_bias_shift_relu(uint8_t* sram, const struct s2k_cmd* c);
void s2k_maxpool32(uint8_t* sram, const struct s2k_cmd* c); /* Table 5.9's 32-bit pooling (unused) */
void s2k_avgpool8(uint8_t* sram, const struct s2k_cmd* c);
void s2k_add_int32(uint8_t* sram, const struct s2k_cmd* c);
void s2k_add_int8(uint8_t* sram, const struct s2k_cmd* c);
void s2k_add_int8_relu(uint8_t* sram, const struct s2k_cmd* c); /* to [0, 127]: the ReLU after the addition folded in */
/* the shortcut's addition folded into the quantization: each sum quantized, the int8 addend added; the same four
 * as the quantization's, each also to [0, 127] (a ReLU after the addition folded in) */
void s2k_quantize_add(uint8_t* sram, const struct s2k_cmd* c);
void s2k_quantize_add_bias(uint8_t* sram, const struct s2k_cmd* c);
void s2k_quantize_add_shift(uint8_t* sram, const struct s2k_cmd* c);
void s2k_quantize_add_bias_shift(uint8_t* sram, const struct s2k_cmd* c);
void s2k_quantize_add_relu(uint8_t* sram, const struct s2k_cmd* c);
void s2k_quantize_add_bias_relu(uint8_t* sram, const struct s2k_cmd* c);
void s2k_quantize_add_shift_relu(uint8_t* sram, const struct s2k_cmd* c);
void s2k_quantize_add_bias_shift_relu(uint8_t* sram, const struct s2k_cmd* c);
void s2k_relu8(uint8_t* sram, const struct s2k_cmd* c);
void s2k_mac_int8(uint8_t* sram, const struct s2k_cmd* c);
/* `done` holds width bytes of scratch (the PE's stack) */
void s2k_permute_words(uint8_t* sram, const struct s2k_cmd* c, uint8_t* done);
void s2k_copy8(uint8_t* sram, const struct s2k_cmd* c);
void s2k_table8(uint8_t* sram, const struct s2k_cmd* c);
void s2k_affine8(uint8_t* sram, const struct s2k_cmd* c);
void s2k_add_scaled8(uint8_t* sram, const struct s2k_cmd* c);
void s2k_mul8(uint8_t* sram, const struct s2k_cmd* c);
void s2k_channel_mul8(uint8_t* sram, const struct s2k_cmd* c);

#ifdef __cplusplus
}
#endif

#endif
