// hetccl-run --preload: run the ranks with a library LD_PRELOADed, the way an unmodified program (PyTorch)
// gets hetccl's drop-in libnccl.so.2 / librccl.so (docs/DROP_IN.md).
#pragma once

#include <string>

namespace hetccl::run {

/// The library path for `spec`: "nccl" or "rccl" name the drop-in built with this hetccl-run
/// (<dir of hetccl-run>/../dropin/libnccl.so.2 or librccl.so); anything else is a path. Returns an
/// absolute path. Throws InvalidArgument when the file does not exist or is not readable.
std::string resolvePreload(const std::string& spec);

/// LD_PRELOAD for the ranks: `library` first, then the launcher's own LD_PRELOAD (`inherited`) if any.
std::string preloadValue(const std::string& library, const std::string& inherited);

}  // namespace hetccl::run
