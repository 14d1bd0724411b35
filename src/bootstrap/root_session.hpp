// The root's bookkeeping for one job: authenticated rank connections, their descriptors, the checks
// between them, and the answer (table or error) each one gets. No threads, no blocking waits except
// the short sends of the answers; RendezvousRoot drives it from its poll loop.
#pragma once

#include <poll.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/acceptor.hpp"
#include "bootstrap/descriptor.hpp"
#include "bootstrap/frame.hpp"

namespace hetccl::bootstrap {

class RootSession {
 public:
  /// Takes a connection that passed the handshake; its descriptor frame is read as it arrives.
  void add(AuthenticatedPeer peer);
  /// One pollfd (POLLIN) per connection still waiting for its answer.
  void appendPollFds(std::vector<pollfd>& fds) const;
  /// After poll(): reads descriptors, checks them, answers when the job is complete or has failed.
  void service(const pollfd* fds);
  /// True once the table went to every rank, or the error went to as many ranks as the job has.
  bool complete() const;
  /// Fails the job with `message` (Error tag `tag`, see frame.hpp) unless it has failed already.
  void failJob(const std::string& message, uint32_t tag) {
    if (error_.empty()) fail(message, tag);
  }
  /// True once the job has failed (the error goes to every rank that is or will be connected).
  bool failed() const { return !error_.empty(); }
  /// "3 of 4 ranks joined" for the deadline warning.
  std::string progressText() const;
  /// At the root's deadline: every rank still waiting gets an error naming the ranks that never joined
  /// (`where` names the root). Nothing happens when the job is complete, has failed already, or no rank
  /// has registered (the job size is unknown then).
  /// `note`, when not empty, ends the message (e.g. connections that failed authentication); `when` says
  /// what ran out (default: the init deadline).
  void giveUp(const std::string& where, const std::string& note = "",
              const std::string& when = "before the init deadline (HETCCL_TIMEOUT)");
  /// Whether `rank` has registered (its descriptor passed every check).
  bool joined(int rank) const {
    return rank >= 0 && static_cast<size_t>(rank) < byRank_.size() && byRank_[rank].has_value();
  }
  /// Whether the job size is known (a rank has registered).
  bool sized() const { return nranks_ > 0; }

 private:
  struct Member {
    net::Socket socket;
    int handshakeRank = -1;
    FrameReader reader{4096};
    bool sentDescriptor = false;  // its one frame was read: it is waiting for the answer
    bool registered = false;      // its descriptor passed every check
  };

  /// Returns an error message when the descriptor in `frame` conflicts with what is known, else "".
  std::string check(const Member& m, const Frame& frame);
  /// Some registered rank, to name in mismatch messages (the lowest one).
  const RankDescriptor* reference() const;
  void onDescriptor(Member& m, const Frame& frame);
  /// Fails the job: every waiting rank (and every later one) gets `message` with Error tag `tag`.
  void fail(const std::string& message, uint32_t tag = 0);
  void answer(Member& m, FrameType type, const std::vector<unsigned char>& payload, uint32_t tag = 0);
  void sendTable();

  std::vector<std::unique_ptr<Member>> waiting_;  // not answered yet
  std::vector<std::optional<RankDescriptor>> byRank_;  // registered descriptors, indexed by rank
  int nranks_ = 0;                                // from the first valid descriptor
  int registered_ = 0;
  int answered_ = 0;
  int largestNranks_ = 0;
  std::string error_;
  uint32_t errorTag_ = 0;
  bool tableSent_ = false;
};

}  // namespace hetccl::bootstrap
