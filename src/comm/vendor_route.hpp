// Device-buffer groups of a single-domain communicator go straight to the domain's vendor library
// (NCCL/RCCL) on the caller's stream: the homogeneous case costs one translation per call.
#pragma once

#include <span>

#include "algo/coll_op.hpp"
#include "domain/base/vendor_ccl.hpp"

namespace hetccl {

/// Issues `ops` on `comm` (whose ranks are this communicator's ranks, in order) inside one vendor group.
/// AllToAll(v) become vendor send/recv pairs. Throws the vendor's error.
void runOnVendor(domain::VendorCcl& vendor, domain::DomainComm& comm, std::span<const algo::CollOp> ops,
                 void* stream);

}  // namespace hetccl
