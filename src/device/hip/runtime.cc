// The HIP runtime and hiprtc, opened with dlopen and resolved with dlsym (hip_api.hpp's tables), so that one
// libhetccl-hip.so serves ROCm 5.7, 6.x and 7.x (libamdhip64.so.5/.6/.7) and loads on hosts without ROCm.
#include "device/hip/runtime.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "device/base/gpu_plugin.h"
#include "device/hip/plugin_state.hpp"

namespace hetccl::hip_plugin {
namespace {

constexpr bool REQUIRED = true;
constexpr bool OPTIONAL = false;

struct RuntimeLoad {
  int code = HETCCL_GPU_OK;
  std::string error;
  api::Runtime runtime;
};

api::Runtime gRuntime;  // filled once by loadRuntime(), read-only afterwards

/// Alternative exported names of a symbol (newer runtimes renamed some; a name missing in one major).
const char* alternativeName(const char* name) {
  if (std::strcmp(name, "hipHostMalloc") == 0) return "hipHostAlloc";
  if (std::strcmp(name, "hipHostFree") == 0) return "hipFreeHost";
  return nullptr;
}

template <typename Fn>
bool resolve(void* handle, const char* name, bool required, Fn* fn, std::string* missing) {
  void* address = dlsym(handle, name);
  if (!address) {
    if (const char* other = alternativeName(name)) address = dlsym(handle, other);
  }
  *fn = reinterpret_cast<Fn>(address);
  if (!address && required) {
    *missing += missing->empty() ? "" : ", ";
    *missing += name;
  }
  return address != nullptr;
}

const char* envOrNull(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

RuntimeLoad openRuntime() {
  RuntimeLoad result;
  static const char* const kNames[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"};
  const char* forced = envOrNull("HETCCL_HIP_RUNTIME_LIB");
  std::string errors;
  void* handle = nullptr;
  const char* opened = nullptr;
  auto tryOpen = [&](const char* path) {
    handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      opened = path;
      return true;
    }
    const char* err = dlerror();
    errors += errors.empty() ? "" : "; ";
    errors += err ? err : path;
    return false;
  };
  if (forced) {
    tryOpen(forced);
  } else {
    for (const char* name : kNames)
      if (tryOpen(name)) break;
  }
  if (!handle) {
    result.code = HETCCL_GPU_ERR_NO_DEVICE;
    result.error = forced ? std::string("HETCCL_HIP_RUNTIME_LIB=") + forced + " not loaded: " + errors
                          : "libamdhip64.so.{7,6,5} not found (no ROCm HIP runtime): " + errors;
    return result;
  }
  api::Runtime& r = result.runtime;
  r.handle = handle;
  std::snprintf(r.path, sizeof r.path, "%s", opened);
  std::string missing;
#define HETCCL_HIP_RESOLVE(name, need) resolve(handle, #name, need, &r.name, &missing);
  HETCCL_HIP_RUNTIME_FUNCTIONS(HETCCL_HIP_RESOLVE)
#undef HETCCL_HIP_RESOLVE
  if (!missing.empty()) {
    result.code = HETCCL_GPU_ERR_RUNTIME;
    result.error = std::string(opened) + " lacks required HIP symbol(s): " + missing;
    return result;  // the handle stays open: nothing of it ran, and closing a runtime is not always safe
  }
  if (r.hipRuntimeGetVersion(&r.runtimeVersion) != api::hipSuccess) r.runtimeVersion = 0;
  r.major = r.runtimeVersion / 10000000;
  return result;
}

std::mutex gRtcMutex;
api::Rtc gRtc;
bool gRtcTried = false;
std::string gRtcError;

bool resolveRtc(void* handle, const char* path, api::Rtc* rtc, std::string* missing) {
  api::Rtc candidate;
  missing->clear();
#define HETCCL_HIPRTC_RESOLVE(name, need) resolve(handle, #name, need, &candidate.name, missing);
  HETCCL_HIPRTC_FUNCTIONS(HETCCL_HIPRTC_RESOLVE)
#undef HETCCL_HIPRTC_RESOLVE
  if (!missing->empty()) return false;
  *rtc = candidate;
  rtc->handle = handle;
  std::snprintf(rtc->path, sizeof rtc->path, "%s", path);
  return true;
}

}  // namespace

const api::Runtime& rt() noexcept { return gRuntime; }

int loadRuntime(const char** error) noexcept {
  static const RuntimeLoad loaded = [] {
    RuntimeLoad l = openRuntime();
    gRuntime = l.runtime;  // published before any other entry point runs (init's static initialisation)
    return l;
  }();
  *error = loaded.error.c_str();
  return loaded.code;
}

const api::Rtc* loadRtc(const char** error) noexcept {
  std::lock_guard<std::mutex> lock(gRtcMutex);
  if (!gRtcTried) {
    gRtcTried = true;
    std::string errors;
    auto attempt = [&](void* handle, const char* path) {
      std::string missing;
      if (resolveRtc(handle, path, &gRtc, &missing)) return true;
      errors += errors.empty() ? "" : "; ";
      errors += std::string(path) + " lacks " + missing;
      return false;
    };
    auto tryPath = [&](const char* path) {
      void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (!handle) {
        const char* err = dlerror();
        errors += errors.empty() ? "" : "; ";
        errors += err ? err : path;
        return false;
      }
      if (attempt(handle, path)) return true;
      dlclose(handle);
      return false;
    };
    bool found = false;
    if (const char* forced = envOrNull("HETCCL_HIPRTC_LIB")) {
      found = tryPath(forced);
    } else {
      const int major = gRuntime.major;
      char versioned[64];
      std::snprintf(versioned, sizeof versioned, "libhiprtc.so.%d", major);
      if (major >= 6) found = tryPath(versioned);
      if (!found && gRuntime.handle) found = attempt(gRuntime.handle, gRuntime.path);
      for (const char* name : {"libhiprtc.so.7", "libhiprtc.so.6", "libhiprtc.so"})
        if (!found) found = tryPath(name);
    }
    if (!found) gRtcError = "hiprtc not available: " + errors;
  }
  *error = gRtcError.c_str();
  return gRtc.hiprtcCreateProgram ? &gRtc : nullptr;
}

}  // namespace hetccl::hip_plugin
