// The transport connections of one communicator: one SendConn and one RecvConn per peer, over the
// transport chosen for each pair (shm on one host; between hosts ucx when HETCCL_UCX allows it and UCX
// loads on both ranks, else tcp; HETCCL_TRANSPORT or the config's netName forces one). Built
// collectively at init through the bootstrap.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "transport/base/links.hpp"
#include "transport/base/transport.hpp"

namespace hetccl::transport {

/// Which peers a LinkSet connects to.
enum class LinkScope {
  AllPeers,    ///< every other rank (the host engine's links)
  OtherHosts,  ///< only ranks on other hosts (the stream pipeline's ring proxy, net_ring_proxy.hpp)
};

class LinkSet final : public Links {
 public:
  /// Connects this rank to every other rank in `scope`. `forced` is "", "auto", "shm", "tcp" or "ucx".
  /// Collective over the bootstrap (every rank passes the same scope); throws on any failure (naming the
  /// peer) or at the deadline.
  LinkSet(bootstrap::Bootstrap& boot, const std::string& forced, const std::atomic<bool>* abortFlag,
          Deadline deadline, LinkScope scope = LinkScope::AllPeers);
  ~LinkSet() override;

  transport::SendConn& sendTo(int peer) override;
  transport::RecvConn& recvFrom(int peer) override;

  /// Name of the transport used towards `peer` ("self" for this rank).
  std::string_view transportTo(int peer) const;

  /// The communicator failed: its peers may be gone or stopped, so the destructor abandons every
  /// connection (transports close without waiting for the peer) instead of closing it gracefully.
  void closeAbruptly() noexcept { abrupt_ = true; }

 private:
  void abandonAll() noexcept;

  int rank_;
  std::vector<std::unique_ptr<transport::Transport>> transports_;  // indexed by TransportId
  std::vector<int> choice_;                                        // per peer: index into transports_
  std::vector<std::unique_ptr<transport::SendConn>> send_;
  std::vector<std::unique_ptr<transport::RecvConn>> recv_;
  bool abrupt_ = false;
};

}  // namespace hetccl::transport
