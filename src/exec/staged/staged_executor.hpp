// Device execution through host staging (DevicePath, device_path.hpp): device inputs are copied into
// pinned host memory on the user's stream, a progress thread runs the group on the host executor it is
// given (exec/host/host_executor.hpp: shm/tcp/ucx transports, host reductions) and the outputs are copied
// back -- for the layouts the stream pipeline cannot serve (GPU and CPU ranks mixed, several hosts) and
// HETCCL_GPU_EXEC=staged. Slow but works for every layout; it cannot be captured into a CUDA graph.
#pragma once

#include <atomic>
#include <memory>

#include "exec/base/device_executor.hpp"
#include "exec/staged/device_path.hpp"

namespace hetccl {

class StagedExecutor final : public DeviceExecutor {
 public:
  /// Runs the staged pieces on `host` (the communicator's host executor, exec/host/host_executor.hpp, which
  /// reports its own failures; it must outlive this executor); failures outside it go to `onFailure`.
  StagedExecutor(const hetcclGpuPlugin_t& gpu, int device, int rank, int nranks, DeviceExecutor& host,
                 const std::atomic<bool>* abortFlag, FailureSink onFailure);

  /// Throws InvalidUsage, queuing nothing and not reported, for a call on a stream being captured into
  /// a graph. Any other error (the runtime refusing to queue a copy or a flag operation half-way, which
  /// may leave the stream waiting for a flag nobody writes) is reported: the communicator is failed.
  void enqueue(std::span<const algo::CollOp> ops, void* stream) override;
  void drain() override { path_->drain(); }
  /// Nothing to do: the progress thread watches the abort flag.
  void abort() noexcept override {}
  std::optional<Error> pollAsyncError() override { return std::nullopt; }
  ExecPath path() const noexcept override { return ExecPath::Staged; }
  std::string describe() const override;

 private:
  FailureSink onFailure_;
  std::unique_ptr<DevicePath> path_;
};

}  // namespace hetccl
