// Loading the HIP runtime (libamdhip64) and hiprtc with dlopen/dlsym: the plugin links neither.
#pragma once

#include "device/hip/hip_api.hpp"

namespace hetccl::hip_plugin {

/// Opens and resolves the runtime once per process: HETCCL_HIP_RUNTIME_LIB (an exact path, tried alone)
/// or else libamdhip64.so.7, .so.6, .so.5, libamdhip64.so. Returns HETCCL_GPU_OK, or NO_DEVICE when no
/// runtime library loads, RUNTIME when one loads but lacks a required symbol, with `error` saying why.
int loadRuntime(const char** error) noexcept;

/// hiprtc, resolved at its first use (thread-safe): HETCCL_HIPRTC_LIB (an exact path, tried alone), or else
/// libhiprtc.so.<runtime major> (6, 7, ...), the runtime library itself (ROCm 5.x and 6.x export hiprtc
/// there; so does a test fake), libhiprtc.so.7, libhiprtc.so.6, libhiprtc.so. Null with `error` set when
/// none has every required symbol.
const api::Rtc* loadRtc(const char** error) noexcept;

}  // namespace hetccl::hip_plugin
