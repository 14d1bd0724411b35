#include "bootstrap/acceptor.hpp"

#include "core/log.hpp"

namespace hetccl::bootstrap {
namespace {
constexpr int kMaxAcceptsPerService = 64;
}

AuthenticatingAcceptor::AuthenticatingAcceptor(const net::Listener& listener, const Secret& secret, Purpose purpose,
                                               int serverRank, ServerHandshake::RankCheck rankAllowed,
                                               size_t maxPending, int handshakeTimeoutMs)
    : listener_(listener),
      secret_(secret),
      purpose_(purpose),
      serverRank_(serverRank),
      rankAllowed_(std::move(rankAllowed)),
      maxPending_(maxPending),
      handshakeTimeoutMs_(handshakeTimeoutMs) {}

size_t AuthenticatingAcceptor::appendPollFds(std::vector<pollfd>& fds) const {
  fds.push_back({listener_.fd(), POLLIN, 0});
  for (const auto& h : pending_) fds.push_back({h->fd(), h->pollEvents(), 0});
  return 1 + pending_.size();
}

void AuthenticatingAcceptor::drop(ServerHandshake& h, const std::string& why) {
  ++failed_;
  const std::string who = h.describe();
  lastFailed_ = why.rfind(who, 0) == 0 ? why : concat(who, ": ", why);  // reasons may start with it already
  HETCCL_INFO(log::kBootstrap, "bootstrap ", purpose_ == Purpose::Root ? "root " : "mesh listener ",
              listener_.address().toString(), ": dropped ", h.describe(), ": ", why);
}

void AuthenticatingAcceptor::acceptNew(std::vector<AuthenticatedPeer>& done) {
  for (int i = 0; i < kMaxAcceptsPerService; ++i) {
    net::Socket s;
    try {
      s = listener_.tryAccept();
    } catch (const net::DescriptorsExhausted& e) {
      exhausted_ = e;
      return;
    }
    if (!s.valid()) return;
    if (pending_.size() >= maxPending_) {
      drop(*pending_.front(), "too many pending handshakes; dropping the oldest");
      pending_.pop_front();
    }
    auto h = std::make_unique<ServerHandshake>(std::move(s), secret_, purpose_, serverRank_, rankAllowed_,
                                               Deadline::afterMs(handshakeTimeoutMs_));
    // The hello may already be there, and a quick client's proof may follow our reply at once.
    ServerHandshake::Status status = h->progress();
    finish(std::move(h), status, done);
  }
}

void AuthenticatingAcceptor::finish(std::unique_ptr<ServerHandshake> h, ServerHandshake::Status status,
                                    std::vector<AuthenticatedPeer>& done) {
  if (status == ServerHandshake::Status::Done) {
    HETCCL_INFO(log::kBootstrap, "bootstrap: authenticated rank ", h->clientRank(), " from ", h->describe());
    done.push_back({h->takeSocket(), h->clientRank()});
  } else if (status == ServerHandshake::Status::Failed) {
    drop(*h, h->reason());
    if (h->wrongProof() && !wrongSecret_) wrongSecret_ = WrongSecret{h->clientRank(), lastFailed_, std::chrono::steady_clock::now()};
  } else if (h->expired()) {
    drop(*h, "handshake not finished within its deadline");
  } else {
    pending_.push_back(std::move(h));
  }
}

std::vector<AuthenticatedPeer> AuthenticatingAcceptor::service(const pollfd* fds) {
  if (exhausted_) {
    net::DescriptorsExhausted e = std::move(*exhausted_);
    exhausted_.reset();
    throw e;
  }
  std::vector<AuthenticatedPeer> done;
  // Advance the handshakes polled this round (new ones get their turn at the next poll).
  std::deque<std::unique_ptr<ServerHandshake>> polled = std::move(pending_);
  pending_.clear();
  for (size_t i = 0; i < polled.size(); ++i) {
    ServerHandshake::Status status = fds[1 + i].revents ? polled[i]->progress() : ServerHandshake::Status::InProgress;
    finish(std::move(polled[i]), status, done);
  }
  if (fds[0].revents) acceptNew(done);
  if (exhausted_ && done.empty()) {
    net::DescriptorsExhausted e = std::move(*exhausted_);
    exhausted_.reset();
    throw e;
  }
  return done;
}

}  // namespace hetccl::bootstrap
