// Collectives on GPU buffers with NCCL's stream semantics, through host staging.
//
// enqueue() returns at once. A group is cut into pieces (staged_pieces.hpp: a large all-reduce, broadcast
// or reduce into ranges of HETCCL_STAGED_PIECE_BYTES; anything else is one piece), each staged in one of
// HETCCL_STAGED_SLOTS slots of pinned memory. It queues on the user's stream, in order:
//   wait until the previous group is copied out           (drainedFlag >= first-1: staging is free again)
//   for each piece k:
//     copy piece k's device inputs into its slot           (copy engines)
//     write readyFlag = seq(k)                             (the host learns the inputs are staged)
//     wait until doneFlag >= seq(k - slots + 1), copy that piece's outputs back (it frees that slot)
//   wait for and copy out the pieces left, write drainedFlag = seq(last piece)
// and hands the pieces to this rank's progress thread, which waits for each piece's readyFlag, runs it
// with the host engine (shm/tcp/ucx transports, host reduction) in its slot, and writes doneFlag. So
// while the host exchanges piece k, the copy engines stage the pieces after it and copy back the ones
// before it. Nothing in the calling thread waits for the collective.
//
// The progress thread makes no CUDA call at all (it only reads and writes pinned words): a thread that
// calls the runtime while a user stream waits for it can deadlock behind any device-synchronising call
// (cudaHostAlloc, cudaFree, ...) made elsewhere in the process. Pinned memory is allocated only in the
// calling thread, after the path is drained, so no stream waits on it then.
//
// It serves the layouts the stream pipeline cannot (GPU and CPU ranks mixed, several hosts) and
// HETCCL_GPU_EXEC=staged; StagedExecutor (staged_executor.hpp) wraps it for the communicator. Groups run
// one after the other (a group's pieces overlap each other, not the next group's);
// HETCCL_STAGED_PIECE_BYTES=0 stages every group whole, unpipelined.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "algo/coll_op.hpp"
#include "exec/staged/staged_pieces.hpp"
#include "device/base/gpu_plugin.h"

namespace hetccl {

class DevicePath {
 public:
  /// Runs a translated (host-memory) group; throws on failure (the host executor reports it).
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
  /// How groups are staged, e.g. "all-reduce/broadcast/reduce over 4194304 bytes in pieces through 4
  /// pinned slots" (for hetccl-info and the INFO log).
  std::string describe() const;

 private:
  struct Work {
    std::vector<algo::CollOp> ops;  ///< one piece, translated: its pointers are in its staging slot
    uint64_t seq = 0;
  };
  void worker();
  /// A call's staging: `count` slots of `bytes` each from `base`; piece k uses slot k % count.
  struct Slots {
    char* base;
    size_t bytes, count;
    char* at(size_t k) const { return base + (k % count) * bytes; }
  };
  void queueOnStream(const std::vector<StagedPiece>& pieces, const Slots& slots, void* stream, uint64_t first);
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
  const size_t pieceBytes_;  // HETCCL_STAGED_PIECE_BYTES (0: groups whole)
  const size_t slots_;       // HETCCL_STAGED_SLOTS
  // pinned: [0] readyFlag (written by streams), [8] doneFlag (written by the host), [16] drainedFlag
  // (written by streams once a group's outputs are copied back)
  uint64_t* flags_ = nullptr;
  void* staging_ = nullptr;    // pinned; replaced only while the queue is drained
  size_t stagingBytes_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Work> queue_;
  uint64_t nextSeq_ = 0, doneSeq_ = 0;
  std::atomic<uint64_t> cancelledFrom_{UINT64_MAX};  // pieces from this seq on are released unrun
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace hetccl
