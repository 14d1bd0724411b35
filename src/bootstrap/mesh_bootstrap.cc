#include "bootstrap/mesh_bootstrap.hpp"

#include <algorithm>
#include <numeric>
#include <set>

namespace hetccl::bootstrap {
namespace {

/// The comm id of a child: a 32-bit mix of the parent's id and the caller's tag (FNV-1a over both).
uint32_t childComm(uint32_t parent, uint32_t commTag) {
  uint32_t h = 2166136261u;
  for (uint32_t word : {parent, commTag, 0x5eed5eedu})
    for (int i = 0; i < 4; ++i) h = (h ^ ((word >> (8 * i)) & 0xff)) * 16777619u;
  return h == 0 ? 1 : h;  // 0 is the world's id
}

}  // namespace

MeshBootstrap::MeshBootstrap(std::shared_ptr<Mesh> mesh, std::vector<int> members, int myIndex, uint32_t comm)
    : mesh_(std::move(mesh)), members_(std::move(members)), myIndex_(myIndex), comm_(comm) {
  for (size_t i = 0; i < members_.size(); ++i) {
    PeerInfo p = mesh_->peers()[members_[i]];
    p.rank = static_cast<int>(i);
    peers_.push_back(p);
  }
}

PeerError MeshBootstrap::inView(const PeerError& e) const {
  auto it = std::find(members_.begin(), members_.end(), e.peer());
  return PeerError(it == members_.end() ? -1 : static_cast<int>(it - members_.begin()), e.host(), e.what());
}

template <class F>
auto MeshBootstrap::inView(F&& f) const -> decltype(f()) {
  try {
    return f();
  } catch (const TimeoutError& e) {
    PeerError v = inView(static_cast<const PeerError&>(e));
    throw TimeoutError(v.peer(), v.host(), v.what());
  } catch (const PeerError& e) {
    throw inView(e);
  }
}

int MeshBootstrap::meshRank(int peer, const char* what) const {
  if (peer < 0 || peer >= size() || peer == myIndex_)
    throw InvalidArgument(concat("bootstrap ", what, ": peer ", peer, " is not another rank of [0, ", size(), ")"));
  return members_[peer];
}

void MeshBootstrap::send(int peer, uint32_t tag, const void* data, size_t bytes) {
  if (bytes && !data) throw InvalidArgument("bootstrap send: null data");
  const int to = meshRank(peer, "send");
  inView([&] { mesh_->send(to, FrameType::Data, comm_, tag, data, bytes); });
}

void MeshBootstrap::recv(int peer, uint32_t tag, void* data, size_t bytes) {
  if (bytes && !data) throw InvalidArgument("bootstrap recv: null data");
  const int from = meshRank(peer, "recv");
  inView([&] { mesh_->recv(from, FrameType::Data, comm_, tag, data, bytes, Deadline::fromConfig(), members_); });
}

void MeshBootstrap::allGather(void* data, size_t bytesPerRank) {
  if (bytesPerRank && !data) throw InvalidArgument("bootstrap allGather: null data");
  auto* bytes = static_cast<unsigned char*>(data);
  uint32_t seq = collectiveSeq_++;
  inView([&] {
    // Direct exchange: N is small, and sends never wait for the peer's recv (its reader thread drains).
    for (int i = 0; i < size(); ++i)
      if (i != myIndex_)
        mesh_->send(members_[i], FrameType::Collective, comm_, seq, bytes + myIndex_ * bytesPerRank, bytesPerRank);
    Deadline deadline = Deadline::fromConfig();
    for (int i = 0; i < size(); ++i)
      if (i != myIndex_)
        mesh_->recv(members_[i], FrameType::Collective, comm_, seq, bytes + i * bytesPerRank, bytesPerRank, deadline,
                    members_);
  });
}

void MeshBootstrap::barrier() {
  std::vector<unsigned char> tokens(size());
  allGather(tokens.data(), 1);
}

std::optional<PeerError> MeshBootstrap::failure() const {
  std::optional<PeerError> f = mesh_->failure(members_, comm_);
  if (f) return inView(*f);
  return f;
}

std::optional<PeerError> MeshBootstrap::firstFailureInMesh() const {
  std::vector<int> everyone(mesh_->peers().size());
  std::iota(everyone.begin(), everyone.end(), 0);
  return mesh_->failure(everyone, comm_);
}

std::optional<PeerError> MeshBootstrap::firstFailureInJob() const {
  std::optional<PeerError> f = firstFailureInMesh();
  if (f) return inView(*f);
  return f;
}

void MeshBootstrap::leave() { mesh_->goodbye(comm_, members_); }

void MeshBootstrap::abort() { mesh_->abort(); }

void MeshBootstrap::reportFailure(const PeerError& cause) {
  // cause.peer() is a rank of this view; the mesh speaks global ranks.
  if (cause.peer() == myIndex_ || cause.peer() >= size()) return;
  if (cause.peer() >= 0) {
    mesh_->notifyFailure(PeerError(members_[cause.peer()], cause.host(), cause.what()));
    return;
  }
  // Not a rank of this view (firstFailureInJob() of a split's member): name the job rank that failed first.
  if (std::optional<PeerError> first = firstFailureInMesh()) mesh_->notifyFailure(*first);
}

std::unique_ptr<Bootstrap> MeshBootstrap::split(const std::vector<int>& ranks, uint32_t commTag) {
  std::set<int> seen;
  int mine = -1;
  std::vector<int> members;
  for (size_t i = 0; i < ranks.size(); ++i) {
    int r = ranks[i];
    if (r < 0 || r >= size())
      throw InvalidArgument(concat("bootstrap split: rank ", r, " is outside [0, ", size(), ")"));
    if (!seen.insert(r).second) throw InvalidArgument(concat("bootstrap split: rank ", r, " is listed twice"));
    if (r == myIndex_) mine = static_cast<int>(i);
    members.push_back(members_[r]);
  }
  if (mine < 0) throw InvalidArgument(concat("bootstrap split: this rank (", myIndex_, ") is not in the new group"));
  return std::make_unique<MeshBootstrap>(mesh_, std::move(members), mine, childComm(comm_, commTag));
}

}  // namespace hetccl::bootstrap
