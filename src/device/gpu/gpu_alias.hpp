// One source for CUDA and HIP: the GPU plugin code and kernels use only the gpu* names below, which
// alias the CUDA runtime names, or the HIP ones when compiled by hipcc for AMD (__HIP_PLATFORM_AMD__).
// Add a name here (both branches) before using a vendor API or intrinsic anywhere in src/device/gpu or a
// plugin; vendor-only features (CUDA driver entry points) stay in one small file of that plugin.
//
// This header is for plugin code only: the core never includes it.
#pragma once

#if defined(HETCCL_HIP_FREESTANDING)

// HIP device code without any HIP header or device library (libhetccl-hip.so's kernels: src/device/hip).
// Compiled by clang -x hip --cuda-device-only -nogpuinc -nogpulib for the embedded code objects, and the
// same preprocessed text by hiprtc at run time, whose own prelude may define some of these names: so the
// attribute macros are guarded, everything else lives in hetccl::gpu (hiding the prelude's functions of
// the same name inside that namespace) or uses hetccl_-prefixed names. Only the kernels are compiled in
// this mode (HETCCL_GPU_DEVICE_ONLY: the .cuh files' host launchers are left out).
#define GPU_VENDOR_NAME "hip"
#ifndef HETCCL_GPU_DEVICE_ONLY
#define HETCCL_GPU_DEVICE_ONLY 1
#endif
#ifndef __HIPCC__
#define __HIPCC__ 1
#endif
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#ifndef __device__
#define __device__ __attribute__((device))
#endif
#ifndef __host__
#define __host__ __attribute__((host))
#endif
#ifndef __launch_bounds__
#define __launch_bounds__(threads) __attribute__((amdgpu_flat_work_group_size(1, threads)))
#endif

namespace hetccl::gpu {

struct Dim3 {
  unsigned x, y, z;
};
/// Block size and grid size (in blocks) from the dispatch packet (hsa_kernel_dispatch_packet_t:
/// workgroup_size_x is the uint16 at byte 4, grid_size_x, in work-items, the uint32 at byte 12).
__device__ inline unsigned hetcclBlockDimX() {
  return reinterpret_cast<const unsigned short*>(__builtin_amdgcn_dispatch_ptr())[2];
}
__device__ inline unsigned hetcclGridDimX() {
  return reinterpret_cast<const unsigned*>(__builtin_amdgcn_dispatch_ptr())[3] / hetcclBlockDimX();
}
__device__ inline Dim3 hetcclThreadIdx() { return Dim3{__builtin_amdgcn_workitem_id_x(), 0, 0}; }
__device__ inline Dim3 hetcclBlockIdx() { return Dim3{__builtin_amdgcn_workgroup_id_x(), 0, 0}; }
__device__ inline Dim3 hetcclBlockDim() { return Dim3{hetcclBlockDimX(), 1, 1}; }
__device__ inline Dim3 hetcclGridDim() { return Dim3{hetcclGridDimX(), 1, 1}; }

struct alignas(16) uint4 {
  unsigned x, y, z, w;
};

__device__ inline void __threadfence_system() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, ""); }

__device__ inline unsigned __float_as_uint(float f) { return __builtin_bit_cast(unsigned, f); }
__device__ inline float __uint_as_float(unsigned u) { return __builtin_bit_cast(float, u); }
__device__ inline long long __double_as_longlong(double d) { return __builtin_bit_cast(long long, d); }
__device__ inline double __longlong_as_double(long long v) { return __builtin_bit_cast(double, v); }

/// float16 / bfloat16 as raw bits with exact loads and round-to-nearest-even stores (the callers in
/// element_ops.cuh handle NaN before storing).
struct HalfStorage {
  unsigned short bits;
};
struct Bfloat16Storage {
  unsigned short bits;
};
__device__ inline HalfStorage __ushort_as_half(unsigned short b) { return HalfStorage{b}; }
__device__ inline unsigned short __half_as_ushort(HalfStorage h) { return h.bits; }
__device__ inline float __half2float(HalfStorage h) { return static_cast<float>(__builtin_bit_cast(_Float16, h.bits)); }
__device__ inline HalfStorage __float2half_rn(float f) {  // the hardware conversion rounds to nearest even
  return HalfStorage{__builtin_bit_cast(unsigned short, static_cast<_Float16>(f))};
}
__device__ inline Bfloat16Storage __ushort_as_bfloat16(unsigned short b) { return Bfloat16Storage{b}; }
__device__ inline unsigned short __bfloat16_as_ushort(Bfloat16Storage h) { return h.bits; }
__device__ inline float __bfloat162float(Bfloat16Storage h) { return __uint_as_float(static_cast<unsigned>(h.bits) << 16); }
__device__ inline Bfloat16Storage __float2bfloat16_rn(float f) {  // not NaN (handled by the caller)
  const unsigned u = __float_as_uint(f);
  return Bfloat16Storage{static_cast<unsigned short>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16)};
}

}  // namespace hetccl::gpu

#undef threadIdx
#undef blockIdx
#undef blockDim
#undef gridDim
#define threadIdx (::hetccl::gpu::hetcclThreadIdx())
#define blockIdx (::hetccl::gpu::hetcclBlockIdx())
#define blockDim (::hetccl::gpu::hetcclBlockDim())
#define gridDim (::hetccl::gpu::hetcclGridDim())
// Device side: a short pause inside polling loops.
#define gpuSpinPause() __builtin_amdgcn_s_sleep(1)

#elif defined(__HIP_PLATFORM_AMD__)

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
#define gpuDeviceGetPCIBusId hipDeviceGetPCIBusId
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
#define gpuDeviceGetPCIBusId cudaDeviceGetPCIBusId
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
