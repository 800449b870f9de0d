#include "chip_reuse.h"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "model/sram_layout.h"
#include "stream_commands.h"

namespace s2::mapper {

namespace {

struct ChipReusePlan {
  std::vector<int> ring;  // computation QPEs in ring order
  std::vector<int> ring_dram;
  std::uint32_t a2_base = 0;   // the second filter buffer (thesis 5.5: room for migrating filters)
  std::uint64_t filter_part_bytes = 0;
};

ChipReusePlan chip_reuse_plan(const ConvPlan& p) {
  ChipReusePlan r;
  const ChipShape& chip = p.cfg.chip;
  for (const DoubleQpeBlock& db : chip.double_qpe_blocks) {
    for (const auto& block : db.qpe_blocks)
      for (QpeCoord q : block) {
        r.ring.push_back(chip.qpe_index(q));
        r.ring_dram.push_back(db.dram);
      }
  }
  const int rows = p.cfg.mac_rows;
  const int per_part = p.s->c.sizes.front();
  r.filter_part_bytes = std::uint64_t((per_part + rows - 1) / rows) * p.dram_group_stride;
  r.a2_base = static_cast<std::uint32_t>(align_up(p.layout_end, 16));
  if (r.a2_base + r.filter_part_bytes > static_cast<std::uint64_t>(p.cfg.sram_bytes))
    throw std::invalid_argument(p.core + ": no room for a second filter buffer (" + std::to_string(r.filter_part_bytes) +
                                " bytes after " + std::to_string(r.a2_base) + " in " + std::to_string(p.cfg.sram_bytes) + ")");
  return r;
}

// A transfer between a PE's SRAM and the feature map that starts at DRAM address `region`, redirected to
// where the storage QPEs keep that map: split where it crosses from one row band (storage PE) to the next
// (or, rows that are not whole map rows apart, per run within a map row). The pieces go out starting with
// the `first`-th (mod their number), so that PEs given different `first` do not all queue at the same
// storage PE's port at once.
void via_storage(std::vector<StreamCommand>& out, const StreamCommand& c, std::uint64_t region, const StorageRegion& where,
                 std::size_t first = 0) {
  const std::size_t start = out.size();
  const DmaTransfer& t = c.dma;
  const std::uint64_t W = static_cast<std::uint64_t>(where.width);
  const std::uint64_t lo = t.dram_addr - region;
  const auto emit = [&](std::uint64_t off, std::uint32_t sram, std::uint32_t planes, std::uint32_t rows, std::uint32_t bytes) {
    StreamCommand y = c;
    y.dma = t;
    y.dma.remote = {MemoryRef::Kind::Sram, where.pe_of(off)};
    y.dma.dram_addr = where.addr_of(off);
    y.dma.dram_plane_stride = std::uint64_t(where.band_rows) * W;
    y.dma.sram_addr = sram;
    y.dma.planes = planes;
    y.dma.rows = rows;
    y.dma.row_bytes = bytes;
    // rows (then planes) that follow one another on both sides move as one: the DMA waits for each row's
    // acknowledgement, and a storage PE is hops away
    DmaTransfer& d = y.dma;
    if (d.rows > 1 && d.dram_row_stride == d.row_bytes && d.sram_row_stride == d.row_bytes) {
      d.row_bytes *= d.rows;
      d.rows = 1;
    }
    if (d.rows == 1 && d.planes > 1 && d.dram_plane_stride == d.row_bytes && d.sram_plane_stride == d.row_bytes) {
      d.row_bytes *= d.planes;
      d.planes = 1;
    }
    out.push_back(y);
  };
  // the usual case: whole planes of the map apart, rows a whole number of map rows apart, each row within
  // a map row: split at the bands' edges only
  if ((t.planes == 1 || t.dram_plane_stride == where.plane_bytes()) && (t.rows == 1 || t.dram_row_stride % W == 0) &&
      lo % W + t.row_bytes <= W) {
    const std::uint64_t step = t.rows == 1 ? 1 : t.dram_row_stride / W, y0 = lo / W % where.height;
    std::uint32_t r = 0;
    while (r < t.rows) {
      const std::uint64_t band = (y0 + r * step) / where.band_rows;
      std::uint32_t n = 1;
      while (r + n < t.rows && (y0 + (r + n) * step) / where.band_rows == band) ++n;
      emit(lo + std::uint64_t(r) * t.dram_row_stride, t.sram_addr + r * t.sram_row_stride, t.planes, n, t.row_bytes);
      r += n;
    }
  } else {
    for (std::uint32_t pl = 0; pl < t.planes; ++pl)
      for (std::uint32_t r = 0; r < t.rows; ++r) {
        std::uint64_t off = lo + pl * t.dram_plane_stride + r * t.dram_row_stride;
        std::uint32_t sram = t.sram_addr + pl * t.sram_plane_stride + r * t.sram_row_stride, left = t.row_bytes;
        while (left > 0) {
          const std::uint32_t n = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, W - off % W));
          emit(off, sram, 1, 1, n);
          off += n;
          sram += n;
          left -= n;
        }
      }
  }
  const std::size_t n = out.size() - start;
  if (n == 0) {  // it moves nothing (a piece's rows all in the padding): kept as it is, as from DRAM
    out.push_back(c);
    return;
  }
  std::rotate(out.begin() + static_cast<std::ptrdiff_t>(start), out.begin() + static_cast<std::ptrdiff_t>(start + first % n), out.end());
}

// One round: input parts f0.. (up to one per computation PE) with filter groups g0.. (up to one per ring
// QPE), and where each input part sits. Ring slot a * 4 + z is PE z of ring QPE a.
struct ChipRound {
  int g0 = 0;
  int S = 1;                    // steps: the copies of an input part are S ring QPEs apart
  int R = 1;                    // replicas of the parts' arrangement (blocks to spare)
  std::vector<int> part_of;     // per slot: the input part it holds, -1: none
  std::vector<int> replica_of;  // per slot: its replica, which computes the runs k = r, r + R, ...
};

// A double QPE block's holders of one filter or input part: the first loads it from DRAM (or the storage
// QPEs), the others get copies through the NoC.
struct Copies {
  std::vector<int> pes;  // holders in one double QPE block, the one loading from DRAM first
  std::uint32_t addr = 0, bytes = 0;
};

// The stream conv_fuse_reuse_chip() writes, round by round.
class ChipReuseStreams {
 public:
  ChipReuseStreams(const ConvPlan& p, BlockStreams& bs)
      : p_(p), s_(*p.s), r_(chip_reuse_plan(p)), bs_(bs), st_(new_stream(p.core + " fuse_reuse", p.map, p.workers)) {
    Q_ = static_cast<int>(r_.ring.size());
    slots_ = Q_ * kPesPerQpe;
    buffer_[0] = buffer_[1] = p;
    buffer_[1].a_base = r_.a2_base;
    if (s_.schedule == Schedule::Overlapped) {
      // after the second filter buffer, within what the splitter may use for MLA data (thesis 5.2.1)
      const std::uint64_t base = align_up(r_.a2_base + r_.filter_part_bytes, 16), bytes = p.o2_base - p.o_base;
      if (base + bytes <= static_cast<std::uint64_t>(p.cfg.sram_mla_budget_bytes)) second_area_ = static_cast<std::uint32_t>(base);
      else
        bs.schedule_note = fmt::format("no room for a second result area ({} bytes after {} in the {}-byte budget): the MLA "
                                       "does not overlap the ARM and the stores", bytes, base, p.cfg.sram_mla_budget_bytes);
    }
    bs.schedule = s_.schedule;
    fm_ = fmap_parts(s_);
    P_ = static_cast<int>(fm_.size());
    F_ = s_.c.count();
    G_ = (F_ + kPesPerQpe - 1) / kPesPerQpe;
    Gr_ = std::min(G_, Q_);  // filter groups per round
    // every computation PE meets the others through the host
    st_.sync_groups.emplace_back();
    for (int a = 0; a < Q_; ++a)
      for (int z = 0; z < kPesPerQpe; ++z) st_.sync_groups[0].push_back(pe_at(a, z));
    std::sort(st_.sync_groups[0].begin(), st_.sync_groups[0].end());
  }

  TaskStream run() {
    for (int f0 = 0; f0 < P_; f0 += slots_)
      for (int g0 = 0; g0 < G_; g0 += Gr_) {
        const ChipRound round = arrange(f0, g0);
        spread(load(round));
        for (int t = 0; t < round.S; ++t) step(round, t);
      }
    // every DRAM transfer goes to the PE's double QPE block's DRAM
    for (int a = 0; a < Q_; ++a)
      for (int z = 0; z < kPesPerQpe; ++z) use_dram(st_, pe_at(a, z), r_.ring_dram[static_cast<std::size_t>(a)]);
    return std::move(st_);
  }

 private:
  int pe_at(int a, int z) const { return r_.ring[static_cast<std::size_t>(a % Q_)] * kPesPerQpe + z; }
  std::vector<StreamCommand>& cmds(int a, int z) { return st_.pe[static_cast<std::size_t>(pe_at(a, z))]; }
  void sync_all() {
    for (int pe : st_.sync_groups[0]) st_.pe[static_cast<std::size_t>(pe)].push_back(sync_command());
  }

  // The input parts f0.. of the round with filter groups g0..: each on m PEs (m a power of two, as many
  // copies as the slots allow, at most Gr), in blocks of Gr ring QPEs spread evenly over the ring (and so
  // over the double QPE blocks and their DRAMs). With blocks to spare, the parts' arrangement repeats R
  // times (R = 2 or 4) and replica r computes only the runs k = r, r + R, ... of each step: the QPE's
  // filter parts shared out among the replicas.
  ChipRound arrange(int f0, int g0) const {
    ChipRound c;
    c.g0 = g0;
    const int Pr = std::min(slots_, P_ - f0);
    int m = 1;
    while (m * 2 <= Gr_ && Pr * m * 2 <= slots_) m *= 2;
    c.S = Gr_ / m;
    c.part_of.assign(static_cast<std::size_t>(slots_), -1);
    c.replica_of.assign(static_cast<std::size_t>(slots_), 0);
    const int blocks = Q_ / Gr_, used = (Pr + kPesPerQpe * c.S - 1) / (kPesPerQpe * c.S);
    while (c.R < kPesPerQpe && used * c.R * 2 <= blocks) c.R *= 2;
    for (int f = 0; f < Pr; ++f)
      for (int rep = 0; rep < c.R; ++rep) {
        const int z = f % kPesPerQpe, rr = (f / kPesPerQpe) % c.S;
        const int b = (f / (kPesPerQpe * c.S) * c.R + rep) * blocks / (used * c.R);
        for (int k = 0; k < m; ++k) {
          const int a = b * Gr_ + rr + k * c.S;
          c.part_of[static_cast<std::size_t>(a * kPesPerQpe + z)] = f0 + f;
          c.replica_of[static_cast<std::size_t>(a * kPesPerQpe + z)] = rep;
        }
      }
    return c;
  }

  // Load (thesis 4.4: each double QPE block loads from its own DRAM or storage QPEs, independently of the
  // others): every filter part and every input part a double QPE block holds comes once from its DRAM (an
  // input part the previous block left in the storage QPEs, from there), into the first of its PEs that
  // holds it. Returns each part's holders per double QPE block, for spread().
  std::vector<Copies> load(const ChipRound& c) {
    const int segment = Q_ / static_cast<int>(p_.cfg.chip.double_qpe_blocks.size());  // ring QPEs per double QPE block
    std::vector<Copies> trees;
    std::map<std::pair<int, int>, std::size_t> tree_of;  // (double QPE block, filter part or -1 - input part)
    auto hold = [&](int a, int z, int what, std::uint32_t addr, std::uint32_t bytes) {
      auto [it, fresh] = tree_of.emplace(std::make_pair(a / segment, what), trees.size());
      if (fresh) trees.push_back({{}, addr, bytes});
      trees[it->second].pes.push_back(pe_at(a, z));
      return fresh;
    };
    for (int a = 0; a < Q_; ++a)
      for (int z = 0; z < kPesPerQpe; ++z) {
        auto& out = cmds(a, z);
        const int part = (c.g0 + a % Gr_) * kPesPerQpe + z;
        if (part < F_ && hold(a, z, part, p_.a_base, static_cast<std::uint32_t>(r_.filter_part_bytes)))
          load_filters(out, buffer_[0], conv_piece(*p_.b, s_, 0, 0, part, 0));
        const int f = c.part_of[static_cast<std::size_t>(a * kPesPerQpe + z)];
        if (f < 0 || c.g0 > 0) continue;  // the input parts stay for every round of filters (input reuse)
        const PieceIndex& fi = fm_[static_cast<std::size_t>(f)];
        const ConvPiece cp = conv_piece(*p_.b, s_, fi.iw, fi.ih, 0, 0);
        const SramLayout l = sram_layout(window_task(p_, cp), p_.cfg);
        if (!hold(a, z, -1 - f, l.b_base, l.b_bytes)) continue;
        if (!bs_.input_storage.held()) {
          load_ifmap(out, p_, cp, false, p_.core);
          continue;
        }
        // from the storage QPEs, where the previous block left the map
        std::vector<StreamCommand> from_dram;
        load_ifmap(from_dram, p_, cp, false, p_.core);
        for (const StreamCommand& cmd : from_dram)
          if (cmd.kind == CommandKind::DmaLoad) via_storage(out, cmd, p_.map.input, bs_.input_storage, static_cast<std::size_t>(f));
          else out.push_back(cmd);
      }
    return trees;
  }

  // Each part spreads from its loader to the other holders of its double QPE block as a binary tree
  // through the NoC (every computation PE meets the others between levels), so that no PE sends more than
  // log2 of the copies. The far copies first, when few holders send, the near ones last, when many do:
  // level l of a tree of h holders (L levels, 2^L >= h) sends from every holder j that is a multiple of
  // 2s, s = 2^(L-1-l), to holder j + s (holders are in ring order, so that s is about the distance).
  void spread(const std::vector<Copies>& trees) {
    const auto levels = [](std::size_t h) {
      std::size_t L = 0;
      while ((std::size_t{1} << L) < h) ++L;
      return L;
    };
    std::size_t most = 0;
    for (const Copies& c : trees) most = std::max(most, levels(c.pes.size()));
    for (std::size_t level = 0; level < most; ++level) {
      sync_all();
      for (const Copies& c : trees) {
        const std::size_t L = levels(c.pes.size());
        if (level >= L) continue;
        const std::size_t stride = std::size_t{1} << (L - 1 - level);
        for (std::size_t j = 0; j + stride < c.pes.size(); j += 2 * stride) {
          DmaTransfer t;
          t.remote = {MemoryRef::Kind::Sram, c.pes[j + stride]};
          t.dram_addr = c.addr;
          t.sram_addr = c.addr;
          t.row_bytes = c.bytes;
          st_.pe[static_cast<std::size_t>(c.pes[j])].push_back(dma_command(CommandKind::DmaStore, p_.core, t));
        }
      }
    }
    sync_all();
  }

  // Step t: every PE computes its input part with its QPE's filter parts and stores the results, while its
  // filter part moves on to the next ring QPE; then all computation PEs meet.
  void step(const ChipRound& c, int t) {
    const ConvPlan& cur = buffer_[t % 2];
    for (int a = 0; a < Q_; ++a)
      for (int z = 0; z < kPesPerQpe; ++z) {
        auto& out = cmds(a, z);
        // ring QPE a holds, at step t, the group that started t QPEs before it
        const int group = c.g0 + ((a - t) % Gr_ + Gr_) % Gr_;
        if (t + 1 < c.S && group * kPesPerQpe + z < F_) {
          // the filter part on to the same PE of the next ring QPE, into the buffer it reads next step
          DmaTransfer mig;
          mig.remote = {MemoryRef::Kind::Sram, pe_at(a + 1, z)};
          mig.dram_addr = buffer_[(t + 1) % 2].a_base;
          mig.sram_addr = cur.a_base;
          mig.row_bytes = static_cast<std::uint32_t>(r_.filter_part_bytes);
          StreamCommand m = dma_command(CommandKind::DmaStore, p_.core, mig);
          m.async = true;
          out.push_back(m);
        }
        const int f = c.part_of[static_cast<std::size_t>(a * kPesPerQpe + z)];
        if (f >= 0) compute(out, cur, c, f, group, z, c.replica_of[static_cast<std::size_t>(a * kPesPerQpe + z)]);
        StreamCommand wait;
        wait.kind = CommandKind::WaitDma;
        wait.operation = p_.core;
        out.push_back(wait);
        out.push_back(sync_command());
      }
  }

  // PE z's runs on input part f with the filter parts of `group` in its QPE (operand-A shift k), the runs
  // of its replica only, each result stored into the storage QPEs or DRAM. In the thesis's schedule each run's
  // MLA task, element-wise passes and store follow one another; overlapped (Schedule::Overlapped, where the
  // second result area fits), the MLA computes run i into one result area while the ARM finishes run i - 1 in
  // the other and the DMA stores it: the next MLA task into an area is issued only after the store from it.
  void compute(std::vector<StreamCommand>& out, const ConvPlan& cur, const ChipRound& c, int f, int group, int z,
               int replica) {
    const PieceIndex& fi = fm_[static_cast<std::size_t>(f)];
    std::vector<std::pair<ConvPiece, int>> runs;  // (piece, operand-A shift k)
    for (int k = 0; k < kPesPerQpe; ++k) {
      if (group * kPesPerQpe + (z + k) % kPesPerQpe >= F_) continue;  // (fewer than 4 filter parts)
      if (k % c.R != replica) continue;                               // another replica's run
      runs.emplace_back(conv_piece(*p_.b, s_, fi.iw, fi.ih, group * kPesPerQpe + (z + k) % kPesPerQpe, 0), k);
    }
    if (!second_area_) {
      for (const auto& [cp, k] : runs) {
        run_mla(out, cur, cp, cp.task.C, k, p_.o_base);
        finish(out, cp, p_.o_base);
      }
      return;
    }
    const std::uint32_t area[2] = {p_.o_base, *second_area_};
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const std::size_t first = out.size();
      run_mla(out, cur, runs[i].first, runs[i].first.task.C, runs[i].second, area[i % 2]);
      for (std::size_t j = first; j < out.size(); ++j) out[j].async = true;
      if (i > 0) finish(out, runs[i - 1].first, area[(i - 1) % 2]);
    }
    if (runs.empty()) return;
    StreamCommand wait;
    wait.kind = CommandKind::WaitMla;
    wait.operation = p_.core;
    out.push_back(wait);
    finish(out, runs.back().first, area[(runs.size() - 1) % 2]);
  }

  // The ARM's passes over a run's int32 results at `base` and the store of its int8 result.
  void finish(std::vector<StreamCommand>& out, const ConvPiece& cp, std::uint32_t base) {
    const ResultView v = result_view(p_, cp, cp.task.C);
    element_wise(out, p_, cp, v, base, p_.sc_base, p_.tail, s_.schedule == Schedule::Overlapped);
    const DmaTransfer o = int8_results(p_, cp, v, p_.map.output, base);
    if (bs_.output_storage.held()) via_storage(out, dma_command(CommandKind::DmaStore, p_.core, o), p_.map.output, bs_.output_storage);
    else out.push_back(dma_command(CommandKind::DmaStore, p_.core, o));
  }

  const ConvPlan& p_;
  const BlockSplit& s_;
  const ChipReusePlan r_;
  BlockStreams& bs_;
  TaskStream st_;
  int Q_ = 0, slots_ = 0;                // ring QPEs, computation PEs
  int P_ = 0, F_ = 0, G_ = 0, Gr_ = 0;  // input parts, filter parts, filter groups, groups per round
  ConvPlan buffer_[2];                  // the plan reading filter buffer 1, and buffer 2 (migrating filters)
  std::optional<std::uint32_t> second_area_;  // Schedule::Overlapped: the second result area, where it fits
  std::vector<PieceIndex> fm_;
};

// The maps the block keeps in the storage QPEs (BlockResidency), checked to fit there side by side.
void place_in_storage(const ConvPlan& p, BlockStreams& bs, const BlockResidency& where) {
  if (where.input_in_storage) bs.input_storage = storage_region(p.cfg.chip, p.in, where.input_base);
  if (where.output_in_storage) bs.output_storage = storage_region(p.cfg.chip, {p.Wp, p.Hp, p.C}, where.output_base);
  for (const StorageRegion* m : {&bs.input_storage, &bs.output_storage})
    if (m->held() && m->base + m->chunk_bytes() > static_cast<std::uint64_t>(p.cfg.chip.storage_pe_bytes))
      throw std::invalid_argument(p.core + ": a map's row bands in the storage PEs end past the bytes they may keep (chip.storage_pe_bytes)");
  if (bs.input_storage.held() && bs.output_storage.held() &&
      bs.input_storage.base < bs.output_storage.base + bs.output_storage.chunk_bytes() &&
      bs.output_storage.base < bs.input_storage.base + bs.input_storage.chunk_bytes())
    throw std::invalid_argument(p.core + ": input and output overlap in the storage PEs");
}

}  // namespace

std::string chip_reuse_refusal(const BlockSplit& s, const HwConfig& cfg) {
  if (cfg.chip.double_qpe_blocks.empty()) return "the chip has no storage QPEs (double QPE blocks) for data reuse";
  int ring = 0;
  for (const DoubleQpeBlock& db : cfg.chip.double_qpe_blocks) ring += db.qpes();
  const int g = (s.c.count() + kPesPerQpe - 1) / kPesPerQpe;  // groups of a QPE's filter parts
  if ((g & (g - 1)) != 0)
    return "fuse_reuse on the chip needs 2^n filter parts (thesis 4.4) or at most 4; the split has " +
           std::to_string(s.c.count());
  if (g < ring ? ring % g != 0 : g % ring != 0)
    return "the filter groups (" + std::to_string(g) + ") do not tile the ring of " + std::to_string(ring) + " QPEs";
  return "";
}

TaskStream conv_fuse_reuse_chip(const ConvPlan& p, BlockStreams& bs, const BlockResidency& where) {
  ChipReuseStreams streams(p, bs);
  place_in_storage(p, bs, where);
  return streams.run();
}

}  // namespace s2::mapper
