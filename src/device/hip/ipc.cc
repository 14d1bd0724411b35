// Device memory shared with other processes of the host (plugin v3): HIP IPC memory handles. A handle
// names a whole hipMalloc allocation, so an exported pointer travels as (handle, offset), the allocation's
// base and size from hipMemGetAddressRange. The four runtime functions are optional: without them every
// entry point fails and the caller moves device data another way.
#include <cstring>

#include "device/hip/plugin_functions.hpp"
#include "device/hip/plugin_state.hpp"

namespace hetccl::hip_plugin {
namespace {

static_assert(sizeof(api::IpcMemHandle) == HETCCL_GPU_IPC_HANDLE_BYTES);

int unavailable(const char* call) {
  return fail(HETCCL_GPU_ERR_RUNTIME, call, "this HIP runtime has no IPC memory handles (hipIpc*, hipMemGetAddressRange)");
}

bool available() {
  return rt().hipIpcGetMemHandle && rt().hipIpcOpenMemHandle && rt().hipIpcCloseMemHandle && rt().hipMemGetAddressRange;
}

}  // namespace

int ipcExport(const void* ptr, void* handle, size_t* offset, size_t* allocBytes) {
  if (!ptr || !handle || !offset || !allocBytes) return fail(HETCCL_GPU_ERR_ARGUMENT, "ipcExport", "null argument");
  if (!available()) return unavailable("ipcExport");
  void* base = nullptr;
  size_t bytes = 0;
  if (const int rc = check(rt().hipMemGetAddressRange(&base, &bytes, const_cast<void*>(ptr)), "hipMemGetAddressRange"))
    return rc;
  api::IpcMemHandle h{};
  if (const int rc = check(rt().hipIpcGetMemHandle(&h, base), "hipIpcGetMemHandle")) return rc;
  std::memcpy(handle, &h, sizeof h);
  *offset = static_cast<size_t>(static_cast<const char*>(ptr) - static_cast<const char*>(base));
  *allocBytes = bytes;
  return HETCCL_GPU_OK;
}

int ipcOpen(const void* handle, void** base, size_t* bytes) {
  if (!handle || !base || !bytes) return fail(HETCCL_GPU_ERR_ARGUMENT, "ipcOpen", "null argument");
  *base = nullptr;
  *bytes = 0;
  if (!available()) return unavailable("ipcOpen");
  api::IpcMemHandle h;
  std::memcpy(&h, handle, sizeof h);
  void* p = nullptr;
  const unsigned flags = rt().major >= 6 ? api::hipIpcMemLazyEnablePeerAccess6 : api::hipIpcMemLazyEnablePeerAccess;
  if (const int rc = check(rt().hipIpcOpenMemHandle(&p, h, flags), "hipIpcOpenMemHandle"))
    return rc;
  void* b = nullptr;
  if (const int rc = check(rt().hipMemGetAddressRange(&b, bytes, p), "hipMemGetAddressRange (of the mapping)")) {
    (void)rt().hipIpcCloseMemHandle(p);
    return rc;
  }
  *base = p;
  return HETCCL_GPU_OK;
}

int ipcClose(void* base) {
  if (!base) return fail(HETCCL_GPU_ERR_ARGUMENT, "ipcClose", "null pointer");
  if (!available()) return unavailable("ipcClose");
  return check(rt().hipIpcCloseMemHandle(base), "hipIpcCloseMemHandle");
}

}  // namespace hetccl::hip_plugin
