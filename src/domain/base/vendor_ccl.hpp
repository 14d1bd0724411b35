// A domain's vendor collective library (NCCL, RCCL) as the engine uses it: communicators over the ranks
// of one domain and the collectives run inside it at the vendor's native speed.
//
// Everything here takes *device* pointers, hetccl's DataType / ReduceOp and an opaque stream (a
// cudaStream_t or hipStream_t passed as void*). Calls have the vendor's stream semantics: they enqueue
// work on the stream and return; completion is observed on the stream, failures of enqueued work through
// checkAsyncError(). Every failure throws a hetccl::Error subclass whose message names the vendor call
// and carries the vendor's own error text (ncclGetLastError / ncclGetErrorString).
//
// Implementations: src/domain/nccl (NCCL and RCCL, one adaptor: they share an API).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace hetccl::bootstrap {
class Bootstrap;
}

namespace hetccl::domain {

/// An opaque device stream (cudaStream_t / hipStream_t); nullptr is the vendor's default stream.
using Stream = void*;

/// One send or receive of DomainComm::exchange.
struct Transfer {
  bool send = true;   ///< send `count` elements from `buf` to `peer`, else receive them into `buf`
  int peer = 0;       ///< domain rank
  void* buf = nullptr;
  size_t count = 0;
  DataType type = DataType::Uint8;
};

/// One vendor communicator over the ranks of a domain. Ranks and peers are indexes *in the domain*
/// (0 .. size()-1), not ranks of the hetccl communicator.
///
/// Threading: like a vendor communicator, one thread issues calls at a time; abort() alone may be called
/// from another thread while a call is in flight (a watchdog).
class DomainComm {
 public:
  /// Finalizes and destroys the vendor communicator unless abort() or destroy() ran; errors are logged
  /// (a destructor cannot throw). Waits for enqueued work like ncclCommFinalize does.
  virtual ~DomainComm() = default;

  /// This rank's index in the domain.
  virtual int rank() const noexcept = 0;
  /// Number of ranks in the domain.
  virtual int size() const noexcept = 0;

  /// recv[i] = op over ranks of send[i], i < count, on every rank. In place when send == recv.
  virtual void allReduce(const void* send, void* recv, size_t count, DataType type, const ReduceOp& op,
                         Stream stream) = 0;
  /// recv (recvCount elements) = this rank's block of op over ranks of send (size() * recvCount elements).
  virtual void reduceScatter(const void* send, void* recv, size_t recvCount, DataType type, const ReduceOp& op,
                             Stream stream) = 0;
  /// recv (size() * sendCount elements) = every rank's send, in rank order.
  virtual void allGather(const void* send, void* recv, size_t sendCount, DataType type, Stream stream) = 0;
  /// recv = root's send (count elements) on every rank; `send` is read on the root only.
  virtual void broadcast(const void* send, void* recv, size_t count, DataType type, int root, Stream stream) = 0;
  /// On the root, recv = op over ranks of send; other ranks' recv is not written.
  virtual void reduce(const void* send, void* recv, size_t count, DataType type, const ReduceOp& op, int root,
                      Stream stream) = 0;
  /// Sends count elements to domain rank `peer`; matched by the peer's recv in call order.
  virtual void send(const void* buf, size_t count, DataType type, int peer, Stream stream) = 0;
  /// Receives count elements from domain rank `peer`.
  virtual void recv(void* buf, size_t count, DataType type, int peer, Stream stream) = 0;
  /// The vendor's group calls on this thread (ncclGroupStart / ncclGroupEnd): the sends and receives
  /// between them are launched together at the outermost groupEnd, so they cannot wait for each other.
  virtual void groupStart() = 0;
  virtual void groupEnd() = 0;
  /// Runs fn() between groupStart() and groupEnd(); the group is closed also when fn throws (then fn's
  /// exception is rethrown).
  template <typename Fn>
  void grouped(Fn&& fn) {
    groupStart();
    try {
      fn();
    } catch (...) {
      try {
        groupEnd();  // close the group even when one call was rejected
      } catch (...) {
      }
      throw;
    }
    groupEnd();
  }
  /// Every transfer of `transfers` in one vendor group on `stream` (an all-to-all among the domain's
  /// members, point-to-point of a hetccl group): matched per peer pair in order, as send() and recv().
  void exchange(std::span<const Transfer> transfers, Stream stream) {
    grouped([&] {
      for (const Transfer& t : transfers)
        t.send ? send(t.buf, t.count, t.type, t.peer, stream) : recv(t.buf, t.count, t.type, t.peer, stream);
    });
  }

  /// Throws the vendor's asynchronous error (a failure of work already enqueued, a dead peer, ...) if it
  /// reported one; returns when it reports none or cannot report (a library without
  /// ncclCommGetAsyncError). Cheap; safe to call often.
  virtual void checkAsyncError() = 0;

  /// Aborts the vendor communicator (ncclCommAbort): enqueued work is abandoned, peers' pending calls
  /// fail. Never throws (failures are logged). Afterwards only the destructor may be called.
  virtual void abort() noexcept = 0;
  /// Finalizes (when the library can) and destroys the vendor communicator; throws the vendor's error.
  /// Afterwards only the destructor may be called. Idempotent.
  virtual void destroy() = 0;
};

/// A loaded vendor collective library. Thread-safe.
class VendorCcl {
 public:
  virtual ~VendorCcl() = default;

  /// One line for logs and hetccl-info: library name, version and the path it was loaded from,
  /// e.g. "NCCL 2.23.4 from /usr/lib/x86_64-linux-gnu/libnccl.so.2".
  virtual std::string describe() const = 0;
  /// The library's version code as its GetVersion reports it (NCCL: major*10000 + minor*100 + patch).
  virtual int version() const noexcept = 0;

  /// Creates the vendor communicator of the domain whose members are `members` (ranks of `bootstrap`,
  /// in domain order; the calling rank must be one of them; members[0] creates the vendor's unique id
  /// and sends it to the others through the bootstrap). Collective over the members: each calls it once,
  /// in the same order relative to other createComm calls on the same bootstrap.
  ///
  /// The caller must first make the rank's device current (cudaSetDevice / hipSetDevice): the vendor
  /// binds the communicator to the current device. `vendorConfig`, when not null, is passed unchanged to
  /// ncclCommInitRankConfig (an ncclConfig_t of the library's ABI; it must leave `blocking` at 1).
  /// Throws InvalidArgument for bad members, InvalidUsage when vendorConfig is given but the library has
  /// no ncclCommInitRankConfig, PeerError naming members[0] when it failed to create the id, and the
  /// vendor's error when init fails.
  virtual std::unique_ptr<DomainComm> createComm(bootstrap::Bootstrap& bootstrap, const std::vector<int>& members,
                                                 const void* vendorConfig = nullptr) = 0;

  /// Vendor group calls (thread-local nesting, as in NCCL): calls between groupStart() and the matching
  /// groupEnd() on this thread are launched together at groupEnd().
  virtual void groupStart() = 0;
  virtual void groupEnd() = 0;
};

}  // namespace hetccl::domain
