#include "sim_gpu.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "device/host/reduce.hpp"

namespace hetccl::test::sim {
namespace {

// The scheduler (Device::loop): at every step one stream whose head can run, chosen at random; during
// phases of random length a random half of the streams is paused (runs only when nothing else can);
// now and then a short sleep lets host threads enqueue meanwhile.
constexpr int kMaxPhaseOps = 256;
constexpr int kSleepOneIn = 128;
constexpr int kMaxSleepUs = 200;

/// Each record gets a number; a wait binds to the record made before it and passes once that record has
/// executed (records on different streams may execute out of order).
struct Event {
  std::atomic<uint64_t> recorded{0};  // records made (enqueue side)
  std::mutex mu;
  uint64_t doneUpTo = 0;          // every record <= this has executed
  std::set<uint64_t> doneAbove;   // executed records above doneUpTo

  void complete(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu);
    if (id != doneUpTo + 1) {
      doneAbove.insert(id);
      return;
    }
    ++doneUpTo;
    while (doneAbove.erase(doneUpTo + 1)) ++doneUpTo;
  }
  bool done(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu);
    return id <= doneUpTo || doneAbove.count(id) != 0;
  }
};

struct Op {
  enum Kind { Copy, Set, WaitFlag, WriteFlag, Record, WaitEvent, Reduce, Scale, Divide } kind;
  void* dst = nullptr;
  const void* src = nullptr;
  size_t n = 0;  // bytes (Copy, Set) or elements (kernels)
  uint64_t value = 0;
  Event* event = nullptr;
  int type = 0, op = 0;
  unsigned char scalar[8] = {};
};

struct Stream {
  std::deque<Op> ops;
  bool paused = false;  // in this phase of the scheduler
};

thread_local std::string tLastError;

int failWith(const char* what) {
  tLastError = what;
  return HETCCL_GPU_ERR_ARGUMENT;
}

class Device {
 public:
  Device() : seed_(chooseSeed()), rng_(seed_) {
    std::fprintf(stderr, "[sim gpu] scheduler seed %llu (HETCCL_SIM_SEED=%llu repeats its choices)\n",
                 static_cast<unsigned long long>(seed_), static_cast<unsigned long long>(seed_));
    worker_ = std::thread([this] { loop(); });
    worker_.detach();  // lives as long as the process
  }

  Stream* stream(void* s) { return s ? static_cast<Stream*>(s) : &legacy_; }
  void push(void* s, Op op) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stream(s)->ops.push_back(op);
    }
    cv_.notify_all();
  }
  Stream* newStream() {
    auto s = std::make_unique<Stream>();
    Stream* raw = s.get();
    std::lock_guard<std::mutex> lock(mu_);
    owned_[raw] = std::move(s);
    return raw;
  }
  void destroy(Stream* s) {
    std::lock_guard<std::mutex> lock(mu_);
    owned_.erase(s);
  }
  bool idle(void* s) {
    std::lock_guard<std::mutex> lock(mu_);
    return stream(s)->ops.empty();
  }
  std::string dump() {
    std::lock_guard<std::mutex> lock(mu_);
    std::string out = concat("sim gpu scheduler seed ", seed_, "\n");
    auto one = [&](const char* name, Stream& s) {
      if (s.ops.empty()) return;
      const Op& h = s.ops.front();
      out += concat(name, ": ", s.ops.size(), " ops, head kind ", int(h.kind), " value ", h.value);
      if (h.kind == Op::WaitFlag) out += concat(" flag now ", *static_cast<const uint64_t*>(h.src));
      if (h.kind == Op::WaitEvent) out += concat(" event record done ", h.event->done(h.value));
      out += "\n";
    };
    one("legacy", legacy_);
    for (auto& [raw, s] : owned_) one(concat((void*)raw).c_str(), *s);
    return out;
  }
  size_t pending() {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = legacy_.ops.size();
    for (auto& [raw, s] : owned_) n += s->ops.size();
    return n;
  }
  void synchronize(void* s) {
    while (!idle(s)) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  uint64_t seed() const { return seed_; }

  std::atomic<int> failMemcpyIn{0};
  std::mutex memMu;
  std::map<uintptr_t, size_t> deviceRanges;

 private:
  static bool runnable(const Op& op) {
    switch (op.kind) {
      case Op::WaitFlag:
        return static_cast<int64_t>(__atomic_load_n(static_cast<const uint64_t*>(op.src), __ATOMIC_ACQUIRE) - op.value) >= 0;
      case Op::WaitEvent: return op.event->done(op.value);
      default: return true;
    }
  }
  static void execute(const Op& op) {
    const auto type = static_cast<DataType>(op.type);
    switch (op.kind) {
      case Op::Copy: std::memmove(op.dst, op.src, op.n); break;
      case Op::Set: std::memset(op.dst, static_cast<int>(op.value), op.n); break;
      case Op::WriteFlag: __atomic_store_n(static_cast<uint64_t*>(op.dst), op.value, __ATOMIC_RELEASE); break;
      case Op::Record: op.event->complete(op.value); break;
      case Op::Reduce: device::hostReduceFn(type, static_cast<RedOpKind>(op.op))(op.dst, op.src, op.n); break;
      case Op::Scale: device::hostScale(op.dst, op.src, op.n, type, op.scalar); break;
      case Op::Divide: device::hostDivide(op.dst, op.n, type, op.value); break;
      default: break;  // waits: nothing to do once runnable
    }
  }
  /// Runs `op`, the runnable head of its stream; returns whether it is complete (and leaves the stream).
  static bool step(const Op& op) {
    execute(op);
    return true;
  }
  static uint64_t chooseSeed() {
    if (const char* s = std::getenv("HETCCL_SIM_SEED"); s && *s) return std::strtoull(s, nullptr, 0);
    return std::random_device{}() ^ (uint64_t{std::random_device{}()} << 32);
  }
  void newPhase() {
    phaseLeft_ = 1 + static_cast<int>(rng_() % kMaxPhaseOps);
    legacy_.paused = rng_() % 2;
    for (auto& [raw, s] : owned_) s->paused = rng_() % 2;
  }
  /// A stream whose head can run, chosen uniformly among the unpaused ones, else among the paused ones
  /// (pausing delays a stream, never stops the device).
  Stream* pick() {
    if (--phaseLeft_ <= 0) newPhase();
    Stream* chosen[2] = {};
    uint64_t seen[2] = {};
    auto consider = [&](Stream& s) {
      if (s.ops.empty() || !runnable(s.ops.front())) return;
      const int group = s.paused ? 1 : 0;
      if (rng_() % ++seen[group] == 0) chosen[group] = &s;  // reservoir sampling
    };
    consider(legacy_);
    for (auto& [raw, s] : owned_) consider(*s);
    return chosen[0] ? chosen[0] : chosen[1];
  }
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      Stream* s = pick();
      if (!s) {  // flags may change from the host (or other threads) without a notification: poll
        cv_.wait_for(lock, std::chrono::microseconds(100));
        continue;
      }
      if (step(s->ops.front())) s->ops.pop_front();
      if (rng_() % kSleepOneIn == 0) {
        const auto pause = std::chrono::microseconds(rng_() % kMaxSleepUs);
        lock.unlock();
        std::this_thread::sleep_for(pause);
        lock.lock();
      }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  Stream legacy_;
  std::map<Stream*, std::unique_ptr<Stream>> owned_;
  const uint64_t seed_;
  std::mt19937_64 rng_;
  int phaseLeft_ = 0;
  std::thread worker_;
};

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
int streamSynchronize(void* s) { dev().synchronize(s); return HETCCL_GPU_OK; }
int streamQuery(void* s) { return dev().idle(s) ? HETCCL_GPU_OK : HETCCL_GPU_ERR_NOT_READY; }
int eventCreate(void** e) { *e = new Event; return HETCCL_GPU_OK; }
int eventDestroy(void* e) { delete asEvent(e); return HETCCL_GPU_OK; }
int eventRecord(void* e, void* s) {
  Op op{Op::Record};
  op.event = asEvent(e);
  op.value = asEvent(e)->recorded.fetch_add(1) + 1;
  dev().push(s, op);
  return HETCCL_GPU_OK;
}
int eventQuery(void* e) { return asEvent(e)->done(asEvent(e)->recorded.load()) ? HETCCL_GPU_OK : HETCCL_GPU_ERR_NOT_READY; }
int eventSynchronize(void* e) {
  while (eventQuery(e) != HETCCL_GPU_OK) std::this_thread::sleep_for(std::chrono::microseconds(100));
  return HETCCL_GPU_OK;
}
int streamWaitEvent(void* s, void* e) {
  Op op{Op::WaitEvent};
  op.event = asEvent(e);
  op.value = asEvent(e)->recorded.load();  // the record made before this call
  if (op.value) dev().push(s, op);
  return HETCCL_GPU_OK;
}
int memcpyAsync(void* dst, const void* src, size_t bytes, void* s) {
  if (dev().failMemcpyIn.load() > 0 && dev().failMemcpyIn.fetch_sub(1) == 1) return failWith("memcpyAsync: injected failure");
  if (bytes && (!dst || !src)) return failWith("memcpyAsync: null pointer");
  Op op{Op::Copy};
  op.dst = dst;
  op.src = src;
  op.n = bytes;
  dev().push(s, op);
  return HETCCL_GPU_OK;
}
int memsetAsync(void* dst, int v, size_t bytes, void* s) {
  Op op{Op::Set};
  op.dst = dst;
  op.value = static_cast<unsigned char>(v);
  op.n = bytes;
  dev().push(s, op);
  return HETCCL_GPU_OK;
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
  dev().push(s, op);
  return HETCCL_GPU_OK;
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
  dev().push(s, op);
  return HETCCL_GPU_OK;
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

const hetcclGpuPlugin_v1_t kPlugin = {
    HETCCL_GPU_PLUGIN_VERSION, "sim", init, lastError, versions, deviceCount, getDevice, setDevice,
    allocDevice, freeDevice, allocPinned, freePinned, hostRegister, hostUnregister, pointerQuery,
    streamCreate, streamDestroy, streamSynchronize, streamQuery, eventCreate, eventDestroy, eventRecord,
    eventQuery, eventSynchronize, streamWaitEvent, memcpyAsync, memsetAsync, memcpySync, memsetSync,
    streamWaitFlag, streamWriteFlag, flagMethod, reduce, scale, divide};

}  // namespace

const hetcclGpuPlugin_v1_t& plugin() {
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

void failMemcpyAfter(int n) { dev().failMemcpyIn.store(n); }

}  // namespace hetccl::test::sim
