// The fake's exported copy and memset functions: hipMemcpy / hipMemcpyAsync, checked against the memory
// their pointers name, and hipMemset / hipMemsetAsync (see api.hpp, README.md).
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "api.hpp"
#include "api_internal.hpp"
#include "runtime.hpp"

using namespace fakehip;

namespace {

// ---- memory classification for copies ----
enum class Where { Pageable, Pinned, Device, Overrun };
Where classify(const void* p, size_t bytes) {
  Range r;
  if (findRange(p, bytes, &r)) return r.kind == MemKind::Device ? Where::Device : Where::Pinned;
  if (findRange(p, 0, &r)) return Where::Overrun;  // starts inside a tracked range, runs past its end
  return Where::Pageable;
}

/// Checks a copy's pointers against its kind; returns hipSuccess or the error HIP gives.
hipError_t checkCopy(void* dst, const void* src, size_t bytes, int kind, Where* d, Where* s) {
  if (!dst || !src) return hipErrorInvalidValue;
  if (kind < hipMemcpyHostToHost || kind > hipMemcpyDefault) return hipErrorInvalidMemcpyDirection;
  *d = classify(dst, bytes);
  *s = classify(src, bytes);
  if (*d == Where::Overrun || *s == Where::Overrun) {
    badAccess("copy of " + std::to_string(bytes) + " bytes runs past the end of a device or pinned allocation");
    return hipErrorInvalidValue;
  }
  const bool dstDeviceSide = kind == hipMemcpyHostToDevice || kind == hipMemcpyDeviceToDevice;
  const bool srcDeviceSide = kind == hipMemcpyDeviceToHost || kind == hipMemcpyDeviceToDevice;
  const bool dstHostSide = kind == hipMemcpyHostToHost || kind == hipMemcpyDeviceToHost;
  const bool srcHostSide = kind == hipMemcpyHostToHost || kind == hipMemcpyHostToDevice;
  if ((dstDeviceSide && *d == Where::Pageable) || (srcDeviceSide && *s == Where::Pageable) ||
      (dstHostSide && *d == Where::Device) || (srcHostSide && *s == Where::Device))
    return hipErrorInvalidValue;  // the kind contradicts what the pointers are
  return hipSuccess;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Copies and memsets.

FAKEHIP_API hipError_t hipMemcpy(void* dst, const void* src, size_t sizeBytes, int kind) {
  FAKEHIP_ENTER("hipMemcpy", hipErrorInvalidValue);
  if (sizeBytes == 0) return ret(hipSuccess);
  Where d, s;
  if (const hipError_t e = checkCopy(dst, src, sizeBytes, kind, &d, &s)) return ret(e);
  Stream* null = resolveStream(nullptr);
  if (!null) return ret(hipErrorNoDevice);
  enqueue(null, [=] { std::memmove(dst, src, sizeBytes); });
  synchronize(null);  // hipMemcpy returns when the copy is done
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipMemcpyAsync(void* dst, const void* src, size_t sizeBytes, int kind, void* stream) {
  FAKEHIP_ENTER("hipMemcpyAsync", hipErrorInvalidValue);
  Stream* st = resolveStream(stream);
  if (!st) return ret(hipErrorInvalidHandle);
  if (sizeBytes == 0) return ret(hipSuccess);
  Where d, s;
  if (const hipError_t e = checkCopy(dst, src, sizeBytes, kind, &d, &s)) return ret(e);
  enqueue(st, [=] { std::memmove(dst, src, sizeBytes); });
  // With pageable host memory the copy is staged: the call returns once it is done (it may block).
  if ((d == Where::Pageable || s == Where::Pageable) && !isCapturing(st)) synchronize(st);
  return ret(hipSuccess);
}

/// hipMemset is asynchronous with respect to the host for device memory (queued on the null stream); the
/// fake delays it a little so that a caller reading the memory without synchronising sees the old bytes.
FAKEHIP_API hipError_t hipMemset(void* dst, int value, size_t sizeBytes) {
  FAKEHIP_ENTER("hipMemset", hipErrorInvalidValue);
  if (sizeBytes == 0) return ret(hipSuccess);
  if (!dst || !deviceAccessible(dst, sizeBytes)) return ret(hipErrorInvalidValue);
  Stream* null = resolveStream(nullptr);
  if (!null) return ret(hipErrorNoDevice);
  enqueue(null, [=] {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    std::memset(dst, value, sizeBytes);
  });
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipMemsetAsync(void* dst, int value, size_t sizeBytes, void* stream) {
  FAKEHIP_ENTER("hipMemsetAsync", hipErrorInvalidValue);
  Stream* st = resolveStream(stream);
  if (!st) return ret(hipErrorInvalidHandle);
  if (sizeBytes == 0) return ret(hipSuccess);
  if (!dst || !deviceAccessible(dst, sizeBytes)) return ret(hipErrorInvalidValue);
  enqueue(st, [=] { std::memset(dst, value, sizeBytes); });
  return ret(hipSuccess);
}
