// Builds the bootstrap mesh: this rank connects to every lower rank's mesh listener (up to kConnectors
// at a time, nearest first) and accepts every higher rank on its own, both authenticated (the client's
// rank is proved inside the handshake).
//
// A rank that dies while the mesh is built is noticed well before the init deadline: every mesh listener
// is bound before its rank joins the root and stays open until that rank has connected to all lower
// ranks, so a refused connection means the rank is gone. Connecting ranks fail at once on a refusal;
// accepting ranks probe the listener of a higher rank that has not connected yet every kProbeEveryMs and
// give up after two refusals in a row (one refusal may be a rank that just finished: its proof may still
// be on the way to this rank). A rank that fails here first tells the ranks it is connected to whom it
// blames (a Notice, as a Mesh would), and, when a lower rank refused it, keeps accepting for kLingerMs so
// that ranks about to connect to it reach the gone rank themselves instead of naming this one.
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <mutex>
#include <thread>

#include "bootstrap/acceptor.hpp"
#include "bootstrap/handshake.hpp"
#include "bootstrap/join.hpp"
#include "bootstrap/mesh.hpp"
#include "core/log.hpp"

namespace hetccl::bootstrap {
namespace {

constexpr int kPollSliceMs = 100;
constexpr int kProbeEveryMs = 500;
constexpr int kProbeTimeoutMs = 100;
constexpr int kNoticeBudgetMs = 200;  // for all connected ranks together
constexpr int kLingerMs = 500;        // a rank that found a lower rank gone still accepts this long

std::string rankName(const RankDescriptor& d) { return concat("rank ", d.info.rank, " (host ", d.info.hostId, ")"); }

/// True when `at` refused a connection (nothing listens there); false when it accepted or did not answer.
bool refuses(const net::SocketAddress& at) {
  try {
    net::Socket probe = net::Socket::connect(at, Deadline::afterMs(kProbeTimeoutMs), false);
    return false;
  } catch (const TimeoutError&) {
    return false;  // no answer (a slow or partitioned network) proves nothing
  } catch (const PeerError&) {
    return true;
  } catch (const Error&) {
    return false;
  }
}

/// Probes one missing higher rank per call (round robin); throws PeerError for a rank refused twice in a row.
class DeathProbe {
 public:
  DeathProbe(const JoinContext& ctx, const std::vector<RankDescriptor>& table)
      : ctx_(ctx), table_(table), refusals_(table.size(), 0), next_(ctx.rank + 1) {}

  void maybeProbe(const std::vector<net::Socket>& sockets) {
    if (Clock::now() < due_) return;
    due_ = Clock::now() + std::chrono::milliseconds(kProbeEveryMs);
    for (int tries = ctx_.rank + 1; tries < ctx_.nranks; ++tries) {
      int r = next_;
      next_ = next_ + 1 < ctx_.nranks ? next_ + 1 : ctx_.rank + 1;
      if (sockets[r].valid()) continue;
      refusals_[r] = refuses(table_[r].meshAddress) ? refusals_[r] + 1 : 0;
      if (refusals_[r] >= 2)
        throw PeerError(r, table_[r].info.hostId,
                        concat("rank ", ctx_.rank, ": ", rankName(table_[r]),
                               " closed its bootstrap mesh listener without connecting to this rank: it has exited"));
      return;
    }
  }

 private:
  const JoinContext& ctx_;
  const std::vector<RankDescriptor>& table_;
  std::vector<int> refusals_;
  int next_;
  Clock::time_point due_ = Clock::now() + std::chrono::milliseconds(kProbeEveryMs);
};

/// Accepts ranks above ours until all are connected. Runs on its own thread; `stop` ends it early.
void acceptHigherRanks(const JoinContext& ctx, const net::Listener& listener, const std::vector<RankDescriptor>& table,
                       std::vector<net::Socket>& sockets, const std::atomic<bool>& stop) {
  int missing = ctx.nranks - 1 - ctx.rank;
  auto allowed = [&](int r) { return r > ctx.rank && r < ctx.nranks && !sockets[r].valid(); };
  AuthenticatingAcceptor acceptor(listener, ctx.id.secret, Purpose::Mesh, ctx.rank, allowed);
  DeathProbe probe(ctx, table);
  std::vector<pollfd> fds;
  while (missing > 0) {
    ctx.checkAbort("building the bootstrap mesh");
    if (stop) return;
    if (ctx.deadline.expired()) {
      int first = ctx.rank + 1;
      while (sockets[first].valid()) ++first;
      throw TimeoutError(first, table[first].info.hostId, concat("rank ", ctx.rank, ": ", rankName(table[first]),
                                                                 " did not connect to this rank's bootstrap mesh before the deadline"));
    }
    fds.clear();
    acceptor.appendPollFds(fds);
    if (::poll(fds.data(), fds.size(), std::min(kPollSliceMs, ctx.deadline.remainingMs())) <= 0)
      for (auto& f : fds) f.revents = 0;
    for (auto& peer : acceptor.service(fds.data())) {
      if (sockets[peer.rank].valid()) continue;  // a second connection for the same rank: keep the first
      sockets[peer.rank] = std::move(peer.socket);
      --missing;
    }
    if (missing > 0) probe.maybeProbe(sockets);
  }
}

net::Socket connectToLowerRank(const JoinContext& ctx, const RankDescriptor& peer) {
  std::string name = rankName(peer);
  while (true) {
    net::Socket s;
    try {
      s = ctx.connect(peer.meshAddress, concat(name, "'s mesh listener at ", peer.meshAddress.toString()), false);
    } catch (const TimeoutError&) {
      throw TimeoutError(peer.info.rank, peer.info.hostId,
                         concat("rank ", ctx.rank, ": could not connect to ", name, "'s bootstrap mesh listener at ",
                                peer.meshAddress.toString(), " before the deadline"));
    } catch (const PeerError& e) {  // its listener is bound until it has connected to us: it is gone
      throw PeerError(peer.info.rank, peer.info.hostId,
                      concat("rank ", ctx.rank, ": ", name, " refused its bootstrap mesh connection: it has exited (",
                             e.what(), ")"));
    }
    try {
      authenticateAsClient(s, ctx.id.secret, Purpose::Mesh, ctx.rank, peer.info.rank, ctx.deadline, name);
      return s;
    } catch (const TimeoutError& e) {  // it accepted (the kernel did) but never answered: stopped or hung
      throw TimeoutError(peer.info.rank, peer.info.hostId, e.what());  // named, so that the notice names it
    } catch (const PeerError& e) {
      // Dropped during the handshake (e.g. its listener shed load): try again until the deadline.
      HETCCL_INFO(log::kBootstrap, "rank ", ctx.rank, ": mesh handshake with ", name, " failed (", e.what(), "); retrying");
      if (ctx.deadline.expired())
        throw TimeoutError(peer.info.rank, peer.info.hostId,
                           concat("rank ", ctx.rank, ": could not authenticate to ", name, " before the deadline: ", e.what()));
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(20, ctx.deadline.remainingMs())));
    }
  }
}

struct LowerRankOutcome {
  std::exception_ptr fatal;    ///< the nearest lower rank that did not answer before the deadline (or an abort)
  std::exception_ptr gone;     ///< the lowest lower rank that refused (it has exited)
};

/// Which of two lower ranks that refused this rank to blame: the lower. Ranks leave init in a cascade that
/// runs upwards within milliseconds -- a rank refused by a lower one lingers kLingerMs and then exits, a
/// rank whose root (rank 0) closed before answering exits at once -- so where several lower ranks are gone,
/// the lowest is where the cascade began (a killed root and the rank it left without a table: 3-rank
/// netns kill init_mid named the rank left behind 1 time in 50 while the nearest refusal was blamed). The
/// cascade downwards is the death probe's, which needs two refusals kProbeEveryMs apart: far slower than
/// any connect here.
bool blameLowerOf(int candidate, int blamed) { return blamed < 0 || candidate < blamed; }

/// Connects to every lower rank, nearest first, up to kConnectors at a time. A rank that hangs
/// (stopped, unreachable) holds up only the connection to itself: the other lower ranks' meshes still
/// complete, so the waits that time out anywhere are waits for the hung rank, and name it. (One at a
/// time, a rank stuck on its neighbour never reached rank 0, whose mesh then timed out naming it.)
LowerRankOutcome connectLowerRanks(const JoinContext& ctx, const std::vector<RankDescriptor>& table,
                                   std::vector<net::Socket>& sockets) {
  constexpr int kConnectors = 8;
  std::mutex mu;
  int next = ctx.rank - 1;  // the next lower rank to connect to (guarded by mu)
  int fatalRank = -1, goneRank = -1;
  LowerRankOutcome out;
  auto work = [&] {
    while (true) {
      int q;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (next < 0 || out.fatal) return;  // after a timeout the deadline has passed for everyone
        q = next--;
      }
      try {
        net::Socket s = connectToLowerRank(ctx, table[q]);
        std::lock_guard<std::mutex> lock(mu);
        sockets[q] = std::move(s);
      } catch (const TimeoutError&) {
        std::lock_guard<std::mutex> lock(mu);
        if (q > fatalRank) fatalRank = q, out.fatal = std::current_exception();
      } catch (const PeerError&) {  // that rank is gone: go on with the others
        std::lock_guard<std::mutex> lock(mu);
        if (blameLowerOf(q, goneRank)) goneRank = q, out.gone = std::current_exception();
      } catch (...) {  // aborted, or a local failure
        std::lock_guard<std::mutex> lock(mu);
        if (q > fatalRank) fatalRank = q, out.fatal = std::current_exception();
      }
    }
  };
  std::vector<std::thread> connectors;
  for (int i = 1; i < std::min(kConnectors, ctx.rank); ++i) connectors.emplace_back(work);
  work();
  for (auto& t : connectors) t.join();
  return out;
}

/// This rank fails before its mesh is complete: the ranks it is already connected to (whose meshes may be
/// complete) learn whom it blames before they see its sockets close, as from a Mesh (Notice frame).
void tellConnectedRanks(const JoinContext& ctx, const std::vector<net::Socket>& sockets, std::exception_ptr failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const PeerError& e) {
    if (e.peer() < 0 || e.peer() >= ctx.nranks || e.peer() == ctx.rank) return;
    const std::vector<unsigned char> notice = encodeNotice(e.peer(), e.what());
    const Deadline budget = Deadline::afterMs(kNoticeBudgetMs);
    for (int r = 0; r < ctx.nranks && !budget.expired(); ++r) {
      if (r == e.peer() || !sockets[r].valid()) continue;
      try {
        sockets[r].sendAll(notice.data(), notice.size(), budget, concat("rank ", r));
      } catch (const Error&) {  // it is gone too: nothing to tell
      }
    }
  } catch (...) {  // not about a peer: nothing to tell
  }
}

/// A lower rank whose mesh connection closed without a word (no Notice, nothing left to read): it died
/// after it connected. At this rank's deadline for a higher rank, the lowest such rank is named instead:
/// netns kill init_mid, 3 ranks, the root killed after it answered rank 1 and before it answered rank 2;
/// rank 2 exited at once, rank 1 waited for it and named rank 2 at its deadline. A lower rank that failed
/// itself sends a Notice before it closes: then its socket has bytes to read and the blame stands.
std::exception_ptr blameLowerRankThatDied(const JoinContext& ctx, const std::vector<RankDescriptor>& table,
                                          const std::vector<net::Socket>& sockets, std::exception_ptr failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const TimeoutError& e) {
    for (int r = 0; r < ctx.rank; ++r) {
      if (!sockets[r].valid()) continue;
      char byte;
      const ssize_t n = ::recv(sockets[r].fd(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n == 0 || (n < 0 && (errno == ECONNRESET || errno == EPIPE)))
        return std::make_exception_ptr(
            PeerError(r, table[r].info.hostId,
                      concat("rank ", ctx.rank, ": ", rankName(table[r]), " closed its bootstrap mesh connection before ",
                             "the mesh was complete, without a word: it has exited (then: ", e.what(), ")")));
    }
  } catch (...) {
  }
  return failure;
}

}  // namespace

std::vector<net::Socket> buildMesh(const JoinContext& ctx, const net::Listener& listener,
                                   const std::vector<RankDescriptor>& table) {
  std::vector<net::Socket> sockets(ctx.nranks);
  std::atomic<bool> stop{false}, acceptorDone{false};
  std::exception_ptr acceptError;
  std::thread acceptor([&] {
    try {
      acceptHigherRanks(ctx, listener, table, sockets, stop);
    } catch (...) {
      acceptError = std::current_exception();
    }
    acceptorDone = true;
  });
  std::exception_ptr failure;
  try {
    LowerRankOutcome lower = connectLowerRanks(ctx, table, sockets);
    if (lower.fatal) std::rethrow_exception(lower.fatal);  // the deadline has passed (or aborted): nothing more to do
    failure = lower.gone;
    if (failure) {
      // A lower rank is gone. Keep accepting for a moment: a rank about to connect here then finds this
      // rank's listener still open, goes on to the gone rank itself and names it, instead of naming this
      // rank for having left.
      const Deadline grace = ctx.deadline.min(Deadline::afterMs(kLingerMs));
      while (!acceptorDone && !grace.expired()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      std::rethrow_exception(failure);
    }
  } catch (...) {
    stop = true;
    acceptor.join();
    tellConnectedRanks(ctx, sockets, std::current_exception());
    throw;
  }
  acceptor.join();
  if (acceptError) {
    acceptError = blameLowerRankThatDied(ctx, table, sockets, acceptError);
    tellConnectedRanks(ctx, sockets, acceptError);
    std::rethrow_exception(acceptError);
  }
  return sockets;
}

}  // namespace hetccl::bootstrap
