#include "model/noc/router.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace s2 {

int RoundRobin::pick(std::uint32_t eligible) const {
  // rotate so that bit 0 is channel next_, then take the lowest set bit
  constexpr std::uint32_t all = (1u << kNocChannels) - 1;
  const std::uint32_t order = ((eligible >> next_) | (eligible << (kNocChannels - next_))) & all;
  const int c = next_ + std::countr_zero(order);
  return c >= kNocChannels ? c - kNocChannels : c;
}

Router::Router(const Params& p, std::unique_ptr<Arbitration> arbitration) : p_(p), arbitration_(std::move(arbitration)) {
  if (p_.latency < 2 || p_.latency > kMaxLatency)
    throw std::invalid_argument("router: a latency of 2 to " + std::to_string(kMaxLatency) + " NoC clocks");
  if (p_.out_depth < 1 || p_.out_depth > Fifo::kMaxDepth || p_.link_depth < 1 || p_.link_depth > Fifo::kMaxDepth)
    throw std::invalid_argument("router: output FIFOs of 1 to " + std::to_string(Fifo::kMaxDepth) + " packets");
  for (int c = 0; c < kNocChannels; ++c) {
    out_[static_cast<std::size_t>(c)] = Fifo(is_mesh_channel(c) ? p_.link_depth : p_.out_depth);
    out_[static_cast<std::size_t>(c)].mark_into(&out_nonempty_, c);
  }
}

int Router::edges_to_exit() const {
  if (in_pipe_ == 0) return 0;
  const int last = p_.latency - 1;
  int edges = kMaxLatency + 1;
  for (int s = 0; s <= last; ++s) {
    const Stage& st = stage(s);
    if (!st.valid) continue;
    const int exit_stage = is_mesh_channel(st.channel) ? last - 1 : last;  // (apply's exits)
    edges = std::min(edges, exit_stage - s + 1);
  }
  return edges;
}

void Router::skip_quiet_edges(int edges) {
  if (edges <= 0 || in_pipe_ == 0) return;
  if (edges >= edges_to_exit()) throw std::logic_error("router: a quiet jump over a packet leaving the pipeline (model bug)");
  // every stage moves on by `edges` (none beyond the last holds a packet), the first `edges` come in empty
  head_ = (head_ - edges) & (kMaxLatency - 1);
  for (int s = 0; s < edges; ++s) stage(s).valid = false;
}

void Router::append_state(std::vector<std::int64_t>& key) const {
  key.push_back(arbitration_->state());
  for (int s = 0; s < p_.latency; ++s) {
    const Stage& st = stage(s);
    if (!st.valid) continue;
    key.insert(key.end(), {s, st.channel, st.packet.src_port, st.packet.dst_port, static_cast<std::int64_t>(st.packet.kind), st.packet.a_read});
  }
  key.push_back(-1);
  for (std::uint32_t m = out_nonempty_; m != 0; m &= m - 1) {
    const int c = std::countr_zero(m);
    const Fifo& f = out_[static_cast<std::size_t>(c)];
    key.insert(key.end(), {c, f.size()});
    for (int i = 0; i < f.size(); ++i)
      key.insert(key.end(), {f.at(i).src_port, f.at(i).dst_port, static_cast<std::int64_t>(f.at(i).kind), f.at(i).a_read});
  }
  key.push_back(-2);
}

int Router::channel_of(const Packet& p) const {
  int port = p.dst_port;
  if (p.dst_x > p_.x) port = kPortEast;
  else if (p.dst_x < p_.x) port = kPortWest;
  else if (p.dst_y > p_.y) port = kPortSouth;
  else if (p.dst_y < p_.y) port = kPortNorth;
  return port * kNocClasses + p.cls();
}

int Router::arbitrate() const {
  std::uint32_t eligible = 0;
  for (std::uint32_t m = nonempty_; m != 0; m &= m - 1) {
    const int c = std::countr_zero(m);
    const Fifo* f = in_[static_cast<std::size_t>(c)];
    const int oc = channel_of(f->front());
    const Fifo& o = out_[static_cast<std::size_t>(oc)];
    if (o.size() + reserved_[static_cast<std::size_t>(oc)] < o.depth()) eligible |= 1u << c;
  }
  return eligible ? arbitration_->pick(eligible) : -1;
}

void Router::move(int accepted) {
  const int last = p_.latency - 1;
  // packets leave the pipeline: a local port's from the last stage, a link's from the one before
  for (int s = last - 1; s <= last; ++s) {
    Stage& st = stage(s);
    if (!st.valid || (s == last - 1 && !is_mesh_channel(st.channel))) continue;
    out_[static_cast<std::size_t>(st.channel)].push(st.packet);
    --reserved_[static_cast<std::size_t>(st.channel)];
    st.valid = false;
    --in_pipe_;
  }
  // every stage moves on by one: the last one (empty now) goes out of the ring's window
  head_ = (head_ - 1) & (kMaxLatency - 1);
  Stage& first = stage(0);
  first.valid = accepted >= 0;
  if (accepted < 0) return;
  ++in_pipe_;
  Fifo& in = *in_[static_cast<std::size_t>(accepted)];
  first.packet = in.front();
  first.channel = channel_of(first.packet);
  ++reserved_[static_cast<std::size_t>(first.channel)];
  in.pop();
  arbitration_->accepted(accepted);
  ++routed_[static_cast<std::size_t>(first.channel)];
  const int from_port = accepted / kNocClasses;
  if (from_port != kPortHost && !is_mesh_channel(accepted)) ++injected_;
  if (from_port >= kPortHost) ++far_accepted_;
}

std::uint64_t Router::hops() const {
  std::uint64_t n = 0;
  for (int c = kPortNorth * kNocClasses; c < kNocChannels; ++c) n += routed_[static_cast<std::size_t>(c)];
  return n;
}

Router::Counts Router::counts() const {
  Counts c{};
  std::copy(routed_.begin(), routed_.end(), c.begin());
  c[kNocChannels] = injected_;
  c[kNocChannels + 1] = far_accepted_;
  return c;
}

void Router::add_counts(const Counts& from, const Counts& to, std::uint64_t times) {
  for (int k = 0; k < kNocChannels; ++k) routed_[static_cast<std::size_t>(k)] += times * (to[static_cast<std::size_t>(k)] - from[static_cast<std::size_t>(k)]);
  injected_ += times * (to[kNocChannels] - from[kNocChannels]);
  far_accepted_ += times * (to[kNocChannels + 1] - from[kNocChannels + 1]);
}

bool Router::idle() const { return in_pipe_ == 0 && waiting_ == 0 && out_nonempty_ == 0; }

void Router::reset() {
  for (Fifo& f : out_) f.clear();
  for (Stage& s : pipe_) s.valid = false;
  head_ = 0;
  in_pipe_ = 0;
  reserved_.fill(0);
  arbitration_->reset();
  routed_.fill(0);
  injected_ = 0;
  far_accepted_ = 0;
}

}  // namespace s2
