// This agent's connection to one peer for the transfers it starts (wire.hpp): a queue of posts and one
// thread that connects on first use, runs them in post order, and connects again after a failure.
// Writes and notifications are pipelined: their requests (and a write's payload) go out one after
// another, up to kMaxInFlight of them before their answers, which are taken in order (the target serves
// a connection's requests in order, so its data and notifications still land in post order). A read, a
// device copy by the target and an Unmap wait until every answer is in, then run alone. A refusal ends
// only its post; any other failure closes the connection and fails its post (naming the peer) and every
// post in flight behind it (sent, unanswered: they may or may not have taken effect at the target); the
// next post connects again. A cancel cuts off a post whose request or payload is still being sent (the
// connection closes with it); once its bytes are all sent, its answer is awaited as for any other.
#pragma once

#include <deque>
#include <functional>
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

/// Posts sent on one connection before their answers, at most.
inline constexpr size_t kMaxInFlight = 32;

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
  /// A post sent and not answered yet.
  struct InFlight {
    std::shared_ptr<Post> post;
    uint64_t id = 0;
  };
  /// How a post ended.
  struct Ended {
    Post::State state = Post::State::Done;
    Result code = Result::Success;
    std::string message;
    bool disconnect = false;  ///< the failure closed the connection
  };
  void run();
  /// Whether `post` may be sent before the answers to those in flight: a write or notification the target
  /// answers without a payload back (not copied by the target).
  bool pipelinable(const Post& post) const;
  /// The outcome of `post` failing with `e`; closes the connection unless it was a refusal.
  Ended failure(const Post& post, const std::exception& e);
  void finish(const std::shared_ptr<Post>& post, const Ended& end);
  /// Receives the answer to the oldest post in flight and ends it.
  void takeAnswer(std::deque<InFlight>& inflight);
  /// Fails every post in flight: the connection closed because of `cause` (how another post ended).
  void failInFlight(std::deque<InFlight>& inflight, const Ended& cause);
  /// Sends a pipelinable post's request and a write's payload; the request's id.
  uint64_t send(Post& post);
  /// Throws when the channel stops or `post` is cancelled (between a payload's chunks).
  std::function<void()> stopCheck(const Post& post) const;
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
  bool ucxFailed_ = false;        ///< a ucx set-up with it failed once: tcp from then on (channel's life)
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
