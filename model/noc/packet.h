// A NoC packet as the model's clocked NoC carries it (rtl_stubs/s2_pkg.svh noc_pkt_t): where it goes, where
// it came from, its kind and message class. The payload is not carried: the model moves a transfer's data
// when the transfer starts and uses the packets for their timing only.
// Fifo is the RTL's fifo.sv: a depth of at most 8, pushed and popped by different sides in the same clock edge.
#pragma once

#include <array>
#include <cstdint>

namespace s2 {

// Router ports (s2_pkg.svh): 0..3 the PEs, 4 the host, 5 the DRAM, 6..9 the mesh links north, east,
// south, west. Two message classes per port, channel = port * 2 + class.
enum NocPort : int { kPortHost = 4, kPortDram = 5, kPortNorth = 6, kPortEast = 7, kPortSouth = 8, kPortWest = 9 };
constexpr int kNocPorts = 10;
constexpr int kNocClasses = 2;
constexpr int kNocChannels = kNocPorts * kNocClasses;
constexpr int kClassRequest = 0, kClassResponse = 1;

enum class PacketKind : std::uint8_t {
  MemWr = 1, MemRd = 2, RdRsp = 3, DramRd = 4, DramWr = 5, DramWdata = 6, DmaData = 7, DmaAck = 8, DmaLast = 9,
  DramRdx = 10, MemWra = 11
};
constexpr int packet_class(PacketKind k) {
  return k == PacketKind::RdRsp || k == PacketKind::DmaAck ? kClassResponse : kClassRequest;
}

struct Packet {
  std::int8_t dst_x = 0, dst_y = 0;        // the destination QPE's place in the mesh (what routing reads)
  std::int8_t dst_port = 0, src_port = 0;  // local port (NocPort, or the PE 0..3)
  std::int8_t src_x = 0, src_y = 0;
  std::int16_t src_qpe = 0;                // the source QPE's index (the DRAM's requester is PE src_qpe * 4 + src_port)
  PacketKind kind = PacketKind::MemWr;
  bool a_read = false;  // an MLA operand-A read or its response
  int cls() const { return packet_class(kind); }
};

class Fifo {
 public:
  static constexpr int kMaxDepth = 8;
  explicit Fifo(int depth = 4) : depth_(depth) {}
  int depth() const { return depth_; }
  bool empty() const { return count_ == 0; }
  bool full() const { return count_ == depth_; }
  int size() const { return count_; }
  const Packet& front() const { return slot_[static_cast<std::size_t>(head_)]; }
  const Packet& at(int i) const { return slot_[static_cast<std::size_t>(wrap(head_ + i))]; }
  void push(const Packet& p) {
    slot_[static_cast<std::size_t>(wrap(head_ + count_))] = p;
    ++count_;
    if (waiting_) {
      ++*waiting_;
      *nonempty_ |= bit_;
    }
    if (owner_nonempty_) *owner_nonempty_ |= owner_bit_;
  }
  void pop() {
    head_ = wrap(head_ + 1);
    --count_;
    if (waiting_) {
      --*waiting_;
      if (count_ == 0) *nonempty_ &= ~bit_;
    }
    if (owner_nonempty_ && count_ == 0) *owner_nonempty_ &= ~owner_bit_;
  }
  void clear() {
    if (waiting_) {
      *waiting_ -= count_;
      *nonempty_ &= ~bit_;
    }
    if (owner_nonempty_) *owner_nonempty_ &= ~owner_bit_;
    head_ = count_ = 0;
  }
  // The counter of packets waiting at its reader (a router's input channels) and the reader's mask of
  // non-empty inputs (this FIFO is bit `channel`), kept by push and pop.
  void count_into(int* waiting, std::uint32_t* nonempty, int channel) {
    waiting_ = waiting;
    nonempty_ = nonempty;
    bit_ = 1u << channel;
  }
  // The writer's mask of its non-empty FIFOs (a router's outputs: this FIFO is bit `channel`).
  void mark_into(std::uint32_t* nonempty, int channel) {
    owner_nonempty_ = nonempty;
    owner_bit_ = 1u << channel;
  }

 private:
  // i % depth_ for i < 2 * depth_, without a division (the NoC's every push and pop)
  int wrap(int i) const { return i >= depth_ ? i - depth_ : i; }
  std::array<Packet, kMaxDepth> slot_{};
  int depth_ = 4, head_ = 0, count_ = 0;
  int* waiting_ = nullptr;
  std::uint32_t* nonempty_ = nullptr;
  std::uint32_t bit_ = 0;
  std::uint32_t* owner_nonempty_ = nullptr;
  std::uint32_t owner_bit_ = 0;
};

}  // namespace s2
