#include "transport/tcp/tcp_listener.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>

#include "core/error.hpp"
#include "core/log.hpp"

namespace hetccl::transport::tcp {
namespace {

std::string addressOf(const net::Socket& s) {
  try {
    return s.peerAddress().toString();
  } catch (const Error&) {
    return "<unknown address>";
  }
}

}  // namespace

TcpListener::TcpListener(const PeerInfo& self) : self_(self), listener_(net::chooseLocalAddress()) {
  handle_ = encodeAddressHandle(listener_.address());
  HETCCL_INFO(log::kNet, "tcp: rank ", self.rank, " listening on ", listener_.address().toString());
}

std::vector<net::Socket> TcpListener::acceptPeer(const ConnectInfo& info, Deadline deadline) {
  std::lock_guard<std::mutex> lock(mutex_);
  while (true) {
    std::vector<net::Socket> sockets = takeComplete(info);
    if (!sockets.empty()) return sockets;
    if (info.abortFlag && info.abortFlag->load(std::memory_order_acquire))
      throw AbortedError(concat("tcp accept from rank ", info.peer.rank, ": communicator aborted"));
    if (info.checkFailure) info.checkFailure();
    if (deadline.expired()) {
      size_t arrived = std::count_if(stash_.begin(), stash_.end(), [&](const Arrived& a) {
        return a.hello.fromRank == info.peer.rank && a.hello.token == info.token;
      });
      throw TimeoutError(info.peer.rank, info.peer.hostId,
                         concat("tcp accept: rank ", info.peer.rank, " on host '", info.peer.hostId,
                                "' did not open all its sockets to ", listener_.address().toString(),
                                " before the deadline (", arrived, " arrived)"));
    }
    acceptPending();
    readHellos(std::min(50, deadline.remainingMs()));
  }
}

std::vector<net::Socket> TcpListener::takeComplete(const ConnectInfo& info) {
  // The right sender with a wrong token is an impostor or a stale job: close those sockets.
  std::erase_if(stash_, [&](const Arrived& a) {
    bool wrong = a.hello.fromRank == info.peer.rank && a.hello.token != info.token;
    if (wrong)
      HETCCL_INFO(log::kNet, "tcp: closing connection from ", a.from, " claiming rank ", a.hello.fromRank,
                  ": wrong token");
    return wrong;
  });
  // The first arrived socket of this sender fixes the socket count; take the first of each index.
  auto first = std::find_if(stash_.begin(), stash_.end(), [&](const Arrived& a) { return a.hello.fromRank == info.peer.rank; });
  if (first == stash_.end()) return {};
  const uint16_t count = first->hello.socketCount;
  std::vector<int> chosen(count, -1);
  for (size_t i = 0; i < stash_.size(); ++i) {
    const Hello& h = stash_[i].hello;
    if (h.fromRank == info.peer.rank && h.socketCount == count && chosen[h.socketIndex] < 0)
      chosen[h.socketIndex] = static_cast<int>(i);
  }
  if (std::count(chosen.begin(), chosen.end(), -1) > 0) return {};
  std::vector<net::Socket> sockets;
  for (int i : chosen) sockets.push_back(std::move(stash_[i].socket));
  std::erase_if(stash_, [](const Arrived& a) { return !a.socket.valid(); });
  return sockets;
}

void TcpListener::acceptPending() {
  while (true) {
    net::Socket s = listener_.tryAccept();
    if (!s.valid()) return;
    std::string from = addressOf(s);
    incoming_.push_back(Incoming{std::move(s), Deadline::afterMs(kHelloTimeoutMs), std::move(from)});
  }
}

void TcpListener::readHellos(int waitMs) {
  std::vector<pollfd> fds{{listener_.fd(), POLLIN, 0}};
  for (const Incoming& in : incoming_) fds.push_back({in.socket.fd(), POLLIN, 0});
  if (::poll(fds.data(), fds.size(), std::max(waitMs, 0)) < 0 && errno != EINTR)
    throw SystemError::fromErrno("tcp accept: poll", errno);
  std::vector<bool> finished(incoming_.size(), false);
  for (size_t i = 0; i < incoming_.size(); ++i) {
    Incoming& in = incoming_[i];
    if (fds[i + 1].revents != 0) {
      try {
        in.got += in.socket.recvSome(in.wire.data() + in.got, in.wire.size() - in.got, in.from);
      } catch (const Error& e) {
        HETCCL_INFO(log::kNet, "tcp: dropping connection from ", in.from, " before its hello: ", e.what());
        finished[i] = true;
        continue;
      }
      if (in.got == in.wire.size()) {
        admit(in);
        finished[i] = true;
        continue;
      }
    }
    if (in.helloDeadline.expired()) {
      HETCCL_INFO(log::kNet, "tcp: dropping connection from ", in.from, ": no complete hello within ",
                  kHelloTimeoutMs, " ms (", in.got, " bytes)");
      finished[i] = true;
    }
  }
  std::vector<Incoming> still;
  for (size_t k = 0; k < incoming_.size(); ++k)
    if (!finished[k]) still.push_back(std::move(incoming_[k]));
  incoming_ = std::move(still);
}

void TcpListener::admit(Incoming& in) {
  std::string problem;
  std::optional<Hello> hello = Hello::decode(in.wire.data(), problem);
  if (hello && hello->toRank != self_.rank)
    problem = concat("it is meant for rank ", hello->toRank, ", this listener is rank ", self_.rank);
  else if (hello && hello->fromRank == self_.rank)
    problem = concat("it claims to come from this listener's own rank ", self_.rank);
  else if (hello && stash_.size() >= kMaxStashed)
    problem = concat("already ", kMaxStashed, " connections wait for their accept()");
  if (!problem.empty()) {
    HETCCL_INFO(log::kNet, "tcp: closing connection from ", in.from, ": invalid hello: ", problem);
    return;  // the socket closes with `in`
  }
  stash_.push_back(Arrived{*hello, std::move(in.socket), in.from});
}

}  // namespace hetccl::transport::tcp
