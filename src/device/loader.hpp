// Finds and opens the GPU device runtime plugins (libhetccl-cuda.so, libhetccl-hip.so) with dlopen, and
// chooses the one a process's ranks use. The core links no vendor runtime: when a plugin or a device is
// missing, hetccl runs on host memory only.
#pragma once

#include <string>

#include "core/peer_info.hpp"
#include "device/base/gpu_plugin.h"

namespace hetccl::device {

/// The plugin of `kind` (DeviceKind::Cuda or DeviceKind::Hip), opened and initialised once per process
/// (thread-safe), or nullptr when it is unavailable: no plugin file, no `hetcclGpuPlugin_v4` symbol,
/// another interface version, no vendor runtime, no device. A nullptr answer is logged once at INFO with
/// the reason; it is the normal case on a host without that vendor's GPU. DeviceKind::Host: nullptr.
/// Where it looks, in order (cuda / hip):
///   1. HETCCL_CUDA_PLUGIN / HETCCL_HIP_PLUGIN, when set (only there);
///   2. libhetccl-cuda.so / libhetccl-hip.so in the directory of the object holding this loader
///      (libhetccl.so, a drop-in, or the executable when hetccl is linked statically);
///   3. the same file name through the dynamic loader's search path (LD_LIBRARY_PATH, rpath, ld.so.cache).
/// Opened with RTLD_NOW | RTLD_LOCAL and never closed once initialised (the vendor runtime it holds lives
/// until the process exits).
const hetcclGpuPlugin_t* loadGpuPlugin(DeviceKind kind);

/// Why loadGpuPlugin(kind) returned nullptr ("" when it returned a plugin or was not called yet).
std::string gpuPluginUnavailableReason(DeviceKind kind);

/// The GPU of this process's ranks, chosen from HETCCL_DEVICE:
///   host       no GPU (plugin nullptr);
///   cuda, hip  that vendor's plugin, or InvalidUsage saying why it is unavailable;
///   auto       the first vendor in the process's preference order whose plugin loads and sees a device
///              (cuda, then hip; hip first in the drop-in librccl.so, see preferVendorFirst), else host.
/// `reason` says what was chosen and why (hetccl-info prints it). Throws InvalidArgument for another value.
struct GpuChoice {
  DeviceKind kind = DeviceKind::Host;
  const hetcclGpuPlugin_t* plugin = nullptr;
  std::string reason;
};
GpuChoice chooseGpu();

/// Makes `kind` the first vendor HETCCL_DEVICE=auto tries in this process (the drop-in librccl.so calls
/// it with DeviceKind::Hip when it is loaded: a ROCm application). Takes effect for later chooseGpu calls.
void preferVendorFirst(DeviceKind kind) noexcept;

}  // namespace hetccl::device
