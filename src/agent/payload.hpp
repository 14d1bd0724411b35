// The payload of one transfer: the bytes of its ranges, in table order, as one stream that crosses
// the connection's socket, its pair of UCX connections (net_link.hpp) or one of its shared-memory windows (rma::Window: slots the sender
// fills and publishes, the receiver copies out and releases). Both sides walk the same ranges in the
// same order and cut the stream into chunks of at most a slot, so no chunk needs a header.
// Host memory is sent from / received into place (small ranges gathered into a staging buffer first);
// device memory is copied through staging (socket) or straight into / out of the window's pinned slots
// by the copy engine (rma::MemoryAccess). Through a window the chunks are pipelined: up to a window's
// worth of chunks are queued on the channel's stream (CopyEngine) at once, each published (sender) or
// released (receiver) in order once its event is reached, so the copies of consecutive chunks run back to
// back instead of one synchronisation each. Every wait has the transfer's deadline; `poll` is called
// between chunks and while waiting (it throws to stop: cancel, agent destroyed). While waiting on a
// window, a socket that becomes readable (the peer closed it or died) fails the transfer at once.
// Over UCX the stream is cut into messages that depend only on the ranges' sizes, so both sides cut it
// alike (the transport requires equal sizes): a range of kDirectBytes or more in pieces of at most
// kNetPieceBytes, shorter ranges gathered into one piece of at most kStageBytes. A piece that is host
// memory on this side is sent from / received into place (zero copy where UCX uses RDMA rendezvous); the
// others go through one of kNetInFlight staging buffers. Up to kNetInFlight pieces are in flight.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "agent/net_link.hpp"
#include "core/deadline.hpp"
#include "device/gpu_runtime.hpp"
#include "net/socket.hpp"
#include "rma/copy_engine.hpp"
#include "rma/mem_kind.hpp"
#include "rma/memory_access.hpp"
#include "rma/window.hpp"

namespace hetccl::agent {

/// One range of the stream on this side. data == nullptr on receive: the bytes are dropped (a refused
/// write is drained so that the connection stays in step).
struct Segment {
  unsigned char* data = nullptr;
  uint64_t bytes = 0;
  rma::MemKind kind = rma::MemKind::Host;
};

/// A channel's own stream and events for the pipelined device copies through a window (rma::CopyEngine):
/// created at the first use on the channel's thread (its device current), destroyed with the channel.
using CopyEngine = rma::CopyEngine;

class PayloadLink {
 public:
  /// `window` nullptr: `net` carries the payload when given, else the socket. `engine` nullptr (no GPU):
  /// window copies are synchronous. `peer` names the other side in errors.
  PayloadLink(const net::Socket& sock, rma::Window* window, rma::MemoryAccess& memory, CopyEngine* engine, std::string peer,
              NetPair* net = nullptr)
      : sock_(sock), window_(window), memory_(memory), engine_(engine), peer_(std::move(peer)), net_(net) {}

  /// The payload of a write: writes are pipelined (OutChannel), so while it crosses a window or UCX the
  /// socket may hold answers to earlier writes (at the initiator) or later requests (at the target); data
  /// there is left for later instead of failing the transfer as garbage.
  PayloadLink& ofWrite() {
    ofWrite_ = true;
    return *this;
  }

  void send(std::span<const Segment> segments, Deadline deadline, const std::function<void()>& poll);
  void recv(std::span<const Segment> segments, Deadline deadline, const std::function<void()>& poll);

 private:
  /// Copies the next `n` bytes of the stream between `segments` (cursor at seg/off) and `buf`
  /// (toBuf: gather into buf; else scatter from buf). Advances the cursor. With `stream`, device copies
  /// are only queued on it (returns true when there were some); without, everything is done on return.
  bool move(std::span<const Segment> segments, size_t& seg, uint64_t& off, unsigned char* buf, uint64_t n, bool toBuf,
            void* stream = nullptr);
  /// The window path: chunks pipelined through the slots (see the top of this file).
  void pumpWindow(std::span<const Segment> segments, Deadline deadline, const std::function<void()>& poll, bool sending);
  /// The UCX path (see the top of this file).
  void pumpNet(std::span<const Segment> segments, Deadline deadline, const std::function<void()>& poll, bool sending);
  /// The socket path.
  void pumpSocket(std::span<const Segment> segments, Deadline deadline, const std::function<void()>& poll, bool sending);
  /// One idle round of a window or UCX wait: spins, then yields, then sleeps 20 us; every 64 rounds checks
  /// `poll`, the deadline and the socket (the peer closed it: fails at once; data on it: garbage, unless
  /// ofWrite()). `round` counts the idle rounds since the last progress.
  void idle(uint64_t& round, Deadline deadline, const std::function<void()>& poll, const char* what);

  const net::Socket& sock_;
  rma::Window* window_;
  rma::MemoryAccess& memory_;
  CopyEngine* engine_;
  std::string peer_;
  NetPair* net_;
  bool ofWrite_ = false;
};

}  // namespace hetccl::agent
