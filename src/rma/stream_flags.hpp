// The pinned words through which a user's GPU stream and the RMA progress thread hand a stream-ordered
// transfer to each other (stream_ops.cc). One slot (64 bytes, its own cache line) per transfer in flight:
//   word 0  "reached": the stream writes the transfer's sequence number when it gets there (after every
//           earlier operation of the stream, whose memory effects are then visible to the host)
//   word 1  "done":    the stream waits until it holds the sequence number; the service writes it once the
//           transfer is complete, or failed, or the service stops (so the stream never hangs)
//   word 2  "passed":  the stream writes the sequence number after its wait: from then on no stream touches
//           the slot, which is reused (or freed with the pool)
// A notification on a stream uses word 0 only (the stream does not wait for it).
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "device/gpu_runtime.hpp"

namespace hetccl::rma {

class StreamFlags {
 public:
  static constexpr int kReached = 0, kDone = 1, kPassed = 2;
  static constexpr size_t kSlotBytes = 64, kSlotsPerChunk = 64;

  explicit StreamFlags(device::GpuRuntime* gpu) : gpu_(gpu) {}
  /// Frees the pinned chunks, unless leak() was called (a stream may still use a slot).
  ~StreamFlags();
  StreamFlags(const StreamFlags&) = delete;
  StreamFlags& operator=(const StreamFlags&) = delete;

  /// A zeroed slot (8 words); allocates a chunk of pinned memory when none is free. Throws.
  uint64_t* acquire();
  /// The slot can be reused: no stream will touch it again.
  void recycle(uint64_t* slot);
  /// Some stream may still touch a slot at destruction: keep the memory (a few KiB) for good.
  void leak() { leak_ = true; }

  static uint64_t load(const uint64_t* slot, int word) { return __atomic_load_n(slot + word, __ATOMIC_ACQUIRE); }
  static void store(uint64_t* slot, int word, uint64_t v) { __atomic_store_n(slot + word, v, __ATOMIC_RELEASE); }

 private:
  device::GpuRuntime* gpu_;
  std::mutex mu_;
  std::vector<void*> chunks_;
  std::vector<uint64_t*> free_;
  bool leak_ = false;
};

}  // namespace hetccl::rma
