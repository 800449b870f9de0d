/* The ARM operations' kernels (arm_kernels.h). Each loops plane, row, pixel as arm_apply's reference does; the
 * loop structure is part of the contract: tools/arm_clocks.py finds these loops in the compiled code and the
 * model charges each at its counted clocks per iteration (model/pe/arm_ops.cpp, arm_op_cycles). */
#include "arm_kernels.h"

/* one LDR or STR on the M4 (which takes unaligned words too); memcpy keeps the host build defined */
static int32_t load32(const uint8_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}
static void store32(uint8_t* p, int32_t v) { __builtin_memcpy(p, &v, 4); }
/* to int8: the M4's SSAT (ACLE's __ssat, as CMSIS's __SSAT), a plain clamp on the host; a layer's tighter
 * bound is applied after it */
#if defined(__ARM_FEATURE_SAT)
#include <arm_acle.h>
static int32_t sat8(int32_t v) { return __ssat(v, 8); }
/* to [0, 127]: USAT, a ReLU and the int8 saturation in one instruction */
static int32_t usat7(int32_t v) { return (int32_t)__usat(v, 7); }
#else
static int32_t sat8(int32_t v) { return v < -128 ? -128 : v > 127 ? 127 : v; }
static int32_t usat7(int32_t v) { return v < 0 ? 0 : v > 127 ? 127 : v; }
#endif
static int32_t at_most(int32_t v, int32_t hi) { return v > hi ? hi : v; }
static int32_t at_least(int32_t v, int32_t lo) { return v < lo ? lo : v; }
static int32_t rounding(int32_t s) { return s > 0 ? (int32_t)1 << (s - 1) : 0; }
/* x + y in 32 bits, wrapping as the ARM's ADD does */
static int32_t add32(int32_t x, int32_t y) { return (int32_t)((uint32_t)x + (uint32_t)y); }

/* Zeroes n bytes at p: bytes up to a word boundary, 32-bit words, the bytes left. */
static void zero_span(uint8_t* p, uint32_t n) {
  while (n > 0 && ((uintptr_t)p & 3u) != 0) {
    *p++ = 0;
    --n;
  }
  for (; n >= 4; n -= 4, p += 4) store32(p, 0);
  while (n > 0) {
    *p++ = 0;
    --n;
  }
}

/* The border's rows whole (zero_span: words where it can), and between them each row's left and right columns
 * byte by byte */
void s2k_pad(uint8_t* sram, const struct s2k_cmd* c) {
  const uint32_t planes = c->planes, src = c->src, src_plane_stride = c->src_plane_stride, height = c->height;
  const uint32_t src_row_stride = c->src_row_stride, pad_top = c->pad_top, pad_bottom = c->pad_bottom;
  const uint32_t width = c->width, pad_left = c->pad_left, pad_right = c->pad_right;
  /* rows [0, top) and [bottom, height) whole, as arm_apply: y < pad_top or y >= height - pad_bottom */
  const uint32_t top = pad_top < height ? pad_top : height;
  const uint32_t bottom = height - (pad_bottom < height - top ? pad_bottom : height - top);
  for (uint32_t d = 0; d < planes; ++d) {
    uint8_t* plane = sram + src + d * src_plane_stride;
    for (uint32_t y = 0; y < top; ++y) zero_span(plane + y * src_row_stride, width);
    for (uint32_t y = top; y < bottom; ++y) {
      uint8_t* row = plane + y * src_row_stride;
      for (uint32_t x = 0; x < pad_left; ++x) row[x] = 0;
      for (uint32_t x = width - pad_right; x < width; ++x) row[x] = 0;
    }
    for (uint32_t y = bottom; y < height; ++y) zero_span(plane + y * src_row_stride, width);
  }
}

void s2k_relu32(uint8_t* sram, const struct s2k_cmd* c) {
  const uint32_t col_step = c->col_step, planes = c->planes, height = c->height, src = c->src,
                 src_plane_stride = c->src_plane_stride, src_row_stride = c->src_row_stride, width = c->width;
  const uint32_t step = 4 * col_step;
  for (uint32_t d = 0; d < planes; ++d)
    for (uint32_t y = 0; y < height; ++y) {
      uint8_t* p = sram + src + d * src_plane_stride + y * src_row_stride;
      for (uint32_t x = 0; x < width; ++x, p += step) {
        const int32_t v = load32(p);
        store32(p, v < 0 ? 0 : v);
      }
    }
}

void s2k_relu32_bias(uint8_t* sram, const struct s2k_cmd* c) {
  const uint32_t col_step = c->col_step, bias_col_step = c->bias_col_step, planes = c->planes, height = c->height,
                 src = c->src, src_plane_stride = c->src_plane_stride, src_row_stride = c->src_row_stride,
                 bias_addr = c->bias_addr, bias_plane_step = c->bias_plane_step, bias_row_step = c->bias_row_step,
                 width = c->width;
  const uint32_t step = 4 * col_step, bstep = 4 * bias_col_step;
  for (uint32_t d = 0; d < planes; ++d)
    for (uint32_t y = 0; y < height; ++y) {
      uint8_t* p = sram + src + d * src_plane_stride + y * src_row_stride;
      const uint8_t* b = sram + bias_addr + 4 * (d * bias_plane_step + y * bias_row_step);
      for (uint32_t x = 0; x < width; ++x, p += step, b += bstep) {
        const int32_t v = add32(load32(p), load32(b));
        store32(p, v < 0 ? 0 : v);
      }
    }
}

/* The quantization's four kernels (a bias or not, one shift or one per channel), each twice: saturating to int8
 * (SSAT), and to [0, 127] (USAT) for a ReLU folded into the pass (the `_relu` kernels: ArmCommand::saturate_low
 * 0). One body per kernel, its saturation the macro's argument. */
#define S2K_QUANTIZE(NAME, SAT)                                                                                        \
void NAME(uint8_t* sram, const struct s2k_cmd* c) {                                                                    \
  const uint32_t col_step = c->col_step, planes = c->planes, height = c->height, src = c->src,                         \
                 src_plane_stride = c->src_plane_stride, src_row_stride = c->src_row_stride, dst = c->dst,             \
                 dst_plane_stride = c->dst_plane_stride, dst_row_stride = c->dst_row_stride, width = c->width;         \
  const int32_t shift = c->shift, saturate_high = c->saturate_high;                                                    \
  const uint32_t step = 4 * col_step;                                                                                  \
  const int32_t s = shift, high = sat8(saturate_high);                                                                 \
  for (uint32_t d = 0; d < planes; ++d)                                                                                \
    for (uint32_t y = 0; y < height; ++y) {                                                                            \
      const uint8_t* p = sram + src + d * src_plane_stride + y * src_row_stride;                                       \
      int8_t* q = (int8_t*)(sram + dst + d * dst_plane_stride + y * dst_row_stride);                                   \
      for (uint32_t x = 0; x < width; ++x, p += step) q[x] = (int8_t)at_most(SAT(load32(p) >> s), high);               \
    }                                                                                                                  \
}

#define S2K_QUANTIZE_BIAS(NAME, SAT)                                                                                   \
void NAME(uint8_t* sram, const struct s2k_cmd* c) {                                                                    \
  const uint32_t col_step = c->col_step, bias_col_step = c->bias_col_step, planes = c->planes, height = c->height,     \
                 src = c->src, src_plane_stride = c->src_plane_stride, src_row_stride = c->src_row_stride,             \
                 bias_addr = c->bias_addr, bias_plane_step = c->bias_plane_step, bias_row_step = c->bias_row_step,     \
                 dst = c->dst, dst_plane_stride = c->dst_plane_stride, dst_row_stride = c->dst_row_stride,             \
                 width = c->width;                                                                                     \
  const int32_t shift = c->shift, saturate_high = c->saturate_high;                                                    \
  const uint32_t step = 4 * col_step, bstep = 4 * bias_col_step;                                                       \
  const int32_t s = shift, high = sat8(saturate_high);                                                                 \
  for (uint32_t d = 0; d < planes; ++d)                                                                                \
    for (uint32_t y = 0; y < height; ++y) {                                                                            \
      const uint8_t* p = sram + src + d * src_plane_stride + y * src_row_stride;                                       \
      const uint8_t* b = sram + bias_addr + 4 * (d * bias_plane_step + y * bias_row_step);                             \
      int8_t* q = (int8_t*)(sram + dst + d * dst_plane_stride + y * dst_row_stride);                                   \
      for (uint32_t x = 0; x < width; ++x, p += step, b += bstep)                                                      \
        q[x] = (int8_t)at_most(SAT(add32(load32(p), load32(b)) >> s), high);                                           \
    }                                                                                                                  \
}

#define S2K_QUANTIZE_SHIFT(NAME, SAT)                                                                                  \
void NAME(uint8_t* sram, const struct s2k_cmd* c) {                                                                    \
  const uint32_t col_step = c->col_step, bias_col_step = c->bias_col_step, planes = c->planes, height = c->height;     \
  const uint32_t bias_plane_step = c->bias_plane_step, bias_row_step = c->bias_row_step, src = c->src;                 \
  const uint32_t src_plane_stride = c->src_plane_stride, src_row_stride = c->src_row_stride;                           \
  const uint32_t shift_addr = c->shift_addr;                                                                           \
  const uint32_t dst = c->dst, dst_plane_stride = c->dst_plane_stride, dst_row_stride = c->dst_row_stride,             \
                 width = c->width;                                                                                     \
  const int32_t saturate_high = c->saturate_high;                                                                      \
  const uint32_t step = 4 * col_step;                                                                                  \
  const int32_t high = sat8(saturate_high);                                                                            \
  for (uint32_t d = 0; d < planes; ++d)                                                                                \
    for (uint32_t y = 0; y < height; ++y) {                                                                            \
      const uint32_t first = d * bias_plane_step + y * bias_row_step;                                                  \
      const uint8_t* p = sram + src + d * src_plane_stride + y * src_row_stride;                                       \
      const uint8_t* sh = sram + shift_addr + first;                                                                   \
      int8_t* q = (int8_t*)(sram + dst + d * dst_plane_stride + y * dst_row_stride);                                   \
      for (uint32_t x = 0; x < width; ++x, p += step, sh += bias_col_step) {                                           \
        const int32_t s = *sh < 31 ? *sh : 31;                                                                         \
        q[x] = (int8_t)at_most(SAT(load32(p) >> s), high);                                                             \
      }                                                                                                                \
    }                                                                                                                  \
}

#define S2K_QUANTIZE_BIAS_SHIFT(NAME, SAT)                                                                             \
void NAME(uint8_t* sram, const struct s2k_cmd* c) {                                                                    \
  const uint32_t col_step = c->col_step, bias_col_step = c->bias_col_step, planes = c->planes, height = c->height,     \
                 bias_plane_step = c->bias_plane_step, bias_row_step = c->bias_row_step, src = c->src,                 \
                 src_plane_stride = c->src_plane_stride, src_row_stride = c->src_row_stride, bias_addr = c->bias_addr, \
                 shift_addr = c->shift_addr, dst = c->dst, dst_plane_stride = c->dst_plane_stride,                     \
                 dst_row_stride = c->dst_row_stride, width = c->width;                                                 \
  const int32_t saturate_high = c->saturate_high;                                                                      \
  const uint32_t step = 4 * col_step, bstep = 4 * bias_col_step;                                                       \
  const int32_t high = sat8(saturate_high);                                                                            \
  for (uint32_t d = 0; d < planes; ++d)                                                                                \
    for (uint32_t y = 0; y < height; ++y) {                                                                            \
      const uint32_t first = d * bias_plane_step + y * bias_row_step;                                                  \
      const uint8_t* p = sram + src + d * src_plane_stride + y * src_row_stride;                                       \
      const uint8_t* b = sram + bias_addr + 4 * first;                                                                 \
      const uint8_t* sh = sram + shift_addr + first;                                                                   \
      int8_t* q = (int8_t*)(sram + dst + d * dst_plane_stride + y * dst_row_stride);                                   \
      for (uint32_t x = 0; x < width; ++x, p += step, b += bstep, sh += bias_col_step) {                               \
        const int32_t s = *sh < 31 ? *sh : 31;                                                                         \
        q[x] = (int8_t)at_most(SAT(add32(load32(p), load32(b)) >> s), high);                                           \
      }                                                                                                                \
    }                                                                                                                  \
}

S2K_QUANTIZE(s2k_quantize, sat8)
S2K_QUANTIZE(s2k_quantize_relu, usat7)
S2K_QUANTIZE_BIAS(s2k_quantize_bias, sat8)
S2K_QUANTIZE_BIAS(s2k_quantize_bias_relu, usat7)
S2K_QUANTIZE_SHIFT(s2k_quantize_shift, sat8)
S2K_QUANTIZE_SHIFT(s2k_quantize_shift_relu, usat7)
S2K_QUANTIZE_BIAS_SHIFT(s2k_quantize_bias_shift, sat8)
S2K_QUANTIZE_BIAS_SHIFT(s2k_quantize_bias_shift_relu, usat7)

/* A max pooling folded into the quantization (quantize_maxpool): output (y, x) of plane d is the quantization of
 * the largest biased sum of its window of h rows of w pixels, every st pixels (each pixel col_step words apart,
 * a strided convolution's kept columns). The quantization is monotone, so this is the pooling of the quantized
 * values, computed once per output instead of once per pixel. A plane's bias and shift are read once per plane
 * (bias_plane_step: one value per plane); BIAS and SHIFT are constants, so each kernel compiles to its own loop. */
#define S2K_QUANTIZE_MAXPOOL(NAME, SAT, BIAS, SHIFT)                                                                   \
void NAME(uint8_t* sram, const struct s2k_cmd* c) {                                                                    \
  const uint32_t w = c->window, h = c->window_h, st = c->stride, height = c->height, width = c->width,                 \
                 planes = c->planes, src = c->src, src_plane_stride = c->src_plane_stride,                             \
                 src_row_stride = c->src_row_stride, dst = c->dst, dst_plane_stride = c->dst_plane_stride,             \
                 dst_row_stride = c->dst_row_stride, bias_addr = c->bias_addr, shift_addr = c->shift_addr,             \
                 bias_plane_step = c->bias_plane_step;                                                                 \
  const uint32_t ho = (height - h) / st + 1, wo = (width - w) / st + 1, step = 4 * c->col_step, out_step = st * step;  \
  const int32_t high = sat8(c->saturate_high), shift = c->shift;                                                       \
  for (uint32_t d = 0; d < planes; ++d) {                                                                              \
    const int32_t bias = BIAS ? load32(sram + bias_addr + 4 * d * bias_plane_step) : 0;                                \
    const uint32_t plane_shift = SHIFT ? sram[shift_addr + d * bias_plane_step] : 0;                                   \
    const int32_t s = SHIFT ? (plane_shift < 31 ? (int32_t)plane_shift : 31) : shift;                                  \
    for (uint32_t y = 0; y < ho; ++y) {                                                                                \
      const uint8_t* in = sram + src + d * src_plane_stride + y * st * src_row_stride;                                 \
      int8_t* out = (int8_t*)(sram + dst + d * dst_plane_stride + y * dst_row_stride);                                 \
      for (uint32_t x = 0; x < wo; ++x, in += out_step) {                                                              \
        int32_t m = INT32_MIN;                                                                                         \
        for (uint32_t ky = 0; ky < h; ++ky)                                                                            \
          for (uint32_t kx = 0; kx < w; ++kx) {                                                                        \
            const int32_t v = BIAS ? add32(load32(in + ky * src_row_stride + kx * step), bias)                        \
                                   : load32(in + ky * src_row_stride + kx * step);                                     \
            if (v > m) m = v;                                                                                          \
          }                                                                                                            \
        out[x] = (int8_t)at_most(SAT(m >> s), high);                                                                   \
      }                                                                                                                \
    }                                                                                                                  \
  }                                                                                                                    \
}

S2K_QUANTIZE_MAXPOOL(s2k_quantize_maxpool, sat8, 0, 0)
S2K_QUANTIZE_MAXPOOL(s2k_quantize_maxpool_bias, sat8, 1, 0)
S2K_QUANTIZE_MAXPOOL(s2k_quantize_maxpool_shift, sat8, 0, 1)
S2K_QUANTIZE_MAXPOOL(s2k_quantize_maxpool_bias_shift, sat8, 1, 1)
S2K_QUANTIZE_MAXPOOL(s2k_quantize_maxpool_relu, usat7, 0, 0)
S2K_QUANTIZE_MAXPOOL(s2k_quantize_maxpool_bias_relu, usat7, 1, 0)
S2K_QUANTIZE_MAXPOOL(s2k_quantize_maxpool_shift_relu, usat7, 0, 1)
S2K_QUANTIZE_MAXPOOL(s2k_quantize_maxpool_bias_shift_relu, usat7, 1, 1)

/* Pooling: output (y, x) of plane d from its window of h rows of w pixels, every st pixels. */
void s2k_maxpool8(uint8_t* sram, const struct s2k_cmd* c) {
  const uint32_t w = c->window, h = c->window_h, st = c->stride, height = c->height, width = c->width,
                 planes = c->planes, src = c->src, src_plane_stride = c->src_plane_stride,
                 src_row_stride = c->src_row_stride, dst = c->dst, dst_plane_stride = c->dst_plane_stride,
                 dst_row_stride = c->dst_row_stride;
  const uint32_t ho = (height - h) / st + 1, wo = (width - w) / st + 1;
  for (uint32_t d = 0; d < planes; ++d)
    for (uint32_t y = 0; y < ho; ++y) {
      const int8_t* in = (const int8_t*)(sram + src + d * src_plane_stride + y * st * src_row_stride);
      int8_t* out = (int8_t*)(sram + dst + d * dst_plane_stride + y * dst_row_stride);
      for (uint32_t x = 0; x < wo; ++x, in += st) {
        int32_t m = -128;
        for (uint32_t ky = 0; ky < h; ++ky)
          for (uint32_t kx = 0; kx < w; ++kx) {
            const int32_t v = in[ky * src_row_stride + kx];
            if (v > m) m = v;
          }
        out[x] = (int8_t)m;
      }
    }
}

void s2k_maxpool32(uint8_t* sram, const struct s2k_cmd* c) {
  const uint32_t w = c->window, h = c->window_h, st = c->stride, height = c->height, width = c->width,
                 planes = c->planes, src = c->src, src_plane_stride = c->src_plane_stride,
                 src_row_stride = c->src_row_stride, dst = c->dst, dst_plane_stride = c->dst_plane_stride,
                 dst_row_stride = c->dst_row_stride;
  const uint32_t ho = (height - h) / st + 1, wo = (width - w) / st + 1;
  for (uint32_t d = 0; d < planes; ++d)
    for (uint32_t y = 0; y < ho; ++y) {
      const uint8_t* in = sram + src + d * src_plane_stride + y * st * src_row_stride;
      uint8_t* out = sram + dst + d * dst_plane_stride + y * dst_row_stride;
      for (uint32_t x = 0; x < wo; ++x, in += 4 * st) {
        int32_t m = INT32_MIN;
        for (uint32_t ky = 0; ky < h; ++ky)
          for (uint32_t kx = 0; kx < w; ++kx) {
            const int32_t v = load32(in + ky * src_row_stride + 4 * kx);
            if (v > m) m = v;
          }
        store32(out + 4 * x, m);
      }
    }
}

void s2k_avgpool8(uint8_t* sram, const struct s2k_cmd* c) {
  const uint32_t w = c->window, h = c->window_h, st = c->stride, height = c->height, width = c->width,
                 planes = c->planes, src = c->src, src_plane_stride = c->src_plane_stride,
                 src_row_stride = c->src_row_stride, dst = c->dst, dst_plane_stride = c->dst_plane_stride,
                 dst_row_stride = c->dst_row_stride;
  const uint32_t ho = (height - h) / st + 1, wo = (width - w) / st + 1;
  const int32_t n = (int32_t)(w * h);
  for (uint32_t d = 0; d < planes; ++d)
    for (uint32_t y = 0; y < ho; ++y) {
      const int8_t* in = (const int8_t*)(sram + src + d * src_plane_stride + y * st * src_row_stride);
      int8_t* out = (int8_t*)(sram + dst + d * dst_plane_stride + y * dst_row_stride);
      for (uint32_t x = 0; x < wo; ++x, in += st) {
        int32_t sum = 0;
        for (uint32_t ky = 0; ky < h; ++ky)
          for (uint32_t kx = 0; kx < w; ++kx) sum += in[ky * src_row_stride + kx];
        out[x] = (int8_t)(sum / n);
      }
    }
}

void s2k_add_int32(uint8_t* sram, const struct s2k_cmd* c) {
  const uint32_t col_step = c->col_step, planes = c->planes, height = c->height, src = c->src,
                 src_plane_stride = c->src_plane_stride, src_row_stride = c->src_row_stride, dst = c->dst,
                 dst_plane_stride = c->dst_plane_stride, dst_row_stride = c->dst_row_stride, width = c->width;
  const uint32_t step = 4 * col_step;
  for (uint32_t d = 0; d < planes; ++d)
    for (uint32_t y = 0; y < height; ++y) {
      const uint8_t* a = sram + src + d * src_plane_stride + y * src_row_stride;
      uint8_t* q = sram + dst + d * dst_plane_stride + y * dst_row_stride;
      for (uint32_t x = 0; x < width; ++x, a += step, q += step) store32(q, add32(load32(q), load32(a)));
    }
}

/* The shortcut's addition, saturating to int8 (SSAT), and to [0, 127] (USAT: `_relu`, the ReLU after it folded in). */
#define S2K_ADD_INT8(NAME, SAT)                                                                                        \
void NAME(uint8_t* sram, const struct s2k_cmd* c) {                                                                    \
  const uint32_t planes = c->planes, height = c->height, src = c->src, src_plane_stride = c->src_plane_stride,         \
                 src_row_stride = c->src_row_stride, dst = c->dst, dst_plane_stride = c->dst_plane_stride,             \
                 dst_row_stride = c->dst_row_stride, width = c->width;                                                 \
  for (uint32_t d = 0; d < planes; ++d)                                                                                \
    for (uint32_t y = 0; y < height; ++y) {                                                                            \
      const int8_t* a = (const int8_t*)(sram + src + d * src_plane_stride + y * src_row_stride);                       \
      int8_t* q = (int8_t*)(sram + dst + d * dst_plane_stride + y * dst_row_stride);                                   \
      for (uint32_t x = 0; x < width; ++x) q[x] = (int8_t)SAT(q[x] + a[x]);                                            \
    }                                                                                                                  \
}
S2K_ADD_INT8(s2k_add_int8, sat8)
S2K_ADD_INT8(s2k_add_int8_relu, usat7)

/* The shortcut's addition folded into the quantization (quantize_add): each int32 sum quantized as the
 * quantization kernels do (saturated to int8, then at most saturate_high), the int8 addend at the same place of
 * `addend` (laid out as the destination) added and saturated again, to int8 or, with a ReLU after the addition
 * folded in, to [0, 127]. One pass instead of two, the same values. BIAS and SHIFT are constants. */
#define S2K_QUANTIZE_ADD(NAME, ADD_SAT, BIAS, SHIFT)                                                                   \
void NAME(uint8_t* sram, const struct s2k_cmd* c) {                                                                    \
  const uint32_t col_step = c->col_step, bias_col_step = c->bias_col_step, planes = c->planes, height = c->height,     \
                 src = c->src, src_plane_stride = c->src_plane_stride, src_row_stride = c->src_row_stride,             \
                 bias_addr = c->bias_addr, shift_addr = c->shift_addr, bias_plane_step = c->bias_plane_step,           \
                 bias_row_step = c->bias_row_step, dst = c->dst, dst_plane_stride = c->dst_plane_stride,               \
                 dst_row_stride = c->dst_row_stride, addend = c->addend, width = c->width;                             \
  const int32_t shift = c->shift, high = sat8(c->saturate_high);                                                       \
  const uint32_t step = 4 * col_step, bstep = 4 * bias_col_step;                                                       \
  for (uint32_t d = 0; d < planes; ++d)                                                                                \
    for (uint32_t y = 0; y < height; ++y) {                                                                            \
      const uint32_t first = d * bias_plane_step + y * bias_row_step;                                                  \
      const uint8_t* p = sram + src + d * src_plane_stride + y * src_row_stride;                                       \
      const uint8_t* b = sram + bias_addr + 4 * first;                                                                 \
      const uint8_t* sh = sram + shift_addr + first;                                                                   \
      const int8_t* a = (const int8_t*)(sram + addend + d * dst_plane_stride + y * dst_row_stride);                    \
      int8_t* q = (int8_t*)(sram + dst + d * dst_plane_stride + y * dst_row_stride);                                   \
      for (uint32_t x = 0; x < width; ++x, p += step, b += bstep, sh += bias_col_step) {                               \
        const int32_t v = BIAS ? add32(load32(p), load32(b)) : load32(p);                                              \
        const int32_t s = SHIFT ? (*sh < 31 ? *sh : 31) : shift;                                                       \
        q[x] = (int8_t)ADD_SAT(at_most(sat8(v >> s), high) + a[x]);                                                    \
      }                                                                                                                \
    }                                                                                                                  \
}
S2K_QUANTIZE_ADD(s2k_quantize_add, sat8, 0, 0)
S2K_QUANTIZE_ADD(s2k_quantize_add_bias, sat8, 1, 0)
S2K_QUANTIZE_ADD(s2k_quantize_add_shift, sat8, 0, 1)
S2K_QUANTIZE_ADD(s2k_quantize_add_bias_shift, sat8, 1, 1)
S2K_QUANTIZE_ADD(s2k_quantize_add_relu, usat7, 0, 0)
S2K_QUANTIZE_ADD(s2k_quantize_add_bias_relu, usat7, 1, 0)
S2K_QUANTIZE_ADD(s2k_quantize_add_shift_relu, usat7, 0, 1)
S2K_QUANTIZE_ADD(s2k_quantize_add_bias_shift_relu, usat7, 1, 1)

void s2k_relu8(uint8_t* sram, const struct s2k_cmd* c) {
  const uint32_t planes = c->planes, height = c->height, src = c->src, src_plane_stride = c->src_plane_stride,
                 src_row_stride = c->src_row_stride, width = c->width;
  for (uint32_t d = 0; d < planes; ++d)
    for (uint32_t y = 0; y < height; ++y) {
      int8_t* p = (int8_t*)(sram + src + d * src_plane_stride + y * src_row_stride);
      for (uint32_t x = 0; x < width; ++x)
        if (p[x] < 0) p[x] = 0;
    }
}

/* Spike-driven: each operand value tested; a non-zero one's weight rows added to every plane's sums. */
void s2k_mac_int8(uint8_t* sram, const struct s2k_cmd* c) {
  const uint32_t height = c->height, src = c->src, src_row_stride = c->src_row_stride, depth = c->depth,
                 a_col_stride = c->a_col_stride, planes = c->planes, weights = c->weights,
                 weights_plane_stride = c->weights_plane_stride, weights_row_stride = c->weights_row_stride,
                 dst = c->dst, dst_plane_stride = c->dst_plane_stride, dst_row_stride = c->dst_row_stride,
                 width = c->width;
  for (uint32_t r = 0; r < height; ++r) {
    const int8_t* a = (const int8_t*)(sram + src + r * src_row_stride);
    for (uint32_t k = 0; k < depth; ++k) {
      const int32_t v = a[k * a_col_stride];
      if (v == 0) continue;
      for (uint32_t p = 0; p < planes; ++p) {
        const int8_t* wrow = (const int8_t*)(sram + weights + p * weights_plane_stride + k * weights_row_stride);
        uint8_t* sums = sram + dst + p * dst_plane_stride + r * dst_row_stride;
        for (uint32_t x = 0; x < width; ++x) store32(sums + 4 * x, add32(load32(sums + 4 * x), v * wrow[x]));
      }
    }
  }
}

/* Circle Reverse: new[t[s]] = old[s], cycle by cycle with one word held; `done` marks the words placed. */
void s2k_permute_words(uint8_t* sram, const struct s2k_cmd* c, uint8_t* done) {
  const uint32_t table = c->table, planes = c->planes, src = c->src, src_plane_stride = c->src_plane_stride,
                 width = c->width;
  const uint8_t* entries = sram + table;
  for (uint32_t p = 0; p < planes; ++p) {
    uint8_t* base = sram + src + p * src_plane_stride;
    for (uint32_t s = 0; s < width; ++s) done[s] = 0;
    for (uint32_t s = 0; s < width; ++s) {
      if (done[s]) continue;
      int32_t held = load32(base + 4 * s);
      for (uint32_t i = s; !done[i];) {
        done[i] = 1;
        const uint32_t t = (uint32_t)entries[2 * i] | ((uint32_t)entries[2 * i + 1] << 8);
        const int32_t next = load32(base + 4 * t);
        store32(base + 4 * t, held);
        held = next;
        i = t;
      }
    }
  }
}

/* Row by row, forward (arm_apply uses memmove, which a forward copy equals unless a row's destination starts
 * inside its own source, after it: arm_kernels.h). Rows of one byte (a column gathered or scattered, as the SNN
 * spike map is built) are one loop over the rows: a loop of one byte per row would pay a row's loop per byte. */
void s2k_copy8(uint8_t* sram, const struct s2k_cmd* c) {
  const uint32_t planes = c->planes, height = c->height, src = c->src, src_plane_stride = c->src_plane_stride,
                 src_row_stride = c->src_row_stride, dst = c->dst, dst_plane_stride = c->dst_plane_stride,
                 dst_row_stride = c->dst_row_stride, width = c->width;
  for (uint32_t d = 0; d < planes; ++d) {
    const uint8_t* a = sram + src + d * src_plane_stride;
    uint8_t* q = sram + dst + d * dst_plane_stride;
    if (width == 1) {
      for (uint32_t y = 0; y < height; ++y) q[y * dst_row_stride] = a[y * src_row_stride];
      continue;
    }
    for (uint32_t y = 0; y < height; ++y)
      for (uint32_t x = 0; x < width; ++x) q[y * dst_row_stride + x] = a[y * src_row_stride + x];
  }
}

void s2k_table8(uint8_t* sram, const struct s2k_cmd* c) {
  const uint32_t planes = c->planes, table = c->table, table_plane_step = c->table_plane_step, height = c->height,
                 src = c->src, src_plane_stride = c->src_plane_stride, src_row_stride = c->src_row_stride,
                 width = c->width;
  for (uint32_t d = 0; d < planes; ++d) {
    const uint8_t* t = sram + table + d * table_plane_step + 128;
    for (uint32_t y = 0; y < height; ++y) {
      int8_t* p = (int8_t*)(sram + src + d * src_plane_stride + y * src_row_stride);
      for (uint32_t x = 0; x < width; ++x) p[x] = (int8_t)t[p[x]];
    }
  }
}

void s2k_affine8(uint8_t* sram, const struct s2k_cmd* c) {
  const uint32_t planes = c->planes, table = c->table, height = c->height, src = c->src,
                 src_plane_stride = c->src_plane_stride, src_row_stride = c->src_row_stride, width = c->width;
  const int32_t shift = c->shift, relu = c->relu;
  const int32_t s = shift, lo = relu ? 0 : -128;
  for (uint32_t d = 0; d < planes; ++d) {
    const int32_t m = load32(sram + table + 8 * d), o = load32(sram + table + 8 * d + 4);
    for (uint32_t y = 0; y < height; ++y) {
      int8_t* p = (int8_t*)(sram + src + d * src_plane_stride + y * src_row_stride);
      for (uint32_t x = 0; x < width; ++x)
        p[x] = (int8_t)at_least(sat8(add32((int32_t)((uint32_t)p[x] * (uint32_t)m), o) >> s), lo);
    }
  }
}

void s2k_add_scaled8(uint8_t* sram, const struct s2k_cmd* c) {
  const uint32_t planes = c->planes, height = c->height, src = c->src, src_plane_stride = c->src_plane_stride,
                 src_row_stride = c->src_row_stride, dst = c->dst, dst_plane_stride = c->dst_plane_stride,
                 dst_row_stride = c->dst_row_stride, width = c->width;
  const int32_t shift = c->shift, shift_a = c->shift_a, shift_b = c->shift_b, relu = c->relu;
  const int32_t s = shift, r = rounding(shift), sa = shift_a, sb = shift_b, lo = relu ? 0 : -128;
  for (uint32_t d = 0; d < planes; ++d)
    for (uint32_t y = 0; y < height; ++y) {
      const int8_t* a = (const int8_t*)(sram + src + d * src_plane_stride + y * src_row_stride);
      int8_t* q = (int8_t*)(sram + dst + d * dst_plane_stride + y * dst_row_stride);
      for (uint32_t x = 0; x < width; ++x)
        q[x] = (int8_t)at_least(sat8((q[x] * (1 << sa) + a[x] * (1 << sb) + r) >> s), lo);
    }
}

void s2k_mul8(uint8_t* sram, const struct s2k_cmd* c) {
  const uint32_t planes = c->planes, height = c->height, src = c->src, src_plane_stride = c->src_plane_stride,
                 src_row_stride = c->src_row_stride, dst = c->dst, dst_plane_stride = c->dst_plane_stride,
                 dst_row_stride = c->dst_row_stride, width = c->width;
  const int32_t shift = c->shift, relu = c->relu;
  const int32_t s = shift, r = rounding(shift), lo = relu ? 0 : -128;
  for (uint32_t d = 0; d < planes; ++d)
    for (uint32_t y = 0; y < height; ++y) {
      const int8_t* a = (const int8_t*)(sram + src + d * src_plane_stride + y * src_row_stride);
      int8_t* q = (int8_t*)(sram + dst + d * dst_plane_stride + y * dst_row_stride);
      for (uint32_t x = 0; x < width; ++x) q[x] = (int8_t)at_least(sat8((q[x] * a[x] + r) >> s), lo);
    }
}

void s2k_channel_mul8(uint8_t* sram, const struct s2k_cmd* c) {
  const uint32_t planes = c->planes, table = c->table, height = c->height, src = c->src,
                 src_plane_stride = c->src_plane_stride, src_row_stride = c->src_row_stride, width = c->width;
  const int32_t shift = c->shift;
  const int32_t s = shift, r = rounding(shift);
  for (uint32_t d = 0; d < planes; ++d) {
    const int32_t f = (int8_t)sram[table + d];
    for (uint32_t y = 0; y < height; ++y) {
      int8_t* p = (int8_t*)(sram + src + d * src_plane_stride + y * src_row_stride);
      for (uint32_t x = 0; x < width; ++x) p[x] = (int8_t)sat8((p[x] * f + r) >> s);
    }
  }
}
