// Host code shared by the GPU plugins (libhetccl-cuda.so, libhetccl-hip.so; each compiles
// plugin_support.cc into itself): the core's logger, the thread's last error, the validation of a batch
// of stream operations and of the reduce / scale / divide arguments, the declarations of the entry
// points every plugin implements in its own namespace, and the exported table that lists them.
// Vendor-neutral C++: no vendor header.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <optional>

#include "device/base/gpu_plugin.h"

namespace hetccl::gpu_plugin {

/// Stores the core's logger (nullptr: no logging).
void setLogger(hetcclGpuLogger_v1_t logger) noexcept;
/// Formats and passes one line to the logger, if any (printf-style).
void logf(int level, const char* file, int line, const char* format, ...) noexcept
    __attribute__((format(printf, 4, 5)));
/// Records "<call>: <detail>" as the thread's last error and returns `code`.
int fail(int code, const char* call, const char* detail) noexcept;
/// Records "<call>: <name>: <text>" (a vendor error's name and text) as the thread's last error; returns
/// HETCCL_GPU_ERR_NO_DEVICE when `noDevice`, else HETCCL_GPU_ERR_RUNTIME.
int failVendor(const char* call, const char* name, const char* text, bool noDevice) noexcept;
/// The thread's last error text ("" when none). Never null.
const char* lastError() noexcept;
/// Why a streamOps batch is malformed (null, a count outside 1..HETCCL_GPU_MAX_STREAM_OPS, an unknown kind,
/// a null or misaligned word, a STAMP_CHECK without an aligned report), or nullptr when it is well formed.
const char* invalidStreamOps(const hetcclGpuStreamOp_t* ops, unsigned count) noexcept;

/// The argument checks of the reduce, scale and divide entry points (reduce.cc of each plugin), in this
/// order: a data type outside hetccl::DataType (reduce: or an operator outside RedOpKind), then nothing to
/// do (count 0; divide: or n 0, which changes nothing, as on the host), then a null buffer (or scalar).
/// Each returns what its entry point returns without launching the kernel -- HETCCL_GPU_OK, or
/// HETCCL_GPU_ERR_ARGUMENT recorded with fail() (e.g. "reduce: null buffer") -- or nullopt when the
/// kernel is to run.
std::optional<int> checkReduceArgs(void* dst, const void* src, size_t count, int dataType, int op) noexcept;
std::optional<int> checkScaleArgs(void* dst, const void* src, size_t count, int dataType, const void* scalar) noexcept;
std::optional<int> checkDivideArgs(void* buf, size_t count, int dataType, uint64_t n) noexcept;

}  // namespace hetccl::gpu_plugin

/// The entry points of hetcclGpuPlugin_t a plugin defines in its namespace, grouped by the file that
/// holds them in each plugin (plugin.cc defines init ... setDevice and the table).
#define HETCCL_GPU_PLUGIN_DECLARE_ENTRY_POINTS                                                  \
  /* memory.cc */                                                                              \
  int allocDevice(void** ptr, size_t bytes);                                                   \
  int freeDevice(void* ptr);                                                                   \
  int allocPinned(void** ptr, size_t bytes);                                                   \
  int freePinned(void* ptr);                                                                   \
  int hostRegister(void* ptr, size_t bytes);                                                   \
  int hostUnregister(void* ptr);                                                               \
  int pointerQuery(const void* ptr, int* memType, int* device);                                \
  int memcpySync(void* dst, const void* src, size_t bytes);                                    \
  int memsetSync(void* dst, int byteValue, size_t bytes);                                      \
  /* streams.cc */                                                                             \
  int streamCreate(void** stream);                                                             \
  int streamDestroy(void* stream);                                                             \
  int streamSynchronize(void* stream);                                                         \
  int streamQuery(void* stream);                                                               \
  int eventCreate(void** event);                                                               \
  int eventDestroy(void* event);                                                               \
  int eventRecord(void* event, void* stream);                                                  \
  int eventQuery(void* event);                                                                 \
  int eventSynchronize(void* event);                                                           \
  int streamWaitEvent(void* stream, void* event);                                              \
  int memcpyAsync(void* dst, const void* src, size_t bytes, void* stream);                     \
  int memsetAsync(void* dst, int byteValue, size_t bytes, void* stream);                       \
  /* flags.cc */                                                                               \
  int streamWaitFlag(void* stream, const uint64_t* flag, uint64_t value, unsigned flags);      \
  int streamWriteFlag(void* stream, uint64_t* flag, uint64_t value, unsigned flags);           \
  int flagMethod(int* native);                                                                 \
  /* reduce.cc */                                                                              \
  int reduce(void* dst, const void* src, size_t count, int dataType, int op, void* stream);    \
  int scale(void* dst, const void* src, size_t count, int dataType, const void* scalar,        \
            void* stream);                                                                     \
  int divide(void* buf, size_t count, int dataType, uint64_t n, void* stream);                 \
  /* stream_ops.cc (v2) */                                                                     \
  int streamOps(void* stream, const hetcclGpuStreamOp_t* ops, unsigned count);                 \
  int streamCaptureInfo(void* stream, int* capturing, uint64_t* captureId);                    \
  int devicePointer(const void* ptr, void** devicePtr);                                         \
  /* ipc.cc (v3) */                                                                            \
  int ipcExport(const void* ptr, void* handle, size_t* offset, size_t* allocBytes);            \
  int ipcOpen(const void* handle, void** base, size_t* bytes);                                 \
  int ipcClose(void* base);                                                                    \
  /* streams.cc (v3) */                                                                        \
  int memcpyBatchAsync(void* const* dsts, const void* const* srcs, const size_t* sizes, size_t count, \
                       void* stream);                                                              \
  /* ll_allreduce.cc (v4) */                                                                      \
  int llAllReduce(const hetcclGpuLlAllReduce_t* args, void* stream);

/// The exported `hetcclGpuPlugin_v4` of a plugin whose entry points live in namespace `ns` (plugin.cc,
/// after its own init, lastErrorText, versions, deviceCount, getDevice and setDevice), named `vendor`;
/// `busIdEntry` is its deviceBusId or NULL.
#define HETCCL_GPU_PLUGIN_DEFINE_TABLE(ns, vendor, busIdEntry)                                   \
  extern "C" __attribute__((visibility("default"))) const hetcclGpuPlugin_t hetcclGpuPlugin_v4 = { \
      .version = HETCCL_GPU_PLUGIN_VERSION,                                                      \
      .name = vendor,                                                                            \
      .init = ns::init,                                                                          \
      .lastError = ns::lastErrorText,                                                            \
      .versions = ns::versions,                                                                  \
      .deviceCount = ns::deviceCount,                                                            \
      .getDevice = ns::getDevice,                                                                \
      .setDevice = ns::setDevice,                                                                \
      .allocDevice = ns::allocDevice,                                                            \
      .freeDevice = ns::freeDevice,                                                              \
      .allocPinned = ns::allocPinned,                                                            \
      .freePinned = ns::freePinned,                                                              \
      .hostRegister = ns::hostRegister,                                                          \
      .hostUnregister = ns::hostUnregister,                                                      \
      .pointerQuery = ns::pointerQuery,                                                          \
      .streamCreate = ns::streamCreate,                                                          \
      .streamDestroy = ns::streamDestroy,                                                        \
      .streamSynchronize = ns::streamSynchronize,                                                \
      .streamQuery = ns::streamQuery,                                                            \
      .eventCreate = ns::eventCreate,                                                            \
      .eventDestroy = ns::eventDestroy,                                                          \
      .eventRecord = ns::eventRecord,                                                            \
      .eventQuery = ns::eventQuery,                                                              \
      .eventSynchronize = ns::eventSynchronize,                                                  \
      .streamWaitEvent = ns::streamWaitEvent,                                                    \
      .memcpyAsync = ns::memcpyAsync,                                                            \
      .memsetAsync = ns::memsetAsync,                                                            \
      .memcpySync = ns::memcpySync,                                                              \
      .memsetSync = ns::memsetSync,                                                              \
      .streamWaitFlag = ns::streamWaitFlag,                                                      \
      .streamWriteFlag = ns::streamWriteFlag,                                                    \
      .flagMethod = ns::flagMethod,                                                              \
      .reduce = ns::reduce,                                                                      \
      .scale = ns::scale,                                                                        \
      .divide = ns::divide,                                                                      \
      .streamOps = ns::streamOps,                                                                \
      .streamCaptureInfo = ns::streamCaptureInfo,                                                \
      .devicePointer = ns::devicePointer,                                                        \
      .ipcExport = ns::ipcExport,                                                                \
      .ipcOpen = ns::ipcOpen,                                                                    \
      .ipcClose = ns::ipcClose,                                                                  \
      .memcpyBatchAsync = ns::memcpyBatchAsync,                                                  \
      .llAllReduce = ns::llAllReduce,                                                            \
      .deviceBusId = busIdEntry,                                                                 \
  };
