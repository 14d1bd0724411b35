// The device source of libhetccl-hip.so: the single-source kernels of src/device/gpu behind the extern "C"
// names and parameter lists of kernel_abi.hpp. Compiled only in the freestanding HIP mode of gpu_alias.hpp
// (no HIP header, no device library): first preprocessed into one self-contained text (kernels_rtc.hip,
// embedded in the plugin for hiprtc), then that text is compiled by clang for each embedded architecture.
#ifndef HETCCL_HIP_FREESTANDING
#error "kernels.hip is compiled with -DHETCCL_HIP_FREESTANDING=1 (see src/device/hip/CMakeLists.txt)"
#endif

#include "device/gpu/flag_kernels.cuh"
#include "device/gpu/ll_kernels.cuh"
#include "device/gpu/reduce_kernels.cuh"
#include "device/gpu/stream_ops_kernels.cuh"
#include "device/hip/kernel_abi.hpp"

namespace hetccl::gpu::hip_abi {

static_assert(sizeof(StreamOpBatch) == sizeof(::hetccl::hip_plugin::abi::StreamOpBatch), "StreamOpBatch layout");
static_assert(kElementwiseThreads == static_cast<int>(::hetccl::hip_plugin::abi::kElementwiseThreads), "block size");

template <typename T, typename F>
__device__ inline void run(void* dst, const void* src, uint64_t count, uint32_t vectorized, F f) {
  elementwiseLoop(static_cast<T*>(dst), static_cast<const T*>(src), count, vectorized != 0, f);
}

template <typename T>
__device__ inline ScaleFn<T> scaleFn(uint64_t arg) {
  ScaleFn<T> f;
  __builtin_memcpy(&f.factor, &arg, sizeof(T));  // the scalar's bytes are the low bytes of arg
  return f;
}

}  // namespace hetccl::gpu::hip_abi

#define HETCCL_ELEMENTWISE_PARAMS void *dst, const void *src, uint64_t count, uint32_t vectorized, uint64_t arg
#define HETCCL_ELEMENTWISE_KERNEL(name, T, functor)                                                   \
  extern "C" __global__ void __launch_bounds__(256) name(HETCCL_ELEMENTWISE_PARAMS) {                 \
    (void)arg;                                                                                        \
    ::hetccl::gpu::hip_abi::run<T>(dst, src, count, vectorized, functor);                             \
  }
#define HETCCL_TYPE_KERNELS(suffix, T)                                                                               \
  HETCCL_ELEMENTWISE_KERNEL(hetccl_reduce_##suffix##_sum, T, (::hetccl::gpu::AccumulateFn<T, ::hetccl::gpu::SumOp>{})) \
  HETCCL_ELEMENTWISE_KERNEL(hetccl_reduce_##suffix##_prod, T,                                                        \
                            (::hetccl::gpu::AccumulateFn<T, ::hetccl::gpu::ProdOp>{}))                               \
  HETCCL_ELEMENTWISE_KERNEL(hetccl_reduce_##suffix##_max, T,                                                         \
                            (::hetccl::gpu::AccumulateFn<T, typename ::hetccl::gpu::MinMaxOf<T>::Max>{}))            \
  HETCCL_ELEMENTWISE_KERNEL(hetccl_reduce_##suffix##_min, T,                                                         \
                            (::hetccl::gpu::AccumulateFn<T, typename ::hetccl::gpu::MinMaxOf<T>::Min>{}))            \
  HETCCL_ELEMENTWISE_KERNEL(hetccl_scale_##suffix, T, (::hetccl::gpu::hip_abi::scaleFn<T>(arg)))                     \
  HETCCL_ELEMENTWISE_KERNEL(hetccl_divide_##suffix, T, (::hetccl::gpu::DivideFn<T>{arg}))

// kernel_abi.hpp kTypeNames, in hetccl::DataType order.
HETCCL_TYPE_KERNELS(i8, int8_t)
HETCCL_TYPE_KERNELS(u8, uint8_t)
HETCCL_TYPE_KERNELS(i32, int32_t)
HETCCL_TYPE_KERNELS(u32, uint32_t)
HETCCL_TYPE_KERNELS(i64, int64_t)
HETCCL_TYPE_KERNELS(u64, uint64_t)
HETCCL_TYPE_KERNELS(f16, ::hetccl::gpu::HalfBits)
HETCCL_TYPE_KERNELS(f32, float)
HETCCL_TYPE_KERNELS(f64, double)
HETCCL_TYPE_KERNELS(bf16, ::hetccl::gpu::Bfloat16Bits)
HETCCL_TYPE_KERNELS(f8e4m3, ::hetccl::gpu::Fp8E4M3Bits)
HETCCL_TYPE_KERNELS(f8e5m2, ::hetccl::gpu::Fp8E5M2Bits)

extern "C" __global__ void hetccl_wait_flag(const uint64_t* flag, uint64_t value) {
  ::hetccl::gpu::waitFlag(flag, value);
}

extern "C" __global__ void hetccl_write_flag(uint64_t* flag, uint64_t value) { ::hetccl::gpu::writeFlag(flag, value); }

extern "C" __global__ void hetccl_stream_ops(::hetccl::gpu::StreamOpBatch batch) { ::hetccl::gpu::runStreamOps(batch); }

// The latency path (kernel_abi.hpp 5.): kTypeNames x kOpNames.
#define HETCCL_LL_KERNEL(suffix, opname, T, Op)                                                            \
  extern "C" __global__ void __launch_bounds__(::hetccl::gpu::ll::kMaxBlockThreads)                      \
      hetccl_ll_allreduce_##suffix##_##opname(hetcclGpuLlAllReduce_t a) {                                 \
    ::hetccl::gpu::llAllReduceBody<T, Op>(a);                                                             \
  }
#define HETCCL_LL_TYPE_KERNELS(suffix, T)                                                                  \
  HETCCL_LL_KERNEL(suffix, sum, T, ::hetccl::gpu::SumOp)                                                  \
  HETCCL_LL_KERNEL(suffix, prod, T, ::hetccl::gpu::ProdOp)                                                \
  HETCCL_LL_KERNEL(suffix, max, T, typename ::hetccl::gpu::MinMaxOf<T>::Max)                              \
  HETCCL_LL_KERNEL(suffix, min, T, typename ::hetccl::gpu::MinMaxOf<T>::Min)

HETCCL_LL_TYPE_KERNELS(i8, int8_t)
HETCCL_LL_TYPE_KERNELS(u8, uint8_t)
HETCCL_LL_TYPE_KERNELS(i32, int32_t)
HETCCL_LL_TYPE_KERNELS(u32, uint32_t)
HETCCL_LL_TYPE_KERNELS(i64, int64_t)
HETCCL_LL_TYPE_KERNELS(u64, uint64_t)
HETCCL_LL_TYPE_KERNELS(f16, ::hetccl::gpu::HalfBits)
HETCCL_LL_TYPE_KERNELS(f32, float)
HETCCL_LL_TYPE_KERNELS(f64, double)
HETCCL_LL_TYPE_KERNELS(bf16, ::hetccl::gpu::Bfloat16Bits)
HETCCL_LL_TYPE_KERNELS(f8e4m3, ::hetccl::gpu::Fp8E4M3Bits)
HETCCL_LL_TYPE_KERNELS(f8e5m2, ::hetccl::gpu::Fp8E5M2Bits)
