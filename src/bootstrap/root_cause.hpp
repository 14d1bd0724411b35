// Which rank to blame for a peer failure. When a rank dies, the survivor that notices first gives up and
// closes its own connections, so other survivors may first see *that* survivor go away. The bootstrap mesh
// notices every closed peer; the first one it saw is the real cause.
#pragma once

#include <atomic>

#include "bootstrap/bootstrap.hpp"
#include "core/error.hpp"

namespace hetccl::bootstrap {

/// The failure to report for `seen` (a PeerError this rank's exchanges threw): the first failure in the job
/// `boot` noticed (ranks of a split's other group count too), when that is another rank, with `seen` quoted;
/// else `seen`. Gives the mesh's reader up to 300 ms to catch up, less once *abortFlag is set (may be null).
PeerError rootCause(const Bootstrap& boot, const PeerError& seen, const std::atomic<bool>* abortFlag);

}  // namespace hetccl::bootstrap
