// Compiles one rank's Schedule into work on GPU streams: the whole collective is queued at call time and
// then runs on the device with no host thread in the data path.
//
// Streams: one compute stream (copies between device buffers, reduction kernels), and per peer a send, a
// receive and a reduce stream, so every peer's transfers run on copy engines in both directions at once
// and its reductions overlap the next copies. A schedule step becomes (k: the piece's number on its ring
// within this group, S: slots per ring):
//   Send to p        per piece (<= slot size): wait until slot k is free (consumed >= base+k+1-S), copy
//                    device -> slot, write the piece's call stamp into the slot header, publish
//                    (published = base+k+1), all on p's send stream
//   Recv from p      per piece: wait published >= base+k+1, check the stamp (a mismatch is recorded in the
//                    ring's report, which both ranks' monitors read), copy slot -> destination, release the
//                    slot (consumed = base+k+1)
//   RecvReduce       per piece: on p's receive stream as Recv, into one of p's landing buffers (after its
//                    previous reduction is done); on p's reduce stream wait for that copy, reduce kernel
//                    dst op= landing, mark the landing buffer free
//   Copy / Reduce / Scale / Divide   on the compute stream
// `base` is the ring's base counter, in device memory, read by the stream operations when they run
// (HETCCL_GPU_OP_*): after its last piece of a group, the stream that uses a ring advances the base by the
// group's pieces rounded up to a multiple of S (so slot addresses baked into copies stay right), and the
// receiver writes consumed = the new base. Nothing the host knows at enqueue time about earlier groups
// is baked in, so the same work captured into a CUDA graph is right on every replay, interleaved in any
// order with eager calls and other graphs (one after the other on the device, as NCCL requires).
// The schedule's dependencies become events between streams (only where a step waits for a step of
// another stream, and only once per stream pair and position). Order on one stream is list order, which
// keeps each ring's pieces FIFO, identical on both ends.
// A group starts when the user's stream reaches it: the compute stream waits for it, advances the device
// group counter (the stamps' sequence number; `started` for the monitor) and every other stream used
// waits for that. It ends with the compute stream joining every other stream, writing `finished`, for an
// eager (not captured) group also the host's group number into `doneFlag`, and the user's stream waiting
// for it.
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
  explicit EventPool(const hetcclGpuPlugin_t& gpu) : gpu_(gpu) {}
  ~EventPool();
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;
  /// Starts a group: every event becomes available again.
  void reset() { next_ = 0; }
  /// An event not handed out since reset() (creates one when needed; throws on failure).
  void* take();

 private:
  const hetcclGpuPlugin_t& gpu_;
  std::vector<void*> events_;
  size_t next_ = 0;
};

/// One set of the executor's streams.
struct StreamSet {
  void* compute = nullptr;
  std::vector<void*> send;    ///< per peer (null for this rank)
  std::vector<void*> recv;    ///< per peer
  std::vector<void*> reduce;  ///< per peer
};

/// Words the device advances and the monitor reads. Addresses are the ones kernels use.
struct DeviceCounters {
  uint64_t* groupSeq = nullptr;        ///< device memory: groups started (the stamps' sequence number)
  std::vector<uint64_t*> sendBase;     ///< device memory, per peer: base of ring this rank -> peer
  std::vector<uint64_t*> recvBase;     ///< device memory, per peer: base of ring peer -> this rank
  uint64_t* started = nullptr;         ///< pinned: *groupSeq when the latest group started
  uint64_t* finished = nullptr;        ///< pinned: *groupSeq when the latest group finished
  const uint64_t* abort = nullptr;     ///< pinned: nonzero once the host released the streams
};

/// What the compiled program runs on. Streams and buffers belong to the executor.
struct StreamResources {
  const hetcclGpuPlugin_t* gpu = nullptr;
  int rank = 0;
  StreamSet eager;    ///< streams of calls that run now
  StreamSet capture;  ///< streams of calls captured into a graph (they only join the capture)
  /// Per peer: kLandingBuffers device buffers of one ring slot each (RecvReduce pieces), with an event
  /// recorded when a piece has landed and one when its reduction has consumed it. Reused round-robin
  /// within a group (a group starts after the previous one ended).
  static constexpr int kLandingBuffers = 4;
  struct Landing {
    void* buffer[kLandingBuffers] = {};
    void* landed[kLandingBuffers] = {};
    void* reduced[kLandingBuffers] = {};
  };
  std::vector<Landing> landing;
  GpuRingSet* rings = nullptr;
  DeviceCounters counters;
  char* scratch = nullptr;     ///< device scratch of at least the schedule's scratchBytes
  EventPool* events = nullptr;
};

/// How one group is queued.
struct GroupInfo {
  bool captured = false;        ///< the user's stream is being captured: use the capture streams, no doneFlag
  uint64_t* doneFlag = nullptr;  ///< eager groups: pinned word the compute stream sets to `seq` at the end
  uint64_t seq = 0;
  uint64_t stampWord0 = 0;      ///< gpu_stamp.hpp
};

/// Queues `schedule` ordered on `userStream`. Throws Error(UnhandledCudaError) when the runtime refuses a
/// call; work queued before the failure may then wait forever for counters, which the caller must release
/// (see StreamExecutor).
void enqueueSchedule(const algo::Schedule& schedule, StreamResources& res, void* userStream, const GroupInfo& info);

}  // namespace hetccl::stream_exec
