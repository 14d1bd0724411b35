// Device collectives between GPU ranks, run entirely by GPU streams (see stream_program.hpp):
// device -> pinned shared-memory ring -> device on copy engines, chunk after chunk, every peer's two
// directions at once, reductions in kernels. A ring to a peer on another host is a pair of private rings
// that a proxy thread mirrors over the network (net_ring_proxy.hpp): the streams cannot tell. enqueue() plans the group, queues it on this executor's
// streams ordered after the user's stream, and returns; the user's stream waits for the result.
//
// A call made while the user's stream is being captured into a CUDA graph is queued on a second set of
// streams (which only join the capture) and is right on every replay (stream_program.hpp); replays may
// interleave with eager calls and other graphs as long as this rank's calls run one after the other on
// the device (ordered through the user's streams), the same order on every rank.
//
// A monitor thread (which makes no GPU runtime call, so it can never deadlock behind a synchronising
// call elsewhere in the process) polls pinned words the streams write: the eager groups' done flag, the
// numbers of the calls whose groups started and finished last (graph replays happen behind the host's
// back), the ring slots (progress) and the rings' stamp-mismatch reports. When a peer dies (the bootstrap notices),
// the communicator is aborted, a receiver found a piece whose call stamp differs from what it expected
// (reported on both ranks, naming both stamps), or a group on the device (or an eager group not yet
// reached) makes no progress for HETCCL_TIMEOUT, it reports the failure and releases every stream of this
// rank (it sets the ring slots its streams wait for, again and again while anything runs), so the user's
// stream never hangs; the outputs of the released groups are then undefined and the communicator is
// unusable (the error is sticky; later graph replays run through).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "algo/coll_op.hpp"
#include "algo/plan_cache.hpp"
#include "algo/topology.hpp"
#include "algo/tuning.hpp"
#include "bootstrap/bootstrap.hpp"
#include "device/base/gpu_plugin.h"
#include "domain/base/vendor_ccl.hpp"
#include "transport/base/links.hpp"
#include "exec/pipeline/gpu_ring.hpp"
#include "exec/pipeline/ll_path.hpp"
#include "exec/pipeline/net_ring_proxy.hpp"
#include "exec/pipeline/stream_program.hpp"

namespace hetccl::stream_exec {

class StreamExecutor {
 public:
  /// Told about a failure once (the communicator makes it sticky).
  using FailureSink = std::function<void(const std::exception&)>;
  /// Throws the peer failure the bootstrap noticed, if any.
  using FailureCheck = std::function<void()>;

  /// Collective over `boot` (every rank a GPU rank): creates the rings, streams and
  /// landing buffers on `device`. `domainComm`, when given, is the vendor communicator of this rank's
  /// domain (over topology.membersOf(its domain), in that order; every rank must pass one or none): groups
  /// are then planned hierarchically, intra-domain phases run by the vendor library on a stream of their
  /// own (algo::StepKind::DomainCollective) and only the cross-domain share crosses the rings. It must
  /// outlive this executor. `netLinks` connects this rank to every peer on another host (required when
  /// there is one; the executor's ring proxy is their only user): rings to such peers are mirrored over
  /// it by a NetRingProxy (net_ring_proxy.hpp). It must outlive this executor.
  StreamExecutor(const hetcclGpuPlugin_t& gpu, int device, bootstrap::Bootstrap& boot, algo::Topology topology,
                 FailureSink onFailure, FailureCheck checkFailure, const std::atomic<bool>* abortFlag,
                 domain::DomainComm* domainComm = nullptr, transport::Links* netLinks = nullptr);
  /// Waits for queued groups (up to HETCCL_TIMEOUT; releases them after a failure), then frees everything.
  ~StreamExecutor();
  StreamExecutor(const StreamExecutor&) = delete;
  StreamExecutor& operator=(const StreamExecutor&) = delete;

  /// Plans and queues a group of device-buffer operations on `stream` (nullptr: the default stream), or
  /// adds it to the graph being captured on `stream`. One small all-reduce goes by the latency path
  /// (ll_path.hpp) when this executor has one: one kernel on `stream` itself. Returns once queued. Throws InvalidArgument for a
  /// group the planner rejects and InvalidUsage for a second capture while one is open (nothing queued),
  /// Error(UnhandledCudaError) when the runtime refuses a call (the executor is then failed).
  void enqueue(std::span<const algo::CollOp> ops, void* stream);
  /// Waits until every queued eager group is done (or released after a failure); TimeoutError after
  /// HETCCL_TIMEOUT without progress. Graph replays are the application's to wait for.
  void drain();
  /// Whether small all-reduces take the latency path (ll_path.hpp), and up to how many bytes (0: never).
  uint64_t latencyPathBytes() const { return ll_ ? ll_->maxBytes() : 0; }
  /// The latency path's limit the configuration asks for: HETCCL_GPU_LL_BYTES, 0 while HETCCL_ALGO forces
  /// an algorithm.
  static uint64_t latencyPathBytesFromConfig();
  /// "stream pipeline (...)", for logs and hetccl-info.
  static const char* describe();
  /// The tuning every executor plans with: the process configuration with HETCCL_GPU_CHUNK_BYTES (rounded
  /// up to 64 bytes: the ring slot), HETCCL_GPU_MIN_CHUNK_BYTES and HETCCL_GPU_PAIR_EXCHANGE_BYTES, and
  /// when the communicator's ranks span several hosts (alike on every rank) HETCCL_HIER_NET_MIN_CHUNK_BYTES
  /// as the hierarchical algorithms' smallest chunk (hetccl-info shows the plans made with it).
  static algo::Tuning tuningFromConfig(bool severalHosts);

  /// Bytes the eager groups queued so far moved, by path (tests and the INFO log).
  struct Traffic {
    std::vector<uint64_t> ringSent, ringReceived;  ///< per peer, through the pinned rings
    /// Per peer on another host: the bytes of those ring pieces the ring proxy put on the network and took
    /// off it (counted as they move, not planned; 0 for peers of this host).
    std::vector<uint64_t> netSent, netReceived;
    uint64_t domainCollectiveBytes = 0;  ///< data buffers handed to the vendor library (see the .cc)
    uint64_t domainCollectives = 0;      ///< vendor calls
    uint64_t latencyPathCalls = 0;       ///< eager and captured calls queued by the latency path
  };
  Traffic traffic() const;

 private:
  void monitor();
  /// Throws what the monitor finds wrong: a stamp mismatch report; while `busy` (a group queued or on
  /// the device) also a peer failure or an abort.
  void checkHealth(bool busy);
  /// A receiving stream of this rank stalled on a full slot whose token is not the one it expects (the
  /// same on two polls in a row, so an expect word being rewritten is not mistaken for one): writes the
  /// ring's report (both calls' stamps, from the rings' group logs), which checkHealth then throws on both
  /// ranks.
  void findStampMismatch();
  /// The stamp behind `token` on `ring` as the end that queued it logged it (unloggedStamp's words when no
  /// longer logged).
  static void stampOf(const GpuRing& ring, GroupLog log, uint64_t token, uint64_t words[4]);
  void releaseStreams();  // sets every ring slot this rank's streams may wait for
  void reportFailure(const std::exception& e);
  void ensureScratch(size_t bytes, bool captured);
  /// Queues ops[0] by the latency path (the caller checked ll_->takes(ops)).
  void enqueueLatencyPath(const algo::CollOp& op, void* stream, bool captured, uint64_t stampWord0);
  /// At a no-progress timeout: when one call went to the latency path on one rank and to the stream
  /// pipeline on a peer (their counts straddle HETCCL_GPU_LL_BYTES; read from the boards and the rings'
  /// expect words), records both calls in the ring's mismatch report, which both ranks' monitors report
  /// ("device collectives disagree ..."), and returns true; false otherwise (the plain timeout stands).
  bool recordPathDisagreement() const;
  /// Books a call queued by either path: a captured group, or the eager group `eagerSeq` now awaited.
  void recordQueued(bool captured, uint64_t eagerSeq, bool latencyPath);
  void createStreams(StreamSet& set);
  void check(int rc, const char* what) const;
  void logTraffic() const;
  /// Pinned words of `control_` (see the .cc).
  uint64_t* controlWord(int index) const { return control_ + 8 * index; }

  const hetcclGpuPlugin_t& gpu_;
  const int device_;
  algo::Topology topology_;  // domainCollectives set when a domain communicator is given
  algo::Tuning tuning_;
  FailureSink onFailure_;
  FailureCheck checkFailure_;
  const std::atomic<bool>* abortFlag_;
  std::unique_ptr<algo::PlanCache> plans_;  // schedules of recent groups (calling thread only)
  GpuRingSet rings_;
  std::unique_ptr<NetRingProxy> proxy_;  // rings to peers on other hosts (none: nothing to mirror)
  std::unique_ptr<LlPath> ll_;           // small all-reduces among the ranks of one host (none: not usable)
  StreamResources res_;
  EventPool events_;
  size_t scratchBytes_ = 0;
  bool scratchCaptured_ = false;    // a captured graph uses the current scratch: never free it before the end
  std::vector<void*> retiredScratch_;  // scratch areas captured graphs may still use (freed at destruction)
  uint64_t* control_ = nullptr;     // pinned: done flag, started, finished (own cache lines)
  std::vector<uint64_t> sentBytes_, receivedBytes_;  // per peer, eager calls (INFO log)
  uint64_t domainBytes_ = 0, domainCalls_ = 0;        // eager DomainCollective steps
  int domainSize_ = 1;                                // ranks in this rank's domain
  uint64_t capturedGroups_ = 0;
  uint64_t latencyCalls_ = 0;  // calls queued by the latency path
  uint64_t callSeq_ = 0;  // device calls queued (eager and captured): the stamps' sequence number

  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t nextSeq_ = 0, doneSeq_ = 0;
  bool failed_ = false, stopping_ = false;
  std::thread thread_;
  std::thread vendorAbort_;  // aborts the domain's vendor communicator after a failure (see reportFailure)
  // Monitor state (monitor thread only).
  uint64_t progressSignature_ = 0;
  /// Host time spent in enqueue (logged with the traffic: what a call costs the calling thread).
  class HostTimer {
   public:
    explicit HostTimer(StreamExecutor& owner) : owner_(owner), start_(std::chrono::steady_clock::now()) {}
    ~HostTimer();
    HostTimer(const HostTimer&) = delete;
    HostTimer& operator=(const HostTimer&) = delete;

   private:
    StreamExecutor& owner_;
    std::chrono::steady_clock::time_point start_;
  };
  uint64_t hostCalls_ = 0, hostNs_ = 0, hostMaxNs_ = 0;  // guarded by mu_
  std::vector<std::array<uint64_t, 2>> suspect_;  // per peer: the token expected and the token found (0: none)
};

}  // namespace hetccl::stream_exec
