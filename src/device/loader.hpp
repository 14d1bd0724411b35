// Finds and opens the GPU device runtime plugins (libhetccl-cuda.so) with dlopen. The core links no
// vendor runtime: when a plugin or a device is missing, hetccl runs on host memory only.
#pragma once

#include <string>

#include "device/base/gpu_plugin.h"

namespace hetccl::device {

/// The CUDA plugin's interface, opened and initialised once per process (thread-safe), or nullptr when it
/// is unavailable: no plugin file, no `hetcclGpuPlugin_v2` symbol, another interface version, no driver or
/// no device. A nullptr answer is logged once at INFO with the reason; it is the normal case on a CPU-only
/// host. Where it looks, in order:
///   1. HETCCL_CUDA_PLUGIN, when set (only there);
///   2. libhetccl-cuda.so in the directory of the object holding this loader (libhetccl.so, or the
///      executable when hetccl is linked statically);
///   3. libhetccl-cuda.so through the dynamic loader's search path (LD_LIBRARY_PATH, rpath, ld.so.cache).
/// Opened with RTLD_NOW | RTLD_LOCAL and never closed once initialised (the vendor runtime it holds lives
/// until the process exits).
const hetcclGpuPlugin_t* loadCudaPlugin();

/// Why loadCudaPlugin() returned nullptr ("" when it returned a plugin or was not called yet).
std::string cudaPluginUnavailableReason();

}  // namespace hetccl::device
