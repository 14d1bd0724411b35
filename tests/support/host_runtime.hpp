// Test double: a device::Runtime over ordinary host memory through the C library (the tests' stand-in for
// a device, and the host entry of tests/support/runtime_registry.hpp).
#pragma once

#include "device/base/runtime.hpp"

namespace hetccl::device {

/// Runtime over host memory. alloc() returns 64-byte-aligned memory (cache line; enough for SIMD).
class HostRuntime final : public Runtime {
 public:
  MemoryKind kind() const noexcept override { return MemoryKind::Host; }
  const char* name() const noexcept override { return "host"; }
  void* alloc(size_t bytes) override;
  void free(void* ptr) noexcept override;
  void copy(void* dst, const void* src, size_t bytes) override;
  void fill(void* dst, int byteValue, size_t bytes) override;
  /// Always false: host memory is whatever no device runtime claims.
  bool owns(const void* ptr) const noexcept override { return false; }
};

}  // namespace hetccl::device
