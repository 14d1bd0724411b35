// Stream-ordered RMA (hetcclPutOnStream, hetcclGetOnStream, hetcclNotifyOnStream): the caller's side
// (checks, the stream operations) and the progress thread's (starting what the streams reached,
// releasing them). See rma_service.hpp and stream_flags.hpp.
#include <algorithm>
#include <chrono>
#include <thread>

#include "core/log.hpp"
#include "rma/rma_service.hpp"

namespace hetccl::rma {
namespace {

constexpr auto kPassWait = std::chrono::seconds(2);  // stop(): released streams going past their waits

/// The word a stream writes last for `op`: once it holds op.seq, no stream touches the slot again.
int lastWord(const StreamOp& op) { return op.kind == StreamOp::Kind::Notify ? StreamFlags::kReached : StreamFlags::kPassed; }

}  // namespace

device::GpuRuntime& RmaService::streamRuntime(void* stream, const char* what) const {
  device::GpuRuntime* gpu = memory_->gpu();
  if (!gpu || !flags_)
    throw InvalidUsage(concat("rank ", rank_, ": ", what, " is not supported on a rank without a GPU (a host-memory-only ",
                              "rank has no stream): use hetcclPut/hetcclGet/hetcclNotify"));
  int capturing = 0;
  uint64_t captureId = 0;
  if (gpu->plugin().streamCaptureInfo(stream, &capturing, &captureId) != HETCCL_GPU_OK)
    throw Error(Result::UnhandledCudaError,
                concat("rank ", rank_, ": ", gpu->plugin().name, " streamCaptureInfo: ", gpu->plugin().lastError()));
  if (capturing)
    throw InvalidUsage(concat("rank ", rank_, ": ", what, " cannot be captured into a CUDA/HIP graph (the RMA progress ",
                              "thread that performs it would not run on replays); queue it outside the capture"));
  return *gpu;
}

void RmaService::transferOnStream(bool isGet, const std::shared_ptr<LocalMem>& local, const RemoteMem& remote,
                                  const std::vector<Range>& ranges, void* stream) {
  streamRuntime(stream, isGet ? "a stream-ordered get" : "a stream-ordered put");
  {
    std::lock_guard<std::mutex> lock(mu_);
    checkOpen(remote.desc.owner);
  }
  auto op = std::make_shared<StreamOp>();
  op->kind = isGet ? StreamOp::Kind::Get : StreamOp::Kind::Put;
  op->peer = remote.desc.owner;
  op->stream = stream;
  op->request = makeTransfer(isGet, remote, ranges, local, op->msg);
  if (op->request->ranges.empty()) return;  // nothing to move, nothing to order
  op->what = concat(isGet ? "get of " : "put of ", op->request->totalBytes, isGet ? " bytes from " : " bytes to ",
                    peerName(op->peer));
  op->request->local = local;
  queueOnStream(op);
}

void RmaService::notifyOnStream(int peer, uint64_t tag, void* stream) {
  streamRuntime(stream, "a stream-ordered notification");
  {
    std::lock_guard<std::mutex> lock(mu_);
    checkOpen(peer);
  }
  auto op = std::make_shared<StreamOp>();
  op->kind = StreamOp::Kind::Notify;
  op->peer = peer;
  op->stream = stream;
  op->msg = std::make_shared<OutMsg>();
  op->msg->header.type = static_cast<uint32_t>(MsgType::Notify);
  op->msg->header.offset = tag;
  op->what = concat("notification ", tag, " to ", peerName(peer));
  queueOnStream(op);
}

void RmaService::queueOnStream(const std::shared_ptr<StreamOp>& op) {
  device::GpuRuntime& gpu = *memory_->gpu();
  op->slot = flags_->acquire();
  {
    std::lock_guard<std::mutex> lock(mu_);
    op->seq = ++streamSeq_;
  }
  op->reachBy = Deadline::afterMs(timeoutMs_);
  const bool waits = op->kind != StreamOp::Kind::Notify;
  int queued = 0;
  try {
    gpu.streamWriteFlag(op->stream, op->slot + StreamFlags::kReached, op->seq);
    ++queued;
    if (waits) {
      gpu.streamWaitFlag(op->stream, op->slot + StreamFlags::kDone, op->seq);
      ++queued;
      gpu.streamWriteFlag(op->stream, op->slot + StreamFlags::kPassed, op->seq);
      ++queued;
    }
  } catch (const Error& e) {
    // Nothing was started. A write already queued may still land in the slot: it is never reused. A wait
    // already queued is released at once.
    if (queued == 0) flags_->recycle(op->slot);
    if (queued >= 2) StreamFlags::store(op->slot, StreamFlags::kDone, op->seq);
    throw Error(e.code(), concat(op->what, " could not be queued on the stream (nothing was transferred",
                                 queued > 0 ? "; the stream is not held" : "", "): ", e.what()));
  }
  std::lock_guard<std::mutex> lock(mu_);
  try {
    checkOpen(op->peer);  // stopped, aborted or the peer failed meanwhile
    // Deregistration is refused (InvalidUsage) until it is done; refused here once deregistered.
    if (op->request) holdRegistration(*op->request->local);
  } catch (...) {
    StreamFlags::store(op->slot, StreamFlags::kDone, op->seq);  // the stream goes through; the slot is not reused
    throw;
  }
  if (op->request) op->request->streamOp = op;
  streamWaiting_.push_back(op);
  streamBusy_.store(true);
  kicked_ = true;
  wake_.notify_one();
}

void RmaService::failStreamOp(const std::shared_ptr<StreamOp>& op, Result code, const std::string& why) {
  if (op->request) {
    finishRequest(*op->request, code, why);  // hands the op to streamFailed_
    return;
  }
  streamFailed_.push_back({op, code, why});
  streamBusy_.store(true);
}

bool RmaService::progressStreams() {
  bool did = false, busy = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Ops of one stream start in call order: a later one waits while an earlier one is not reached.
    std::vector<void*> blocked;
    for (auto it = streamWaiting_.begin(); it != streamWaiting_.end();) {
      const std::shared_ptr<StreamOp> op = *it;
      if (std::find(blocked.begin(), blocked.end(), op->stream) != blocked.end()) {
        ++it;
        continue;
      }
      if (StreamFlags::load(op->slot, StreamFlags::kReached) != op->seq) {
        blocked.push_back(op->stream);
        if (!op->reachBy.expired()) {
          ++it;
          continue;
        }
        it = streamWaiting_.erase(it);
        failStreamOp(op, Result::RemoteError,
                     concat("its stream did not reach it within HETCCL_TIMEOUT (", timeoutMs_ / 1000.0,
                            " s after the call); it was released unrun"));
        did = true;
        continue;
      }
      it = streamWaiting_.erase(it);
      did = true;
      if (dead_[op->peer]) {
        failStreamOp(op, dead_[op->peer]->code(), dead_[op->peer]->what());
      } else if (op->kind == StreamOp::Kind::Notify) {
        enqueue(op->peer, op->msg);  // after everything queued to the peer so far
        flags_->recycle(op->slot);   // the stream wrote its last word
      } else {
        submit(op->request, op->msg);  // exactly a hetcclPut / hetcclGet issued now
      }
    }
    for (auto it = streamPassing_.begin(); it != streamPassing_.end();) {
      if (StreamFlags::load((*it)->slot, lastWord(**it)) == (*it)->seq) {
        flags_->recycle((*it)->slot);
        it = streamPassing_.erase(it);
      } else {
        ++it;
      }
    }
    busy = !streamWaiting_.empty() || !streamFailed_.empty() || !streamPassing_.empty() ||
           std::any_of(pending_.begin(), pending_.end(), [](const auto& kv) { return kv.second->streamOp != nullptr; });
    streamBusy_.store(busy);
  }
  memory_->holdFrees(busy);  // outside mu_: ending the hold may free pinned buffers
  flushStreamFailures();
  return did;
}

void RmaService::flushStreamFailures() noexcept {
  std::vector<StreamFailure> failed;
  FailureSink sink;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (streamFailed_.empty()) return;
    failed.swap(streamFailed_);
    sink = onStreamFailure_;
  }
  for (StreamFailure& f : failed) {
    const std::string what =
        concat("rank ", rank_, ": stream-ordered ", f.op->what, " failed; its stream was released (",
               f.op->kind == StreamOp::Kind::Get ? "the local buffer's bytes are undefined" : "the bytes at the target are undefined",
               "): ", f.message);
    try {
      if (sink && !aborted_.load()) sink(Error(f.code, what));  // before the stream can go on
      else HETCCL_INFO(log::kNet, what);
    } catch (const std::exception& e) {
      HETCCL_WARN(log::kNet, "rank ", rank_, ": reporting a failed stream-ordered RMA operation: ", e.what());
    }
    StreamFlags::store(f.op->slot, StreamFlags::kDone, f.op->seq);
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (StreamFailure& f : failed) streamPassing_.push_back(std::move(f.op));
  streamBusy_.store(true);
  kicked_ = true;
}

void RmaService::waitStreamsPassed() noexcept {
  if (!flags_) return;
  const auto until = Clock::now() + kPassWait;
  for (;;) {
    size_t left = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = streamPassing_.begin(); it != streamPassing_.end();) {
        if (StreamFlags::load((*it)->slot, lastWord(**it)) == (*it)->seq) {
          flags_->recycle((*it)->slot);
          it = streamPassing_.erase(it);
        } else {
          ++it;
        }
      }
      left = streamPassing_.size();
    }
    if (left == 0) return;
    if (Clock::now() >= until) {
      HETCCL_WARN(log::kNet, "rank ", rank_, ": ", left, " released stream-ordered RMA operation(s) not yet passed by "
                  "their streams (the streams have not got there); their pinned flag words are kept");
      flags_->leak();
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace hetccl::rma
