// Library-level entry points that need no communicator.
#include "hetccl/hetccl.h"

#include "core/result.hpp"

extern "C" {

HETCCL_API hetcclResult_t hetcclGetVersion(int* version) {
  if (!version) return hetcclInvalidArgument;
  *version = HETCCL_VERSION_CODE;
  return hetcclSuccess;
}

HETCCL_API const char* hetcclGetErrorString(hetcclResult_t result) {
  return hetccl::resultString(static_cast<hetccl::Result>(result));
}

}  // extern "C"
