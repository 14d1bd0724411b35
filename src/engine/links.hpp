// The connections the engine runs a schedule over: one send and one receive connection per peer.
#pragma once

#include <memory>
#include <vector>

#include "transport/base/transport.hpp"

namespace hetccl::engine {

class Links {
 public:
  virtual ~Links() = default;
  /// The connection carrying this rank's messages to `peer`. Throws InvalidUsage when there is none.
  virtual transport::SendConn& sendTo(int peer) = 0;
  /// The connection carrying `peer`'s messages to this rank. Throws InvalidUsage when there is none.
  virtual transport::RecvConn& recvFrom(int peer) = 0;
};

/// Links held in a table indexed by peer rank (entries may be empty for peers never talked to).
class ConnectionTable final : public Links {
 public:
  explicit ConnectionTable(int nranks) : send_(static_cast<size_t>(nranks)), recv_(static_cast<size_t>(nranks)) {}
  void setSend(int peer, std::unique_ptr<transport::SendConn> c) { send_.at(peer) = std::move(c); }
  void setRecv(int peer, std::unique_ptr<transport::RecvConn> c) { recv_.at(peer) = std::move(c); }
  transport::SendConn& sendTo(int peer) override;
  transport::RecvConn& recvFrom(int peer) override;

 private:
  std::vector<std::unique_ptr<transport::SendConn>> send_;
  std::vector<std::unique_ptr<transport::RecvConn>> recv_;
};

}  // namespace hetccl::engine
