// The fake's exported memory functions: device and pinned allocations, host registration, device pointers
// of mapped host memory and pointer attributes (see api.hpp, README.md). Device blocks live in memfds so that
// api_ipc.cc can share them with other processes.
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "api.hpp"
#include "api_internal.hpp"
#include "runtime.hpp"

using namespace fakehip;

namespace {

void* allocateHost(size_t bytes, size_t alignment) {
  void* p = nullptr;
  if (posix_memalign(&p, alignment, (bytes + alignment - 1) / alignment * alignment) != 0) return nullptr;
  return p;
}

/// A hipMalloc block: a memfd of whole pages mapped shared, so that another process can map the same pages
/// (hipIpcOpenMemHandle opens the fd through /proc). The fd stays open until hipFree. Mappings are
/// page-aligned (4096 and up).
void* allocateDeviceBlock(size_t bytes, int* memfd) {
  const size_t length = mappedBytes(bytes);
  const int fd = memfd_create("fakehip-device", MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  void* p = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(length)) == 0)
    p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    close(fd);
    return nullptr;
  }
  *memfd = fd;
  return p;
}

void freeDeviceBlock(const Range& r) {
  munmap(reinterpret_cast<void*>(r.base), mappedBytes(r.size));
  close(r.memfd);
}

/// FAKEHIP_UNREGISTERED_PTR=error|success overrides the version's answer for unregistered host memory.
bool unregisteredIsError() {
  if (const char* v = std::getenv("FAKEHIP_UNREGISTERED_PTR")) {
    if (std::strcmp(v, "error") == 0) return true;
    if (std::strcmp(v, "success") == 0) return false;
  }
  return config().majorVersion() < 7;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Memory.

FAKEHIP_API hipError_t hipMalloc(void** ptr, size_t size) {
  FAKEHIP_ENTER("hipMalloc", hipErrorOutOfMemory);
  if (!ptr) return ret(hipErrorInvalidValue);
  *ptr = nullptr;
  if (noDevice()) return ret(hipErrorNoDevice);
  if (captureForbids()) return ret(hipErrorStreamCaptureUnsupported);
  if (size == 0) return ret(hipSuccess);
  int memfd = -1;
  void* p = allocateDeviceBlock(size, &memfd);
  if (!p) return ret(hipErrorOutOfMemory);
  std::memset(p, 0xEE, size);  // device memory starts as garbage
  Range block{reinterpret_cast<uintptr_t>(p), size, MemKind::Device, currentDevice(), 0};
  block.memfd = memfd;
  addRange(block);
  counters().liveDeviceAllocs++;
  *ptr = p;
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipFree(void* ptr) {
  FAKEHIP_ENTER("hipFree", hipErrorInvalidValue);
  if (!ptr) return ret(hipSuccess);
  if (captureForbids()) return ret(hipErrorStreamCaptureUnsupported);
  Range r;
  // Another process's block mapped by hipIpcOpenMemHandle is released by hipIpcCloseMemHandle only.
  if (!findRange(ptr, 0, &r) || r.base != reinterpret_cast<uintptr_t>(ptr) || r.kind != MemKind::Device ||
      r.ipcMapping)
    return ret(hipErrorInvalidValue);
  synchronizeDevice(r.device);  // hipFree synchronises the device (queued work may still use the block)
  if (!removeRange(ptr, MemKind::Device)) return ret(hipErrorInvalidValue);  // a concurrent hipFree won
  counters().liveDeviceAllocs--;
  // Processes that opened the block keep its pages (their mappings hold the memfd's file); a handle made
  // before now no longer opens: the fd is closed here, and a later memfd reusing its number is another inode.
  // Real runtimes leave freeing a block that another process still maps undefined: the fake sees it (the
  // mapping's shared flock, api_ipc.cc), counts it and says so.
  if (flock(r.memfd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    counters().freedWhileMapped++;
    std::fprintf(stderr, "fake HIP: hipFree(%p) of a block that another process still maps (hipIpcOpenMemHandle "
                 "not yet closed): undefined behaviour on a real runtime\n", ptr);
  }
  freeDeviceBlock(r);
  return ret(hipSuccess);
}

static hipError_t hostMalloc(const char* name, void** ptr, size_t size, unsigned flags) {
  FAKEHIP_ENTER(name, hipErrorOutOfMemory);
  if (!ptr) return ret(hipErrorInvalidValue);
  *ptr = nullptr;
  if (noDevice()) return ret(hipErrorNoDevice);
  if (captureForbids()) return ret(hipErrorStreamCaptureUnsupported);
  constexpr unsigned known = hipHostMallocPortable | hipHostMallocMapped | hipHostMallocWriteCombined |
                             hipHostMallocNumaUser | hipHostMallocCoherent | hipHostMallocNonCoherent;
  if (flags & ~known) return ret(hipErrorInvalidValue);
  if ((flags & hipHostMallocCoherent) && (flags & hipHostMallocNonCoherent)) return ret(hipErrorInvalidValue);
  if (size == 0) return ret(hipSuccess);
  void* p = allocateHost(size, 4096);
  if (!p) return ret(hipErrorOutOfMemory);
  std::memset(p, 0, size);
  addRange(Range{reinterpret_cast<uintptr_t>(p), size, MemKind::Pinned, currentDevice(), flags});
  counters().livePinnedAllocs++;
  *ptr = p;
  return ret(hipSuccess);
}
FAKEHIP_API hipError_t hipHostMalloc(void** ptr, size_t size, unsigned flags) { return hostMalloc("hipHostMalloc", ptr, size, flags); }
FAKEHIP_API hipError_t hipHostAlloc(void** ptr, size_t size, unsigned flags) { return hostMalloc("hipHostAlloc", ptr, size, flags); }

static hipError_t hostFree(const char* name, void* ptr) {
  FAKEHIP_ENTER(name, hipErrorInvalidValue);
  if (!ptr) return ret(hipSuccess);
  if (captureForbids()) return ret(hipErrorStreamCaptureUnsupported);
  Range r;
  if (!findRange(ptr, 0, &r) || r.base != reinterpret_cast<uintptr_t>(ptr) || r.kind != MemKind::Pinned)
    return ret(hipErrorInvalidValue);
  for (int d = 0; d < deviceCount(); ++d) synchronizeDevice(d);  // pinned memory: any device may use it
  removeRange(ptr, MemKind::Pinned);
  counters().livePinnedAllocs--;
  std::free(ptr);
  return ret(hipSuccess);
}
FAKEHIP_API hipError_t hipHostFree(void* ptr) { return hostFree("hipHostFree", ptr); }
FAKEHIP_API hipError_t hipFreeHost(void* ptr) { return hostFree("hipFreeHost", ptr); }

FAKEHIP_API hipError_t hipHostRegister(void* hostPtr, size_t sizeBytes, unsigned flags) {
  FAKEHIP_ENTER("hipHostRegister", hipErrorOutOfMemory);
  if (!hostPtr || sizeBytes == 0) return ret(hipErrorInvalidValue);
  if (noDevice()) return ret(hipErrorNoDevice);
  constexpr unsigned known = hipHostRegisterPortable | hipHostRegisterMapped | hipHostRegisterIoMemory | hipHostRegisterReadOnly;
  if (flags & ~known) return ret(hipErrorInvalidValue);
  if (overlapsRange(hostPtr, sizeBytes)) return ret(hipErrorHostMemoryAlreadyRegistered);
  addRange(Range{reinterpret_cast<uintptr_t>(hostPtr), sizeBytes, MemKind::Registered, currentDevice(), flags});
  counters().liveRegistrations++;
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipHostUnregister(void* hostPtr) {
  FAKEHIP_ENTER("hipHostUnregister", hipErrorHostMemoryNotRegistered);
  if (!hostPtr) return ret(hipErrorInvalidValue);
  Range r;
  if (!findRange(hostPtr, 0, &r) || r.base != reinterpret_cast<uintptr_t>(hostPtr) || r.kind != MemKind::Registered)
    return ret(hipErrorHostMemoryNotRegistered);
  for (int d = 0; d < deviceCount(); ++d) synchronizeDevice(d);
  removeRange(hostPtr, MemKind::Registered);
  counters().liveRegistrations--;
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipHostGetDevicePointer(void** devPtr, void* hostPtr, unsigned flags) {
  FAKEHIP_ENTER("hipHostGetDevicePointer", hipErrorInvalidValue);
  if (!devPtr || !hostPtr || flags != 0) return ret(hipErrorInvalidValue);
  *devPtr = nullptr;
  Range r;
  if (!findRange(hostPtr, 0, &r) || r.kind == MemKind::Device) return ret(hipErrorInvalidValue);
  *devPtr = hostPtr;  // one address space: the device address of mapped host memory is the host address
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipPointerGetAttributes(hipPointerAttribute_t* attributes, const void* ptr) {
  FAKEHIP_ENTER("hipPointerGetAttributes", hipErrorInvalidValue);
  if (!attributes || !ptr) return ret(hipErrorInvalidValue);
  std::memset(attributes, 0, sizeof *attributes);
  const bool v5 = config().majorVersion() < 6;
  Range r;
  if (!findRange(ptr, 0, &r)) {
    attributes->device = -1;
    if (unregisteredIsError()) return ret(hipErrorInvalidValue);
    attributes->type = hipMemoryTypeUnregistered;
    return ret(hipSuccess);
  }
  attributes->device = r.device;
  attributes->devicePointer = const_cast<void*>(ptr);
  attributes->allocationFlags = r.flags;
  if (r.kind == MemKind::Device) {
    attributes->type = v5 ? int{hipMemoryTypeDevice_v5} : int{hipMemoryTypeDevice};
  } else {
    attributes->type = v5 ? int{hipMemoryTypeHost_v5} : int{hipMemoryTypeHost};
    attributes->hostPointer = const_cast<void*>(ptr);
  }
  return ret(hipSuccess);
}
