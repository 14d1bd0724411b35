// bootstrap::connect(): validate, bind the mesh listener, (start the root,) join the root, build the mesh.
#include <poll.h>

#include <algorithm>
#include <thread>

#include "bootstrap/join.hpp"
#include "bootstrap/mesh_bootstrap.hpp"
#include "bootstrap/root.hpp"
#include "core/log.hpp"

namespace hetccl::bootstrap {
namespace {

constexpr int kSliceMs = 100;

/// Ranks of a job whose root listens on loopback all live on this host: keep the mesh on loopback too.
net::SocketAddress meshListenAddress(const UniqueId& id) {
  if (!id.root.isLoopback()) return net::chooseLocalAddress();
  return net::SocketAddress::parse(id.root.storage.ss_family == AF_INET6 ? "[::1]:0" : "127.0.0.1:0");
}

}  // namespace

void JoinContext::checkAbort(const std::string& during) const {
  if (abortFlag && abortFlag->load())
    throw AbortedError(concat("rank ", rank, ": bootstrap aborted while ", during));
}

net::Socket JoinContext::connect(const net::SocketAddress& to, const std::string& peer, bool retryRefused) const {
  while (true) {
    checkAbort(concat("connecting to ", peer));
    try {
      return net::Socket::connect(to, deadline.min(Deadline::afterMs(kSliceMs)), retryRefused);
    } catch (const TimeoutError&) {
      if (deadline.expired())
        throw TimeoutError(-1, "", concat("rank ", rank, ": could not connect to ", peer, " before the deadline"));
    }
  }
}

bool JoinContext::waitReadable(int fd, const std::string& during) const {
  while (true) {
    checkAbort(during);
    pollfd p{fd, POLLIN, 0};
    int rc = ::poll(&p, 1, std::min(kSliceMs, deadline.remainingMs()));
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) throw SystemError::fromErrno("poll", errno);
    if (deadline.expired()) return false;
  }
}

std::unique_ptr<Bootstrap> connectWithHooks(const UniqueId& id, int rank, int nranks, const PeerInfo& self,
                                            Deadline deadline, const std::atomic<bool>* abortFlag,
                                            const ConnectHooks& hooks) {
  if (nranks < 1) throw InvalidArgument(concat("bootstrap: nranks ", nranks, " must be at least 1"));
  if (rank < 0 || rank >= nranks) throw InvalidArgument(concat("bootstrap: rank ", rank, " is outside [0, ", nranks, ")"));
  JoinContext ctx{id, rank, nranks, deadline, abortFlag};

  RankDescriptor me;
  me.info = self;
  me.info.rank = rank;
  me.nranks = nranks;
  net::Listener meshListener(meshListenAddress(id));
  me.meshAddress = meshListener.address();
  if (hooks.onMeshListening) hooks.onMeshListening(rank, me.meshAddress);

  if (id.rank0StartsRoot && rank == 0) RendezvousRoot::startInBackground(id.root, id.secret, deadline, 0);
  std::vector<RankDescriptor> table = joinRoot(ctx, me);
  HETCCL_INFO(log::kBootstrap, "rank ", rank, " of ", nranks, ": every rank joined; building the mesh");
  std::vector<net::Socket> sockets = buildMesh(ctx, meshListener, table);

  std::vector<PeerInfo> peers;
  for (auto& d : table) peers.push_back(std::move(d.info));
  auto mesh = std::make_shared<Mesh>(rank, std::move(peers), std::move(sockets));
  std::vector<int> everyone(nranks);
  for (int r = 0; r < nranks; ++r) everyone[r] = r;
  return std::make_unique<MeshBootstrap>(std::move(mesh), std::move(everyone), rank, 0);
}

std::unique_ptr<Bootstrap> connect(const UniqueId& id, int rank, int nranks, const PeerInfo& self, Deadline deadline,
                                   const std::atomic<bool>* abortFlag) {
  return connectWithHooks(id, rank, nranks, self, deadline, abortFlag, ConnectHooks{});
}

}  // namespace hetccl::bootstrap
