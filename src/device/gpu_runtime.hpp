// A device::Runtime over a GPU plugin (src/device/base/gpu_plugin.h): the synchronous memory services
// of the Runtime interface plus the asynchronous extras the engine needs on GPU ranks (pinned memory,
// streams, events, async copies, stream <-> host-flag synchronisation, reduction kernels).
//
// Streams and events are the plugin's opaque handles. Every failure throws: InvalidArgument for a bad
// argument the plugin rejected, otherwise Error(Result::UnhandledCudaError) whose text is the plugin's
// lastError() (it names the vendor call and its error string). Thread-safe; device-scoped calls act on
// the calling thread's current device.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "core/peer_info.hpp"
#include "core/types.hpp"
#include "device/base/gpu_plugin.h"
#include "device/base/runtime.hpp"

namespace hetccl::device {

class GpuRuntime final : public Runtime {
 public:
  using Stream = void*;  ///< nullptr is the vendor's default stream
  using Event = void*;

  /// Wraps an initialised plugin (loadGpuPlugin()) for memory of `kind`.
  GpuRuntime(const hetcclGpuPlugin_t& plugin, MemoryKind kind);

  // --- Runtime ---
  MemoryKind kind() const noexcept override { return kind_; }
  /// e.g. "cuda 13.0".
  const char* name() const noexcept override { return name_.c_str(); }
  /// Device memory on the calling thread's current device.
  void* alloc(size_t bytes) override;
  void free(void* ptr) noexcept override;
  /// Any direction (unified addressing); complete and visible to the host when it returns.
  void copy(void* dst, const void* src, size_t bytes) override;
  void fill(void* dst, int byteValue, size_t bytes) override;
  /// True for device and managed memory of this runtime (pinned host memory is host memory).
  bool owns(const void* ptr) const noexcept override;

  // --- devices ---
  int deviceCount() const;
  /// The calling thread's current device.
  int currentDevice() const;
  void setCurrentDevice(int device);

  // --- host memory the device can reach ---
  /// Pinned, mapped, portable host memory; never nullptr.
  void* allocPinned(size_t bytes);
  void freePinned(void* ptr) noexcept;
  /// Pins existing host memory (e.g. a shm segment) until unregisterHost(ptr).
  void registerHost(void* ptr, size_t bytes);
  void unregisterHost(void* ptr) noexcept;

  struct PointerInfo {
    int memType = HETCCL_GPU_MEM_HOST;  ///< HETCCL_GPU_MEM_*
    int device = -1;                    ///< device ordinal for device/managed memory, else -1
  };
  PointerInfo query(const void* ptr) const;

  // --- streams and events ---
  Stream createStream();
  void destroyStream(Stream stream) noexcept;
  /// Blocks until all work queued on `stream` is done.
  void synchronize(Stream stream);
  /// True when all work queued on `stream` is done (never blocks).
  bool isIdle(Stream stream);
  Event createEvent();
  void destroyEvent(Event event) noexcept;
  void record(Event event, Stream stream);
  /// True when the work before the event's last record() is done (never blocks).
  bool isReached(Event event);
  /// Blocks until the event is reached.
  void waitEvent(Event event);
  /// Later work on `stream` waits for `event` (no host blocking).
  void streamWait(Stream stream, Event event);

  // --- asynchronous work on a stream ---
  void copyAsync(void* dst, const void* src, size_t bytes, Stream stream);
  /// `count` copies as one batch on `stream` (plugin memcpyBatchAsync, else one copyAsync each); the copies
  /// run in no order among themselves: destinations must not overlap.
  void copyBatchAsync(void* const* dsts, const void* const* srcs, const size_t* sizes, size_t count, Stream stream);
  void fillAsync(void* dst, int byteValue, size_t bytes, Stream stream);
  /// Later work on `stream` waits until (int64)(*flag - value) >= 0; `flag` is pinned host memory. The host
  /// releases the stream by storing the value (release order). forceKernel: use the polling kernel.
  void streamWaitFlag(Stream stream, const uint64_t* flag, uint64_t value, bool forceKernel = false);
  /// When `stream` gets here, *flag = value (earlier work's results are then visible to the host).
  void streamWriteFlag(Stream stream, uint64_t* flag, uint64_t value, bool forceKernel = false);
  /// True when the flag operations use the driver's stream memory operations on the current device.
  bool nativeFlagOps();
  /// dst = dst (op) src, count elements (Avg and PreMulSum accumulate as Sum).
  void reduce(void* dst, const void* src, size_t count, DataType type, RedOpKind op, Stream stream);
  /// dst = src * scalar (scalar: one element of `type`, host bytes).
  void scale(void* dst, const void* src, size_t count, DataType type, const void* scalar, Stream stream);
  /// buf = buf / n (Avg; integers truncate toward zero; n == 0 changes nothing).
  void divide(void* buf, size_t count, DataType type, uint64_t n, Stream stream);

  // --- device memory shared with other processes of this host (IPC) ---
  /// True when the plugin offers IPC handles at all (a plugin may leave them out).
  bool sharesMemory() const noexcept { return plugin_.ipcExport && plugin_.ipcOpen && plugin_.ipcClose; }
  using IpcHandle = std::array<unsigned char, HETCCL_GPU_IPC_HANDLE_BYTES>;
  struct IpcExport {
    IpcHandle handle{};     ///< names the allocation that holds the pointer
    size_t offset = 0;      ///< of the pointer in that allocation
    size_t allocBytes = 0;  ///< the allocation's size
  };
  /// Exports the allocation holding `ptr`; throws (UnhandledCudaError naming the vendor call) where the
  /// runtime cannot share it (host, managed, pool or virtual-memory allocations) or has no IPC at all.
  IpcExport exportMemory(const void* ptr) const;
  struct IpcMapping {
    void* base = nullptr;
    size_t bytes = 0;
  };
  /// Maps another process's exported allocation; close it with closeMemory(base). Throws on failure.
  IpcMapping openMemory(const IpcHandle& handle);
  void closeMemory(void* base) noexcept;

  const hetcclGpuPlugin_t& plugin() const noexcept { return plugin_; }

 private:
  /// Throws for a nonzero plugin result (see the top of this file).
  void check(int rc) const;

  const hetcclGpuPlugin_t& plugin_;
  MemoryKind kind_;
  std::string name_;
};

/// The process's runtime of a GPU vendor (DeviceKind::Cuda or DeviceKind::Hip): on the first call loads
/// the plugin (loadGpuPlugin) and creates the process's GpuRuntime for that memory kind. nullptr when
/// the plugin or a device is unavailable (gpuPluginUnavailableReason() says why), and for Host.
/// Thread-safe.
GpuRuntime* gpuRuntime(DeviceKind kind);
inline GpuRuntime* cudaRuntime() { return gpuRuntime(DeviceKind::Cuda); }

}  // namespace hetccl::device
