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

}  // namespace hetccl::engine
