// The HIP plugin's implementations of the hetcclGpuPlugin_t entry points (contracts in
// src/device/base/gpu_plugin.h), grouped by file. plugin.cc puts them into the exported struct.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "device/base/gpu_plugin.h"
#include "device/hip/hip_api.hpp"

namespace hetccl::hip_plugin {

// memory.cc
int allocDevice(void** ptr, size_t bytes);
int freeDevice(void* ptr);
int allocPinned(void** ptr, size_t bytes);
int freePinned(void* ptr);
int hostRegister(void* ptr, size_t bytes);
int hostUnregister(void* ptr);
int pointerQuery(const void* ptr, int* memType, int* device);
int memcpySync(void* dst, const void* src, size_t bytes);
int memsetSync(void* dst, int byteValue, size_t bytes);
/// hipPointerGetAttributes; *known = false (and HETCCL_GPU_OK) for memory the runtime does not know.
int pointerAttributes(const void* ptr, api::PointerAttributes* attributes, bool* known);

// streams.cc
int streamCreate(void** stream);
int streamDestroy(void* stream);
int streamSynchronize(void* stream);
int streamQuery(void* stream);
int eventCreate(void** event);
int eventDestroy(void* event);
int eventRecord(void* event, void* stream);
int eventQuery(void* event);
int eventSynchronize(void* event);
int streamWaitEvent(void* stream, void* event);
int memcpyAsync(void* dst, const void* src, size_t bytes, void* stream);
int memsetAsync(void* dst, int byteValue, size_t bytes, void* stream);

// flags.cc
int streamWaitFlag(void* stream, const uint64_t* flag, uint64_t value, unsigned flags);
int streamWriteFlag(void* stream, uint64_t* flag, uint64_t value, unsigned flags);
int flagMethod(int* native);

// reduce.cc
int reduce(void* dst, const void* src, size_t count, int dataType, int op, void* stream);
int scale(void* dst, const void* src, size_t count, int dataType, const void* scalar, void* stream);
int divide(void* buf, size_t count, int dataType, uint64_t n, void* stream);

// stream_ops.cc (v2)
int streamOps(void* stream, const hetcclGpuStreamOp_t* ops, unsigned count);
int streamCaptureInfo(void* stream, int* capturing, uint64_t* captureId);
int devicePointer(const void* ptr, void** devicePtr);

}  // namespace hetccl::hip_plugin
