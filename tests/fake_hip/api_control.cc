// The fake's control interface (fake_hip.h): counters, failure injection, capture marks, pending
// operations, the last bad access and the kernels it knows (see api.hpp, README.md).
#include <cstdint>
#include <mutex>

#include "api.hpp"
#include "kernels.hpp"
#include "runtime.hpp"

using namespace fakehip;

// ---------------------------------------------------------------------------------------------------
// Control interface (fake_hip.h).

FAKEHIP_API void fakehipStats(fakehipStats_t* out) {
  Counters& c = counters();
  *out = fakehipStats_t{c.compiles, c.compileFailures, c.moduleLoads, c.moduleLoadFailures, c.launches,
                        c.kernelsRun, c.waitValueOps, c.writeValueOps, c.badAccesses, c.injectedFailures,
                        c.liveDeviceAllocs, c.livePinnedAllocs, c.liveRegistrations, c.liveStreams,
                        c.liveEvents, c.capturedOps, c.relaxedViolations, c.liveIpcMappings,
                        c.freedWhileMapped};
}

FAKEHIP_API void fakehipFailCall(const char* name, int nth, int error) { failCall(name, nth, error); }

FAKEHIP_API uint64_t fakehipCallCount(const char* name) { return callCount(name); }

FAKEHIP_API int fakehipSetCapturing(void* stream, int active, unsigned long long id, int mode) {
  Stream* s = resolveStream(stream);
  if (!s || !stream) return hipErrorInvalidHandle;
  std::lock_guard<std::mutex> lock(s->mu);
  s->capturing = active != 0;
  s->captureId = active ? id : 0;
  s->captureMode = mode;
  return hipSuccess;
}

FAKEHIP_API uint64_t fakehipPendingOps(void* stream) {
  Stream* s = resolveStream(stream);
  return s ? pending(s) : 0;
}

FAKEHIP_API const char* fakehipLastBadAccess(void) { return lastBadAccess(); }

FAKEHIP_API int fakehipKnowsKernel(const char* name) { return name && findKernel(name) ? 1 : 0; }
