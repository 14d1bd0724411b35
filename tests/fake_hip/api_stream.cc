// The fake's exported stream and event functions: creation, synchronisation, queries, event records and
// waits, stream capture information and the stream memory operations (see api.hpp, README.md).
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

#include "api.hpp"
#include "api_internal.hpp"
#include "runtime.hpp"

using namespace fakehip;

// ---------------------------------------------------------------------------------------------------
// Streams and events.

FAKEHIP_API hipError_t hipStreamCreateWithFlags(void** stream, unsigned flags) {
  FAKEHIP_ENTER("hipStreamCreateWithFlags", hipErrorOutOfMemory);
  if (!stream) return ret(hipErrorInvalidValue);
  if (noDevice()) return ret(hipErrorNoDevice);
  if (flags & ~hipStreamNonBlocking) return ret(hipErrorInvalidValue);
  if (captureForbids()) return ret(hipErrorStreamCaptureUnsupported);
  *stream = createStream(flags);
  return ret(hipSuccess);
}
FAKEHIP_API hipError_t hipStreamCreate(void** stream) { return hipStreamCreateWithFlags(stream, 0); }

FAKEHIP_API hipError_t hipStreamDestroy(void* stream) {
  FAKEHIP_ENTER("hipStreamDestroy", hipErrorInvalidHandle);
  if (!stream || !destroyStream(stream)) return ret(hipErrorInvalidHandle);
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipStreamSynchronize(void* stream) {
  FAKEHIP_ENTER("hipStreamSynchronize", hipErrorLaunchFailure);
  Stream* s = resolveStream(stream);
  if (!s) return ret(noDevice() ? hipErrorNoDevice : hipErrorInvalidHandle);
  if (isCapturing(s)) return ret(hipErrorStreamCaptureUnsupported);
  synchronize(s);
  return ret(s->stickyError.load());
}

#ifndef FAKEHIP_OMIT_REQUIRED  // the variant missing one required symbol (libhetccl-fakehip-missing.so)
FAKEHIP_API hipError_t hipStreamQuery(void* stream) {
  FAKEHIP_ENTER("hipStreamQuery", hipErrorLaunchFailure);
  Stream* s = resolveStream(stream);
  if (!s) return ret(noDevice() ? hipErrorNoDevice : hipErrorInvalidHandle);
  if (isCapturing(s)) return ret(hipErrorStreamCaptureUnsupported);
  if (const int sticky = s->stickyError.load()) return ret(sticky);
  return ret(idle(s) ? hipSuccess : hipErrorNotReady);
}
#endif

FAKEHIP_API hipError_t hipStreamWaitEvent(void* stream, void* event, unsigned flags) {
  FAKEHIP_ENTER("hipStreamWaitEvent", hipErrorInvalidHandle);
  Stream* s = resolveStream(stream);
  Event* e = resolveEvent(event);
  if (!s || !e) return ret(hipErrorInvalidHandle);
  if (flags != 0) return ret(hipErrorInvalidValue);
  const uint64_t target = e->state->recorded.load();
  if (target == 0) return ret(hipSuccess);  // never recorded: nothing to wait for
  std::shared_ptr<EventState> state = e->state;
  enqueue(s, [state, target] { pollUntil([&] { return state->reached.load() >= target; }); });
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipEventCreateWithFlags(void** event, unsigned flags) {
  FAKEHIP_ENTER("hipEventCreateWithFlags", hipErrorOutOfMemory);
  if (!event) return ret(hipErrorInvalidValue);
  if (noDevice()) return ret(hipErrorNoDevice);
  if (flags & ~(hipEventBlockingSync | hipEventDisableTiming | hipEventInterprocess)) return ret(hipErrorInvalidValue);
  if (captureForbids()) return ret(hipErrorStreamCaptureUnsupported);
  *event = createEvent(flags);
  return ret(hipSuccess);
}
FAKEHIP_API hipError_t hipEventCreate(void** event) { return hipEventCreateWithFlags(event, 0); }

FAKEHIP_API hipError_t hipEventDestroy(void* event) {
  FAKEHIP_ENTER("hipEventDestroy", hipErrorInvalidHandle);
  if (!event || !destroyEvent(event)) return ret(hipErrorInvalidHandle);
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipEventRecord(void* event, void* stream) {
  FAKEHIP_ENTER("hipEventRecord", hipErrorInvalidHandle);
  Event* e = resolveEvent(event);
  Stream* s = resolveStream(stream);
  if (!e || !s) return ret(hipErrorInvalidHandle);
  std::shared_ptr<EventState> state = e->state;
  if (isCapturing(s)) {
    enqueue(s, [] {});  // recorded by the capture
    return ret(hipSuccess);
  }
  const uint64_t n = state->recorded.fetch_add(1) + 1;
  enqueue(s, [state, n] {
    uint64_t cur = state->reached.load();
    while (cur < n && !state->reached.compare_exchange_weak(cur, n)) {
    }
  });
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipEventQuery(void* event) {
  FAKEHIP_ENTER("hipEventQuery", hipErrorInvalidHandle);
  Event* e = resolveEvent(event);
  if (!e) return ret(hipErrorInvalidHandle);
  return ret(e->state->reached.load() >= e->state->recorded.load() ? hipSuccess : hipErrorNotReady);
}

FAKEHIP_API hipError_t hipEventSynchronize(void* event) {
  FAKEHIP_ENTER("hipEventSynchronize", hipErrorInvalidHandle);
  Event* e = resolveEvent(event);
  if (!e) return ret(hipErrorInvalidHandle);
  std::shared_ptr<EventState> state = e->state;
  const uint64_t target = state->recorded.load();
  pollUntil([&] { return state->reached.load() >= target; });
  return ret(hipSuccess);
}

// ---------------------------------------------------------------------------------------------------
// Capture.

FAKEHIP_API hipError_t hipStreamGetCaptureInfo(void* stream, int* captureStatus, unsigned long long* id) {
  FAKEHIP_ENTER("hipStreamGetCaptureInfo", hipErrorInvalidHandle);
  if (!captureStatus) return ret(hipErrorInvalidValue);
  Stream* s = resolveStream(stream);
  if (!s) return ret(hipErrorInvalidHandle);
  std::lock_guard<std::mutex> lock(s->mu);
  *captureStatus = s->capturing ? hipStreamCaptureStatusActive : hipStreamCaptureStatusNone;
  if (id) *id = s->capturing ? s->captureId : 0;
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipThreadExchangeStreamCaptureMode(int* mode) {
  FAKEHIP_ENTER("hipThreadExchangeStreamCaptureMode", hipErrorInvalidValue);
  if (!mode || *mode < hipStreamCaptureModeGlobal || *mode > hipStreamCaptureModeRelaxed) return ret(hipErrorInvalidValue);
  std::swap(*mode, threadCaptureMode());
  return ret(hipSuccess);
}

// ---------------------------------------------------------------------------------------------------
// Stream memory operations.

#ifndef FAKEHIP_NO_MEMOP_SYMBOLS
static hipError_t checkMemopWord(void* ptr) {
  if (config().noStreamMemops) return hipErrorNotSupported;
  if (!ptr || reinterpret_cast<uintptr_t>(ptr) % 8 != 0) return hipErrorInvalidValue;
  if (!deviceAccessible(ptr, 8)) return hipErrorInvalidValue;  // must be device memory or mapped host memory
  return hipSuccess;
}

FAKEHIP_API hipError_t hipStreamWaitValue64(void* stream, void* ptr, uint64_t value, unsigned flags, uint64_t mask) {
  FAKEHIP_ENTER("hipStreamWaitValue64", hipErrorInvalidValue);
  Stream* s = resolveStream(stream);
  if (!s) return ret(hipErrorInvalidHandle);
  if (const hipError_t e = checkMemopWord(ptr)) return ret(e);
  if (flags > hipStreamWaitValueNor) return ret(hipErrorInvalidValue);
  auto* word = static_cast<uint64_t*>(ptr);
  counters().waitValueOps++;
  enqueue(s, [=] {
    pollUntil([&] {
      const uint64_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE) & mask;
      switch (flags) {
        case hipStreamWaitValueGte: return static_cast<int64_t>(v) >= static_cast<int64_t>(value);  // HSA signals: signed
        case hipStreamWaitValueEq: return v == value;
        case hipStreamWaitValueAnd: return (v & value) != 0;
        default: return ~(v | (value & mask)) != 0;
      }
    });
  });
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipStreamWriteValue64(void* stream, void* ptr, uint64_t value, unsigned flags) {
  FAKEHIP_ENTER("hipStreamWriteValue64", hipErrorInvalidValue);
  Stream* s = resolveStream(stream);
  if (!s) return ret(hipErrorInvalidHandle);
  if (const hipError_t e = checkMemopWord(ptr)) return ret(e);
  if (flags != 0) return ret(hipErrorInvalidValue);
  auto* word = static_cast<uint64_t*>(ptr);
  counters().writeValueOps++;
  enqueue(s, [=] { __atomic_store_n(word, value, __ATOMIC_RELEASE); });
  return ret(hipSuccess);
}
#endif
