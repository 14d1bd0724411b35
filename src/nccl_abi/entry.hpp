// Shared by every exported NCCL entry point of the drop-in: export attributes, the pnccl twin, and the
// translation of failures into an ncclResult_t plus a last-error message naming the NCCL function.
#pragma once

#include <type_traits>

#include "abi/guard.hpp"
#include "hetccl/hetccl.h"
#include "hetccl/nccl_abi.h"
#include "nccl_abi/vendor_reentry.hpp"

/// Definition of an exported entry point (unversioned; the linker map exports nccl* and pnccl* only).
#define HETCCL_NCCL_EXPORT extern "C" __attribute__((visibility("default")))
/// The pnccl twin of an entry point: the same function under its profiling name.
#define HETCCL_NCCL_TWIN(name) extern "C" __attribute__((visibility("default"), alias(#name))) decltype(name) p##name;

namespace hetccl::nccl_abi {

/// When `result` is a failure of hetccl's C API, renames the "hetcclX: " prefix of the last-error message
/// to "ncclX: " (`fn`), so that ncclGetLastError names the function the application called.
ncclResult_t fromHetccl(const char* fn, hetcclResult_t result) noexcept;

/// Runs an entry point's body. The body may throw hetccl::Error (result code + message "fn: what") and
/// may return a hetcclResult_t from hetccl's C API (passed through fromHetccl), or nothing.
template <typename Body>
ncclResult_t run(const char* fn, Body&& body) noexcept {
  hetcclResult_t fromApi = hetcclSuccess;
  hetcclResult_t r = abi::guarded(fn, [&] {
    if constexpr (std::is_void_v<decltype(body())>)
      body();
    else
      fromApi = body();
  });
  if (r != hetcclSuccess) return static_cast<ncclResult_t>(r);
  return fromHetccl(fn, fromApi);
}

/// hetccl's element type for an NCCL type in a call that only moves data: the same value (hetccl rejects
/// unknown ones).
hetcclDataType_t movedType(ncclDataType_t type) noexcept;
/// hetccl's element type for an NCCL type in a reduction: the same value; the fp8 types are reduced with
/// NCCL 2.28's rule (docs/DESIGN.md, "fp8 reductions").
hetcclDataType_t reducedType(ncclDataType_t type) noexcept;

}  // namespace hetccl::nccl_abi
