// The slice of the HIP runtime (and hiprtc) that libhetccl-hip.so uses, declared here without any HIP
// header: the plugin never links libamdhip64 and resolves every function below with dlsym at init
// (runtime.cc). One header for ROCm 5.7, 6.x and 7.x, whose sonames (libamdhip64.so.5/.6/.7) and some
// enums and structs differ: where a value differs between majors both are given and the plugin picks
// by hipRuntimeGetVersion's major.
//
// CHANGED: (nothing yet; helpers implementing a fake runtime: look here for changes to this file)
//
// Conventions:
//  - hipError_t / hiprtcResult / every enum parameter are `int` (all HIP enums are int-sized);
//  - opaque handles (hipStream_t, hipEvent_t, hipModule_t, hipFunction_t, hiprtcProgram) are `void*`;
//  - each entry of HETCCL_HIP_RUNTIME_FUNCTIONS / HETCCL_HIPRTC_FUNCTIONS names the exported symbol, its
//    function pointer type (PFN_<symbol>) and whether init fails without it (REQUIRED) or the plugin
//    works around its absence (OPTIONAL: the table's pointer is then null);
//  - hip_api_check.hip static_asserts, at build time, that every PFN_* equals the real HIP 5.2 header's
//    decltype(&::symbol) (enums mapped to int, opaque handle pointers to void*) and that every constant
//    below equals the header's value; values that changed after 5.2 cite their later header.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace hetccl::hip_plugin::api {

// ---- types ------------------------------------------------------------------------------------------
using hipError_t = int;    // enum hipError_t (hip_runtime_api.h)
using hiprtcResult = int;  // enum hiprtcResult (hiprtc.h)

/// hipPointerAttribute_t: the same layout in 5.x (first field `memoryType`) and 6.x/7.x (renamed `type`);
/// only the values of that field differ (kMemoryType5 / kMemoryType6 below).
struct PointerAttributes {
  int type;             // enum hipMemoryType
  int device;
  void* devicePointer;
  void* hostPointer;
  int isManaged;
  unsigned allocationFlags;
};

// ---- constants --------------------------------------------------------------------------------------
// hipError_t values (hip_runtime_api.h; identical in 5.x, 6.x, 7.x)
constexpr hipError_t hipSuccess = 0;
constexpr hipError_t hipErrorInvalidValue = 1;
constexpr hipError_t hipErrorOutOfMemory = 2;
constexpr hipError_t hipErrorNotInitialized = 3;
constexpr hipError_t hipErrorInsufficientDriver = 35;
constexpr hipError_t hipErrorNoDevice = 100;
constexpr hipError_t hipErrorInvalidDevice = 101;
constexpr hipError_t hipErrorInvalidImage = 200;
constexpr hipError_t hipErrorNoBinaryForGpu = 209;
constexpr hipError_t hipErrorSharedObjectInitFailed = 303;
constexpr hipError_t hipErrorNotFound = 500;
constexpr hipError_t hipErrorNotReady = 600;
constexpr hipError_t hipErrorNotSupported = 801;
constexpr hipError_t hipErrorStreamCaptureUnsupported = 900;
constexpr hiprtcResult HIPRTC_SUCCESS = 0;  // hiprtc.h

// enum hipMemcpyKind
constexpr int hipMemcpyDefault = 4;
// Flags (#defines in hip_runtime_api.h)
constexpr unsigned hipStreamNonBlocking = 0x1;
constexpr unsigned hipEventDisableTiming = 0x2;
constexpr unsigned hipHostMallocPortable = 0x1;   // == hipHostAllocPortable (6.x/7.x)
constexpr unsigned hipHostMallocMapped = 0x2;     // == hipHostAllocMapped (6.x/7.x)
constexpr unsigned hipHostRegisterPortable = 0x1;
constexpr unsigned hipHostRegisterMapped = 0x2;
constexpr unsigned hipStreamWaitValueGte = 0x0;  // hipStreamWaitValue64: wait until (*ptr & mask) >= value
constexpr unsigned hipStreamWaitValueEq = 0x1;   //                      wait until (*ptr & mask) == value
// The one flag hipIpcOpenMemHandle takes, whose value changed: 0 in 5.x (checked against the 5.2 header),
// 0x01 from 6.0 on (hip_runtime_api.h 6.x/7.x, as CUDA's), which 6.x runtimes require. ipc.cc picks by the
// runtime's major version.
constexpr unsigned hipIpcMemLazyEnablePeerAccess = 0x0;
constexpr unsigned hipIpcMemLazyEnablePeerAccess6 = 0x1;
// enum hipStreamCaptureStatus
constexpr int hipStreamCaptureStatusNone = 0;
constexpr int hipStreamCaptureStatusActive = 1;
constexpr int hipStreamCaptureStatusInvalidated = 2;
// enum hipStreamCaptureMode
constexpr int hipStreamCaptureModeGlobal = 0;
constexpr int hipStreamCaptureModeThreadLocal = 1;
constexpr int hipStreamCaptureModeRelaxed = 2;
// enum hipDeviceAttribute_t: the same numbers in 5.x, 6.x and 7.x (6.0 renamed some AMD-specific entries to
// hipDeviceAttributeUnusedN but kept every value; hip_runtime_api.h of 6.x/7.x: CanUseStreamWaitValue =
// AmdSpecificBegin(10000) + 13).
constexpr int hipDeviceAttributeMultiprocessorCount = 63;
constexpr int hipDeviceAttributeCanUseStreamWaitValue = 10013;

/// enum hipMemoryType of ROCm 5.x (hip_runtime_api.h 5.2..5.7): managed memory reports isManaged = 1.
struct MemoryType5 {
  static constexpr int kHost = 0, kDevice = 1, kArray = 2, kUnified = 3;
};
/// enum hipMemoryType of ROCm 6.0+ (hip_runtime_api.h 6.x/7.x: "hipMemoryTypeUnregistered = 0, Host = 1,
/// Device = 2, Managed = 3, Array = 10, Unified = 11").
struct MemoryType6 {
  static constexpr int kUnregistered = 0, kHost = 1, kDevice = 2, kManaged = 3, kArray = 10, kUnified = 11;
};

/// Offsets of `char gcnArchName[256]` in the device property struct filled by each properties entry point
/// (the plugin passes a zeroed buffer of kDevicePropBufferBytes, larger than any layout, and reads the
/// NUL-terminated "gfx..." string there). hipDeviceProp_tR0600 (6.x/7.x: hipGetDevicePropertiesR0600):
/// 1160; hipDeviceProp_t of 5.x = hipDeviceProp_tR0000 of 6.x (hipGetDeviceProperties in 5.x,
/// hipGetDevicePropertiesR0000 in 6.x): 396 (checked against the 5.2 header by hip_api_check.hip).
constexpr size_t kGcnArchNameOffsetR0600 = 1160;
constexpr size_t kGcnArchNameOffsetR0000 = 396;
constexpr size_t kGcnArchNameBytes = 256;
constexpr size_t kDevicePropBufferBytes = 8192;

// ---- function pointer types (one per symbol; the symbol is the name after PFN_) ----------------------
using PFN_hipGetErrorString = const char* (*)(hipError_t error);
using PFN_hipGetErrorName = const char* (*)(hipError_t error);
using PFN_hipGetLastError = hipError_t (*)();
using PFN_hipRuntimeGetVersion = hipError_t (*)(int* runtimeVersion);  // HIP_VERSION: major*1e7 + minor*1e5 + patch
using PFN_hipDriverGetVersion = hipError_t (*)(int* driverVersion);
using PFN_hipGetDeviceCount = hipError_t (*)(int* count);
using PFN_hipGetDevice = hipError_t (*)(int* device);
using PFN_hipSetDevice = hipError_t (*)(int device);
using PFN_hipDeviceGetAttribute = hipError_t (*)(int* value, int attribute, int device);
using PFN_hipDeviceGetPCIBusId = hipError_t (*)(char* pciBusId, int len, int device);
/// hipGetDeviceProperties (5.x), hipGetDevicePropertiesR0000 / hipGetDevicePropertiesR0600 (6.x/7.x): the
/// struct is written into `prop` (a kDevicePropBufferBytes buffer); only gcnArchName is read.
using PFN_hipGetDeviceProperties = hipError_t (*)(void* prop, int device);
using PFN_hipGetDevicePropertiesR0000 = PFN_hipGetDeviceProperties;
using PFN_hipGetDevicePropertiesR0600 = PFN_hipGetDeviceProperties;
using PFN_hipMalloc = hipError_t (*)(void** ptr, size_t size);
using PFN_hipFree = hipError_t (*)(void* ptr);
/// hipHostMalloc, or (when absent, e.g. a future 7.x) hipHostAlloc: same signature and flag values.
using PFN_hipHostMalloc = hipError_t (*)(void** ptr, size_t size, unsigned flags);
/// hipHostFree, or (when absent) hipFreeHost.
using PFN_hipHostFree = hipError_t (*)(void* ptr);
using PFN_hipHostRegister = hipError_t (*)(void* hostPtr, size_t sizeBytes, unsigned flags);
using PFN_hipHostUnregister = hipError_t (*)(void* hostPtr);
using PFN_hipHostGetDevicePointer = hipError_t (*)(void** devPtr, void* hostPtr, unsigned flags);
/// Unregistered host memory: 5.x/6.x return hipErrorInvalidValue (the plugin reads that as "plain host
/// memory"); 7.x returns hipSuccess with type = MemoryType6::kUnregistered.
using PFN_hipPointerGetAttributes = hipError_t (*)(PointerAttributes* attributes, const void* ptr);
using PFN_hipStreamCreateWithFlags = hipError_t (*)(void** stream, unsigned flags);
using PFN_hipStreamDestroy = hipError_t (*)(void* stream);
using PFN_hipStreamSynchronize = hipError_t (*)(void* stream);
using PFN_hipStreamQuery = hipError_t (*)(void* stream);  // hipErrorNotReady while work is pending
using PFN_hipStreamWaitEvent = hipError_t (*)(void* stream, void* event, unsigned flags);
using PFN_hipEventCreateWithFlags = hipError_t (*)(void** event, unsigned flags);
using PFN_hipEventDestroy = hipError_t (*)(void* event);
using PFN_hipEventRecord = hipError_t (*)(void* event, void* stream);
using PFN_hipEventQuery = hipError_t (*)(void* event);  // hipErrorNotReady while not reached
using PFN_hipEventSynchronize = hipError_t (*)(void* event);
using PFN_hipMemcpy = hipError_t (*)(void* dst, const void* src, size_t sizeBytes, int kind);
using PFN_hipMemcpyAsync = hipError_t (*)(void* dst, const void* src, size_t sizeBytes, int kind, void* stream);
using PFN_hipMemset = hipError_t (*)(void* dst, int value, size_t sizeBytes);
using PFN_hipMemsetAsync = hipError_t (*)(void* dst, int value, size_t sizeBytes, void* stream);
/// *captureStatus: hipStreamCaptureStatus*; *id: the capture's id.
using PFN_hipStreamGetCaptureInfo = hipError_t (*)(void* stream, int* captureStatus, unsigned long long* id);
using PFN_hipThreadExchangeStreamCaptureMode = hipError_t (*)(int* mode);
/// Stream memory operations (OPTIONAL; used only where hipDeviceGetAttribute(CanUseStreamWaitValue) says 1).
/// The plugin passes the device address of the word (hipHostGetDevicePointer / hipPointerGetAttributes),
/// flags hipStreamWaitValueGte or hipStreamWaitValueEq, mask ~0ull; writes pass flags 0.
using PFN_hipStreamWaitValue64 = hipError_t (*)(void* stream, void* ptr, uint64_t value, unsigned flags,
                                                uint64_t mask);
using PFN_hipStreamWriteValue64 = hipError_t (*)(void* stream, void* ptr, uint64_t value, unsigned flags);
/// IPC memory handles (OPTIONAL: without them device memory is never shared with another process). A
/// handle (hipIpcMemHandle_t, 64 opaque bytes) names a whole hipMalloc allocation; hipIpcGetMemHandle takes
/// a pointer to one (as void*, the convention for handle structs), hipIpcOpenMemHandle takes it by value.
struct IpcMemHandle {
  char reserved[64];
};
using PFN_hipIpcGetMemHandle = hipError_t (*)(void* handle, void* devPtr);
using PFN_hipIpcOpenMemHandle = hipError_t (*)(void** devPtr, IpcMemHandle handle, unsigned flags);
using PFN_hipIpcCloseMemHandle = hipError_t (*)(void* devPtr);
/// The base and size of the allocation holding devPtr (hipDeviceptr_t is void*).
using PFN_hipMemGetAddressRange = hipError_t (*)(void** base, size_t* size, void* devPtr);
/// Module API: kernels are extern "C" functions of a code object (kernel_abi.hpp).
using PFN_hipModuleLoadData = hipError_t (*)(void** module, const void* image);
using PFN_hipModuleUnload = hipError_t (*)(void* module);
using PFN_hipModuleGetFunction = hipError_t (*)(void** function, void* module, const char* kernelName);
/// kernelParams: one pointer per kernel parameter, in order (kernel_abi.hpp); extra: always null.
using PFN_hipModuleLaunchKernel = hipError_t (*)(void* function, unsigned gridDimX, unsigned gridDimY,
                                                 unsigned gridDimZ, unsigned blockDimX, unsigned blockDimY,
                                                 unsigned blockDimZ, unsigned sharedMemBytes, void* stream,
                                                 void** kernelParams, void** extra);

// hiprtc: libhiprtc.so.7 / libhiprtc.so.6, else the same symbols inside libamdhip64.so.5 (ROCm 5.x).
// 7.0 changed `const char**` to `const char* const*` in create/compile: the same ABI.
using PFN_hiprtcGetErrorString = const char* (*)(hiprtcResult result);
using PFN_hiprtcVersion = hiprtcResult (*)(int* major, int* minor);
using PFN_hiprtcCreateProgram = hiprtcResult (*)(void** prog, const char* src, const char* name, int numHeaders,
                                                 const char** headers, const char** includeNames);
/// Options passed: "--offload-arch=<gcnArchName>" (when known), "-O3", "-std=c++17",
/// "-DHETCCL_HIP_FREESTANDING=1" is already part of the embedded source.
using PFN_hiprtcCompileProgram = hiprtcResult (*)(void* prog, int numOptions, const char** options);
using PFN_hiprtcGetProgramLogSize = hiprtcResult (*)(void* prog, size_t* logSizeRet);
using PFN_hiprtcGetProgramLog = hiprtcResult (*)(void* prog, char* log);
using PFN_hiprtcGetCodeSize = hiprtcResult (*)(void* prog, size_t* codeSizeRet);
using PFN_hiprtcGetCode = hiprtcResult (*)(void* prog, char* code);
using PFN_hiprtcDestroyProgram = hiprtcResult (*)(void** prog);

// ---- symbol tables (X-macros: X(symbol, REQUIRED|OPTIONAL)) ------------------------------------------
// Runtime (libamdhip64). hipHostMalloc / hipHostFree fall back to hipHostAlloc / hipFreeHost (see above).
// Of the three properties entry points any may be absent; without all three the arch is unknown (see
// kernels.cc: embedded code objects are then tried in turn, or HETCCL_HIP_ARCH names it).
#define HETCCL_HIP_RUNTIME_FUNCTIONS(X)        \
  X(hipGetErrorString, REQUIRED)               \
  X(hipGetErrorName, REQUIRED)                 \
  X(hipGetLastError, REQUIRED)                 \
  X(hipRuntimeGetVersion, REQUIRED)            \
  X(hipDriverGetVersion, REQUIRED)             \
  X(hipGetDeviceCount, REQUIRED)               \
  X(hipGetDevice, REQUIRED)                    \
  X(hipSetDevice, REQUIRED)                    \
  X(hipDeviceGetAttribute, REQUIRED)           \
  X(hipDeviceGetPCIBusId, OPTIONAL)            \
  X(hipGetDevicePropertiesR0600, OPTIONAL)     \
  X(hipGetDevicePropertiesR0000, OPTIONAL)     \
  X(hipGetDeviceProperties, OPTIONAL)          \
  X(hipMalloc, REQUIRED)                       \
  X(hipFree, REQUIRED)                         \
  X(hipHostMalloc, REQUIRED)                   \
  X(hipHostFree, REQUIRED)                     \
  X(hipHostRegister, REQUIRED)                 \
  X(hipHostUnregister, REQUIRED)               \
  X(hipHostGetDevicePointer, REQUIRED)         \
  X(hipPointerGetAttributes, REQUIRED)         \
  X(hipStreamCreateWithFlags, REQUIRED)        \
  X(hipStreamDestroy, REQUIRED)                \
  X(hipStreamSynchronize, REQUIRED)            \
  X(hipStreamQuery, REQUIRED)                  \
  X(hipStreamWaitEvent, REQUIRED)              \
  X(hipEventCreateWithFlags, REQUIRED)         \
  X(hipEventDestroy, REQUIRED)                 \
  X(hipEventRecord, REQUIRED)                  \
  X(hipEventQuery, REQUIRED)                   \
  X(hipEventSynchronize, REQUIRED)             \
  X(hipMemcpy, REQUIRED)                       \
  X(hipMemcpyAsync, REQUIRED)                  \
  X(hipMemset, REQUIRED)                       \
  X(hipMemsetAsync, REQUIRED)                  \
  X(hipStreamGetCaptureInfo, REQUIRED)         \
  X(hipThreadExchangeStreamCaptureMode, REQUIRED) \
  X(hipStreamWaitValue64, OPTIONAL)            \
  X(hipStreamWriteValue64, OPTIONAL)           \
  X(hipIpcGetMemHandle, OPTIONAL)              \
  X(hipIpcOpenMemHandle, OPTIONAL)             \
  X(hipIpcCloseMemHandle, OPTIONAL)            \
  X(hipMemGetAddressRange, OPTIONAL)           \
  X(hipModuleLoadData, REQUIRED)               \
  X(hipModuleUnload, REQUIRED)                 \
  X(hipModuleGetFunction, REQUIRED)            \
  X(hipModuleLaunchKernel, REQUIRED)

// hiprtc: needed only where no embedded code object fits the device (missing -> an error at that point,
// naming the library and symbol, not at init).
#define HETCCL_HIPRTC_FUNCTIONS(X)       \
  X(hiprtcGetErrorString, REQUIRED)      \
  X(hiprtcVersion, OPTIONAL)             \
  X(hiprtcCreateProgram, REQUIRED)       \
  X(hiprtcCompileProgram, REQUIRED)      \
  X(hiprtcGetProgramLogSize, REQUIRED)   \
  X(hiprtcGetProgramLog, REQUIRED)       \
  X(hiprtcGetCodeSize, REQUIRED)         \
  X(hiprtcGetCode, REQUIRED)             \
  X(hiprtcDestroyProgram, REQUIRED)

/// The resolved runtime: one pointer per HETCCL_HIP_RUNTIME_FUNCTIONS entry, same name.
struct Runtime {
#define HETCCL_HIP_DECLARE_MEMBER(name, need) PFN_##name name = nullptr;
  HETCCL_HIP_RUNTIME_FUNCTIONS(HETCCL_HIP_DECLARE_MEMBER)
  int runtimeVersion = 0;  // hipRuntimeGetVersion
  int major = 0;           // runtimeVersion / 10000000
  void* handle = nullptr;  // dlopen handle of libamdhip64
  char path[256] = "";     // what was opened
};

/// The resolved hiprtc (all null until first needed).
struct Rtc {
  HETCCL_HIPRTC_FUNCTIONS(HETCCL_HIP_DECLARE_MEMBER)
#undef HETCCL_HIP_DECLARE_MEMBER
  void* handle = nullptr;
  char path[256] = "";
};

}  // namespace hetccl::hip_plugin::api
