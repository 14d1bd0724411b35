// Builds the bootstrap mesh: this rank connects to every lower rank's mesh listener and accepts every
// higher rank on its own, both authenticated (the client's rank is proved inside the handshake).
#include <poll.h>

#include <algorithm>
#include <exception>
#include <thread>

#include "bootstrap/acceptor.hpp"
#include "bootstrap/handshake.hpp"
#include "bootstrap/join.hpp"
#include "core/log.hpp"

namespace hetccl::bootstrap {
namespace {

constexpr int kPollSliceMs = 100;

std::string rankName(const RankDescriptor& d) { return concat("rank ", d.info.rank, " (host ", d.info.hostId, ")"); }

/// Accepts ranks above ours until all are connected. Runs on its own thread; `stop` ends it early.
void acceptHigherRanks(const JoinContext& ctx, const net::Listener& listener, const std::vector<RankDescriptor>& table,
                       std::vector<net::Socket>& sockets, const std::atomic<bool>& stop) {
  int missing = ctx.nranks - 1 - ctx.rank;
  auto allowed = [&](int r) { return r > ctx.rank && r < ctx.nranks && !sockets[r].valid(); };
  AuthenticatingAcceptor acceptor(listener, ctx.id.secret, Purpose::Mesh, ctx.rank, allowed);
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
  }
}

net::Socket connectToLowerRank(const JoinContext& ctx, const RankDescriptor& peer) {
  std::string name = rankName(peer);
  while (true) {
    net::Socket s = ctx.connect(peer.meshAddress, name);
    try {
      authenticateAsClient(s, ctx.id.secret, Purpose::Mesh, ctx.rank, peer.info.rank, ctx.deadline, name);
      return s;
    } catch (const TimeoutError&) {
      throw;
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

}  // namespace

std::vector<net::Socket> buildMesh(const JoinContext& ctx, const net::Listener& listener,
                                   const std::vector<RankDescriptor>& table) {
  std::vector<net::Socket> sockets(ctx.nranks);
  std::atomic<bool> stop{false};
  std::exception_ptr acceptError;
  std::thread acceptor([&] {
    try {
      acceptHigherRanks(ctx, listener, table, sockets, stop);
    } catch (...) {
      acceptError = std::current_exception();
    }
  });
  try {
    for (int q = 0; q < ctx.rank; ++q) sockets[q] = connectToLowerRank(ctx, table[q]);
  } catch (...) {
    stop = true;
    acceptor.join();
    throw;
  }
  acceptor.join();
  if (acceptError) std::rethrow_exception(acceptError);
  return sockets;
}

}  // namespace hetccl::bootstrap
