// The kernel ABI of libhetccl-hip.so: the extern "C" kernels its code objects contain (kernels.hip, built
// at build time for the embedded architectures, or at run time by hiprtc), their names, parameter lists
// and launch shapes. Shared by the device source and the host code (which launches them with
// hipModuleLaunchKernel), so both sides agree by construction. Plain C++17, no HIP header.
//
// CHANGED: (nothing yet; helpers implementing a fake runtime: look here for changes to this file)
//
// Kernels (kernelParams of hipModuleLaunchKernel: one pointer to each parameter, in this order):
//
//  1. Elementwise: dst[i] = f(dst[i], src[i]) for i < count (src/device/gpu/elementwise.cuh, with the
//     functors of reduce_kernels.cuh). Every elementwise kernel has the same parameters (ElementwiseArgs):
//        void* dst, const void* src, uint64_t count, uint32_t vectorized, uint64_t arg
//     - vectorized = 1 when dst and src are both 16-byte aligned (16-byte packs, then a scalar tail);
//     - arg: reduce: unused (0); scale: the scalar's element bytes in the low bytes (little endian), rest 0;
//       divide: n (>= 1); for divide src == dst.
//     Names: "hetccl_reduce_<type>_<op>", "hetccl_scale_<type>", "hetccl_divide_<type>", with <type> one of
//     kTypeNames (index = hetccl::DataType code) and <op> one of kOpNames (index = RedOpKind code; only
//     sum, prod, max, min exist: avg and premulsum launch the sum kernel).
//       reduce:  dst[i] = dst[i] (op) src[i]
//       scale:   dst[i] = src[i] * scalar
//       divide:  dst[i] = dst[i] / n            (integers truncate toward zero)
//     Launch: block kElementwiseThreads x 1 x 1, grid elementwiseBlocks(count, elementBytes, vectorized)
//     x 1 x 1, no dynamic shared memory. Kernels use a grid-stride loop, so any grid is correct.
//
//  2. "hetccl_wait_flag"(const uint64_t* flag, uint64_t value): one thread polls until
//     (int64_t)(*flag - value) >= 0, then a system-scope fence. Grid 1, block 1.
//  3. "hetccl_write_flag"(uint64_t* flag, uint64_t value): system fence, *flag = value, system fence.
//     Grid 1, block 1.
//  4. "hetccl_stream_ops"(StreamOpBatch batch): one thread runs batch.op[0 .. batch.count) in order
//     (HETCCL_GPU_OP_* of gpu_plugin.h: WAIT_GEQ, WAIT_EQ, WRITE, STAMP_CHECK); `word` / `report` are
//     device addresses. The batch is passed by value (kernelParams[0] points to a StreamOpBatch).
//     Grid 1, block 1.
//  5. The latency path: "hetccl_ll_allreduce_<type>_<op>"(hetcclGpuLlAllReduce_t args), by value
//     (kernelParams[0] points to the struct of gpu_plugin.h), <op> of kOpNames (avg runs the sum kernel, which
//     divides when args.op is avg). Runs src/device/gpu/ll_protocol.cuh; grid and block of
//     hetccl::gpu::ll::launchShape(count * element bytes, nranks) (blocks x 1 x 1, threads x 1 x 1).
//     (llKernelName below writes the name.)
// Flag and word addresses are device addresses (hipHostGetDevicePointer of pinned memory).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "device/base/gpu_plugin.h"

namespace hetccl::hip_plugin::abi {

constexpr unsigned kElementwiseThreads = 256;      // block size of every elementwise kernel
constexpr unsigned kElementwiseMaxBlocks = 4096;   // grid cap (grid-stride beyond)
constexpr int kNumTypes = 12;                      // hetccl::DataType int8 .. f8e5m2
constexpr int kNumKernelOps = 4;                   // sum, prod, max, min

/// Kernel name part per hetccl::DataType code (NCCL order), and element sizes.
constexpr const char* kTypeNames[kNumTypes] = {"i8",  "u8",  "i32", "u32",  "i64",    "u64",
                                               "f16", "f32", "f64", "bf16", "f8e4m3", "f8e5m2"};
constexpr unsigned kTypeBytes[kNumTypes] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
/// Kernel name part per reduction operator code (hetccl::RedOpKind sum=0, prod=1, max=2, min=3).
constexpr const char* kOpNames[kNumKernelOps] = {"sum", "prod", "max", "min"};

/// The parameters of every elementwise kernel, in order (for reference and for fakes; the host passes
/// pointers to its own locals of these types).
struct ElementwiseArgs {
  void* dst;
  const void* src;
  uint64_t count;
  uint32_t vectorized;
  uint64_t arg;
};

/// The by-value parameter of hetccl_stream_ops (same layout as hetccl::gpu::StreamOpBatch).
struct StreamOpBatch {
  hetcclGpuStreamOp_t op[HETCCL_GPU_MAX_STREAM_OPS];
  unsigned count;
};
static_assert(sizeof(hetcclGpuStreamOp_t) == 64, "hetcclGpuStreamOp_t layout");
static_assert(sizeof(StreamOpBatch) == 520, "StreamOpBatch layout");

constexpr const char* kWaitFlagKernel = "hetccl_wait_flag";
constexpr const char* kWriteFlagKernel = "hetccl_write_flag";
constexpr const char* kStreamOpsKernel = "hetccl_stream_ops";

/// Grid size (blocks) of an elementwise launch: the CUDA plugin's rule (elementwise.cuh).
constexpr unsigned elementwiseBlocks(uint64_t count, unsigned elementBytes, bool vectorized) {
  const uint64_t pack = 16 / elementBytes;
  const uint64_t work = vectorized ? count / pack + pack : count;
  uint64_t blocks = (work + kElementwiseThreads - 1) / kElementwiseThreads;
  return static_cast<unsigned>(blocks > kElementwiseMaxBlocks ? kElementwiseMaxBlocks : blocks);
}

enum class ElementwiseKind { kReduce, kScale, kDivide };

/// Writes the kernel name of an elementwise kernel into `out` (64 bytes are always enough). `op` is
/// used by kReduce only and must be 0..3 (map avg / premulsum to sum first).
inline void elementwiseKernelName(char* out, size_t size, ElementwiseKind kind, int type, int op) {
  const char* prefix = kind == ElementwiseKind::kReduce ? "hetccl_reduce_"
                       : kind == ElementwiseKind::kScale ? "hetccl_scale_"
                                                         : "hetccl_divide_";
  size_t n = 0;
  auto put = [&](const char* s) {
    for (; *s && n + 1 < size; ++s) out[n++] = *s;
  };
  put(prefix);
  put(kTypeNames[type]);
  if (kind == ElementwiseKind::kReduce) {
    put("_");
    put(kOpNames[op]);
  }
  if (size) out[n] = '\0';
}

/// Writes the name of the latency path's kernel of `type` and `op` (0..3) into `out` (64 bytes suffice).
inline void llKernelName(char* out, size_t size, int type, int op) {
  size_t n = 0;
  auto put = [&](const char* s) {
    for (; *s && n + 1 < size; ++s) out[n++] = *s;
  };
  put("hetccl_ll_allreduce_");
  put(kTypeNames[type]);
  put("_");
  put(kOpNames[op]);
  if (size) out[n] = '\0';
}

}  // namespace hetccl::hip_plugin::abi
