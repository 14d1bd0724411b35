// Local (on-rank) data operations the engine needs for copy / reduce / scale / divide steps and for
// recv-and-reduce. The host implementation uses src/device/host's kernels; a GPU implementation (device
// runtime + its kernels, on the engine's streams) plugs in here later.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/types.hpp"
#include "device/host/reduce.hpp"

namespace hetccl::engine {

class LocalOps {
 public:
  virtual ~LocalOps() = default;
  /// dst = src, `bytes` bytes (ranges may overlap).
  virtual void copy(void* dst, const void* src, size_t bytes) const = 0;
  /// Accumulate function (dst op= src) of (type, op), callable from the transport's progress (host
  /// memory). Returns nullptr for an invalid pair.
  virtual device::ReduceFn reduceFn(DataType type, RedOpKind op) const = 0;
  /// dst = src * scalar (one element of `type`); dst may equal src.
  virtual void scale(void* dst, const void* src, size_t count, DataType type, const void* scalar) const = 0;
  /// buf /= n.
  virtual void divide(void* buf, size_t count, DataType type, uint64_t n) const = 0;
};

/// Host memory operations (memmove + src/device/host/reduce.hpp). A process-wide immutable instance.
const LocalOps& hostLocalOps();

}  // namespace hetccl::engine
