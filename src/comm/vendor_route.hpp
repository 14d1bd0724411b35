// Device-buffer groups of a single-domain communicator go straight to the domain's vendor library
// (NCCL/RCCL) on the caller's stream: the homogeneous case costs one translation per call.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "algo/coll_op.hpp"
#include "core/error.hpp"
#include "domain/base/vendor_ccl.hpp"

namespace hetccl {

/// Issues `ops` on `comm` (whose ranks are this communicator's ranks, in order) inside one vendor group.
/// AllToAll(v) become vendor send/recv pairs. Throws the vendor's error.
void runOnVendor(domain::DomainComm& comm, std::span<const algo::CollOp> ops, void* stream);

/// The asynchronous error `comm`'s vendor library reports (ncclCommGetAsyncError), as an Error of the
/// same code whose message names the hetccl domain `domain`; nullopt when it reports none. Safe from a
/// watchdog thread while calls or an abort run on others (DomainComm::checkAsyncError).
std::optional<Error> vendorAsyncError(domain::DomainComm& comm, const std::string& domain);

}  // namespace hetccl
