// Does hetccl's fp8 rule equal what NCCL 2.28's fp8 kernels compute? NCCL (src/device/reduce_kernel.h,
// sm_90 and newer) converts both fp8 operands to half, applies __hadd / __hmul / __hmax / __hmin in half and
// converts back with the __nv_fp8_e4m3 / __nv_fp8_e5m2 constructor (__NV_SATFINITE, on sm_89+ the
// cvt.rn.satfinite instruction); PreMulSum's scaling is the same __hmul; Avg is PreMulSum by
// __nv_cvt_float_to_fp8(float(1.0 / nranks), __NV_SATFINITE, ...) (src/enqueue.cc, hostToDevRedOp).
//
// This program evaluates those expressions with CUDA's own types on the GPU for all 65,536 input pairs of
// each fp8 type and each operator, and the Avg scalar for nranks 1..100000 on the host, and compares them
// bit for bit with hetccl's host kernels (src/device/host/reduce.cc) and its scalar rule
// (src/device/base/fp8_format.hpp, used by Communicator::resolveOp). Prints every class of difference;
// exit 0 when identical, 1 when not, 77 without a GPU of compute capability >= 8.9.
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "device/base/fp8_format.hpp"
#include "device/host/reduce.hpp"

namespace {

template <typename F8>
__global__ void ncclExpression(int op, uint8_t* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 65536) return;
  F8 x, y;
  x.__x = static_cast<__nv_fp8_storage_t>(i >> 8);
  y.__x = static_cast<__nv_fp8_storage_t>(i & 0xff);
  const __half hx = static_cast<__half>(x), hy = static_cast<__half>(y);
  __half r;
  switch (op) {
    case 0: r = __hadd(hx, hy); break;
    case 1: r = __hmul(hx, hy); break;
    case 2: r = __hmax(hx, hy); break;
    default: r = __hmin(hx, hy); break;
  }
  out[i] = F8(r).__x;
}

int compareType(const char* name, hetccl::DataType type, bool e4m3, uint8_t* deviceOut) {
  const hetccl::RedOpKind ops[] = {hetccl::RedOpKind::Sum, hetccl::RedOpKind::Prod, hetccl::RedOpKind::Max,
                                   hetccl::RedOpKind::Min};
  int differences = 0;
  std::vector<uint8_t> nccl(65536);
  for (int op = 0; op < 4; ++op) {
    if (e4m3)
      ncclExpression<__nv_fp8_e4m3><<<256, 256>>>(op, deviceOut);
    else
      ncclExpression<__nv_fp8_e5m2><<<256, 256>>>(op, deviceOut);
    if (cudaMemcpy(nccl.data(), deviceOut, nccl.size(), cudaMemcpyDeviceToHost) != cudaSuccess) {
      std::printf("fp8_nccl_rule: kernel or copy failed: %s\n", cudaGetErrorString(cudaGetLastError()));
      return 1;
    }
    std::vector<uint8_t> ours(65536), src(65536);
    for (int i = 0; i < 65536; ++i) {
      ours[i] = static_cast<uint8_t>(i >> 8);
      src[i] = static_cast<uint8_t>(i & 0xff);
    }
    hetccl::device::hostReduceFn(type, ops[op])(ours.data(), src.data(), ours.size());
    int wrong = 0;
    for (int i = 0; i < 65536; ++i) {
      if (ours[i] == nccl[i]) continue;
      if (++wrong <= 10)
        std::printf("fp8_nccl_rule: %s %s(0x%02x, 0x%02x): nccl 0x%02x, hetccl 0x%02x\n", name,
                    hetccl::redOpName(ops[op]), i >> 8, i & 0xff, nccl[i], ours[i]);
    }
    std::printf("fp8_nccl_rule: %s %-4s: %d of 65536 pairs differ\n", name, hetccl::redOpName(ops[op]), wrong);
    differences += wrong;
  }
  int scalarWrong = 0;
  for (int n = 1; n <= 100000; ++n) {
    const float inverse = static_cast<float>(1.0 / n);
    const uint8_t nccl8 = __nv_cvt_float_to_fp8(inverse, __NV_SATFINITE, e4m3 ? __NV_E4M3 : __NV_E5M2);
    uint32_t inverseBits = 0;
    std::memcpy(&inverseBits, &inverse, 4);
    const uint8_t ours8 = hetccl::fp8::fromFloatBits(inverseBits, e4m3 ? hetccl::fp8::kE4M3 : hetccl::fp8::kE5M2);
    if (nccl8 != ours8 && ++scalarWrong <= 5)
      std::printf("fp8_nccl_rule: %s avg scalar 1/%d: nccl 0x%02x, hetccl 0x%02x\n", name, n, nccl8, ours8);
  }
  std::printf("fp8_nccl_rule: %s avg scalar: %d of 100000 rank counts differ\n", name, scalarWrong);
  return differences + scalarWrong;
}

}  // namespace

int main() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    std::printf("fp8_nccl_rule: SKIPPED: no CUDA device\n");
    return 77;
  }
  if (major * 10 + minor < 89) {
    std::printf("fp8_nccl_rule: SKIPPED: compute capability %d.%d (NCCL reduces fp8 from sm_90)\n", major, minor);
    return 77;
  }
  uint8_t* out = nullptr;
  if (cudaMalloc(&out, 65536) != cudaSuccess) return 1;
  const int wrong = compareType("f8e4m3", hetccl::DataType::Float8e4m3, true, out) +
                    compareType("f8e5m2", hetccl::DataType::Float8e5m2, false, out);
  cudaFree(out);
  std::printf("fp8_nccl_rule: %s\n", wrong == 0 ? "OK: identical to NCCL's expressions" : "DIFFERENT");
  return wrong == 0 ? 0 : 1;
}
