// Result codes. The numeric values are NCCL's (ncclResult_t), so the C ABI can return them unchanged.
#pragma once

namespace hetccl {

enum class Result : int {
  Success = 0,
  UnhandledCudaError = 1,
  SystemError = 2,
  InternalError = 3,
  InvalidArgument = 4,
  InvalidUsage = 5,
  RemoteError = 6,
  InProgress = 7,
};

/// Short fixed description of a result code (what ncclGetErrorString prints).
const char* resultString(Result r) noexcept;

}  // namespace hetccl
