// The functions libhetccl-fakehip.so exports with C linkage: the HIP runtime and hiprtc entry points the
// plugin resolves (enums as int, opaque handles as void*, as in src/device/hip/hip_api.hpp; the one struct
// passed by value, hipIpcMemHandle_t, is hip_types.hpp's), and fake_hip.h's control functions.
// abi_check.cc compares every signature with the plugin's table.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fake_hip.h"
#include "hip_types.hpp"

#define FAKEHIP_API extern "C" __attribute__((visibility("default")))

using fakehip::hipError_t;
using fakehip::hiprtcResult;

FAKEHIP_API const char* hipGetErrorString(hipError_t error);
FAKEHIP_API const char* hipGetErrorName(hipError_t error);
FAKEHIP_API hipError_t hipGetLastError();
FAKEHIP_API hipError_t hipPeekAtLastError();
FAKEHIP_API hipError_t hipRuntimeGetVersion(int* runtimeVersion);
FAKEHIP_API hipError_t hipDriverGetVersion(int* driverVersion);
FAKEHIP_API hipError_t hipGetDeviceCount(int* count);
FAKEHIP_API hipError_t hipGetDevice(int* device);
FAKEHIP_API hipError_t hipSetDevice(int device);
FAKEHIP_API hipError_t hipDeviceSynchronize();
FAKEHIP_API hipError_t hipDeviceGetAttribute(int* value, int attribute, int device);
FAKEHIP_API hipError_t hipDeviceGetPCIBusId(char* pciBusId, int len, int device);
FAKEHIP_API hipError_t hipGetDeviceProperties(void* prop, int device);
#ifndef FAKEHIP_ROCM5
FAKEHIP_API hipError_t hipGetDevicePropertiesR0000(void* prop, int device);
FAKEHIP_API hipError_t hipGetDevicePropertiesR0600(void* prop, int device);
#endif
FAKEHIP_API hipError_t hipMalloc(void** ptr, size_t size);
FAKEHIP_API hipError_t hipFree(void* ptr);
FAKEHIP_API hipError_t hipHostMalloc(void** ptr, size_t size, unsigned flags);
FAKEHIP_API hipError_t hipHostAlloc(void** ptr, size_t size, unsigned flags);
FAKEHIP_API hipError_t hipHostFree(void* ptr);
FAKEHIP_API hipError_t hipFreeHost(void* ptr);
FAKEHIP_API hipError_t hipHostRegister(void* hostPtr, size_t sizeBytes, unsigned flags);
FAKEHIP_API hipError_t hipHostUnregister(void* hostPtr);
FAKEHIP_API hipError_t hipHostGetDevicePointer(void** devPtr, void* hostPtr, unsigned flags);
FAKEHIP_API hipError_t hipPointerGetAttributes(fakehip::hipPointerAttribute_t* attributes, const void* ptr);
FAKEHIP_API hipError_t hipMemGetAddressRange(void** pbase, size_t* psize, void* dptr);  // hipDeviceptr_t is void*
FAKEHIP_API hipError_t hipIpcGetMemHandle(fakehip::hipIpcMemHandle_t* handle, void* devPtr);
FAKEHIP_API hipError_t hipIpcOpenMemHandle(void** devPtr, fakehip::hipIpcMemHandle_t handle, unsigned int flags);
FAKEHIP_API hipError_t hipIpcCloseMemHandle(void* devPtr);
FAKEHIP_API hipError_t hipStreamCreate(void** stream);
FAKEHIP_API hipError_t hipStreamCreateWithFlags(void** stream, unsigned flags);
FAKEHIP_API hipError_t hipStreamDestroy(void* stream);
FAKEHIP_API hipError_t hipStreamSynchronize(void* stream);
FAKEHIP_API hipError_t hipStreamQuery(void* stream);
FAKEHIP_API hipError_t hipStreamWaitEvent(void* stream, void* event, unsigned flags);
FAKEHIP_API hipError_t hipEventCreate(void** event);
FAKEHIP_API hipError_t hipEventCreateWithFlags(void** event, unsigned flags);
FAKEHIP_API hipError_t hipEventDestroy(void* event);
FAKEHIP_API hipError_t hipEventRecord(void* event, void* stream);
FAKEHIP_API hipError_t hipEventQuery(void* event);
FAKEHIP_API hipError_t hipEventSynchronize(void* event);
FAKEHIP_API hipError_t hipMemcpy(void* dst, const void* src, size_t sizeBytes, int kind);
FAKEHIP_API hipError_t hipMemcpyAsync(void* dst, const void* src, size_t sizeBytes, int kind, void* stream);
FAKEHIP_API hipError_t hipMemset(void* dst, int value, size_t sizeBytes);
FAKEHIP_API hipError_t hipMemsetAsync(void* dst, int value, size_t sizeBytes, void* stream);
FAKEHIP_API hipError_t hipStreamGetCaptureInfo(void* stream, int* captureStatus, unsigned long long* id);
FAKEHIP_API hipError_t hipThreadExchangeStreamCaptureMode(int* mode);
#ifndef FAKEHIP_NO_MEMOP_SYMBOLS
FAKEHIP_API hipError_t hipStreamWaitValue64(void* stream, void* ptr, uint64_t value, unsigned flags, uint64_t mask);
FAKEHIP_API hipError_t hipStreamWriteValue64(void* stream, void* ptr, uint64_t value, unsigned flags);
#endif
FAKEHIP_API hipError_t hipModuleLoadData(void** module, const void* image);
FAKEHIP_API hipError_t hipModuleUnload(void* module);
FAKEHIP_API hipError_t hipModuleGetFunction(void** function, void* module, const char* kernelName);
FAKEHIP_API hipError_t hipModuleLaunchKernel(void* function, unsigned gridDimX, unsigned gridDimY, unsigned gridDimZ,
                                             unsigned blockDimX, unsigned blockDimY, unsigned blockDimZ,
                                             unsigned sharedMemBytes, void* stream, void** kernelParams, void** extra);

FAKEHIP_API const char* hiprtcGetErrorString(hiprtcResult result);
FAKEHIP_API hiprtcResult hiprtcVersion(int* major, int* minor);
FAKEHIP_API hiprtcResult hiprtcCreateProgram(void** prog, const char* src, const char* name, int numHeaders,
                                             const char** headers, const char** includeNames);
FAKEHIP_API hiprtcResult hiprtcCompileProgram(void* prog, int numOptions, const char** options);
FAKEHIP_API hiprtcResult hiprtcGetProgramLogSize(void* prog, size_t* logSizeRet);
FAKEHIP_API hiprtcResult hiprtcGetProgramLog(void* prog, char* log);
FAKEHIP_API hiprtcResult hiprtcGetCodeSize(void* prog, size_t* codeSizeRet);
FAKEHIP_API hiprtcResult hiprtcGetCode(void* prog, char* code);
FAKEHIP_API hiprtcResult hiprtcDestroyProgram(void** prog);
