// The fake's own definitions of the HIP types and constants it implements, with the values of ROCm's
// hip_runtime_api.h / hiprtc.h (written from the public headers, independently of the plugin's
// src/device/hip/hip_api.hpp, so that a wrong constant on either side shows up as a failing test;
// abi_check.cc compares the two where they must agree).
#pragma once

#include <cstddef>
#include <cstdint>

namespace fakehip {

using hipError_t = int;
enum : int {
  hipSuccess = 0,
  hipErrorInvalidValue = 1,
  hipErrorOutOfMemory = 2,
  hipErrorNotInitialized = 3,
  hipErrorInvalidConfiguration = 9,
  hipErrorInvalidDevicePointer = 17,
  hipErrorInvalidMemcpyDirection = 21,
  hipErrorInsufficientDriver = 35,
  hipErrorInvalidDeviceFunction = 98,
  hipErrorNoDevice = 100,
  hipErrorInvalidDevice = 101,
  hipErrorInvalidImage = 200,
  hipErrorInvalidContext = 201,
  hipErrorNoBinaryForGpu = 209,
  hipErrorInvalidKernelFile = 218,
  hipErrorInvalidSource = 300,
  hipErrorFileNotFound = 301,
  hipErrorSharedObjectSymbolNotFound = 302,
  hipErrorSharedObjectInitFailed = 303,
  hipErrorOperatingSystem = 304,
  hipErrorInvalidHandle = 400,
  hipErrorIllegalState = 401,
  hipErrorNotFound = 500,
  hipErrorNotReady = 600,
  hipErrorIllegalAddress = 700,
  hipErrorLaunchOutOfResources = 701,
  hipErrorLaunchTimeOut = 702,
  hipErrorHostMemoryAlreadyRegistered = 712,
  hipErrorHostMemoryNotRegistered = 713,
  hipErrorLaunchFailure = 719,
  hipErrorNotSupported = 801,
  hipErrorStreamCaptureUnsupported = 900,
  hipErrorStreamCaptureInvalidated = 901,
  hipErrorUnknown = 999,
  hipErrorRuntimeMemory = 1052,
  hipErrorRuntimeOther = 1053,
};

/// "hipErrorOutOfMemory" / "out of memory" (ROCm's names and texts); unknown codes as ROCm prints them.
const char* errorName(hipError_t e) noexcept;
const char* errorString(hipError_t e) noexcept;

// hipMemcpyKind.
enum : int { hipMemcpyHostToHost = 0, hipMemcpyHostToDevice = 1, hipMemcpyDeviceToHost = 2,
             hipMemcpyDeviceToDevice = 3, hipMemcpyDefault = 4 };

// hipMemoryType: ROCm 6 and later...
enum : int { hipMemoryTypeUnregistered = 0, hipMemoryTypeHost = 1, hipMemoryTypeDevice = 2, hipMemoryTypeManaged = 3,
             hipMemoryTypeArray = 10, hipMemoryTypeUnified = 11 };
// ... and ROCm 5 (hipMemoryTypeHost 0: unregistered host memory was an error there).
enum : int { hipMemoryTypeHost_v5 = 0, hipMemoryTypeDevice_v5 = 1, hipMemoryTypeArray_v5 = 2, hipMemoryTypeUnified_v5 = 3 };

/// hipPointerAttribute_t (the same layout in ROCm 5, 6 and 7; the first field is `memoryType` in 5 and
/// `type` in 6+, with the enum values above).
struct hipPointerAttribute_t {
  int type;
  int device;
  void* devicePointer;
  void* hostPointer;
  int isManaged;
  unsigned allocationFlags;
};

/// hipIpcMemHandle_t (HIP_IPC_HANDLE_SIZE = 64 bytes, passed by value to hipIpcOpenMemHandle): opaque to the
/// caller; what the fake puts in it is ipc_handle.hpp's IpcHandlePayload.
struct hipIpcMemHandle_t {
  char reserved[64];
};
// hipIpcOpenMemHandle's one flag, which it requires: 0x1 in ROCm 6 and later (as CUDA's), 0 in ROCm 5's headers.
enum : unsigned { hipIpcMemLazyEnablePeerAccess = 0x1, hipIpcMemLazyEnablePeerAccess_v5 = 0x0 };

// hipHostMalloc / hipHostRegister / hipStream / hipEvent flags.
enum : unsigned { hipHostMallocDefault = 0, hipHostMallocPortable = 1, hipHostMallocMapped = 2,
                  hipHostMallocWriteCombined = 4, hipHostMallocNumaUser = 0x20000000, hipHostMallocCoherent = 0x40000000,
                  hipHostMallocNonCoherent = 0x80000000u };
enum : unsigned { hipHostRegisterDefault = 0, hipHostRegisterPortable = 1, hipHostRegisterMapped = 2,
                  hipHostRegisterIoMemory = 4, hipHostRegisterReadOnly = 8 };
enum : unsigned { hipStreamDefault = 0, hipStreamNonBlocking = 1 };
enum : unsigned { hipEventDefault = 0, hipEventBlockingSync = 1, hipEventDisableTiming = 2, hipEventInterprocess = 4 };

// Stream memory operations.
enum : unsigned { hipStreamWaitValueGte = 0, hipStreamWaitValueEq = 1, hipStreamWaitValueAnd = 2, hipStreamWaitValueNor = 3 };

// Device attributes (hipDeviceAttribute_t): the ones the fake answers.
enum : int {
  hipDeviceAttributeCanMapHostMemory = 3,
  hipDeviceAttributeMaxThreadsPerBlock = 56,
  hipDeviceAttributeMultiprocessorCount = 63,
  hipDeviceAttributeUnifiedAddressing = 86,
  hipDeviceAttributeWarpSize = 87,
  hipDeviceAttributeAmdSpecificBegin = 10000,
  hipDeviceAttributeCanUseStreamWaitValue = 10013,
};

// Stream capture.
enum : int { hipStreamCaptureStatusNone = 0, hipStreamCaptureStatusActive = 1, hipStreamCaptureStatusInvalidated = 2 };
enum : int { hipStreamCaptureModeGlobal = 0, hipStreamCaptureModeThreadLocal = 1, hipStreamCaptureModeRelaxed = 2 };

// hiprtcResult.
using hiprtcResult = int;
enum : int {
  HIPRTC_SUCCESS = 0,
  HIPRTC_ERROR_OUT_OF_MEMORY = 1,
  HIPRTC_ERROR_PROGRAM_CREATION_FAILURE = 2,
  HIPRTC_ERROR_INVALID_INPUT = 3,
  HIPRTC_ERROR_INVALID_PROGRAM = 4,
  HIPRTC_ERROR_INVALID_OPTION = 5,
  HIPRTC_ERROR_COMPILATION = 6,
  HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE = 7,
  HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION = 8,
  HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION = 9,
  HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID = 10,
  HIPRTC_ERROR_INTERNAL_ERROR = 11,
  HIPRTC_ERROR_LINKING = 100,
};
const char* hiprtcErrorText(hiprtcResult r) noexcept;

}  // namespace fakehip
