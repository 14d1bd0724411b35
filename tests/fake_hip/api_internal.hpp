// Helpers shared by the fake's exported functions (api_*.cc): the last-error recording, failure injection
// on entry, device checks and the capture rules of allocation and creation calls.
#pragma once

#include <mutex>
#include <string>

#include "api.hpp"
#include "runtime.hpp"

namespace fakehip {

/// Records the call's result as the thread's last error and returns it.
inline hipError_t ret(hipError_t e) { return recordError(e); }

#define FAKEHIP_ENTER(name, usual)                   \
  do {                                               \
    if (const int injected_ = enter(name, usual))    \
      return ret(injected_);                         \
  } while (0)

inline bool noDevice() { return deviceCount() == 0; }
inline bool validDevice(int d) { return d >= 0 && d < deviceCount(); }

/// Allocation and creation calls while a stream is captured in global mode need a relaxed thread.
inline bool captureForbids() {
  if (threadCaptureMode() == hipStreamCaptureModeRelaxed || !globalCaptureActive()) return false;
  counters().relaxedViolations++;
  return true;
}

inline bool isCapturing(Stream* s) {
  std::lock_guard<std::mutex> lock(s->mu);
  return s->capturing;
}

inline std::string deviceArch(int device) {
  (void)device;
  return config().arch;
}

}  // namespace fakehip
