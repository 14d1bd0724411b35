// Translation of a vendor result code into hetccl's typed exceptions, once, by an explicit table (the
// codes happen to share values; the adaptor does not rely on it).
#pragma once

#include <string>

#include "domain/nccl/nccl_abi.hpp"

namespace hetccl::domain::nccl {

/// "ncclInvalidArgument", ... ("ncclResult 42" outside the enum).
std::string resultName(abi::ncclResult_t result);

/// Throws for a failed vendor call. `message` already says which call failed and why.
///   ncclInvalidArgument -> InvalidArgument     ncclInvalidUsage -> InvalidUsage
///   ncclSystemError     -> SystemError         ncclInternalError -> InternalError
///   ncclRemoteError     -> PeerError (peer -1: the vendor does not say which)
///   ncclUnhandledCudaError, ncclInProgress (non-blocking use, unsupported) and unknown codes -> Error
///   with Result::UnhandledCudaError / InvalidUsage / InternalError.
[[noreturn]] void throwVendorError(abi::ncclResult_t result, const std::string& message);

}  // namespace hetccl::domain::nccl
