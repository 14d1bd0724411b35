// The latency path: small all-reduces among the GPU ranks of one host as ONE kernel per rank, on the
// user's stream, through boards in pinned shared memory (the plugin's llAllReduce; the protocol in
// src/device/gpu/ll_protocol.cuh), instead of the stream pipeline's copies and stream operations per piece.
//
// Each rank creates one board (a POSIX shm segment: a header line, then two sets of
// HETCCL_GPU_LL_HEADER_WORDS + 2 * ceil(HETCCL_GPU_LL_BYTES / 8) words), maps every peer's and registers
// them all with its GPU runtime. Kernels write only their own board and poll the others'; the host never
// touches the data. The call's sequence number lives in device memory, advanced by the kernel, so a call
// captured into a CUDA graph is right on every replay and replays interleave with eager calls.
//
// Failure: the kernel polls an abort word in pinned memory (the executor's monitor sets it after any
// failure, as it releases the ring waits); a peer whose stamp differs (another call, count, type or
// operator) is recorded in this rank's report words and ends the call on both ranks.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "algo/coll_op.hpp"
#include "bootstrap/bootstrap.hpp"
#include "device/base/gpu_plugin.h"
#include "transport/shm/shm_segment.hpp"

namespace hetccl::stream_exec {

class LlPath {
 public:
  /// The pinned words of the executor the kernel writes when it starts and ends (started / finished: the
  /// call's number; done: the eager group's number, null for a captured call).
  struct HostWords {
    uint64_t* started = nullptr;
    uint64_t* finished = nullptr;
    uint64_t* done = nullptr;
    uint64_t callNumber = 0;
    uint64_t doneValue = 0;
  };

  /// Collective over `boot`: the latency path when every rank can take it (its plugin has llAllReduce: CUDA's
  /// and HIP's do, so NVIDIA and AMD ranks of one host share it; all ranks share one host, 2..HETCCL_GPU_LL_MAX_RANKS ranks, `maxBytes` > 0: alike on every rank, since
  /// HETCCL_GPU_LL_BYTES is compared when the communicator is created) and no two ranks use one GPU (by the
  /// plugins' PCI bus ids of `device`: two processes' kernels time-slice one GPU, so a kernel polling for a
  /// peer of the same GPU waits for a time slice; the stream pipeline, whose waits are stream memory
  /// operations, keeps the GPU free for other work meanwhile), else nullptr on every rank.
  static std::unique_ptr<LlPath> create(const hetcclGpuPlugin_t& gpu, int device, bootstrap::Bootstrap& boot,
                                        uint64_t maxBytes);
  ~LlPath();
  LlPath(const LlPath&) = delete;
  LlPath& operator=(const LlPath&) = delete;

  /// Whether `ops` is one all-reduce this path runs: sum, prod, max, min or avg (not premulsum), at most
  /// maxBytes, at least one element.
  bool takes(std::span<const algo::CollOp> ops) const;
  /// Queues ops[0] on `stream` (one kernel). `stampWord0` describes the call (gpu_stamp.hpp). Throws
  /// Error(UnhandledCudaError) when the plugin refuses.
  void enqueue(const algo::CollOp& op, void* stream, uint64_t stampWord0, const HostWords& words);

  /// Makes every kernel of this path stop waiting (after a failure; permanent).
  void abort();
  /// The stamp mismatch a kernel of this rank recorded: "device collectives disagree ...", or nullopt.
  std::optional<std::string> mismatch() const;
  /// Changes whenever a rank writes a call's header (progress for the executor's monitor).
  uint64_t progressSignature() const;
  /// The last call `rank` wrote into its board: its sequence number on this path (0: none yet) and its
  /// call stamp (gpu_stamp.hpp; word 1 = that sequence number). Read by the host from the pinned board.
  struct BoardCall {
    uint32_t seq = 0;
    uint64_t stamp[4] = {};
  };
  BoardCall lastCall(int rank) const;
  uint64_t maxBytes() const { return maxBytes_; }

 private:
  LlPath(const hetcclGpuPlugin_t& gpu, int rank, int nranks, uint64_t maxBytes);
  void check(int rc, const char* what) const;

  const hetcclGpuPlugin_t& gpu_;
  const int rank_, nranks_;
  const uint64_t maxBytes_;
  uint64_t setWords_ = 0;
  std::vector<transport::shm::ShmSegment> boards_;  // indexed by rank (this rank's own included)
  std::vector<bool> registered_;
  std::vector<uint64_t*> hostBoards_, devBoards_;   // first word of set 0 of each board
  uint64_t* seq_ = nullptr;      // device memory: the last sequence number, the finished-blocks counter
  uint64_t* control_ = nullptr;  // pinned: abort word, then (own cache line) the report words
  uint64_t* devControl_ = nullptr;
};

}  // namespace hetccl::stream_exec
