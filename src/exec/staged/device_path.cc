#include "exec/staged/device_path.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "exec/staged/staged_pieces.hpp"
#include "core/config.hpp"
#include "core/deadline.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace hetccl {
namespace {

uint64_t* readyFlag(uint64_t* flags) { return flags; }
uint64_t* doneFlag(uint64_t* flags) { return flags + 8; }  // each its own cache line
uint64_t* drainedFlag(uint64_t* flags) { return flags + 16; }

}  // namespace

DevicePath::DevicePath(const hetcclGpuPlugin_t& gpu, int device, int rank, int nranks, HostRunner runHost,
                       FailureSink onFailure, const std::atomic<bool>* abortFlag)
    : gpu_(gpu),
      device_(device),
      rank_(rank),
      nranks_(nranks),
      runHost_(std::move(runHost)),
      onFailure_(std::move(onFailure)),
      abortFlag_(abortFlag),
      pieceBytes_(static_cast<size_t>(config().integer("HETCCL_STAGED_PIECE_BYTES", 0, int64_t{1} << 30))),
      slots_(static_cast<size_t>(config().integer("HETCCL_STAGED_SLOTS", 2, 64))) {
  check(gpu_.setDevice(device_), "setDevice");
  void* flags = nullptr;
  check(gpu_.allocPinned(&flags, 192), "allocPinned(flags)");
  flags_ = static_cast<uint64_t*>(flags);
  __atomic_store_n(readyFlag(flags_), 0, __ATOMIC_RELEASE);
  __atomic_store_n(doneFlag(flags_), 0, __ATOMIC_RELEASE);
  __atomic_store_n(drainedFlag(flags_), 0, __ATOMIC_RELEASE);
  thread_ = std::thread([this] { worker(); });
}

DevicePath::~DevicePath() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (staging_) gpu_.freePinned(staging_);
  if (flags_) gpu_.freePinned(flags_);
}

void DevicePath::check(int rc, const char* what) const {
  if (rc != HETCCL_GPU_OK)
    throw Error(Result::UnhandledCudaError, concat("rank ", rank_, ": ", gpu_.name, " ", what, ": ", gpu_.lastError()));
}

void DevicePath::enqueue(std::vector<algo::CollOp> ops, void* stream) {
  // A graph replays what the stream does, but not this path's host thread (and the flags' values are
  // baked in): a replay would return the previous call's data. Refuse before queuing anything.
  int capturing = 0;
  uint64_t captureId = 0;
  check(gpu_.streamCaptureInfo(stream, &capturing, &captureId), "streamCaptureInfo");
  if (capturing)
    throw InvalidUsage(concat("rank ", rank_, ": device collectives on the staged path (through host memory and the ",
                              "host engine: GPU and CPU ranks mixed, several hosts, or HETCCL_GPU_EXEC=staged) ",
                              "cannot be captured into a CUDA graph; call them outside the capture, or use the ",
                              "stream pipeline (GPU ranks of one host) or a single vendor domain"));
  std::vector<StagedPiece> pieces = cutIntoPieces(ops, rank_, nranks_, pieceBytes_);
  Slots slots{nullptr, 256, std::min(pieces.size(), slots_)};
  for (const StagedPiece& p : pieces) slots.bytes = std::max(slots.bytes, (p.plan.hostBytes + 255) / 256 * 256);
  ensureStaging(slots.bytes * slots.count);  // before any stream waits (see header)
  slots.base = static_cast<char*>(staging_);

  // The pieces go to the progress thread before their stream operations are queued: a runtime whose
  // stream queue is full blocks the launching call until the stream moves on, and the stream moves on
  // only when the progress thread has run the pieces it waits for. (nextSeq_ is written only here, by
  // the one calling thread; the lock is for the progress thread and drain().)
  const uint64_t first = nextSeq_ + 1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t k = 0; k < pieces.size(); ++k) {
      Work w;
      w.ops = pieces[k].plan.translate(pieces[k].ops, slots.at(k));
      w.seq = first + k;
      queue_.push_back(std::move(w));
    }
    nextSeq_ = first + pieces.size() - 1;
  }
  cv_.notify_all();
  try {
    queueOnStream(pieces, slots, stream, first);
  } catch (...) {
    // The stream may now hold a wait nobody satisfies, and pieces whose inputs never come: they are
    // released unrun (the communicator is failed by the caller and reports the error).
    cancelledFrom_.store(first);
    throw;
  }
}

// Everything here only queues work on the stream.
void DevicePath::queueOnStream(const std::vector<StagedPiece>& pieces, const Slots& slots, void* stream, uint64_t first) {
  // The previous group's outputs are copied out of staging (on whatever stream it ran) before this
  // group's inputs are copied in.
  check(gpu_.streamWaitFlag(stream, drainedFlag(flags_), first - 1, 0), "streamWaitFlag(previous group copied out)");  // wait:drained
  auto copyOut = [&](size_t k) {
    check(gpu_.streamWaitFlag(stream, doneFlag(flags_), first + k, 0), "streamWaitFlag(exchange done)");  // wait:done
    for (const auto& r : pieces[k].plan.regions)
      if (r.copyOut)
        check(gpu_.memcpyAsync(reinterpret_cast<void*>(r.device), slots.at(k) + r.hostOffset, r.bytes, stream),
              "memcpyAsync(staging to device)");
  };
  // Piece k goes into slot k % count; its inputs are queued after the outputs of piece k - count (the
  // slot's previous piece) were queued out, so stream order alone keeps a slot's pieces apart, while up
  // to `count` pieces are staged ahead of the host engine.
  for (size_t k = 0; k < pieces.size(); ++k) {
    for (const auto& r : pieces[k].plan.regions)
      if (r.copyIn)
        check(gpu_.memcpyAsync(slots.at(k) + r.hostOffset, r.copyInFrom(), r.bytes, stream),
              "memcpyAsync(device to staging)");
    check(gpu_.streamWriteFlag(stream, readyFlag(flags_), first + k, 0), "streamWriteFlag(inputs staged)");
    if (k + 1 >= slots.count) copyOut(k + 1 - slots.count);
  }
  for (size_t k = pieces.size() + 1 - slots.count; k < pieces.size(); ++k) copyOut(k);  // count <= pieces
  check(gpu_.streamWriteFlag(stream, drainedFlag(flags_), first + pieces.size() - 1, 0), "streamWriteFlag(copied out)");
}

std::string DevicePath::describe() const {
  if (pieceBytes_ == 0) return "every call staged whole, unpipelined (HETCCL_STAGED_PIECE_BYTES=0)";
  return concat("all-reduce/broadcast/reduce over ", pieceBytes_, " bytes in pieces through ", slots_,
                " pinned slots, device copies overlapping the exchange");
}

void DevicePath::drain() {
  const Deadline deadline = Deadline::fromConfig();
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_until(lock, deadline.at(), [&] { return doneSeq_ == nextSeq_; }))
    throw TimeoutError(-1, "", concat("rank ", rank_, ": ", nextSeq_ - doneSeq_,
                                      " queued device collective(s) not finished within HETCCL_TIMEOUT (does every "
                                      "rank's stream reach its collectives?)"));
}

void DevicePath::release(uint64_t seq) {
  __atomic_store_n(doneFlag(flags_), seq, __ATOMIC_RELEASE);
  {
    std::lock_guard<std::mutex> lock(mu_);
    doneSeq_ = seq;
  }
  cv_.notify_all();
}

void DevicePath::ensureStaging(size_t bytes) {
  if (bytes <= stagingBytes_) return;
  drain();  // no stream waits for this path any more, and the progress thread is idle
  if (staging_) gpu_.freePinned(staging_);
  staging_ = nullptr;
  stagingBytes_ = 0;
  size_t want = bytes + bytes / 4;  // some headroom: sizes usually grow
  check(gpu_.allocPinned(&staging_, want), "allocPinned(staging)");
  stagingBytes_ = want;
}

bool DevicePath::waitReady(uint64_t seq) {
  const Deadline deadline = Deadline::fromConfig();
  unsigned spins = 0;
  while (static_cast<int64_t>(__atomic_load_n(readyFlag(flags_), __ATOMIC_ACQUIRE) - seq) < 0) {
    if (abortFlag_ && abortFlag_->load()) return false;
    if (seq >= cancelledFrom_.load()) return false;  // its stream operations were never all queued
    if (deadline.expired())
      throw TimeoutError(-1, "", concat("rank ", rank_, ": the stream of a device collective did not reach it within ",
                                        "HETCCL_TIMEOUT"));
    if (++spins < 64) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(10));
  }
  return true;
}

void DevicePath::worker() {
  bool failed = false;
  for (;;) {
    Work w;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      w = std::move(queue_.front());
      queue_.pop_front();
    }
    if (!failed) {
      try {
        if (waitReady(w.seq)) runHost_(w.ops);
        else failed = true;  // aborted: release the stream unrun
      } catch (const std::exception& e) {
        // Either way the user stream must not hang: this and later groups are released unrun (their
        // outputs are not valid; the communicator reports the error).
        HETCCL_WARN(log::kEngine, "rank ", rank_, ": device collective failed: ", e.what());
        onFailure_(e);
        failed = true;
      }
    }
    release(w.seq);
  }
}

}  // namespace hetccl
