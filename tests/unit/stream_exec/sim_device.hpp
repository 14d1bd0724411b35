// The adversarial scheduler behind the simulated GPU (sim_gpu.cc): streams of operations, each executed
// strictly in its stream's order, with the order *between* streams chosen at random.
//
// One device thread executes one operation at a time. At every step it picks, with a seeded random
// generator, one stream whose head is runnable (a wait whose condition holds, or any other operation).
// The device also runs in phases of random length during which a random half of the streams is
// "paused": they run only when no unpaused stream can, so one stream (a reduction, the user's stream)
// falls many operations behind the others, or races ahead of them. Now and then the device sleeps a
// little, so host threads interleave their enqueues with its progress. Effects (copies, kernels, flag
// writes, event completions) happen when an operation executes, never when it is queued. A compiled
// program that forgets a wait therefore produces wrong data or a stall, whatever the timing of the host.
//
// The seed comes from HETCCL_SIM_SEED (a test-only variable, read here only) or else from the system;
// it is printed once on stderr and by dump(). The choices depend on the seed and on when the host
// threads enqueue, so a seed makes a failure likely, not certain, to come back.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace hetccl::test::sim {

/// One queued operation. New kinds of operations need no change here: a plugin function builds an Op
/// from closures over what it was given (by value) and pushes it.
struct Op {
  const char* what = "";                  ///< shown by dump() (a string literal)
  std::function<bool()> ready;            ///< a wait: the op may run once this holds (null: at once)
  std::function<void()> run;              ///< its effect, applied when executed (null: none)
  std::function<std::string()> describe;  ///< optional state for dump() (e.g. a flag's current value)
};

/// An event: each record gets a number; a wait binds to the record made before it and passes once that
/// record has executed (records on different streams may complete out of order).
class Event {
 public:
  /// A new record; returns its number.
  uint64_t record() { return recorded_.fetch_add(1) + 1; }
  /// The number of the latest record (0: never recorded).
  uint64_t latest() const { return recorded_.load(); }
  /// Marks record `id` executed.
  void complete(uint64_t id);
  /// Whether record `id` has executed (true for 0).
  bool done(uint64_t id) const;

 private:
  std::atomic<uint64_t> recorded_{0};
  mutable std::mutex mu_;
  uint64_t doneUpTo_ = 0;         // every record <= this has executed
  std::set<uint64_t> doneAbove_;  // executed records above doneUpTo_
};

/// The simulated device: streams and the thread that executes them.
class Device {
 public:
  Device();  // starts the device thread (which lives as long as the process)
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  /// Queues `op` on `stream` (null: the legacy stream).
  void push(void* stream, Op op);
  void* createStream();
  /// Forgets the stream and whatever it still had queued.
  void destroyStream(void* stream);
  /// Whether nothing is queued (or executing) on `stream`.
  bool idle(void* stream);
  /// Waits until `stream` is idle.
  void synchronize(void* stream);
  /// Operations queued but not yet executed, over every stream.
  size_t pending();
  /// The seed and the head of every non-empty stream (for diagnosing a stall or a wrong result).
  std::string dump();
  uint64_t seed() const { return seed_; }

 private:
  struct Stream {
    std::string name;
    std::deque<Op> ops;
    bool paused = false;
  };
  Stream* find(void* stream);
  void newPhase();
  Stream* pick();
  void loop();

  std::mutex mu_;
  std::condition_variable cv_;
  const uint64_t seed_;
  std::mt19937_64 rng_;
  int phaseLeft_ = 0;
  Stream legacy_;
  std::vector<std::unique_ptr<Stream>> owned_;  // in creation order (so a seed means the same choices)
  uint64_t created_ = 0;
  std::thread thread_;
};

/// The process-wide device (created on first use, never destroyed).
Device& device();

}  // namespace hetccl::test::sim
