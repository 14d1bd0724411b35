#include "rma/copy_engine.hpp"

namespace hetccl::rma {

CopyEngine::~CopyEngine() {
  drain();
  for (void* e : events_)
    if (e) gpu_->destroyEvent(e);
  if (stream_) gpu_->destroyStream(stream_);
}

void* CopyEngine::stream() {
  if (!stream_) stream_ = gpu_->createStream();
  return stream_;
}

void* CopyEngine::event(size_t i) {
  if (i >= events_.size()) events_.resize(i + 1, nullptr);
  if (!events_[i]) events_[i] = gpu_->createEvent();
  return events_[i];
}

void CopyEngine::drain() noexcept {
  if (!stream_) return;
  try {
    gpu_->synchronize(stream_);
  } catch (const std::exception&) {
  }
}

}  // namespace hetccl::rma
