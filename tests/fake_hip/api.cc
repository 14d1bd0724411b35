// The exported HIP runtime and hiprtc functions of the fake (see api.hpp, README.md).
#include "api.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "code_object.hpp"
#include "kernels.hpp"
#include "runtime.hpp"

using namespace fakehip;

namespace {

/// Records the call's result as the thread's last error and returns it.
hipError_t ret(hipError_t e) { return recordError(e); }

#define FAKEHIP_ENTER(name, usual)                   \
  do {                                               \
    if (const int injected_ = enter(name, usual))    \
      return ret(injected_);                         \
  } while (0)

bool noDevice() { return deviceCount() == 0; }
bool validDevice(int d) { return d >= 0 && d < deviceCount(); }

/// Allocation and creation calls while a stream is captured in global mode need a relaxed thread.
bool captureForbids() {
  if (threadCaptureMode() == hipStreamCaptureModeRelaxed || !globalCaptureActive()) return false;
  counters().relaxedViolations++;
  return true;
}

void* allocateHost(size_t bytes, size_t alignment) {
  void* p = nullptr;
  if (posix_memalign(&p, alignment, (bytes + alignment - 1) / alignment * alignment) != 0) return nullptr;
  return p;
}

// ---- memory classification for copies ----
enum class Where { Pageable, Pinned, Device, Overrun };
Where classify(const void* p, size_t bytes) {
  Range r;
  if (findRange(p, bytes, &r)) return r.kind == MemKind::Device ? Where::Device : Where::Pinned;
  if (findRange(p, 0, &r)) return Where::Overrun;  // starts inside a tracked range, runs past its end
  return Where::Pageable;
}

/// Checks a copy's pointers against its kind; returns hipSuccess or the error HIP gives.
hipError_t checkCopy(void* dst, const void* src, size_t bytes, int kind, Where* d, Where* s) {
  if (!dst || !src) return hipErrorInvalidValue;
  if (kind < hipMemcpyHostToHost || kind > hipMemcpyDefault) return hipErrorInvalidMemcpyDirection;
  *d = classify(dst, bytes);
  *s = classify(src, bytes);
  if (*d == Where::Overrun || *s == Where::Overrun) {
    badAccess("copy of " + std::to_string(bytes) + " bytes runs past the end of a device or pinned allocation");
    return hipErrorInvalidValue;
  }
  const bool dstDeviceSide = kind == hipMemcpyHostToDevice || kind == hipMemcpyDeviceToDevice;
  const bool srcDeviceSide = kind == hipMemcpyDeviceToHost || kind == hipMemcpyDeviceToDevice;
  const bool dstHostSide = kind == hipMemcpyHostToHost || kind == hipMemcpyDeviceToHost;
  const bool srcHostSide = kind == hipMemcpyHostToHost || kind == hipMemcpyHostToDevice;
  if ((dstDeviceSide && *d == Where::Pageable) || (srcDeviceSide && *s == Where::Pageable) ||
      (dstHostSide && *d == Where::Device) || (srcHostSide && *s == Where::Device))
    return hipErrorInvalidValue;  // the kind contradicts what the pointers are
  return hipSuccess;
}

// ---- modules ----
struct Module {
  CodeObject code;
  std::atomic<bool> loaded{true};
};
struct Function {
  Module* module;
  const KernelDef* kernel;
};
struct ModuleTable {
  std::mutex mu;
  std::set<Module*> modules;
  std::set<Function*> functions;
};
ModuleTable& modules() {
  static auto* t = new ModuleTable;
  return *t;
}

// ---- hiprtc programs ----
struct Program {
  std::string source, name, log;
  std::vector<char> code;
  bool compiled = false;
};
struct ProgramTable {
  std::mutex mu;
  std::set<Program*> live;
};
ProgramTable& programs() {
  static auto* t = new ProgramTable;
  return *t;
}
Program* program(void* p) {
  std::lock_guard<std::mutex> lock(programs().mu);
  auto* prog = static_cast<Program*>(p);
  return programs().live.count(prog) ? prog : nullptr;
}

std::string deviceArch(int device) {
  (void)device;
  return config().arch;
}

/// FAKEHIP_UNREGISTERED_PTR=error|success overrides the version's answer for unregistered host memory.
bool unregisteredIsError() {
  if (const char* v = std::getenv("FAKEHIP_UNREGISTERED_PTR")) {
    if (std::strcmp(v, "error") == 0) return true;
    if (std::strcmp(v, "success") == 0) return false;
  }
  return config().majorVersion() < 7;
}

hipError_t fillProperties(void* prop, int device, size_t archOffset) {
  if (!prop) return ret(hipErrorInvalidValue);
  if (noDevice()) return ret(hipErrorNoDevice);
  if (!validDevice(device)) return ret(hipErrorInvalidDevice);
  char* p = static_cast<char*>(prop);
  std::memset(p, 0, archOffset + 256);
  std::snprintf(p, 256, "Fake AMD GPU %d (libhetccl-fakehip)", device);
  std::snprintf(p + archOffset, 256, "%s", deviceArch(device).c_str());
  return ret(hipSuccess);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Errors, versions, devices.

FAKEHIP_API const char* hipGetErrorString(hipError_t error) { return errorString(error); }
FAKEHIP_API const char* hipGetErrorName(hipError_t error) { return errorName(error); }
FAKEHIP_API hipError_t hipGetLastError() {
  enter("hipGetLastError", 0);
  return takeLastError();
}
FAKEHIP_API hipError_t hipPeekAtLastError() {
  enter("hipPeekAtLastError", 0);
  return peekLastError();
}

FAKEHIP_API hipError_t hipRuntimeGetVersion(int* runtimeVersion) {
  FAKEHIP_ENTER("hipRuntimeGetVersion", hipErrorInvalidValue);
  if (!runtimeVersion) return ret(hipErrorInvalidValue);
  *runtimeVersion = config().runtimeVersion;
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipDriverGetVersion(int* driverVersion) {
  FAKEHIP_ENTER("hipDriverGetVersion", hipErrorInvalidValue);
  if (!driverVersion) return ret(hipErrorInvalidValue);
  *driverVersion = config().runtimeVersion;  // ROCm reports the HIP version here too
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipGetDeviceCount(int* count) {
  FAKEHIP_ENTER("hipGetDeviceCount", hipErrorNoDevice);
  if (!count) return ret(hipErrorInvalidValue);
  *count = deviceCount();
  return ret(*count == 0 ? hipErrorNoDevice : hipSuccess);
}

FAKEHIP_API hipError_t hipGetDevice(int* device) {
  FAKEHIP_ENTER("hipGetDevice", hipErrorInvalidValue);
  if (!device) return ret(hipErrorInvalidValue);
  if (noDevice()) return ret(hipErrorNoDevice);
  *device = currentDevice();
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipSetDevice(int device) {
  FAKEHIP_ENTER("hipSetDevice", hipErrorInvalidDevice);
  if (noDevice()) return ret(hipErrorNoDevice);
  if (!validDevice(device)) return ret(hipErrorInvalidDevice);
  setCurrentDevice(device);
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipDeviceSynchronize() {
  FAKEHIP_ENTER("hipDeviceSynchronize", hipErrorUnknown);
  synchronizeDevice(currentDevice());
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipDeviceGetAttribute(int* value, int attribute, int device) {
  FAKEHIP_ENTER("hipDeviceGetAttribute", hipErrorInvalidValue);
  if (!value) return ret(hipErrorInvalidValue);
  if (noDevice()) return ret(hipErrorNoDevice);
  if (!validDevice(device)) return ret(hipErrorInvalidDevice);
  switch (attribute) {
    case hipDeviceAttributeCanUseStreamWaitValue: *value = config().noStreamMemops ? 0 : 1; break;
    case hipDeviceAttributeMultiprocessorCount: *value = 104; break;
    case hipDeviceAttributeCanMapHostMemory: *value = 1; break;
    case hipDeviceAttributeUnifiedAddressing: *value = 1; break;
    case hipDeviceAttributeWarpSize: *value = 64; break;
    case hipDeviceAttributeMaxThreadsPerBlock: *value = 1024; break;
    default:
      std::fprintf(stderr, "fakehip: hipDeviceGetAttribute: attribute %d is not modelled\n", attribute);
      return ret(hipErrorInvalidValue);
  }
  return ret(hipSuccess);
}

// gcnArchName offsets: hipDeviceProp_tR0600 1160, hipDeviceProp_t of 5.x (= R0000) 396 (LLVM's
// amdgpu-arch tool reads them at the same offsets).
FAKEHIP_API hipError_t hipGetDeviceProperties(void* prop, int device) {
  FAKEHIP_ENTER("hipGetDeviceProperties", hipErrorInvalidValue);
  return fillProperties(prop, device, 396);
}
#ifndef FAKEHIP_ROCM5
FAKEHIP_API hipError_t hipGetDevicePropertiesR0000(void* prop, int device) {
  FAKEHIP_ENTER("hipGetDevicePropertiesR0000", hipErrorInvalidValue);
  return fillProperties(prop, device, 396);
}
FAKEHIP_API hipError_t hipGetDevicePropertiesR0600(void* prop, int device) {
  FAKEHIP_ENTER("hipGetDevicePropertiesR0600", hipErrorInvalidValue);
  return fillProperties(prop, device, 1160);
}
#endif

// ---------------------------------------------------------------------------------------------------
// Memory.

FAKEHIP_API hipError_t hipMalloc(void** ptr, size_t size) {
  FAKEHIP_ENTER("hipMalloc", hipErrorOutOfMemory);
  if (!ptr) return ret(hipErrorInvalidValue);
  *ptr = nullptr;
  if (noDevice()) return ret(hipErrorNoDevice);
  if (captureForbids()) return ret(hipErrorStreamCaptureUnsupported);
  if (size == 0) return ret(hipSuccess);
  void* p = allocateHost(size, 4096);
  if (!p) return ret(hipErrorOutOfMemory);
  std::memset(p, 0xEE, size);  // device memory starts as garbage
  addRange(Range{reinterpret_cast<uintptr_t>(p), size, MemKind::Device, currentDevice(), 0});
  counters().liveDeviceAllocs++;
  *ptr = p;
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipFree(void* ptr) {
  FAKEHIP_ENTER("hipFree", hipErrorInvalidValue);
  if (!ptr) return ret(hipSuccess);
  if (captureForbids()) return ret(hipErrorStreamCaptureUnsupported);
  Range r;
  if (!findRange(ptr, 0, &r) || r.base != reinterpret_cast<uintptr_t>(ptr) || r.kind != MemKind::Device)
    return ret(hipErrorInvalidValue);
  synchronizeDevice(r.device);  // hipFree synchronises the device (queued work may still use the block)
  removeRange(ptr, MemKind::Device);
  counters().liveDeviceAllocs--;
  std::free(ptr);
  return ret(hipSuccess);
}

static hipError_t hostMalloc(const char* name, void** ptr, size_t size, unsigned flags) {
  FAKEHIP_ENTER(name, hipErrorOutOfMemory);
  if (!ptr) return ret(hipErrorInvalidValue);
  *ptr = nullptr;
  if (noDevice()) return ret(hipErrorNoDevice);
  if (captureForbids()) return ret(hipErrorStreamCaptureUnsupported);
  constexpr unsigned known = hipHostMallocPortable | hipHostMallocMapped | hipHostMallocWriteCombined |
                             hipHostMallocNumaUser | hipHostMallocCoherent | hipHostMallocNonCoherent;
  if (flags & ~known) return ret(hipErrorInvalidValue);
  if ((flags & hipHostMallocCoherent) && (flags & hipHostMallocNonCoherent)) return ret(hipErrorInvalidValue);
  if (size == 0) return ret(hipSuccess);
  void* p = allocateHost(size, 4096);
  if (!p) return ret(hipErrorOutOfMemory);
  std::memset(p, 0, size);
  addRange(Range{reinterpret_cast<uintptr_t>(p), size, MemKind::Pinned, currentDevice(), flags});
  counters().livePinnedAllocs++;
  *ptr = p;
  return ret(hipSuccess);
}
FAKEHIP_API hipError_t hipHostMalloc(void** ptr, size_t size, unsigned flags) { return hostMalloc("hipHostMalloc", ptr, size, flags); }
FAKEHIP_API hipError_t hipHostAlloc(void** ptr, size_t size, unsigned flags) { return hostMalloc("hipHostAlloc", ptr, size, flags); }

static hipError_t hostFree(const char* name, void* ptr) {
  FAKEHIP_ENTER(name, hipErrorInvalidValue);
  if (!ptr) return ret(hipSuccess);
  if (captureForbids()) return ret(hipErrorStreamCaptureUnsupported);
  Range r;
  if (!findRange(ptr, 0, &r) || r.base != reinterpret_cast<uintptr_t>(ptr) || r.kind != MemKind::Pinned)
    return ret(hipErrorInvalidValue);
  for (int d = 0; d < deviceCount(); ++d) synchronizeDevice(d);  // pinned memory: any device may use it
  removeRange(ptr, MemKind::Pinned);
  counters().livePinnedAllocs--;
  std::free(ptr);
  return ret(hipSuccess);
}
FAKEHIP_API hipError_t hipHostFree(void* ptr) { return hostFree("hipHostFree", ptr); }
FAKEHIP_API hipError_t hipFreeHost(void* ptr) { return hostFree("hipFreeHost", ptr); }

FAKEHIP_API hipError_t hipHostRegister(void* hostPtr, size_t sizeBytes, unsigned flags) {
  FAKEHIP_ENTER("hipHostRegister", hipErrorOutOfMemory);
  if (!hostPtr || sizeBytes == 0) return ret(hipErrorInvalidValue);
  if (noDevice()) return ret(hipErrorNoDevice);
  constexpr unsigned known = hipHostRegisterPortable | hipHostRegisterMapped | hipHostRegisterIoMemory | hipHostRegisterReadOnly;
  if (flags & ~known) return ret(hipErrorInvalidValue);
  if (overlapsRange(hostPtr, sizeBytes)) return ret(hipErrorHostMemoryAlreadyRegistered);
  addRange(Range{reinterpret_cast<uintptr_t>(hostPtr), sizeBytes, MemKind::Registered, currentDevice(), flags});
  counters().liveRegistrations++;
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipHostUnregister(void* hostPtr) {
  FAKEHIP_ENTER("hipHostUnregister", hipErrorHostMemoryNotRegistered);
  if (!hostPtr) return ret(hipErrorInvalidValue);
  Range r;
  if (!findRange(hostPtr, 0, &r) || r.base != reinterpret_cast<uintptr_t>(hostPtr) || r.kind != MemKind::Registered)
    return ret(hipErrorHostMemoryNotRegistered);
  for (int d = 0; d < deviceCount(); ++d) synchronizeDevice(d);
  removeRange(hostPtr, MemKind::Registered);
  counters().liveRegistrations--;
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipHostGetDevicePointer(void** devPtr, void* hostPtr, unsigned flags) {
  FAKEHIP_ENTER("hipHostGetDevicePointer", hipErrorInvalidValue);
  if (!devPtr || !hostPtr || flags != 0) return ret(hipErrorInvalidValue);
  *devPtr = nullptr;
  Range r;
  if (!findRange(hostPtr, 0, &r) || r.kind == MemKind::Device) return ret(hipErrorInvalidValue);
  *devPtr = hostPtr;  // one address space: the device address of mapped host memory is the host address
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipPointerGetAttributes(hipPointerAttribute_t* attributes, const void* ptr) {
  FAKEHIP_ENTER("hipPointerGetAttributes", hipErrorInvalidValue);
  if (!attributes || !ptr) return ret(hipErrorInvalidValue);
  std::memset(attributes, 0, sizeof *attributes);
  const bool v5 = config().majorVersion() < 6;
  Range r;
  if (!findRange(ptr, 0, &r)) {
    attributes->device = -1;
    if (unregisteredIsError()) return ret(hipErrorInvalidValue);
    attributes->type = hipMemoryTypeUnregistered;
    return ret(hipSuccess);
  }
  attributes->device = r.device;
  attributes->devicePointer = const_cast<void*>(ptr);
  attributes->allocationFlags = r.flags;
  if (r.kind == MemKind::Device) {
    attributes->type = v5 ? int{hipMemoryTypeDevice_v5} : int{hipMemoryTypeDevice};
  } else {
    attributes->type = v5 ? int{hipMemoryTypeHost_v5} : int{hipMemoryTypeHost};
    attributes->hostPointer = const_cast<void*>(ptr);
  }
  return ret(hipSuccess);
}

// ---------------------------------------------------------------------------------------------------
// Streams and events.

FAKEHIP_API hipError_t hipStreamCreateWithFlags(void** stream, unsigned flags) {
  FAKEHIP_ENTER("hipStreamCreateWithFlags", hipErrorOutOfMemory);
  if (!stream) return ret(hipErrorInvalidValue);
  if (noDevice()) return ret(hipErrorNoDevice);
  if (flags & ~hipStreamNonBlocking) return ret(hipErrorInvalidValue);
  if (captureForbids()) return ret(hipErrorStreamCaptureUnsupported);
  *stream = createStream(flags);
  return ret(hipSuccess);
}
FAKEHIP_API hipError_t hipStreamCreate(void** stream) { return hipStreamCreateWithFlags(stream, 0); }

FAKEHIP_API hipError_t hipStreamDestroy(void* stream) {
  FAKEHIP_ENTER("hipStreamDestroy", hipErrorInvalidHandle);
  if (!stream || !destroyStream(stream)) return ret(hipErrorInvalidHandle);
  return ret(hipSuccess);
}

static bool isCapturing(Stream* s) {
  std::lock_guard<std::mutex> lock(s->mu);
  return s->capturing;
}

FAKEHIP_API hipError_t hipStreamSynchronize(void* stream) {
  FAKEHIP_ENTER("hipStreamSynchronize", hipErrorLaunchFailure);
  Stream* s = resolveStream(stream);
  if (!s) return ret(noDevice() ? hipErrorNoDevice : hipErrorInvalidHandle);
  if (isCapturing(s)) return ret(hipErrorStreamCaptureUnsupported);
  synchronize(s);
  return ret(s->stickyError.load());
}

#ifndef FAKEHIP_OMIT_REQUIRED  // the variant missing one required symbol (libhetccl-fakehip-missing.so)
FAKEHIP_API hipError_t hipStreamQuery(void* stream) {
  FAKEHIP_ENTER("hipStreamQuery", hipErrorLaunchFailure);
  Stream* s = resolveStream(stream);
  if (!s) return ret(noDevice() ? hipErrorNoDevice : hipErrorInvalidHandle);
  if (isCapturing(s)) return ret(hipErrorStreamCaptureUnsupported);
  if (const int sticky = s->stickyError.load()) return ret(sticky);
  return ret(idle(s) ? hipSuccess : hipErrorNotReady);
}
#endif

FAKEHIP_API hipError_t hipStreamWaitEvent(void* stream, void* event, unsigned flags) {
  FAKEHIP_ENTER("hipStreamWaitEvent", hipErrorInvalidHandle);
  Stream* s = resolveStream(stream);
  Event* e = resolveEvent(event);
  if (!s || !e) return ret(hipErrorInvalidHandle);
  if (flags != 0) return ret(hipErrorInvalidValue);
  const uint64_t target = e->state->recorded.load();
  if (target == 0) return ret(hipSuccess);  // never recorded: nothing to wait for
  std::shared_ptr<EventState> state = e->state;
  enqueue(s, [state, target] { pollUntil([&] { return state->reached.load() >= target; }); });
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipEventCreateWithFlags(void** event, unsigned flags) {
  FAKEHIP_ENTER("hipEventCreateWithFlags", hipErrorOutOfMemory);
  if (!event) return ret(hipErrorInvalidValue);
  if (noDevice()) return ret(hipErrorNoDevice);
  if (flags & ~(hipEventBlockingSync | hipEventDisableTiming | hipEventInterprocess)) return ret(hipErrorInvalidValue);
  if (captureForbids()) return ret(hipErrorStreamCaptureUnsupported);
  *event = createEvent(flags);
  return ret(hipSuccess);
}
FAKEHIP_API hipError_t hipEventCreate(void** event) { return hipEventCreateWithFlags(event, 0); }

FAKEHIP_API hipError_t hipEventDestroy(void* event) {
  FAKEHIP_ENTER("hipEventDestroy", hipErrorInvalidHandle);
  if (!event || !destroyEvent(event)) return ret(hipErrorInvalidHandle);
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipEventRecord(void* event, void* stream) {
  FAKEHIP_ENTER("hipEventRecord", hipErrorInvalidHandle);
  Event* e = resolveEvent(event);
  Stream* s = resolveStream(stream);
  if (!e || !s) return ret(hipErrorInvalidHandle);
  std::shared_ptr<EventState> state = e->state;
  if (isCapturing(s)) {
    enqueue(s, [] {});  // recorded by the capture
    return ret(hipSuccess);
  }
  const uint64_t n = state->recorded.fetch_add(1) + 1;
  enqueue(s, [state, n] {
    uint64_t cur = state->reached.load();
    while (cur < n && !state->reached.compare_exchange_weak(cur, n)) {
    }
  });
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipEventQuery(void* event) {
  FAKEHIP_ENTER("hipEventQuery", hipErrorInvalidHandle);
  Event* e = resolveEvent(event);
  if (!e) return ret(hipErrorInvalidHandle);
  return ret(e->state->reached.load() >= e->state->recorded.load() ? hipSuccess : hipErrorNotReady);
}

FAKEHIP_API hipError_t hipEventSynchronize(void* event) {
  FAKEHIP_ENTER("hipEventSynchronize", hipErrorInvalidHandle);
  Event* e = resolveEvent(event);
  if (!e) return ret(hipErrorInvalidHandle);
  std::shared_ptr<EventState> state = e->state;
  const uint64_t target = state->recorded.load();
  pollUntil([&] { return state->reached.load() >= target; });
  return ret(hipSuccess);
}

// ---------------------------------------------------------------------------------------------------
// Copies and memsets.

FAKEHIP_API hipError_t hipMemcpy(void* dst, const void* src, size_t sizeBytes, int kind) {
  FAKEHIP_ENTER("hipMemcpy", hipErrorInvalidValue);
  if (sizeBytes == 0) return ret(hipSuccess);
  Where d, s;
  if (const hipError_t e = checkCopy(dst, src, sizeBytes, kind, &d, &s)) return ret(e);
  Stream* null = resolveStream(nullptr);
  if (!null) return ret(hipErrorNoDevice);
  enqueue(null, [=] { std::memmove(dst, src, sizeBytes); });
  synchronize(null);  // hipMemcpy returns when the copy is done
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipMemcpyAsync(void* dst, const void* src, size_t sizeBytes, int kind, void* stream) {
  FAKEHIP_ENTER("hipMemcpyAsync", hipErrorInvalidValue);
  Stream* st = resolveStream(stream);
  if (!st) return ret(hipErrorInvalidHandle);
  if (sizeBytes == 0) return ret(hipSuccess);
  Where d, s;
  if (const hipError_t e = checkCopy(dst, src, sizeBytes, kind, &d, &s)) return ret(e);
  enqueue(st, [=] { std::memmove(dst, src, sizeBytes); });
  // With pageable host memory the copy is staged: the call returns once it is done (it may block).
  if ((d == Where::Pageable || s == Where::Pageable) && !isCapturing(st)) synchronize(st);
  return ret(hipSuccess);
}

/// hipMemset is asynchronous with respect to the host for device memory (queued on the null stream); the
/// fake delays it a little so that a caller reading the memory without synchronising sees the old bytes.
FAKEHIP_API hipError_t hipMemset(void* dst, int value, size_t sizeBytes) {
  FAKEHIP_ENTER("hipMemset", hipErrorInvalidValue);
  if (sizeBytes == 0) return ret(hipSuccess);
  if (!dst || !deviceAccessible(dst, sizeBytes)) return ret(hipErrorInvalidValue);
  Stream* null = resolveStream(nullptr);
  if (!null) return ret(hipErrorNoDevice);
  enqueue(null, [=] {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    std::memset(dst, value, sizeBytes);
  });
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipMemsetAsync(void* dst, int value, size_t sizeBytes, void* stream) {
  FAKEHIP_ENTER("hipMemsetAsync", hipErrorInvalidValue);
  Stream* st = resolveStream(stream);
  if (!st) return ret(hipErrorInvalidHandle);
  if (sizeBytes == 0) return ret(hipSuccess);
  if (!dst || !deviceAccessible(dst, sizeBytes)) return ret(hipErrorInvalidValue);
  enqueue(st, [=] { std::memset(dst, value, sizeBytes); });
  return ret(hipSuccess);
}

// ---------------------------------------------------------------------------------------------------
// Capture.

FAKEHIP_API hipError_t hipStreamGetCaptureInfo(void* stream, int* captureStatus, unsigned long long* id) {
  FAKEHIP_ENTER("hipStreamGetCaptureInfo", hipErrorInvalidHandle);
  if (!captureStatus) return ret(hipErrorInvalidValue);
  Stream* s = resolveStream(stream);
  if (!s) return ret(hipErrorInvalidHandle);
  std::lock_guard<std::mutex> lock(s->mu);
  *captureStatus = s->capturing ? hipStreamCaptureStatusActive : hipStreamCaptureStatusNone;
  if (id) *id = s->capturing ? s->captureId : 0;
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipThreadExchangeStreamCaptureMode(int* mode) {
  FAKEHIP_ENTER("hipThreadExchangeStreamCaptureMode", hipErrorInvalidValue);
  if (!mode || *mode < hipStreamCaptureModeGlobal || *mode > hipStreamCaptureModeRelaxed) return ret(hipErrorInvalidValue);
  std::swap(*mode, threadCaptureMode());
  return ret(hipSuccess);
}

// ---------------------------------------------------------------------------------------------------
// Stream memory operations.

#ifndef FAKEHIP_NO_MEMOP_SYMBOLS
static hipError_t checkMemopWord(void* ptr) {
  if (config().noStreamMemops) return hipErrorNotSupported;
  if (!ptr || reinterpret_cast<uintptr_t>(ptr) % 8 != 0) return hipErrorInvalidValue;
  if (!deviceAccessible(ptr, 8)) return hipErrorInvalidValue;  // must be device memory or mapped host memory
  return hipSuccess;
}

FAKEHIP_API hipError_t hipStreamWaitValue64(void* stream, void* ptr, uint64_t value, unsigned flags, uint64_t mask) {
  FAKEHIP_ENTER("hipStreamWaitValue64", hipErrorInvalidValue);
  Stream* s = resolveStream(stream);
  if (!s) return ret(hipErrorInvalidHandle);
  if (const hipError_t e = checkMemopWord(ptr)) return ret(e);
  if (flags > hipStreamWaitValueNor) return ret(hipErrorInvalidValue);
  auto* word = static_cast<uint64_t*>(ptr);
  counters().waitValueOps++;
  enqueue(s, [=] {
    pollUntil([&] {
      const uint64_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE) & mask;
      switch (flags) {
        case hipStreamWaitValueGte: return static_cast<int64_t>(v) >= static_cast<int64_t>(value);  // HSA signals: signed
        case hipStreamWaitValueEq: return v == value;
        case hipStreamWaitValueAnd: return (v & value) != 0;
        default: return ~(v | (value & mask)) != 0;
      }
    });
  });
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipStreamWriteValue64(void* stream, void* ptr, uint64_t value, unsigned flags) {
  FAKEHIP_ENTER("hipStreamWriteValue64", hipErrorInvalidValue);
  Stream* s = resolveStream(stream);
  if (!s) return ret(hipErrorInvalidHandle);
  if (const hipError_t e = checkMemopWord(ptr)) return ret(e);
  if (flags != 0) return ret(hipErrorInvalidValue);
  auto* word = static_cast<uint64_t*>(ptr);
  counters().writeValueOps++;
  enqueue(s, [=] { __atomic_store_n(word, value, __ATOMIC_RELEASE); });
  return ret(hipSuccess);
}
#endif

// ---------------------------------------------------------------------------------------------------
// Modules and launches.

FAKEHIP_API hipError_t hipModuleLoadData(void** module, const void* image) {
  FAKEHIP_ENTER("hipModuleLoadData", hipErrorSharedObjectInitFailed);
  if (!module || !image) return ret(hipErrorInvalidValue);
  *module = nullptr;
  if (noDevice()) return ret(hipErrorNoDevice);
  auto* m = new Module;
  std::string why;
  int rc = parseImage(image, machOfArch(deviceArch(currentDevice())), &m->code, &why);
  if (rc == -1) {
    badAccess("hipModuleLoadData: " + why);
    rc = hipErrorInvalidImage;
  }
  if (rc != hipSuccess) {
    delete m;
    counters().moduleLoadFailures++;
    std::fprintf(stderr, "fakehip: hipModuleLoadData: %s (%s)\n", errorName(rc), why.c_str());
    return ret(rc);
  }
  {
    std::lock_guard<std::mutex> lock(modules().mu);
    modules().modules.insert(m);
  }
  counters().moduleLoads++;
  *module = m;
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipModuleUnload(void* module) {
  FAKEHIP_ENTER("hipModuleUnload", hipErrorInvalidHandle);
  std::lock_guard<std::mutex> lock(modules().mu);
  auto* m = static_cast<Module*>(module);
  if (!m || !modules().modules.erase(m)) return ret(hipErrorInvalidHandle);
  m->loaded = false;  // kept: its functions' handles now fail to launch
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipModuleGetFunction(void** function, void* module, const char* kernelName) {
  FAKEHIP_ENTER("hipModuleGetFunction", hipErrorNotFound);
  if (!function || !kernelName) return ret(hipErrorInvalidValue);
  *function = nullptr;
  auto* m = static_cast<Module*>(module);
  {
    std::lock_guard<std::mutex> lock(modules().mu);
    if (!m || !modules().modules.count(m)) return ret(hipErrorInvalidHandle);
  }
  const auto& syms = m->code.symbols;
  if (std::find(syms.begin(), syms.end(), kernelName) == syms.end()) return ret(hipErrorNotFound);
  const KernelDef* k = findKernel(kernelName);
  if (!k) {
    std::fprintf(stderr, "fakehip: hipModuleGetFunction: the fake cannot run kernel '%s'\n", kernelName);
    return ret(hipErrorNotFound);
  }
  auto* f = new Function{m, k};
  std::lock_guard<std::mutex> lock(modules().mu);
  modules().functions.insert(f);
  *function = f;
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipModuleLaunchKernel(void* function, unsigned gridDimX, unsigned gridDimY, unsigned gridDimZ,
                                             unsigned blockDimX, unsigned blockDimY, unsigned blockDimZ,
                                             unsigned sharedMemBytes, void* stream, void** kernelParams, void** extra) {
  FAKEHIP_ENTER("hipModuleLaunchKernel", hipErrorLaunchFailure);
  auto* f = static_cast<Function*>(function);
  {
    std::lock_guard<std::mutex> lock(modules().mu);
    if (!f || !modules().functions.count(f) || !f->module->loaded) return ret(hipErrorInvalidHandle);
  }
  Stream* s = resolveStream(stream);
  if (!s) return ret(hipErrorInvalidHandle);
  const uint64_t threads = uint64_t{blockDimX} * blockDimY * blockDimZ;
  if (!gridDimX || !gridDimY || !gridDimZ || threads == 0 || threads > 1024 || sharedMemBytes > 65536)
    return ret(hipErrorInvalidConfiguration);
  if (extra) return ret(hipErrorNotSupported);  // the plugin passes kernelParams only
  const KernelDef* k = f->kernel;
  if (!kernelParams && !k->paramSizes.empty()) return ret(hipErrorInvalidValue);
  std::vector<char> params;
  for (size_t i = 0; i < k->paramSizes.size(); ++i) {
    if (!kernelParams[i]) return ret(hipErrorInvalidValue);
    const char* p = static_cast<const char*>(kernelParams[i]);
    params.insert(params.end(), p, p + k->paramSizes[i]);  // copied now: the caller's locals go away
  }
  const LaunchShape shape{{gridDimX, gridDimY, gridDimZ}, {blockDimX, blockDimY, blockDimZ}};
  counters().launches++;
  enqueue(s, [k, shape, params = std::move(params)] {
    runKernel(*k, shape, params);
    counters().kernelsRun++;
  });
  return ret(hipSuccess);
}

// ---------------------------------------------------------------------------------------------------
// hiprtc.

FAKEHIP_API const char* hiprtcGetErrorString(hiprtcResult result) { return hiprtcErrorText(result); }

FAKEHIP_API hiprtcResult hiprtcVersion(int* major, int* minor) {
  if (enter("hiprtcVersion", HIPRTC_ERROR_INTERNAL_ERROR)) return HIPRTC_ERROR_INTERNAL_ERROR;
  if (!major || !minor) return HIPRTC_ERROR_INVALID_INPUT;
  *major = config().majorVersion();
  *minor = config().runtimeVersion / 100000 % 100;
  return HIPRTC_SUCCESS;
}

FAKEHIP_API hiprtcResult hiprtcCreateProgram(void** prog, const char* src, const char* name, int numHeaders,
                                             const char** headers, const char** includeNames) {
  if (const int e = enter("hiprtcCreateProgram", HIPRTC_ERROR_PROGRAM_CREATION_FAILURE)) return e;
  if (!prog || !src || numHeaders < 0 || (numHeaders > 0 && (!headers || !includeNames))) return HIPRTC_ERROR_INVALID_INPUT;
  auto* p = new Program;
  p->source = src;
  p->name = name ? name : "";
  std::lock_guard<std::mutex> lock(programs().mu);
  programs().live.insert(p);
  *prog = p;
  return HIPRTC_SUCCESS;
}

FAKEHIP_API hiprtcResult hiprtcCompileProgram(void* prog, int numOptions, const char** options) {
  if (const int e = enter("hiprtcCompileProgram", HIPRTC_ERROR_COMPILATION)) {
    counters().compileFailures++;
    if (Program* p = program(prog)) p->log = "fakehip: injected compilation failure\n";
    return e;
  }
  Program* p = program(prog);
  if (!p) return HIPRTC_ERROR_INVALID_PROGRAM;
  if (numOptions < 0 || (numOptions > 0 && !options)) return HIPRTC_ERROR_INVALID_INPUT;
  std::string arch = deviceArch(currentDevice());
  for (int i = 0; i < numOptions; ++i) {
    if (!options[i]) return HIPRTC_ERROR_INVALID_OPTION;
    const std::string o = options[i];
    if (o.rfind("--offload-arch=", 0) == 0) arch = o.substr(15);
    else if (o.rfind("--gpu-architecture=", 0) == 0) arch = o.substr(19);
  }
  const uint32_t mach = machOfArch(arch);
  if (mach == 0) {
    counters().compileFailures++;
    p->log = "fakehip: unknown offload architecture '" + arch + "'\n";
    return HIPRTC_ERROR_INVALID_OPTION;
  }
  if (p->source.find("hetccl_") == std::string::npos) {  // not the plugin's kernels: nothing it could run
    counters().compileFailures++;
    p->log = "fakehip: the source defines none of the plugin's kernels\n";
    return HIPRTC_ERROR_COMPILATION;
  }
  p->code = makeElf(mach, kernelNames(), "fakehip hiprtc " + arch + " " + p->name);
  p->compiled = true;
  p->log = "";
  counters().compiles++;
  return HIPRTC_SUCCESS;
}

FAKEHIP_API hiprtcResult hiprtcGetProgramLogSize(void* prog, size_t* logSizeRet) {
  if (const int e = enter("hiprtcGetProgramLogSize", HIPRTC_ERROR_INTERNAL_ERROR)) return e;
  Program* p = program(prog);
  if (!p) return HIPRTC_ERROR_INVALID_PROGRAM;
  if (!logSizeRet) return HIPRTC_ERROR_INVALID_INPUT;
  *logSizeRet = p->log.size() + 1;
  return HIPRTC_SUCCESS;
}

FAKEHIP_API hiprtcResult hiprtcGetProgramLog(void* prog, char* log) {
  if (const int e = enter("hiprtcGetProgramLog", HIPRTC_ERROR_INTERNAL_ERROR)) return e;
  Program* p = program(prog);
  if (!p) return HIPRTC_ERROR_INVALID_PROGRAM;
  if (!log) return HIPRTC_ERROR_INVALID_INPUT;
  std::memcpy(log, p->log.c_str(), p->log.size() + 1);
  return HIPRTC_SUCCESS;
}

FAKEHIP_API hiprtcResult hiprtcGetCodeSize(void* prog, size_t* codeSizeRet) {
  if (const int e = enter("hiprtcGetCodeSize", HIPRTC_ERROR_INTERNAL_ERROR)) return e;
  Program* p = program(prog);
  if (!p || !p->compiled) return HIPRTC_ERROR_INVALID_PROGRAM;
  if (!codeSizeRet) return HIPRTC_ERROR_INVALID_INPUT;
  *codeSizeRet = p->code.size();
  return HIPRTC_SUCCESS;
}

FAKEHIP_API hiprtcResult hiprtcGetCode(void* prog, char* code) {
  if (const int e = enter("hiprtcGetCode", HIPRTC_ERROR_INTERNAL_ERROR)) return e;
  Program* p = program(prog);
  if (!p || !p->compiled) return HIPRTC_ERROR_INVALID_PROGRAM;
  if (!code) return HIPRTC_ERROR_INVALID_INPUT;
  std::memcpy(code, p->code.data(), p->code.size());
  return HIPRTC_SUCCESS;
}

FAKEHIP_API hiprtcResult hiprtcDestroyProgram(void** prog) {
  if (const int e = enter("hiprtcDestroyProgram", HIPRTC_ERROR_INTERNAL_ERROR)) return e;
  if (!prog) return HIPRTC_ERROR_INVALID_INPUT;
  auto* p = static_cast<Program*>(*prog);
  {
    std::lock_guard<std::mutex> lock(programs().mu);
    if (!programs().live.erase(p)) return HIPRTC_ERROR_INVALID_PROGRAM;
  }
  delete p;
  *prog = nullptr;
  return HIPRTC_SUCCESS;
}

// ---------------------------------------------------------------------------------------------------
// Control interface (fake_hip.h).

FAKEHIP_API void fakehipStats(fakehipStats_t* out) {
  Counters& c = counters();
  *out = fakehipStats_t{c.compiles, c.compileFailures, c.moduleLoads, c.moduleLoadFailures, c.launches,
                        c.kernelsRun, c.waitValueOps, c.writeValueOps, c.badAccesses, c.injectedFailures,
                        c.liveDeviceAllocs, c.livePinnedAllocs, c.liveRegistrations, c.liveStreams,
                        c.liveEvents, c.capturedOps, c.relaxedViolations};
}

FAKEHIP_API void fakehipFailCall(const char* name, int nth, int error) { failCall(name, nth, error); }

FAKEHIP_API uint64_t fakehipCallCount(const char* name) { return callCount(name); }

FAKEHIP_API int fakehipSetCapturing(void* stream, int active, unsigned long long id, int mode) {
  Stream* s = resolveStream(stream);
  if (!s || !stream) return hipErrorInvalidHandle;
  std::lock_guard<std::mutex> lock(s->mu);
  s->capturing = active != 0;
  s->captureId = active ? id : 0;
  s->captureMode = mode;
  return hipSuccess;
}

FAKEHIP_API uint64_t fakehipPendingOps(void* stream) {
  Stream* s = resolveStream(stream);
  return s ? pending(s) : 0;
}

FAKEHIP_API const char* fakehipLastBadAccess(void) { return lastBadAccess(); }

FAKEHIP_API int fakehipKnowsKernel(const char* name) { return name && findKernel(name) ? 1 : 0; }
