// A QPE's NoC router, clock by clock, by the rules of rtl_stubs/noc_router.sv (thesis 2.3.3, 2.3.4): on every
// NoC clock edge it accepts at most one packet from its input channels (10 ports x 2 message classes),
// chosen by its arbitration among the channels whose head packet's output channel has room (its output
// FIFO's packets plus those already in the pipeline bound for it), and delivers it into that output FIFO
// `latency` edges later; a packet bound for a mesh link enters the link's FIFO one edge earlier, so that
// the neighbour takes it `latency` edges after this router did. Routing is X first, then Y. A packet that
// waits at the head of an input channel for room blocks the packets behind it (head of line).
//
// The arbitration is a part of its own (as SST merlin keeps arbitration apart from router and topology):
// RoundRobin is the RTL's, from the channel after the last accepted. The input channels are FIFOs owned by
// the senders (a PE's outbound FIFOs, the DRAM port's inbound FIFOs, a neighbour's link FIFOs); the output
// FIFOs are the router's. Every decision of an edge is made on the state before it (decide), then applied
// (apply), as the RTL's registers do, so the order in which the NoC's parts are evaluated does not matter.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/noc/packet.h"

namespace s2 {

class Arbitration {
 public:
  virtual ~Arbitration() = default;
  // The channel to accept among `eligible` (bit c: channel c has a packet whose output has room; not 0).
  virtual int pick(std::uint32_t eligible) const = 0;
  virtual void accepted(int channel) = 0;
  virtual void reset() = 0;
  virtual int state() const = 0;  // what its next pick depends on, for comparing states
  virtual void set_state(int state) = 0;
};

// rtl_stubs/noc_router.sv: the first eligible channel from the one after the last accepted, upwards.
class RoundRobin final : public Arbitration {
 public:
  int pick(std::uint32_t eligible) const override;
  void accepted(int channel) override { next_ = channel + 1 == kNocChannels ? 0 : channel + 1; }
  void reset() override { next_ = 0; }
  int state() const override { return next_; }
  void set_state(int state) override { next_ = state; }

 private:
  int next_ = 0;
};

class Router {
 public:
  struct Params {
    int x, y;          // the router's place in the mesh
    int latency;       // NoC clock edges (noc_router.sv LATENCY: 4)
    int out_depth;     // a local port's output FIFO (4)
    int link_depth;    // a mesh link's output FIFO (8: a credit round trip)
  };
  explicit Router(const Params& p, std::unique_ptr<Arbitration> arbitration = std::make_unique<RoundRobin>());

  // Input channel c is the FIFO `f` (owned by its sender; null: nothing is connected).
  void connect_input(int channel, Fifo* f) {
    in_[static_cast<std::size_t>(channel)] = f;
    f->count_into(&waiting_, &nonempty_, channel);
  }
  Fifo& output(int channel) { return out_[static_cast<std::size_t>(channel)]; }
  const Fifo& output(int channel) const { return out_[static_cast<std::size_t>(channel)]; }
  // The output channel a packet takes from this router.
  int channel_of(const Packet& p) const;
  static bool is_mesh_channel(int channel) { return channel >= kPortNorth * kNocClasses; }

  // One edge: decide() on the state before it (the input channel to accept, or -1), then apply() it.
  int decide() const { return waiting_ == 0 ? -1 : arbitrate(); }
  // (true: something moved)
  bool apply(int accepted) {
    if (accepted < 0 && in_pipe_ == 0) return false;
    move(accepted);
    return true;
  }
  // Nothing in the pipeline, the input channels or the output FIFOs.
  bool idle() const;
  int waiting() const { return waiting_; }       // packets in the input channels
  bool outputs_empty() const { return out_nonempty_ == 0; }
  std::uint32_t outputs_nonempty() const { return out_nonempty_; }  // bit c: output FIFO c holds a packet
  // Edges from the last one until a packet in the pipeline enters its output FIFO (in that edge); 0: the
  // pipeline is empty.
  int edges_to_exit() const;
  // `edges` edges in which nothing is accepted and nothing leaves the pipeline (fewer than edges_to_exit()):
  // the packets move on through it (a schedule that jumps over quiet clocks).
  void skip_quiet_edges(int edges);
  // The state its future depends on (arbitration, pipeline, output FIFOs), for finding a steady state that
  // recurs; the input channels are the senders'.
  void append_state(std::vector<std::int64_t>& key) const;
  // Nothing of it touches the mesh links, the host or the DRAM port: its input channels from them, its output
  // FIFOs to them and its pipeline hold only packets between its own PEs (a QPE sealed off: noc/fabric.h).
  bool local_only() const {
    if ((nonempty_ | out_nonempty_) & kFarChannels) return false;
    for (int c = kPortHost * kNocClasses; c < kNocChannels; ++c)
      if (reserved_[static_cast<std::size_t>(c)]) return false;
    return true;
  }
  // Packets in the pipeline bound for output channel c.
  int reserved(int channel) const { return reserved_[static_cast<std::size_t>(channel)]; }
  // Whether an input channel from the host, the DRAM port or a mesh link holds a packet.
  bool far_input_waiting() const { return (nonempty_ & kFarChannels) != 0; }
  // Its statistics (routed() per channel, injected(), then the packets it accepted from the host, the DRAM port
  // and the mesh links), and `times` more of what they grew by from `from` to `to` (a schedule that skips whole
  // periods of a steady state).
  // Everything of it but its wiring, to be put back (the fabric's check of its skipped periods).
  struct Snapshot;
  Snapshot snapshot() const;
  void restore(const Snapshot& s);
  using Counts = std::array<std::uint64_t, kNocChannels + 2>;
  Counts counts() const;
  void add_counts(const Counts& from, const Counts& to, std::uint64_t times);
  void reset();
  // packets accepted for output channel c since the last reset
  std::uint64_t routed(int channel) const { return routed_[static_cast<std::size_t>(channel)]; }
  // packets accepted from a PE or the DRAM port since the last reset: those that entered the NoC here
  // (model/activity.h noc_packets; the host's are not the chip's work)
  std::uint64_t injected() const { return injected_; }
  // packets accepted for a mesh link since the last reset (noc_packet_hops: a hop each)
  std::uint64_t hops() const;

 private:
  static constexpr std::uint32_t kFarChannels = ~((1u << (kPortHost * kNocClasses)) - 1u);
  int arbitrate() const;        // decide() with packets waiting
  void move(int accepted);      // apply() with something to move
  Params p_;
  std::unique_ptr<Arbitration> arbitration_;
  std::array<Fifo*, kNocChannels> in_{};
  std::array<Fifo, kNocChannels> out_;
  static constexpr int kMaxLatency = 8;
  struct Stage {
    bool valid = false;
    int channel = 0;
    Packet packet;
  };
  // A ring: stage s (0 the newest) is pipe_[(head_ + s) % kMaxLatency], so that moving every packet on by
  // an edge is one step of head_, not a copy of every stage.
  std::array<Stage, kMaxLatency> pipe_{};
  int head_ = 0;
  static_assert((kMaxLatency & (kMaxLatency - 1)) == 0);
  Stage& stage(int s) { return pipe_[static_cast<std::size_t>((head_ + s) & (kMaxLatency - 1))]; }
  const Stage& stage(int s) const { return pipe_[static_cast<std::size_t>((head_ + s) & (kMaxLatency - 1))]; }
  std::array<int, kNocChannels> reserved_{};  // packets in the pipeline per output channel
  int waiting_ = 0;   // packets in the input channels (kept by their FIFOs)
  std::uint32_t nonempty_ = 0;  // bit c: input channel c holds a packet
  std::uint32_t out_nonempty_ = 0;  // bit c: output FIFO c holds a packet
  int in_pipe_ = 0;   // packets in the pipeline
  std::array<std::uint64_t, kNocChannels> routed_{};
  std::uint64_t injected_ = 0;
  std::uint64_t far_accepted_ = 0;
};

struct Router::Snapshot {
  int arbitration = 0;
  std::array<Fifo, kNocChannels> out;
  std::array<Stage, kMaxLatency> pipe{};
  int head = 0;
  std::array<int, kNocChannels> reserved{};
  int waiting = 0;
  std::uint32_t nonempty = 0, out_nonempty = 0;
  int in_pipe = 0;
  std::array<std::uint64_t, kNocChannels> routed{};
  std::uint64_t injected = 0, far_accepted = 0;
};

inline Router::Snapshot Router::snapshot() const {
  return Snapshot{arbitration_->state(), out_, pipe_, head_, reserved_, waiting_, nonempty_, out_nonempty_, in_pipe_, routed_, injected_, far_accepted_};
}

inline void Router::restore(const Snapshot& s) {
  arbitration_->set_state(s.arbitration);
  out_ = s.out;  // (the FIFOs keep marking this router's out_nonempty_)
  pipe_ = s.pipe;
  head_ = s.head;
  reserved_ = s.reserved;
  waiting_ = s.waiting;
  nonempty_ = s.nonempty;
  out_nonempty_ = s.out_nonempty;
  in_pipe_ = s.in_pipe;
  routed_ = s.routed;
  injected_ = s.injected;
  far_accepted_ = s.far_accepted;
}

}  // namespace s2
