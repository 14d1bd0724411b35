// This agent's connection to one peer for the transfers it starts (wire.hpp): a queue of posts and one
// thread that connects on first use, runs them one after another in post order, and connects again
// after a failure. A failure ends only the post it happened in (naming the peer); a post cut off by a
// cancel closes the connection, and the next post connects again.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "agent/core.hpp"
#include "agent/payload.hpp"
#include "agent/metadata.hpp"
#include "net/socket.hpp"
#include "rma/window.hpp"

namespace hetccl::agent {

class OutChannel {
 public:
  OutChannel(AgentCore& core, Metadata peer);
  ~OutChannel();  ///< stop("destroyed") if not stopped yet

  const Metadata& peer() const { return peer_; }
  /// "agent 'NAME' at ADDRESS".
  const std::string& label() const { return label_; }
  /// Queues `post`; throws InvalidUsage once stopped.
  void submit(const std::shared_ptr<Post>& post);
  /// A queued post is removed and ends Cancelled at once; a running one is cut off by its thread.
  void cancel(const std::shared_ptr<Post>& post);
  /// Fails every queued and running post ("<label>: <why>"), closes the connection, joins the thread.
  void stop(const std::string& why);

 private:
  void run();
  void connect();
  void disconnect() noexcept;
  CopyEngine* engine();
  bool closedByPeer() const;
  void execute(Post& post);
  /// Sends `post`'s request (header with `flags`, range table, a write's or Notify's notification); its id.
  uint64_t sendRequest(const Post& post, uint32_t flags, const Deadline& d);
  /// Sends `post` with kCopiedByTarget and takes the answer; false when the target could not map this
  /// side's memory (then nothing happened and the post goes the ordinary way).
  bool executeCopiedByTarget(Post& post, const Deadline& d);
  /// Sends an Unmap of `post.source`'s allocation when the target may hold a mapping of it.
  void executeUnmap(Post& post, const Deadline& d);
  /// Sends a read's notification after its data (a Notify) and takes the answer.
  void notifyAfterRead(Post& post, const Deadline& d);
  /// Receives the reply to request `id`.
  Reply recvReply(uint64_t id, const Deadline& d);
  void checkReply(const Post& post, const Reply& reply) const;

  AgentCore& core_;
  Metadata peer_;
  std::string label_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Post>> queue_;
  std::shared_ptr<Post> running_;
  bool stopping_ = false;
  std::atomic<bool> stopFlag_{false};
  std::string stopWhy_;
  net::Socket sock_;                      // the thread's; shut down by stop() under mu_
  std::unique_ptr<rma::Window> out_, back_;  // the thread's
  bool outMapped_ = false, backMapped_ = false;
  NetPair net_;  ///< the payload over UCX (the thread's; agreed in the handshake, else empty)
  bool peerCopy_ = false;         ///< this connection's target copies device memory itself (handshake)
  bool peerCopyRefused_ = false;  ///< it could not map this side's memory once: not asked again (channel's life)
  /// The allocations this connection's target may hold a mapping of (sent in a request since it opened).
  std::vector<device::GpuRuntime::IpcHandle> mappedAtPeer_;
  uint64_t nextId_ = 1;
  std::unique_ptr<CopyEngine> engine_;  ///< the thread's (created at its first device copy through a window)
  std::thread thread_;
};

/// Window segments' names: "/hetccl-agw-<creator pid>-<random hex>".
inline constexpr const char* kWindowPrefix = "hetccl-agw-";
std::string newWindowName();
/// Removes the window segments whose creator process is gone (one killed between creating a window and
/// its peer mapping it -- the name is normally removed then); returns how many. Called at agent creation.
size_t sweepOrphanWindows() noexcept;

}  // namespace hetccl::agent
