// ROCm's names and texts of the error codes the fake returns (hipGetErrorName / hipGetErrorString;
// texts as ROCm's hip_error.cpp prints them), and hiprtcGetErrorString's names.
#include "hip_types.hpp"

namespace fakehip {
namespace {

struct ErrorText {
  int code;
  const char* name;
  const char* text;
};

constexpr ErrorText kErrors[] = {
    {hipSuccess, "hipSuccess", "no error"},
    {hipErrorInvalidValue, "hipErrorInvalidValue", "invalid argument"},
    {hipErrorOutOfMemory, "hipErrorOutOfMemory", "out of memory"},
    {hipErrorNotInitialized, "hipErrorNotInitialized", "initialization error"},
    {hipErrorInvalidConfiguration, "hipErrorInvalidConfiguration", "invalid configuration argument"},
    {hipErrorInvalidDevicePointer, "hipErrorInvalidDevicePointer", "invalid device pointer"},
    {hipErrorInvalidMemcpyDirection, "hipErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {hipErrorInsufficientDriver, "hipErrorInsufficientDriver", "driver version is insufficient for runtime version"},
    {hipErrorInvalidDeviceFunction, "hipErrorInvalidDeviceFunction", "invalid device function"},
    {hipErrorNoDevice, "hipErrorNoDevice", "no ROCm-capable device is detected"},
    {hipErrorInvalidDevice, "hipErrorInvalidDevice", "invalid device ordinal"},
    {hipErrorInvalidImage, "hipErrorInvalidImage", "device kernel image is invalid"},
    {hipErrorInvalidContext, "hipErrorInvalidContext", "invalid device context"},
    {hipErrorNoBinaryForGpu, "hipErrorNoBinaryForGpu", "no kernel image is available for execution on the device"},
    {hipErrorInvalidKernelFile, "hipErrorInvalidKernelFile", "invalid kernel file"},
    {hipErrorInvalidSource, "hipErrorInvalidSource", "device kernel image is invalid"},
    {hipErrorFileNotFound, "hipErrorFileNotFound", "file not found"},
    {hipErrorSharedObjectSymbolNotFound, "hipErrorSharedObjectSymbolNotFound", "shared object symbol not found"},
    {hipErrorSharedObjectInitFailed, "hipErrorSharedObjectInitFailed", "shared object initialization failed"},
    {hipErrorOperatingSystem, "hipErrorOperatingSystem", "OS call failed or operation not supported on this OS"},
    {hipErrorInvalidHandle, "hipErrorInvalidHandle", "invalid resource handle"},
    {hipErrorIllegalState, "hipErrorIllegalState", "the operation cannot be performed in the present state"},
    {hipErrorNotFound, "hipErrorNotFound", "named symbol not found"},
    {hipErrorNotReady, "hipErrorNotReady", "device not ready"},
    {hipErrorIllegalAddress, "hipErrorIllegalAddress", "an illegal memory access was encountered"},
    {hipErrorLaunchOutOfResources, "hipErrorLaunchOutOfResources", "too many resources requested for launch"},
    {hipErrorLaunchTimeOut, "hipErrorLaunchTimeOut", "the launch timed out and was terminated"},
    {hipErrorHostMemoryAlreadyRegistered, "hipErrorHostMemoryAlreadyRegistered",
     "part or all of the requested memory range is already mapped"},
    {hipErrorHostMemoryNotRegistered, "hipErrorHostMemoryNotRegistered",
     "pointer does not correspond to a registered memory region"},
    {hipErrorLaunchFailure, "hipErrorLaunchFailure", "unspecified launch failure"},
    {hipErrorNotSupported, "hipErrorNotSupported", "operation not supported"},
    {hipErrorStreamCaptureUnsupported, "hipErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing"},
    {hipErrorStreamCaptureInvalidated, "hipErrorStreamCaptureInvalidated",
     "operation failed due to a previous error during capture"},
    {hipErrorUnknown, "hipErrorUnknown", "unknown error"},
    {hipErrorRuntimeMemory, "hipErrorRuntimeMemory", "runtime memory call returned error"},
    {hipErrorRuntimeOther, "hipErrorRuntimeOther", "runtime call other than memory returned error"},
};

const ErrorText* find(int e) {
  for (const ErrorText& t : kErrors)
    if (t.code == e) return &t;
  return nullptr;
}

}  // namespace

const char* errorName(hipError_t e) noexcept {
  const ErrorText* t = find(e);
  return t ? t->name : "hipErrorUnknown";
}

const char* errorString(hipError_t e) noexcept {
  const ErrorText* t = find(e);
  return t ? t->text : "unknown error";
}

const char* hiprtcErrorText(hiprtcResult r) noexcept {
  switch (r) {
    case HIPRTC_SUCCESS: return "HIPRTC_SUCCESS";
    case HIPRTC_ERROR_OUT_OF_MEMORY: return "HIPRTC_ERROR_OUT_OF_MEMORY";
    case HIPRTC_ERROR_PROGRAM_CREATION_FAILURE: return "HIPRTC_ERROR_PROGRAM_CREATION_FAILURE";
    case HIPRTC_ERROR_INVALID_INPUT: return "HIPRTC_ERROR_INVALID_INPUT";
    case HIPRTC_ERROR_INVALID_PROGRAM: return "HIPRTC_ERROR_INVALID_PROGRAM";
    case HIPRTC_ERROR_INVALID_OPTION: return "HIPRTC_ERROR_INVALID_OPTION";
    case HIPRTC_ERROR_COMPILATION: return "HIPRTC_ERROR_COMPILATION";
    case HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE: return "HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE";
    case HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION: return "HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION";
    case HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION: return "HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION";
    case HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID: return "HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID";
    case HIPRTC_ERROR_INTERNAL_ERROR: return "HIPRTC_ERROR_INTERNAL_ERROR";
    case HIPRTC_ERROR_LINKING: return "HIPRTC_ERROR_LINKING";
    default: return "Invalid HIPRTC error code";
  }
}

}  // namespace fakehip
