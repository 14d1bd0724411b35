// A stream of one's own and a set of events for device copies queued ahead of their use: the window paths
// (the RMA's window_path.cc, the agents' payload.cc) queue the copies of several chunks at once and
// publish or release each chunk when its event is reached, instead of synchronising every chunk. Created
// at the first device copy on the thread that uses it; destroying it first waits for what is still queued
// (nothing may copy into a window or a buffer that is going away).
#pragma once

#include <cstddef>
#include <vector>

#include "device/gpu_runtime.hpp"

namespace hetccl::rma {

class CopyEngine {
 public:
  explicit CopyEngine(device::GpuRuntime* gpu) : gpu_(gpu) {}
  ~CopyEngine();
  CopyEngine(const CopyEngine&) = delete;
  CopyEngine& operator=(const CopyEngine&) = delete;
  device::GpuRuntime* gpu() const { return gpu_; }
  void* stream();
  /// Event `i` (created on first use).
  void* event(size_t i);
  /// Waits for every copy queued on the stream; a runtime failure is swallowed (nothing more can be
  /// waited for).
  void drain() noexcept;

 private:
  device::GpuRuntime* gpu_;
  void* stream_ = nullptr;
  std::vector<void*> events_;
};

}  // namespace hetccl::rma
