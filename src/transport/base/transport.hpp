// The transport interface: moves bytes between two ranks that have no vendor path between them.
// Shaped like NCCL's net plugin (listen / connect / accept, register memory, isend / irecv / test),
// reduced to what hetccl's engine needs: one ordered byte stream per (sender, receiver) pair.
//
// Contract shared by every implementation (shm, tcp, mem; later ucx/ib):
//  * A connection carries messages in FIFO order. The receiver posts irecv()s with the same sizes, in
//    the same order, as the sender's isend()s (the engine guarantees this for ranks that make matching
//    calls; a size mismatch means the ranks' calls disagree).
//  * Every message carries the sender's call stamp (call_stamp.hpp) on every piece the transport cuts
//    it into; irecv() names the stamp it expects. The receiver compares them before any byte of the
//    piece lands in the caller's buffer; a difference throws PeerError naming the peer and both calls
//    (callMismatchMessage) and leaves the connection unusable. Callers that do not care (tests) leave
//    both stamps at their default: equal stamps always match.
//  * isend/irecv never block. test() makes progress and never blocks for long (it may spin briefly).
//  * connect() must not wait for the peer's accept(): the communicator calls every connect() first and
//    every accept() afterwards, so waiting there would deadlock.
//  * A dead or misbehaving peer makes test()/accept() throw PeerError (naming the peer); a deadline
//    passing throws TimeoutError. After a throw the connection is unusable.
//  * Every wait checks `abortFlag` (when given) and throws AbortedError once it is set.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "core/deadline.hpp"
#include "core/peer_info.hpp"
#include "transport/base/call_stamp.hpp"

namespace hetccl::transport {

/// Opaque address a listener publishes through the bootstrap (NCCL_NET_HANDLE_MAXSIZE bytes).
struct Handle {
  std::array<unsigned char, 128> bytes{};
};

/// Identifies one connection. `token` is a random 64-bit value the communicator agrees on through the
/// authenticated bootstrap; transports that accept from the network reject any connection that does
/// not present it (so garbage or foreign connections cannot be mistaken for a peer).
struct ConnectInfo {
  PeerInfo self;
  PeerInfo peer;
  uint64_t token = 0;
  const std::atomic<bool>* abortFlag = nullptr;
  /// Optional: called every few tens of milliseconds while accept() waits; throws (e.g. the
  /// bootstrap's PeerError) to end the wait early when the job has already failed, e.g. because the
  /// very peer being waited for died before it connected (which tcp alone cannot see).
  std::function<void()> checkFailure = nullptr;
};

/// Accumulating receive: instead of storing the incoming bytes, the transport calls
/// `fn(dst + off, incoming, count, ctx)` with dst[i] = dst[i] (op) incoming[i] for `count` elements.
/// Pieces are always whole elements. Lets shm reduce straight out of its ring (no extra copy).
struct Reducer {
  void (*fn)(void* dst, const void* incoming, size_t count, const void* ctx) = nullptr;
  const void* ctx = nullptr;
  size_t elemSize = 1;
};

using Request = uint64_t;  ///< per-connection sequence number, starting at 1

class SendConn {
 public:
  virtual ~SendConn() = default;
  /// Queues `bytes` from `data`, stamped `stamp`; `data` must stay valid and unchanged until test() says done.
  virtual Request isend(const void* data, size_t bytes, const CallStamp& stamp = {}) = 0;
  /// Progresses; true once request `r` has completed (the buffer may be reused).
  virtual bool test(Request r) = 0;
  /// Gives up every outstanding request: on return the transport no longer touches their buffers,
  /// and the caller must not use the connection again. The engine calls it when a schedule fails,
  /// before it frees its scratch space and returns the user's buffers. Transports that move data only
  /// inside test() have nothing to stop (this default); those with background threads must override it.
  virtual void abandon() noexcept {}
};

class RecvConn {
 public:
  virtual ~RecvConn() = default;
  /// Posts a receive of exactly `bytes` into `data` (or accumulated into `data` when `reducer` is
  /// non-null; the Reducer must outlive the request). Every piece must carry the stamp `expected`.
  virtual Request irecv(void* data, size_t bytes, const Reducer* reducer = nullptr, const CallStamp& expected = {}) = 0;
  /// Progresses; true once request `r` has completed (the data is in place).
  virtual bool test(Request r) = 0;
  /// As SendConn::abandon(); on return no buffer or Reducer of an outstanding request is touched.
  virtual void abandon() noexcept {}
};

class Listener {
 public:
  virtual ~Listener() = default;
  /// What peers need to connect here; exchanged through the bootstrap.
  virtual const Handle& handle() const = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual std::string_view name() const = 0;
  /// Capability probe: can this transport connect these two ranks? (shm: same host id.)
  virtual bool canConnect(const PeerInfo& self, const PeerInfo& peer) const = 0;
  /// Starts listening; one listener serves every incoming connection of one communicator.
  virtual std::unique_ptr<Listener> listen(const PeerInfo& self) = 0;
  /// Opens the sending side of a connection to the peer whose listener published `peerHandle`.
  virtual std::unique_ptr<SendConn> connect(const Handle& peerHandle, const ConnectInfo& info, Deadline deadline) = 0;
  /// Accepts the connection `info.peer` opened to this listener (other peers' connections that arrive
  /// meanwhile are kept for their own accept()).
  virtual std::unique_ptr<RecvConn> accept(Listener& listener, const ConnectInfo& info, Deadline deadline) = 0;
};

}  // namespace hetccl::transport
