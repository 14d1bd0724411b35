#include "bootstrap/root.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "bootstrap/acceptor.hpp"
#include "bootstrap/frame.hpp"
#include "bootstrap/root_session.hpp"
#include "core/config.hpp"
#include "core/log.hpp"

namespace hetccl::bootstrap {
namespace {

constexpr int kPollSliceMs = 100;

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<RendezvousRoot>> roots;
};

Registry& registry();
pid_t gRegistryPid = 0;  // the process whose exit handler stops the roots (a forked child has no root threads)

/// Process exit: a failed root still owes ranks the failure (they would otherwise wait their whole
/// deadline for a root that is gone, then blame its process); one shared linger budget for all. Runs as
/// an exit handler registered after OpenSSL's (see registry()), so the roots answer and stop before
/// OpenSSL's cleanup: a static destructor could run after it and crash in the handshake (issue 27 item 1).
void stopRootsAtExit() {
  if (getpid() != gRegistryPid) return;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  const Deadline linger = Deadline::afterMs(RendezvousRoot::kExitLingerMs);
  for (auto& root : r.roots)
    if (root->owesFailure()) root->lingerWhileOwed(linger.remainingMs());
  r.roots.clear();  // each destructor stops and joins its thread
}

Registry& registry() {
  static Registry* r = [] {
    cryptoReady();  // OpenSSL's exit handler and the crypto gate's are registered by now: ours runs first
    auto* reg = new Registry;  // never destroyed: stopRootsAtExit empties it
    gRegistryPid = getpid();
    std::atexit(&stopRootsAtExit);
    return reg;
  }();
  return *r;
}

}  // namespace

namespace {

/// Binds the root's address; a failure names what the address is for and what to do.
net::Listener bindRoot(const net::SocketAddress& at) {
  try {
    return net::Listener(at);
  } catch (const SystemError& e) {
    throw SystemError(concat("the rendezvous root cannot listen: ", e.what(),
                             "; choose a free port (HETCCL_COMM_ID, or MASTER_PORT under torchrun-style launchers)"));
  }
}

}  // namespace

RendezvousRoot::RendezvousRoot(const net::SocketAddress& at, const Secret& secret, Deadline deadline, int hostRank)
    : listener_(bindRoot(at)),
      secret_(secret),
      deadline_(deadline),
      hostRank_(hostRank),
      graceMs_(1000 * config().integer("HETCCL_AUTH_FAILURE_GRACE", 0, 86400)) {
  spareFd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  HETCCL_INFO(log::kBootstrap, "bootstrap root listening on ", listener_.address().toString());
  thread_ = std::thread([this] { serve(); });
}

RendezvousRoot::~RendezvousRoot() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (spareFd_ >= 0) ::close(spareFd_);
}

net::SocketAddress RendezvousRoot::startInBackground(const net::SocketAddress& at, const Secret& secret,
                                                     Deadline deadline, int hostRank) {
  auto root = std::make_unique<RendezvousRoot>(at, secret, deadline, hostRank);
  net::SocketAddress bound = root->address();
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::erase_if(r.roots, [](const auto& x) { return x->finished(); });
  r.roots.push_back(std::move(root));
  return bound;
}

void RendezvousRoot::lingerWhileOwed(int maxMs) {
  const Deadline until = Deadline::afterMs(maxMs);
  if (owesFailure())
    HETCCL_INFO(log::kBootstrap, "bootstrap root ", listener_.address().toString(),
                ": process exit waits (at most ", maxMs, " ms) to tell the ranks not connected yet that init failed");
  while (owesFailure() && !until.expired()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

void RendezvousRoot::onDescriptorsExhausted(RootSession& session, const net::DescriptorsExhausted& e) {
  if (spareFd_ >= 0) {
    ::close(spareFd_);
    spareFd_ = -1;
  }
  const std::string who = hostRank_ >= 0 ? concat("rank ", hostRank_, "'s rendezvous root at ") : "the rendezvous root at ";
  const uint32_t tag = hostRank_ >= 0 ? kErrorRankFailed | static_cast<uint32_t>(hostRank_) : 0;
  session.failJob(concat(who, listener_.address().toString(), " cannot accept more ranks: ", e.what()), tag);
  // The listener stays readable while connections wait: do not spin until descriptors come back.
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

// A client that claimed rank r and failed on its proof alone is most likely rank r started with another
// secret: when r has not joined HETCCL_AUTH_FAILURE_GRACE later (and the job size is known), every rank is
// told so at once instead of at HETCCL_TIMEOUT. True when it did. A stranger who speaks the protocol can thus
// fail an init whose rank r is slower than the grace (docs/SECURITY.md; 0 turns this off).
bool RendezvousRoot::failOnWrongSecret(RootSession& session, const AuthenticatingAcceptor& acceptor) const {
  const auto& wrong = acceptor.firstWrongSecret();
  if (!wrong || graceMs_ <= 0 || session.failed() || !session.sized() || session.joined(wrong->rank)) return false;
  if (std::chrono::steady_clock::now() - wrong->at < std::chrono::milliseconds(graceMs_)) return false;
  session.giveUp(concat("the rendezvous root ", listener_.address().toString()),
                 concat("a client claiming rank ", wrong->rank, " failed authentication (", wrong->what,
                        "): was it started with another HETCCL_SECRET or unique id?"),
                 concat("within HETCCL_AUTH_FAILURE_GRACE (", graceMs_ / 1000.0, " s) of that rank's failed handshake"));
  return true;
}

void RendezvousRoot::serve() noexcept {
  try {
    RootSession session;
    AuthenticatingAcceptor acceptor(listener_, secret_, Purpose::Root, -1, [](int) { return true; });
    std::vector<pollfd> fds;
    while (!stop_ && !deadline_.expired() && !session.complete()) {
      if (failOnWrongSecret(session, acceptor))
        HETCCL_WARN(log::kBootstrap, "bootstrap root ", listener_.address().toString(), ": ", session.progressText(),
                    "; a rank failed authentication and did not join within HETCCL_AUTH_FAILURE_GRACE");
      fds.clear();
      size_t own = acceptor.appendPollFds(fds);
      session.appendPollFds(fds);
      int rc = ::poll(fds.data(), fds.size(), std::min(kPollSliceMs, deadline_.remainingMs()));
      if (rc < 0 && errno != EINTR) throw SystemError::fromErrno("bootstrap root: poll", errno);
      if (rc <= 0) {
        for (auto& f : fds) f.revents = 0;
      }
      session.service(fds.data() + own);
      try {
        for (auto& peer : acceptor.service(fds.data())) session.add(std::move(peer));
      } catch (const net::DescriptorsExhausted& e) {
        onDescriptorsExhausted(session, e);
      }
      owesFailure_ = session.failed() && !session.complete();
    }
    if (!session.complete() && !stop_) {
      HETCCL_WARN(log::kBootstrap, "bootstrap root ", listener_.address().toString(), ": deadline passed with ",
                  session.progressText());
      std::string note;
      if (acceptor.failedHandshakes() > 0)
        note = concat(acceptor.failedHandshakes(), " connection(s) to this root failed the handshake (the last from ",
                      acceptor.lastFailedHandshake(), "): a rank started with another HETCCL_SECRET or unique id?");
      session.giveUp(concat("the rendezvous root ", listener_.address().toString()), note);
    }
  } catch (const std::exception& e) {
    HETCCL_WARN(log::kBootstrap, "bootstrap root ", listener_.address().toString(), " stopped: ", e.what());
  }
  listener_.close();  // its port is free again at once (the object waits in the registry to be joined)
  if (spareFd_ >= 0) ::close(spareFd_);
  spareFd_ = -1;
  finished_ = true;
}

}  // namespace hetccl::bootstrap
