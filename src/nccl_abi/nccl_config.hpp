// ncclConfig_t as NCCL reads it: the caller's `size` bytes are copied over NCCL_CONFIG_INITIALIZER, the
// magic is checked, fields newer than the caller's `version` keep their defaults. So configs from older
// or newer nccl.h (and RCCL's rccl.h, an older layout with the same leading fields) are all accepted.
#pragma once

#include <string>

#include "hetccl/hetccl.h"
#include "hetccl/nccl_abi.h"

namespace hetccl::nccl_abi {

/// The options of an ncclConfig_t that hetccl uses.
struct CommSettings {
  bool blocking = true;
  std::string transport;  ///< "" (automatic), "tcp" or "shm"

  /// The hetccl config carrying these settings; valid while this object lives.
  hetcclConfig_t hetcclConfig() const;
};

/// Reads `config` (NULL: `inherited`, e.g. a split's parent settings, with automatic transport).
/// Throws InvalidArgument for a config not made from NCCL_CONFIG_INITIALIZER (bad magic or a size too
/// small for the magic) and for a `blocking` other than 0, 1 or NCCL_CONFIG_UNDEF_INT (NCCL's checks).
/// netName "tcp" / "Socket" select tcp, "shm" selects shm; other names (NCCL's "IB", plugins) are ignored
/// with an INFO log line.
CommSettings readConfig(const ncclConfig_t* config, const CommSettings& inherited);

}  // namespace hetccl::nccl_abi
