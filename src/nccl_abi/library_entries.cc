// Entry points that need no collective: version, error strings, device memory (ncclMemAlloc/Free through
// hetccl's GPU plugin) and buffer registration (accepted and remembered; hetccl needs none).
#include <cstdio>

#include "core/config.hpp"
#include "device/loader.hpp"
#include "nccl_abi/comm_handle.hpp"
#include "nccl_abi/entry.hpp"

using hetccl::nccl_abi::run;

namespace {

/// HETCCL_NCCL_VERSION as a version code: "2.28.9" -> 22809, "22809" -> 22809.
int reportedVersion() {
  const std::string text = hetccl::config().str("HETCCL_NCCL_VERSION");
  int major = 0, minor = 0, patch = 0, code = 0, used = 0;
  if (std::sscanf(text.c_str(), "%d.%d.%d%n", &major, &minor, &patch, &used) == 3 &&
      used == static_cast<int>(text.size()) && major >= 2 && minor >= 0 && minor < 100 && patch >= 0 && patch < 100)
    return NCCL_VERSION(major, minor, patch);
  if (std::sscanf(text.c_str(), "%d%n", &code, &used) == 1 && used == static_cast<int>(text.size()) && code >= 2000)
    return code;
  throw hetccl::InvalidArgument(
      hetccl::concat("HETCCL_NCCL_VERSION='", text, "' is not a version (X.Y.Z with X >= 2, or a code such as 22809)"));
}

/// The process's GPU plugin for device memory, or InvalidUsage saying why there is none.
const hetcclGpuPlugin_t& gpu(const char* fn) {
  const hetccl::device::GpuChoice choice = hetccl::device::chooseGpu();
  if (!choice.plugin) throw hetccl::InvalidUsage(hetccl::concat("no GPU in this process for ", fn, ": ", choice.reason));
  return *choice.plugin;
}

}  // namespace

HETCCL_NCCL_EXPORT ncclResult_t ncclGetVersion(int* version) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclGetVersion, version);
  return run("ncclGetVersion", [&] {
    if (!version) throw hetccl::InvalidArgument("version is NULL");
    *version = reportedVersion();
  });
}
HETCCL_NCCL_TWIN(ncclGetVersion)

HETCCL_NCCL_EXPORT const char* ncclGetErrorString(ncclResult_t result) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclGetErrorString, result);
  return hetcclGetErrorString(static_cast<hetcclResult_t>(result));
}
HETCCL_NCCL_TWIN(ncclGetErrorString)

// This thread's last failure; else the failure of the communicator's background operation, else
// hetccl's asynchronous error message of the communicator.
HETCCL_NCCL_EXPORT const char* ncclGetLastError(ncclComm_t comm) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclGetLastError, comm);
  const char* tls = hetccl::abi::lastError();
  if (*tls || !comm || comm->magic.load() != ncclComm::kLive) return tls;
  try {
    if (comm->failure.load() != 0) {
      hetccl::abi::setLastError(hetccl::nccl_abi::failureMessage(comm));
      return hetccl::abi::lastError();
    }
  } catch (...) {
    return tls;
  }
  hetcclComm_t inner = comm->inner.load();
  return inner ? hetcclGetLastError(inner) : tls;
}
HETCCL_NCCL_TWIN(ncclGetLastError)

// hetccl reads its configuration once per process; there is no logging state to reset.
HETCCL_NCCL_EXPORT void ncclResetDebugInit() { HETCCL_NCCL_ROUTE_VENDOR(ncclResetDebugInit); }
HETCCL_NCCL_TWIN(ncclResetDebugInit)

HETCCL_NCCL_EXPORT ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclMemAlloc, ptr, size);
  return run("ncclMemAlloc", [&] {
    if (!ptr || size == 0)
      throw hetccl::InvalidArgument(hetccl::concat("invalid arguments: ptr ", ptr ? "set" : "NULL", ", size ", size));
    const hetcclGpuPlugin_t& g = gpu("ncclMemAlloc");
    if (g.allocDevice(ptr, size) != HETCCL_GPU_OK)
      throw hetccl::Error(hetccl::Result::UnhandledCudaError,
                          hetccl::concat("cannot allocate ", size, " bytes: ", g.lastError()));
  });
}
HETCCL_NCCL_TWIN(ncclMemAlloc)

HETCCL_NCCL_EXPORT ncclResult_t ncclMemFree(void* ptr) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclMemFree, ptr);
  if (!ptr) return ncclSuccess;
  return run("ncclMemFree", [&] {
    const hetcclGpuPlugin_t& g = gpu("ncclMemFree");
    if (g.freeDevice(ptr) != HETCCL_GPU_OK)
      throw hetccl::Error(hetccl::Result::UnhandledCudaError, hetccl::concat("cannot free ", ptr, ": ", g.lastError()));
  });
}
HETCCL_NCCL_TWIN(ncclMemFree)

// Registration is a hint for NCCL's zero-copy paths; hetccl needs none. The handle is checked on
// deregistration and freed with the communicator.
HETCCL_NCCL_EXPORT ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclCommRegister, comm, buff, size, handle);
  return run("ncclCommRegister", [&] {
    hetccl::nccl_abi::ready(comm);
    if (!handle) throw hetccl::InvalidArgument("handle is NULL");
    if (!buff && size > 0) throw hetccl::InvalidArgument(hetccl::concat("buff is NULL but size is ", size));
    auto* r = new hetccl::nccl_abi::RegisteredBuffer{buff, size};
    std::lock_guard<std::mutex> lock(comm->mu);
    comm->registrations.insert(r);
    *handle = r;
  });
}
HETCCL_NCCL_TWIN(ncclCommRegister)

HETCCL_NCCL_EXPORT ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclCommDeregister, comm, handle);
  return run("ncclCommDeregister", [&] {
    hetccl::nccl_abi::checkLive(comm);
    auto* r = static_cast<hetccl::nccl_abi::RegisteredBuffer*>(handle);
    std::lock_guard<std::mutex> lock(comm->mu);
    if (comm->registrations.erase(r) == 0)
      throw hetccl::InvalidArgument("handle was not returned by ncclCommRegister on this communicator");
    delete r;
  });
}
HETCCL_NCCL_TWIN(ncclCommDeregister)
