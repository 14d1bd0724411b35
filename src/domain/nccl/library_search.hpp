// Which vendor library file to open. Order:
//   1. the flavor's variable (HETCCL_NCCL_LIB) when set: that path only, no fallback;
//   2. a library of that file name the process has already loaded (e.g. by `import torch`, which loads
//      its wheel's nvidia/nccl/lib/libnccl.so.2 by path), unless it is hetccl itself;
//   3. next to a loaded CUDA runtime (libcudart.so*): the same folder, and the pip wheel layout's sibling
//      <site-packages>/nvidia/nccl/lib when libcudart is in <site-packages>/nvidia/<pkg>/lib;
//   4. $CUDA_HOME/lib64, /usr/local/cuda/lib64;
//   5. the bare file name, through the loader's search path (LD_LIBRARY_PATH, ld.so.cache).
// Candidates of steps 2-4 that do not exist are skipped; one that fails to load or resolves to hetccl
// is logged and the next is tried. Users of pip wheels without torch loaded, or whose NCCL lies
// elsewhere, set HETCCL_NCCL_LIB (C++ cannot see Python's sys.path).
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
