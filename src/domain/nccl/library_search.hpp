// Which vendor library file to open (NCCL for CUDA, RCCL for HIP: the fields of the Flavor). Order:
//   1. the flavor's variable (HETCCL_NCCL_LIB, HETCCL_RCCL_LIB) when set: that path only, no fallback;
//   2. a library of that file name the process has already loaded (e.g. by `import torch`, which loads
//      its wheel's nvidia/nccl/lib/libnccl.so.2 by path, or ROCm torch's torch/lib/librccl.so.1),
//      unless it is hetccl itself;
//   3. next to a loaded vendor runtime (libcudart.so*, libamdhip64.so*): the same folder, and the pip
//      wheel layout's sibling <site-packages>/nvidia/nccl/lib when libcudart is in
//      <site-packages>/nvidia/<pkg>/lib;
//   4. the toolkit: $CUDA_HOME/lib64, /usr/local/cuda/lib64; $ROCM_PATH/lib, /opt/rocm/lib;
//   5. the bare file names (libnccl.so.2; librccl.so.1, librccl.so), through the loader's search path
//      (LD_LIBRARY_PATH, ld.so.cache).
// Candidates of steps 2-4 that do not exist are skipped; one that fails to load or resolves to hetccl
// (e.g. the LD_PRELOADed drop-in librccl.so) is logged and the next is tried. Users of pip wheels without
// torch loaded, or whose library lies elsewhere, set the variable (C++ cannot see Python's sys.path).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "domain/nccl/nccl_library.hpp"

namespace hetccl::domain::nccl {

/// The candidates of steps 2-5 for `flavor`, in order, without duplicates. `selfAddress` identifies
/// hetccl's own object (nullptr: this adaptor's) so that step 2 skips it.
std::vector<std::string> searchCandidates(const Flavor& flavor, const void* selfAddress = nullptr);

/// Opens the configured library (step 1) or the first candidate that loads and is not hetccl. Throws the
/// open error of the configured path, or SystemError listing every candidate tried and why it failed.
std::shared_ptr<const NcclLibrary> findLibrary(const Flavor& flavor);

}  // namespace hetccl::domain::nccl
