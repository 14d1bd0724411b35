#include "device/loader.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "core/config.hpp"
#include "core/log.hpp"

namespace hetccl::device {
namespace {

constexpr const char* kCudaPluginFile = "libhetccl-cuda.so";

/// The plugins' logger: their lines go through hetccl's logger (level and mask checked here).
void pluginLogger(int level, const char* file, int line, const char* message) {
  const auto lvl = static_cast<log::Level>(level);
  if (log::enabled(lvl, log::kInit)) log::write(lvl, log::kInit, file ? file : "?", line, message ? message : "");
}

std::string directoryOfThisObject() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&loadCudaPlugin), &info) == 0 || !info.dli_fname) return "";
  std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

bool fileExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

/// Candidate paths for dlopen, in the order documented in loader.hpp.
std::vector<std::string> candidates(const char* fileName, const char* configVar) {
  if (config().isSet(configVar)) return {config().str(configVar)};
  std::vector<std::string> paths;
  const std::string dir = directoryOfThisObject();
  if (!dir.empty() && fileExists(dir + "/" + fileName)) paths.push_back(dir + "/" + fileName);
  paths.push_back(fileName);
  return paths;
}

struct LoadResult {
  const hetcclGpuPlugin_t* plugin = nullptr;
  std::string reason;  // why plugin is null
};

/// Opens the first candidate that loads, checks its interface version and initialises it.
LoadResult loadGpuPlugin(const char* fileName, const char* configVar) {
  LoadResult result;
  void* handle = nullptr;
  std::string path, openErrors;
  for (const std::string& candidate : candidates(fileName, configVar)) {
    handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      path = candidate;
      break;
    }
    const char* err = dlerror();
    openErrors += concat(openErrors.empty() ? "" : "; ", err ? err : candidate.c_str());
  }
  if (!handle) {
    result.reason = concat(fileName, " not loaded (", openErrors, ")");
    return result;
  }
  const auto* plugin = static_cast<const hetcclGpuPlugin_t*>(dlsym(handle, HETCCL_GPU_PLUGIN_SYMBOL_V2));
  if (!plugin || plugin->version != HETCCL_GPU_PLUGIN_VERSION) {
    const bool v1 = !plugin && dlsym(handle, "hetcclGpuPlugin_v1");  // an older plugin: say so
    const int found = plugin ? plugin->version : 1;
    result.reason = plugin || v1 ? concat(path, " implements GPU plugin interface version ", found,
                                          ", this hetccl needs ", HETCCL_GPU_PLUGIN_VERSION)
                                 : concat(path, " has no symbol ", HETCCL_GPU_PLUGIN_SYMBOL_V2);
    dlclose(handle);  // nothing of it ran yet
    return result;
  }
  if (plugin->init(&pluginLogger) != HETCCL_GPU_OK) {
    // Not closed: the vendor runtime may have registered process-exit handlers.
    result.reason = concat(path, " loaded but unusable: ", plugin->lastError());
    return result;
  }
  HETCCL_INFO(log::kInit, "GPU plugin '", plugin->name, "' loaded from ", path);
  result.plugin = plugin;
  return result;
}

std::once_flag gCudaOnce;
LoadResult gCuda;

}  // namespace

const hetcclGpuPlugin_t* loadCudaPlugin() {
  std::call_once(gCudaOnce, [] {
    try {
      gCuda = loadGpuPlugin(kCudaPluginFile, "HETCCL_CUDA_PLUGIN");
    } catch (const std::exception& e) {  // e.g. a bad configuration value
      gCuda.reason = concat("CUDA plugin not loaded: ", e.what());
    }
    if (!gCuda.plugin) HETCCL_INFO(log::kInit, "no CUDA device runtime: ", gCuda.reason);
  });
  return gCuda.plugin;
}

std::string cudaPluginUnavailableReason() { return gCuda.plugin ? "" : gCuda.reason; }

}  // namespace hetccl::device
