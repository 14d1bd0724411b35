#include "device/gpu_runtime.hpp"

#include <memory>
#include <mutex>

#include "core/error.hpp"
#include "core/log.hpp"
#include "device/loader.hpp"

namespace hetccl::device {

GpuRuntime::GpuRuntime(const hetcclGpuPlugin_t& plugin, MemoryKind kind) : plugin_(plugin), kind_(kind) {
  int runtimeVersion = 0, driverVersion = 0;
  name_ = plugin_.name;
  if (plugin_.versions(&runtimeVersion, &driverVersion) == HETCCL_GPU_OK && runtimeVersion > 0)
    name_ = concat(plugin_.name, " ", runtimeVersion / 1000, ".", runtimeVersion % 1000 / 10);
}

void GpuRuntime::check(int rc) const {
  if (rc == HETCCL_GPU_OK) return;
  const std::string what = concat(plugin_.name, " runtime: ", plugin_.lastError());
  if (rc == HETCCL_GPU_ERR_ARGUMENT) throw InvalidArgument(what);
  throw Error(Result::UnhandledCudaError, what);
}

void* GpuRuntime::alloc(size_t bytes) {
  if (bytes == 0) throw InvalidArgument(concat(name_, " runtime: alloc of 0 bytes"));
  void* ptr = nullptr;
  check(plugin_.allocDevice(&ptr, bytes));
  return ptr;
}

void GpuRuntime::free(void* ptr) noexcept {
  if (ptr && plugin_.freeDevice(ptr) != HETCCL_GPU_OK)
    HETCCL_WARN(log::kInit, name_, " runtime: ", plugin_.lastError());
}

void GpuRuntime::copy(void* dst, const void* src, size_t bytes) { check(plugin_.memcpySync(dst, src, bytes)); }
void GpuRuntime::fill(void* dst, int byteValue, size_t bytes) { check(plugin_.memsetSync(dst, byteValue, bytes)); }

bool GpuRuntime::owns(const void* ptr) const noexcept {
  int memType = HETCCL_GPU_MEM_HOST, device = -1;
  if (plugin_.pointerQuery(ptr, &memType, &device) != HETCCL_GPU_OK) return false;
  return memType == HETCCL_GPU_MEM_DEVICE || memType == HETCCL_GPU_MEM_MANAGED;
}

int GpuRuntime::deviceCount() const {
  int count = 0;
  check(plugin_.deviceCount(&count));
  return count;
}

int GpuRuntime::currentDevice() const {
  int device = -1;
  check(plugin_.getDevice(&device));
  return device;
}

void GpuRuntime::setCurrentDevice(int device) { check(plugin_.setDevice(device)); }

void* GpuRuntime::allocPinned(size_t bytes) {
  if (bytes == 0) throw InvalidArgument(concat(name_, " runtime: allocPinned of 0 bytes"));
  void* ptr = nullptr;
  check(plugin_.allocPinned(&ptr, bytes));
  return ptr;
}

void GpuRuntime::freePinned(void* ptr) noexcept {
  if (ptr && plugin_.freePinned(ptr) != HETCCL_GPU_OK)
    HETCCL_WARN(log::kInit, name_, " runtime: ", plugin_.lastError());
}

void GpuRuntime::registerHost(void* ptr, size_t bytes) { check(plugin_.hostRegister(ptr, bytes)); }

void GpuRuntime::unregisterHost(void* ptr) noexcept {
  if (ptr && plugin_.hostUnregister(ptr) != HETCCL_GPU_OK)
    HETCCL_WARN(log::kInit, name_, " runtime: ", plugin_.lastError());
}

void GpuRuntime::copyBatchAsync(void* const* dsts, const void* const* srcs, const size_t* sizes, size_t count,
                                Stream stream) {
  if (plugin_.memcpyBatchAsync) {
    check(plugin_.memcpyBatchAsync(dsts, srcs, sizes, count, stream));
    return;
  }
  for (size_t i = 0; i < count; ++i) copyAsync(dsts[i], srcs[i], sizes[i], stream);
}

GpuRuntime::IpcExport GpuRuntime::exportMemory(const void* ptr) const {
  if (!sharesMemory()) throw Error(Result::UnhandledCudaError, concat(name_, " runtime: its plugin has no IPC handles"));
  IpcExport e;
  check(plugin_.ipcExport(ptr, e.handle.data(), &e.offset, &e.allocBytes));
  return e;
}

GpuRuntime::IpcMapping GpuRuntime::openMemory(const IpcHandle& handle) {
  if (!sharesMemory()) throw Error(Result::UnhandledCudaError, concat(name_, " runtime: its plugin has no IPC handles"));
  IpcMapping m;
  check(plugin_.ipcOpen(handle.data(), &m.base, &m.bytes));
  return m;
}

void GpuRuntime::closeMemory(void* base) noexcept {
  if (base && sharesMemory() && plugin_.ipcClose(base) != HETCCL_GPU_OK)
    HETCCL_WARN(log::kInit, name_, " runtime: ", plugin_.lastError());
}

GpuRuntime::PointerInfo GpuRuntime::query(const void* ptr) const {
  PointerInfo info;
  check(plugin_.pointerQuery(ptr, &info.memType, &info.device));
  return info;
}

GpuRuntime::Stream GpuRuntime::createStream() {
  Stream stream = nullptr;
  check(plugin_.streamCreate(&stream));
  return stream;
}

void GpuRuntime::destroyStream(Stream stream) noexcept {
  if (stream && plugin_.streamDestroy(stream) != HETCCL_GPU_OK)
    HETCCL_WARN(log::kInit, name_, " runtime: ", plugin_.lastError());
}

void GpuRuntime::synchronize(Stream stream) { check(plugin_.streamSynchronize(stream)); }

bool GpuRuntime::isIdle(Stream stream) {
  const int rc = plugin_.streamQuery(stream);
  if (rc == HETCCL_GPU_ERR_NOT_READY) return false;
  check(rc);
  return true;
}

GpuRuntime::Event GpuRuntime::createEvent() {
  Event event = nullptr;
  check(plugin_.eventCreate(&event));
  return event;
}

void GpuRuntime::destroyEvent(Event event) noexcept {
  if (event && plugin_.eventDestroy(event) != HETCCL_GPU_OK)
    HETCCL_WARN(log::kInit, name_, " runtime: ", plugin_.lastError());
}

void GpuRuntime::record(Event event, Stream stream) { check(plugin_.eventRecord(event, stream)); }

bool GpuRuntime::isReached(Event event) {
  const int rc = plugin_.eventQuery(event);
  if (rc == HETCCL_GPU_ERR_NOT_READY) return false;
  check(rc);
  return true;
}

void GpuRuntime::waitEvent(Event event) { check(plugin_.eventSynchronize(event)); }
void GpuRuntime::streamWait(Stream stream, Event event) { check(plugin_.streamWaitEvent(stream, event)); }

void GpuRuntime::copyAsync(void* dst, const void* src, size_t bytes, Stream stream) {
  check(plugin_.memcpyAsync(dst, src, bytes, stream));
}

void GpuRuntime::fillAsync(void* dst, int byteValue, size_t bytes, Stream stream) {
  check(plugin_.memsetAsync(dst, byteValue, bytes, stream));
}

void GpuRuntime::streamWaitFlag(Stream stream, const uint64_t* flag, uint64_t value, bool forceKernel) {
  check(plugin_.streamWaitFlag(stream, flag, value, forceKernel ? HETCCL_GPU_FLAG_FORCE_KERNEL : 0u));
}

void GpuRuntime::streamWriteFlag(Stream stream, uint64_t* flag, uint64_t value, bool forceKernel) {
  check(plugin_.streamWriteFlag(stream, flag, value, forceKernel ? HETCCL_GPU_FLAG_FORCE_KERNEL : 0u));
}

bool GpuRuntime::nativeFlagOps() {
  int native = 0;
  check(plugin_.flagMethod(&native));
  return native != 0;
}

void GpuRuntime::reduce(void* dst, const void* src, size_t count, DataType type, RedOpKind op, Stream stream) {
  check(plugin_.reduce(dst, src, count, static_cast<int>(type), static_cast<int>(op), stream));
}

void GpuRuntime::scale(void* dst, const void* src, size_t count, DataType type, const void* scalar, Stream stream) {
  check(plugin_.scale(dst, src, count, static_cast<int>(type), scalar, stream));
}

void GpuRuntime::divide(void* buf, size_t count, DataType type, uint64_t n, Stream stream) {
  check(plugin_.divide(buf, count, static_cast<int>(type), n, stream));
}

namespace {

std::unique_ptr<GpuRuntime> loadRuntime(DeviceKind kind) {
  const hetcclGpuPlugin_t* plugin = loadGpuPlugin(kind);
  if (!plugin) return nullptr;
  return std::make_unique<GpuRuntime>(*plugin, kind == DeviceKind::Hip ? MemoryKind::Hip : MemoryKind::Cuda);
}

}  // namespace

GpuRuntime* gpuRuntime(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::Cuda: {
      static const std::unique_ptr<GpuRuntime> cuda = loadRuntime(DeviceKind::Cuda);
      return cuda.get();
    }
    case DeviceKind::Hip: {
      static const std::unique_ptr<GpuRuntime> hip = loadRuntime(DeviceKind::Hip);
      return hip.get();
    }
    case DeviceKind::Host:
      break;
  }
  return nullptr;
}

}  // namespace hetccl::device
