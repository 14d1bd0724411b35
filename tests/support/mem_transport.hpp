// Transport over a mem::Fabric (threads as ranks). Implements the transport contract of
// transport/base/transport.hpp, including Reducer and the abort flag; PeerInfo::rank selects the channel.
#pragma once

#include <memory>

#include "transport/base/transport.hpp"
#include "support/mem_fabric.hpp"

namespace hetccl::transport::mem {

class MemTransport final : public Transport {
 public:
  explicit MemTransport(std::shared_ptr<Fabric> fabric) : fabric_(std::move(fabric)) {}
  std::string_view name() const override { return "mem"; }
  /// Any two ranks of the fabric.
  bool canConnect(const PeerInfo& self, const PeerInfo& peer) const override;
  std::unique_ptr<Listener> listen(const PeerInfo& self) override;
  /// Never waits. The handle must come from a listener of this fabric.
  std::unique_ptr<SendConn> connect(const Handle& peerHandle, const ConnectInfo& info, Deadline deadline) override;
  std::unique_ptr<RecvConn> accept(Listener& listener, const ConnectInfo& info, Deadline deadline) override;

 private:
  std::shared_ptr<Fabric> fabric_;
};

}  // namespace hetccl::transport::mem
