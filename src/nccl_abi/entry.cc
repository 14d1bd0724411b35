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

hetcclDataType_t movedType(ncclDataType_t type) noexcept {
  if (type == ncclFloat8e4m3 || type == ncclFloat8e5m2) return hetcclUint8;
  return static_cast<hetcclDataType_t>(type);
}

hetcclDataType_t reducedType(ncclDataType_t type) {
  if (type == ncclFloat8e4m3 || type == ncclFloat8e5m2)
    throw InvalidUsage(concat("fp8 reductions (", type == ncclFloat8e4m3 ? "ncclFloat8e4m3" : "ncclFloat8e5m2",
                              ") are not supported by hetccl; fp8 data can only be moved"));
  return static_cast<hetcclDataType_t>(type);
}

}  // namespace hetccl::nccl_abi
