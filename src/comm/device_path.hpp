// Collectives on GPU buffers with NCCL's stream semantics, through host staging.
//
// enqueue() returns at once. It queues on the user's stream, in order:
//   wait until the previous group of this path is done   (doneFlag >= seq-1: staging is free again)
//   copy the device inputs into pinned staging             (copy engines)
//   write readyFlag = seq                                  (the host learns the inputs are staged)
//   wait until doneFlag >= seq                             (the host finished the exchange)
//   copy the outputs from staging back to the device
// and hands the group to this rank's progress thread, which waits for readyFlag, runs the group with the
// host engine (shm/tcp transports, host reduction) on the staging buffer, and writes doneFlag. Nothing
// in the calling thread waits for the collective.
//
// The progress thread makes no CUDA call at all (it only reads and writes two words of pinned memory):
// a thread that calls the runtime while a user stream waits for it can deadlock behind any
// device-synchronising call (cudaHostAlloc, cudaFree, ...) made elsewhere in the process. Pinned memory
// is allocated only in the calling thread, after the path is drained, so no stream waits on it then.
//
// It serves the layouts the stream pipeline cannot (GPU and CPU ranks mixed, several hosts) and
// HETCCL_GPU_EXEC=staged; StagedExecutor (staged_executor.hpp) wraps it for the communicator. It is not
// pipelined: the copy-in, the exchange and the copy-out of one group run one after the other (see
// docs/STATUS.md).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "algo/coll_op.hpp"
#include "comm/staging_plan.hpp"
#include "device/base/gpu_plugin.h"

namespace hetccl {

class DevicePath {
 public:
  /// Runs a translated (host-memory) group; throws on failure (the communicator records it).
  using HostRunner = std::function<void(std::span<const algo::CollOp>)>;
  /// Told about a failure the host runner did not report itself; the communicator makes it sticky.
  using FailureSink = std::function<void(const std::exception&)>;

  DevicePath(const hetcclGpuPlugin_t& gpu, int device, int rank, int nranks, HostRunner runHost,
             FailureSink onFailure, const std::atomic<bool>* abortFlag);
  /// Drains queued work (or releases it unrun after an abort), joins the thread, frees staging.
  ~DevicePath();
  DevicePath(const DevicePath&) = delete;
  DevicePath& operator=(const DevicePath&) = delete;

  /// Queues a group ordered on `stream` (nullptr: the default stream). Returns at once, except when the
  /// group needs more staging than is allocated: then it first waits for the queued groups (drain()).
  /// One calling thread at a time (as for any communicator). Throws InvalidUsage, queuing nothing, when
  /// `stream` is being captured into a CUDA graph (this path's host thread would not run on replays).
  void enqueue(std::vector<algo::CollOp> ops, void* stream);
  /// Waits until every queued group has finished (or was released after a failure); TimeoutError after
  /// HETCCL_TIMEOUT (a user stream that never reaches its queued collectives).
  void drain();

 private:
  struct Work {
    std::vector<algo::CollOp> ops;
    StagingPlan plan;
    uint64_t seq = 0;
  };
  void worker();
  /// Waits (polling pinned memory, no CUDA call) until the stream has staged the inputs of `seq`.
  bool waitReady(uint64_t seq);
  void release(uint64_t seq);        // doneFlag = seq: the user stream copies the outputs back
  void ensureStaging(size_t bytes);  // calling thread only: drains, then reallocates
  void check(int rc, const char* what) const;

  const hetcclGpuPlugin_t& gpu_;
  const int device_, rank_, nranks_;
  HostRunner runHost_;
  FailureSink onFailure_;
  const std::atomic<bool>* abortFlag_;
  uint64_t* flags_ = nullptr;  // pinned: [0] readyFlag (written by streams), [8] doneFlag (written by the host)
  void* staging_ = nullptr;    // pinned; replaced only while the queue is drained
  size_t stagingBytes_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Work> queue_;
  uint64_t nextSeq_ = 0, doneSeq_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace hetccl
