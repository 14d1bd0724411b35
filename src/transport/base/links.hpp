// The connections a schedule runs over (the host engine, exec/host; the stream pipeline's ring proxy,
// exec/pipeline): one send and one receive connection per peer. LinkSet (transport/links) builds them.
#pragma once

#include <memory>
#include <vector>

#include "transport/base/transport.hpp"

namespace hetccl::transport {

class Links {
 public:
  virtual ~Links() = default;
  /// The connection carrying this rank's messages to `peer`. Throws InvalidUsage when there is none.
  virtual SendConn& sendTo(int peer) = 0;
  /// The connection carrying `peer`'s messages to this rank. Throws InvalidUsage when there is none.
  virtual RecvConn& recvFrom(int peer) = 0;
};

}  // namespace hetccl::transport
