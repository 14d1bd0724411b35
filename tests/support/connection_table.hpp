// Test double: transport::Links held in a table indexed by peer rank, filled by a test harness with the
// connections of a transport (tests/unit/engine/harness.hpp wires the in-memory fabric's). The product's
// communicator keeps its links itself (src/comm).
#pragma once

#include <memory>
#include <vector>

#include "transport/base/links.hpp"

namespace hetccl::engine {

/// Links held in a table indexed by peer rank (entries may be empty for peers never talked to).
class ConnectionTable final : public transport::Links {
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
