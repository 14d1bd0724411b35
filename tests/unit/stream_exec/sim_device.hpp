// The simulated device behind sim_gpu.hpp's plugin: its streams, events, captured graphs and the
// adversarial scheduler that runs them (one device thread). Only sim_gpu.cc includes this; the plugin
// functions there translate calls into operations on the Device.
#pragma once

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
#include <vector>

#include "core/error.hpp"
#include "device/host/reduce.hpp"
#include "sim_gpu.hpp"

namespace hetccl::test::sim {

/// A captured graph (its operations are kept by the device).
struct Graph {
  size_t index = 0;
};

namespace model {

// The scheduler (Device::loop): at every step one stream whose head can run, chosen at random; during
// phases of random length a random half of the streams is paused (runs only when nothing else can);
// now and then a short sleep lets host threads enqueue meanwhile.
constexpr int kMaxPhaseOps = 256;
constexpr int kSleepOneIn = 128;
constexpr int kMaxSleepUs = 200;

struct Capture;

/// Each record gets a number; a wait binds to the record made before it and passes once that record has
/// executed (records on different streams may execute out of order).
struct Event {
  std::atomic<uint64_t> recorded{0};  // records made (enqueue side)
  std::mutex mu;
  uint64_t doneUpTo = 0;          // every record <= this has executed
  std::set<uint64_t> doneAbove;   // executed records above doneUpTo
  Capture* capturedIn = nullptr;  // the last record was captured there (device lock)
  uint64_t captureNode = 0;       // ... as this node

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

/// Work of a host-side model that runs on the device (sim_gpu.hpp's enqueueHostOp): runs once it is its
/// stream's head and ready() holds. ready() and run() are called on the device thread, under the device's
/// lock: they must not block nor call back into the device.
struct HostOp {
  std::function<bool()> ready;  // null: always ready
  std::function<void()> run;
  std::function<std::string()> describe;  // for dump(); may be null
};

/// A kernel that may wait for other devices (the latency path's: tests/support/ll_host_kernel.hpp): its body runs on a host thread
/// of its own once it is its stream's head, so that it can block without stopping the device; the stream
/// goes on when the body returns. A replay of a captured kernel runs the body again (on a fresh run).
struct KernelRun {
  std::thread thread;
  std::atomic<bool> done{false};
  ~KernelRun() {
    if (thread.joinable()) thread.join();
  }
};

struct Op {
  enum Kind { Copy, Set, WaitFlag, WriteFlag, Record, WaitEvent, Reduce, Scale, Divide, Batch, Host, Kernel } kind;
  void* dst = nullptr;
  const void* src = nullptr;
  size_t n = 0;        // bytes (Copy, Set) or elements (kernels)
  uint64_t value = 0;  // captured Record / WaitEvent: the capture node
  Event* event = nullptr;
  int type = 0, op = 0;
  unsigned char scalar[8] = {};
  std::vector<hetcclGpuStreamOp_t> batch = {};  // Batch: streamOps, run in order
  size_t next = 0;                              // Batch: operations done so far
  std::shared_ptr<HostOp> host = nullptr;       // Host
  std::function<void()> kernelBody = nullptr;   // Kernel: the body (a copy of its arguments inside)
  mutable std::shared_ptr<KernelRun> kernelRun = nullptr;  // Kernel: started once it became its stream's head
};

struct Stream {
  std::deque<Op> ops;
  Capture* capture = nullptr;  // being captured: ops are recorded there instead of run
  bool transient = false;      // a graph replay's stream: dropped once empty
  bool paused = false;         // in this phase of the scheduler
};

/// A capture in progress: what every stream that joined it recorded.
struct Capture {
  uint64_t id = 0;
  bool active = true;
  std::vector<Stream*> members;  // the origin first
  std::map<Stream*, std::vector<Op>> recorded;
};

/// The failure text of the calling thread's last failed plugin call (lastError()).
inline thread_local std::string tLastError;

inline int failWith(const char* what) {
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
  /// Queues `op`; with a queue limit (setStreamQueueLimit) it first blocks while the stream holds that
  /// many operations, as a real runtime blocks a launch into a full stream queue. Returns HETCCL_GPU_OK, or
  /// an error after 10 s blocked (a caller that waits for its own queued work would deadlock on a GPU).
  int push(void* s, Op op) {
    const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        Stream* st = stream(s);
        const size_t limit = queueLimit.load();
        if (limit == 0 || st->capture || st->ops.size() < limit) {
          pushLocked(st, std::move(op));
          break;
        }
      }
      if (std::chrono::steady_clock::now() > giveUp)
        return failWith("sim gpu: the stream's queue stayed full for 10 s (the work it waits for is never queued?)");
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    cv_.notify_all();
    return HETCCL_GPU_OK;
  }
  /// Queues a host op (never into a capture: a replay would run the same closure again).
  void pushHost(void* s, std::shared_ptr<HostOp> host) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      Stream* st = stream(s);
      if (st->capture) throw std::logic_error("sim gpu: host operations cannot be captured into a graph");
      Op op{Op::Host};
      op.host = std::move(host);
      st->ops.push_back(std::move(op));
    }
    cv_.notify_all();
  }
  void pushLocked(Stream* st, Op op) {
    if (st->capture)
      st->capture->recorded[st].push_back(std::move(op));
    else
      st->ops.push_back(std::move(op));
  }

  // --- events and captures (CUDA's rules: a record inside a capture is a graph node; a stream that
  // waits for one joins the capture; a capturing stream may not wait for an event recorded outside) ---
  int record(Event* e, void* s) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      Stream* st = stream(s);
      Op op{Op::Record};
      if (st->capture) {
        e->capturedIn = st->capture;
        e->captureNode = op.value = ++nodes_;
      } else {
        e->capturedIn = nullptr;
        op.event = e;
        op.value = e->recorded.fetch_add(1) + 1;
      }
      pushLocked(st, std::move(op));
    }
    cv_.notify_all();
    return HETCCL_GPU_OK;
  }
  int waitEvent(void* s, Event* e) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      Stream* st = stream(s);
      if (Capture* cap = e->capturedIn) {
        if (!cap->active) return failWith("streamWaitEvent: the event was recorded in a capture that has ended");
        if (st->capture && st->capture != cap) return failWith("streamWaitEvent: the event belongs to another capture");
        if (!st->capture) {
          if (s == nullptr) return failWith("streamWaitEvent: the legacy stream cannot join a capture");
          st->capture = cap;
          cap->members.push_back(st);
        }
        Op op{Op::WaitEvent};
        op.value = e->captureNode;
        pushLocked(st, std::move(op));
      } else {
        if (st->capture)  // cudaErrorStreamCaptureIsolation
          return failWith("streamWaitEvent: a capturing stream waits for an event recorded outside the capture");
        Op op{Op::WaitEvent};
        op.event = e;
        op.value = e->recorded.load();  // the record made before this call
        if (op.value) pushLocked(st, std::move(op));
      }
    }
    cv_.notify_all();
    return HETCCL_GPU_OK;
  }
  bool capturing(void* s, uint64_t* id) {
    std::lock_guard<std::mutex> lock(mu_);
    Stream* st = stream(s);
    *id = st->capture ? st->capture->id : 0;
    return st->capture != nullptr;
  }
  void beginCapture(void* s) {
    std::lock_guard<std::mutex> lock(mu_);
    Stream* st = stream(s);
    if (!s || st->capture) throw std::runtime_error("sim beginCapture: the stream is legacy or already capturing");
    Capture* cap = captureObjects_.emplace_back(std::make_unique<Capture>()).get();  // kept: events may point at it
    cap->id = ++captures_;
    cap->members.push_back(st);
    st->capture = cap;
  }
  Graph* endCapture(void* s) {
    std::lock_guard<std::mutex> lock(mu_);
    Stream* st = stream(s);
    Capture* cap = st->capture;
    if (!cap || cap->members.front() != st) throw std::runtime_error("sim endCapture: not the origin of a capture");
    // Every stream that joined must be joined back: its last operation is a record some other stream waits for.
    for (size_t m = 1; m < cap->members.size(); ++m) {
      const std::vector<Op>& ops = cap->recorded[cap->members[m]];
      bool joined = false;
      if (!ops.empty() && ops.back().kind == Op::Record)
        for (auto& [other, list] : cap->recorded)
          for (const Op& op : list)
            joined = joined || (other != cap->members[m] && op.kind == Op::WaitEvent && op.value == ops.back().value);
      if (!joined) throw std::runtime_error("sim endCapture: a stream joined the capture but was not joined back");
    }
    Graph* g = graphObjects_.emplace_back(std::make_unique<Graph>(Graph{graphs_.size()})).get();
    graphs_.emplace_back();
    for (Stream* m : cap->members) {  // per captured stream, its operations (the origin's first)
      graphs_.back().push_back(cap->recorded[m]);
      m->capture = nullptr;
    }
    cap->active = false;
    return g;
  }
  void launch(Graph* g, void* s) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      Stream* st = stream(s);
      if (st->capture) throw std::runtime_error("sim launch: graphs are launched on eager streams here");
      std::map<uint64_t, Event*> node;  // this replay's events for the graph's internal edges
      auto eventOf = [&](uint64_t n) {
        Event*& e = node[n];
        if (!e) e = replayEvents_.emplace_back(std::make_unique<Event>()).get();
        return e;
      };
      Event* begin = replayEvents_.emplace_back(std::make_unique<Event>()).get();
      Event* end = replayEvents_.emplace_back(std::make_unique<Event>()).get();
      Op rec{Op::Record};
      rec.event = begin;
      rec.value = 1;
      begin->recorded = 1;
      st->ops.push_back(rec);
      const std::vector<std::vector<Op>>& lists = graphs_.at(g->index);
      for (size_t m = 0; m < lists.size(); ++m) {
        auto replay = std::make_unique<Stream>();
        replay->transient = true;
        if (m == 0) {
          Op wait{Op::WaitEvent};
          wait.event = begin;
          wait.value = 1;
          replay->ops.push_back(wait);
        }
        for (Op op : lists[m]) {
          if (op.kind == Op::Record || op.kind == Op::WaitEvent) {
            op.event = eventOf(op.value);
            op.value = 1;
            if (op.kind == Op::Record) op.event->recorded = 1;
          }
          op.next = 0;
          replay->ops.push_back(std::move(op));
        }
        if (m == 0) {
          Op done{Op::Record};
          done.event = end;
          done.value = 1;
          end->recorded = 1;
          replay->ops.push_back(done);
        }
        Stream* raw = replay.get();
        owned_[raw] = std::move(replay);
      }
      Op wait{Op::WaitEvent};
      wait.event = end;
      wait.value = 1;
      st->ops.push_back(wait);
    }
    cv_.notify_all();
  }
  /// CUDA's eventDestroy: an event that queued work still records or waits for is released only once
  /// that work ran (here: kept until the process exits), so destroying it early is no use after free.
  void destroyEvent(Event* e) {
    std::lock_guard<std::mutex> lock(mu_);
    bool referenced = false;
    auto scan = [&](const Stream& s) {
      for (const Op& op : s.ops) referenced = referenced || op.event == e;
    };
    scan(legacy_);
    for (auto& [raw, st] : owned_) scan(*st);
    if (referenced) retiredEvents_.emplace_back(e);
    else delete e;
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
  bool isCapturing(void* s) {
    std::lock_guard<std::mutex> lock(mu_);
    return stream(s)->capture != nullptr;
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
      if (h.kind == Op::Host && h.host->describe) out += concat(" host op: ", h.host->describe());
      if (h.kind == Op::Kernel) out += concat(" kernel ", h.kernelRun ? "running" : "not started");
      if (h.kind == Op::Batch && h.next < h.batch.size()) {
        const hetcclGpuStreamOp_t& b = h.batch[h.next];
        out += concat(" batch op ", h.next, " kind ", b.kind, " word now ", load(b.word), " value ", b.value);
      }
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
  uint64_t seed() const { return seed_; }
  void synchronize(void* s) {
    while (!idle(s)) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }

  std::atomic<int> failMemcpyIn{0};
  std::atomic<size_t> queueLimit{0};  // operations a stream holds before a launch blocks (0: unbounded)
  std::mutex memMu;
  std::map<uintptr_t, size_t> deviceRanges;

 private:
  static uint64_t load(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
  static void store(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
  /// Runs a streamOps batch as far as its waits allow; true when it is complete.
  static bool runBatch(Op& op) {
    for (; op.next < op.batch.size(); ++op.next) {
      const hetcclGpuStreamOp_t& b = op.batch[op.next];
      switch (b.kind) {
        case HETCCL_GPU_OP_WAIT_GEQ:
          if (static_cast<int64_t>(load(b.word) - b.value) < 0) return false;
          break;
        case HETCCL_GPU_OP_WAIT_EQ:
          if (load(b.word) != b.value) return false;
          break;
        case HETCCL_GPU_OP_WRITE:
          store(b.word, b.value);
          break;
        case HETCCL_GPU_OP_STAMP_CHECK: {
          uint64_t got[4];
          bool same = true;
          for (int w = 0; w < 4; ++w) same = (got[w] = load(b.word + w)) == b.expect[w] && same;
          if (!same && load(b.report) == 0) {
            for (int w = 0; w < 4; ++w) {
              store(b.report + 1 + w, got[w]);
              store(b.report + 5 + w, b.expect[w]);
            }
            store(b.report, 1);
          }
          break;
        }
        default:
          break;
      }
    }
    return true;
  }
  static bool runnable(const Op& op) {
    switch (op.kind) {
      case Op::WaitFlag:
        return static_cast<int64_t>(__atomic_load_n(static_cast<const uint64_t*>(op.src), __ATOMIC_ACQUIRE) -
                                    op.value) >= 0;
      case Op::WaitEvent:
        return op.event->done(op.value);
      case Op::Host:
        return !op.host->ready || op.host->ready();
      case Op::Kernel:  // the head of its stream: runs now, on its own thread; the stream goes on once it returns
        if (!op.kernelRun) {
          op.kernelRun = std::make_shared<KernelRun>();
          op.kernelRun->thread = std::thread([run = op.kernelRun.get(), body = op.kernelBody] {
            body();
            run->done.store(true, std::memory_order_release);
          });
        }
        return op.kernelRun->done.load(std::memory_order_acquire);
      case Op::Batch: {  // runnable when its next operation can run
        if (op.next >= op.batch.size()) return true;
        const hetcclGpuStreamOp_t& b = op.batch[op.next];
        if (b.kind == HETCCL_GPU_OP_WAIT_GEQ) return static_cast<int64_t>(load(b.word) - b.value) >= 0;
        if (b.kind == HETCCL_GPU_OP_WAIT_EQ) return load(b.word) == b.value;
        return true;
      }
      default:
        return true;
    }
  }
  static void execute(const Op& op) {
    const auto type = static_cast<DataType>(op.type);
    switch (op.kind) {
      case Op::Copy:
        std::memmove(op.dst, op.src, op.n);
        break;
      case Op::Set:
        std::memset(op.dst, static_cast<int>(op.value), op.n);
        break;
      case Op::WriteFlag:
        __atomic_store_n(static_cast<uint64_t*>(op.dst), op.value, __ATOMIC_RELEASE);
        break;
      case Op::Record:
        op.event->complete(op.value);
        break;
      case Op::Reduce:
        device::hostReduceFn(type, static_cast<RedOpKind>(op.op))(op.dst, op.src, op.n);
        break;
      case Op::Scale:
        device::hostScale(op.dst, op.src, op.n, type, op.scalar);
        break;
      case Op::Divide:
        device::hostDivide(op.dst, op.n, type, op.value);
        break;
      case Op::Host:
        op.host->run();
        break;
      case Op::Kernel:
        op.kernelRun->thread.join();  // done: what it wrote is now the device's
        break;
      default:
        break;  // waits: nothing to do once runnable
    }
  }
  /// Runs `op`, the runnable head of its stream (a batch as far as its waits allow); returns whether it
  /// is complete (and leaves the stream).
  static bool step(Op& op) {
    if (op.kind == Op::Batch) return runBatch(op);
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
      if (s->transient && s->ops.empty()) owned_.erase(s);
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
  std::vector<std::vector<std::vector<Op>>> graphs_;
  std::vector<std::unique_ptr<Capture>> captureObjects_;  // owned by the device (never freed: tests are short)
  std::vector<std::unique_ptr<Graph>> graphObjects_;
  std::vector<std::unique_ptr<Event>> replayEvents_;  // events of graph replays (never freed: tests are short)
  std::vector<std::unique_ptr<Event>> retiredEvents_;  // destroyed while queued work used them (never freed)
  uint64_t nodes_ = 0, captures_ = 0;
  const uint64_t seed_;
  std::mt19937_64 rng_;
  int phaseLeft_ = 0;
  std::thread worker_;
};

}  // namespace model
}  // namespace hetccl::test::sim
