#include "device/cuda/stream_memops.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <atomic>
#include <mutex>

#include "device/cuda/driver_entry.hpp"
#include "device/cuda/plugin_state.hpp"

namespace hetccl::cuda_plugin {
namespace {

constexpr int kMaxDevices = 64;

struct DriverMemOps {
  PFN_cuStreamWaitValue64_v11070 wait64 = nullptr;
  PFN_cuStreamWriteValue64_v11070 write64 = nullptr;
  PFN_cuStreamBatchMemOp_v11070 batch = nullptr;  // optional: one call for several operations
  PFN_cuDeviceGetAttribute_v2000 getAttribute = nullptr;
};

const DriverMemOps& driver() {
  static const DriverMemOps ops = [] {
    DriverMemOps o;
    resolveDriverEntry("cuStreamWaitValue64", &o.wait64);
    resolveDriverEntry("cuStreamWriteValue64", &o.write64);
    resolveDriverEntry("cuStreamBatchMemOp", &o.batch);
    resolveDriverEntry("cuDeviceGetAttribute", &o.getAttribute);
    return o;
  }();
  return ops;
}

// Per device: 0 unknown, 1 supported, 2 unsupported.
std::atomic<int> gSupport[kMaxDevices];

}  // namespace

bool nativeOnCurrentDevice() noexcept {
  int device = 0;
  if (gpuGetDevice(&device) != gpuSuccess) {
    (void)gpuGetLastError();
    return false;
  }
  return nativeFlagOpsSupported(device);
}

bool nativeFlagOpsSupported(int device) noexcept {
  if (device < 0 || device >= kMaxDevices) return false;
  const int known = gSupport[device].load(std::memory_order_acquire);
  if (known != 0) return known == 1;
  const DriverMemOps& ops = driver();
  int attribute = 0;
  const bool supported = ops.wait64 && ops.write64 && ops.getAttribute &&
                         ops.getAttribute(&attribute, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS,
                                          static_cast<CUdevice>(device)) == CUDA_SUCCESS &&
                         attribute != 0;
  int expected = 0;
  if (gSupport[device].compare_exchange_strong(expected, supported ? 1 : 2))
    CUDA_PLUGIN_INFO("device %d: stream flag waits/writes use %s", device,
                     supported ? "cuStreamWaitValue64/cuStreamWriteValue64"
                               : "polling kernels (no 64-bit stream memory operations)");
  return supported;
}

int nativeWaitFlag(gpuStream_t stream, const uint64_t* deviceFlag, uint64_t value) noexcept {
  const CUresult r = driver().wait64(reinterpret_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(deviceFlag),
                                     value, CU_STREAM_WAIT_VALUE_GEQ);
  return r == CUDA_SUCCESS ? HETCCL_GPU_OK : driverFail(r, "cuStreamWaitValue64");
}

int nativeWriteFlag(gpuStream_t stream, uint64_t* deviceFlag, uint64_t value) noexcept {
  const CUresult r = driver().write64(reinterpret_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(deviceFlag),
                                      value, CU_STREAM_WRITE_VALUE_DEFAULT);
  return r == CUDA_SUCCESS ? HETCCL_GPU_OK : driverFail(r, "cuStreamWriteValue64");
}

int nativeStreamOps(gpuStream_t stream, const hetcclGpuStreamOp_t* ops, unsigned count) noexcept {
  CUstreamBatchMemOpParams params[HETCCL_GPU_MAX_STREAM_OPS] = {};
  for (unsigned i = 0; i < count; ++i) {
    const auto address = reinterpret_cast<CUdeviceptr>(ops[i].word);
    if (ops[i].kind == HETCCL_GPU_OP_WRITE) {
      params[i].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
      params[i].writeValue.address = address;
      params[i].writeValue.value64 = ops[i].value;
      params[i].writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;  // after earlier writes are visible
    } else {
      params[i].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
      params[i].waitValue.address = address;
      params[i].waitValue.value64 = ops[i].value;
      params[i].waitValue.flags = ops[i].kind == HETCCL_GPU_OP_WAIT_EQ ? CU_STREAM_WAIT_VALUE_EQ : CU_STREAM_WAIT_VALUE_GEQ;
    }
  }
  const auto s = reinterpret_cast<CUstream>(stream);
  if (driver().batch && count > 1) {
    const CUresult r = driver().batch(s, count, params, 0);
    return r == CUDA_SUCCESS ? HETCCL_GPU_OK : driverFail(r, "cuStreamBatchMemOp");
  }
  for (unsigned i = 0; i < count; ++i) {
    const CUresult r = ops[i].kind == HETCCL_GPU_OP_WRITE
                           ? driver().write64(s, params[i].writeValue.address, ops[i].value, params[i].writeValue.flags)
                           : driver().wait64(s, params[i].waitValue.address, ops[i].value, params[i].waitValue.flags);
    if (r != CUDA_SUCCESS) return driverFail(r, ops[i].kind == HETCCL_GPU_OP_WRITE ? "cuStreamWriteValue64" : "cuStreamWaitValue64");
  }
  return HETCCL_GPU_OK;
}

}  // namespace hetccl::cuda_plugin
