// ncclGroupStart / ncclGroupEnd on top of hetccl's groups, adding what NCCL allows in a group besides
// collectives: communicator creation (ncclCommInitRank*, ncclCommSplit) and ncclCommFinalize. Creations
// start at once on their own threads, so one thread may create the communicators of several ranks;
// finalizations start at the outermost ncclGroupEnd, after the group's collectives ran. The outermost
// ncclGroupEnd waits for the operations of blocking communicators and returns the first failure; it
// returns ncclInProgress while an operation of a non-blocking communicator still runs (poll
// ncclCommGetAsyncError). State is per thread, as NCCL's.
#pragma once

#include "hetccl/nccl_abi.h"

namespace hetccl::nccl_abi::group {

/// True between ncclGroupStart and its matching ncclGroupEnd on this thread.
bool active() noexcept;
void start();
/// The outermost end runs the group as described above. Throws InvalidUsage without a matching start.
ncclResult_t end();

/// `c` got a background creation inside the current group (waited for at its end when blocking).
void addCreation(ncclComm_t c);
/// `c` is an internal handle for this rank's part in a split that gives it no communicator
/// (NCCL_SPLIT_NOCOLOR) inside the group: waited for and freed at the group's end.
void addDiscarded(ncclComm_t c);
/// Runs ncclCommFinalize of `c` when the current group ends.
void deferFinalize(ncclComm_t c);
/// Drops every reference to `c` (it is being destroyed or aborted inside a group).
void forget(ncclComm_t c) noexcept;

}  // namespace hetccl::nccl_abi::group
