#include "exec/staged/staged_executor.hpp"

#include <vector>

namespace hetccl {

StagedExecutor::StagedExecutor(const hetcclGpuPlugin_t& gpu, int device, int rank, int nranks, DeviceExecutor& host,
                               const std::atomic<bool>* abortFlag, FailureSink onFailure)
    : onFailure_(std::move(onFailure)),
      path_(std::make_unique<DevicePath>(
          gpu, device, rank, nranks,
          [&host](std::span<const algo::CollOp> staged) { host.enqueue(staged, nullptr); },
          [this](const std::exception& e) { reportToSink(onFailure_, e); }, abortFlag)) {}

void StagedExecutor::enqueue(std::span<const algo::CollOp> ops, void* stream) {
  try {
    path_->enqueue(std::vector<algo::CollOp>(ops.begin(), ops.end()), stream);
  } catch (const InvalidUsage&) {
    throw;  // a capture refused: nothing queued
  } catch (const Error& e) {
    onFailure_(e);
    throw;
  }
}

std::string StagedExecutor::describe() const {
  return "host staging (pinned host memory, host engine; " + path_->describe() + ")";
}

}  // namespace hetccl
