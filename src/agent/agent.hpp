// An agent (hetccl_agent.h): one process's end of transfers with independent peers. It owns a listener
// and the thread accepting on it (one InChannel per accepted connection), its registrations
// (rma::RegionTable: id = slot, a new generation when a slot is reused), the peers' metadata and one
// OutChannel per peer it transfers to, created at the first post. Prepared transfers (Xfer) hold the
// target side of every range already encoded; a post holds its local regions until it ends.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "agent/core.hpp"
#include "agent/in_channel.hpp"
#include "agent/metadata.hpp"
#include "agent/out_channel.hpp"
#include "net/socket.hpp"

namespace hetccl::agent {

struct AgentOptions {
  std::vector<unsigned char> secret;  ///< empty: HETCCL_SECRET
  std::string listenAddress;          ///< empty: chooseLocalAddress(), any port
  int device = -1;                    ///< GPU ordinal, -1: host memory only
  double timeoutSeconds = 0;          ///< <= 0: HETCCL_TIMEOUT
};

struct Range {
  uint32_t localRegion = 0;
  uint32_t remoteRegion = 0;
  uint64_t localOffset = 0;
  uint64_t remoteOffset = 0;
  uint64_t bytes = 0;
};

/// A prepared transfer (hetcclAgentXfer_t).
struct Xfer {
  MsgType type = MsgType::Write;
  std::string peer;
  Incarnation incarnation{};      ///< the peer's, at prepare
  std::vector<Range> ranges;
  std::vector<WireRange> remote;  ///< the target's side, encoded at prepare
  std::vector<std::pair<uint32_t, uint32_t>> localGenerations;  ///< (region, generation) of the local regions used
  std::vector<unsigned char> notif;
  PeerSource source;              ///< this side's allocations when the target may copy them (peer_copy.hpp)
  std::shared_ptr<Post> last;     ///< the last post (guarded by AgentCore::mu)
  std::shared_ptr<OutChannel> channel;  ///< where `last` went (for cancel)
};

class Agent {
 public:
  /// Throws InvalidArgument (name, secret, address), SystemError (bind), InvalidUsage (no GPU runtime).
  Agent(const std::string& name, const AgentOptions& options);
  ~Agent();  ///< stop()
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  /// Stops every thread and connection; pending posts fail ("destroyed"). Idempotent.
  void stop() noexcept;
  const std::string& name() const { return core_.name; }
  const std::string& address() const { return address_; }

  std::vector<unsigned char> metadata();
  std::string loadRemote(std::span<const unsigned char> blob);
  void forgetRemote(const std::string& name);

  struct Registration {
    uint32_t id = 0;
    uint32_t generation = 0;
    unsigned char* base = nullptr;
    uint64_t bytes = 0;
    rma::MemKind kind = rma::MemKind::Host;
    /// Device memory exported for peers' copies (AgentCore::peerCopy; none when the runtime refused).
    std::optional<device::GpuRuntime::IpcExport> shared;
  };
  Registration registerMemory(void* buf, uint64_t bytes);
  /// Ends the registration; waits (bounded) for accesses in progress. InvalidArgument when unknown. Device
  /// memory that peers copied: asks each of them to close its mapping and waits for the answers (a peer
  /// that does not confirm: RemoteError naming it, the registration ended all the same).
  void deregister(uint32_t id, uint32_t generation);

  std::shared_ptr<Xfer> prepare(MsgType type, const std::string& peer, std::span<const Range> ranges,
                                std::span<const unsigned char> notif);
  void post(Xfer& x);
  /// Success, InProgress, or the code of the failure with its message.
  Result check(const Xfer& x, std::string& message);
  Result wait(const Xfer& x, std::string& message);
  void cancel(Xfer& x);
  /// InvalidUsage while a post of `x` runs.
  void checkReleasable(const Xfer& x);

  /// A notification-only transfer of `msg` to `peer`, posted like any prepared transfer.
  std::shared_ptr<Xfer> prepareNotif(const std::string& peer, std::span<const unsigned char> msg);
  /// prepareNotif, post and wait: throws what ended it.
  void genNotif(const std::string& peer, std::span<const unsigned char> msg);
  /// Takes the oldest notification when it fits `capacity` (true); false with `size` set when it does
  /// not (it stays queued); `got` false when none.
  bool takeNotif(std::string& from, unsigned char* msg, size_t capacity, size_t& size, bool& got);

 private:
  struct Peer {
    Metadata md;
    std::shared_ptr<OutChannel> channel;  ///< created at the first post
  };
  void acceptLoop();
  std::shared_ptr<OutChannel> channelFor(const std::string& peer, const Incarnation& incarnation);
  /// The source section of `x` when its target may copy every range itself (empty when not). mu_ held.
  PeerSource peerSourceOf(const Xfer& x, const std::map<uint32_t, const RegionInfo*>& remote) const;
  /// Asks every peer connection to close its mapping of `shared` (unless another registration is in it).
  void unmapAtPeers(const device::GpuRuntime::IpcExport& shared, const std::vector<std::shared_ptr<OutChannel>>& channels);
  /// Holds the local regions of `x` for `post` and fills its segments (InvalidArgument when one ended).
  void holdLocal(const Xfer& x, Post& post);
  Result outcome(const Xfer& x, std::string& message) const;  // core_.mu held

  AgentCore core_;
  std::string address_;
  uint32_t pid_ = 0;
  std::unique_ptr<net::Listener> listener_;
  std::thread acceptThread_;

  std::mutex mu_;  ///< regions_, peers_, sequence_, inChannels_
  std::map<uint32_t, Registration> regions_;
  uint64_t sequence_ = 1;
  std::map<std::string, Peer> peers_;
  std::vector<std::unique_ptr<InChannel>> inChannels_;
  bool stopped_ = false;
};

}  // namespace hetccl::agent
