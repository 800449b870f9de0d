// The QPE's router packed for the tile schedule's loop (model/qpe/tile_schedule.cpp): the same rules as the
// NoC fabric's Router (noc/router.h), which tests/tile_schedule_test.cpp holds it to edge by edge.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/noc/packet.h"
#include "model/task.h"

namespace s2 {

// The QPE's router (rtl_stubs/noc_router.sv, as noc/router.h runs it in the NoC fabric) and the PEs' outbound
// FIFOs, laid out for the tile schedule's loop. A QPE alone carries only operand-A reads and their responses
// between its four PEs, so a packet is a byte (from PE, to PE, message class), a FIFO of at most 8 packets a
// 64-bit word (front in the low byte) and the pipeline a 64-bit word (stage s in byte s): a clock of the NoC
// is shifts and masks, no division and no copies of packets. The rules are noc/router.h's: one packet per
// NoC edge, round robin from the channel after the last accepted among the channels whose head packet's
// output FIFO has room counting what the pipeline holds for it, delivered `latency` edges later.
struct QpeNoc {
  using Pkt = std::uint8_t;  // 0x80 | class << 4 | to << 2 | from
  static Pkt packet(int from, int to, int cls) { return Pkt(0x80 | cls << 4 | to << 2 | from); }
  static int from(Pkt p) { return p & 3; }
  static int to(Pkt p) { return (p >> 2) & 3; }
  static int channel(Pkt p) { return ((p >> 2) & 3) * kNocClasses + ((p >> 4) & 1); }  // the output channel

  static constexpr int kChannels = kPesPerQpe * kNocClasses;  // PE p's class k is channel p * 2 + k
  struct Queue {
    std::uint64_t bytes = 0;  // packet i in byte i
    int size = 0;
    Pkt front() const { return Pkt(bytes); }
    void push(Pkt p) { bytes |= std::uint64_t(p) << (8 * size++); }
    void pop() {
      bytes >>= 8;
      --size;
    }
  };

  int latency = 4, in_depth = 4, out_depth = 4;
  std::array<Queue, kChannels> in, out;  // in: the PEs' outbound FIFOs; out: the router's output FIFOs
  std::array<int, kChannels> reserved{};  // packets in the pipeline per output channel
  std::uint64_t pipe = 0;                 // stage s in byte s
  int in_pipe = 0, waiting = 0;
  std::uint32_t in_nonempty = 0, out_nonempty = 0;  // bit c: FIFO c holds a packet
  int next = 0;  // the round robin's next channel (noc/router.h's RoundRobin over its 20 channels)

  bool in_full(int c) const { return in[c].size == in_depth; }
  void push_in(int c, Pkt p) {
    in[c].push(p);
    in_nonempty |= 1u << c;
    ++waiting;
  }
  void pop_out(int c) {
    out[c].pop();
    if (out[c].size == 0) out_nonempty &= ~(1u << c);
  }
  int decide() const {
    if (waiting == 0) return -1;
    std::uint32_t eligible = 0;
    for (std::uint32_t m = in_nonempty; m != 0; m &= m - 1) {
      const int c = std::countr_zero(m);
      const int oc = channel(in[c].front());
      if (out[oc].size + reserved[oc] < out_depth) eligible |= 1u << c;
    }
    if (!eligible) return -1;
    const std::uint32_t from_next = next < kChannels ? eligible >> next << next : 0;
    return std::countr_zero(from_next ? from_next : eligible);
  }
  void apply(int accepted) {
    if (accepted < 0 && in_pipe == 0) return;
    const int last = latency - 1;
    if (const Pkt p = Pkt(pipe >> (8 * last))) {  // a packet leaves the last stage
      const int c = channel(p);
      out[c].push(p);
      out_nonempty |= 1u << c;
      --reserved[c];
      --in_pipe;
    }
    pipe = (pipe << 8) & stage_mask();
    if (accepted < 0) return;
    const Pkt p = in[accepted].front();
    in[accepted].pop();
    if (in[accepted].size == 0) in_nonempty &= ~(1u << accepted);
    --waiting;
    pipe |= p;
    ++reserved[channel(p)];
    ++in_pipe;
    next = accepted + 1 == kNocChannels ? 0 : accepted + 1;
  }
  std::uint64_t stage_mask() const { return latency == 8 ? ~0ull : (1ull << (8 * latency)) - 1; }
  // edges from the last one until a packet in the pipeline enters its output FIFO; 0: the pipeline is empty
  int edges_to_exit() const { return pipe ? latency - (63 - std::countl_zero(pipe)) / 8 : 0; }
  // `edges` quiet edges (fewer than edges_to_exit()): the pipeline moves on
  void skip_quiet_edges(int edges) {
    if (edges <= 0 || in_pipe == 0) return;
    if (edges >= edges_to_exit()) throw std::logic_error("tile schedule: a quiet jump over a packet leaving the pipeline (model bug)");
    pipe = (pipe << (8 * edges)) & stage_mask();
  }
  // the state its future depends on (noc/router.h's append_state and the outbound FIFOs)
  void append_state(std::vector<std::int64_t>& key) const {
    key.insert(key.end(), {next, static_cast<std::int64_t>(pipe)});
    for (const Queue& q : out) key.insert(key.end(), {q.size, static_cast<std::int64_t>(q.bytes)});
    for (const Queue& q : in) key.insert(key.end(), {q.size, static_cast<std::int64_t>(q.bytes)});
  }
};

}  // namespace s2
