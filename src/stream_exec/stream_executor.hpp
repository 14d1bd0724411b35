// Device collectives between GPU ranks of one host, run entirely by GPU streams (see stream_program.hpp):
// device -> pinned shared-memory ring -> device on copy engines, chunk after chunk, every peer's two
// directions at once, reductions in kernels. enqueue() plans the group, queues it on this executor's
// streams ordered after the user's stream, and returns; the user's stream waits for the result.
//
// A monitor thread (which makes no GPU runtime call, so it can never deadlock behind a synchronising
// call elsewhere in the process) polls the groups' done flags. When a peer dies (the bootstrap notices),
// the communicator is aborted, or no queued group finishes for HETCCL_TIMEOUT, it reports the failure
// and releases every stream this rank has waiting on a ring counter (it overwrites the counters this
// rank waits on with a value every wait accepts), so the user's stream never hangs; the outputs of the
// released groups are then undefined and the communicator is unusable (the error is sticky).
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "algo/coll_op.hpp"
#include "algo/topology.hpp"
#include "algo/tuning.hpp"
#include "bootstrap/bootstrap.hpp"
#include "device/base/gpu_plugin.h"
#include "stream_exec/gpu_ring.hpp"
#include "stream_exec/stream_program.hpp"

namespace hetccl::stream_exec {

class StreamExecutor {
 public:
  /// Told about a failure once (the communicator makes it sticky).
  using FailureSink = std::function<void(const std::exception&)>;
  /// Throws the peer failure the bootstrap noticed, if any.
  using FailureCheck = std::function<void()>;

  /// Collective over `boot` (every rank a GPU rank on this host): creates the rings, streams and
  /// landing buffers on `device`.
  StreamExecutor(const hetcclGpuPlugin_v1_t& gpu, int device, bootstrap::Bootstrap& boot, algo::Topology topology,
                 FailureSink onFailure, FailureCheck checkFailure, const std::atomic<bool>* abortFlag);
  /// Waits for queued groups (up to HETCCL_TIMEOUT; releases them after a failure), then frees everything.
  ~StreamExecutor();
  StreamExecutor(const StreamExecutor&) = delete;
  StreamExecutor& operator=(const StreamExecutor&) = delete;

  /// Plans and queues a group of device-buffer operations on `stream` (nullptr: the default stream).
  /// Returns once queued. Throws InvalidArgument for a group the planner rejects (nothing queued),
  /// Error(UnhandledCudaError) when the runtime refuses a call (the executor is then failed).
  void enqueue(std::span<const algo::CollOp> ops, void* stream);
  /// Waits until every queued group is done (or released after a failure); TimeoutError after
  /// HETCCL_TIMEOUT without progress.
  void drain();
  /// "stream pipeline (...)", for logs and hetccl-info.
  static const char* describe();

 private:
  void monitor();
  void releaseStreams();  // overwrites every counter this rank's streams wait on
  void reportFailure(const std::exception& e);
  void ensureScratch(size_t bytes);
  void check(int rc, const char* what) const;
  void logTraffic() const;

  const hetcclGpuPlugin_v1_t& gpu_;
  const int device_;
  const algo::Topology topology_;
  algo::Tuning tuning_;
  FailureSink onFailure_;
  FailureCheck checkFailure_;
  const std::atomic<bool>* abortFlag_;
  GpuRingSet rings_;
  StreamResources res_;
  EventPool events_;
  size_t scratchBytes_ = 0;
  uint64_t* doneFlag_ = nullptr;  // pinned; written by the compute stream at the end of each group
  std::vector<uint64_t> sentBytes_, receivedBytes_;  // per peer, over the communicator's life (INFO log)

  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t nextSeq_ = 0, doneSeq_ = 0;
  bool failed_ = false, stopping_ = false;
  std::thread thread_;
};

}  // namespace hetccl::stream_exec
