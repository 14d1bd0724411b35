// Bootstrap over a Mesh: the communicator's view (members = global ranks of the mesh, in rank order)
// with its own tag space (comm id). split() makes child views over the same mesh.
#pragma once

#include <memory>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/mesh.hpp"

namespace hetccl::bootstrap {

class MeshBootstrap : public Bootstrap {
 public:
  /// `members[i]` is the mesh rank of this view's rank i; `myIndex` is this process's position.
  MeshBootstrap(std::shared_ptr<Mesh> mesh, std::vector<int> members, int myIndex, uint32_t comm);

  int rank() const override { return myIndex_; }
  int size() const override { return static_cast<int>(members_.size()); }
  const std::vector<PeerInfo>& peers() const override { return peers_; }
  void allGather(void* data, size_t bytesPerRank) override;
  void send(int peer, uint32_t tag, const void* data, size_t bytes) override;
  void recv(int peer, uint32_t tag, void* data, size_t bytes) override;
  void barrier() override;
  std::optional<PeerError> failure() const override;
  std::optional<PeerError> firstFailureInJob() const override;
  void abort() override;
  void reportFailure(const PeerError& cause) override;
  void leave() override;
  std::unique_ptr<Bootstrap> split(const std::vector<int>& ranks, uint32_t commTag) override;

 private:
  int meshRank(int peer, const char* what) const;
  /// The mesh names peers by world rank; callers of this view expect its own ranks in PeerError::peer()
  /// (the message text keeps naming the world rank and host). Runs `f`, rethrowing peer errors so.
  template <class F>
  auto inView(F&& f) const -> decltype(f());
  PeerError inView(const PeerError& e) const;
  /// The first failure among every mesh rank, in mesh numbers.
  std::optional<PeerError> firstFailureInMesh() const;

  std::shared_ptr<Mesh> mesh_;
  std::vector<int> members_;
  int myIndex_;
  uint32_t comm_;
  std::vector<PeerInfo> peers_;
  uint32_t collectiveSeq_ = 0;
};

}  // namespace hetccl::bootstrap
