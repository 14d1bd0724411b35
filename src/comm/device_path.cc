#include "comm/device_path.hpp"

#include <chrono>

#include "core/deadline.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace hetccl {

DevicePath::DevicePath(const hetcclGpuPlugin_v1_t& gpu, int device, int rank, int nranks, HostRunner runHost,
                       FailureSink onFailure, const std::atomic<bool>* abortFlag)
    : gpu_(gpu),
      device_(device),
      rank_(rank),
      nranks_(nranks),
      runHost_(std::move(runHost)),
      onFailure_(std::move(onFailure)),
      abortFlag_(abortFlag) {
  check(gpu_.setDevice(device_), "setDevice");
  check(gpu_.streamCreate(&copyStream_), "streamCreate");
  void* flag = nullptr;
  check(gpu_.allocPinned(&flag, 64), "allocPinned(flag)");
  flag_ = static_cast<uint64_t*>(flag);
  __atomic_store_n(flag_, 0, __ATOMIC_RELEASE);
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
  if (flag_) gpu_.freePinned(flag_);
  if (copyStream_) gpu_.streamDestroy(copyStream_);
}

void DevicePath::check(int rc, const char* what) const {
  if (rc != HETCCL_GPU_OK)
    throw Error(Result::UnhandledCudaError, concat("rank ", rank_, ": ", gpu_.name, " ", what, ": ", gpu_.lastError()));
}

void DevicePath::enqueue(std::vector<algo::CollOp> ops, void* stream) {
  Work w;
  w.ops = std::move(ops);
  w.plan = StagingPlan::build(w.ops, rank_, nranks_);
  ensureStaging(std::max<size_t>(w.plan.hostBytes, 256));  // before the user stream waits (see header)
  check(gpu_.eventCreate(&w.inputsReady), "eventCreate");
  try {
    check(gpu_.eventRecord(w.inputsReady, stream), "eventRecord(user stream)");
    std::lock_guard<std::mutex> lock(mu_);
    w.seq = ++nextSeq_;
    // The user stream stops here until the progress thread writes the flag (also after a failure).
    check(gpu_.streamWaitFlag(stream, flag_, w.seq, 0), "streamWaitFlag(user stream)");
    queue_.push_back(std::move(w));
  } catch (...) {
    gpu_.eventDestroy(w.inputsReady);
    throw;
  }
  cv_.notify_all();
}

void DevicePath::drain() {
  const Deadline deadline = Deadline::fromConfig();
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_until(lock, deadline.at(), [&] { return doneSeq_ == nextSeq_; }))
    throw TimeoutError(-1, "", concat("rank ", rank_, ": ", nextSeq_ - doneSeq_,
                              " queued device collective(s) not finished within HETCCL_TIMEOUT (does every rank's "
                              "stream reach its collectives?)"));
}

void DevicePath::release(uint64_t seq) {
  __atomic_store_n(flag_, seq, __ATOMIC_RELEASE);
  {
    std::lock_guard<std::mutex> lock(mu_);
    doneSeq_ = seq;
  }
  cv_.notify_all();
}

void DevicePath::ensureStaging(size_t bytes) {
  if (bytes <= stagingBytes_) return;
  drain();  // the progress thread no longer touches staging_, and no user stream waits for this path
  if (staging_) gpu_.freePinned(staging_);
  staging_ = nullptr;
  stagingBytes_ = 0;
  size_t want = bytes + bytes / 4;  // some headroom: sizes usually grow
  check(gpu_.allocPinned(&staging_, want), "allocPinned(staging)");
  stagingBytes_ = want;
}

void DevicePath::execute(const Work& w) {
  // Wait for the user stream to reach the call, watching for abort.
  for (;;) {
    int rc = gpu_.eventQuery(w.inputsReady);
    if (rc == HETCCL_GPU_OK) break;
    if (rc != HETCCL_GPU_ERR_NOT_READY) check(rc, "eventQuery(inputs ready)");
    if (abortFlag_ && abortFlag_->load()) throw AbortedError("communicator aborted before a queued collective started");
    std::this_thread::sleep_for(std::chrono::microseconds(5));
  }
  const StagingPlan& plan = w.plan;  // staging_ holds plan.hostBytes (enqueue made sure)
  char* host = static_cast<char*>(staging_);
  for (const auto& r : plan.regions)
    if (r.copyIn)
      check(gpu_.memcpyAsync(host + r.hostOffset, reinterpret_cast<const void*>(r.device), r.bytes, copyStream_),
            "memcpyAsync(device to staging)");
  check(gpu_.streamSynchronize(copyStream_), "streamSynchronize(copy in)");
  runHost_(plan.translate(w.ops, staging_));
  for (const auto& r : plan.regions)
    if (r.copyOut)
      check(gpu_.memcpyAsync(reinterpret_cast<void*>(r.device), host + r.hostOffset, r.bytes, copyStream_),
            "memcpyAsync(staging to device)");
  check(gpu_.streamSynchronize(copyStream_), "streamSynchronize(copy out)");
}

void DevicePath::worker() {
  if (gpu_.setDevice(device_) != HETCCL_GPU_OK)
    HETCCL_WARN(log::kEngine, "rank ", rank_, ": progress thread cannot select device ", device_, ": ", gpu_.lastError());
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
        execute(w);
      } catch (const std::exception& e) {
        // The communicator already recorded a failure of the exchange; a device failure is logged here.
        // Either way the user stream must not hang: later work is released unrun.
        HETCCL_WARN(log::kEngine, "rank ", rank_, ": device collective failed: ", e.what());
        onFailure_(e);
        failed = true;
      }
    }
    gpu_.eventDestroy(w.inputsReady);
    release(w.seq);
  }
}

}  // namespace hetccl
