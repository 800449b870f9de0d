// Small networks in the layer-list format (mapper/README.md) that the distributor tests run on the model
// and on both backends: small enough for the RTL, with a block of every kind the distributor handles.
#pragma once

namespace s2::test_networks {

inline constexpr const char* kSmall =
    "network small\n"
    "input 36 20 3\n"
    "conv 3 3 3 12 pad=same act=relu\n"   // CONV_1: padding, 3 filter parts
    "conv 3 3 12 8 pad=same act=relu\n"   // CONV_2 + POOL_3 (fused)
    "pool max 2 2 stride=2\n"
    "conv 1 1 8 8 act=relu\n"             // CONV_4: no padding
    "fc 1440 40 act=relu\n";              // FC_5: split along H_B (partial sums, FCE_5)

// Strided convolutions (3x3 with padding: one task per output row; 1x1: gathered rows), pooling blocks
// (max with padding and overlapping windows, global average), a projection and an identity residual block.
inline constexpr const char* kSmallResidual =
    "network small_residual\n"
    "input 62 58 4\n"
    "conv 3 3 4 8 stride=2 pad=1\n"                // CONV_1: 31x29x8, one MLA task per kept output row
    "pool max 3 3 stride=2 pad=1\n"                // PADD_2 POOL_2: 16x15x8
    "residual begin\n"
    "conv 1 1 8 8 stride=2\n"                      // CONV_3: 8x8x8 from every second row, gathered by the DMA
    "conv 3 3 8 8 pad=same\n"
    "conv 1 1 8 16 act=none\n"                     // CONV_5 QUAN_5 MAT_ELE_5 ACTI_5
    "residual end shortcut=projection stride=2\n"  // CONV_SC_5: 1x1 stride 2, no ReLU
    "residual begin\n"
    "conv 1 1 16 8\n"
    "conv 3 3 8 8 pad=same\n"
    "conv 1 1 8 16 act=none\n"                     // identity shortcut
    "residual end shortcut=identity\n"
    "pool avg 8 8 stride=1\n";                     // POOL_9: 1x1x16

// A non-square map (users' inputs rarely are square) down to a global average pooling over all of it: a
// pooling window that is not square (6x4), one output pixel per channel.
inline constexpr const char* kNonSquareGlobalPool =
    "network non_square_global_pool\n"
    "input 12 8 3\n"
    "conv 3 3 3 8 pad=same act=relu\n"  // CONV_1: 12x8x8
    "pool max 2 2 stride=2\n"           //   fused: 6x4x8
    "pool avg 6 4 stride=1\n";          // POOL_3: 1x1x8

// A convolution whose input cannot be split finely enough by its output alone: the splitter cuts its
// input channels into two parts (768x2), whose partial sums the ARM adds.
inline constexpr const char* kDepthSplit =
    "network depth_split\n"
    "input 12 6 1536\n"
    "conv 3 3 1536 8 pad=same act=relu\n";

}  // namespace s2::test_networks
