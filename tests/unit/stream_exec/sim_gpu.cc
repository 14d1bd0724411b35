#include "sim_gpu.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "sim_device.hpp"
#include "support/ll_host_kernel.hpp"

namespace hetccl::test::sim {
namespace {

using namespace model;

Device& dev() {
  static Device* d = new Device;  // never destroyed: its thread runs until exit
  return *d;
}

Event* asEvent(void* e) { return static_cast<Event*>(e); }

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
  std::lock_guard<std::mutex> lock(dev().memMu);
  dev().deviceRanges[reinterpret_cast<uintptr_t>(*p)] = bytes;
  return HETCCL_GPU_OK;
}
int freeDevice(void* p) {
  {
    std::lock_guard<std::mutex> lock(dev().memMu);
    if (!dev().deviceRanges.erase(reinterpret_cast<uintptr_t>(p))) return failWith("freeDevice: unknown pointer");
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
  std::lock_guard<std::mutex> lock(dev().memMu);
  auto it = dev().deviceRanges.upper_bound(reinterpret_cast<uintptr_t>(p));
  const bool inDevice = it != dev().deviceRanges.begin() &&
                        reinterpret_cast<uintptr_t>(p) < std::prev(it)->first + std::prev(it)->second;
  *memType = inDevice ? HETCCL_GPU_MEM_DEVICE : HETCCL_GPU_MEM_HOST;
  *device = inDevice ? 0 : -1;
  return HETCCL_GPU_OK;
}
int streamCreate(void** s) { *s = dev().newStream(); return HETCCL_GPU_OK; }
int streamDestroy(void* s) { dev().destroy(static_cast<Stream*>(s)); return HETCCL_GPU_OK; }
int streamSynchronize(void* s) {
  if (dev().isCapturing(s)) return failWith("streamSynchronize: the stream is being captured");
  dev().synchronize(s);
  return HETCCL_GPU_OK;
}
int streamQuery(void* s) {
  if (dev().isCapturing(s)) return failWith("streamQuery: the stream is being captured");
  return dev().idle(s) ? HETCCL_GPU_OK : HETCCL_GPU_ERR_NOT_READY;
}
int eventCreate(void** e) { *e = new Event; return HETCCL_GPU_OK; }
int eventDestroy(void* e) { dev().destroyEvent(asEvent(e)); return HETCCL_GPU_OK; }
int eventRecord(void* e, void* s) { return dev().record(asEvent(e), s); }
int eventQuery(void* e) { return asEvent(e)->done(asEvent(e)->recorded.load()) ? HETCCL_GPU_OK : HETCCL_GPU_ERR_NOT_READY; }
int eventSynchronize(void* e) {
  while (eventQuery(e) != HETCCL_GPU_OK) std::this_thread::sleep_for(std::chrono::microseconds(100));
  return HETCCL_GPU_OK;
}
int streamWaitEvent(void* s, void* e) { return dev().waitEvent(s, asEvent(e)); }
int memcpyAsync(void* dst, const void* src, size_t bytes, void* s) {
  if (dev().failMemcpyIn.load() > 0 && dev().failMemcpyIn.fetch_sub(1) == 1) return failWith("memcpyAsync: injected failure");
  if (bytes && (!dst || !src)) return failWith("memcpyAsync: null pointer");
  Op op{Op::Copy};
  op.dst = dst;
  op.src = src;
  op.n = bytes;
  return dev().push(s, op);
}
int memsetAsync(void* dst, int v, size_t bytes, void* s) {
  Op op{Op::Set};
  op.dst = dst;
  op.value = static_cast<unsigned char>(v);
  op.n = bytes;
  return dev().push(s, op);
}
int memcpySync(void* dst, const void* src, size_t bytes) { std::memmove(dst, src, bytes); return HETCCL_GPU_OK; }
int memsetSync(void* dst, int v, size_t bytes) { std::memset(dst, v, bytes); return HETCCL_GPU_OK; }
/// A flag wait or write of `value` at `flag` (a 64-bit word, 8-byte aligned).
int flagOp(Op::Kind kind, void* s, const uint64_t* flag, uint64_t value) {
  if (!flag || reinterpret_cast<uintptr_t>(flag) % 8) return failWith("stream flag operation: bad flag");
  Op op{kind};
  op.src = flag;
  op.dst = const_cast<uint64_t*>(flag);
  op.value = value;
  return dev().push(s, op);
}
int streamWaitFlag(void* s, const uint64_t* flag, uint64_t value, unsigned) { return flagOp(Op::WaitFlag, s, flag, value); }
int streamWriteFlag(void* s, uint64_t* flag, uint64_t value, unsigned) { return flagOp(Op::WriteFlag, s, flag, value); }
int flagMethod(int* native) { *native = 1; return HETCCL_GPU_OK; }
/// A kernel of `kind` on `count` elements of `type`; `extra` fills its other fields.
int kernel(Op::Kind kind, void* dst, const void* src, size_t count, int type, void* s,
           const std::function<void(Op&)>& extra = [](Op&) {}) {
  if (!device::hostReduceFn(static_cast<DataType>(type), RedOpKind::Sum)) return failWith("kernel: bad type");
  Op op{kind};
  op.dst = dst;
  op.src = src;
  op.n = count;
  op.type = type;
  extra(op);
  return dev().push(s, op);
}
int reduce(void* dst, const void* src, size_t count, int type, int redop, void* s) {
  return kernel(Op::Reduce, dst, src, count, type, s, [&](Op& op) { op.op = redop; });
}
int scale(void* dst, const void* src, size_t count, int type, const void* scalar, void* s) {
  return kernel(Op::Scale, dst, src, count, type, s,
                [&](Op& op) { std::memcpy(op.scalar, scalar, dataTypeSize(static_cast<DataType>(type))); });
}
int divide(void* buf, size_t count, int type, uint64_t n, void* s) {
  return kernel(Op::Divide, buf, nullptr, count, type, s, [&](Op& op) { op.value = n; });
}

int streamOps(void* s, const hetcclGpuStreamOp_t* ops, unsigned count) {
  if (!ops || count == 0 || count > HETCCL_GPU_MAX_STREAM_OPS) return failWith("streamOps: bad count");
  Op op{Op::Batch};
  for (unsigned i = 0; i < count; ++i) {
    const hetcclGpuStreamOp_t& b = ops[i];
    if (b.kind < HETCCL_GPU_OP_WAIT_GEQ || b.kind > HETCCL_GPU_OP_STAMP_CHECK || !b.word ||
        reinterpret_cast<uintptr_t>(b.word) % 8 || (b.kind == HETCCL_GPU_OP_STAMP_CHECK && !b.report))
      return failWith("streamOps: bad operation");
    op.batch.push_back(b);
  }
  return dev().push(s, std::move(op));
}
int streamCaptureInfo(void* s, int* capturing, uint64_t* id) {
  *capturing = dev().capturing(s, id) ? 1 : 0;
  return HETCCL_GPU_OK;
}
int devicePointer(const void* p, void** d) {
  if (!p) return failWith("devicePointer: null");
  *d = const_cast<void*>(p);
  return HETCCL_GPU_OK;
}

int llAllReduce(const hetcclGpuLlAllReduce_t* args, void* s) {
  std::string error;
  std::function<void()> body = llHostKernel(args, &error);
  if (!body) return failWith(error.c_str());
  Op op{Op::Kernel};
  op.kernelBody = std::move(body);
  return dev().push(s, std::move(op));
}

std::mutex gBusIdMu;
std::string gBusId;  // "" : unknown (deviceBusId fails)
int deviceBusId(int, char* busId, int length) {
  std::lock_guard<std::mutex> lock(gBusIdMu);
  if (gBusId.empty()) return failWith("deviceBusId: unknown on the simulated GPU");
  std::snprintf(busId, static_cast<size_t>(length), "%s", gBusId.c_str());
  return HETCCL_GPU_OK;
}

const hetcclGpuPlugin_t kPlugin = {
    HETCCL_GPU_PLUGIN_VERSION, "sim", init, lastError, versions, deviceCount, getDevice, setDevice,
    allocDevice, freeDevice, allocPinned, freePinned, hostRegister, hostUnregister, pointerQuery,
    streamCreate, streamDestroy, streamSynchronize, streamQuery, eventCreate, eventDestroy, eventRecord,
    eventQuery, eventSynchronize, streamWaitEvent, memcpyAsync, memsetAsync, memcpySync, memsetSync,
    streamWaitFlag, streamWriteFlag, flagMethod, reduce, scale, divide, streamOps, streamCaptureInfo,
    devicePointer,
    nullptr, nullptr, nullptr,  // no IPC: the simulated device lives in one process
    nullptr,                    // no batched copies: the core loops
    llAllReduce,
    deviceBusId};

}  // namespace

const hetcclGpuPlugin_t& plugin() {
  dev();
  return kPlugin;
}

size_t pendingOps() { return dev().pending(); }

std::string dump() { return dev().dump(); }

uint64_t seed() { return dev().seed(); }

bool waitIdle(std::chrono::milliseconds bound) {
  const auto until = std::chrono::steady_clock::now() + bound;
  while (dev().pending() != 0) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

void setDeviceBusId(const std::string& busId) {
  std::lock_guard<std::mutex> lock(gBusIdMu);
  gBusId = busId;
}

void failMemcpyAfter(int n) { dev().failMemcpyIn.store(n); }
void setStreamQueueLimit(size_t n) { dev().queueLimit.store(n); }

void enqueueHostOp(void* stream, std::function<bool()> ready, std::function<void()> run,
                   std::function<std::string()> describe) {
  dev().pushHost(stream, std::make_shared<HostOp>(HostOp{std::move(ready), std::move(run), std::move(describe)}));
}

void beginCapture(void* stream) { dev().beginCapture(stream); }

Graph* endCapture(void* stream) { return dev().endCapture(stream); }

void launch(Graph* graph, void* stream) { dev().launch(graph, stream); }

}  // namespace hetccl::test::sim
