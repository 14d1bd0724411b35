#include "support/host_runtime.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/error.hpp"

namespace hetccl::device {

void* HostRuntime::alloc(size_t bytes) {
  if (bytes == 0) throw InvalidArgument("HostRuntime::alloc: size is 0");
  void* ptr = nullptr;
  const int err = posix_memalign(&ptr, 64, bytes);
  if (err != 0) throw SystemError::fromErrno(concat("HostRuntime::alloc of ", bytes, " bytes"), err);
  return ptr;
}

void HostRuntime::free(void* ptr) noexcept { std::free(ptr); }

void HostRuntime::copy(void* dst, const void* src, size_t bytes) {
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

void HostRuntime::fill(void* dst, int byteValue, size_t bytes) {
  if (bytes != 0) std::memset(dst, byteValue, bytes);
}

}  // namespace hetccl::device
