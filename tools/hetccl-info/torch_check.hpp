// hetccl-info --torch PATH [--dropin LIB]: can hetccl's drop-in serve this PyTorch? PyTorch's CUDA (ROCm)
// library must load NCCL (RCCL) dynamically: a DT_NEEDED on libnccl.so.2 (librccl.so) and nccl* imports,
// every one of which the drop-in must export. An NCCL linked statically into libtorch_cuda.so cannot be
// replaced.
#pragma once

#include <string>
#include <vector>

namespace hetccl::info {

/// Runs the check for the arguments after "--torch" and prints the findings. PATH: a site-packages
/// folder, a torch package folder, its lib folder, or libtorch_cuda.so / libtorch_hip.so itself.
/// Returns 0 when the drop-in can serve it, 1 when it cannot, 2 for bad arguments or unreadable files.
int torchCheck(const std::vector<std::string>& args);

}  // namespace hetccl::info
