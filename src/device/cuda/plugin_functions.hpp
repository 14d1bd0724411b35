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
/* ll_allreduce.cc (v4; the HIP plugin has none yet) */
int llAllReduce(const hetcclGpuLlAllReduce_t* args, void* stream);

}  // namespace hetccl::cuda_plugin
