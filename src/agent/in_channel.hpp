// One connection a peer opened to this agent (wire.hpp): a thread that runs the target side of the
// handshake and then serves the peer's requests one after another -- checks every range against this
// agent's regions (holding an access while it reads or writes them), moves the payload, queues the
// notifications -- until the peer closes it, fails, or the agent stops. The handshake has its own short
// deadline (kHandshakeMs): a connection that does not prove the secret by then is closed.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "agent/core.hpp"
#include "agent/payload.hpp"
#include "agent/peer_copy.hpp"
#include "net/socket.hpp"
#include "rma/window.hpp"

namespace hetccl::agent {

/// How long an incoming connection may take to prove the secret (or the agent's timeout when shorter).
inline constexpr int64_t kHandshakeMs = 5000;
/// Incoming connections still in their handshake, at most; a new one beyond it is closed at once.
inline constexpr size_t kMaxPendingHandshakes = 64;

class InChannel {
 public:
  InChannel(AgentCore& core, net::Socket sock);
  ~InChannel();  ///< stop()
  /// Closes the connection and joins the thread.
  void stop() noexcept;
  bool finished() const { return finished_.load(); }
  /// True once the peer proved the secret (until then it counts towards the pending handshakes' cap).
  bool authenticated() const { return authenticated_.load(); }

 private:
  void run();
  void serve();
  void serveTransfer(const MsgHeader& h);
  /// A transfer with kCopiedByTarget (peer_copy.hpp): the table, notification and source section are
  /// read; the copies run here, complete before the answer.
  void serveCopy(const MsgHeader& h, std::vector<WireRange> table, std::vector<unsigned char> notif);
  void serveUnmap(const MsgHeader& h);
  /// The target's regions a request holds (holdRanges), released when it goes out of scope.
  struct HeldRegions {
    AgentCore& core;
    std::vector<rma::RegionRef> refs;
    ~HeldRegions();
  };
  /// Queues a write's notification (none when empty) once every byte of it is in place.
  void queueWriteNote(std::vector<unsigned char> notif, Deadline d);
  /// Checks and holds every range; on a refusal fills `reply` and releases what it held.
  std::vector<rma::RegionRef> holdRanges(const std::vector<WireRange>& table, std::vector<Segment>& segments, Reply& reply);
  void sendReply(const Reply& reply, Deadline d);
  CopyEngine* engine();

  AgentCore& core_;
  net::Socket sock_;
  std::string label_;  ///< "agent 'NAME' (connection from ADDRESS)" once known
  std::string peerName_;
  std::unique_ptr<rma::Window> out_, back_;  ///< the initiator's window (we read) and ours (we write)
  NetPair net_;  ///< the payload over UCX (agreed in the handshake, else empty)
  std::mutex mu_;
  bool stopped_ = false;
  std::atomic<bool> finished_{false};
  std::atomic<bool> authenticated_{false};
  std::unique_ptr<CopyEngine> engine_;  ///< the thread's (created at its first device copy through a window)
  bool peerCopy_ = false;               ///< agreed in the handshake: requests may carry kCopiedByTarget
  std::unique_ptr<PeerCopier> copier_;  ///< the thread's; its mappings close when the thread ends
  std::thread thread_;
};

}  // namespace hetccl::agent
