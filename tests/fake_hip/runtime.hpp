// The fake HIP runtime's device model: devices, tracked memory, streams (one worker thread each,
// executing queued operations in order), events, stream capture marks, failure injection and counters.
// Process-wide state lives in heap objects that are never destroyed (worker threads may run until exit).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hip_types.hpp"

namespace fakehip {

// ---- configuration (environment, read once) ----
struct Config {
  int devices = 1;               // FAKEHIP_DEVICES
  bool noDevice = false;         // FAKEHIP_NO_DEVICE=1
  bool noStreamMemops = false;   // FAKEHIP_NO_STREAM_MEMOPS=1
  std::string arch = "gfx90a";   // FAKEHIP_ARCH (may carry features: "gfx90a:sramecc+:xnack-")
  std::string pciBusId;          // FAKEHIP_PCI_BUS_ID ("": hipDeviceGetPCIBusId is not supported)
  /// hipRuntimeGetVersion's value, as HIP reports it: major*10000000 + minor*100000 + patch (60241134 for
  /// 6.2.41134). FAKEHIP_VERSION is either that form or the short major*10000 + minor*100 (60200; the patch
  /// then is 0). Default 6.2.0.
  int runtimeVersion = 60200000;
  int majorVersion() const { return runtimeVersion / 10000000; }
};
const Config& config();

// ---- counters ----
struct Counters {
  std::atomic<uint64_t> compiles{0}, compileFailures{0}, moduleLoads{0}, moduleLoadFailures{0}, launches{0},
      kernelsRun{0}, waitValueOps{0}, writeValueOps{0}, badAccesses{0}, injectedFailures{0}, liveDeviceAllocs{0},
      livePinnedAllocs{0}, liveRegistrations{0}, liveStreams{0}, liveEvents{0}, capturedOps{0}, relaxedViolations{0},
      liveIpcMappings{0}, freedWhileMapped{0};
};
Counters& counters();

// ---- failure injection and call counting ----
/// Counts a call of `name`; returns the error to fail it with (0: proceed). `usual` is the function's
/// natural failure code, used when the injection gives none.
int enter(const char* name, int usual);
void failCall(const char* name, int nth, int error);
uint64_t callCount(const char* name);
/// hipGetLastError / hipPeekAtLastError state: the calling thread's last error.
int recordError(int e);  // returns e
int takeLastError();
int peekLastError();

// ---- devices ----
int deviceCount();  // 0 with FAKEHIP_NO_DEVICE
int currentDevice();
void setCurrentDevice(int d);

// ---- memory ----
enum class MemKind { Device, Pinned, Registered };
struct Range {
  uintptr_t base = 0;
  size_t size = 0;
  MemKind kind = MemKind::Device;
  int device = -1;
  unsigned flags = 0;
  /// hipMalloc blocks: the memfd backing the block (its pages are what hipIpcGetMemHandle shares), open
  /// until hipFree. -1 for every other range.
  int memfd = -1;
  /// hipIpcOpenMemHandle: another process's block mapped here (kind Device); only hipIpcCloseMemHandle
  /// releases it.
  bool ipcMapping = false;
  /// IPC mappings: this process's descriptor of the exporter's memfd, holding a shared flock until
  /// hipIpcCloseMemHandle, so that the exporter's hipFree sees the block is still mapped elsewhere.
  int ipcFd = -1;
};
/// Bytes mapped for a block of `size` bytes (memfd blocks and IPC mappings): whole pages.
size_t mappedBytes(size_t size);
/// The tracked range containing [p, p+bytes) (bytes 0: containing p), if any.
bool findRange(const void* p, size_t bytes, Range* out);
void addRange(const Range& r);
/// Removes the range starting exactly at p of `kind`; false if none.
bool removeRange(const void* p, MemKind kind, Range* removed = nullptr);
/// Whether any tracked range overlaps [p, p+bytes).
bool overlapsRange(const void* p, size_t bytes);
/// Whether device code may touch [p, p+bytes): device memory, or pinned / registered host memory.
bool deviceAccessible(const void* p, size_t bytes);
/// Records a bad access (counter, text, and a sticky error hipErrorIllegalAddress on the stream).
void badAccess(const std::string& what);
const char* lastBadAccess();

// ---- streams ----
struct Stream;
using Op = std::function<void()>;
struct Stream {
  int device = 0;
  unsigned flags = 0;
  bool isNull = false;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Op> queue;
  uint64_t enqueued = 0;         // under mu
  std::atomic<uint64_t> done{0};
  bool stopping = false;         // under mu
  std::atomic<int> stickyError{0};
  // capture (under mu)
  bool capturing = false;
  unsigned long long captureId = 0;
  int captureMode = 0;
  uint64_t captured = 0;
  std::thread worker;
};

/// The Stream a hipStream_t names (nullptr / hipStreamPerThread: the current device's null stream);
/// nullptr for an unknown handle.
Stream* resolveStream(void* handle);
/// Creates a stream on the current device (its worker starts at once).
Stream* createStream(unsigned flags);
/// Removes the stream: its worker finishes the queued work, then exits. False for an unknown handle.
bool destroyStream(void* handle);
/// Queues `op` on `s`: returns its sequence number (0 when recorded by a capture instead).
uint64_t enqueue(Stream* s, Op op);
/// Blocks until every operation queued before the call is done.
void synchronize(Stream* s);
bool idle(Stream* s);
uint64_t pending(Stream* s);
/// Every stream of device `d` (synchronised by hipDeviceSynchronize).
void synchronizeDevice(int d);
/// Whether some stream is being captured in global mode (allocation calls then need a relaxed thread).
bool globalCaptureActive();
int& threadCaptureMode();

/// Polls `ready` with a short backoff until it holds.
void pollUntil(const std::function<bool()>& ready);

// ---- events ----
struct EventState {
  unsigned flags = 0;
  std::atomic<uint64_t> recorded{0};  // records issued
  std::atomic<uint64_t> reached{0};   // highest record reached by its stream
};
struct Event {
  std::shared_ptr<EventState> state;
};
Event* createEvent(unsigned flags);
bool destroyEvent(void* handle);
Event* resolveEvent(void* handle);

}  // namespace fakehip
