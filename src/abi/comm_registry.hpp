// The lifetime of hetcclComm_t handles. A handle is an opaque number, never a pointer that is
// dereferenced: every entry point looks it up in a registry of live communicators and holds a reference
// (a shared_ptr) while it uses the communicator. Destroy and abort take the handle out of the registry
// at once, so every later call (and every call racing with them that has not yet looked it up) gets
// InvalidUsage; the communicator itself is freed when the last call holding it leaves. Handle numbers
// are never reused, so a stale handle is always detected, even after new communicators were created.
#pragma once

#include <memory>

#include "comm/communicator.hpp"
#include "hetccl/hetccl.h"

namespace hetccl::abi {

/// What a live handle refers to. `impl` is destroyed with the last reference.
struct CommCore {
  std::unique_ptr<Communicator> impl;
  int pid = 0;  // the process that created it: a forked child inherits the handle but may not use it
};
using CommRef = std::shared_ptr<CommCore>;

/// Registers a new communicator and returns its handle.
hetcclComm_t registerComm(std::unique_ptr<Communicator> impl);

/// A reference to the communicator of `comm`. Throws InvalidArgument for a null handle and InvalidUsage
/// for one that is not live (destroyed, aborted, or never returned by hetccl).
CommRef lookup(hetcclComm_t comm);

/// As lookup() but returns nullptr instead of throwing.
CommRef tryLookup(hetcclComm_t comm) noexcept;

/// Takes `comm` out of the registry and returns its reference; throws as lookup(). Exactly one caller
/// (destroy or abort) gets a given handle's reference; a racing second one gets InvalidUsage.
CommRef unregister(hetcclComm_t comm);

/// While a thread is inside a group, the communicators of its queued operations stay referenced until
/// the outermost group end (the group queue points to them). hold() adds one; releaseHolds() drops this
/// thread's; dropHold() drops this thread's references to `core` (destroyed or aborted inside a group).
void hold(CommRef ref);
void releaseHolds() noexcept;
void dropHold(const CommCore* core) noexcept;

/// Waits until nobody but `ref` (and the registry's caller) references the communicator, or `until`.
/// Returns true when `ref` is the only reference left.
bool waitSoleOwner(const CommRef& ref, std::chrono::steady_clock::time_point until);

}  // namespace hetccl::abi
