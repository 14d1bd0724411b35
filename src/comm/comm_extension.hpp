// A service a higher layer attaches to a communicator (RMA: src/rma) so that the communicator's
// lifecycle reaches it: finalize and destroy stop it, abort aborts it. The communicator owns it; the
// service must not use the communicator after stop().
#pragma once

#include <string>

namespace hetccl {

class CommExtension {
 public:
  virtual ~CommExtension() = default;
  /// Stops the service for good (finalize, destroy): fails what is pending with `why`, joins its
  /// threads and frees every resource that refers to the communicator. Idempotent; never throws; bounded
  /// (it may wait briefly for goodbyes to peers).
  virtual void stop(const std::string& why) noexcept = 0;
  /// From any thread, never blocking: makes every wait of the service fail promptly. stop() still follows
  /// (from the destructor of the communicator).
  virtual void abort() noexcept = 0;
  /// One line for hetccl-info and logs: how the service reaches `peer`.
  virtual std::string pathTo(int peer) const = 0;
};

}  // namespace hetccl
