// The fake's exported IPC memory functions: a handle to a hipMalloc block, opened by another process of the
// same machine (the block is a memfd, api_memory.cc, which the opener reopens through /proc/<pid>/fd), and
// the address range query that gives the block around an address (see api.hpp, README.md).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>

#include "api.hpp"
#include "api_internal.hpp"
#include "ipc_handle.hpp"
#include "runtime.hpp"

using namespace fakehip;

namespace {

/// The flags value hipIpcOpenMemHandle requires: hipIpcMemLazyEnablePeerAccess of the runtime's own headers
/// (6.x+ refuses anything else; 5.x headers define it as 0).
unsigned lazyEnablePeerAccess() {
  return config().majorVersion() < 6 ? hipIpcMemLazyEnablePeerAccess_v5 : hipIpcMemLazyEnablePeerAccess;
}

/// Maps the exporter's block that `h` names, or nullptr when the handle is stale: the process is gone, the
/// fd is closed (hipFree), or its number now names another file (a later allocation reused it). On success
/// *heldFd is this process's descriptor of the block, holding a shared flock (see Range::ipcFd).
void* mapExportedBlock(const IpcHandlePayload& h, int* heldFd) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%lld/fd/%lld", static_cast<long long>(h.pid), static_cast<long long>(h.fd));
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st{};
  void* p = MAP_FAILED;
  if (fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_ino) == h.inode && static_cast<uint64_t>(st.st_dev) == h.dev &&
      static_cast<uint64_t>(st.st_size) == mappedBytes(h.size))
    p = mmap(nullptr, mappedBytes(h.size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  // The mapping keeps the file (and so the block's pages, even after the exporter's hipFree); the
  // descriptor stays open with its lock so that such a hipFree is seen (counted: freedWhileMapped).
  if (p == MAP_FAILED || flock(fd, LOCK_SH) != 0) {
    if (p != MAP_FAILED) munmap(p, mappedBytes(h.size));
    close(fd);
    return nullptr;
  }
  *heldFd = fd;
  return p;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// IPC memory handles and address ranges.

FAKEHIP_API hipError_t hipIpcGetMemHandle(hipIpcMemHandle_t* handle, void* devPtr) {
  FAKEHIP_ENTER("hipIpcGetMemHandle", hipErrorInvalidDevicePointer);
  if (!handle || !devPtr) return ret(hipErrorInvalidValue);
  if (noDevice()) return ret(hipErrorNoDevice);
  // Only the base of this process's own hipMalloc block: ROCm would also take an interior pointer (the
  // handle then carries the offset), CUDA maps the whole block whatever the pointer; the plugin exports bases.
  Range r;
  if (!findRange(devPtr, 0, &r) || r.base != reinterpret_cast<uintptr_t>(devPtr) || r.memfd < 0)
    return ret(hipErrorInvalidDevicePointer);
  struct stat st{};
  if (fstat(r.memfd, &st) != 0) return ret(hipErrorInvalidDevicePointer);
  IpcHandlePayload h{};
  h.magic = IpcHandlePayload::kMagic;
  h.pid = getpid();
  h.fd = r.memfd;
  h.inode = static_cast<uint64_t>(st.st_ino);
  h.dev = static_cast<uint64_t>(st.st_dev);
  h.size = r.size;
  *handle = makeIpcHandle(h);
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipIpcOpenMemHandle(void** devPtr, hipIpcMemHandle_t handle, unsigned int flags) {
  FAKEHIP_ENTER("hipIpcOpenMemHandle", hipErrorInvalidDevicePointer);
  if (!devPtr) return ret(hipErrorInvalidValue);
  *devPtr = nullptr;
  if (noDevice()) return ret(hipErrorNoDevice);
  if (flags != lazyEnablePeerAccess()) return ret(hipErrorInvalidValue);
  const IpcHandlePayload h = readIpcHandle(handle);
  if (h.magic != IpcHandlePayload::kMagic || h.size == 0 || h.pid <= 0 || h.fd < 0) return ret(hipErrorInvalidValue);
  // Real runtimes refuse a handle of the calling process (ROCm's IPC events and CUDA: an invalid context).
  if (h.pid == getpid()) return ret(hipErrorInvalidContext);
  int heldFd = -1;
  void* p = mapExportedBlock(h, &heldFd);
  if (!p) return ret(hipErrorInvalidDevicePointer);  // ROCm's answer when the attach fails
  // Each open is a mapping of its own (a new address), device memory of the calling thread's device.
  Range mapping{reinterpret_cast<uintptr_t>(p), static_cast<size_t>(h.size), MemKind::Device, currentDevice(), 0};
  mapping.ipcMapping = true;
  mapping.ipcFd = heldFd;
  addRange(mapping);
  counters().liveIpcMappings++;
  *devPtr = p;
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipIpcCloseMemHandle(void* devPtr) {
  FAKEHIP_ENTER("hipIpcCloseMemHandle", hipErrorInvalidHandle);
  if (!devPtr) return ret(hipErrorInvalidValue);
  Range r;
  if (!findRange(devPtr, 0, &r) || r.base != reinterpret_cast<uintptr_t>(devPtr) || !r.ipcMapping)
    return ret(hipErrorInvalidHandle);  // ROCm: the detach finds no IPC memory there
  synchronizeDevice(r.device);          // as hipFree: queued work may still use the mapping
  if (!removeRange(devPtr, MemKind::Device)) return ret(hipErrorInvalidHandle);  // a concurrent close won
  counters().liveIpcMappings--;
  munmap(devPtr, mappedBytes(r.size));
  close(r.ipcFd);
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipMemGetAddressRange(void** pbase, size_t* psize, void* dptr) {
  FAKEHIP_ENTER("hipMemGetAddressRange", hipErrorNotFound);
  // Any tracked block, as ROCm's lookup finds every memory object: device blocks, IPC mappings, pinned and
  // registered host memory. ROCm writes both outputs unconditionally; the fake, like CUDA, lets either be null.
  Range r;
  if (!dptr || !findRange(dptr, 0, &r)) return ret(hipErrorNotFound);
  if (pbase) *pbase = reinterpret_cast<void*>(r.base);
  if (psize) *psize = r.size;
  return ret(hipSuccess);
}
