// Device memory shared with other processes of the host (plugin v3): CUDA IPC memory handles. A handle
// names a whole cudaMalloc allocation, so an exported pointer travels as (handle, offset); the allocation's
// base and size come from the driver (cuMemGetAddressRange), as the runtime API has no such query.
// Memory-pool and virtual-memory allocations refuse cudaIpcGetMemHandle: the caller moves their data
// another way.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstring>

#include "device/cuda/driver_entry.hpp"
#include "device/cuda/plugin_functions.hpp"
#include "device/cuda/plugin_state.hpp"

namespace hetccl::cuda_plugin {

static_assert(sizeof(cudaIpcMemHandle_t) == HETCCL_GPU_IPC_HANDLE_BYTES);

int ipcExport(const void* ptr, void* handle, size_t* offset, size_t* allocBytes) {
  if (!ptr || !handle || !offset || !allocBytes) return fail(HETCCL_GPU_ERR_ARGUMENT, "ipcExport", "null argument");
  void* base = nullptr;
  size_t bytes = 0;
  if (const int rc = allocationRange(ptr, &base, &bytes)) return rc;
  cudaIpcMemHandle_t h{};
  if (const int rc = check(cudaIpcGetMemHandle(&h, base), "cudaIpcGetMemHandle")) return rc;
  std::memcpy(handle, &h, sizeof h);
  *offset = static_cast<size_t>(static_cast<const char*>(ptr) - static_cast<const char*>(base));
  *allocBytes = bytes;
  return HETCCL_GPU_OK;
}

int ipcOpen(const void* handle, void** base, size_t* bytes) {
  if (!handle || !base || !bytes) return fail(HETCCL_GPU_ERR_ARGUMENT, "ipcOpen", "null argument");
  *base = nullptr;
  *bytes = 0;
  cudaIpcMemHandle_t h;
  std::memcpy(&h, handle, sizeof h);
  void* p = nullptr;
  if (const int rc = check(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle"))
    return rc;
  void* b = nullptr;
  if (const int rc = allocationRange(p, &b, bytes)) {
    (void)cudaIpcCloseMemHandle(p);
    return rc;
  }
  *base = p;
  return HETCCL_GPU_OK;
}

int ipcClose(void* base) {
  if (!base) return fail(HETCCL_GPU_ERR_ARGUMENT, "ipcClose", "null pointer");
  return check(cudaIpcCloseMemHandle(base), "cudaIpcCloseMemHandle");
}

}  // namespace hetccl::cuda_plugin
