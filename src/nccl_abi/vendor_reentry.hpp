// Calls that the real NCCL/RCCL makes to its *own* public names, routed back to it.
//
// When hetccl's libnccl.so.2 is LD_PRELOADed, it comes first in the process's global symbol scope.
// The real NCCL that hetccl opens for collectives inside a domain calls some of its own exported names
// through its PLT (NCCL 2.28.9: ncclCommGetAsyncError from ncclEnqueueCheck on every collective and from
// init/finalize, ncclGetVersion while initialising, ncclBroadcast from ncclBcast, ncclMemAlloc/MemFree,
// ncclCommRegister/Deregister, window and device-API names; `objdump -d libnccl.so.2 | grep '@plt>'`).
// Those calls bind to the preloaded drop-in, with the real library's own ncclComm pointers.
// RTLD_DEEPBIND cannot prevent it when the application (PyTorch) already loaded the real library, and
// it breaks interposition the process relies on. So every exported entry point first asks
// vendorTwin() whether its caller is code of another NCCL-family library, and if so hands the call to
// that library's own definition of the same name, unchanged.
//
// A library counts as NCCL-family when it defines pncclGetVersion itself (NCCL and RCCL do; profilers
// that wrap NCCL do not). The answer per calling object is cached in a small lock-free table, so the
// check costs a few comparisons per call; the first call from a new object walks the loaded objects
// once (dl_iterate_phdr).
#pragma once

#include <atomic>

namespace hetccl::nccl_abi {

/// The NCCL-family library's own definition of `name` ("ncclX", else its twin "pncclX") when `caller` (a
/// return address) lies in such a library; nullptr when it does not (the normal case: the application
/// called us).
/// `slot` caches the answer for the first vendor library seen (one per entry point). Thread-safe.
void* vendorTwin(const void* caller, const char* name, std::atomic<void*>& slot) noexcept;

}  // namespace hetccl::nccl_abi

/// First statement of every exported entry point `name` with arguments `...`: a call from inside another
/// NCCL-family library goes to that library's own `name`.
#define HETCCL_NCCL_ROUTE_VENDOR(name, ...)                                                          \
  do {                                                                                               \
    static std::atomic<void*> twinSlot_{nullptr};                                                    \
    if (void* twin_ = ::hetccl::nccl_abi::vendorTwin(__builtin_return_address(0), #name, twinSlot_)) \
      return reinterpret_cast<decltype(&name)>(twin_)(__VA_ARGS__);                                  \
  } while (0)
