#include "stream_exec/stream_executor.hpp"

#include <chrono>

#include "algo/planner.hpp"
#include "core/config.hpp"
#include "core/deadline.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace hetccl::stream_exec {
namespace {

constexpr uint64_t kReleaseValue = uint64_t{1} << 62;  // beyond any piece count: every GEQ wait passes

uint64_t slotBytesFromConfig() {
  const int64_t v = config().integer("HETCCL_GPU_CHUNK_BYTES", 64 << 10, int64_t{1} << 30);
  return (static_cast<uint64_t>(v) + 63) & ~uint64_t{63};
}

}  // namespace

StreamExecutor::StreamExecutor(const hetcclGpuPlugin_v1_t& gpu, int device, bootstrap::Bootstrap& boot,
                               algo::Topology topology, FailureSink onFailure, FailureCheck checkFailure,
                               const std::atomic<bool>* abortFlag)
    : gpu_(gpu),
      device_(device),
      topology_(std::move(topology)),
      tuning_(algo::Tuning::fromConfig()),
      onFailure_(std::move(onFailure)),
      checkFailure_(std::move(checkFailure)),
      abortFlag_(abortFlag),
      events_(gpu) {
  const uint64_t slotBytes = slotBytesFromConfig();
  const auto slots = static_cast<uint32_t>(config().integer("HETCCL_GPU_SLOTS", 2, 1024));
  tuning_.chunkBytes = slotBytes;
  tuning_.minChunkBytes = static_cast<size_t>(config().integer("HETCCL_GPU_MIN_CHUNK_BYTES", 1, int64_t{1} << 30));
  tuning_.pairExchangeBytes = static_cast<size_t>(config().integer("HETCCL_GPU_PAIR_EXCHANGE_BYTES", 0, int64_t{1} << 40));
  check(gpu_.setDevice(device_), "setDevice");
  rings_ = GpuRingSet::build(boot, gpu_, slots, slotBytes);
  const int n = topology_.nranks;
  res_.gpu = &gpu_;
  res_.rank = topology_.rank;
  res_.rings = &rings_;
  res_.events = &events_;
  res_.send.assign(n, nullptr);
  res_.recv.assign(n, nullptr);
  res_.reduce.assign(n, nullptr);
  res_.landing.assign(n, {});
  sentBytes_.assign(n, 0);
  receivedBytes_.assign(n, 0);
  check(gpu_.streamCreate(&res_.compute), "streamCreate(compute)");
  for (int p = 0; p < n; ++p) {
    if (p == topology_.rank) continue;
    check(gpu_.streamCreate(&res_.send[p]), "streamCreate(send)");
    check(gpu_.streamCreate(&res_.recv[p]), "streamCreate(receive)");
    check(gpu_.streamCreate(&res_.reduce[p]), "streamCreate(reduce)");
    for (int k = 0; k < StreamResources::kLandingBuffers; ++k) {
      auto& land = res_.landing[p];
      check(gpu_.allocDevice(&land.buffer[k], slotBytes), "allocDevice(landing buffer)");
      check(gpu_.eventCreate(&land.landed[k]), "eventCreate(landed)");
      check(gpu_.eventCreate(&land.reduced[k]), "eventCreate(reduced)");
    }
  }
  void* flag = nullptr;
  check(gpu_.allocPinned(&flag, 64), "allocPinned(done flag)");
  doneFlag_ = static_cast<uint64_t*>(flag);
  __atomic_store_n(doneFlag_, 0, __ATOMIC_RELEASE);
  thread_ = std::thread([this] { monitor(); });
  HETCCL_INFO(log::kInit, "rank ", topology_.rank, ": device calls use the ", describe(), ", chunk ", slotBytes,
              " bytes, ", slots, " slots per ring");
}

StreamExecutor::~StreamExecutor() {
  try {
    drain();
  } catch (const std::exception& e) {
    HETCCL_WARN(log::kEngine, "rank ", topology_.rank, ": ", e.what());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  logTraffic();
  // Released work still runs on the streams: wait (bounded) until they are idle before freeing what they
  // use. A user stream that never reaches its collectives keeps them busy: then everything is leaked.
  std::vector<void*> streams{res_.compute};
  for (size_t p = 0; p < res_.send.size(); ++p)
    if (res_.send[p]) streams.insert(streams.end(), {res_.send[p], res_.recv[p], res_.reduce[p]});
  const Deadline deadline = Deadline::fromConfig();
  bool idle = false;
  while (!idle && !deadline.expired()) {
    if (failed_) releaseStreams();
    idle = true;
    for (void* s : streams) idle = idle && gpu_.streamQuery(s) == HETCCL_GPU_OK;
    if (!idle) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!idle) {
    HETCCL_WARN(log::kEngine, "rank ", topology_.rank, ": device streams still busy at teardown; leaking their buffers");
    return;
  }
  for (void* s : streams) gpu_.streamDestroy(s);
  for (auto& land : res_.landing)
    for (int k = 0; k < StreamResources::kLandingBuffers; ++k) {
      if (land.buffer[k]) gpu_.freeDevice(land.buffer[k]);
      if (land.landed[k]) gpu_.eventDestroy(land.landed[k]);
      if (land.reduced[k]) gpu_.eventDestroy(land.reduced[k]);
    }
  if (res_.scratch) gpu_.freeDevice(res_.scratch);
  gpu_.freePinned(doneFlag_);
}

const char* StreamExecutor::describe() { return "stream pipeline (copy engines through pinned shared-memory rings)"; }

void StreamExecutor::check(int rc, const char* what) const {
  if (rc != HETCCL_GPU_OK)
    throw Error(Result::UnhandledCudaError,
                concat("rank ", topology_.rank, ": ", gpu_.name, " ", what, ": ", gpu_.lastError()));
}

void StreamExecutor::enqueue(std::span<const algo::CollOp> ops, void* stream) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_) throw InvalidUsage(concat("rank ", topology_.rank, ": the device path failed earlier"));
  }
  const algo::Schedule schedule = algo::plan(topology_, ops, tuning_);
  ensureScratch(schedule.scratchBytes);
  const uint64_t seq = nextSeq_ + 1;
  try {
    enqueueSchedule(schedule, res_, stream, doneFlag_, seq);
  } catch (const std::exception& e) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      nextSeq_ = seq;
    }
    reportFailure(e);
    throw;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    nextSeq_ = seq;
  }
  cv_.notify_all();
  for (const algo::Step& st : schedule.steps) {
    if (st.kind == algo::StepKind::Send) sentBytes_[st.peer] += st.bytes;
    if (st.kind == algo::StepKind::Recv || st.kind == algo::StepKind::RecvReduce) receivedBytes_[st.peer] += st.bytes;
  }
}

// One INFO line per rank with the bytes it moved to and from each peer (bench/gpu reads it to show whether
// every rank's link is busy).
void StreamExecutor::logTraffic() const {
  std::string perPeer;
  uint64_t sent = 0, received = 0;
  for (size_t p = 0; p < sentBytes_.size(); ++p) {
    if (static_cast<int>(p) == topology_.rank) continue;
    sent += sentBytes_[p];
    received += receivedBytes_[p];
    perPeer += concat(" ", p, ":", sentBytes_[p], "/", receivedBytes_[p]);
  }
  HETCCL_INFO(log::kEngine, "rank ", topology_.rank, ": device traffic sent ", sent, " received ", received,
              " bytes in ", nextSeq_, " groups (per peer sent/received:", perPeer, ")");
}

void StreamExecutor::drain() {
  const auto limit = std::chrono::milliseconds(config().timeoutMs()) + std::chrono::seconds(5);
  std::unique_lock<std::mutex> lock(mu_);
  // The monitor turns a stall into a failure after HETCCL_TIMEOUT; this bound is only a safety net.
  if (!cv_.wait_for(lock, limit, [&] { return doneSeq_ == nextSeq_ || failed_; }))
    throw TimeoutError(-1, "", concat("rank ", topology_.rank, ": ", nextSeq_ - doneSeq_,
                                      " queued device collective(s) not finished within HETCCL_TIMEOUT"));
}

void StreamExecutor::ensureScratch(size_t bytes) {
  if (bytes <= scratchBytes_) return;
  drain();  // nothing queued uses the old scratch any more
  if (res_.scratch) gpu_.freeDevice(res_.scratch);
  res_.scratch = nullptr;
  scratchBytes_ = 0;
  void* p = nullptr;
  const size_t want = bytes + bytes / 4;
  check(gpu_.allocDevice(&p, want), "allocDevice(scratch)");
  res_.scratch = static_cast<char*>(p);
  scratchBytes_ = want;
}

void StreamExecutor::releaseStreams() {
  for (size_t p = 0; p < rings_.in.size(); ++p) {
    if (rings_.in[p]) __atomic_store_n(rings_.in[p]->published(), kReleaseValue, __ATOMIC_RELEASE);
    if (rings_.out[p]) __atomic_store_n(rings_.out[p]->consumed(), kReleaseValue, __ATOMIC_RELEASE);
  }
}

void StreamExecutor::reportFailure(const std::exception& e) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_) return;
    failed_ = true;
  }
  HETCCL_WARN(log::kEngine, "rank ", topology_.rank, ": device collective failed: ", e.what());
  releaseStreams();
  onFailure_(e);
  cv_.notify_all();
}

void StreamExecutor::monitor() {
  const auto timeout = std::chrono::milliseconds(config().timeoutMs());
  auto lastProgress = Clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (stopping_ && (doneSeq_ == nextSeq_ || failed_)) return;
    if (doneSeq_ == nextSeq_) {
      cv_.wait(lock, [&] { return stopping_ || doneSeq_ != nextSeq_; });
      lastProgress = Clock::now();
      continue;
    }
    const bool failed = failed_;
    lock.unlock();
    if (failed) {
      releaseStreams();  // a peer's late counter write may have lowered a released counter again
    } else {
      try {
        checkFailure_();
        if (abortFlag_ && abortFlag_->load()) throw AbortedError("communicator was aborted");
        if (Clock::now() - lastProgress > timeout)
          throw TimeoutError(-1, "", concat("rank ", topology_.rank, ": a device collective made no progress within ",
                                            "HETCCL_TIMEOUT (a peer stopped, or a user stream never reached it)"));
      } catch (const std::exception& e) {
        reportFailure(e);
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(failed ? 1000 : 100));
    const uint64_t seen = __atomic_load_n(doneFlag_, __ATOMIC_ACQUIRE);
    lock.lock();
    if (seen != doneSeq_ && static_cast<int64_t>(seen - doneSeq_) > 0) {
      doneSeq_ = seen;
      lastProgress = Clock::now();
      cv_.notify_all();
    }
  }
}

}  // namespace hetccl::stream_exec
