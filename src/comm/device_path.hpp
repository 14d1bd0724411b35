// Collectives on GPU buffers with NCCL's stream semantics, through host staging.
//
// enqueue() returns at once: it records an event on the user's stream ("inputs ready"), makes the stream
// wait for a host-written flag, and hands the group to this rank's progress thread. The thread waits
// for the event, copies the device inputs into pinned staging on its own copy stream, runs the group
// with the host engine (shm/tcp transports, host reduction), copies the outputs back, and writes the
// flag: the user's stream continues. Nothing in the calling thread waits for the collective.
//
// Pinned memory is allocated and freed only in the calling thread, before the user stream is made to wait:
// cudaHostAlloc / cudaFreeHost may synchronise the whole device, so the progress thread calling them while
// a user stream waits for its flag deadlocks (seen on H200: every staged collective hung). Growing the
// staging buffer therefore drains this path first (the call then blocks until earlier work is done).
//
// This is the cross-domain path of this build for every layout (no vendor path is used between ranks).
// It is not pipelined yet: the copy-in, the exchange and the copy-out of one group run one after the
// other (see docs/STATUS.md).
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
  /// Told about a failure of the device side (copies, events); the communicator makes it sticky.
  using FailureSink = std::function<void(const std::exception&)>;

  DevicePath(const hetcclGpuPlugin_v1_t& gpu, int device, int rank, int nranks, HostRunner runHost,
             FailureSink onFailure, const std::atomic<bool>* abortFlag);
  /// Drains queued work (or releases it unrun after an abort), joins the thread, frees staging.
  ~DevicePath();
  DevicePath(const DevicePath&) = delete;
  DevicePath& operator=(const DevicePath&) = delete;

  /// Queues a group ordered on `stream` (nullptr: the default stream). Returns at once, except when the
  /// group needs more staging than is allocated: then it first waits for the queued groups (drain()).
  /// One calling thread at a time (as for any communicator).
  void enqueue(std::vector<algo::CollOp> ops, void* stream);
  /// Waits until every queued group has finished (or was released after a failure); TimeoutError after
  /// HETCCL_TIMEOUT (a user stream that never reaches its queued collectives).
  void drain();

 private:
  struct Work {
    std::vector<algo::CollOp> ops;
    StagingPlan plan;
    void* inputsReady = nullptr;  // event on the user stream
    uint64_t seq = 0;
  };
  void worker();
  void execute(const Work& w);
  void release(uint64_t seq);  // lets the user stream past the work numbered seq
  void ensureStaging(size_t bytes);  // calling thread only: drains, then reallocates
  void check(int rc, const char* what) const;

  const hetcclGpuPlugin_v1_t& gpu_;
  const int device_, rank_, nranks_;
  HostRunner runHost_;
  FailureSink onFailure_;
  const std::atomic<bool>* abortFlag_;
  void* copyStream_ = nullptr;
  uint64_t* flag_ = nullptr;  // pinned; the user stream waits for it
  void* staging_ = nullptr;   // pinned; replaced only while the queue is drained
  size_t stagingBytes_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Work> queue_;
  uint64_t nextSeq_ = 0, doneSeq_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace hetccl
