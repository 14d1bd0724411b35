// The fake's exported module functions: loading code objects, finding their kernels and launching them on
// a stream (see api.hpp, README.md).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "api.hpp"
#include "api_internal.hpp"
#include "code_object.hpp"
#include "kernels.hpp"
#include "runtime.hpp"

using namespace fakehip;

namespace {

// ---- modules ----
struct Module {
  CodeObject code;
  std::atomic<bool> loaded{true};
};
struct Function {
  Module* module;
  const KernelDef* kernel;
};
struct ModuleTable {
  std::mutex mu;
  std::set<Module*> modules;
  std::set<Function*> functions;
};
ModuleTable& modules() {
  static auto* t = new ModuleTable;
  return *t;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Modules and launches.

FAKEHIP_API hipError_t hipModuleLoadData(void** module, const void* image) {
  FAKEHIP_ENTER("hipModuleLoadData", hipErrorSharedObjectInitFailed);
  if (!module || !image) return ret(hipErrorInvalidValue);
  *module = nullptr;
  if (noDevice()) return ret(hipErrorNoDevice);
  auto* m = new Module;
  std::string why;
  int rc = parseImage(image, machOfArch(deviceArch(currentDevice())), &m->code, &why);
  if (rc == -1) {
    badAccess("hipModuleLoadData: " + why);
    rc = hipErrorInvalidImage;
  }
  if (rc != hipSuccess) {
    delete m;
    counters().moduleLoadFailures++;
    std::fprintf(stderr, "fakehip: hipModuleLoadData: %s (%s)\n", errorName(rc), why.c_str());
    return ret(rc);
  }
  {
    std::lock_guard<std::mutex> lock(modules().mu);
    modules().modules.insert(m);
  }
  counters().moduleLoads++;
  *module = m;
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipModuleUnload(void* module) {
  FAKEHIP_ENTER("hipModuleUnload", hipErrorInvalidHandle);
  std::lock_guard<std::mutex> lock(modules().mu);
  auto* m = static_cast<Module*>(module);
  if (!m || !modules().modules.erase(m)) return ret(hipErrorInvalidHandle);
  m->loaded = false;  // kept: its functions' handles now fail to launch
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipModuleGetFunction(void** function, void* module, const char* kernelName) {
  FAKEHIP_ENTER("hipModuleGetFunction", hipErrorNotFound);
  if (!function || !kernelName) return ret(hipErrorInvalidValue);
  *function = nullptr;
  auto* m = static_cast<Module*>(module);
  {
    std::lock_guard<std::mutex> lock(modules().mu);
    if (!m || !modules().modules.count(m)) return ret(hipErrorInvalidHandle);
  }
  const auto& syms = m->code.symbols;
  if (std::find(syms.begin(), syms.end(), kernelName) == syms.end()) return ret(hipErrorNotFound);
  const KernelDef* k = findKernel(kernelName);
  if (!k) {
    std::fprintf(stderr, "fakehip: hipModuleGetFunction: the fake cannot run kernel '%s'\n", kernelName);
    return ret(hipErrorNotFound);
  }
  auto* f = new Function{m, k};
  std::lock_guard<std::mutex> lock(modules().mu);
  modules().functions.insert(f);
  *function = f;
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipModuleLaunchKernel(void* function, unsigned gridDimX, unsigned gridDimY, unsigned gridDimZ,
                                             unsigned blockDimX, unsigned blockDimY, unsigned blockDimZ,
                                             unsigned sharedMemBytes, void* stream, void** kernelParams, void** extra) {
  FAKEHIP_ENTER("hipModuleLaunchKernel", hipErrorLaunchFailure);
  auto* f = static_cast<Function*>(function);
  {
    std::lock_guard<std::mutex> lock(modules().mu);
    if (!f || !modules().functions.count(f) || !f->module->loaded) return ret(hipErrorInvalidHandle);
  }
  Stream* s = resolveStream(stream);
  if (!s) return ret(hipErrorInvalidHandle);
  const uint64_t threads = uint64_t{blockDimX} * blockDimY * blockDimZ;
  if (!gridDimX || !gridDimY || !gridDimZ || threads == 0 || threads > 1024 || sharedMemBytes > 65536)
    return ret(hipErrorInvalidConfiguration);
  if (extra) return ret(hipErrorNotSupported);  // the plugin passes kernelParams only
  const KernelDef* k = f->kernel;
  if (!kernelParams && !k->paramSizes.empty()) return ret(hipErrorInvalidValue);
  std::vector<char> params;
  for (size_t i = 0; i < k->paramSizes.size(); ++i) {
    if (!kernelParams[i]) return ret(hipErrorInvalidValue);
    const char* p = static_cast<const char*>(kernelParams[i]);
    params.insert(params.end(), p, p + k->paramSizes[i]);  // copied now: the caller's locals go away
  }
  const LaunchShape shape{{gridDimX, gridDimY, gridDimZ}, {blockDimX, blockDimY, blockDimZ}};
  counters().launches++;
  enqueue(s, [k, shape, params = std::move(params)] {
    runKernel(*k, shape, params);
    counters().kernelsRun++;
  });
  return ret(hipSuccess);
}
