#include "runtime.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

namespace fakehip {
namespace {

template <typename T>
T& leak() {  // process-wide state, never destroyed: worker threads may still use it while the process exits
  static T* t = new T;
  return *t;
}

Config readConfig() {
  Config c;
  if (const char* v = std::getenv("FAKEHIP_DEVICES")) c.devices = std::max(0, std::atoi(v));
  if (const char* v = std::getenv("FAKEHIP_NO_DEVICE")) c.noDevice = std::strcmp(v, "1") == 0;
  if (const char* v = std::getenv("FAKEHIP_NO_STREAM_MEMOPS")) c.noStreamMemops = std::strcmp(v, "1") == 0;
  if (const char* v = std::getenv("FAKEHIP_ARCH"); v && *v) c.arch = v;
  if (const char* v = std::getenv("FAKEHIP_PCI_BUS_ID")) c.pciBusId = v;
  if (const char* v = std::getenv("FAKEHIP_VERSION"); v && *v) {
    const long n = std::atol(v);
    c.runtimeVersion = n >= 1000000 ? static_cast<int>(n) : static_cast<int>(n / 10000 * 10000000 + n / 100 % 100 * 100000);
  }
  return c;
}

struct Injection {
  int remaining = 1;  // fails when it reaches 0 on a call
  int error = 0;
};

struct CallTable {
  std::mutex mu;
  std::unordered_map<std::string, uint64_t> calls;
  std::unordered_map<std::string, Injection> injections;
  bool envRead = false;
};

void readFailEnv(CallTable& t) {  // under t.mu
  if (t.envRead) return;
  t.envRead = true;
  const char* v = std::getenv("FAKEHIP_FAIL");
  if (!v || !*v) return;
  std::string spec(v);
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string::npos) comma = spec.size();
    std::string item = spec.substr(pos, comma - pos);
    pos = comma + 1;
    if (item.empty()) continue;
    Injection inj;
    std::string name = item;
    if (size_t c1 = item.find(':'); c1 != std::string::npos) {
      name = item.substr(0, c1);
      std::string rest = item.substr(c1 + 1);
      size_t c2 = rest.find(':');
      inj.remaining = std::max(1, std::atoi(rest.substr(0, c2).c_str()));
      if (c2 != std::string::npos) inj.error = std::atoi(rest.substr(c2 + 1).c_str());
    }
    t.injections[name] = inj;
  }
}

thread_local int tLastError = 0;
thread_local int tDevice = 0;
thread_local int tCaptureMode = hipStreamCaptureModeGlobal;
thread_local Stream* tRunningStream = nullptr;

struct MemoryTable {
  std::mutex mu;
  std::map<uintptr_t, Range> ranges;
  std::string lastBad;
};

struct StreamTable {
  std::mutex mu;
  std::set<Stream*> live;
  std::vector<Stream*> nullStreams;  // per device, created on first use
  std::set<Event*> events;
  std::vector<Stream*> destroyed;  // never freed (stale handles stay safe to look up); kept reachable
};

void workerLoop(Stream* s) {
  tRunningStream = s;
  tDevice = s->device;
  for (;;) {
    Op op;
    {
      std::unique_lock<std::mutex> lock(s->mu);
      s->cv.wait(lock, [&] { return !s->queue.empty() || s->stopping; });
      if (s->queue.empty()) return;  // stopping, and everything queued is done
      op = std::move(s->queue.front());
      s->queue.pop_front();
    }
    op();
    {
      std::lock_guard<std::mutex> lock(s->mu);
      s->done.fetch_add(1);
    }
    s->cv.notify_all();
  }
}

Stream* newStream(int device, unsigned flags, bool isNull) {
  auto* s = new Stream;
  s->device = device;
  s->flags = flags;
  s->isNull = isNull;
  s->worker = std::thread(workerLoop, s);
  s->worker.detach();
  return s;
}

}  // namespace

const Config& config() {
  static const Config* c = new Config(readConfig());
  return *c;
}

Counters& counters() { return leak<Counters>(); }

int enter(const char* name, int usual) {
  CallTable& t = leak<CallTable>();
  std::lock_guard<std::mutex> lock(t.mu);
  readFailEnv(t);
  ++t.calls[name];
  auto it = t.injections.find(name);
  if (it == t.injections.end()) return 0;
  if (--it->second.remaining > 0) return 0;
  const int error = it->second.error ? it->second.error : usual;
  t.injections.erase(it);
  counters().injectedFailures++;
  return error;
}

void failCall(const char* name, int nth, int error) {
  CallTable& t = leak<CallTable>();
  std::lock_guard<std::mutex> lock(t.mu);
  readFailEnv(t);
  if (!name) {
    t.injections.clear();
    return;
  }
  t.injections[name] = Injection{std::max(1, nth), error};
}

uint64_t callCount(const char* name) {
  CallTable& t = leak<CallTable>();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.calls.find(name);
  return it == t.calls.end() ? 0 : it->second;
}

int recordError(int e) {
  // HIP before 7.0 overwrote the thread's last error with every call's result; 7.0 keeps the last
  // failure until hipGetLastError reads it (as CUDA does).
  if (e != hipSuccess || config().majorVersion() < 7) tLastError = e;
  return e;
}
int takeLastError() {
  const int e = tLastError;
  tLastError = hipSuccess;
  return e;
}
int peekLastError() { return tLastError; }

int deviceCount() { return config().noDevice ? 0 : config().devices; }
int currentDevice() { return tDevice; }
void setCurrentDevice(int d) { tDevice = d; }

size_t mappedBytes(size_t size) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (size + page - 1) / page * page;
}

bool findRange(const void* p, size_t bytes, Range* out) {
  MemoryTable& m = leak<MemoryTable>();
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(m.mu);
  auto it = m.ranges.upper_bound(a);
  if (it == m.ranges.begin()) return false;
  --it;
  const Range& r = it->second;
  if (a < r.base || a >= r.base + r.size || a + bytes > r.base + r.size) return false;
  if (out) *out = r;
  return true;
}

void addRange(const Range& r) {
  MemoryTable& m = leak<MemoryTable>();
  std::lock_guard<std::mutex> lock(m.mu);
  m.ranges[r.base] = r;
}

bool removeRange(const void* p, MemKind kind, Range* removed) {
  MemoryTable& m = leak<MemoryTable>();
  std::lock_guard<std::mutex> lock(m.mu);
  auto it = m.ranges.find(reinterpret_cast<uintptr_t>(p));
  if (it == m.ranges.end() || it->second.kind != kind) return false;
  if (removed) *removed = it->second;
  m.ranges.erase(it);
  return true;
}

bool overlapsRange(const void* p, size_t bytes) {
  MemoryTable& m = leak<MemoryTable>();
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(m.mu);
  auto it = m.ranges.lower_bound(a + bytes);  // first range starting at or after the end
  if (it == m.ranges.begin()) return false;
  --it;
  return it->second.base + it->second.size > a;
}

bool deviceAccessible(const void* p, size_t bytes) { return bytes == 0 || findRange(p, bytes, nullptr); }

void badAccess(const std::string& what) {
  MemoryTable& m = leak<MemoryTable>();
  {
    std::lock_guard<std::mutex> lock(m.mu);
    m.lastBad = what;
  }
  counters().badAccesses++;
  std::fprintf(stderr, "fakehip: bad access: %s\n", what.c_str());
  if (tRunningStream) tRunningStream->stickyError.store(hipErrorIllegalAddress);
}

const char* lastBadAccess() {
  MemoryTable& m = leak<MemoryTable>();
  static thread_local std::string copy;
  std::lock_guard<std::mutex> lock(m.mu);
  copy = m.lastBad;
  return copy.c_str();
}

Stream* resolveStream(void* handle) {
  StreamTable& t = leak<StreamTable>();
  std::lock_guard<std::mutex> lock(t.mu);
  if (handle == nullptr || handle == reinterpret_cast<void*>(2) /* hipStreamPerThread */) {
    const int d = tDevice;
    if (d < 0 || d >= std::max(1, deviceCount())) return nullptr;
    if (t.nullStreams.size() <= static_cast<size_t>(d)) t.nullStreams.resize(d + 1, nullptr);
    if (!t.nullStreams[d]) t.nullStreams[d] = newStream(d, hipStreamDefault, true);
    return t.nullStreams[d];
  }
  auto* s = static_cast<Stream*>(handle);
  return t.live.count(s) ? s : nullptr;
}

Stream* createStream(unsigned flags) {
  Stream* s = newStream(tDevice, flags, false);
  StreamTable& t = leak<StreamTable>();
  std::lock_guard<std::mutex> lock(t.mu);
  t.live.insert(s);
  counters().liveStreams++;
  return s;
}

bool destroyStream(void* handle) {
  StreamTable& t = leak<StreamTable>();
  Stream* s = static_cast<Stream*>(handle);
  {
    std::lock_guard<std::mutex> lock(t.mu);
    if (!t.live.erase(s)) return false;
    t.destroyed.push_back(s);
  }
  counters().liveStreams--;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    s->stopping = true;  // the worker drains the queue, then exits; the object is never freed (stale handles)
  }
  s->cv.notify_all();
  return true;
}

uint64_t enqueue(Stream* s, Op op) {
  uint64_t seq = 0;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->capturing) {
      ++s->captured;
      counters().capturedOps++;
      return 0;
    }
    s->queue.push_back(std::move(op));
    seq = ++s->enqueued;
  }
  s->cv.notify_all();
  return seq;
}

void synchronize(Stream* s) {
  std::unique_lock<std::mutex> lock(s->mu);
  const uint64_t target = s->enqueued;
  s->cv.wait(lock, [&] { return s->done.load() >= target; });
}

bool idle(Stream* s) {
  std::lock_guard<std::mutex> lock(s->mu);
  return s->done.load() >= s->enqueued;
}

uint64_t pending(Stream* s) {
  std::lock_guard<std::mutex> lock(s->mu);
  return s->enqueued - s->done.load();
}

void synchronizeDevice(int d) {
  std::vector<Stream*> streams;
  {
    StreamTable& t = leak<StreamTable>();
    std::lock_guard<std::mutex> lock(t.mu);
    for (Stream* s : t.live)
      if (s->device == d) streams.push_back(s);
    if (static_cast<size_t>(d) < t.nullStreams.size() && t.nullStreams[d]) streams.push_back(t.nullStreams[d]);
  }
  for (Stream* s : streams) synchronize(s);
}

bool globalCaptureActive() {
  StreamTable& t = leak<StreamTable>();
  std::lock_guard<std::mutex> lock(t.mu);
  for (Stream* s : t.live) {
    std::lock_guard<std::mutex> l2(s->mu);
    if (s->capturing && s->captureMode == hipStreamCaptureModeGlobal) return true;
  }
  return false;
}

int& threadCaptureMode() { return tCaptureMode; }

void pollUntil(const std::function<bool()>& ready) {
  for (int spin = 0; !ready(); ++spin) {
    if (spin < 64)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(spin < 1000 ? 20 : 200));
  }
}

Event* createEvent(unsigned flags) {
  auto* e = new Event{std::make_shared<EventState>()};
  e->state->flags = flags;
  StreamTable& t = leak<StreamTable>();
  std::lock_guard<std::mutex> lock(t.mu);
  t.events.insert(e);
  counters().liveEvents++;
  return e;
}

bool destroyEvent(void* handle) {
  StreamTable& t = leak<StreamTable>();
  auto* e = static_cast<Event*>(handle);
  {
    std::lock_guard<std::mutex> lock(t.mu);
    if (!t.events.erase(e)) return false;
  }
  counters().liveEvents--;
  delete e;  // queued records and waits hold the state
  return true;
}

Event* resolveEvent(void* handle) {
  StreamTable& t = leak<StreamTable>();
  std::lock_guard<std::mutex> lock(t.mu);
  auto* e = static_cast<Event*>(handle);
  return t.events.count(e) ? e : nullptr;
}

}  // namespace fakehip
