// The dynamic-linking facts of one ELF64 shared object, read from the file (mapped, never loaded):
// DT_NEEDED, DT_RPATH / DT_RUNPATH, and the dynamic symbols it imports and exports. Enough for
// hetccl-info to tell whether a PyTorch library loads NCCL dynamically.
#pragma once

#include <string>
#include <vector>

namespace hetccl::info {

struct ElfDynamic {
  std::vector<std::string> needed;   ///< DT_NEEDED, in order
  std::string rpath, runpath;        ///< DT_RPATH, DT_RUNPATH ("" when absent)
  std::vector<std::string> imports;  ///< undefined dynamic symbols
  std::vector<std::string> exports;  ///< defined global/weak dynamic symbols
  bool mentionsNcclVersion = false;  ///< the bytes "NCCL version" occur in the file (a statically linked NCCL)
};

/// Reads `path`. Throws InvalidArgument when it is not a readable little-endian ELF64 file with a valid
/// dynamic section (what and where).
ElfDynamic readElfDynamic(const std::string& path);

}  // namespace hetccl::info
