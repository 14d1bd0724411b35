// Internal steps of bootstrap::connect(): joining the rendezvous root and building the mesh. Every wait
// is bounded by the join deadline and wakes every ~100 ms to honour the abort flag.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/descriptor.hpp"
#include "net/socket.hpp"

namespace hetccl::bootstrap {

struct JoinContext {
  const UniqueId& id;
  int rank;
  int nranks;
  Deadline deadline;
  const std::atomic<bool>* abortFlag;

  /// Throws AbortedError when the abort flag is set; `during` says what was going on.
  void checkAbort(const std::string& during) const;
  /// Socket::connect that retries until the deadline, checking the abort flag in between. With
  /// `retryRefused` false a refused connection throws PeerError at once (see net::Socket::connect).
  net::Socket connect(const net::SocketAddress& to, const std::string& peer, bool retryRefused = true) const;
  /// Waits until `fd` is readable: true when readable, false at the deadline. Checks the abort flag.
  bool waitReadable(int fd, const std::string& during) const;
};

/// Test hooks (tests/unit/bootstrap): called inside connect() at fixed points.
struct ConnectHooks {
  /// Right after this rank's mesh listener is bound, before the root is contacted.
  std::function<void(int rank, const net::SocketAddress&)> onMeshListening;
};

/// connect() with hooks; connect() itself passes none.
std::unique_ptr<Bootstrap> connectWithHooks(const UniqueId& id, int rank, int nranks, const PeerInfo& self,
                                            Deadline deadline, const std::atomic<bool>* abortFlag,
                                            const ConnectHooks& hooks);

/// Authenticates to the root, sends `self`, and returns the validated table (index = rank). Throws
/// InvalidUsage with the root's message when the job is inconsistent.
std::vector<RankDescriptor> joinRoot(const JoinContext& ctx, const RankDescriptor& self);

/// Connects to every lower rank and accepts every higher rank on `listener` (both authenticated);
/// returns sockets indexed by rank (this rank's slot invalid).
std::vector<net::Socket> buildMesh(const JoinContext& ctx, const net::Listener& listener,
                                   const std::vector<RankDescriptor>& table);

}  // namespace hetccl::bootstrap
