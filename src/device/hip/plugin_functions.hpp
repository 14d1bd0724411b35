// The HIP plugin's implementations of the hetcclGpuPlugin_t entry points (contracts in
// src/device/base/gpu_plugin.h), declared by
// src/device/gpu/plugin_support.hpp; plugin.cc puts them into the exported struct.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "device/base/gpu_plugin.h"
#include "device/gpu/plugin_support.hpp"
#include "device/hip/hip_api.hpp"

namespace hetccl::hip_plugin {

HETCCL_GPU_PLUGIN_DECLARE_ENTRY_POINTS

// memory.cc: hipPointerGetAttributes; *known = false (and HETCCL_GPU_OK) for memory the runtime does not know.
int pointerAttributes(const void* ptr, api::PointerAttributes* attributes, bool* known);

}  // namespace hetccl::hip_plugin
