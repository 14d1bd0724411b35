// Test double: the device runtimes of a test process by memory kind (the host runtime always), and the
// kind of a pointer through them. The product asks its GpuRuntime directly (src/device/gpu_runtime.hpp).
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "device/base/runtime.hpp"

namespace hetccl::device {

/// The runtimes available in a test: the host runtime always, device runtimes once added.
/// Registration takes a lock; lookups are lock-free.
class RuntimeRegistry {
 public:
  /// A registry holding only the host runtime.
  RuntimeRegistry();
  ~RuntimeRegistry();
  RuntimeRegistry(const RuntimeRegistry&) = delete;
  RuntimeRegistry& operator=(const RuntimeRegistry&) = delete;

  /// Adds a device runtime (kept for the registry's lifetime). Throws InvalidUsage when one of the same
  /// kind is already registered, InvalidArgument for nullptr.
  void add(std::unique_ptr<Runtime> runtime);
  /// The runtime of `kind`, or nullptr when none is loaded.
  Runtime* find(MemoryKind kind) const noexcept;
  /// The runtime of `kind`; throws InvalidUsage naming the kind when none is loaded.
  Runtime& get(MemoryKind kind) const;
  /// Kind of the memory `ptr` points to: the first device runtime that owns it, else Host.
  MemoryKind kindOf(const void* ptr) const noexcept;

 private:
  std::array<std::atomic<Runtime*>, kNumMemoryKinds> byKind_{};
  std::vector<std::unique_ptr<Runtime>> owned_;
  std::mutex addMutex_;
};

/// The test process's registry (created on first use, holding the host runtime).
RuntimeRegistry& runtimes();

}  // namespace hetccl::device
