// Compiles one rank's Schedule into work on GPU streams: the whole collective is queued at call time and
// then runs on the device with no host thread in the data path.
//
// Streams: one compute stream (copies between device buffers, reduction kernels), and per peer a send, a
// receive and a reduce stream, so every peer's transfers run on copy engines in both directions at once
// and its reductions overlap the next copies. A schedule step becomes (k: the piece's number on its ring
// within this group; its slot is k % slots, see gpu_ring.hpp):
//   Send to p        per piece (<= slot size): wait until the slot is empty, copy device -> slot, write
//                    the piece's call stamp and mark the slot full, all on p's send stream
//   Recv from p      per piece: wait until the slot is full, check the stamp (a mismatch is recorded in the
//                    ring's report, which both ranks' monitors read), copy slot -> destination, mark the
//                    slot empty
//   RecvReduce       per piece: on p's receive stream as Recv, into one of p's landing buffers (after its
//                    previous reduction is done); on p's reduce stream wait for that copy, reduce kernel
//                    dst op= landing, mark the landing buffer free
//   Copy / Reduce / Scale / Divide   on the compute stream
//   DomainCollective                 the vendor call (NCCL/RCCL) on the domain stream, in list order, which
//                    is the same on every member of the domain (the vendor's rule)
// Waits and writes are constant-valued stream operations (HETCCL_GPU_OP_*): nothing the host knows about
// earlier calls is baked in, so the same work captured into a CUDA graph is right on every replay,
// interleaved in any order with eager calls and other graphs (one after the other on the device, the
// same order on every rank, as NCCL requires).
// The schedule's dependencies become events between streams (only where a step waits for a step of
// another stream, and only once per stream pair and position). Order on one stream is list order, which
// keeps each ring's pieces FIFO, identical on both ends.
// A group starts when the user's stream reaches it: the compute stream waits for it, writes the call's
// number into `started` (for the monitor) and every other stream used waits for that. It ends with the
// compute stream joining every other stream, writing the number into `finished`, for an eager (not
// captured) group also the host's eager group number into `doneFlag`, and the user's stream waiting for it.
#pragma once

#include <cstdint>
#include <vector>

#include "algo/schedule.hpp"
#include "device/base/gpu_plugin.h"
#include "domain/base/vendor_ccl.hpp"
#include "exec/pipeline/gpu_ring.hpp"

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
  void* domain = nullptr;     ///< DomainCollective steps (only with a domain communicator)
};

/// Pinned words the compute stream writes for the monitor (addresses kernels and stream operations use).
struct MonitorWords {
  uint64_t* started = nullptr;   ///< the number of the call whose group started last
  uint64_t* finished = nullptr;  ///< the number of the call whose group finished last
  uint64_t* done = nullptr;      ///< the host's number of the latest eager group done
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
  MonitorWords words;
  char* scratch = nullptr;     ///< device scratch of at least the schedule's scratchBytes
  domain::DomainComm* domain = nullptr;  ///< the vendor communicator of this rank's domain (DomainCollective)
  /// Per peer: groups queued so far that send to it / receive from it (the stamps' word1, gpu_stamp.hpp).
  std::vector<uint64_t> groupsSent, groupsReceived;
  EventPool* events = nullptr;
};

/// How one group is queued.
struct GroupInfo {
  bool captured = false;   ///< the user's stream is being captured: use the capture streams, no `done`
  uint64_t eagerSeq = 0;   ///< eager groups: written to MonitorWords::done at the end
  uint64_t callSeq = 0;    ///< the call's number among this rank's device calls (started/finished words)
  uint64_t stampWord0 = 0;  ///< gpu_stamp.hpp
};

/// The bytes of data a DomainCollective step hands the vendor library: its larger buffer (all of a
/// reduce-scatter's input, all of an all-gather's output, the whole buffer otherwise).
uint64_t domainCollectiveBytes(const algo::Step& step, int domainSize);

/// Queues `schedule` ordered on `userStream`. Throws Error(UnhandledCudaError) when the runtime refuses a
/// call; work queued before the failure may then wait forever for counters, which the caller must release
/// (see StreamExecutor).
void enqueueSchedule(const algo::Schedule& schedule, StreamResources& res, void* userStream, const GroupInfo& info);

}  // namespace hetccl::stream_exec
