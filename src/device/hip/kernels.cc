// Code object selection, the on-disk cache of hiprtc results, per-device modules and the kernel launchers
// of the HIP plugin.
//
// Which code object a device gets (once per device, at its first kernel):
//  1. its architecture name (gcnArchName, e.g. "gfx90a:sramecc+:xnack-"): HETCCL_HIP_ARCH if set, else the
//     device property struct read through whichever entry point the runtime has (hipGetDevicePropertiesR0600,
//     ROCm 6.x/7.x, gcnArchName at byte 1160; hipGetDevicePropertiesR0000 or 5.x's hipGetDeviceProperties,
//     byte 396) into a zeroed buffer larger than any layout, accepted only if it reads "gfx" + [0-9a-z:+-];
//  2. the embedded code object of that processor (the name before the first ':'), if one was built;
//  3. else (or if the runtime refuses it) the embedded kernel source compiled by hiprtc for that arch, found
//     in / stored to the cache: HETCCL_HIP_KERNEL_CACHE (a folder; "off": none), else
//     $XDG_CACHE_HOME/hetccl, else $HOME/.cache/hetccl; file "hip-kernels-<arch>-rt<runtime version>-<hash
//     of source + options>.hsaco", written to a temporary file and renamed into place; an entry that does
//     not load is compiled again and replaced;
//  4. with no architecture name at all: every embedded object in turn (the runtime refuses foreign ones),
//     then hiprtc for the current device (no --offload-arch, no cache).
#include "device/hip/kernels.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "device/gpu/ll_protocol.cuh"
#include "device/hip/embedded.hpp"
#include "device/hip/kernel_abi.hpp"
#include "device/hip/plugin_state.hpp"
#include "device/hip/runtime.hpp"

namespace hetccl::hip_plugin {
namespace {

constexpr int kMaxDevices = 64;

struct DeviceKernels {
  std::mutex mutex;
  std::atomic<bool> ready{false};
  void* module = nullptr;
  void* reduce[abi::kNumTypes][abi::kNumKernelOps] = {};
  void* scale[abi::kNumTypes] = {};
  void* divide[abi::kNumTypes] = {};
  void* waitFlag = nullptr;
  void* writeFlag = nullptr;
  void* streamOps = nullptr;
  void* ll[abi::kNumTypes][abi::kNumKernelOps] = {};
};

DeviceKernels gDevices[kMaxDevices];

bool validArchName(const char* s, size_t max) {
  if (std::strncmp(s, "gfx", 3) != 0) return false;
  for (size_t i = 3; i < max; ++i) {
    const char c = s[i];
    if (c == '\0') return i > 3;
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == ':' || c == '+' ||
          c == '-' || c == '_'))
      return false;
  }
  return false;  // not terminated
}

/// gcnArchName of `device` into `out`; `how` says where it came from. False when unknown.
bool detectArch(int device, std::string* out, const char** how) {
  if (const char* forced = std::getenv("HETCCL_HIP_ARCH"); forced && *forced) {
    *out = forced;
    *how = "HETCCL_HIP_ARCH";
    return true;
  }
  const api::Runtime& r = rt();
  struct Method {
    api::PFN_hipGetDeviceProperties fn;
    size_t offset;
    const char* name;
  } methods[] = {
      {r.hipGetDevicePropertiesR0600, api::kGcnArchNameOffsetR0600, "hipGetDevicePropertiesR0600"},
      {r.hipGetDevicePropertiesR0000, api::kGcnArchNameOffsetR0000, "hipGetDevicePropertiesR0000"},
      {r.hipGetDeviceProperties, api::kGcnArchNameOffsetR0000, "hipGetDeviceProperties"},
  };
  std::vector<char> buffer(api::kDevicePropBufferBytes);
  for (const Method& m : methods) {
    if (!m.fn) continue;
    std::fill(buffer.begin(), buffer.end(), 0);
    if (m.fn(buffer.data(), device) != api::hipSuccess) {
      (void)r.hipGetLastError();
      continue;
    }
    const char* name = buffer.data() + m.offset;
    if (validArchName(name, api::kGcnArchNameBytes)) {
      *out = name;
      *how = m.name;
      return true;
    }
  }
  return false;
}

uint64_t fnv1a(uint64_t h, const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

/// The cache folder, or "" when caching is off or no folder can be named.
std::string cacheDirectory() {
  if (const char* dir = std::getenv("HETCCL_HIP_KERNEL_CACHE"); dir && *dir)
    return std::strcmp(dir, "off") == 0 ? "" : dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/hetccl";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/hetccl";
  return "";
}

bool makeDirectories(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      const std::string part = path.substr(0, i);
      if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
  }
  return true;
}

bool readFile(const std::string& path, std::vector<char>* data) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  data->clear();
  char chunk[65536];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) data->insert(data->end(), chunk, chunk + n);
  const bool ok = !std::ferror(f);
  std::fclose(f);
  return ok;
}

/// Writes `data` to `path` atomically (a temporary file in the same folder, then rename). False on failure.
bool writeFileAtomically(const std::string& path, const std::vector<char>& data) {
  char suffix[64];
  std::snprintf(suffix, sizeof suffix, ".tmp.%ld.%p", static_cast<long>(::getpid()), static_cast<const void*>(&data));
  const std::string temporary = path + suffix;
  FILE* f = std::fopen(temporary.c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(data.data(), 1, data.size(), f) == data.size();
  ok = std::fflush(f) == 0 && ok;
  ok = ::fsync(::fileno(f)) == 0 && ok;
  ok = std::fclose(f) == 0 && ok;
  if (ok && std::rename(temporary.c_str(), path.c_str()) == 0) return true;
  std::remove(temporary.c_str());
  return false;
}

/// A complete 64-bit little-endian ELF: every table and section its headers name lies inside `data`.
/// hipModuleLoadData takes no size, so a truncated file (an interrupted cache write on another file
/// system, a full disk) would be read past its end.
bool looksLikeCodeObject(const std::vector<char>& data) {
  if (data.size() < 64 || std::memcmp(data.data(), "\x7f" "ELF", 4) != 0 || data[4] != 2 /* 64-bit */ ||
      data[5] != 1 /* little-endian */)
    return false;
  auto read = [&](size_t offset, size_t bytes) {
    uint64_t v = 0;
    std::memcpy(&v, data.data() + offset, bytes);  // little-endian host (x86-64, aarch64)
    return v;
  };
  const uint64_t size = data.size();
  auto fits = [&](uint64_t offset, uint64_t bytes) { return offset <= size && bytes <= size - offset; };
  const uint64_t phoff = read(0x20, 8), shoff = read(0x28, 8);
  const uint64_t phentsize = read(0x36, 2), phnum = read(0x38, 2), shentsize = read(0x3A, 2), shnum = read(0x3C, 2);
  if (!fits(phoff, phentsize * phnum) || !fits(shoff, shentsize * shnum)) return false;
  for (uint64_t i = 0; i < phnum; ++i) {  // program headers: p_offset at 8, p_filesz at 32
    if (phentsize < 40) return false;
    const uint64_t h = phoff + i * phentsize;
    if (!fits(read(h + 8, 8), read(h + 32, 8))) return false;
  }
  for (uint64_t i = 0; i < shnum; ++i) {  // section headers: sh_type at 4, sh_offset at 24, sh_size at 32
    if (shentsize < 40) return false;
    const uint64_t h = shoff + i * shentsize;
    const uint64_t type = read(h + 4, 4);
    if (type != 8 /* SHT_NOBITS */ && !fits(read(h + 24, 8), read(h + 32, 8))) return false;
  }
  return true;
}

/// Compiles the embedded source with hiprtc (for `arch`, or the current device when empty).
int compileWithRtc(const std::string& arch, std::vector<char>* code) {
  const char* why = nullptr;
  const api::Rtc* rtc = loadRtc(&why);
  if (!rtc) return fail(HETCCL_GPU_ERR_RUNTIME, "loading kernels (hiprtc)", why);
  std::vector<std::string> options = {"-O3", "-std=c++17"};
  if (!arch.empty()) options.push_back("--offload-arch=" + arch);
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  void* program = nullptr;
  char detail[640];
  api::hiprtcResult rc = rtc->hiprtcCreateProgram(&program, kKernelSourceText, "hetccl_hip_kernels.hip", 0, nullptr, nullptr);
  if (rc != api::HIPRTC_SUCCESS) {
    std::snprintf(detail, sizeof detail, "%s", rtc->hiprtcGetErrorString(rc));
    return fail(HETCCL_GPU_ERR_RUNTIME, "hiprtcCreateProgram", detail);
  }
  rc = rtc->hiprtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
  if (rc != api::HIPRTC_SUCCESS) {
    size_t logSize = 0;
    std::string log;
    if (rtc->hiprtcGetProgramLogSize(program, &logSize) == api::HIPRTC_SUCCESS && logSize > 1) {
      log.resize(logSize);
      if (rtc->hiprtcGetProgramLog(program, log.data()) != api::HIPRTC_SUCCESS) log.clear();
    }
    HIP_PLUGIN_WARN("hiprtc failed to compile the HIP plugin's kernels for %s: %s", arch.empty() ? "this device" : arch.c_str(),
                    log.c_str());
    std::snprintf(detail, sizeof detail, "%s (for %s): %.400s", rtc->hiprtcGetErrorString(rc),
                  arch.empty() ? "the current device" : arch.c_str(), log.c_str());
    (void)rtc->hiprtcDestroyProgram(&program);
    return fail(HETCCL_GPU_ERR_RUNTIME, "hiprtcCompileProgram", detail);
  }
  size_t size = 0;
  rc = rtc->hiprtcGetCodeSize(program, &size);
  if (rc == api::HIPRTC_SUCCESS) {
    code->assign(size, 0);
    rc = rtc->hiprtcGetCode(program, code->data());
  }
  (void)rtc->hiprtcDestroyProgram(&program);
  if (rc != api::HIPRTC_SUCCESS)
    return fail(HETCCL_GPU_ERR_RUNTIME, "hiprtcGetCode", rtc->hiprtcGetErrorString(rc));
  return HETCCL_GPU_OK;
}

int loadModule(const void* image, void** module, const char* what) {
  char call[160];
  std::snprintf(call, sizeof call, "hipModuleLoadData (%s)", what);
  return check(rt().hipModuleLoadData(module, image), call);
}

/// The hiprtc path with the disk cache.
int loadCompiledModule(const std::string& arch, void** module) {
  const api::Runtime& r = rt();
  std::string path;
  const std::string dir = arch.empty() ? "" : cacheDirectory();
  if (!dir.empty()) {
    uint64_t h = 0xcbf29ce484222325ull;
    h = fnv1a(h, kKernelSourceText, kKernelSourceSize);
    h = fnv1a(h, arch.data(), arch.size());
    std::string safeArch = arch;
    for (char& c : safeArch)
      if (c == ':' || c == '/') c = '_';
    char name[256];
    std::snprintf(name, sizeof name, "/hip-kernels-%s-rt%d-%016llx.hsaco", safeArch.c_str(), r.runtimeVersion,
                  static_cast<unsigned long long>(h));
    path = dir + name;
    std::vector<char> cached;
    if (readFile(path, &cached)) {
      if (looksLikeCodeObject(cached) && r.hipModuleLoadData(module, cached.data()) == api::hipSuccess) {
        HIP_PLUGIN_INFO("HIP kernels for %s loaded from the cache %s", arch.c_str(), path.c_str());
        return HETCCL_GPU_OK;
      }
      (void)r.hipGetLastError();
      HIP_PLUGIN_WARN("HIP kernel cache entry %s does not load: compiling it again", path.c_str());
    }
  }
  std::vector<char> code;
  if (const int rc = compileWithRtc(arch, &code)) return rc;
  HIP_PLUGIN_INFO("HIP kernels compiled by hiprtc for %s (%zu bytes)", arch.empty() ? "the current device" : arch.c_str(),
                  code.size());
  if (const int rc = loadModule(code.data(), module, "hiprtc output")) return rc;
  if (!path.empty()) {
    if (!makeDirectories(dir) || !writeFileAtomically(path, code))
      HIP_PLUGIN_WARN("could not write the HIP kernel cache entry %s: %s", path.c_str(), std::strerror(errno));
  }
  return HETCCL_GPU_OK;
}

int selectAndLoadModule(int device, void** module) {
  std::string arch;
  const char* how = nullptr;
  const bool known = detectArch(device, &arch, &how);
  const api::Runtime& r = rt();
  if (known) {
    const std::string processor = arch.substr(0, arch.find(':'));
    for (const EmbeddedCodeObject* e = kEmbeddedCodeObjects; e->arch; ++e) {
      if (processor != e->arch) continue;
      if (r.hipModuleLoadData(module, e->data) == api::hipSuccess) {
        HIP_PLUGIN_INFO("device %d (%s, from %s): embedded HIP kernels for %s", device, arch.c_str(), how, e->arch);
        return HETCCL_GPU_OK;
      }
      const api::hipError_t err = r.hipGetLastError();
      HIP_PLUGIN_WARN("device %d (%s): the embedded %s code object does not load (%s): compiling with hiprtc",
                      device, arch.c_str(), e->arch, r.hipGetErrorString(err));
    }
    HIP_PLUGIN_INFO("device %d (%s, from %s): no embedded code object, HIP kernels come from hiprtc", device,
                    arch.c_str(), how);
    return loadCompiledModule(arch, module);
  }
  HIP_PLUGIN_WARN("device %d: architecture unknown (no usable device property entry point; set HETCCL_HIP_ARCH): "
                  "trying the embedded code objects in turn", device);
  for (const EmbeddedCodeObject* e = kEmbeddedCodeObjects; e->arch; ++e) {
    if (r.hipModuleLoadData(module, e->data) == api::hipSuccess) {
      HIP_PLUGIN_INFO("device %d: embedded HIP kernels for %s load", device, e->arch);
      return HETCCL_GPU_OK;
    }
    (void)r.hipGetLastError();
  }
  return loadCompiledModule("", module);
}

int resolveFunctions(DeviceKernels& k) {
  const api::Runtime& r = rt();
  char name[64];
  auto get = [&](const char* kernel, void** fn) {
    char call[128];
    std::snprintf(call, sizeof call, "hipModuleGetFunction (%s)", kernel);
    return check(r.hipModuleGetFunction(fn, k.module, kernel), call);
  };
  for (int t = 0; t < abi::kNumTypes; ++t) {
    for (int op = 0; op < abi::kNumKernelOps; ++op) {
      abi::elementwiseKernelName(name, sizeof name, abi::ElementwiseKind::kReduce, t, op);
      if (const int rc = get(name, &k.reduce[t][op])) return rc;
    }
    abi::elementwiseKernelName(name, sizeof name, abi::ElementwiseKind::kScale, t, 0);
    if (const int rc = get(name, &k.scale[t])) return rc;
    abi::elementwiseKernelName(name, sizeof name, abi::ElementwiseKind::kDivide, t, 0);
    if (const int rc = get(name, &k.divide[t])) return rc;
    for (int op = 0; op < abi::kNumKernelOps; ++op) {
      abi::llKernelName(name, sizeof name, t, op);
      if (const int rc = get(name, &k.ll[t][op])) return rc;
    }
  }
  if (const int rc = get(abi::kWaitFlagKernel, &k.waitFlag)) return rc;
  if (const int rc = get(abi::kWriteFlagKernel, &k.writeFlag)) return rc;
  return get(abi::kStreamOpsKernel, &k.streamOps);
}

/// The current device's kernels, loaded on first use; null (error recorded) on failure.
DeviceKernels* kernels(int* rcOut) {
  int device = 0;
  if ((*rcOut = check(rt().hipGetDevice(&device), "hipGetDevice"))) return nullptr;
  if (device < 0 || device >= kMaxDevices) {
    *rcOut = fail(HETCCL_GPU_ERR_RUNTIME, "loading kernels", "device ordinal beyond the plugin's 64 devices");
    return nullptr;
  }
  DeviceKernels& k = gDevices[device];
  if (k.ready.load(std::memory_order_acquire)) return &k;
  std::lock_guard<std::mutex> lock(k.mutex);
  if (k.ready.load(std::memory_order_relaxed)) return &k;
  RelaxedCaptureMode relaxed;  // may be the first call, made while a stream is being captured
  if (!k.module && (*rcOut = selectAndLoadModule(device, &k.module))) {
    k.module = nullptr;
    return nullptr;
  }
  if ((*rcOut = resolveFunctions(k))) return nullptr;
  k.ready.store(true, std::memory_order_release);
  return &k;
}

int launch(void* function, unsigned grid, unsigned block, void* stream, void** params, const char* call) {
  return check(rt().hipModuleLaunchKernel(function, grid, 1, 1, block, 1, 1, 0, stream, params, nullptr), call);
}

int launchElementwise(void* function, void* dst, const void* src, size_t count, int dataType, uint64_t arg,
                      void* stream, const char* call) {
  abi::ElementwiseArgs a{dst, src, static_cast<uint64_t>(count), 0, arg};
  a.vectorized = (reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) % 16 == 0 ? 1u : 0u;
  void* params[] = {&a.dst, &a.src, &a.count, &a.vectorized, &a.arg};
  const unsigned grid = abi::elementwiseBlocks(count, abi::kTypeBytes[dataType], a.vectorized != 0);
  return launch(function, grid, abi::kElementwiseThreads, stream, params, call);
}

std::atomic<int> gNativeSupport[kMaxDevices];  // 0 unknown, 1 supported, 2 unsupported

}  // namespace

int ensureKernels() noexcept {
  int rc = HETCCL_GPU_OK;
  return kernels(&rc) ? HETCCL_GPU_OK : rc;
}

int launchReduce(void* dst, const void* src, size_t count, int dataType, int op, void* stream) noexcept {
  int rc = HETCCL_GPU_OK;
  DeviceKernels* k = kernels(&rc);
  if (!k) return rc;
  const int kernelOp = op < abi::kNumKernelOps ? op : 0;  // avg, premulsum: sum
  return launchElementwise(k->reduce[dataType][kernelOp], dst, src, count, dataType, 0, stream,
                           "reduce (hipModuleLaunchKernel)");
}

int launchScale(void* dst, const void* src, size_t count, int dataType, const void* scalar, void* stream) noexcept {
  int rc = HETCCL_GPU_OK;
  DeviceKernels* k = kernels(&rc);
  if (!k) return rc;
  uint64_t arg = 0;
  std::memcpy(&arg, scalar, abi::kTypeBytes[dataType]);
  return launchElementwise(k->scale[dataType], dst, src, count, dataType, arg, stream, "scale (hipModuleLaunchKernel)");
}

int launchDivide(void* buf, size_t count, int dataType, uint64_t n, void* stream) noexcept {
  int rc = HETCCL_GPU_OK;
  DeviceKernels* k = kernels(&rc);
  if (!k) return rc;
  return launchElementwise(k->divide[dataType], buf, buf, count, dataType, n, stream, "divide (hipModuleLaunchKernel)");
}

int launchWaitFlag(const uint64_t* deviceFlag, uint64_t value, void* stream) noexcept {
  int rc = HETCCL_GPU_OK;
  DeviceKernels* k = kernels(&rc);
  if (!k) return rc;
  void* params[] = {&deviceFlag, &value};
  return launch(k->waitFlag, 1, 1, stream, params, "streamWaitFlag (polling kernel, hipModuleLaunchKernel)");
}

int launchWriteFlag(uint64_t* deviceFlag, uint64_t value, void* stream) noexcept {
  int rc = HETCCL_GPU_OK;
  DeviceKernels* k = kernels(&rc);
  if (!k) return rc;
  void* params[] = {&deviceFlag, &value};
  return launch(k->writeFlag, 1, 1, stream, params, "streamWriteFlag (kernel, hipModuleLaunchKernel)");
}

int launchStreamOps(const hetcclGpuStreamOp_t* ops, unsigned count, void* stream) noexcept {
  int rc = HETCCL_GPU_OK;
  DeviceKernels* k = kernels(&rc);
  if (!k) return rc;
  abi::StreamOpBatch batch{};
  for (unsigned i = 0; i < count; ++i) batch.op[i] = ops[i];
  batch.count = count;
  void* params[] = {&batch};
  return launch(k->streamOps, 1, 1, stream, params, "streamOps (kernel, hipModuleLaunchKernel)");
}

int launchLlAllReduce(const hetcclGpuLlAllReduce_t& args, void* stream) noexcept {
  int rc = HETCCL_GPU_OK;
  DeviceKernels* k = kernels(&rc);
  if (!k) return rc;
  hetcclGpuLlAllReduce_t a = args;
  const int kernelOp = a.op < abi::kNumKernelOps ? a.op : 0;  // avg: the sum kernel divides
  const gpu::ll::LaunchShape shape = gpu::ll::launchShape(a.count * abi::kTypeBytes[a.dataType], a.nranks);
  void* params[] = {&a};
  return launch(k->ll[a.dataType][kernelOp], shape.blocks, shape.threads, stream, params,
                "llAllReduce (hipModuleLaunchKernel)");
}

bool nativeFlagOpsSupported(int device) noexcept {
  if (device < 0 || device >= kMaxDevices) return false;
  const int known = gNativeSupport[device].load(std::memory_order_acquire);
  if (known != 0) return known == 1;
  const api::Runtime& r = rt();
  int attribute = 0;
  bool supported = false;
  if (r.hipStreamWaitValue64 && r.hipStreamWriteValue64) {
    if (r.hipDeviceGetAttribute(&attribute, api::hipDeviceAttributeCanUseStreamWaitValue, device) == api::hipSuccess)
      supported = attribute != 0;
    else
      (void)r.hipGetLastError();
  }
  int expected = 0;
  if (gNativeSupport[device].compare_exchange_strong(expected, supported ? 1 : 2))
    HIP_PLUGIN_INFO("device %d: stream flag waits/writes use %s", device,
                    supported ? "hipStreamWaitValue64/hipStreamWriteValue64"
                              : "polling kernels (no stream wait-value support)");
  return supported;
}

bool nativeOnCurrentDevice() noexcept {
  int device = 0;
  if (rt().hipGetDevice(&device) != api::hipSuccess) {
    (void)rt().hipGetLastError();
    return false;
  }
  return nativeFlagOpsSupported(device);
}

}  // namespace hetccl::hip_plugin
