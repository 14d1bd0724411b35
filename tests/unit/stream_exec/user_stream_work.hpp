// Work a user queues on its own stream around a collective call, as a training step does, so that the
// tests check the ordering between the user's stream and the group, not only the group's data.
//
// Before the call, the inputs are garbled on the host and rewritten by a copy on the user's stream from
// a staging buffer, queued behind a gate (a flag wait) that opens only after the call has been queued.
// After the call, the user's stream copies the outputs into snapshots; at the end the snapshots are
// written back over the outputs, so the checks that follow see what the user's stream saw. A group that
// starts before the user's stream reaches it reads garbled inputs; a user stream that does not wait for
// the group's end snapshots unfinished outputs. Either way the checks fail.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "algo/coll_op.hpp"

namespace hetccl::test {

/// The bytes an operation reads from sendbuff and writes at recvbuff (0 where it has none).
struct Extents {
  size_t sendBytes = 0;
  size_t recvBytes = 0;
};
Extents extentsOf(const algo::CollOp& op, int nranks);

class UserStreamWork {
 public:
  /// Queues on `stream` (of the simulated GPU) the gate and the copies that write the inputs of `group`
  /// (throws on failure).
  UserStreamWork(void* stream, std::span<const algo::CollOp> group, int nranks);
  ~UserStreamWork();  // opens the gate if still closed, so that nothing stays blocked behind it
  UserStreamWork(const UserStreamWork&) = delete;
  UserStreamWork& operator=(const UserStreamWork&) = delete;

  /// Call once the collective is queued: queues the snapshots of the outputs and opens the gate.
  void afterCall();
  /// Waits until the user's stream is idle and writes the snapshots over the outputs.
  void finish();

 private:
  struct Region {
    void* at;
    std::vector<unsigned char> copy;  // staged input, or snapshot of the output
  };
  void check(int rc, const char* what) const;

  void* stream_;
  std::span<const algo::CollOp> group_;
  int nranks_;
  uint64_t* gate_;
  std::vector<Region> inputs_, outputs_;
};

}  // namespace hetccl::test
