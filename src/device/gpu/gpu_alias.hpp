// One source for CUDA and HIP: the GPU plugin code and kernels use only the gpu* names below, which
// alias the CUDA runtime names, or the HIP ones when compiled by hipcc for AMD (__HIP_PLATFORM_AMD__).
// Add a name here (both branches) before using a vendor API or intrinsic anywhere in src/device/gpu or a
// plugin; vendor-only features (CUDA driver entry points) stay in one small file of that plugin.
//
// This header is for plugin code only: the core never includes it.
#pragma once

#if defined(__HIP_PLATFORM_AMD__)

#include <hip/hip_bf16.h>
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

#define GPU_VENDOR_NAME "hip"
using gpuError_t = hipError_t;
using gpuStream_t = hipStream_t;
using gpuEvent_t = hipEvent_t;
using gpuPointerAttributes = hipPointerAttribute_t;
using gpuHalf = __half;
using gpuBfloat16 = __hip_bfloat16;
constexpr gpuError_t gpuSuccess = hipSuccess;
constexpr gpuError_t gpuErrorNotReady = hipErrorNotReady;
constexpr gpuError_t gpuErrorInvalidValue = hipErrorInvalidValue;
constexpr gpuError_t gpuErrorNoDevice = hipErrorNoDevice;
constexpr gpuError_t gpuErrorInsufficientDriver = hipErrorInsufficientDriver;
constexpr gpuError_t gpuErrorHostMemoryAlreadyRegistered = hipErrorHostMemoryAlreadyRegistered;
#define gpuMemoryTypeHost hipMemoryTypeHost
#define gpuMemoryTypeDevice hipMemoryTypeDevice
#define gpuMemoryTypeManaged hipMemoryTypeManaged
#define gpuMemcpyDefault hipMemcpyDefault
#define gpuStreamNonBlocking hipStreamNonBlocking
#define gpuEventDisableTiming hipEventDisableTiming
#define gpuHostAllocMapped hipHostMallocMapped
#define gpuHostAllocPortable hipHostMallocPortable
#define gpuHostRegisterMapped hipHostRegisterMapped
#define gpuHostRegisterPortable hipHostRegisterPortable
#define gpuDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define gpuGetErrorString hipGetErrorString
#define gpuGetErrorName hipGetErrorName
#define gpuGetLastError hipGetLastError
#define gpuRuntimeGetVersion hipRuntimeGetVersion
#define gpuDriverGetVersion hipDriverGetVersion
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuGetDevice hipGetDevice
#define gpuSetDevice hipSetDevice
#define gpuDeviceGetAttribute hipDeviceGetAttribute
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuHostAlloc hipHostMalloc
#define gpuFreeHost hipHostFree
#define gpuHostRegister hipHostRegister
#define gpuHostUnregister hipHostUnregister
#define gpuHostGetDevicePointer hipHostGetDevicePointer
#define gpuPointerGetAttributes hipPointerGetAttributes
#define gpuStreamCreateWithFlags hipStreamCreateWithFlags
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuStreamQuery hipStreamQuery
#define gpuStreamWaitEvent hipStreamWaitEvent
#define gpuEventCreateWithFlags hipEventCreateWithFlags
#define gpuEventDestroy hipEventDestroy
#define gpuEventRecord hipEventRecord
#define gpuEventQuery hipEventQuery
#define gpuEventSynchronize hipEventSynchronize
#define gpuFuncAttributes hipFuncAttributes
#define gpuFuncGetAttributes hipFuncGetAttributes
#define gpuMemcpy hipMemcpy
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemset hipMemset
#define gpuMemsetAsync hipMemsetAsync
#define gpuStreamGetCaptureInfo hipStreamGetCaptureInfo
#define gpuStreamCaptureStatus hipStreamCaptureStatus
#define gpuStreamCaptureStatusActive hipStreamCaptureStatusActive
#define gpuStreamCaptureMode hipStreamCaptureMode
#define gpuStreamCaptureModeRelaxed hipStreamCaptureModeRelaxed
#define gpuThreadExchangeStreamCaptureMode hipThreadExchangeStreamCaptureMode
// Device side: a short pause inside polling loops.
#define gpuSpinPause() __builtin_amdgcn_s_sleep(1)

#else  // CUDA

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define GPU_VENDOR_NAME "cuda"
using gpuError_t = cudaError_t;
using gpuStream_t = cudaStream_t;
using gpuEvent_t = cudaEvent_t;
using gpuPointerAttributes = cudaPointerAttributes;
using gpuHalf = __half;
using gpuBfloat16 = __nv_bfloat16;
constexpr gpuError_t gpuSuccess = cudaSuccess;
constexpr gpuError_t gpuErrorNotReady = cudaErrorNotReady;
constexpr gpuError_t gpuErrorInvalidValue = cudaErrorInvalidValue;
constexpr gpuError_t gpuErrorNoDevice = cudaErrorNoDevice;
constexpr gpuError_t gpuErrorInsufficientDriver = cudaErrorInsufficientDriver;
constexpr gpuError_t gpuErrorHostMemoryAlreadyRegistered = cudaErrorHostMemoryAlreadyRegistered;
#define gpuMemoryTypeHost cudaMemoryTypeHost
#define gpuMemoryTypeDevice cudaMemoryTypeDevice
#define gpuMemoryTypeManaged cudaMemoryTypeManaged
#define gpuMemcpyDefault cudaMemcpyDefault
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuEventDisableTiming cudaEventDisableTiming
#define gpuHostAllocMapped cudaHostAllocMapped
#define gpuHostAllocPortable cudaHostAllocPortable
#define gpuHostRegisterMapped cudaHostRegisterMapped
#define gpuHostRegisterPortable cudaHostRegisterPortable
#define gpuDevAttrMultiProcessorCount cudaDevAttrMultiProcessorCount
#define gpuGetErrorString cudaGetErrorString
#define gpuGetErrorName cudaGetErrorName
#define gpuGetLastError cudaGetLastError
#define gpuRuntimeGetVersion cudaRuntimeGetVersion
#define gpuDriverGetVersion cudaDriverGetVersion
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuGetDevice cudaGetDevice
#define gpuSetDevice cudaSetDevice
#define gpuDeviceGetAttribute cudaDeviceGetAttribute
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuHostAlloc cudaHostAlloc
#define gpuFreeHost cudaFreeHost
#define gpuHostRegister cudaHostRegister
#define gpuHostUnregister cudaHostUnregister
#define gpuHostGetDevicePointer cudaHostGetDevicePointer
#define gpuPointerGetAttributes cudaPointerGetAttributes
#define gpuStreamCreateWithFlags cudaStreamCreateWithFlags
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuStreamQuery cudaStreamQuery
#define gpuStreamWaitEvent cudaStreamWaitEvent
#define gpuEventCreateWithFlags cudaEventCreateWithFlags
#define gpuEventDestroy cudaEventDestroy
#define gpuEventRecord cudaEventRecord
#define gpuEventQuery cudaEventQuery
#define gpuEventSynchronize cudaEventSynchronize
#define gpuFuncAttributes cudaFuncAttributes
#define gpuFuncGetAttributes cudaFuncGetAttributes
#define gpuMemcpy cudaMemcpy
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemset cudaMemset
#define gpuMemsetAsync cudaMemsetAsync
#define gpuStreamGetCaptureInfo cudaStreamGetCaptureInfo
#define gpuStreamCaptureStatus cudaStreamCaptureStatus
#define gpuStreamCaptureStatusActive cudaStreamCaptureStatusActive
#define gpuStreamCaptureMode cudaStreamCaptureMode
#define gpuStreamCaptureModeRelaxed cudaStreamCaptureModeRelaxed
#define gpuThreadExchangeStreamCaptureMode cudaThreadExchangeStreamCaptureMode
// Device side: a short pause inside polling loops (sm_70+).
#define gpuSpinPause() __nanosleep(64)

#endif
