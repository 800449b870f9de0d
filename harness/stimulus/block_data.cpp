#include "harness/stimulus/block_data.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "mapper/dram_layout.h"
#include "model/golden.h"
#include "model/splitmix64.h"

namespace s2 {

using mapper::BlockKind;
using mapper::BlockSplit;
using mapper::BlockStreams;
using mapper::Operation;
using mapper::OperationBlock;
using mapper::PoolType;
using mapper::PrimitiveKind;
using mapper::Shape3;

namespace {

// The block's unpadded [D][h0][w0] input from the image, into a [D][H][W] map with `pad` zeros on every side
// and `pad_end` more after the last row and column (as PADD gives it).
template <class T>
std::vector<T> padded_input(const std::vector<std::uint8_t>& img, const BlockStreams& bs, const Shape3& padded, int pad,
                            int pad_end = 0) {
  const int W = padded.W, H = padded.H, w0 = W - 2 * pad - pad_end, h0 = H - 2 * pad - pad_end;
  std::vector<T> in(std::size_t(W) * H * padded.D, 0);
  for (int d = 0; d < padded.D; ++d)
    for (int y = 0; y < h0; ++y)
      for (int x = 0; x < w0; ++x)
        in[(std::size_t(d) * H + y + pad) * W + x + pad] =
            static_cast<std::int8_t>(img[bs.map.input + (std::uint64_t(d) * h0 + y) * w0 + x]);
  return in;
}

int padding_of(const OperationBlock& b) {
  const Operation* padd = mapper::find_op(b, PrimitiveKind::Padding);
  return padd ? padd->pad : 0;
}
int end_padding_of(const OperationBlock& b) {
  const Operation* padd = mapper::find_op(b, PrimitiveKind::Padding);
  return padd ? padd->pad_end : 0;
}

// the bias, added in 32 bits (wrapping as the ARM's ADD) before the ReLU and the shift
std::int32_t add_bias(std::int32_t v, std::int32_t c) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(v) + static_cast<std::uint32_t>(c));
}

// A biased layer's value j (output channel or column) as the block's DRAM image holds it (int32, little-endian).
std::int32_t image_bias(const std::vector<std::uint8_t>& img, const BlockStreams& bs, std::size_t j) {
  std::uint32_t u = 0;
  for (int k = 3; k >= 0; --k) u = (u << 8) | img.at(static_cast<std::size_t>(bs.map.bias + 4 * j + std::size_t(k)));
  return static_cast<std::int32_t>(u);
}

// QUAN's right shift for output channel (or column) j: the layer's per-channel shift from the image, else the block's.
int shift_for(const BlockStreams& bs, const std::vector<std::uint8_t>& img, std::size_t j) {
  return bs.map.shift_bytes > 0 ? std::min<int>(img.at(static_cast<std::size_t>(bs.map.shifts + j)), 31) : bs.quant_shift;
}

// An MM block: partial sums per weight piece, each with the accumulator's wrap, added in 32 bits as FCE does;
// then the bias, ReLU and QUAN.
std::vector<std::uint8_t> golden_mm(const OperationBlock& b, const BlockSplit& s, const BlockStreams& bs, const HwConfig& cfg,
                                    const std::vector<std::uint8_t>& img) {
  const bool relu = mapper::find_op(b, PrimitiveKind::ReLU) != nullptr;
  const Operation* quan = mapper::find_op(b, PrimitiveKind::Quantization);
  const int high = quan ? quan->saturate_high : 127;
  const bool biased = bs.map.bias_bytes > 0;
  auto quant = [&](std::int32_t v, std::size_t j) {
    v = (relu ? std::max<std::int32_t>(0, v) : v) >> shift_for(bs, img, j);
    return static_cast<std::uint8_t>(static_cast<std::int8_t>(std::clamp<std::int32_t>(v, -128, high)));
  };
  const int W_B = static_cast<int>(b.core_op().out.elements());
  std::vector<std::uint32_t> sum(static_cast<std::size_t>(W_B), 0);
  mapper::for_each_mm_piece(b, s, cfg, [&](const mapper::MmPiece& mp, std::uint64_t off, const SramLayout& l) {
    const std::uint32_t stride = l.b_row_stride;
    std::vector<std::int8_t> a(static_cast<std::size_t>(mp.task.W_A)), w(std::size_t(mp.task.H_B) * mp.task.W_B);
    for (int k = 0; k < mp.task.W_A; ++k)
      a[k] = static_cast<std::int8_t>(img[bs.map.input + std::uint64_t(mp.row0 + k) * static_cast<std::uint64_t>(cfg.mac_rows)]);
    for (int k = 0; k < mp.task.H_B; ++k)
      for (int j = 0; j < mp.task.W_B; ++j)
        w[std::size_t(k) * mp.task.W_B + j] = static_cast<std::int8_t>(img[bs.map.weights + off + std::uint64_t(k) * stride + j]);
    const std::vector<std::int32_t> part = golden_mm(mp.task, a, w, cfg.accumulator_bits);
    for (int j = 0; j < mp.task.W_B; ++j) sum[std::size_t(mp.col0 + j)] += static_cast<std::uint32_t>(part[j]);
  });
  std::vector<std::uint8_t> out(static_cast<std::size_t>(W_B));
  for (int j = 0; j < W_B; ++j)
    out[j] = quant(biased ? add_bias(static_cast<std::int32_t>(sum[j]), image_bias(img, bs, std::size_t(j)))
                          : static_cast<std::int32_t>(sum[j]),
                   std::size_t(j));
  return out;
}

// A pooling block: zero padding, as PADD gives it, then the window's maximum or its mean truncated toward zero.
std::vector<std::uint8_t> golden_pool(const OperationBlock& b, const BlockStreams& bs, const std::vector<std::uint8_t>& img) {
  const Operation& o = b.core_op();
  const int W = o.in.W, H = o.in.H;
  const std::vector<int> in = padded_input<int>(img, bs, o.in, padding_of(b), end_padding_of(b));
  std::vector<std::uint8_t> out(static_cast<std::size_t>(o.out.elements()));
  for (int d = 0; d < o.out.D; ++d)
    for (int y = 0; y < o.out.H; ++y)
      for (int x = 0; x < o.out.W; ++x) {
        int m = -128, sum = 0;
        for (int ky = 0; ky < o.Hf; ++ky)
          for (int kx = 0; kx < o.Wf; ++kx) {
            const int v = in[(std::size_t(d) * H + y * o.stride + ky) * W + x * o.stride + kx];
            m = std::max(m, v);
            sum += v;
          }
        const int r = o.pool == PoolType::Max ? m : sum / (o.Wf * o.Hf);
        out[(std::size_t(d) * o.out.H + y) * o.out.W + x] = static_cast<std::uint8_t>(static_cast<std::int8_t>(r));
      }
  return out;
}

// An element-wise block (docs/real_networks.md, "Element-wise operations"), from the image's maps and parameters,
// as the specification states it (not as the ARM's loop does: model/pe/arm_ops.cpp is checked against this).
std::vector<std::uint8_t> golden_elementwise(const OperationBlock& b, const BlockStreams& bs, const std::vector<std::uint8_t>& img) {
  const Operation& o = b.core_op();
  const mapper::ElementwiseSpec& e = *o.elementwise;
  const std::size_t plane = std::size_t(o.out.W) * o.out.H, n = plane * std::size_t(o.out.D);
  auto at = [&](std::uint64_t base, std::size_t j) { return std::int64_t(static_cast<std::int8_t>(img.at(static_cast<std::size_t>(base + j)))); };
  auto i32 = [&](std::uint64_t addr) {
    std::uint32_t u = 0;
    for (int k = 3; k >= 0; --k) u = (u << 8) | img.at(static_cast<std::size_t>(addr + std::uint64_t(k)));
    return std::int64_t(static_cast<std::int32_t>(u));
  };
  // >> of a possibly negative value rounds toward minus infinity: the floor division by 2^s
  auto shifted = [](std::int64_t v, int s) { return s > 0 ? (v + (std::int64_t(1) << (s - 1))) >> s : v; };
  std::vector<std::uint8_t> out(n);
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t c = j / plane;
    const std::int64_t x = at(bs.map.input, j);
    std::int64_t y = 0;
    switch (e.op) {
      case mapper::EltOp::Table:
        y = static_cast<std::int8_t>(img.at(static_cast<std::size_t>(bs.map.weights + (e.tables() > 1 ? 256 * c : 0) + std::size_t(x + 128))));
        break;
      case mapper::EltOp::Affine: {
        // in 32 bits, wrapping, as the specification's int32 sum (the import keeps it from wrapping)
        const std::int64_t v = static_cast<std::int32_t>(static_cast<std::uint32_t>(x * i32(bs.map.weights + 8 * c) + i32(bs.map.weights + 8 * c + 4)));
        y = v >> e.shift;
        break;
      }
      case mapper::EltOp::Add:
        y = shifted(x * (std::int64_t(1) << e.shift_a) + at(bs.map.shortcut, j) * (std::int64_t(1) << e.shift_b), e.shift);
        break;
      case mapper::EltOp::Mul: y = shifted(x * at(bs.map.shortcut, j), e.shift); break;
      case mapper::EltOp::ChannelMul: y = shifted(x * at(bs.map.shortcut, c), e.shift); break;
    }
    if (e.relu) y = std::max<std::int64_t>(0, y);
    out[j] = static_cast<std::uint8_t>(static_cast<std::int8_t>(std::clamp<std::int64_t>(y, -128, 127)));
  }
  return out;
}

// A convolution's int32 sums [C][Ho][Wo] from the image's input and packed filters, group by group (a grouped
// convolution's filters over their group's channels; without groups one group of all); split input channels:
// each part's sums wrap at the accumulator's width, then add in 32 bits.
std::vector<std::int32_t> conv_sums(const OperationBlock& b, const BlockSplit& s, const BlockStreams& bs, const HwConfig& cfg,
                                    const std::vector<std::uint8_t>& img) {
  const Operation& conv = b.core_op();
  const int W = conv.in.W, H = conv.in.H, C = conv.out.D;
  const int G = conv.groups, D = conv.weight_depth(), Cg = C / G;
  const std::vector<std::int8_t> in = padded_input<std::int8_t>(img, bs, conv.in, padding_of(b));
  const int rows = cfg.mac_rows;
  const std::uint64_t group_bytes = mapper::filter_group_bytes(conv, rows);
  const std::size_t per_channel = std::size_t(conv.Hf) * conv.Wf;
  std::vector<std::int32_t> v;
  for (int g = 0; g < G; ++g) {
    std::vector<std::int8_t> f(std::size_t(Cg) * D * per_channel);  // the group's filters [Cg][D][Hf][Wf]
    for (int c = 0; c < Cg; ++c)
      for (int d = 0; d < D; ++d)
        for (int ky = 0; ky < conv.Hf; ++ky)
          for (int kx = 0; kx < conv.Wf; ++kx)
            f[((std::size_t(c) * D + d) * conv.Hf + ky) * conv.Wf + kx] = static_cast<std::int8_t>(
                img[bs.map.weights + mapper::packed_filter_offset(conv, rows, group_bytes, g * Cg + c, d, ky, kx)]);
    for (int id = 0; id < s.d.count(); ++id) {
      const int d0 = s.d.begin(id), dp = s.d.sizes[static_cast<std::size_t>(id)], at = g * D + d0;
      const std::vector<std::int8_t> in_part(in.begin() + std::ptrdiff_t(at) * H * W, in.begin() + std::ptrdiff_t(at + dp) * H * W);
      std::vector<std::int8_t> f_part(std::size_t(Cg) * dp * per_channel);
      for (int c = 0; c < Cg; ++c)
        std::copy_n(f.begin() + std::ptrdiff_t((std::size_t(c) * D + d0) * per_channel), std::size_t(dp) * per_channel,
                    f_part.begin() + std::ptrdiff_t(std::size_t(c) * dp * per_channel));
      const std::vector<std::int32_t> part =
          golden_conv(ConvShape{W, H, dp, conv.Wf, conv.Hf, Cg, conv.stride}, f_part, in_part, cfg.accumulator_bits);
      if (v.empty()) v.assign(part.size() * std::size_t(G), 0);
      const std::size_t base = std::size_t(g) * part.size();
      for (std::size_t j = 0; j < part.size(); ++j)
        v[base + j] = static_cast<std::int32_t>(static_cast<std::uint32_t>(v[base + j]) + static_cast<std::uint32_t>(part[j]));
    }
  }
  return v;
}

// A convolution block: its sums, the bias, then the block's element-wise operations in its order, as the
// ARM carries them out.
std::vector<std::uint8_t> golden_conv_block(const OperationBlock& b, const BlockSplit& s, const BlockStreams& bs,
                                            const HwConfig& cfg, const std::vector<std::uint8_t>& img) {
  const Operation& conv = b.core_op();
  const int C = conv.out.D;
  std::vector<std::int32_t> v = conv_sums(b, s, bs, cfg, img);
  int Ho = conv.out.H, Wo = conv.out.W;
  if (bs.map.bias_bytes > 0)
    for (std::size_t j = 0; j < v.size(); ++j) v[j] = add_bias(v[j], image_bias(img, bs, j / (std::size_t(Ho) * Wo)));
  auto sat8 = [](int x) { return std::clamp(x, -128, 127); };
  for (std::size_t i = b.core + 1; i < b.ops.size(); ++i) {
    const Operation& o = b.ops[i];
    switch (o.kind) {
      case PrimitiveKind::ReLU:
        for (auto& x : v) x = std::max(0, x);
        break;
      case PrimitiveKind::Quantization:
        for (std::size_t j = 0; j < v.size(); ++j)
          v[j] = std::clamp(v[j] >> shift_for(bs, img, j / (std::size_t(Ho) * Wo)), -128, o.saturate_high);
        break;
      case PrimitiveKind::Pooling: {
        const int k = o.stride, hp = Ho / k, wp = Wo / k;
        std::vector<std::int32_t> pooled(std::size_t(C) * hp * wp, -128);
        for (int c = 0; c < C; ++c)
          for (int y = 0; y < hp * k; ++y)
            for (int x = 0; x < wp * k; ++x) {
              auto& m = pooled[(std::size_t(c) * hp + y / k) * wp + x / k];
              m = std::max(m, v[(std::size_t(c) * Ho + y) * Wo + x]);
            }
        v = std::move(pooled);
        Ho = hp;
        Wo = wp;
        break;
      }
      case PrimitiveKind::ElementwiseAdd:
        for (std::size_t j = 0; j < v.size(); ++j) v[j] = sat8(v[j] + static_cast<std::int8_t>(img[bs.map.shortcut + j]));
        break;
      case PrimitiveKind::Elementwise:  // a fused activation's table, from the image
        for (auto& x : v) x = static_cast<std::int8_t>(img.at(static_cast<std::size_t>(bs.map.table + std::uint64_t(x + 128))));
        break;
      default: break;
    }
  }
  std::vector<std::uint8_t> out(v.size());
  for (std::size_t j = 0; j < v.size(); ++j) out[j] = static_cast<std::uint8_t>(static_cast<std::int8_t>(v[j]));
  return out;
}

}  // namespace

SystemMemory stage_block_memory(const BlockStreams& bs, const HwConfig& cfg, const std::vector<std::uint8_t>& image) {
  SystemMemory mem;
  mem.drams.assign(cfg.chip.drams.size(), image);
  for (const mapper::StorageRegion* m : {&bs.input_storage, &bs.output_storage})
    for (int pe : m->pes) mem.sram[pe].assign(static_cast<std::size_t>(cfg.sram_bytes), 0);
  if (bs.input_storage.held() && !image.empty())  // (an empty image: a timing-only run, nothing to stage)
    for (std::uint64_t o = 0; o < bs.map.input_bytes; ++o)
      mem.sram[bs.input_storage.pe_of(o)][bs.input_storage.addr_of(o)] = image[static_cast<std::size_t>(bs.map.input + o)];
  return mem;
}

std::vector<std::uint8_t> gather_block_output(const BlockStreams& bs, const SystemMemory& mem) {
  const std::uint64_t lo = bs.map.output, hi = bs.map.output + bs.map.output_bytes;
  std::vector<std::uint8_t> out(bs.map.output_bytes, 0);
  if (bs.output_storage.held()) {
    for (std::uint64_t o = 0; o < bs.map.output_bytes; ++o) {
      const auto it = mem.sram.find(bs.output_storage.pe_of(o));
      if (it != mem.sram.end() && bs.output_storage.addr_of(o) < it->second.size())
        out[static_cast<std::size_t>(o)] = it->second[bs.output_storage.addr_of(o)];
    }
    return out;
  }
  for (const TaskStream& st : bs.streams)
    for (const auto& cmds : st.pe)
      for (const StreamCommand& c : cmds) {
        if (c.kind != CommandKind::DmaStore || c.dma.remote.kind != MemoryRef::Kind::Dram) continue;
        const DmaTransfer& t = c.dma;
        const std::vector<std::uint8_t>& dram = mem.drams.at(static_cast<std::size_t>(t.remote.index));
        for (std::uint64_t pl = 0; pl < t.planes; ++pl)
          for (std::uint64_t r = 0; r < t.rows; ++r) {
            const std::uint64_t a = t.dram_addr + pl * t.dram_plane_stride + r * t.dram_row_stride;
            const std::uint64_t from = std::max(a, lo), to = std::min(a + t.row_bytes, hi);
            if (from < to && to <= dram.size())
              std::copy(dram.begin() + static_cast<std::ptrdiff_t>(from), dram.begin() + static_cast<std::ptrdiff_t>(to),
                        out.begin() + static_cast<std::ptrdiff_t>(from - lo));
          }
      }
  return out;
}

std::vector<std::uint8_t> block_dram_image(const OperationBlock& b, const BlockSplit& s, const BlockStreams& bs,
                                           const HwConfig& cfg, std::uint64_t seed, const BlockInputs& data) {
  std::vector<std::uint8_t> img(bs.map.total, 0);
  SplitMix64 rng{seed};
  // each part of the block's data is the caller's, or drawn in this order: input, weights, shortcut
  auto given_or_drawn = [&](const std::vector<std::int8_t>* given, std::uint64_t n, const char* what) {
    std::vector<std::int8_t> v(n);
    if (given && !given->empty()) {
      if (given->size() != n)
        throw std::invalid_argument(b.name() + ": " + what + " of " + std::to_string(given->size()) + " values, expected " +
                                    std::to_string(n));
      v = *given;
    } else {
      for (auto& x : v) x = static_cast<std::int8_t>(rng.next() >> 56);
    }
    return v;
  };
  const Operation& core = b.core_op();
  const std::vector<std::int8_t>* weights = core.weights.get();
  // a biased layer's int32 values, little-endian, one per output channel or column
  if (core.bias) {
    if (core.bias->size() * 4 != bs.map.bias_bytes)
      throw std::invalid_argument(b.name() + ": a bias of " + std::to_string(core.bias->size()) + " values, expected " +
                                  std::to_string(bs.map.bias_bytes / 4));
    for (std::size_t j = 0; j < core.bias->size(); ++j)
      for (int k = 0; k < 4; ++k)
        img[bs.map.bias + 4 * j + std::size_t(k)] = static_cast<std::uint8_t>(static_cast<std::uint32_t>((*core.bias)[j]) >> (8 * k));
  }
  // a convolution block's fused activation: its table
  if (b.kind == BlockKind::Convolution)
    if (const Operation* t = mapper::find_op(b, PrimitiveKind::Elementwise))
      std::transform(t->elementwise->table.begin(), t->elementwise->table.end(), img.begin() + static_cast<std::ptrdiff_t>(bs.map.table),
                     [](std::int8_t v) { return static_cast<std::uint8_t>(v); });
  // per-channel QUAN shifts, one byte per output channel or column
  if (const Operation* q = mapper::find_op(b, PrimitiveKind::Quantization); q && q->shifts) {
    if (q->shifts->size() != bs.map.shift_bytes)
      throw std::invalid_argument(b.name() + ": " + std::to_string(q->shifts->size()) + " per-channel shifts, expected " +
                                  std::to_string(bs.map.shift_bytes));
    std::copy(q->shifts->begin(), q->shifts->end(), img.begin() + static_cast<std::ptrdiff_t>(bs.map.shifts));
  }
  if (b.kind == BlockKind::MatMul) {
    const int H_B = static_cast<int>(core.in.elements()), W_B = static_cast<int>(core.out.elements());
    const std::vector<std::int8_t> a = given_or_drawn(&data.input, std::uint64_t(H_B), "input");
    for (int k = 0; k < H_B; ++k) img[bs.map.input + std::uint64_t(k) * static_cast<std::uint64_t>(cfg.mac_rows)] = static_cast<std::uint8_t>(a[k]);
    // [OUT][IN] as given (ONNX Gemm with transB, PyTorch's Linear); drawn in the MLA's [IN][OUT] order
    std::vector<std::int8_t> w = given_or_drawn(nullptr, std::uint64_t(H_B) * W_B, "weights");
    if (weights) {
      if (weights->size() != w.size()) throw std::invalid_argument(b.name() + ": weights of the wrong size");
      for (int k = 0; k < H_B; ++k)
        for (int j = 0; j < W_B; ++j) w[std::uint64_t(k) * W_B + j] = (*weights)[std::uint64_t(j) * H_B + k];
    }
    mapper::for_each_mm_piece(b, s, cfg, [&](const mapper::MmPiece& mp, std::uint64_t off, const SramLayout& l) {
      const std::uint32_t stride = l.b_row_stride;
      for (int k = 0; k < mp.task.H_B; ++k)
        for (int j = 0; j < mp.task.W_B; ++j)
          img[bs.map.weights + off + std::uint64_t(k) * stride + j] =
              static_cast<std::uint8_t>(w[std::uint64_t(mp.row0 + k) * W_B + mp.col0 + j]);
    });
    return img;
  }
  const std::vector<std::int8_t> in = given_or_drawn(&data.input, bs.map.input_bytes, "input");
  std::copy(in.begin(), in.end(), img.begin() + static_cast<std::ptrdiff_t>(bs.map.input));
  if (b.kind == BlockKind::Pooling) return img;
  if (b.kind == BlockKind::Elementwise) {
    // the second map (or a channel multiply's factors), then the operation's table or parameters (its "weights")
    const std::vector<std::int8_t> second = given_or_drawn(&data.shortcut, bs.map.shortcut_bytes, "second operand");
    std::copy(second.begin(), second.end(), img.begin() + static_cast<std::ptrdiff_t>(bs.map.shortcut));
    const mapper::ElementwiseSpec& e = *core.elementwise;
    if (e.op == mapper::EltOp::Table)
      std::transform(e.table.begin(), e.table.end(), img.begin() + static_cast<std::ptrdiff_t>(bs.map.weights),
                     [](std::int8_t v) { return static_cast<std::uint8_t>(v); });
    if (e.op == mapper::EltOp::Affine)
      for (std::size_t c = 0; c < e.scale.size(); ++c)
        for (int k = 0; k < 4; ++k) {
          img[bs.map.weights + 8 * c + std::size_t(k)] = static_cast<std::uint8_t>(static_cast<std::uint32_t>(e.scale[c]) >> (8 * k));
          img[bs.map.weights + 8 * c + 4 + std::size_t(k)] = static_cast<std::uint8_t>(static_cast<std::uint32_t>(e.offset[c]) >> (8 * k));
        }
    return img;
  }
  // filters [C][D/G][Hf][Wf], packed in MAC-row groups (mapper/dram_layout.h)
  const Operation& conv = core;
  const int rows = cfg.mac_rows, D = conv.weight_depth(), C = conv.out.D;
  const std::vector<std::int8_t> f = given_or_drawn(weights, std::uint64_t(C) * D * conv.Hf * conv.Wf, "weights");
  const std::uint64_t group_bytes = mapper::filter_group_bytes(conv, rows);
  std::uint64_t i = 0;
  for (int c = 0; c < C; ++c)
    for (int d = 0; d < D; ++d)
      for (int ky = 0; ky < conv.Hf; ++ky)
        for (int kx = 0; kx < conv.Wf; ++kx)
          img[bs.map.weights + mapper::packed_filter_offset(conv, rows, group_bytes, c, d, ky, kx)] =
              static_cast<std::uint8_t>(f[i++]);
  const std::vector<std::int8_t> sc = given_or_drawn(&data.shortcut, bs.map.shortcut_bytes, "shortcut");
  std::copy(sc.begin(), sc.end(), img.begin() + static_cast<std::ptrdiff_t>(bs.map.shortcut));
  return img;
}

std::vector<std::uint8_t> golden_block_output(const OperationBlock& b, const BlockSplit& s, const BlockStreams& bs,
                                              const HwConfig& cfg, const std::vector<std::uint8_t>& img) {
  if (b.kind == BlockKind::MatMul) return golden_mm(b, s, bs, cfg, img);
  if (b.kind == BlockKind::Pooling) return golden_pool(b, bs, img);
  if (b.kind == BlockKind::Elementwise) return golden_elementwise(b, bs, img);
  return golden_conv_block(b, s, bs, cfg, img);
}

}  // namespace s2
