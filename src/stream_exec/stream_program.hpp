// Compiles one rank's Schedule into work on GPU streams: the whole collective is queued at call time and
// then runs on the device with no host thread in the data path.
//
// Streams: one compute stream (copies between device buffers, reduction kernels), and per peer a send, a
// receive and a reduce stream, so every peer's transfers run on copy engines in both directions at once
// and its reductions overlap the next copies. A schedule step becomes:
//   Send to p        per piece (<= slot size): wait until ring slot free (consumed counter), copy device ->
//                    slot, publish (published counter), all on p's send stream
//   Recv from p      per piece: wait published, copy slot -> destination, release the slot (consumed)
//   RecvReduce       per piece: on p's receive stream wait published (and for the landing buffer to be
//                    free), copy slot -> one of p's landing buffers, release the slot; on p's reduce stream
//                    wait for that copy, reduce kernel dst op= landing, mark the landing buffer free
//   Copy / Reduce / Scale / Divide   on the compute stream
// The schedule's dependencies become events between streams (only where a step waits for a step of
// another stream, and only once per stream pair and position). Order on one stream is list order, which
// keeps each ring's pieces FIFO, identical on both ends.
// A group starts when the user's stream reaches it (every stream used waits for an event recorded there)
// and ends with the compute stream joining every other stream, writing the group's sequence number into
// `doneFlag` (pinned host memory the executor's monitor polls) and the user's stream waiting for it.
#pragma once

#include <cstdint>
#include <vector>

#include "algo/schedule.hpp"
#include "device/base/gpu_plugin.h"
#include "stream_exec/gpu_ring.hpp"

namespace hetccl::stream_exec {

/// Events reused from group to group (a wait binds to the record made before it, so re-recording an
/// event later never disturbs waits already queued).
class EventPool {
 public:
  explicit EventPool(const hetcclGpuPlugin_v1_t& gpu) : gpu_(gpu) {}
  ~EventPool();
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;
  /// Starts a group: every event becomes available again.
  void reset() { next_ = 0; }
  /// An event not handed out since reset() (creates one when needed; throws on failure).
  void* take();

 private:
  const hetcclGpuPlugin_v1_t& gpu_;
  std::vector<void*> events_;
  size_t next_ = 0;
};

/// What the compiled program runs on. Streams and buffers belong to the executor.
struct StreamResources {
  const hetcclGpuPlugin_v1_t* gpu = nullptr;
  int rank = 0;
  void* compute = nullptr;
  std::vector<void*> send;     ///< per peer (null for this rank)
  std::vector<void*> recv;     ///< per peer
  std::vector<void*> reduce;   ///< per peer
  /// Per peer: kLandingBuffers device buffers of one ring slot each (RecvReduce pieces), with an event
  /// recorded when a piece has landed and one when its reduction has consumed it. Reused round-robin.
  static constexpr int kLandingBuffers = 4;
  struct Landing {
    void* buffer[kLandingBuffers] = {};
    void* landed[kLandingBuffers] = {};
    void* reduced[kLandingBuffers] = {};
    uint64_t uses = 0;
  };
  std::vector<Landing> landing;
  GpuRingSet* rings = nullptr;
  char* scratch = nullptr;     ///< device scratch of at least the schedule's scratchBytes
  EventPool* events = nullptr;
};

/// Queues `schedule` ordered on `userStream`; when it is done the compute stream writes `seq` to
/// `doneFlag`. Advances the rings' piece counters. Throws Error(UnhandledCudaError) when the runtime
/// refuses a call; work queued before the failure may then wait forever for counters, which the caller
/// must release (see StreamExecutor).
void enqueueSchedule(const algo::Schedule& schedule, StreamResources& res, void* userStream, uint64_t* doneFlag,
                     uint64_t seq);

}  // namespace hetccl::stream_exec
