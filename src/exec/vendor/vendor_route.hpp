// Device-buffer groups of a single-domain communicator go straight to the domain's vendor library
// (NCCL/RCCL) on the caller's stream: the homogeneous case costs one translation per call.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "algo/coll_op.hpp"
#include "core/error.hpp"
#include "device/base/gpu_plugin.h"
#include "domain/base/vendor_ccl.hpp"

namespace hetccl {

/// Issues `ops` on `comm` (whose ranks are this communicator's ranks, in order) inside one vendor group.
/// AllToAll(v) become vendor send/recv pairs. Throws the vendor's error.
/// A communicator of one rank keeps Avg and PreMulSum reductions away from the vendor's single-rank path
/// (NCCL 2.28.9 leaves the last element of an odd-count 8-byte one wrong and refuses fp8 ones): Avg of
/// one rank is its input, issued as Sum (a copy); PreMulSum of one rank is `gpu->scale` on `stream`
/// after the group (the plugin's kernel, bit-identical to the host's). `gpu` is needed only then
/// (InvalidUsage without it).
void runOnVendor(domain::DomainComm& comm, std::span<const algo::CollOp> ops, void* stream,
                 const hetcclGpuPlugin_t* gpu = nullptr);

/// The asynchronous error `comm`'s vendor library reports (ncclCommGetAsyncError), as an Error of the
/// same code whose message names the hetccl domain `domain`; nullopt when it reports none. Safe from a
/// watchdog thread while calls or an abort run on others (DomainComm::checkAsyncError).
std::optional<Error> vendorAsyncError(domain::DomainComm& comm, const std::string& domain);

}  // namespace hetccl
