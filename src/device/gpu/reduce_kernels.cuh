// GPU reduce / scale / divide for every hetccl data type and operator, single-source for CUDA and HIP.
// A plugin's kernel file includes this once and exposes the three launch functions (plain host
// functions over void pointers and integer type/op codes, so the plugin's C++ files need no kernels).
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "device/gpu/elementwise.cuh"

namespace hetccl::gpu {

// Type codes: hetccl::DataType (NCCL's order). Op codes: hetccl::RedOpKind.
enum : int {
  kInt8, kUint8, kInt32, kUint32, kInt64, kUint64, kFloat16, kFloat32, kFloat64, kBfloat16, kFloat8e4m3, kFloat8e5m2
};

/// The Max / Min operators of storage type T: the fp8 types ignore NaN operands (NCCL's rule).
template <typename T> struct MinMaxOf { using Max = MaxOp; using Min = MinOp; };
template <> struct MinMaxOf<Fp8E4M3Bits> { using Max = NanIgnoringMinMaxOp<true>; using Min = NanIgnoringMinMaxOp<false>; };
template <> struct MinMaxOf<Fp8E5M2Bits> { using Max = NanIgnoringMinMaxOp<true>; using Min = NanIgnoringMinMaxOp<false>; };
enum : int { kSum, kProd, kMax, kMin, kAvg, kPreMulSum };

template <typename T, typename Op>
struct AccumulateFn {
  __device__ T operator()(T d, T s) const {
    using Tr = ElementTraits<T>;
    return Tr::store(Op::apply(Tr::load(d), Tr::load(s)));
  }
};

template <typename T>
struct ScaleFn {
  T factor;
  __device__ T operator()(T, T s) const {
    using Tr = ElementTraits<T>;
    return Tr::store(ProdOp::apply(Tr::load(s), Tr::load(factor)));
  }
};

template <typename T>
struct DivideFn {
  uint64_t n;
  __device__ T operator()(T d, T) const {
    using Tr = ElementTraits<T>;
    using C = typename Tr::Compute;
    if constexpr (kIsFloat<C>) {
      return Tr::store(Tr::load(d) / static_cast<C>(n));
    } else if constexpr (static_cast<C>(-1) < static_cast<C>(0)) {  // signed: in int64, divisor clamped
      const int64_t divisor = n > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(n);
      return static_cast<C>(static_cast<int64_t>(d) / divisor);
    } else {
      return static_cast<C>(static_cast<uint64_t>(d) / n);
    }
  }
};

/// Calls visit(T{}) with the storage type of a type code; false for an unknown code.
template <typename Visitor>
bool visitElementType(int type, Visitor&& visit) {
  switch (type) {
    case kInt8: visit(int8_t{}); return true;
    case kUint8: visit(uint8_t{}); return true;
    case kInt32: visit(int32_t{}); return true;
    case kUint32: visit(uint32_t{}); return true;
    case kInt64: visit(int64_t{}); return true;
    case kUint64: visit(uint64_t{}); return true;
    case kFloat16: visit(HalfBits{}); return true;
    case kFloat32: visit(float{}); return true;
    case kFloat64: visit(double{}); return true;
    case kBfloat16: visit(Bfloat16Bits{}); return true;
    case kFloat8e4m3: visit(Fp8E4M3Bits{}); return true;
    case kFloat8e5m2: visit(Fp8E5M2Bits{}); return true;
  }
  return false;
}

#ifndef HETCCL_GPU_DEVICE_ONLY
/// dst = dst (op) src. Returns gpuSuccess, the launch error, or `invalid` for an unknown type or op.
inline gpuError_t launchReduce(void* dst, const void* src, size_t count, int type, int op, gpuStream_t stream,
                               gpuError_t invalid) {
  gpuError_t err = invalid;
  visitElementType(type, [&](auto element) {
    using T = decltype(element);
    T* d = static_cast<T*>(dst);
    const T* s = static_cast<const T*>(src);
    switch (op) {
      case kSum: case kAvg: case kPreMulSum: err = launchElementwise(d, s, count, AccumulateFn<T, SumOp>{}, stream); break;
      case kProd: err = launchElementwise(d, s, count, AccumulateFn<T, ProdOp>{}, stream); break;
      case kMax: err = launchElementwise(d, s, count, AccumulateFn<T, typename MinMaxOf<T>::Max>{}, stream); break;
      case kMin: err = launchElementwise(d, s, count, AccumulateFn<T, typename MinMaxOf<T>::Min>{}, stream); break;
      default: break;
    }
  });
  return err;
}

/// dst = src * scalar (scalar: host bytes of one element).
inline gpuError_t launchScale(void* dst, const void* src, size_t count, int type, const void* scalar,
                              gpuStream_t stream, gpuError_t invalid) {
  gpuError_t err = invalid;
  visitElementType(type, [&](auto element) {
    using T = decltype(element);
    ScaleFn<T> f;
    memcpy(&f.factor, scalar, sizeof(T));
    err = launchElementwise(static_cast<T*>(dst), static_cast<const T*>(src), count, f, stream);
  });
  return err;
}

/// buf = buf / n (n >= 1).
inline gpuError_t launchDivide(void* buf, size_t count, int type, uint64_t n, gpuStream_t stream,
                               gpuError_t invalid) {
  gpuError_t err = invalid;
  visitElementType(type, [&](auto element) {
    using T = decltype(element);
    err = launchElementwise(static_cast<T*>(buf), static_cast<const T*>(buf), count, DivideFn<T>{n}, stream);
  });
  return err;
}

/// Loads `kernel` on the current device unless `err` holds an earlier failure (which it then keeps).
inline void preloadKernel(gpuError_t& err, const void* kernel) {
  gpuFuncAttributes attributes;
  if (err == gpuSuccess) err = gpuFuncGetAttributes(&attributes, kernel);
}

/// Loads every reduce / scale / divide kernel on the current device (CUDA_MODULE_LOADING=LAZY loads a kernel
/// at its first launch, which may wait for the whole device: see flag_kernels.cuh). First error or gpuSuccess.
inline gpuError_t preloadReduceKernels() {
  gpuError_t err = gpuSuccess;
  auto load = [&](const void* kernel) { preloadKernel(err, kernel); };
  for (int type = kInt8; type <= kFloat8e5m2; ++type)
    visitElementType(type, [&](auto element) {
      using T = decltype(element);
      load(reinterpret_cast<const void*>(&elementwiseKernel<T, AccumulateFn<T, SumOp>>));
      load(reinterpret_cast<const void*>(&elementwiseKernel<T, AccumulateFn<T, ProdOp>>));
      load(reinterpret_cast<const void*>(&elementwiseKernel<T, AccumulateFn<T, typename MinMaxOf<T>::Max>>));
      load(reinterpret_cast<const void*>(&elementwiseKernel<T, AccumulateFn<T, typename MinMaxOf<T>::Min>>));
      load(reinterpret_cast<const void*>(&elementwiseKernel<T, ScaleFn<T>>));
      load(reinterpret_cast<const void*>(&elementwiseKernel<T, DivideFn<T>>));
    });
  return err;
}

#endif  // HETCCL_GPU_DEVICE_ONLY

}  // namespace hetccl::gpu
