#include "device/loader.hpp"

#include <dlfcn.h>

#include <atomic>
#include <mutex>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "core/config.hpp"
#include "core/error.hpp"
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
  if (dladdr(reinterpret_cast<const void*>(&loadGpuPlugin), &info) == 0 || !info.dli_fname) return "";
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
LoadResult loadPluginFile(const char* fileName, const char* configVar) {
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
  const auto* plugin = static_cast<const hetcclGpuPlugin_t*>(dlsym(handle, HETCCL_GPU_PLUGIN_SYMBOL));
  if (!plugin || plugin->version != HETCCL_GPU_PLUGIN_VERSION) {
    int found = plugin ? plugin->version : 0;  // an older plugin exports only its own version's symbol: say so
    for (int v = HETCCL_GPU_PLUGIN_VERSION - 1; v >= 1 && found == 0; --v)
      if (dlsym(handle, concat("hetcclGpuPlugin_v", v).c_str())) found = v;
    result.reason = found ? concat(path, " implements GPU plugin interface version ", found, ", this hetccl needs ",
                                   HETCCL_GPU_PLUGIN_VERSION)
                          : concat(path, " has no symbol ", HETCCL_GPU_PLUGIN_SYMBOL);
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

/// What differs between the vendors' plugins.
struct PluginSpec {
  const char* fileName;
  const char* configVar;
  const char* vendor;  // in messages
};
PluginSpec specOf(DeviceKind kind) {
  return kind == DeviceKind::Hip ? PluginSpec{"libhetccl-hip.so", "HETCCL_HIP_PLUGIN", "HIP"}
                                 : PluginSpec{"libhetccl-cuda.so", "HETCCL_CUDA_PLUGIN", "CUDA"};
}

struct PluginSlot {
  std::once_flag once;
  LoadResult result;
};
PluginSlot& slotOf(DeviceKind kind) {
  static PluginSlot cuda, hip;
  return kind == DeviceKind::Hip ? hip : cuda;
}

std::atomic<DeviceKind> gPreferred{DeviceKind::Cuda};

}  // namespace

const hetcclGpuPlugin_t* loadGpuPlugin(DeviceKind kind) {
  if (kind == DeviceKind::Host) return nullptr;
  PluginSlot& slot = slotOf(kind);
  std::call_once(slot.once, [&] {
    const PluginSpec spec = specOf(kind);
    try {
      slot.result = loadPluginFile(spec.fileName, spec.configVar);
    } catch (const std::exception& e) {  // e.g. a bad configuration value
      slot.result.reason = concat(spec.vendor, " plugin not loaded: ", e.what());
    }
    if (!slot.result.plugin) HETCCL_INFO(log::kInit, "no ", spec.vendor, " device runtime: ", slot.result.reason);
  });
  return slot.result.plugin;
}

std::string gpuPluginUnavailableReason(DeviceKind kind) {
  if (kind == DeviceKind::Host) return "host ranks have no GPU plugin";
  const LoadResult& r = slotOf(kind).result;
  return r.plugin ? "" : r.reason;
}

void preferVendorFirst(DeviceKind kind) noexcept {
  if (kind != DeviceKind::Host) gPreferred.store(kind);
}

GpuChoice chooseGpu() {
  const std::string want = config().str("HETCCL_DEVICE");
  GpuChoice choice;
  if (want == "host") {
    choice.reason = "HETCCL_DEVICE=host";
    return choice;
  }
  if (want == "cuda" || want == "hip") {
    const DeviceKind kind = want == "cuda" ? DeviceKind::Cuda : DeviceKind::Hip;
    choice.plugin = loadGpuPlugin(kind);
    if (!choice.plugin)
      throw InvalidUsage(concat("HETCCL_DEVICE=", want, " but the ", specOf(kind).vendor,
                                " plugin is unavailable: ", gpuPluginUnavailableReason(kind)));
    choice.kind = kind;
    choice.reason = concat("HETCCL_DEVICE=", want);
    return choice;
  }
  if (want != "auto") throw InvalidArgument(concat("HETCCL_DEVICE='", want, "' is not one of auto, host, cuda, hip"));
  const DeviceKind first = gPreferred.load();
  const DeviceKind order[2] = {first, first == DeviceKind::Hip ? DeviceKind::Cuda : DeviceKind::Hip};
  std::string missing;
  for (DeviceKind kind : order) {
    if ((choice.plugin = loadGpuPlugin(kind))) {
      choice.kind = kind;
      choice.reason = concat("HETCCL_DEVICE=auto: the ", specOf(kind).vendor, " plugin loaded and sees a GPU",
                             missing.empty() ? "" : concat(" (", missing, ")"));
      return choice;
    }
    missing += concat(missing.empty() ? "" : "; ", specOf(kind).vendor, ": ", gpuPluginUnavailableReason(kind));
  }
  choice.reason = concat("HETCCL_DEVICE=auto and no GPU plugin is usable (", missing, "): a CPU rank");
  return choice;
}

}  // namespace hetccl::device
