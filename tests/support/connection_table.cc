#include "support/connection_table.hpp"

#include "core/error.hpp"

namespace hetccl::engine {

transport::SendConn& ConnectionTable::sendTo(int peer) {
  if (peer < 0 || static_cast<size_t>(peer) >= send_.size() || !send_[peer])
    throw InvalidUsage(concat("no send connection to rank ", peer));
  return *send_[peer];
}

transport::RecvConn& ConnectionTable::recvFrom(int peer) {
  if (peer < 0 || static_cast<size_t>(peer) >= recv_.size() || !recv_[peer])
    throw InvalidUsage(concat("no receive connection from rank ", peer));
  return *recv_[peer];
}

}  // namespace hetccl::engine
