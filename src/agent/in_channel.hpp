// One connection a peer opened to this agent (wire.hpp): a thread that runs the target side of the
// handshake and then serves the peer's requests one after another -- checks every range against this
// agent's regions (holding an access while it reads or writes them), moves the payload, queues the
// notifications -- until the peer closes it, fails, or the agent stops.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "agent/core.hpp"
#include "net/socket.hpp"
#include "rma/window.hpp"

namespace hetccl::agent {

class InChannel {
 public:
  InChannel(AgentCore& core, net::Socket sock);
  ~InChannel();  ///< stop()
  /// Closes the connection and joins the thread.
  void stop() noexcept;
  bool finished() const { return finished_.load(); }

 private:
  void run();
  void serve();
  void serveTransfer(const MsgHeader& h);
  /// Checks and holds every range; on a refusal fills `reply` and releases what it held.
  std::vector<rma::RegionRef> holdRanges(const std::vector<WireRange>& table, std::vector<Segment>& segments, Reply& reply);
  void sendReply(const Reply& reply, Deadline d);

  AgentCore& core_;
  net::Socket sock_;
  std::string label_;  ///< "agent 'NAME' (connection from ADDRESS)" once known
  std::string peerName_;
  std::unique_ptr<rma::Window> out_, back_;  ///< the initiator's window (we read) and ours (we write)
  std::mutex mu_;
  bool stopped_ = false;
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

}  // namespace hetccl::agent
