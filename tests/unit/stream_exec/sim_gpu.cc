#include "sim_gpu.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "device/host/reduce.hpp"
#include "sim_device.hpp"

namespace hetccl::test::sim {
namespace {

thread_local std::string tLastError;

int failWith(const char* what) {
  tLastError = what;
  return HETCCL_GPU_ERR_ARGUMENT;
}

/// What the plugin keeps besides the streams: device allocations and the injected failure.
struct Memory {
  std::atomic<int> failMemcpyIn{0};
  std::mutex mu;
  std::map<uintptr_t, size_t> deviceRanges;
};

Memory& memory() {
  static Memory* m = new Memory;
  return *m;
}

Event* asEvent(void* e) { return static_cast<Event*>(e); }

/// Queues `op` on `stream`; the plugin's answer.
int push(void* stream, Op op) {
  device().push(stream, std::move(op));
  return HETCCL_GPU_OK;
}

// The plugin functions.
int init(hetcclGpuLogger_v1_t) { return HETCCL_GPU_OK; }
const char* lastError() { return tLastError.c_str(); }
int versions(int* r, int* d) { *r = *d = 0; return HETCCL_GPU_OK; }
int deviceCount(int* c) { *c = 1; return HETCCL_GPU_OK; }
int getDevice(int* d) { *d = 0; return HETCCL_GPU_OK; }
int setDevice(int d) { return d == 0 ? HETCCL_GPU_OK : failWith("setDevice: no such device"); }
int allocDevice(void** p, size_t bytes) {
  if (!p || !bytes) return failWith("allocDevice: bad argument");
  *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  std::memset(*p, 0xEE, bytes);
  std::lock_guard<std::mutex> lock(memory().mu);
  memory().deviceRanges[reinterpret_cast<uintptr_t>(*p)] = bytes;
  return HETCCL_GPU_OK;
}
int freeDevice(void* p) {
  {
    std::lock_guard<std::mutex> lock(memory().mu);
    if (!memory().deviceRanges.erase(reinterpret_cast<uintptr_t>(p))) return failWith("freeDevice: unknown pointer");
  }
  std::free(p);
  return HETCCL_GPU_OK;
}
int allocPinned(void** p, size_t bytes) {
  *p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  std::memset(*p, 0, bytes);
  return HETCCL_GPU_OK;
}
int freePinned(void* p) { std::free(p); return HETCCL_GPU_OK; }
int hostRegister(void* p, size_t) { return p ? HETCCL_GPU_OK : failWith("hostRegister: null"); }
int hostUnregister(void* p) { return p ? HETCCL_GPU_OK : failWith("hostUnregister: null"); }
int pointerQuery(const void* p, int* memType, int* device) {
  std::lock_guard<std::mutex> lock(memory().mu);
  auto& ranges = memory().deviceRanges;
  auto it = ranges.upper_bound(reinterpret_cast<uintptr_t>(p));
  const bool inDevice =
      it != ranges.begin() && reinterpret_cast<uintptr_t>(p) < std::prev(it)->first + std::prev(it)->second;
  *memType = inDevice ? HETCCL_GPU_MEM_DEVICE : HETCCL_GPU_MEM_HOST;
  *device = inDevice ? 0 : -1;
  return HETCCL_GPU_OK;
}
int streamCreate(void** s) { *s = device().createStream(); return HETCCL_GPU_OK; }
int streamDestroy(void* s) { device().destroyStream(s); return HETCCL_GPU_OK; }
int streamSynchronize(void* s) { device().synchronize(s); return HETCCL_GPU_OK; }
int streamQuery(void* s) { return device().idle(s) ? HETCCL_GPU_OK : HETCCL_GPU_ERR_NOT_READY; }
int eventCreate(void** e) { *e = new Event; return HETCCL_GPU_OK; }
int eventDestroy(void* e) { delete asEvent(e); return HETCCL_GPU_OK; }
int eventRecord(void* e, void* s) {
  Event* ev = asEvent(e);
  const uint64_t id = ev->record();
  return push(s, {"eventRecord", nullptr, [ev, id] { ev->complete(id); }, [id] { return concat("#", id); }});
}
int eventQuery(void* e) { return asEvent(e)->done(asEvent(e)->latest()) ? HETCCL_GPU_OK : HETCCL_GPU_ERR_NOT_READY; }
int eventSynchronize(void* e) {
  while (eventQuery(e) != HETCCL_GPU_OK) std::this_thread::sleep_for(std::chrono::microseconds(100));
  return HETCCL_GPU_OK;
}
int streamWaitEvent(void* s, void* e) {
  Event* ev = asEvent(e);
  const uint64_t id = ev->latest();  // the record made before this call (none: nothing to wait for)
  if (!id) return HETCCL_GPU_OK;
  return push(s, {"streamWaitEvent", [ev, id] { return ev->done(id); }, nullptr, [id] { return concat("#", id); }});
}
int memcpyAsync(void* dst, const void* src, size_t bytes, void* s) {
  auto& failIn = memory().failMemcpyIn;
  if (failIn.load() > 0 && failIn.fetch_sub(1) == 1) return failWith("memcpyAsync: injected failure");
  if (bytes && (!dst || !src)) return failWith("memcpyAsync: null pointer");
  return push(s, {"memcpyAsync", nullptr, [=] { std::memmove(dst, src, bytes); }, nullptr});
}
int memsetAsync(void* dst, int v, size_t bytes, void* s) {
  if (bytes && !dst) return failWith("memsetAsync: null pointer");
  return push(s, {"memsetAsync", nullptr, [=] { std::memset(dst, static_cast<unsigned char>(v), bytes); }, nullptr});
}
int memcpySync(void* dst, const void* src, size_t bytes) { std::memmove(dst, src, bytes); return HETCCL_GPU_OK; }
int memsetSync(void* dst, int v, size_t bytes) { std::memset(dst, v, bytes); return HETCCL_GPU_OK; }

uint64_t loadFlag(const uint64_t* flag) { return __atomic_load_n(flag, __ATOMIC_ACQUIRE); }
bool badFlag(const uint64_t* flag) { return !flag || reinterpret_cast<uintptr_t>(flag) % 8; }

int streamWaitFlag(void* s, const uint64_t* flag, uint64_t value, unsigned) {
  if (badFlag(flag)) return failWith("streamWaitFlag: bad flag");
  return push(s, {"streamWaitFlag", [=] { return static_cast<int64_t>(loadFlag(flag) - value) >= 0; }, nullptr,
                  [=] { return concat("for ", value, ", flag now ", loadFlag(flag)); }});
}
int streamWriteFlag(void* s, uint64_t* flag, uint64_t value, unsigned) {
  if (badFlag(flag)) return failWith("streamWriteFlag: bad flag");
  return push(s, {"streamWriteFlag", nullptr, [=] { __atomic_store_n(flag, value, __ATOMIC_RELEASE); },
                  [=] { return concat(value); }});
}
int flagMethod(int* native) { *native = 1; return HETCCL_GPU_OK; }

/// Checks a kernel's type; queues `run` as the kernel.
int kernel(const char* what, int type, void* s, std::function<void()> run) {
  if (!device::hostReduceFn(static_cast<DataType>(type), RedOpKind::Sum)) return failWith("kernel: bad type");
  return push(s, {what, nullptr, std::move(run), nullptr});
}
int reduce(void* dst, const void* src, size_t count, int type, int redop, void* s) {
  const auto fn = device::hostReduceFn(static_cast<DataType>(type), static_cast<RedOpKind>(redop));
  if (!fn) return failWith("reduce: bad type or operator");
  return kernel("reduce", type, s, [=] { fn(dst, src, count); });
}
int scale(void* dst, const void* src, size_t count, int type, const void* scalar, void* s) {
  std::array<unsigned char, 8> value{};
  if (device::hostReduceFn(static_cast<DataType>(type), RedOpKind::Sum))
    std::memcpy(value.data(), scalar, dataTypeSize(static_cast<DataType>(type)));
  return kernel("scale", type, s, [=] { device::hostScale(dst, src, count, static_cast<DataType>(type), value.data()); });
}
int divide(void* buf, size_t count, int type, uint64_t n, void* s) {
  return kernel("divide", type, s, [=] { device::hostDivide(buf, count, static_cast<DataType>(type), n); });
}

const hetcclGpuPlugin_v1_t kPlugin = {
    HETCCL_GPU_PLUGIN_VERSION, "sim", init, lastError, versions, deviceCount, getDevice, setDevice,
    allocDevice, freeDevice, allocPinned, freePinned, hostRegister, hostUnregister, pointerQuery,
    streamCreate, streamDestroy, streamSynchronize, streamQuery, eventCreate, eventDestroy, eventRecord,
    eventQuery, eventSynchronize, streamWaitEvent, memcpyAsync, memsetAsync, memcpySync, memsetSync,
    streamWaitFlag, streamWriteFlag, flagMethod, reduce, scale, divide};

}  // namespace

const hetcclGpuPlugin_v1_t& plugin() {
  device();
  return kPlugin;
}

size_t pendingOps() { return device().pending(); }

bool waitIdle(std::chrono::milliseconds bound) {
  const auto until = std::chrono::steady_clock::now() + bound;
  while (device().pending() != 0) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

std::string dump() { return device().dump(); }

uint64_t seed() { return device().seed(); }

void failMemcpyAfter(int n) { memory().failMemcpyIn.store(n); }

}  // namespace hetccl::test::sim
