// The measuring loop of hetccl-perf for one size: fill, warm up, time, check, and combine across ranks
// (time: max over ranks; wrong elements: sum over ranks, for the printed table), all through the public
// C API. Each rank also keeps the count of wrong elements it found itself: that count, not the sum
// through hetccl, decides the rank's exit status.
// Test-only fault injection (tests/mp/verdict): with HETCCL_TEST_WRONG_RANK=R, rank R makes one element
// of its first checked result wrong and contributes 0 to the summed counts.
// With device buffers (--device cuda|hip|gpu), inputs are still made and checked on the host and copied
// with cudaMemcpy / hipMemcpy outside the timed region; the timed region is n calls issued back to back
// on ctx.stream followed by one stream synchronisation, as nccl-tests times.
#pragma once

#include <cstddef>
#include <vector>

#include "collective.hpp"
#include "gpu_runtime_api.hpp"
#include "perf_options.hpp"
#include "perf_result.hpp"

namespace hetccl::perf {

class PerfRunner {
 public:
  /// `ctx` describes this rank and the communicator; buffers for up to options.maxBytes are allocated on
  /// the host, and also on the current GPU device when `gpu` is given (then ctx.stream must be a stream
  /// of that device, and the runner synchronises it before every host-side step).
  PerfRunner(const PerfOptions& options, const Collective& collective, const RunContext& ctx,
             GpuRuntimeApi* gpu = nullptr);

  /// Measures one size (bytes of the message, rounded down as the collective's layout requires). Every
  /// rank must call it with the same size. Throws std::runtime_error when a hetccl call fails.
  SizeResult measure(size_t bytes);

 private:
  PlaceResult measurePlace(const Layout& layout, bool inPlace, size_t bytes);
  /// Calls the collective once and throws on failure.
  void runOnce(const void* send, void* recv, const Layout& layout);
  void prepare(void* send, void* recv, const Layout& layout);
  /// Device mode: copies the prepared host buffers to the device buffers (the extent `layout` uses).
  void upload(const Layout& layout, bool inPlace);
  /// Device mode: waits for ctx.stream; no-op on host buffers (their calls complete before returning).
  void waitForStream();
  double maxOverRanks(double value);
  int64_t sumOverRanks(int64_t value);

  /// HETCCL_TEST_WRONG_RANK: makes one element of `recv` wrong (once per process) and returns the new
  /// count of wrong elements, or `counted` when not injecting here.
  size_t injectWrong(unsigned char* recv, const Layout& layout, size_t counted);

  const PerfOptions& options_;
  const Collective& collective_;
  RunContext ctx_;
  std::vector<unsigned char> sendBuffer_;
  std::vector<unsigned char> recvBuffer_;
  GpuRuntimeApi* gpu_ = nullptr;  ///< null: the host buffers are the ones passed to hetccl
  DeviceMemory sendDevice_;
  DeviceMemory recvDevice_;
};

/// Throws std::runtime_error "<what> failed: <error string>: <last error>" unless result is success.
void checkResult(hetcclResult_t result, const char* what, hetcclComm_t comm);

}  // namespace hetccl::perf
