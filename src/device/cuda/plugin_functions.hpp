// The CUDA plugin's implementations of the hetcclGpuPlugin_t entry points (contracts in
// src/device/base/gpu_plugin.h), declared by
// src/device/gpu/plugin_support.hpp; plugin.cc puts them into the exported struct.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "device/base/gpu_plugin.h"
#include "device/gpu/plugin_support.hpp"

namespace hetccl::cuda_plugin {

HETCCL_GPU_PLUGIN_DECLARE_ENTRY_POINTS

}  // namespace hetccl::cuda_plugin
