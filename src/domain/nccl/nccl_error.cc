#include "domain/nccl/nccl_error.hpp"

#include "core/error.hpp"

namespace hetccl::domain::nccl {

std::string resultName(abi::ncclResult_t result) {
  switch (result) {
    case abi::ncclSuccess: return "ncclSuccess";
    case abi::ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case abi::ncclSystemError: return "ncclSystemError";
    case abi::ncclInternalError: return "ncclInternalError";
    case abi::ncclInvalidArgument: return "ncclInvalidArgument";
    case abi::ncclInvalidUsage: return "ncclInvalidUsage";
    case abi::ncclRemoteError: return "ncclRemoteError";
    case abi::ncclInProgress: return "ncclInProgress";
  }
  return concat("ncclResult ", static_cast<int>(result));
}

void throwVendorError(abi::ncclResult_t result, const std::string& message) {
  switch (result) {
    case abi::ncclInvalidArgument: throw InvalidArgument(message);
    case abi::ncclInvalidUsage: throw InvalidUsage(message);
    case abi::ncclSystemError: throw SystemError(message);
    case abi::ncclInternalError: throw InternalError(message);
    case abi::ncclRemoteError: throw PeerError(-1, "", message);
    case abi::ncclUnhandledCudaError: throw Error(Result::UnhandledCudaError, message);
    case abi::ncclInProgress:
      throw InvalidUsage(message + " (the vendor communicator is non-blocking; hetccl needs blocking ones)");
    case abi::ncclSuccess: break;
  }
  throw InternalError(message);
}

}  // namespace hetccl::domain::nccl
