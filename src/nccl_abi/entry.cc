#include "nccl_abi/entry.hpp"

#include <cstring>
#include <string>

namespace hetccl::nccl_abi {

ncclResult_t fromHetccl(const char* fn, hetcclResult_t result) noexcept {
  if (result == hetcclSuccess || result == hetcclInProgress) return static_cast<ncclResult_t>(result);
  try {
    std::string message = abi::lastError();
    if (message.rfind("hetccl", 0) == 0) {
      const size_t colon = message.find(": ");
      message = std::string(fn) + (colon == std::string::npos ? ": " + message : message.substr(colon));
      abi::setLastError(message);
    }
  } catch (...) {  // out of memory while renaming: keep hetccl's message
  }
  return static_cast<ncclResult_t>(result);
}

// NCCL's and hetccl's element types share their values, fp8 included, so types pass through unchanged.
static_assert(static_cast<int>(ncclBfloat16) == static_cast<int>(hetcclBfloat16) &&
              static_cast<int>(ncclFloat8e4m3) == static_cast<int>(hetcclFloat8e4m3) &&
              static_cast<int>(ncclFloat8e5m2) == static_cast<int>(hetcclFloat8e5m2) &&
              static_cast<int>(ncclNumTypes) == static_cast<int>(hetcclNumTypes));

hetcclDataType_t movedType(ncclDataType_t type) noexcept { return static_cast<hetcclDataType_t>(type); }

hetcclDataType_t reducedType(ncclDataType_t type) noexcept { return static_cast<hetcclDataType_t>(type); }

}  // namespace hetccl::nccl_abi
