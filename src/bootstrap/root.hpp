// The rendezvous root: collects every rank's descriptor over authenticated connections, checks that the
// ranks agree (job size, protocol version, unique ranks in range), and answers each rank with either
// the full descriptor table or one error message that every rank throws alike. It serves from a
// background thread and ends once every rank has its answer (or at its deadline).
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include "bootstrap/crypto.hpp"
#include "core/deadline.hpp"
#include "net/socket.hpp"

namespace hetccl::bootstrap {

class RendezvousRoot {
 public:
  /// Longest time process exit waits for a failed root to tell the ranks that have not connected yet.
  static constexpr int kExitLingerMs = 30000;

  /// Binds `at` now (so ranks may connect at once) and starts serving. Throws SystemError when the
  /// address cannot be bound (naming it; a port in use says so). The thread gives up at `deadline`.
  /// `hostRank`: the rank whose process runs this root (0 under a launcher), -1 when unknown; failures
  /// of the root itself (no file descriptor left) are reported to every rank as that rank's failure.
  RendezvousRoot(const net::SocketAddress& at, const Secret& secret, Deadline deadline, int hostRank = -1);
  /// Stops serving (within ~100 ms) and joins the thread.
  ~RendezvousRoot();
  RendezvousRoot(const RendezvousRoot&) = delete;
  RendezvousRoot& operator=(const RendezvousRoot&) = delete;

  /// The bound address, with the real port.
  const net::SocketAddress& address() const { return listener_.address(); }
  /// True once every rank has been answered or the deadline passed.
  bool finished() const { return finished_.load(); }
  /// True while the job has failed and some rank has not been told yet (it may still connect).
  bool owesFailure() const { return owesFailure_.load() && !finished_.load(); }
  /// Keeps serving while owesFailure(), for at most `maxMs` (used at process exit, see the registry).
  void lingerWhileOwed(int maxMs);

  /// Starts a root owned by a process-wide registry (so it outlives the caller and still answers late
  /// ranks after an error). A finished root has closed its listener; its thread is joined when the next
  /// root starts or at process exit. At process exit (an exit handler that runs before OpenSSL's
  /// cleanup), a root whose job failed while some ranks had not connected yet keeps answering them with
  /// the failure for up to kExitLingerMs (bounded by its own deadline) before it stops: a rank that joins
  /// after the failure learns which rank failed instead of waiting for a root that is gone. Returns the
  /// bound address.
  static net::SocketAddress startInBackground(const net::SocketAddress& at, const Secret& secret, Deadline deadline,
                                              int hostRank = -1);

 private:
  void serve() noexcept;
  /// accept() found no descriptor left: fails the job with that message (every rank gets it; answering
  /// the waiting ranks frees their descriptors) and gives up the spare descriptor for the next accepts.
  void onDescriptorsExhausted(class RootSession& session, const net::DescriptorsExhausted& e);
  /// Fails the job when a client claiming rank r failed on its proof HETCCL_AUTH_FAILURE_GRACE ago and r
  /// has not joined (the .cc says why); true when it did.
  bool failOnWrongSecret(class RootSession& session, const class AuthenticatingAcceptor& acceptor) const;

  net::Listener listener_;
  Secret secret_;
  Deadline deadline_;
  int hostRank_;
  int64_t graceMs_;  // HETCCL_AUTH_FAILURE_GRACE in ms (0: off)
  int spareFd_ = -1;  // /dev/null, closed when accept() runs out of descriptors (one more for the answers)
  std::atomic<bool> stop_{false};
  std::atomic<bool> finished_{false};
  std::atomic<bool> owesFailure_{false};
  std::thread thread_;
};

}  // namespace hetccl::bootstrap
