#include "dram_layout.h"

#include "stream_commands.h"

namespace s2::mapper {

void for_each_mm_piece(const OperationBlock& b, const BlockSplit& s, const HwConfig& cfg,
                       const std::function<void(const MmPiece&, std::uint64_t offset, const SramLayout&)>& f) {
  std::uint64_t at = 0;
  for (int iw = 0; iw < s.w.count(); ++iw)
    for (int ih = 0; ih < s.h.count(); ++ih) {
      const MmPiece mp = mm_piece(b, s, iw, ih);
      const SramLayout l = sram_layout(mm_task(mp.task), cfg);
      f(mp, at, l);
      at += l.b_bytes;
    }
}

}  // namespace s2::mapper
